//! The test controls never lock their user out: whatever a test sets over the wire, a new
//! connection (redis-cli's, or a redis-py client with its connect-time CLIENT SETINFO) can
//! still reach the server and undo it, and a bare DISCONNECT does not cut the caller off.
//! Every RESPLOCK.* family answers HELP in Redis's HELP shape.
mod common;
use common::*;
use std::time::Duration;

async fn test_server() -> resplock::ServerHandle {
    server_with(resplock::Config {
        enable_test_commands: true,
        ..resplock::Config::ephemeral()
    })
    .await
}

#[tokio::test]
async fn refusing_connections_can_be_lifted_from_a_new_connection() {
    let s = test_server().await;
    // redis-cli style: one connection per command.
    let mut ctl = Raw::connect(&s).await;
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "REFUSE-CONNECTIONS", "yes"),
        b"+OK\r\n"
    );
    drop(ctl);
    // An ordinary client is cut off at its first request...
    let mut c = Raw::connect(&s).await;
    c.send(b"*1\r\n$4\r\nPING\r\n").await;
    assert!(c.closed(Duration::from_secs(5)).await);
    // ...after its connect-time commands were answered (redis-py's handshake gets through).
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CLIENT", "SETINFO", "LIB-NAME", "redis-py"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "SELECT", "0"), b"+OK\r\n");
    c.send(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").await;
    assert!(c.closed(Duration::from_secs(5)).await);
    // A new connection lifts the refusal, and new clients are served again.
    let mut ctl = Raw::connect(&s).await;
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "REFUSE-CONNECTIONS", "no"),
        b"+OK\r\n"
    );
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
}

#[tokio::test]
async fn a_control_connection_keeps_being_served_while_connections_are_refused() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    cmd!(ctl, "RESPLOCK.FAULT", "REFUSE-CONNECTIONS", "yes");
    let mut other = Raw::connect(&s).await;
    // A connection accepted during the refusal that controls the server is a control
    // connection: its ordinary commands run too.
    assert_eq!(cmd!(other, "RESPLOCK.CLOCK", "FREEZE").first(), Some(&b':'));
    assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(ctl, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "CLEAR"), b":0\r\n");
}

#[tokio::test]
async fn a_catch_all_error_spares_connect_time_commands_unless_it_names_them() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "ERROR", "ERR boom"), b":1\r\n");
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "ERROR", "ERR glob", "MATCH", "*set*"),
        b":2\r\n"
    );
    // A new redis-py client connects: its handshake is answered, its commands fail.
    let mut c = Raw::connect(&s).await;
    assert!(cmd!(c, "HELLO", "3").starts_with(b"%7\r\n"));
    assert_eq!(cmd!(c, "CLIENT", "SETINFO", "LIB-VER", "5.0"), b"+OK\r\n");
    assert_eq!(cmd!(c, "CLIENT", "SETNAME", "worker"), b"+OK\r\n");
    assert_eq!(cmd!(c, "SELECT", "0"), b"+OK\r\n");
    assert_eq!(
        cmd!(c, "AUTH", "x"),
        &b"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"[..]
    );
    assert_eq!(cmd!(c, "GET", "k"), b"-ERR boom\r\n");
    // It can lift the fault itself.
    assert_eq!(cmd!(c, "RESPLOCK.FAULT", "CLEAR"), b":2\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"_\r\n");
    // A rule that names a connect-time command does hit it.
    cmd!(
        ctl,
        "RESPLOCK.FAULT",
        "ERROR",
        "ERR no info",
        "COMMAND",
        "client|setinfo"
    );
    assert_eq!(
        cmd!(c, "CLIENT", "SETINFO", "LIB-NAME", "x"),
        b"-ERR no info\r\n"
    );
    assert_eq!(cmd!(c, "CLIENT", "SETNAME", "w2"), b"+OK\r\n");
}

#[tokio::test]
async fn a_pause_lets_a_new_client_connect_and_lift_it() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "PAUSE", "60000"), b"+OK\r\n");
    drop(ctl);
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CLIENT", "SETINFO", "LIB-NAME", "redis-py"),
        b"+OK\r\n"
    );
    c.send(b"*1\r\n$4\r\nPING\r\n").await;
    assert!(c.try_reply(Duration::from_millis(200)).await.is_none());
    let mut ctl = Raw::connect(&s).await;
    assert_eq!(cmd!(ctl, "CLIENT", "SETINFO", "LIB-VER", "5.0"), b"+OK\r\n");
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "UNPAUSE"), b"+OK\r\n");
    assert_eq!(c.reply().await, b"+PONG\r\n");
}

#[tokio::test]
async fn a_bare_disconnect_spares_the_caller_and_other_control_connections() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    let mut ctl2 = Raw::connect(&s).await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    cmd!(ctl2, "RESPLOCK.CLOCK", "GET");
    cmd!(a, "PING");
    cmd!(b, "PING");
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "DISCONNECT"), b":2\r\n");
    assert!(a.closed(Duration::from_secs(5)).await);
    assert!(b.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(ctl, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(ctl2, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(ctl, "RESPLOCK.FAULT", "DISCONNECT", "ALL"), b":0\r\n");
    // Named, a control connection goes like any other.
    let id = cmd!(ctl2, "CLIENT", "ID");
    let id = std::str::from_utf8(&id[1..id.len() - 2])
        .unwrap()
        .to_string();
    assert_eq!(
        cmd!(ctl, "RESPLOCK.FAULT", "DISCONNECT", "ID", &id),
        b":1\r\n"
    );
    assert!(ctl2.closed(Duration::from_secs(5)).await);
}

#[tokio::test]
async fn an_injected_error_without_a_code_is_sent_with_err() {
    let s = test_server().await;
    let mut ctl = Raw::connect(&s).await;
    cmd!(ctl, "RESPLOCK.FAULT", "ERROR", "boom", "COMMAND", "get");
    cmd!(
        ctl,
        "RESPLOCK.FAULT",
        "ERROR",
        "READONLY not now",
        "COMMAND",
        "set"
    );
    assert_eq!(cmd!(ctl, "GET", "k"), b"-ERR boom\r\n");
    assert_eq!(cmd!(ctl, "SET", "k", "v"), b"-READONLY not now\r\n");
}

/// A HELP reply's lines, checked for Redis's shape: the header naming the command, then
/// pairs of a form and indented text, ending with HELP.
async fn help_lines(c: &mut Raw, args: &[&[u8]]) -> Vec<String> {
    let reply = c.cmd(args).await;
    let text = String::from_utf8(reply).unwrap();
    let mut lines = text.split("\r\n");
    let count: usize = lines.next().unwrap()[1..].parse().unwrap();
    let out: Vec<String> = lines
        .take(count)
        .map(|l| l.strip_prefix('+').expect("status lines").to_string())
        .collect();
    assert_eq!(out.len(), count);
    out
}

#[tokio::test]
async fn every_test_command_family_answers_help_in_redis_shape() {
    let s = test_server().await;
    let mut c = Raw::connect(&s).await;
    for name in [
        "RESPLOCK.CLOCK",
        "RESPLOCK.FAULT",
        "RESPLOCK.SNAPSHOT",
        "RESPLOCK.RESTART",
        "RESPLOCK.HISTORY",
        "RESPLOCK.FENCED.WRITE",
        "RESPLOCK.FENCED.READ",
        "RESPLOCK.CLUSTER",
    ] {
        let lines = help_lines(&mut c, &[name.as_bytes(), b"help"]).await;
        assert_eq!(
            lines[0],
            format!("{name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
        );
        assert_eq!(lines[lines.len() - 2], "HELP");
        assert_eq!(lines[lines.len() - 1], "    Prints this help.");
        assert!(lines[1..].iter().any(|l| l.starts_with("    ")));
    }
    let clock = help_lines(&mut c, &[b"resplock.clock", b"HELP"]).await;
    for form in ["GET", "ADVANCE <milliseconds>", "FREEZE", "RESUME", "RESET"] {
        assert!(clock.iter().any(|l| l == form), "{form} in {clock:?}");
    }
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "bad"),
        &b"-ERR unknown subcommand 'bad'. Try RESPLOCK.CLOCK HELP.\r\n"[..]
    );
    // HELP is not a snapshot name.
    assert_eq!(
        cmd!(c, "RESPLOCK.RESTART", "FROM", "help"),
        &b"-ERR no such snapshot\r\n"[..]
    );
}
