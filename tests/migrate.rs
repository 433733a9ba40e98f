//! MIGRATE between servers: resplock to resplock (in this process, on multi-threaded and
//! current-thread runtimes), resplock to a real redis-server and back, the cached connection
//! (SELECT only when the database changes, a retry after the target closed it, closed after
//! 10 s idle), errors relayed from the target, timeouts, propagation as DEL, and a slot moved
//! between the nodes of an in-process cluster. Argument errors and NOKEY, recorded from
//! redis-server, are in conformance/migrate.case.

mod common;

use common::{server, server_with, Raw};
use resplock::{Cluster, Config, ServerHandle};
use std::time::Duration;

fn s(reply: &[u8]) -> String {
    String::from_utf8_lossy(reply).into_owned()
}

fn port_of(h: &ServerHandle) -> String {
    h.local_addr().port().to_string()
}

/// An integer reply's value.
fn int(reply: &[u8]) -> i64 {
    s(reply)
        .trim_start_matches(':')
        .trim()
        .parse()
        .expect("integer reply")
}

/// A field of INFO's reply.
async fn info_field(c: &mut Raw, section: &str, field: &str) -> String {
    let info = s(&cmd!(c, "INFO", section));
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or("")
        .to_string()
}

/// How many times the server ran `command` (INFO commandstats' calls).
async fn calls(c: &mut Raw, command: &str) -> i64 {
    let v = info_field(c, "commandstats", &format!("cmdstat_{command}")).await;
    v.split(',')
        .find_map(|kv| kv.strip_prefix("calls="))
        .map_or(0, |n| n.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_a_key_with_its_ttl_and_deletes_it_here() {
    let (src, dst) = (server().await, server().await);
    let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
    cmd!(a, "SET", "lock", "owner-1");
    cmd!(a, "PEXPIRE", "lock", "60000");
    cmd!(a, "HSET", "h", "f", "v", "g", "w");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "lock", "0", "5000")),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(a, "EXISTS", "lock")), ":0\r\n");
    assert_eq!(s(&cmd!(b, "GET", "lock")), "$7\r\nowner-1\r\n");
    let ttl = int(&cmd!(b, "PTTL", "lock"));
    assert!((59_000..=60_000).contains(&ttl), "ttl {ttl}");
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "h", "3", "5000")),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(b, "SELECT", "3")), "+OK\r\n");
    assert_eq!(
        s(&cmd!(b, "HGETALL", "h")),
        "*4\r\n$1\r\nf\r\n$1\r\nv\r\n$1\r\ng\r\n$1\r\nw\r\n"
    );
    assert_eq!(s(&cmd!(b, "TTL", "h")), ":-1\r\n");
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "h", "3", "5000")),
        "+NOKEY\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_keys_moves_the_keys_that_exist_and_answers_nokey_when_none_do() {
    let (src, dst) = (server().await, server().await);
    let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
    cmd!(a, "RPUSH", "l", "x", "y");
    cmd!(a, "SADD", "s", "1", "2");
    cmd!(a, "ZADD", "z", "1.5", "m");
    cmd!(a, "XADD", "st", "1-1", "f", "v");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "",
            "0",
            "5000",
            "KEYS",
            "l",
            "missing",
            "s",
            "z",
            "st"
        )),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(a, "DBSIZE")), ":0\r\n");
    assert_eq!(s(&cmd!(b, "DBSIZE")), ":4\r\n");
    assert_eq!(
        s(&cmd!(b, "LRANGE", "l", "0", "-1")),
        "*2\r\n$1\r\nx\r\n$1\r\ny\r\n"
    );
    assert_eq!(s(&cmd!(b, "ZSCORE", "z", "m")), "$3\r\n1.5\r\n");
    assert_eq!(s(&cmd!(b, "XLEN", "st")), ":1\r\n");
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "",
            "0",
            "5000",
            "KEYS",
            "l",
            "s"
        )),
        "+NOKEY\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_keeps_the_key_here_and_replace_overwrites_the_target() {
    let (src, dst) = (server().await, server().await);
    let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
    cmd!(a, "SET", "k", "new");
    cmd!(b, "SET", "k", "old");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "k", "0", "5000")),
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "GET", "k")),
        "$3\r\nnew\r\n",
        "a refused key stays"
    );
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "k",
            "0",
            "5000",
            "COPY",
            "REPLACE"
        )),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(a, "GET", "k")), "$3\r\nnew\r\n", "COPY keeps it");
    assert_eq!(s(&cmd!(b, "GET", "k")), "$3\r\nnew\r\n");
    cmd!(a, "SET", "k", "newer");
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "k",
            "0",
            "5000",
            "REPLACE"
        )),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(a, "EXISTS", "k")), ":0\r\n");
    assert_eq!(s(&cmd!(b, "GET", "k")), "$5\r\nnewer\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_keys_the_target_acknowledged_are_deleted() {
    let (src, dst) = (server().await, server().await);
    let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
    for k in ["k1", "k2", "k3"] {
        cmd!(a, "SET", k, "here");
    }
    cmd!(b, "SET", "k2", "there");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "",
            "0",
            "5000",
            "KEYS",
            "k1",
            "k2",
            "k3"
        )),
        "-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
    );
    assert_eq!(s(&cmd!(a, "EXISTS", "k1", "k2", "k3")), ":1\r\n");
    assert_eq!(s(&cmd!(a, "GET", "k2")), "$4\r\nhere\r\n");
    assert_eq!(
        s(&cmd!(b, "MGET", "k1", "k2", "k3")),
        "*3\r\n$4\r\nhere\r\n$5\r\nthere\r\n$4\r\nhere\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_of_auth_and_select_on_the_target_are_relayed_and_nothing_moves() {
    let mut config = Config::ephemeral();
    config
        .set_many(&[(&b"requirepass"[..], &b"pw"[..])])
        .unwrap();
    let (src, dst) = (server().await, server_with(config).await);
    let mut a = Raw::connect(&src).await;
    cmd!(a, "SET", "k", "v");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "k", "0", "5000")),
        "-ERR Target instance replied with error: NOAUTH Authentication required.\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "k", "0", "5000", "AUTH", "bad")),
        "-ERR Target instance replied with error: WRONGPASS invalid username-password pair or user is disabled.\r\n"
    );
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "k",
            "99",
            "5000",
            "AUTH",
            "pw"
        )),
        "-ERR Target instance replied with error: ERR DB index is out of range\r\n"
    );
    assert_eq!(s(&cmd!(a, "EXISTS", "k")), ":1\r\n");
    // As in Redis, the RESTORE after a refused SELECT ran in the connection's database: the
    // target has a copy the source keeps (the error says so).
    let mut b = Raw::connect(&dst).await;
    cmd!(b, "AUTH", "pw");
    assert_eq!(s(&cmd!(b, "GET", "k")), "$1\r\nv\r\n");
    cmd!(b, "DEL", "k");
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "k",
            "0",
            "5000",
            "AUTH2",
            "default",
            "pw"
        )),
        "+OK\r\n"
    );
    assert_eq!(s(&cmd!(a, "EXISTS", "k")), ":0\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_is_cached_and_select_is_sent_only_when_the_database_changes() {
    let (src, dst) = (server().await, server().await);
    let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
    let p = port_of(&dst);
    for (i, db) in ["0", "0", "1", "1", "0"].iter().enumerate() {
        let k = format!("k{i}");
        cmd!(a, "SET", &k, "v");
        assert_eq!(
            s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, &k, db, "5000")),
            "+OK\r\n"
        );
    }
    assert_eq!(calls(&mut b, "select").await, 3, "SELECT 0, 1, 0");
    assert_eq!(calls(&mut b, "restore").await, 5);
    assert_eq!(
        info_field(&mut a, "stats", "migrate_cached_sockets").await,
        "1"
    );
    // The target closes it: the next MIGRATE finds out on its first reply and retries once.
    let list = s(&cmd!(b, "CLIENT", "LIST"));
    let id = list
        .lines()
        .find(|l| l.contains("cmd=restore"))
        .and_then(|l| l.split(' ').find_map(|f| f.strip_prefix("id=")))
        .expect("the cached connection")
        .to_string();
    assert_eq!(s(&cmd!(b, "CLIENT", "KILL", "ID", &id)), ":1\r\n");
    cmd!(a, "SET", "again", "v");
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "again", "0", "5000")),
        "+OK\r\n"
    );
    assert_eq!(
        calls(&mut b, "select").await,
        4,
        "a new connection SELECTs again"
    );
    // Unused for more than 10 s of the server's clock, it is closed.
    src.advance(Duration::from_secs(11));
    let mut closed = false;
    for _ in 0..300 {
        if info_field(&mut a, "stats", "migrate_cached_sockets").await == "0" {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(closed, "the idle connection was not closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_target_times_out_with_ioerr_and_the_key_stays() {
    let src = server().await;
    let mut a = Raw::connect(&src).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let p = listener.local_addr().unwrap().port().to_string();
    cmd!(a, "SET", "k", "v");
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "k", "0", "100")),
        "-IOERR error or timeout reading to target instance\r\n"
    );
    assert_eq!(s(&cmd!(a, "GET", "k")), "$1\r\nv\r\n");
    // A timeout is not retried: one connection was made, and it was closed.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_ok());
    assert!(listener.accept().is_err(), "no second connection");
    assert_eq!(
        info_field(&mut a, "stats", "migrate_cached_sockets").await,
        "0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_target_answers_ioerr_as_redis_does() {
    let src = server().await;
    let mut a = Raw::connect(&src).await;
    cmd!(a, "SET", "k", "v");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port().to_string()
    };
    // As in Redis, a refused connection shows at the first write (retried once).
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &closed, "k", "0", "200")),
        "-IOERR error or timeout writing to target instance\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", "-5", "k", "0", "200")),
        "-IOERR error or timeout connecting to the client\r\n"
    );
    assert_eq!(s(&cmd!(a, "GET", "k")), "$1\r\nv\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_to_itself_times_out_instead_of_deadlocking() {
    let src = server().await;
    let mut a = Raw::connect(&src).await;
    cmd!(a, "SET", "k", "v");
    let p = port_of(&src);
    assert_eq!(
        s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, "k", "0", "200")),
        "-IOERR error or timeout reading to target instance\r\n"
    );
    // Its own RESTORE ran once the lock was free, and found the key still here.
    assert_eq!(s(&cmd!(a, "GET", "k")), "$1\r\nv\r\n");
    assert_eq!(s(&cmd!(a, "PING")), "+PONG\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deletes_are_notified_and_propagated_as_one_del_of_the_moved_keys() {
    let dir = std::env::temp_dir().join(format!("resplock-migrate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = Config::ephemeral();
    config
        .set_many(&[
            (&b"appendonly"[..], &b"yes"[..]),
            (b"appendfsync", b"always"),
        ])
        .unwrap();
    config.dir = Some(dir.clone());
    let (src, dst) = (server_with(config).await, server().await);
    let mut a = Raw::connect(&src).await;
    let mut sub = Raw::connect(&src).await;
    cmd!(a, "CONFIG", "SET", "notify-keyspace-events", "Eg");
    cmd!(sub, "SUBSCRIBE", "__keyevent@0__:del");
    cmd!(a, "SET", "a", "1");
    cmd!(a, "SET", "b", "2");
    let p = port_of(&dst);
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "",
            "0",
            "5000",
            "KEYS",
            "a",
            "nokey",
            "b"
        )),
        "+OK\r\n"
    );
    for key in ["a", "b"] {
        let event = format!("*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@0__:del\r\n$1\r\n{key}\r\n");
        assert_eq!(s(&sub.reply().await), event);
    }
    cmd!(a, "SET", "c", "3");
    assert_eq!(
        s(&cmd!(
            a,
            "MIGRATE",
            "127.0.0.1",
            &p,
            "c",
            "0",
            "5000",
            "COPY"
        )),
        "+OK\r\n"
    );
    let aof = std::fs::read(dir.join("appendonlydir/appendonly.aof.1.incr.aof")).unwrap();
    let text = s(&aof);
    assert!(
        text.contains("*3\r\n$3\r\nDEL\r\n$1\r\na\r\n$1\r\nb\r\n*3\r\n$3\r\nSET\r\n$1\r\nc\r\n"),
        "{text}"
    );
    assert!(
        !text.contains("MIGRATE") && !text.contains("migrate"),
        "{text}"
    );
    src.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// MIGRATE between two servers of this process on `runtime`.
fn migrate_within_one_process(runtime: tokio::runtime::Runtime) {
    runtime.block_on(async {
        let (src, dst) = (server().await, server().await);
        let (mut a, mut b) = (Raw::connect(&src).await, Raw::connect(&dst).await);
        let p = port_of(&dst);
        for i in 0..20 {
            let k = format!("k{i}");
            cmd!(a, "SET", &k, "v");
            assert_eq!(
                s(&cmd!(a, "MIGRATE", "127.0.0.1", &p, &k, "0", "5000")),
                "+OK\r\n"
            );
        }
        // And inside a transaction.
        cmd!(a, "SET", "t", "v");
        cmd!(a, "MULTI");
        cmd!(a, "MIGRATE", "127.0.0.1", &p, "t", "0", "5000");
        assert_eq!(s(&cmd!(a, "EXEC")), "*1\r\n+OK\r\n");
        assert_eq!(s(&cmd!(b, "DBSIZE")), ":21\r\n");
        assert_eq!(s(&cmd!(a, "DBSIZE")), ":0\r\n");
    });
}

#[test]
fn a_current_thread_runtime_migrates_to_a_server_of_the_same_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    migrate_within_one_process(rt);
}

#[test]
fn a_single_worker_runtime_migrates_to_a_server_of_the_same_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    migrate_within_one_process(rt);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_moves_between_cluster_nodes_with_migrate_keys() {
    let mut config = Config::ephemeral();
    config.enable_test_commands = true;
    let c = resplock::start_cluster(config, 3, 1)
        .await
        .expect("cluster");
    let slot = Cluster::slot_of("{user}");
    let src = c.owner(slot).unwrap();
    let dst = c.masters().into_iter().find(|&m| m != src).unwrap();
    let (sid, did) = (c.node_id(src), c.node_id(dst));
    let mut a = Raw::connect(&c.nodes()[src]).await;
    let mut b = Raw::connect(&c.nodes()[dst]).await;
    for i in 0..10 {
        cmd!(a, "SET", format!("{{user}}{i}"), i.to_string());
    }
    cmd!(a, "PEXPIRE", "{user}0", "60000");
    let slot_s = slot.to_string();
    assert_eq!(
        s(&cmd!(b, "CLUSTER", "SETSLOT", &slot_s, "IMPORTING", &sid)),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "CLUSTER", "SETSLOT", &slot_s, "MIGRATING", &did)),
        "+OK\r\n"
    );
    let dport = c.addrs()[dst].port().to_string();
    // As redis-cli --cluster reshard does: a batch of keys at a time.
    let mut moved = 0;
    for _ in 0..10 {
        let keys = cmd!(a, "CLUSTER", "GETKEYSINSLOT", &slot_s, "4");
        let names: Vec<String> = s(&keys)
            .split("\r\n")
            .filter(|l| l.starts_with("{user}"))
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            break;
        }
        let mut args: Vec<&[u8]> = vec![
            b"MIGRATE",
            b"127.0.0.1",
            dport.as_bytes(),
            b"",
            b"0",
            b"5000",
            b"KEYS",
        ];
        args.extend(names.iter().map(|n| n.as_bytes()));
        assert_eq!(s(&a.cmd(&args).await), "+OK\r\n");
        moved += names.len();
        if moved < 10 {
            // Mid-migration: a moved key is asked for at the importing node.
            let ask = format!("-ASK {slot} 127.0.0.1:{dport}\r\n");
            assert_eq!(s(&cmd!(a, "GET", &names[0])), ask);
        }
    }
    assert_eq!(moved, 10);
    assert_eq!(
        calls(&mut b, "restore-asking").await,
        10,
        "RESTORE-ASKING on a cluster"
    );
    assert_eq!(calls(&mut b, "restore").await, 0);
    assert_eq!(
        s(&cmd!(b, "CLUSTER", "SETSLOT", &slot_s, "NODE", &did)),
        "+OK\r\n"
    );
    assert_eq!(
        s(&cmd!(a, "CLUSTER", "SETSLOT", &slot_s, "NODE", &did)),
        "+OK\r\n"
    );
    assert_eq!(c.owner(slot), Some(dst));
    let moved_err = format!("-MOVED {slot} 127.0.0.1:{dport}\r\n");
    assert_eq!(s(&cmd!(a, "GET", "{user}3")), moved_err);
    assert_eq!(s(&cmd!(b, "GET", "{user}3")), "$1\r\n3\r\n");
    let ttl = int(&cmd!(b, "PTTL", "{user}0"));
    assert!((59_000..=60_000).contains(&ttl), "ttl {ttl}");
    assert_eq!(
        s(&cmd!(b, "CLUSTER", "COUNTKEYSINSLOT", &slot_s)),
        ":10\r\n"
    );
    // The replicas followed: the deletes (as DEL) and the restores.
    assert!(c.wait_for_replicas(Duration::from_secs(5)).await);
    let (rs, rd) = (c.replicas_of(src)[0], c.replicas_of(dst)[0]);
    for i in 0..10 {
        let k = format!("{{user}}{i}");
        c.nodes()[rs].db(0).assert_missing(&k);
        let v = c.nodes()[rd]
            .db(0)
            .get(&k)
            .expect("on the target's replica");
        assert_eq!(&v[..], i.to_string().as_bytes());
    }
}

/// A redis-server of this machine on a free loopback port, stopped on drop.
struct RedisServer {
    child: std::process::Child,
    port: u16,
}

impl RedisServer {
    fn start() -> Option<RedisServer> {
        let ok = std::process::Command::new("redis-server")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            println!("skipped: redis-server is not installed");
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start redis-server");
        let server = RedisServer { child, port };
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("redis-server did not listen on {port}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_move_to_a_real_redis_server_and_back() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let rl = server().await;
    let mut a = Raw::connect(&rl).await;
    let mut r = Raw::connect_to(([127, 0, 0, 1], redis.port).into()).await;
    cmd!(a, "SET", "str", "value");
    cmd!(a, "PEXPIRE", "str", "60000");
    cmd!(a, "RPUSH", "list", "a", "1", "b");
    cmd!(a, "HSET", "hash", "f", "v");
    cmd!(a, "SADD", "set", "1", "2", "3");
    cmd!(a, "ZADD", "zset", "1", "x", "2.5", "y");
    cmd!(a, "XADD", "stream", "5-1", "f", "v");
    cmd!(a, "PFADD", "hll", "a", "b", "c");
    let keys = ["str", "list", "hash", "set", "zset", "stream", "hll"];
    let mut dumps = Vec::new();
    for k in keys {
        dumps.push(cmd!(a, "DUMP", k));
    }
    let rport = redis.port.to_string();
    let mut args: Vec<&[u8]> = vec![
        b"MIGRATE",
        b"127.0.0.1",
        rport.as_bytes(),
        b"",
        b"2",
        b"5000",
        b"KEYS",
    ];
    args.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(s(&a.cmd(&args).await), "+OK\r\n");
    assert_eq!(s(&cmd!(a, "DBSIZE")), ":0\r\n");
    cmd!(r, "SELECT", "2");
    for (k, d) in keys.iter().zip(&dumps) {
        assert_eq!(&cmd!(r, "DUMP", k), d, "{k} as redis-server dumps it");
    }
    let ttl = int(&cmd!(r, "PTTL", "str"));
    assert!((59_000..=60_000).contains(&ttl), "ttl {ttl}");
    // And back: redis-server's MIGRATE into resplock (SELECT, then RESTORE).
    let port = port_of(&rl);
    let mut args: Vec<&[u8]> = vec![
        b"MIGRATE",
        b"127.0.0.1",
        port.as_bytes(),
        b"",
        b"5",
        b"5000",
        b"KEYS",
    ];
    args.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(s(&r.cmd(&args).await), "+OK\r\n");
    assert_eq!(s(&cmd!(r, "DBSIZE")), ":0\r\n");
    cmd!(a, "SELECT", "5");
    for (k, d) in keys.iter().zip(&dumps) {
        assert_eq!(&cmd!(a, "DUMP", k), d, "{k} back in resplock");
    }
    assert_eq!(
        s(&cmd!(r, "MIGRATE", "127.0.0.1", &port, "str", "5", "5000")),
        "+NOKEY\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_cli_cluster_reshard_moves_slots_and_their_keys_between_nodes() {
    let ok = std::process::Command::new("redis-cli")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        println!("skipped: redis-cli is not installed");
        return;
    }
    let c = resplock::start_cluster(Config::ephemeral(), 3, 0)
        .await
        .expect("cluster");
    let (from, to) = (c.node_id(0), c.node_id(1));
    // Keys in the first 50 slots (node 0's), written where they belong.
    let mut keys = Vec::new();
    for i in 0..2000 {
        let k = format!("key{i}");
        if Cluster::slot_of(&k) < 50 {
            c.nodes()[0].db(0).set(&k, i.to_string());
            keys.push(k);
        }
    }
    assert!(keys.len() > 3, "{} keys", keys.len());
    let entry = format!("127.0.0.1:{}", c.addrs()[0].port());
    let mut cli = tokio::process::Command::new("redis-cli");
    cli.args(["--cluster", "reshard", &entry, "--cluster-from", &from])
        .args([
            "--cluster-to",
            &to,
            "--cluster-slots",
            "50",
            "--cluster-yes",
        ])
        .args(["--cluster-pipeline", "2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(60), cli.output())
        .await
        .expect("reshard finished")
        .expect("redis-cli ran");
    let text = s(&out.stdout);
    assert!(out.status.success(), "{text}{}", s(&out.stderr));
    assert!(text.contains("Moving slot 49 from"), "{text}");
    for slot in 0..50u16 {
        assert_eq!(c.owner(slot), Some(1), "slot {slot}");
    }
    assert_eq!(c.owner(50), Some(0));
    let mut a = Raw::connect(&c.nodes()[0]).await;
    let mut b = Raw::connect(&c.nodes()[1]).await;
    assert_eq!(s(&cmd!(a, "DBSIZE")), ":0\r\n");
    assert_eq!(int(&cmd!(b, "DBSIZE")), keys.len() as i64);
    let i: usize = keys[0][3..].parse().unwrap();
    let want = format!("${}\r\n{i}\r\n", i.to_string().len());
    assert_eq!(s(&cmd!(b, "GET", &keys[0])), want);
    let moved = format!(
        "-MOVED {} 127.0.0.1:{}\r\n",
        Cluster::slot_of(&keys[0]),
        c.addrs()[1].port()
    );
    assert_eq!(s(&cmd!(a, "GET", &keys[0])), moved);
}
