//! A million subscribe/unsubscribe cycles, in a test binary of its own: it checks the process's
//! RSS, which tests running beside it in one binary (the slow-subscriber test sends 200 MB)
//! would disturb.
mod common;
use common::*;
use std::time::{Duration, Instant};

/// Issue 5: no leak after a million subscribe/unsubscribe cycles. Fixed-width channel names
/// make every confirmation a known size, so the replies are counted by bytes, not parsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_subscribe_unsubscribe_cycles_leave_nothing_behind() {
    use tokio::io::AsyncReadExt;
    const CYCLES: usize = 1_000_000;
    const BATCH: usize = 5_000;
    // "*3\r\n$9\r\nsubscribe\r\n$8\r\nNNNNNNNN\r\n:1\r\n" + "*3\r\n$11\r\nunsubscribe\r\n$8\r\nNNNNNNNN\r\n:0\r\n"
    const REPLY_BYTES: usize = 37 + 40;
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    let started = Instant::now();
    let mut before = 0;
    let mut buf = vec![0u8; 1 << 20];
    for batch in 0..CYCLES / BATCH {
        let mut req = Vec::with_capacity(BATCH * 80);
        for i in 0..BATCH {
            let name = format!("{:08}", batch * BATCH + i);
            req.extend_from_slice(b"*2\r\n$9\r\nSUBSCRIBE\r\n$8\r\n");
            req.extend_from_slice(name.as_bytes());
            req.extend_from_slice(b"\r\n*2\r\n$11\r\nUNSUBSCRIBE\r\n$8\r\n");
            req.extend_from_slice(name.as_bytes());
            req.extend_from_slice(b"\r\n");
        }
        // Write the batch (5k cycles, ~350 KB, well within loopback socket buffers), then read
        // exactly its replies.
        sub.send(&req).await;
        let mut left = BATCH * REPLY_BYTES;
        while left > 0 {
            let want = left.min(buf.len());
            let n =
                tokio::time::timeout(Duration::from_secs(30), sub.stream.read(&mut buf[..want]))
                    .await
                    .expect("replies keep coming")
                    .expect("read");
            assert!(n > 0, "server closed the connection");
            left -= n;
        }
        if batch == 0 {
            before = rss_bytes();
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "bounded in time"
        );
    }
    assert_eq!(s.state().pubsub.subscriptions(), 0);
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "PUBSUB", "NUMSUB", "00000000", "00999999"),
        b"*4\r\n$8\r\n00000000\r\n:0\r\n$8\r\n00999999\r\n:0\r\n"
    );
    assert_eq!(cmd!(c, "PUBSUB", "CHANNELS"), b"*0\r\n");
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < 32 * 1024 * 1024,
        "RSS grew by {grown} bytes over a million cycles"
    );
}
