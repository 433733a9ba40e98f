//! Bad and unusual input on the wire: every case answers as redis-server 7.0 does (bytes
//! recorded from it) and never hurts other clients.
mod common;
use common::*;
use std::time::Duration;

const CLOSE_WAIT: Duration = Duration::from_secs(2);

#[tokio::test]
async fn protocol_error_is_answered_then_connection_closed() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"PING\r\n*x\r\nPING\r\n").await;
    assert_eq!(c.reply().await, b"+PONG\r\n");
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: invalid multibulk length\r\n"
    );
    assert!(c.closed(CLOSE_WAIT).await);
}

#[tokio::test]
async fn non_bulk_argument_is_a_protocol_error() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"*1\r\n:1\r\n").await;
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: expected '$', got ':'\r\n"
    );
    assert!(c.closed(CLOSE_WAIT).await);
}

#[tokio::test]
async fn negative_and_oversized_bulk_lengths_are_rejected() {
    let s = server().await;
    for req in [&b"*1\r\n$-5\r\n"[..], b"*1\r\n$536870913\r\n"] {
        let mut c = Raw::connect(&s).await;
        c.send(req).await;
        assert_eq!(
            c.reply().await,
            b"-ERR Protocol error: invalid bulk length\r\n"
        );
        assert!(c.closed(CLOSE_WAIT).await);
    }
}

#[tokio::test]
async fn overlong_inline_request_and_count_lines_are_rejected() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(&vec![b'x'; 70_000]).await;
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: too big inline request\r\n"
    );
    assert!(c.closed(CLOSE_WAIT).await);

    let mut c = Raw::connect(&s).await;
    let mut req = b"*1\r\n$4\r\nPING\r\n*1\r\n".to_vec();
    req.extend(vec![b'9'; 70_000]);
    c.send(&req).await;
    assert_eq!(c.reply().await, b"+PONG\r\n");
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: too big bulk count string\r\n"
    );

    let mut c = Raw::connect(&s).await;
    let mut req = b"*".to_vec();
    req.extend(vec![b'9'; 70_000]);
    c.send(&req).await;
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: too big mbulk count string\r\n"
    );
}

#[tokio::test]
async fn unbalanced_quotes_in_inline_request_close_the_connection() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"set k \"a\"b\r\n").await;
    assert_eq!(
        c.reply().await,
        b"-ERR Protocol error: unbalanced quotes in request\r\n"
    );
    assert!(c.closed(CLOSE_WAIT).await);
}

#[tokio::test]
async fn inline_commands_work_like_redis_cli_over_telnet() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"SET greeting \"hello world\\x21\"\r\nGET greeting\nEXISTS\r\n\r\n")
        .await;
    assert_eq!(c.reply().await, b"+OK\r\n");
    assert_eq!(c.reply().await, b"$12\r\nhello world!\r\n");
    assert_eq!(
        c.reply().await,
        b"-ERR wrong number of arguments for 'exists' command\r\n"
    );
    c.send(b"$3\r\n").await;
    assert_eq!(
        c.reply().await,
        b"-ERR unknown command '$3', with args beginning with: \r\n"
    );
}

#[tokio::test]
async fn empty_multibulk_requests_are_skipped_silently() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"*0\r\n*-1\r\nPING\r\n").await;
    assert_eq!(c.reply().await, b"+PONG\r\n");
}

#[tokio::test]
async fn bulk_trailer_is_not_checked_like_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"*1\r\n$4\r\nPINGxx").await;
    assert_eq!(c.reply().await, b"+PONG\r\n");
}

#[tokio::test]
async fn unknown_command_lists_its_first_arguments() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "FOO", "a", "b c"),
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b c' \r\n"
    );
    assert_eq!(
        cmd!(c, "foo\r\nbar"),
        b"-ERR unknown command 'foo  bar', with args beginning with: \r\n"
    );
}

#[tokio::test]
async fn frame_split_byte_by_byte_still_parses() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let req = b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n";
    for b in req.iter() {
        c.send(&[*b]).await;
        tokio::task::yield_now().await;
    }
    assert_eq!(c.reply().await, b"+OK\r\n");
    assert_eq!(c.reply().await, b"$5\r\nvalue\r\n");
}

#[tokio::test]
async fn pipelined_replies_come_back_in_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut req = Vec::new();
    for i in 0..1000 {
        req.extend_from_slice(
            format!("*2\r\n$4\r\nECHO\r\n${}\r\n{}\r\n", i.to_string().len(), i).as_bytes(),
        );
    }
    c.send(&req).await;
    for i in 0..1000 {
        let want = format!("${}\r\n{}\r\n", i.to_string().len(), i);
        assert_eq!(c.reply().await, want.as_bytes());
    }
}

#[tokio::test]
async fn declared_500mb_bulk_that_never_arrives_allocates_nothing_and_others_are_served() {
    let s = server().await;
    let before = rss_bytes();
    let mut hog = Raw::connect(&s).await;
    hog.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$500000000\r\n")
        .await;
    hog.send(&[b'a'; 4096]).await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(other, "SET", "k", "v"), b"+OK\r\n");
    let grown = rss_bytes().saturating_sub(before);
    assert!(grown < 64 * 1024 * 1024, "RSS grew by {grown} bytes");
    drop(hog);
    assert_eq!(cmd!(other, "GET", "k"), b"$1\r\nv\r\n");
}

#[tokio::test]
async fn garbage_bytes_never_hurt_the_server() {
    let s = server().await;
    let mut rng = fastrand::Rng::with_seed(7);
    for _ in 0..50 {
        let mut c = Raw::connect(&s).await;
        let junk: Vec<u8> = (0..rng.usize(1..2048)).map(|_| rng.u8(..)).collect();
        c.send(&junk).await;
        // Whatever it answers, the connection is eventually dropped by us; others carry on.
        let _ = c.try_reply(Duration::from_millis(20)).await;
    }
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
}

#[tokio::test]
async fn nul_byte_in_inline_request_waits_for_more_like_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    c.send(b"\x00\x01garbage\xff\r\n").await;
    assert_eq!(c.try_reply(Duration::from_millis(200)).await, None);
}

#[tokio::test]
async fn client_vanishing_mid_command_leaves_no_trace() {
    let s = server().await;
    {
        let mut c = Raw::connect(&s).await;
        c.send(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$10\r\nabc").await;
    }
    let mut c = Raw::connect(&s).await;
    // Bounded wait for the server to notice the vanished client.
    for _ in 0..100 {
        if s.state().clients.lock().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.state().clients.lock().len(), 1);
    assert_eq!(cmd!(c, "EXISTS", "half"), b":0\r\n");
}

#[tokio::test]
async fn thousand_connections_opened_and_dropped() {
    let s = server().await;
    for _ in 0..5 {
        let mut conns = Vec::new();
        for _ in 0..200 {
            conns.push(
                tokio::net::TcpStream::connect(s.local_addr())
                    .await
                    .unwrap(),
            );
        }
        drop(conns);
    }
    let mut c = Raw::connect(&s).await;
    for _ in 0..300 {
        if s.state().clients.lock().len() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.state().clients.lock().len(), 1);
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn maxclients_rejects_with_redis_error() {
    let s = server_with(resplock::Config {
        maxclients: 2,
        ..resplock::Config::ephemeral()
    })
    .await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    assert_eq!(cmd!(a, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(b, "PING"), b"+PONG\r\n");
    let mut c = Raw::connect(&s).await;
    assert_eq!(c.reply().await, b"-ERR max number of clients reached\r\n");
}

#[tokio::test]
async fn shutdown_closes_connections_promptly() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    tokio::time::timeout(Duration::from_secs(5), s.shutdown())
        .await
        .expect("shutdown returns promptly");
    assert!(c.closed(CLOSE_WAIT).await);
}
