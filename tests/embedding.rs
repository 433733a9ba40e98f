//! The embedding API as a test uses it: the guard that stops the server on drop, direct
//! access to the data without a client, the clock, faults and restarts from Rust, and the
//! readable assertions.
mod common;
use common::*;
use resplock::{Hit, Reply, Restart};
use std::time::{Duration, UNIX_EPOCH};

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let s = server().await;
    let addr = s.local_addr();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    drop(s);
    // The connection is closed and the port no longer accepts.
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut c.stream, &mut buf),
    )
    .await
    .expect("the connection closes")
    .unwrap_or(0);
    assert_eq!(n, 0);
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "{addr} still accepts after the handle was dropped");
}

#[tokio::test]
async fn direct_writes_are_seen_by_clients_and_client_writes_by_direct_reads() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    s.db(0).set("lock:a", "owner-1");
    assert_eq!(cmd!(c, "GET", "lock:a"), b"$7\r\nowner-1\r\n");
    assert_eq!(cmd!(c, "SELECT", "2"), b"+OK\r\n");
    assert_eq!(cmd!(c, "SET", "k", "v", "PX", "5000"), b"+OK\r\n");
    assert_eq!(s.db(2).get("k").as_deref(), Some(&b"v"[..]));
    assert!(s
        .db(2)
        .ttl("k")
        .is_some_and(|t| t <= Duration::from_secs(5)));
    assert_eq!(s.db(0).get("k"), None);
    assert!(s.db(2).del("k"));
    assert!(!s.db(2).exists("k"));
    assert_eq!(s.db(0).command(&["HSET", "h", "f", "v"]), Reply::Int(1));
    assert_eq!(s.db(0).get("h"), None, "a hash is not a string");
    assert_eq!(
        s.db(0).keys(),
        vec![bytes::Bytes::from("h"), bytes::Bytes::from("lock:a")]
    );
    s.db(0).flush();
    assert!(s.db(0).keys().is_empty());
}

#[tokio::test]
async fn dump_lists_every_database_sorted_with_ttls() {
    let s = server().await;
    s.freeze();
    s.db(0).set("b", "2");
    s.db(0).set("a", "1");
    s.db(0).set_ttl("a", Duration::from_millis(1500));
    s.db(3).command(&["SADD", "s", "y", "x"]);
    s.db(3).command(&["RPUSH", "l", "1", "2"]);
    assert_eq!(
        s.dump(),
        "db0 \"a\" \"1\" ttl=1500ms\ndb0 \"b\" \"2\"\ndb3 \"l\" [\"1\", \"2\"]\ndb3 \"s\" {\"x\", \"y\"}\n"
    );
    s.flush_all();
    assert_eq!(s.dump(), "");
}

#[tokio::test]
async fn moving_the_clock_expires_keys_at_once() {
    let s = server().await;
    s.freeze();
    s.db(0).set("lock:a", "owner-1");
    s.db(0).set_ttl("lock:a", Duration::from_secs(30));
    s.db(0).assert_ttl("lock:a", Duration::from_secs(30));
    s.advance(Duration::from_secs(10));
    s.db(0).assert_ttl("lock:a", Duration::from_secs(20));
    // As in Redis, a key expires once the clock is past its time, not at it.
    s.advance(Duration::from_secs(20));
    s.db(0).assert_ttl("lock:a", Duration::ZERO);
    s.advance(Duration::from_millis(1));
    s.db(0).assert_missing("lock:a");
    let at = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    s.set_time(at);
    assert_eq!(s.now_ms(), 2_000_000_000_000);
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "TIME"),
        b"*2\r\n$10\r\n2000000000\r\n$1\r\n0\r\n".as_slice()
    );
    s.resume();
    assert!(s.now_ms() >= 2_000_000_000_000);
}

#[tokio::test]
#[should_panic(expected = "resplock: db0 key \"k\" holds \"v1\", expected \"v2\"")]
async fn assert_value_says_what_the_key_holds() {
    let s = server().await;
    s.db(0).set("k", "v1");
    s.db(0).assert_value("k", "v2");
}

#[tokio::test]
async fn an_injected_error_hits_the_targeted_command_the_given_number_of_times() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    s.fail(Hit::Command("SET".into()), "READONLY injected", Some(1));
    assert_eq!(cmd!(c, "GET", "k"), b"$-1\r\n");
    assert_eq!(cmd!(c, "SET", "k", "v"), b"-READONLY injected\r\n");
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    let id = s.fail(Hit::Matching("*get*".into()), "ERR down", None);
    assert_eq!(cmd!(c, "GET", "k"), b"-ERR down\r\n");
    assert_eq!(s.clear_fault(Some(id)), 1);
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nv\r\n");
}

#[tokio::test]
async fn a_restart_from_an_older_snapshot_loses_the_writes_made_since() {
    let s = server().await;
    s.db(0).set("before", "1");
    let snap = s.snapshot();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "lock:a", "owner-1", "NX"), b"+OK\r\n");
    s.restart(Restart::From(snap));
    s.db(0).assert_value("before", "1");
    s.db(0).assert_missing("lock:a");
    // The connection went with the "process".
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut c.stream, &mut buf),
    )
    .await
    .expect("the connection closes")
    .unwrap_or(0);
    assert_eq!(n, 0);
    s.restart(Restart::Empty);
    assert_eq!(s.dump(), "");
}

#[tokio::test]
async fn counters_count_commands_and_connections() {
    let s = server().await;
    let before = s.commands_processed();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(s.commands_processed(), before + 2);
    assert_eq!(s.connections_received(), 1);
    assert_eq!(s.connected_clients(), 1);
    let id = cmd!(c, "CLIENT", "ID");
    let id: u64 = std::str::from_utf8(&id[1..])
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!s.disconnect_client(id + 1));
    assert!(s.disconnect_client(id));
    let mut buf = [0u8; 16];
    let n = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read(&mut c.stream, &mut buf),
    )
    .await
    .expect("the connection closes")
    .unwrap_or(0);
    assert_eq!(n, 0);
}

#[tokio::test]
async fn direct_access_refuses_commands_that_need_a_client() {
    let s = server().await;
    assert!(matches!(
        s.db(0).command(&["BLPOP", "q", "0"]),
        Reply::Error(e) if e.starts_with(b"ERR this command needs a client connection")
    ));
    assert!(matches!(
        s.db(0).command(&["NOSUCH"]),
        Reply::Error(e) if e.starts_with(b"ERR unknown command")
    ));
}

#[test]
fn the_blocking_server_offers_the_same_controls_and_stops_on_drop() {
    let s = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    let addr = s.local_addr();
    s.db(0).set("k", "v");
    s.db(0).assert_value("k", "v");
    drop(s);
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[tokio::test]
async fn start_many_gives_independent_servers() {
    let nodes = resplock::start_many(resplock::Config::ephemeral(), 3)
        .await
        .unwrap();
    nodes[0].db(0).set("k", "v");
    nodes[1].advance(Duration::from_secs(60));
    assert_eq!(nodes[1].db(0).get("k"), None);
    assert!(nodes[0].now_ms() + 50_000 < nodes[1].now_ms());
    assert_ne!(nodes[0].local_addr(), nodes[2].local_addr());
}

/// The Redlock critique's two scenarios on three nodes: a failover that lost the lock's
/// write, and a clock jump on one node, together hand a second client a majority while the
/// first still believes it holds the lock.
#[tokio::test]
async fn a_failover_without_the_write_and_a_clock_jump_break_redlock_mutual_exclusion() {
    let nodes = resplock::start_many(resplock::Config::ephemeral(), 3)
        .await
        .unwrap();
    let before = nodes[1].snapshot();
    for n in &nodes {
        let mut a = Raw::connect(n).await;
        assert_eq!(cmd!(a, "SET", "lock", "A", "NX", "PX", "30000"), b"+OK\r\n");
    }
    // Node 1 fails over to a replica the write had not reached; node 2's clock jumps.
    nodes[1].restart(Restart::From(before));
    nodes[2].advance(Duration::from_secs(31));
    let mut got = 0;
    for n in &nodes {
        let mut b = Raw::connect(n).await;
        if cmd!(b, "SET", "lock", "B", "NX", "PX", "30000") == b"+OK\r\n" {
            got += 1;
        }
    }
    assert_eq!(got, 2, "B holds a majority too");
    nodes[0].db(0).assert_value("lock", "A");
}

#[tokio::test]
async fn client_ages_and_uptime_follow_the_server_clock() {
    let s = server().await;
    s.freeze();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    s.advance(Duration::from_secs(120));
    let list = cmd!(c, "CLIENT", "LIST");
    let list = String::from_utf8_lossy(&list);
    assert!(list.contains(" age=120 idle=0 "), "{list}");
    let info = cmd!(c, "INFO", "server");
    let info = String::from_utf8_lossy(&info);
    assert!(
        info.contains("uptime_in_seconds:120\r\n") || info.contains("uptime_in_seconds:121\r\n"),
        "{info}"
    );
}

/// The script time limit runs on real time: a frozen server clock must not disable BUSY.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_clock_still_lets_a_long_script_answer_busy() {
    let s = server_with(resplock::Config {
        busy_reply_threshold_ms: 100,
        ..resplock::Config::ephemeral()
    })
    .await;
    s.freeze();
    let mut runner = Raw::connect(&s).await;
    let script = "local i = 0 while true do i = i + 1 end";
    runner
        .send(
            format!(
                "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                script.len()
            )
            .as_bytes(),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(
        cmd!(other, "GET", "x"),
        &b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n"[..]
    );
    assert_eq!(cmd!(other, "SCRIPT", "KILL"), b"+OK\r\n");
    assert!(runner.reply().await.starts_with(b"-ERR Script killed"));
}

#[tokio::test]
async fn idle_times_and_slowlog_timestamps_follow_the_server_clock() {
    let s = server().await;
    s.set_time(UNIX_EPOCH + Duration::from_secs(4_000_000_000));
    s.freeze();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    s.advance(Duration::from_secs(50));
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":50\r\n");
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "slowlog-log-slower-than", "0"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    let log = cmd!(c, "SLOWLOG", "GET", "1");
    assert!(
        log.windows(12).any(|w| w == b":4000000050\r"),
        "{}",
        String::from_utf8_lossy(&log)
    );
}
