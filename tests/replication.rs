//! The replication commands of a master without replicas, beyond conformance/server_rest.case:
//! WAIT blocking for its timeout (on the virtual clock) or until CLIENT UNBLOCK. A master with
//! replicas (SYNC, PSYNC, a redis-server replica) is tests/replication_master.rs.

mod common;
use common::*;
use std::time::Duration;

fn int(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn wait_for_replicas_blocks_until_its_timeout_then_counts_none() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    c.send(b"WAIT 1 3600000\r\nPING\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert!(String::from_utf8(cmd!(admin, "CLIENT", "LIST"))
        .unwrap()
        .contains(" flags=b "));
    assert!(c.try_reply(Duration::from_millis(100)).await.is_none());
    s.state().clock.advance_ms(3_600_000 + 5);
    let r = c
        .try_reply(Duration::from_secs(5))
        .await
        .expect("timed out on the moved clock");
    assert_eq!(r, b":0\r\n");
    assert_eq!(c.reply().await, b"+PONG\r\n");
    assert_eq!(blocked_clients(&mut admin).await, 0);
    // Asked for no replica, WAIT answers at once.
    assert_eq!(cmd!(c, "WAIT", "0", "0"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn wait_forever_ends_with_client_unblock() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    let id = int(&cmd!(c, "CLIENT", "ID")).to_string();
    c.send(b"WAIT 3 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id), b":1\r\n");
    assert_eq!(c.reply().await, b":0\r\n");
    c.send(b"WAIT 1 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id, "ERROR"), b":1\r\n");
    assert_eq!(
        c.reply().await,
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    // A write elsewhere serves no WAIT: only time or CLIENT UNBLOCK end it.
    c.send(b"WAIT 1 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    cmd!(admin, "LPUSH", "k", "v");
    assert!(c.try_reply(Duration::from_millis(100)).await.is_none());
    drop(c);
    until_blocked(&mut admin, 0).await;
    s.shutdown().await;
}
