//! FAILOVER as redis-server 7.0 runs it: the master pauses writes until a replica
//! acknowledged its whole stream, then follows it and asks it to take over with
//! `PSYNC <replid> <offset> FAILOVER`; both continue their history with partial
//! resynchronizations. TIMEOUT aborts (or, with FORCE, fails over anyway), FAILOVER ABORT
//! ends it, and the errors are Redis's. Then restarts from the RDB file: the replication
//! history it carries lets a restarted replica and a restarted master continue with PSYNC.
//! A replica that must not catch up is a raw connection that synchronized and never
//! acknowledges.

mod common;
use common::*;
use resplock::{Config, ServerHandle};
use std::net::SocketAddr;
use std::time::Duration;

async fn replica_of(replica: &mut Raw, master: SocketAddr) {
    assert_eq!(
        cmd!(replica, "REPLICAOF", "127.0.0.1", master.port().to_string()),
        b"+OK\r\n"
    );
}

async fn info(c: &mut Raw, field: &str) -> String {
    let section = if field.starts_with("sync_") {
        "stats"
    } else {
        "replication"
    };
    info_field(&cmd!(c, "INFO", section), field).unwrap_or_default()
}

/// Wait (bounded) until INFO's `field` reads `want`.
async fn until_info(c: &mut Raw, field: &str, want: &str) {
    for _ in 0..400 {
        if info(c, field).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "{field} never became {want} (it is {})",
        info(c, field).await
    );
}

/// A replica that synchronized (it announced `port`) and then never acknowledges: a
/// FAILOVER to it waits for ever. Kept open while the returned connection lives.
async fn silent_replica(master: &ServerHandle, port: u16) -> Raw {
    let mut fake = Raw::connect(master).await;
    assert_eq!(
        cmd!(fake, "REPLCONF", "listening-port", port.to_string()),
        b"+OK\r\n"
    );
    fake.send(b"PSYNC ? -1\r\n").await;
    let mut m = Raw::connect(master).await;
    for _ in 0..400 {
        if info(&mut m, "slave0").await.contains("state=online") {
            return fake;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the silent replica never came online");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_refusals_are_redis_errors() {
    let master = server().await;
    let mut m = Raw::connect(&master).await;
    assert_eq!(
        cmd!(m, "FAILOVER"),
        b"-ERR FAILOVER requires connected replicas.\r\n"
    );
    assert_eq!(
        cmd!(m, "FAILOVER", "ABORT"),
        b"-ERR No failover in progress.\r\n"
    );
    assert_eq!(
        cmd!(m, "FAILOVER", "TIMEOUT", "0"),
        b"-ERR FAILOVER timeout must be greater than 0\r\n"
    );
    assert_eq!(
        cmd!(m, "FAILOVER", "TO", "127.0.0.1", "port"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        cmd!(m, "FAILOVER", "FORCE", "FORCE"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(
        cmd!(m, "PSYNC", "?", "-1", "FAILOVER"),
        b"-ERR PSYNC FAILOVER can't be sent to a master.\r\n"
    );
    let replica = server().await;
    let mut r = Raw::connect(&replica).await;
    replica_of(&mut r, master.local_addr()).await;
    until_linked(&mut r).await;
    let port = replica.local_addr().port().to_string();
    assert_eq!(
        cmd!(m, "FAILOVER", "FORCE", "TIMEOUT", "100"),
        b"-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n"
    );
    assert_eq!(
        cmd!(m, "FAILOVER", "TO", "127.0.0.1", "1", "TIMEOUT", "100"),
        b"-ERR FAILOVER target HOST and PORT is not a replica.\r\n"
    );
    assert_eq!(
        cmd!(r, "FAILOVER", "TO", "127.0.0.1", &port),
        b"-ERR FAILOVER is not valid when server is a replica.\r\n"
    );
    assert_eq!(
        cmd!(
            r,
            "PSYNC",
            "0123456789012345678901234567890123456789",
            "1",
            "FAILOVER"
        ),
        b"-ERR PSYNC FAILOVER replid must match my replid.\r\n"
    );
    assert_eq!(info(&mut m, "master_failover_state").await, "no-failover");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_to_a_replica_promotes_it_and_both_continue_their_history() {
    let master = server().await;
    let (target, other) = (server().await, server().await);
    let mut m = Raw::connect(&master).await;
    let (mut t, mut o) = (Raw::connect(&target).await, Raw::connect(&other).await);
    replica_of(&mut t, master.local_addr()).await;
    replica_of(&mut o, master.local_addr()).await;
    until_linked(&mut t).await;
    until_linked(&mut o).await;
    cmd!(m, "SET", "lock", "owner-1", "PX", "60000");
    cmd!(m, "SELECT", "9");
    cmd!(m, "INCR", "n");
    let port = target.local_addr().port().to_string();
    assert_eq!(cmd!(m, "FAILOVER", "TO", "127.0.0.1", &port), b"+OK\r\n");
    // Writes wait for the end of the failover, then meet a replica.
    let mut writer = Raw::connect(&master).await;
    writer.send(b"SET late 1\r\n").await;
    until_info(&mut m, "master_failover_state", "no-failover").await;
    assert_eq!(
        writer.reply().await,
        b"-READONLY You can't write against a read only replica.\r\n"
    );
    assert!(cmd!(m, "ROLE").starts_with(b"*5\r\n$5\r\nslave\r\n"));
    assert!(cmd!(t, "ROLE").starts_with(b"*3\r\n$6\r\nmaster\r\n"));
    assert_eq!(info(&mut t, "sync_partial_ok").await, "1");
    assert_eq!(info(&mut t, "sync_full").await, "0");
    replica_of(&mut o, target.local_addr()).await;
    until_linked(&mut m).await;
    until_linked(&mut o).await;
    cmd!(t, "SET", "after", "2");
    until_caught_up(&mut t, &mut m).await;
    until_caught_up(&mut t, &mut o).await;
    assert_eq!(info(&mut t, "sync_full").await, "0");
    assert_eq!(info(&mut t, "sync_partial_ok").await, "2");
    for c in [&mut m, &mut o] {
        cmd!(c, "SELECT", "0");
        assert_eq!(cmd!(c, "GET", "lock"), b"$7\r\nowner-1\r\n");
        assert_eq!(cmd!(c, "GET", "after"), b"$1\r\n2\r\n");
        assert_eq!(cmd!(c, "EXISTS", "late"), b":0\r\n");
    }
    assert_eq!(cmd!(o, "SELECT", "9"), b"+OK\r\n");
    assert_eq!(cmd!(o, "GET", "n"), b"$1\r\n1\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_abort_ends_the_wait_and_the_paused_writes_run() {
    let master = server().await;
    let _fake = silent_replica(&master, 1).await;
    let mut m = Raw::connect(&master).await;
    cmd!(m, "SET", "k", "1");
    assert_eq!(
        cmd!(m, "FAILOVER", "TO", "127.0.0.1", "1", "TIMEOUT", "60000"),
        b"+OK\r\n"
    );
    assert_eq!(
        info(&mut m, "master_failover_state").await,
        "waiting-for-sync"
    );
    assert_eq!(
        cmd!(m, "FAILOVER"),
        b"-ERR FAILOVER already in progress.\r\n"
    );
    assert_eq!(
        cmd!(m, "REPLICAOF", "127.0.0.1", "1"),
        b"-ERR REPLICAOF not allowed while failing over.\r\n"
    );
    // CLIENT UNPAUSE ends CLIENT PAUSE's pause, not the failover's.
    assert_eq!(cmd!(m, "CLIENT", "UNPAUSE"), b"+OK\r\n");
    let mut writer = Raw::connect(&master).await;
    writer.send(b"SET k 2\r\n").await;
    assert_eq!(writer.try_reply(Duration::from_millis(200)).await, None);
    assert_eq!(cmd!(m, "GET", "k"), b"$1\r\n1\r\n", "reads go on");
    assert_eq!(cmd!(m, "FAILOVER", "ABORT"), b"+OK\r\n");
    assert_eq!(writer.reply().await, b"+OK\r\n");
    assert_eq!(info(&mut m, "master_failover_state").await, "no-failover");
    assert_eq!(info(&mut m, "role").await, "master");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_timeout_aborts_when_the_replica_never_catches_up() {
    let master = server().await;
    let _fake = silent_replica(&master, 1).await;
    let mut m = Raw::connect(&master).await;
    cmd!(m, "SET", "k", "1");
    assert_eq!(
        cmd!(m, "FAILOVER", "TO", "127.0.0.1", "1", "TIMEOUT", "200"),
        b"+OK\r\n"
    );
    until_info(&mut m, "master_failover_state", "no-failover").await;
    assert_eq!(info(&mut m, "role").await, "master");
    assert_eq!(cmd!(m, "SET", "k", "2"), b"+OK\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failover_force_follows_the_target_after_the_timeout_until_aborted() {
    let master = server().await;
    let _fake = silent_replica(&master, 1).await;
    let mut m = Raw::connect(&master).await;
    let replid = info(&mut m, "master_replid").await;
    cmd!(m, "SET", "k", "1");
    assert_eq!(
        cmd!(
            m,
            "FAILOVER",
            "TO",
            "127.0.0.1",
            "1",
            "TIMEOUT",
            "100",
            "FORCE"
        ),
        b"+OK\r\n"
    );
    // Nothing listens on the target's port: the failover stays in progress.
    until_info(&mut m, "master_failover_state", "failover-in-progress").await;
    assert_eq!(info(&mut m, "role").await, "slave");
    assert_eq!(info(&mut m, "master_port").await, "1");
    assert_eq!(cmd!(m, "FAILOVER", "ABORT"), b"+OK\r\n");
    assert_eq!(info(&mut m, "role").await, "master");
    assert_eq!(info(&mut m, "master_failover_state").await, "no-failover");
    assert_eq!(info(&mut m, "master_replid2").await, replid);
    assert_eq!(cmd!(m, "SET", "k", "2"), b"+OK\r\n");
}

/// A directory that outlives one server (an ephemeral one is removed when its server stops),
/// removed on drop.
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir()
            .join(format!("resplock-failover-{}", std::process::id()))
            .join(name);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn config(&self, port: u16, replicaof: Option<SocketAddr>) -> Config {
        let mut c = Config::ephemeral();
        c.dir = Some(self.0.clone());
        c.port = port;
        if let Some(m) = replicaof {
            c.set_replicaof(Some(("127.0.0.1", m.port())));
        }
        c
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        // The per-process parent goes with the last of its tests (it fails while not empty).
        let _ = std::fs::remove_dir(self.0.parent().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_restarted_from_its_rdb_continues_with_a_partial_resync() {
    let master = server().await;
    let mut m = Raw::connect(&master).await;
    let dir = Dir::new("replica");
    let replica = server_with(dir.config(0, Some(master.local_addr()))).await;
    let mut r = Raw::connect(&replica).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "a", "1");
    cmd!(m, "SELECT", "3");
    cmd!(m, "SET", "b", "2");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "SAVE"), b"+OK\r\n");
    let port = replica.local_addr().port();
    replica.shutdown().await;
    cmd!(m, "SET", "c", "3");
    let replica = server_with(dir.config(port, Some(master.local_addr()))).await;
    let mut r = Raw::connect(&replica).await;
    until_linked(&mut r).await;
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(info(&mut m, "sync_full").await, "1");
    assert_eq!(info(&mut m, "sync_partial_ok").await, "1");
    cmd!(r, "SELECT", "3");
    assert_eq!(cmd!(r, "GET", "c"), b"$1\r\n3\r\n");
    assert_eq!(cmd!(r, "GET", "b"), b"$1\r\n2\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_restarted_from_its_rdb_keeps_its_history_for_its_replicas() {
    let dir = Dir::new("master");
    let master = server_with(dir.config(0, None)).await;
    let addr = master.local_addr();
    let mut m = Raw::connect(&master).await;
    let replica = server().await;
    let mut r = Raw::connect(&replica).await;
    replica_of(&mut r, addr).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "lock", "tok");
    until_caught_up(&mut m, &mut r).await;
    let (replid, offset) = (
        info(&mut m, "master_replid").await,
        info(&mut m, "master_repl_offset").await,
    );
    assert_eq!(cmd!(m, "SAVE"), b"+OK\r\n");
    master.shutdown().await;
    let master = server_with(dir.config(addr.port(), None)).await;
    let mut m = Raw::connect(&master).await;
    assert_eq!(info(&mut m, "master_replid2").await, replid);
    let offset: i64 = offset.parse().unwrap();
    assert_eq!(
        info(&mut m, "second_repl_offset").await,
        (offset + 1).to_string()
    );
    assert_eq!(info(&mut m, "master_repl_offset").await, offset.to_string());
    until_linked(&mut r).await;
    cmd!(m, "SET", "after", "restart");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(info(&mut m, "sync_partial_ok").await, "1");
    assert_eq!(info(&mut m, "sync_full").await, "0");
    assert_eq!(cmd!(r, "GET", "after"), b"$7\r\nrestart\r\n");
    assert_eq!(
        info(&mut r, "master_replid").await,
        info(&mut m, "master_replid").await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_master_deletes_on_its_replicas_the_keys_that_expired_while_it_was_down() {
    let dir = Dir::new("expired");
    let master = server_with(dir.config(0, None)).await;
    let addr = master.local_addr();
    let replica = server().await;
    // Both clocks an hour behind: what is given a minute now has expired for the restarted
    // master (on the real time), and stays live on the replica until a DEL comes.
    master.state().clock.advance_ms(-3_600_000);
    replica.state().clock.advance_ms(-3_600_000);
    let mut m = Raw::connect(&master).await;
    let mut r = Raw::connect(&replica).await;
    replica_of(&mut r, addr).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "lock", "tok", "PX", "60000");
    cmd!(m, "SELECT", "2");
    cmd!(m, "SET", "other", "x", "PX", "60000");
    cmd!(m, "SET", "kept", "y");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "lock"), b"$3\r\ntok\r\n");
    assert_eq!(cmd!(m, "SAVE"), b"+OK\r\n");
    master.shutdown().await;
    let master = server_with(dir.config(addr.port(), None)).await;
    let mut m = Raw::connect(&master).await;
    assert_eq!(cmd!(m, "DBSIZE"), b":0\r\n");
    until_linked(&mut r).await;
    cmd!(m, "SET", "after", "restart");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(info(&mut m, "sync_partial_ok").await, "1");
    assert_eq!(info(&mut m, "sync_full").await, "0");
    assert_eq!(cmd!(r, "EXISTS", "lock"), b":0\r\n");
    assert_eq!(cmd!(r, "DBSIZE"), b":1\r\n", "db 0 holds only `after`");
    cmd!(r, "SELECT", "2");
    assert_eq!(cmd!(r, "EXISTS", "other"), b":0\r\n");
    assert_eq!(cmd!(r, "GET", "kept"), b"$1\r\ny\r\n");
    master.shutdown().await;
    replica.shutdown().await;
}
