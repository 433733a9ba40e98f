//! Plain TCP clients are served by the workers' event loops and move to a task of their own
//! when they need one (`connection/event_loop.rs`): the ways in and out of a loop, on
//! runtimes of one and two workers (one loop per worker).

#[macro_use]
mod common;

use common::{request, Raw};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server whose TCP clients start in the event loops (off by default: `RESPLOCK_EVENT_LOOP=1`).
/// Every test of this file sets the same value, so setting it from several at once is benign.
async fn server() -> resplock::ServerHandle {
    std::env::set_var("RESPLOCK_EVENT_LOOP", "1");
    common::server().await
}

/// A mass insert sent in one go, in pieces cut at every kind of place (inside a header,
/// between CR and LF, inside an argument), while the replies are read at the same time: every
/// request is served once, in order. The loop reads a megabyte at a time and the pipeline
/// look-ahead sees requests cut anywhere; a cut between a header's CR and LF once panicked it.
async fn mass_insert_cut_anywhere() {
    let s = server().await;
    let n = 60_000usize;
    let mut all = Vec::new();
    for i in 0..n {
        let key = format!("key:{i}");
        all.extend_from_slice(&request(&[b"SET", key.as_bytes(), b"some value"]));
    }
    let stream = tokio::net::TcpStream::connect(s.local_addr())
        .await
        .unwrap();
    let (mut rd, mut wr) = stream.into_split();
    let writer = tokio::spawn(async move {
        let mut rng = fastrand::Rng::with_seed(11);
        let mut at = 0;
        while at < all.len() {
            let piece = rng.usize(1..200_000).min(all.len() - at);
            wr.write_all(&all[at..at + piece]).await.unwrap();
            at += piece;
        }
        wr
    });
    let want = b"+OK\r\n".repeat(n);
    let mut got = Vec::with_capacity(want.len());
    let read = async {
        while got.len() < want.len() {
            let mut chunk = vec![0u8; 65536];
            let k = rd.read(&mut chunk).await.unwrap();
            assert!(k > 0, "closed after {} bytes of replies", got.len());
            got.extend_from_slice(&chunk[..k]);
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("every reply within 30 s");
    assert!(got == want, "replies differ");
    let _wr = writer.await.unwrap();
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "DBSIZE"), format!(":{n}\r\n").as_bytes());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_mass_insert_cut_anywhere_is_served_whole_on_one_worker() {
    mass_insert_cut_anywhere().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mass_insert_cut_anywhere_is_served_whole_on_two_workers() {
    mass_insert_cut_anywhere().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_client_that_sends_its_last_request_and_closes_gets_its_reply_and_is_forgotten() {
    let s = server().await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
    for _ in 0..50 {
        let mut c = Raw::connect(&s).await;
        // The request and the close arrive together: the loop's read finds the bytes, and
        // the close only on the read after, which must still come.
        c.send(&request(&[b"SET", b"last", b"word"])).await;
        c.stream.shutdown().await.unwrap();
        assert_eq!(c.reply().await, b"+OK\r\n");
        assert!(c.closed(Duration::from_secs(5)).await);
    }
    let mut clients = 0;
    for _ in 0..100 {
        clients = s.state().clients.lock().len();
        if clients == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(clients, 1);
    assert_eq!(cmd!(other, "GET", "last"), b"$4\r\nword\r\n");
}

/// A client that blocks, one that starts a transaction and one that subscribes each move to
/// a task; each is served there as before, and the loop keeps serving the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_block_queue_or_subscribe_are_served_from_their_tasks() {
    let s = server().await;
    let mut blocked = Raw::connect(&s).await;
    let mut tx = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    let mut plain = Raw::connect(&s).await;
    for c in [&mut blocked, &mut tx, &mut sub, &mut plain] {
        assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    }
    blocked.send(&request(&[b"BLPOP", b"q", b"0"])).await;
    common::until_blocked(&mut plain, 1).await;
    assert_eq!(cmd!(tx, "MULTI"), b"+OK\r\n");
    assert_eq!(cmd!(tx, "INCR", "n"), b"+QUEUED\r\n");
    assert_eq!(
        cmd!(sub, "SUBSCRIBE", "ch"),
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    );
    assert_eq!(cmd!(plain, "RPUSH", "q", "x"), b":1\r\n");
    assert_eq!(blocked.reply().await, b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    assert_eq!(cmd!(tx, "EXEC"), b"*1\r\n:1\r\n");
    assert_eq!(cmd!(plain, "PUBLISH", "ch", "hi"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n"
    );
    // The ones that moved still serve ordinary requests.
    assert_eq!(cmd!(blocked, "GET", "n"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(tx, "GET", "n"), b"$1\r\n1\r\n");
}

/// A client that does not read its replies moves to a task with what the socket did not take,
/// and gets every reply, in order, once it reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_client_that_reads_late_gets_every_reply_in_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let value = "v".repeat(100_000);
    assert_eq!(cmd!(c, "SET", "big", &value), b"+OK\r\n");
    let n = 200;
    let mut pipeline = Vec::new();
    for _ in 0..n {
        pipeline.extend_from_slice(&request(&[b"GET", b"big"]));
    }
    pipeline.extend_from_slice(&request(&[b"PING"]));
    c.send(&pipeline).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let want = format!("${}\r\n{value}\r\n", value.len());
    for _ in 0..n {
        assert!(c.reply().await == want.as_bytes());
    }
    assert_eq!(c.reply().await, b"+PONG\r\n");
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
}
