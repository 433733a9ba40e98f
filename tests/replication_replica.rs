//! resplock as a replica: REPLICAOF (or `replicaof` in the configuration) makes it follow a
//! resplock master or a real redis-server (full resynchronization of existing data, then
//! writes, expiry, scripts and transactions); clients' writes are refused with READONLY;
//! a key past its TTL reads as missing on the replica but stays until the master's DEL;
//! REPLICAOF NO ONE promotes it with Redis's INFO and ROLE fields; the link comes back after
//! the master restarts; the master's WAIT counts it; its own replicas get the master's
//! stream. The redis-server test skips (with a line saying so) when it is not on PATH.

mod common;
use common::*;
use resplock::config::ProtectedAction;
use resplock::{Config, ServerHandle};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// The `# Replication` field names of INFO, in order.
fn info_names(info: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(info)
        .lines()
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.to_string()))
        .collect()
}

async fn replica_of(replica: &mut Raw, master: SocketAddr) {
    assert_eq!(
        cmd!(replica, "REPLICAOF", "127.0.0.1", master.port().to_string()),
        b"+OK\r\n"
    );
}

fn debug_config() -> Config {
    let mut c = Config::ephemeral();
    c.enable_debug_command = ProtectedAction::Local;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_of_resplock_gets_existing_data_then_writes_scripts_and_transactions() {
    let master = server().await;
    let replica = server().await;
    let (mut m, mut r) = (Raw::connect(&master).await, Raw::connect(&replica).await);
    cmd!(m, "SET", "before", "1");
    cmd!(m, "HSET", "h", "f", "v");
    cmd!(m, "SELECT", "2");
    cmd!(m, "SET", "in2", "x", "EX", "1000");
    cmd!(m, "SELECT", "0");
    cmd!(r, "SET", "mine", "gone after the full resync");
    replica_of(&mut r, master.local_addr()).await;
    assert_eq!(
        cmd!(
            r,
            "REPLICAOF",
            "127.0.0.1",
            master.local_addr().port().to_string()
        ),
        b"+OK Already connected to specified master\r\n"
    );
    until_linked(&mut r).await;
    assert_eq!(cmd!(r, "GET", "before"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(r, "EXISTS", "mine"), b":0\r\n");
    cmd!(m, "SET", "s", "v", "EX", "500");
    cmd!(m, "EXPIRE", "before", "900");
    cmd!(m, "INCRBYFLOAT", "f", "1.5");
    let acquire = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                   return redis.call('incr', KEYS[2]) end return 0";
    assert_eq!(
        cmd!(m, "EVAL", acquire, "2", "lock", "acquired", "tok", "30000"),
        b":1\r\n"
    );
    cmd!(m, "MULTI");
    cmd!(m, "SET", "t", "1");
    cmd!(m, "INCR", "t");
    cmd!(m, "SELECT", "2");
    cmd!(m, "LPUSH", "l", "a");
    assert_eq!(cmd!(m, "EXEC"), b"*4\r\n+OK\r\n:2\r\n+OK\r\n:1\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "lock"), b"$3\r\ntok\r\n");
    assert_eq!(cmd!(r, "GET", "acquired"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(r, "GET", "t"), b"$1\r\n2\r\n");
    assert_eq!(cmd!(r, "GET", "f"), b"$3\r\n1.5\r\n");
    let ttl = cmd!(r, "TTL", "before");
    assert!(ttl == b":900\r\n" || ttl == b":899\r\n", "{ttl:?}");
    cmd!(r, "SELECT", "2");
    assert_eq!(cmd!(r, "LRANGE", "l", "0", "-1"), b"*1\r\n$1\r\na\r\n");
    assert_eq!(cmd!(r, "GET", "in2"), b"$1\r\nx\r\n");
    cmd!(r, "SELECT", "0");
    assert_eq!(
        cmd!(r, "ROLE"),
        format!(
            "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:{}\r\n$9\r\nconnected\r\n:{}\r\n",
            master.local_addr().port(),
            info_field(&cmd!(m, "INFO", "replication"), "master_repl_offset").unwrap()
        )
        .as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_refuses_client_writes_with_readonly_but_not_reads_or_read_only_scripts() {
    let master = server().await;
    let replica = server().await;
    let mut r = Raw::connect(&replica).await;
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    assert_eq!(
        cmd!(r, "SET", "k", "v"),
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    assert_eq!(cmd!(r, "GET", "k"), b"$-1\r\n");
    assert_eq!(
        cmd!(r, "EVAL", "#!lua\nreturn 1", "0"),
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "#!lua flags=no-writes\nreturn 1", "0"),
        b":1\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "return redis.call('set', 'k', 'v')", "0"),
        b"-READONLY You can't write against a read only replica. script: 2d991be581da74a0c0c441c4beb92ae41c2e1eb9, on @user_script:1.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "return redis.call('get', 'k')", "0"),
        b"$-1\r\n"
    );
    cmd!(r, "MULTI");
    assert_eq!(
        cmd!(r, "SET", "k", "v"),
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    assert_eq!(
        cmd!(r, "EXEC"),
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
    // A transaction queued on a master, run once it is a replica: the script that declares
    // writes aborts EXEC, the undeclared one fails at its write.
    assert_eq!(cmd!(r, "REPLICAOF", "NO", "ONE"), b"+OK\r\n");
    let mut r2 = Raw::connect(&replica).await;
    cmd!(r, "MULTI");
    cmd!(r, "EVAL", "#!lua\nreturn 1", "0");
    cmd!(r2, "MULTI");
    cmd!(r2, "EVAL", "redis.call('set', 'x', 1) return 1", "0");
    let mut r3 = Raw::connect(&replica).await;
    replica_of(&mut r3, master.local_addr()).await;
    assert_eq!(
        cmd!(r, "EXEC"),
        b"-EXECABORT Transaction discarded because of: READONLY You can't write against a read only replica.\r\n"
    );
    let reply = cmd!(r2, "EXEC");
    assert!(
        reply.starts_with(b"*1\r\n-READONLY You can't write against a read only replica. script: "),
        "{:?}",
        String::from_utf8_lossy(&reply)
    );
    assert_eq!(
        cmd!(r, "CONFIG", "SET", "replica-read-only", "no"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(r, "SET", "k", "v"), b"+OK\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_key_reads_as_missing_on_the_replica_but_stays_until_the_masters_del() {
    let master = server_with(debug_config()).await;
    let replica = server().await;
    let (mut m, mut r) = (Raw::connect(&master).await, Raw::connect(&replica).await);
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    // The master keeps the key past its time (no active expiry, nobody reads it there).
    assert_eq!(cmd!(m, "DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"+OK\r\n");
    cmd!(m, "SET", "k", "v", "PX", "100");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "k"), b"$1\r\nv\r\n");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(cmd!(r, "GET", "k"), b"$-1\r\n");
    assert_eq!(cmd!(r, "EXISTS", "k"), b":0\r\n");
    assert_eq!(
        cmd!(r, "DBSIZE"),
        b":1\r\n",
        "the replica does not delete it"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(cmd!(r, "DBSIZE"), b":1\r\n", "nor does its active expiry");
    // Reading it on the master deletes it there, and the DEL reaches the replica.
    assert_eq!(cmd!(m, "GET", "k"), b"$-1\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "DBSIZE"), b":0\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicaof_no_one_promotes_keeping_data_and_history_and_its_replica_continues() {
    let master = server().await;
    let replica = server().await;
    let sub = server().await;
    let (mut m, mut r, mut s) = (
        Raw::connect(&master).await,
        Raw::connect(&replica).await,
        Raw::connect(&sub).await,
    );
    cmd!(m, "SET", "k", "1");
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    // A replica of the replica gets the master's stream through it.
    replica_of(&mut s, replica.local_addr()).await;
    until_linked(&mut s).await;
    cmd!(m, "INCR", "k");
    until_caught_up(&mut m, &mut r).await;
    until_caught_up(&mut r, &mut s).await;
    assert_eq!(cmd!(s, "GET", "k"), b"$1\r\n2\r\n");
    let info = cmd!(r, "INFO", "replication");
    assert_eq!(
        info_names(&info),
        [
            "role",
            "master_host",
            "master_port",
            "master_link_status",
            "master_last_io_seconds_ago",
            "master_sync_in_progress",
            "slave_read_repl_offset",
            "slave_repl_offset",
            "slave_priority",
            "slave_read_only",
            "replica_announced",
            "connected_slaves",
            "slave0",
            "master_failover_state",
            "master_replid",
            "master_replid2",
            "master_repl_offset",
            "second_repl_offset",
            "repl_backlog_active",
            "repl_backlog_size",
            "repl_backlog_first_byte_offset",
            "repl_backlog_histlen",
        ]
    );
    let master_id = info_field(&cmd!(m, "INFO", "replication"), "master_replid").unwrap();
    assert_eq!(info_field(&info, "master_replid").unwrap(), master_id);
    let offset: i64 = info_field(&info, "master_repl_offset")
        .unwrap()
        .parse()
        .unwrap();
    let port = master.local_addr().port().to_string();
    assert_eq!(
        cmd!(r, "CONFIG", "GET", "replicaof"),
        format!(
            "*2\r\n$9\r\nreplicaof\r\n${}\r\n127.0.0.1 {port}\r\n",
            10 + port.len()
        )
        .as_bytes()
    );
    assert_eq!(cmd!(r, "REPLICAOF", "NO", "ONE"), b"+OK\r\n");
    assert_eq!(
        cmd!(r, "CONFIG", "GET", "replicaof"),
        b"*2\r\n$9\r\nreplicaof\r\n$0\r\n\r\n"
    );
    let info = cmd!(r, "INFO", "replication");
    assert_eq!(info_field(&info, "role").unwrap(), "master");
    assert_eq!(info_field(&info, "master_replid2").unwrap(), master_id);
    assert_ne!(info_field(&info, "master_replid").unwrap(), master_id);
    assert_eq!(
        info_field(&info, "second_repl_offset").unwrap(),
        (offset + 1).to_string()
    );
    assert_eq!(cmd!(r, "GET", "k"), b"$1\r\n2\r\n", "the data is kept");
    assert_eq!(cmd!(r, "SET", "k", "3"), b"+OK\r\n", "it takes writes now");
    // Its replica reconnects and continues from its offset, then gets the new writes.
    until_linked(&mut s).await;
    until_caught_up(&mut r, &mut s).await;
    assert_eq!(cmd!(s, "GET", "k"), b"$1\r\n3\r\n");
    let info = cmd!(s, "INFO", "replication");
    assert_eq!(
        info_field(&info, "master_replid").unwrap(),
        info_field(&cmd!(r, "INFO", "replication"), "master_replid").unwrap(),
        "the sub-replica follows the new history (+CONTINUE with the new id)"
    );
    assert_eq!(info_field(&info, "master_replid2").unwrap(), master_id);
    let role = cmd!(r, "ROLE");
    assert!(role.starts_with(b"*3\r\n$6\r\nmaster\r\n"), "{role:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_link_comes_back_after_the_master_restarts() {
    let master = server().await;
    let port = master.local_addr().port();
    let replica = server().await;
    let mut r = Raw::connect(&replica).await;
    {
        let mut m = Raw::connect(&master).await;
        cmd!(m, "SET", "old", "1");
    }
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    assert_eq!(cmd!(r, "GET", "old"), b"$1\r\n1\r\n");
    master.shutdown().await;
    let mut down = false;
    for _ in 0..200 {
        let info = cmd!(r, "INFO", "replication");
        if info_field(&info, "master_link_status").as_deref() == Some("down") {
            assert!(info_field(&info, "master_link_down_since_seconds").is_some());
            down = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(down, "the replica saw the link drop");
    let role = cmd!(r, "ROLE");
    assert!(
        role.ends_with(b":-1\r\n"),
        "{:?}",
        String::from_utf8_lossy(&role)
    );
    let mut config = Config::ephemeral();
    config.port = port;
    let master = server_with(config).await;
    let mut m = Raw::connect(&master).await;
    cmd!(m, "SET", "new", "2");
    until_linked(&mut r).await;
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "new"), b"$1\r\n2\r\n");
    assert_eq!(
        cmd!(r, "EXISTS", "old"),
        b":0\r\n",
        "a new master's history: full resync"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_on_the_master_counts_a_resplock_replica() {
    let master = server().await;
    let replica = server().await;
    let (mut m, mut r) = (Raw::connect(&master).await, Raw::connect(&replica).await);
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "k", "v");
    assert_eq!(cmd!(m, "WAIT", "1", "5000"), b":1\r\n");
    assert_eq!(cmd!(m, "WAIT", "2", "100"), b":1\r\n");
    let info = cmd!(m, "INFO", "replication");
    assert_eq!(info_field(&info, "connected_slaves").unwrap(), "1");
    assert_eq!(cmd!(r, "GET", "k"), b"$1\r\nv\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicaof_in_the_configuration_is_acted_on_at_start() {
    let master = server().await;
    let mut m = Raw::connect(&master).await;
    cmd!(m, "SET", "k", "v");
    let port = master.local_addr().port().to_string();
    let replica = server_with_args(&["--replicaof", "127.0.0.1", &port]).await;
    let mut r = Raw::connect(&replica).await;
    until_linked(&mut r).await;
    assert_eq!(cmd!(r, "GET", "k"), b"$1\r\nv\r\n");
}

/// A redis-server master, in a directory of its own, killed on drop.
struct RedisMaster {
    child: std::process::Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Drop for RedisMaster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl RedisMaster {
    /// None (the test then skips) if redis-server is not on PATH.
    fn start() -> Option<RedisMaster> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let dir =
            std::env::temp_dir().join(format!("resplock-master-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(&dir)
            .arg("--logfile")
            .arg(dir.join("redis.log"))
            // The disk-less transfer without its 5 s wait for more replicas.
            .args(["--repl-diskless-sync-delay", "0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(child) = child else {
            println!("skipped: redis-server is not on PATH");
            return None;
        };
        let addr = format!("127.0.0.1:{port}").parse().ok()?;
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < until, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(RedisMaster { child, addr, dir })
    }
}

async fn follow_redis_server(replica: &ServerHandle, master: &RedisMaster) {
    let mut m = Raw::connect_to(master.addr).await;
    let mut r = Raw::connect(replica).await;
    cmd!(m, "SET", "before", "1");
    cmd!(m, "RPUSH", "l", "a", "b");
    replica_of(&mut r, master.addr).await;
    until_linked(&mut r).await;
    assert_eq!(cmd!(r, "GET", "before"), b"$1\r\n1\r\n");
    cmd!(m, "SET", "lock", "tok", "PX", "30000");
    cmd!(
        m,
        "EVAL",
        "redis.call('incr', KEYS[1]) return redis.call('lpop', KEYS[2])",
        "2",
        "n",
        "l"
    );
    cmd!(m, "MULTI");
    cmd!(m, "SELECT", "3");
    cmd!(m, "SET", "x", "y");
    cmd!(m, "EXEC");
    assert_eq!(cmd!(m, "WAIT", "1", "5000"), b":1\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "n"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(r, "LRANGE", "l", "0", "-1"), b"*1\r\n$1\r\nb\r\n");
    // The expiry travels as an absolute time: read within the millisecond the master set it,
    // all 30000 ms are left.
    let pttl = cmd!(r, "PTTL", "lock");
    let left = int_of(&pttl);
    assert!(
        pttl[0] == b':' && (20_000..=30_000).contains(&left),
        "{pttl:?}"
    );
    cmd!(r, "SELECT", "3");
    assert_eq!(cmd!(r, "GET", "x"), b"$1\r\ny\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_of_redis_server_follows_its_rdb_and_stream() {
    let Some(master) = RedisMaster::start() else {
        return;
    };
    let replica = server().await;
    follow_redis_server(&replica, &master).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_with_its_link_down_refuses_stale_reads_when_told_to() {
    let replica = server().await;
    let (mut r, mut other) = (Raw::connect(&replica).await, Raw::connect(&replica).await);
    cmd!(r, "SET", "k", "v");
    assert_eq!(
        cmd!(r, "CONFIG", "SET", "replica-serve-stale-data", "no"),
        b"+OK\r\n"
    );
    cmd!(r, "MULTI");
    cmd!(r, "GET", "k");
    // A master that is not there: the link stays down.
    assert_eq!(cmd!(other, "REPLICAOF", "127.0.0.1", "1"), b"+OK\r\n");
    assert_eq!(
        cmd!(r, "EXEC"),
        b"-EXECABORT Transaction discarded because of: MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
    );
    assert_eq!(
        cmd!(r, "GET", "k"),
        b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "return 1", "0"),
        b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "#!lua flags=no-writes\nreturn 1", "0"),
        b"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", "#!lua flags=allow-stale,no-writes\nreturn redis.call('ping')", "0"),
        b"-ERR Can not execute the command on a stale replica script: e711e3c0dfdb404e8920c33b4b5056cf57f642a7, on @user_script:2.\r\n"
    );
    assert_eq!(
        cmd!(
            r,
            "EVAL",
            "#!lua flags=allow-stale,no-writes\nreturn redis.call('info', 'x')",
            "0"
        ),
        b"$0\r\n\r\n"
    );
    let role = cmd!(r, "ROLE");
    assert!(role.starts_with(b"*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:1\r\n"));
    assert_eq!(cmd!(r, "REPLICAOF", "NO", "ONE"), b"+OK\r\n");
    assert_eq!(cmd!(r, "GET", "k"), b"$1\r\nv\r\n", "the data is kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writable_replica_expires_the_keys_its_own_clients_gave_a_ttl() {
    let master = server().await;
    let replica = server().await;
    let mut r = Raw::connect(&replica).await;
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    assert_eq!(
        cmd!(r, "CONFIG", "SET", "replica-read-only", "no"),
        b"+OK\r\n"
    );
    cmd!(r, "SET", "mine", "v", "PX", "1");
    let mut gone = false;
    for _ in 0..100 {
        if cmd!(r, "DBSIZE") == b":0\r\n" {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        gone,
        "the replica's own volatile key was expired by the replica"
    );
    let info = cmd!(r, "INFO", "stats");
    assert_eq!(info_field(&info, "expired_keys").unwrap(), "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripts_set_repl_keeps_its_commands_from_the_replica() {
    let master = server().await;
    let replica = server().await;
    let (mut m, mut r) = (Raw::connect(&master).await, Raw::connect(&replica).await);
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    cmd!(
        m,
        "EVAL",
        "redis.call('set','a','1') redis.set_repl(redis.REPL_NONE) redis.call('set','b','2') \
         redis.set_repl(redis.REPL_AOF) redis.call('set','c','3') \
         redis.set_repl(redis.REPL_ALL) redis.call('set','d','4')",
        "0"
    );
    cmd!(m, "SET", "e", "5");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(
        cmd!(r, "MGET", "a", "b", "c", "d", "e"),
        b"*5\r\n$1\r\n1\r\n$-1\r\n$-1\r\n$1\r\n4\r\n$1\r\n5\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_of_redis_server_restarted_from_its_rdb_continues_with_psync() {
    let Some(master) = RedisMaster::start() else {
        return;
    };
    // A directory that outlives the first server (an ephemeral one goes with it).
    let dir = std::env::temp_dir()
        .join(format!("resplock-replica-rdb-{}", std::process::id()))
        .join("r");
    std::fs::create_dir_all(&dir).unwrap();
    let config = |port: u16| {
        let mut c = Config::ephemeral();
        c.dir = Some(dir.clone());
        c.port = port;
        c.set_replicaof(Some(("127.0.0.1", master.addr.port())));
        c
    };
    let mut m = Raw::connect_to(master.addr).await;
    let replica = server_with(config(0)).await;
    let mut r = Raw::connect(&replica).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "lock", "tok");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "SAVE"), b"+OK\r\n");
    let port = replica.local_addr().port();
    replica.shutdown().await;
    cmd!(m, "SET", "while", "down");
    let replica = server_with(config(port)).await;
    let mut r = Raw::connect(&replica).await;
    until_linked(&mut r).await;
    until_caught_up(&mut m, &mut r).await;
    let stats = cmd!(m, "INFO", "stats");
    assert_eq!(info_field(&stats, "sync_full").as_deref(), Some("1"));
    assert_eq!(info_field(&stats, "sync_partial_ok").as_deref(), Some("1"));
    assert_eq!(cmd!(r, "GET", "while"), b"$4\r\ndown\r\n");
    replica.shutdown().await;
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

#[tokio::test]
async fn a_replica_connects_to_its_master_from_the_bind_source_addr() {
    // A listener standing in for the master: what matters is where the replica comes from.
    let master = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let replica = server().await;
    let mut c = Raw::connect(&replica).await;
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "bind-source-addr", "127.0.0.2"),
        b"+OK\r\n"
    );
    replica_of(&mut c, master.local_addr().unwrap()).await;
    let (_link, from) = tokio::time::timeout(Duration::from_secs(10), master.accept())
        .await
        .expect("the replica never connected")
        .unwrap();
    assert_eq!(from.ip().to_string(), "127.0.0.2");
    assert_eq!(cmd!(c, "REPLICAOF", "NO", "ONE"), b"+OK\r\n");
    replica.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_paused_for_writes_reads_its_masters_stream_but_applies_it_after_unpause() {
    let master = server().await;
    let replica = server().await;
    let (mut m, mut r) = (Raw::connect(&master).await, Raw::connect(&replica).await);
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "foo", "bar");
    until_caught_up(&mut m, &mut r).await;
    let applied = info_field(&cmd!(r, "INFO", "replication"), "slave_repl_offset");
    assert_eq!(cmd!(r, "CLIENT", "PAUSE", "100000", "WRITE"), b"+OK\r\n");
    cmd!(m, "SET", "foo2", "bar2");
    let sent = info_field(&cmd!(m, "INFO", "replication"), "master_repl_offset");
    // Read: the bytes arrived...
    let mut read = None;
    for _ in 0..400 {
        read = info_field(&cmd!(r, "INFO", "replication"), "slave_read_repl_offset");
        if read == sent {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(read, sent, "the paused replica stopped reading");
    // ...but not applied, and the master client counts as blocked, as in Redis.
    let info = cmd!(r, "INFO");
    assert_eq!(info_field(&info, "slave_repl_offset"), applied);
    assert_eq!(info_field(&info, "blocked_clients").as_deref(), Some("1"));
    assert_eq!(cmd!(r, "GET", "foo2"), b"$-1\r\n");
    assert_eq!(cmd!(r, "CLIENT", "UNPAUSE"), b"+OK\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "foo2"), b"$4\r\nbar2\r\n");
    assert_eq!(
        info_field(&cmd!(r, "INFO", "clients"), "blocked_clients").as_deref(),
        Some("0")
    );
    master.shutdown().await;
    replica.shutdown().await;
}
