//! The test control surface over the wire: RESPLOCK.CLOCK, RESPLOCK.FAULT, RESPLOCK.SNAPSHOT
//! and RESPLOCK.RESTART on a server started with `enable_test_commands`, and their absence
//! (exactly an unknown command) on any other.
mod common;
use common::*;
use std::time::{Duration, Instant};

async fn test_server() -> resplock::ServerHandle {
    server_with(resplock::Config {
        enable_test_commands: true,
        ..resplock::Config::ephemeral()
    })
    .await
}

fn int(reply: &[u8]) -> i64 {
    let s = std::str::from_utf8(reply).unwrap();
    s.trim_start_matches(':').trim_end().parse().unwrap()
}

#[tokio::test]
async fn test_commands_are_unknown_commands_without_the_flag() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "ADVANCE", "1000"),
        &b"-ERR unknown command 'RESPLOCK.CLOCK', with args beginning with: 'ADVANCE' '1000' \r\n"
            [..]
    );
    assert_eq!(
        cmd!(c, "resplock.restart"),
        &b"-ERR unknown command 'resplock.restart', with args beginning with: \r\n"[..]
    );
    // Queued in MULTI they make EXEC abort, as any unknown command does.
    assert_eq!(cmd!(c, "MULTI"), b"+OK\r\n");
    assert!(cmd!(c, "RESPLOCK.FAULT", "LIST").starts_with(b"-ERR unknown command"));
    assert!(cmd!(c, "EXEC").starts_with(b"-EXECABORT"));
}

#[tokio::test]
async fn test_commands_are_not_listed_by_command_even_when_enabled() {
    let plain = server().await;
    let test = test_server().await;
    let mut a = Raw::connect(&plain).await;
    let mut b = Raw::connect(&test).await;
    assert_eq!(cmd!(a, "COMMAND", "COUNT"), cmd!(b, "COMMAND", "COUNT"));
    assert_eq!(
        cmd!(b, "COMMAND", "INFO", "resplock.clock"),
        b"*1\r\n$-1\r\n"
    );
    let from_script = cmd!(b, "EVAL", "return redis.call('resplock.clock','get')", "0");
    assert!(
        from_script.starts_with(b"-ERR Unknown Redis command called from script"),
        "{}",
        String::from_utf8_lossy(&from_script)
    );
}

#[tokio::test]
async fn advancing_the_clock_expires_keys_and_raises_events_at_once() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    cmd!(c, "CONFIG", "SET", "notify-keyspace-events", "Ex");
    cmd!(sub, "SUBSCRIBE", "__keyevent@0__:expired");
    assert_eq!(cmd!(c, "SET", "lock", "me", "PX", "30000"), b"+OK\r\n");
    assert_eq!(cmd!(c, "SET", "other", "x", "PX", "90000"), b"+OK\r\n");
    let before = int(&cmd!(c, "RESPLOCK.CLOCK", "GET"));
    let after = int(&cmd!(c, "RESPLOCK.CLOCK", "ADVANCE", "30001"));
    assert!(after >= before + 30_001, "{before} -> {after}");
    // Gone without being read: DBSIZE counts keys not yet reclaimed, so this shows the sweep.
    assert_eq!(cmd!(c, "DBSIZE"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$4\r\nlock\r\n"
    );
    assert!(int(&cmd!(c, "PTTL", "other")) <= 59_999);
}

#[tokio::test]
async fn a_frozen_clock_stands_still_and_set_moves_it_to_an_absolute_time() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    let t = int(&cmd!(c, "RESPLOCK.CLOCK", "FREEZE"));
    cmd!(c, "SET", "k", "v", "PX", "100");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(int(&cmd!(c, "RESPLOCK.CLOCK", "GET")), t);
    assert_eq!(cmd!(c, "PTTL", "k"), b":100\r\n");
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "SET", "4102444800000"),
        b":4102444800000\r\n"
    );
    assert_eq!(cmd!(c, "TIME"), b"*2\r\n$10\r\n4102444800\r\n$1\r\n0\r\n");
    assert_eq!(
        cmd!(c, "EVAL", "return redis.call('TIME')[1]", "0"),
        b"$10\r\n4102444800\r\n"
    );
    assert_eq!(cmd!(c, "EXISTS", "k"), b":0\r\n");
    cmd!(c, "RESPLOCK.CLOCK", "RESUME");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(int(&cmd!(c, "RESPLOCK.CLOCK", "GET")) > 4102444800000);
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "ADVANCE", "soon"),
        &b"-ERR value is not an integer or out of range\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "REWIND"),
        &b"-ERR unknown subcommand 'REWIND'. Try RESPLOCK.CLOCK HELP.\r\n"[..]
    );
}

#[tokio::test]
async fn a_blocked_pop_times_out_when_the_clock_moves_past_its_deadline() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    let mut waiter = Raw::connect(&s).await;
    cmd!(c, "RESPLOCK.CLOCK", "FREEZE");
    waiter
        .send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$2\r\n60\r\n")
        .await;
    assert!(waiter.try_reply(Duration::from_millis(100)).await.is_none());
    cmd!(c, "RESPLOCK.CLOCK", "ADVANCE", "60001");
    assert_eq!(waiter.reply().await, b"*-1\r\n");
}

#[tokio::test]
async fn an_error_fault_fails_the_next_n_calls_of_one_command_only() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(
            c,
            "RESPLOCK.FAULT",
            "ERROR",
            "READONLY You can't write against a read only replica.",
            "COMMAND",
            "set",
            "COUNT",
            "2"
        ),
        b":1\r\n"
    );
    let readonly = &b"-READONLY You can't write against a read only replica.\r\n"[..];
    assert_eq!(cmd!(c, "SET", "a", "1"), readonly);
    assert_eq!(cmd!(c, "GET", "a"), b"$-1\r\n");
    assert_eq!(cmd!(c, "set", "a", "1"), readonly);
    assert_eq!(cmd!(c, "SET", "a", "1"), b"+OK\r\n");
    assert_eq!(cmd!(c, "RESPLOCK.FAULT", "LIST"), b"*0\r\n");
}

#[tokio::test]
async fn faults_target_a_pattern_or_one_client_and_clear_removes_them() {
    let s = test_server().await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    let b_id = int(&cmd!(b, "CLIENT", "ID")).to_string();
    cmd!(a, "RESPLOCK.FAULT", "ERROR", "ERR boom", "MATCH", "eval*");
    let rule = int(&cmd!(
        a,
        "RESPLOCK.FAULT",
        "ERROR",
        "ERR only b",
        "CLIENT",
        &b_id
    ));
    assert_eq!(cmd!(a, "EVAL", "return 1", "0"), b"-ERR boom\r\n");
    assert_eq!(cmd!(a, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(b, "PING"), b"-ERR only b\r\n");
    assert_eq!(
        cmd!(a, "RESPLOCK.FAULT", "LIST"),
        format!(
            "*2\r\n*4\r\n:1\r\n$14\r\nerror ERR boom\r\n$11\r\nmatch eval*\r\n:-1\r\n*4\r\n:{rule}\r\n$16\r\nerror ERR only b\r\n${}\r\nclient {b_id}\r\n:-1\r\n",
            7 + b_id.len()
        )
        .as_bytes()
    );
    assert_eq!(
        cmd!(a, "RESPLOCK.FAULT", "CLEAR", &rule.to_string()),
        b":1\r\n"
    );
    assert_eq!(cmd!(b, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(a, "RESPLOCK.FAULT", "CLEAR"), b":1\r\n");
    assert_eq!(cmd!(a, "EVAL", "return 1", "0"), b":1\r\n");
}

#[tokio::test]
async fn a_fault_inside_multi_makes_exec_abort_like_a_refused_command() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(
        c,
        "RESPLOCK.FAULT",
        "ERROR",
        "ERR injected",
        "COMMAND",
        "incr",
        "COUNT",
        "1"
    );
    assert_eq!(cmd!(c, "MULTI"), b"+OK\r\n");
    assert_eq!(cmd!(c, "INCR", "n"), b"-ERR injected\r\n");
    assert_eq!(
        cmd!(c, "EXEC"),
        &b"-EXECABORT Transaction discarded because of previous errors.\r\n"[..]
    );
}

#[tokio::test]
async fn a_delay_fault_runs_the_command_and_holds_its_reply() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    let mut other = Raw::connect(&s).await;
    cmd!(
        c,
        "RESPLOCK.FAULT",
        "DELAY",
        "300",
        "COMMAND",
        "set",
        "COUNT",
        "1"
    );
    let started = Instant::now();
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n").await;
    // The write is visible to others before the writer hears back.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(cmd!(other, "GET", "k"), b"$1\r\nv\r\n");
    assert_eq!(c.reply().await, b"+OK\r\n");
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn drop_loses_the_request_and_drop_after_loses_only_the_reply() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    cmd!(
        ctl,
        "RESPLOCK.FAULT",
        "DROP",
        "COMMAND",
        "set",
        "COUNT",
        "1"
    );
    let mut c = Raw::connect(&s).await;
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n").await;
    assert!(c.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(ctl, "EXISTS", "a"), b":0\r\n");

    cmd!(
        ctl,
        "RESPLOCK.FAULT",
        "DROP-AFTER",
        "COMMAND",
        "set",
        "COUNT",
        "1"
    );
    let mut c = Raw::connect(&s).await;
    c.send(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n1\r\n").await;
    assert!(c.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(ctl, "GET", "b"), b"$1\r\n1\r\n");
}

#[tokio::test]
async fn a_paused_server_answers_nothing_until_the_pause_ends_and_keeps_connections() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "PAUSE", "60000"), b"+OK\r\n");
    c.send(b"*1\r\n$4\r\nPING\r\n*1\r\n$3\r\nFOO\r\n").await;
    assert!(c.try_reply(Duration::from_millis(200)).await.is_none());
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "UNPAUSE"), b"+OK\r\n");
    assert_eq!(c.reply().await, b"+PONG\r\n");
    assert!(c.reply().await.starts_with(b"-ERR unknown command 'FOO'"));
    // A timed pause ends by itself.
    cmd!(ctl, "RESPLOCK.FAULT", "PAUSE", "150");
    let started = Instant::now();
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[tokio::test]
async fn disconnect_closes_the_selected_connections() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    cmd!(a, "CLIENT", "SETNAME", "victim");
    cmd!(b, "PING");
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "DISCONNECT", "NAME", "victim"),
        b":1\r\n"
    );
    assert!(a.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(b, "PING"), b"+PONG\r\n");
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "DISCONNECT", "OTHERS"),
        b":1\r\n"
    );
    assert!(b.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(ctl, "PING"), b"+PONG\r\n");
}

#[tokio::test]
async fn restart_from_a_snapshot_loses_the_writes_made_since() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    let mut other = Raw::connect(&s).await;
    cmd!(c, "SET", "before", "1");
    cmd!(c, "SELECT", "3");
    cmd!(c, "SET", "in-db-3", "1", "PX", "60000");
    assert_eq!(cmd!(c, "RESPLOCK.SNAPSHOT", "replica"), b":2\r\n");
    cmd!(c, "SET", "lock", "acquired-on-the-old-master");
    assert_eq!(cmd!(c, "RESPLOCK.RESTART", "FROM", "replica"), b"+OK\r\n");
    assert!(c.closed(Duration::from_secs(5)).await);
    assert!(other.closed(Duration::from_secs(5)).await);
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "GET", "before"), b"$1\r\n1\r\n");
    cmd!(c, "SELECT", "3");
    assert_eq!(cmd!(c, "EXISTS", "lock", "in-db-3"), b":1\r\n");
    assert!(int(&cmd!(c, "PTTL", "in-db-3")) > 0);
    assert_eq!(
        cmd!(c, "RESPLOCK.RESTART", "FROM", "nope"),
        &b"-ERR no such snapshot\r\n"[..]
    );
    cmd!(c, "RESPLOCK.RESTART");
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
}

#[tokio::test]
async fn restart_empties_the_script_cache() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SCRIPT", "LOAD", "return 1");
    cmd!(c, "RESPLOCK.RESTART", "KEEP");
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(
            c,
            "SCRIPT",
            "EXISTS",
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        ),
        b"*1\r\n:0\r\n"
    );
}
