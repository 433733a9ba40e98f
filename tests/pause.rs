//! CLIENT PAUSE holds back what it covers until UNPAUSE or its end, counts the held clients as
//! blocked, and keeps the dataset constant meanwhile (expired keys read as missing but stay).

mod common;

use common::{server, Raw};
use std::time::Duration;

#[tokio::test]
async fn pause_write_holds_writes_until_unpause_and_lets_reads_through() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    admin.cmd(&[b"SET", b"k", b"v"]).await;
    assert_eq!(
        admin.cmd(&[b"CLIENT", b"PAUSE", b"100000", b"WRITE"]).await,
        b"+OK\r\n"
    );
    let mut w = Raw::connect(&s).await;
    w.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nw\r\n").await;
    assert!(w.try_reply(Duration::from_millis(200)).await.is_none());
    // Reads pass, and the held writer counts as blocked.
    assert_eq!(admin.cmd(&[b"GET", b"k"]).await, b"$1\r\nv\r\n");
    let info = admin.cmd(&[b"INFO", b"clients"]).await;
    assert!(String::from_utf8_lossy(&info).contains("blocked_clients:1\r\n"));
    admin.cmd(&[b"CLIENT", b"UNPAUSE"]).await;
    assert_eq!(w.reply().await, b"+OK\r\n");
    assert_eq!(admin.cmd(&[b"GET", b"k"]).await, b"$1\r\nw\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn pause_ends_by_itself_at_its_timeout() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    admin.cmd(&[b"CLIENT", b"PAUSE", b"100", b"ALL"]).await;
    let mut c = Raw::connect(&s).await;
    c.send(b"*1\r\n$4\r\nPING\r\n").await;
    assert_eq!(
        c.try_reply(Duration::from_secs(5)).await.as_deref(),
        Some(&b"+PONG\r\n"[..])
    );
    s.shutdown().await;
}

#[tokio::test]
async fn paused_server_keeps_expired_keys_until_unpause() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"SET", b"k", b"v", b"PX", b"10"]).await;
    c.cmd(&[b"CLIENT", b"PAUSE", b"100000", b"WRITE"]).await;
    s.state().clock.advance_ms(50);
    // Logically gone, physically kept: no expiry is counted while paused.
    assert_eq!(c.cmd(&[b"GET", b"k"]).await, b"$-1\r\n");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let info = c.cmd(&[b"INFO", b"stats"]).await;
    assert!(String::from_utf8_lossy(&info).contains("expired_keys:0\r\n"));
    c.cmd(&[b"CLIENT", b"UNPAUSE"]).await;
    assert_eq!(c.cmd(&[b"GET", b"k"]).await, b"$-1\r\n");
    let info = c.cmd(&[b"INFO", b"stats"]).await;
    assert!(String::from_utf8_lossy(&info).contains("expired_keys:1\r\n"));
    s.shutdown().await;
}
