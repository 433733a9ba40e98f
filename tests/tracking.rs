//! CLIENT TRACKING with redirection, which the conformance format cannot express (the target's
//! client id goes into the command): invalidations as `__redis__:invalidate` messages to a
//! RESP2 subscriber, as pushes to a RESP3 target, and the broken-redirect push once the target
//! is gone.

mod common;

use common::{server, Raw};
use std::time::Duration;

/// The client id a connection reports.
async fn id_of(c: &mut Raw) -> String {
    let r = c.cmd(&[b"CLIENT", b"ID"]).await;
    String::from_utf8(r)
        .unwrap()
        .trim_start_matches(':')
        .trim()
        .to_string()
}

#[tokio::test]
async fn resp2_redirect_target_gets_invalidate_messages_on_the_channel() {
    let s = server().await;
    let mut target = Raw::connect(&s).await;
    let id = id_of(&mut target).await;
    target.cmd(&[b"SUBSCRIBE", b"__redis__:invalidate"]).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        c.cmd(&[b"CLIENT", b"TRACKING", b"on", b"REDIRECT", id.as_bytes()])
            .await,
        b"+OK\r\n"
    );
    c.cmd(&[b"SET", b"a", b"1"]).await;
    c.cmd(&[b"SET", b"b", b"1"]).await;
    c.cmd(&[b"GET", b"a"]).await;
    // b was not read: no message for it; a was.
    c.cmd(&[b"INCR", b"b"]).await;
    c.cmd(&[b"INCR", b"a"]).await;
    assert_eq!(
        target.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\na\r\n"
    );
    assert_eq!(
        c.cmd(&[b"CLIENT", b"GETREDIR"]).await,
        format!(":{id}\r\n").as_bytes()
    );
    assert!(target.try_reply(Duration::from_millis(100)).await.is_none());
    s.shutdown().await;
}

#[tokio::test]
async fn resp3_redirect_target_gets_pushes() {
    let s = server().await;
    let mut target = Raw::connect(&s).await;
    let id = id_of(&mut target).await;
    target.cmd(&[b"HELLO", b"3"]).await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"CLIENT", b"TRACKING", b"on", b"REDIRECT", id.as_bytes()])
        .await;
    c.cmd(&[b"GET", b"k"]).await;
    let mut w = Raw::connect(&s).await;
    w.cmd(&[b"SET", b"k", b"v"]).await;
    assert_eq!(
        target.reply().await,
        b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn gone_redirect_target_is_reported_to_a_resp3_client() {
    let s = server().await;
    let mut target = Raw::connect(&s).await;
    let id = id_of(&mut target).await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"HELLO", b"3"]).await;
    c.cmd(&[b"CLIENT", b"TRACKING", b"on", b"REDIRECT", id.as_bytes()])
        .await;
    c.cmd(&[b"GET", b"k"]).await;
    drop(target);
    // The server forgets the target once it sees the close.
    let mut w = Raw::connect(&s).await;
    for _ in 0..100 {
        let list = w.cmd(&[b"CLIENT", b"LIST"]).await;
        if !String::from_utf8_lossy(&list).contains(&format!("id={id} ")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    w.cmd(&[b"SET", b"k", b"v"]).await;
    assert_eq!(
        c.reply().await,
        format!(">2\r\n$21\r\ntracking-redir-broken\r\n:{id}\r\n").as_bytes()
    );
    // TRACKINGINFO now says so, and CLIENT LIST shows the R flag.
    let info = c.cmd(&[b"CLIENT", b"TRACKINGINFO"]).await;
    assert!(String::from_utf8_lossy(&info).contains("broken_redirect"));
    let me = c.cmd(&[b"CLIENT", b"INFO"]).await;
    assert!(String::from_utf8_lossy(&me).contains(" flags=tR "));
    s.shutdown().await;
}

#[tokio::test]
async fn expired_keys_are_invalidated_for_broadcast_clients() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"HELLO", b"3"]).await;
    c.cmd(&[b"CLIENT", b"TRACKING", b"on", b"BCAST", b"NOLOOP"])
        .await;
    c.cmd(&[b"SET", b"mykey", b"v", b"PX", b"1"]).await;
    // Expired keys are reclaimed by the active cycle (no client involved, so NOLOOP does
    // not hide them); the broadcast goes out after the next command.
    s.state().clock.advance_ms(10);
    let mut w = Raw::connect(&s).await;
    let mut got = None;
    for _ in 0..50 {
        w.cmd(&[b"PING"]).await;
        if let Some(r) = c.try_reply(Duration::from_millis(50)).await {
            got = Some(r);
            break;
        }
    }
    assert_eq!(
        got.expect("an invalidation"),
        b">2\r\n$10\r\ninvalidate\r\n*1\r\n$5\r\nmykey\r\n"
    );
    s.shutdown().await;
}

/// An invalidation for the client whose own command caused it comes after that command's
/// reply, never inside it: also when the key is one its read found expired (Redis 7.0 defers
/// tracking messages for the current client).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalidation_a_read_of_an_expired_key_causes_follows_the_reply() {
    let s = common::server_with_args(&["--enable-debug-command", "yes"]).await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"HELLO", b"3"]).await;
    assert_eq!(
        c.cmd(&[b"DEBUG", b"SET-ACTIVE-EXPIRE", b"0"]).await,
        b"+OK\r\n"
    );
    assert_eq!(c.cmd(&[b"CLIENT", b"TRACKING", b"on"]).await, b"+OK\r\n");
    c.cmd(&[b"MSET", b"x", b"1", b"y", b"2"]).await;
    c.cmd(&[b"PEXPIRE", b"y", b"100"]).await;
    assert_eq!(c.cmd(&[b"GET", b"y"]).await, b"$1\r\n2\r\n");
    s.state().clock.advance_ms(200);
    assert_eq!(
        c.cmd(&[b"MGET", b"x", b"y"]).await,
        b"*2\r\n$1\r\n1\r\n_\r\n"
    );
    assert_eq!(
        c.reply().await,
        b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ny\r\n"
    );
    // Inside a transaction, after the whole EXEC reply.
    c.cmd(&[b"GET", b"x"]).await;
    c.cmd(&[b"MULTI"]).await;
    c.cmd(&[b"INCR", b"x"]).await;
    c.cmd(&[b"GET", b"x"]).await;
    assert_eq!(c.cmd(&[b"EXEC"]).await, b"*2\r\n:2\r\n$1\r\n2\r\n");
    assert_eq!(
        c.reply().await,
        b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nx\r\n"
    );
    s.shutdown().await;
}

/// The tracking table is kept within tracking-table-max-keys before each command, also after
/// the limit is lowered with CONFIG SET: the keys over it are invalidated for their readers.
#[tokio::test]
async fn keys_over_tracking_table_max_keys_are_invalidated_before_the_next_command() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"HELLO", b"3"]).await;
    c.cmd(&[b"CLIENT", b"TRACKING", b"on"]).await;
    for k in [&b"a"[..], b"b", b"c"] {
        assert_eq!(c.cmd(&[b"GET", k]).await, b"_\r\n");
    }
    let info = String::from_utf8(c.cmd(&[b"INFO", b"stats"]).await).unwrap();
    assert!(info.contains("tracking_total_keys:3\r\n"), "{info}");
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"tracking-table-max-keys", b"2"])
            .await,
        b"+OK\r\n"
    );
    // The CONFIG SET's own check ran before the new limit: the next command trims the table,
    // and the invalidation of the one key dropped comes before its reply.
    let reply = c.cmd(&[b"PING"]).await;
    let text = String::from_utf8(reply).unwrap();
    assert!(
        text.starts_with(">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\n"),
        "{text}"
    );
    assert_eq!(c.reply().await, b"+PONG\r\n");
    let info = String::from_utf8(c.cmd(&[b"INFO", b"stats"]).await).unwrap();
    assert!(info.contains("tracking_total_keys:2\r\n"), "{info}");
    s.shutdown().await;
}
