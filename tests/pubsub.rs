//! Pub/sub: frames byte for byte as redis-server 7.0.15 sends them (RESP2 and RESP3), the
//! Redisson lock-waiter pattern, slow and vanished subscribers, keyspace notifications.
mod common;
use common::*;
use resplock::Config;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Serializes the CPU-heavy tests of this file (a flood, a busy script): on a small machine
/// running them side by side starves the subscriber that must keep up with the flood.
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Nothing more arrives within a short wait.
async fn quiet(c: &mut Raw) {
    assert_eq!(c.try_reply(Duration::from_millis(100)).await, None);
}

#[tokio::test]
async fn subscribe_confirmations_and_messages_are_byte_exact_in_resp2() {
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    let mut publ = Raw::connect(&s).await;
    assert_eq!(
        cmd!(sub, "SUBSCRIBE", "ch1", "ch2", "ch1"),
        b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch2\r\n:2\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:2\r\n"
    );
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "c*", "h?"),
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:3\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\nh?\r\n:4\r\n"
    );
    // Shard channels are counted apart from channels and patterns.
    assert_eq!(
        cmd!(sub, "SSUBSCRIBE", "s1", "s2"),
        b"*3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$10\r\nssubscribe\r\n$2\r\ns2\r\n:2\r\n"
    );

    assert_eq!(cmd!(publ, "PUBLISH", "ch1", "hello"), b":2\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$3\r\nch1\r\n$5\r\nhello\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$3\r\nch1\r\n$5\r\nhello\r\n"
    );
    assert_eq!(cmd!(publ, "SPUBLISH", "s1", "hello"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$5\r\nhello\r\n"
    );
    assert_eq!(cmd!(publ, "PUBLISH", "nobody", "x"), b":0\r\n");
    quiet(&mut sub).await;

    assert_eq!(
        cmd!(sub, "UNSUBSCRIBE", "ch1", "zz"),
        b"*3\r\n$11\r\nunsubscribe\r\n$3\r\nch1\r\n:3\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nzz\r\n:3\r\n"
    );
    assert_eq!(
        cmd!(sub, "UNSUBSCRIBE"),
        b"*3\r\n$11\r\nunsubscribe\r\n$3\r\nch2\r\n:2\r\n"
    );
    // Patterns are unsubscribed in subscription order, as Redis's pattern list.
    assert_eq!(
        cmd!(sub, "PUNSUBSCRIBE"),
        b"*3\r\n$12\r\npunsubscribe\r\n$2\r\nc*\r\n:1\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$12\r\npunsubscribe\r\n$2\r\nh?\r\n:0\r\n"
    );
    // Still in subscribed mode: a shard channel is left.
    assert_eq!(
        cmd!(sub, "GET", "x"),
        &b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"[..]
    );
    assert_eq!(
        cmd!(sub, "SUNSUBSCRIBE", "s2", "s1"),
        b"*3\r\n$12\r\nsunsubscribe\r\n$2\r\ns2\r\n:1\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$12\r\nsunsubscribe\r\n$2\r\ns1\r\n:0\r\n"
    );
    assert_eq!(cmd!(sub, "GET", "x"), b"$-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn unsubscribe_without_subscriptions_replies_with_a_nil_channel() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "UNSUBSCRIBE"),
        b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    );
    assert_eq!(
        cmd!(c, "PUNSUBSCRIBE"),
        b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n"
    );
    assert_eq!(
        cmd!(c, "SUNSUBSCRIBE"),
        b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n"
    );
    assert_eq!(
        cmd!(c, "UNSUBSCRIBE", "x", "y"),
        b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:0\r\n"
    );
    assert_eq!(
        c.reply().await,
        b"*3\r\n$11\r\nunsubscribe\r\n$1\r\ny\r\n:0\r\n"
    );
    // With only a pattern, the nil-channel frame carries the pattern count.
    assert_eq!(
        cmd!(c, "PSUBSCRIBE", "p*"),
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:1\r\n"
    );
    assert_eq!(
        cmd!(c, "UNSUBSCRIBE"),
        b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n"
    );
    // HELLO is refused in RESP2 subscribed mode, as in Redis: leave it first.
    assert_eq!(
        cmd!(c, "PUNSUBSCRIBE"),
        b"*3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:0\r\n"
    );
    assert_eq!(cmd!(c, "HELLO", "3")[0], b'%');
    assert_eq!(
        cmd!(c, "UNSUBSCRIBE"),
        b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"
    );
    assert_eq!(
        cmd!(c, "PUNSUBSCRIBE"),
        b">3\r\n$12\r\npunsubscribe\r\n_\r\n:0\r\n"
    );
    assert_eq!(
        cmd!(c, "SUNSUBSCRIBE"),
        b">3\r\n$12\r\nsunsubscribe\r\n_\r\n:0\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn resp2_subscribed_mode_allows_only_pubsub_ping_quit_and_reset() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SUBSCRIBE", "a");
    assert_eq!(
        cmd!(c, "GET", "x"),
        &b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CLIENT", "ID"),
        &b"-ERR Can't execute 'client|id': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBLISH", "a", "x"),
        &b"-ERR Can't execute 'publish': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"[..]
    );
    // Unknown commands and arity errors come first, as in Redis.
    assert_eq!(
        cmd!(c, "SUBSCRIBE"),
        &b"-ERR wrong number of arguments for 'subscribe' command\r\n"[..]
    );
    assert_eq!(cmd!(c, "PING"), b"*2\r\n$4\r\npong\r\n$0\r\n\r\n");
    assert_eq!(cmd!(c, "PING", "hi"), b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n");
    assert_eq!(cmd!(c, "QUIT"), b"+OK\r\n");
    assert!(c.closed(Duration::from_secs(2)).await);
    s.shutdown().await;
}

#[tokio::test]
async fn resp3_subscriptions_are_push_frames_and_commands_keep_working() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "HELLO", "3")[0], b'%');
    assert_eq!(
        cmd!(c, "SUBSCRIBE", "ch1", "ch2"),
        b">3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n"
    );
    assert_eq!(
        c.reply().await,
        b">3\r\n$9\r\nsubscribe\r\n$3\r\nch2\r\n:2\r\n"
    );
    assert_eq!(cmd!(c, "GET", "x"), b"_\r\n");
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(c, "PING", "x"), b"$1\r\nx\r\n");
    assert_eq!(
        cmd!(c, "PSUBSCRIBE", "c*"),
        b">3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:3\r\n"
    );
    assert_eq!(
        cmd!(c, "SSUBSCRIBE", "s1"),
        b">3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n"
    );
    // Publishing to itself: the messages come before the PUBLISH reply, as in Redis.
    assert_eq!(
        cmd!(c, "PUBLISH", "ch2", "self"),
        b">3\r\n$7\r\nmessage\r\n$3\r\nch2\r\n$4\r\nself\r\n"
    );
    assert_eq!(
        c.reply().await,
        b">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$3\r\nch2\r\n$4\r\nself\r\n"
    );
    assert_eq!(c.reply().await, b":2\r\n");
    let mut p = Raw::connect(&s).await;
    assert_eq!(cmd!(p, "SPUBLISH", "s1", "hello"), b":1\r\n");
    assert_eq!(
        c.reply().await,
        b">3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$5\r\nhello\r\n"
    );
    assert_eq!(
        cmd!(c, "PUBSUB", "NUMSUB", "ch1"),
        b"*2\r\n$3\r\nch1\r\n:1\r\n"
    );
    assert_eq!(
        cmd!(c, "UNSUBSCRIBE", "ch1", "zz"),
        b">3\r\n$11\r\nunsubscribe\r\n$3\r\nch1\r\n:2\r\n"
    );
    assert_eq!(
        c.reply().await,
        b">3\r\n$11\r\nunsubscribe\r\n$2\r\nzz\r\n:2\r\n"
    );
    // Back to RESP2 while subscribed: the context rule applies again.
    assert_eq!(cmd!(c, "HELLO", "2")[0], b'*');
    assert_eq!(
        cmd!(c, "GET", "x"),
        &b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn publish_counts_channel_subscribers_and_matching_pattern_subscriptions() {
    let s = server().await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    let mut p = Raw::connect(&s).await;
    cmd!(a, "SUBSCRIBE", "news.it");
    cmd!(a, "PSUBSCRIBE", "news.*");
    cmd!(a, "PSUBSCRIBE", "*.it");
    cmd!(b, "PSUBSCRIBE", "news.*");
    // a: channel + 2 patterns, b: 1 pattern.
    assert_eq!(cmd!(p, "PUBLISH", "news.it", "m"), b":4\r\n");
    assert_eq!(cmd!(p, "PUBLISH", "news.fr", "m"), b":2\r\n");
    assert_eq!(cmd!(p, "PUBSUB", "NUMPAT"), b":2\r\n");
    assert_eq!(
        b.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$7\r\nnews.it\r\n$1\r\nm\r\n"
    );
    assert_eq!(
        b.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$6\r\nnews.*\r\n$7\r\nnews.fr\r\n$1\r\nm\r\n"
    );
    // The empty channel matches no non-empty pattern, only the empty one.
    assert_eq!(cmd!(p, "PUBLISH", "", "m"), b":0\r\n");
    assert_eq!(
        cmd!(b, "PSUBSCRIBE", ""),
        b"*3\r\n$10\r\npsubscribe\r\n$0\r\n\r\n:2\r\n"
    );
    assert_eq!(cmd!(p, "PUBLISH", "", "m"), b":1\r\n");
    assert_eq!(
        b.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$0\r\n\r\n$0\r\n\r\n$1\r\nm\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn channel_names_and_messages_are_binary_safe() {
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    let mut p = Raw::connect(&s).await;
    let ch: &[u8] = b"a\0b\r\n\xff";
    assert_eq!(
        sub.cmd(&[b"SUBSCRIBE", ch]).await,
        b"*3\r\n$9\r\nsubscribe\r\n$6\r\na\0b\r\n\xff\r\n:1\r\n"
    );
    assert_eq!(p.cmd(&[b"PUBLISH", ch, b"\0\r\n"]).await, b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$6\r\na\0b\r\n\xff\r\n$3\r\n\0\r\n\r\n"
    );
    assert_eq!(
        p.cmd(&[b"PUBSUB", b"NUMSUB", ch]).await,
        b"*2\r\n$6\r\na\0b\r\n\xff\r\n:1\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn pubsub_introspection_matches_redis() {
    let s = server().await;
    let mut a = Raw::connect(&s).await;
    let mut b = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PUBSUB", "CHANNELS"), b"*0\r\n");
    cmd!(a, "SUBSCRIBE", "ch1");
    cmd!(b, "SUBSCRIBE", "ch1");
    cmd!(b, "SUBSCRIBE", "other");
    cmd!(a, "PSUBSCRIBE", "x*");
    cmd!(b, "PSUBSCRIBE", "x*");
    cmd!(a, "SSUBSCRIBE", "s1");
    assert_eq!(cmd!(c, "PUBSUB", "CHANNELS", "ch*"), b"*1\r\n$3\r\nch1\r\n");
    assert_eq!(cmd!(c, "pubsub", "channels")[..4], b"*2\r\n"[..]);
    assert_eq!(
        cmd!(c, "PUBSUB", "NUMSUB", "ch1", "zz"),
        b"*4\r\n$3\r\nch1\r\n:2\r\n$2\r\nzz\r\n:0\r\n"
    );
    assert_eq!(cmd!(c, "PUBSUB", "NUMSUB"), b"*0\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "NUMPAT"), b":1\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "SHARDCHANNELS"), b"*1\r\n$2\r\ns1\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "SHARDCHANNELS", "z*"), b"*0\r\n");
    assert_eq!(
        cmd!(c, "PUBSUB", "SHARDNUMSUB", "s1", "x"),
        b"*4\r\n$2\r\ns1\r\n:1\r\n$1\r\nx\r\n:0\r\n"
    );
    assert_eq!(cmd!(c, "PUBSUB", "SHARDNUMSUB"), b"*0\r\n");
    assert_eq!(
        cmd!(c, "PUBSUB", "HELP"),
        &b"*14\r\n+PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CHANNELS [<pattern>]\r\n+    Return the currently active channels matching a <pattern> (default: '*').\r\n+NUMPAT\r\n+    Return number of subscriptions to patterns.\r\n+NUMSUB [<channel> ...]\r\n+    Return the number of subscribers for the specified channels, excluding\r\n+    pattern subscriptions(default: no channels).\r\n+SHARDCHANNELS [<pattern>]\r\n+    Return the currently active shard level channels matching a <pattern> (default: '*').\r\n+SHARDNUMSUB [<shardchannel> ...]\r\n+    Return the number of subscribers for the specified shard level channel(s)\r\n+HELP\r\n+    Prints this help.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBSUB", "foo"),
        &b"-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBSUB"),
        &b"-ERR wrong number of arguments for 'pubsub' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBSUB", "NUMPAT", "x"),
        &b"-ERR wrong number of arguments for 'pubsub|numpat' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBSUB", "help", "x"),
        &b"-ERR wrong number of arguments for 'pubsub|help' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBSUB", "CHANNELS", "a", "b"),
        &b"-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "pubsub", "shardchannels", "a", "b"),
        &b"-ERR unknown subcommand or wrong number of arguments for 'shardchannels'. Try PUBSUB HELP.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "PUBLISH", "x"),
        &b"-ERR wrong number of arguments for 'publish' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "SPUBLISH", "x"),
        &b"-ERR wrong number of arguments for 'spublish' command\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn vanished_subscriber_is_removed_everywhere_and_cycles_leave_nothing() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    {
        let mut gone = Raw::connect(&s).await;
        cmd!(gone, "SUBSCRIBE", "a", "b");
        gone.reply().await;
        cmd!(gone, "PSUBSCRIBE", "p*");
        cmd!(gone, "SSUBSCRIBE", "s");
        assert_eq!(cmd!(c, "PUBLISH", "a", "x"), b":1\r\n");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while cmd!(c, "PUBSUB", "NUMPAT") != b":0\r\n" && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(cmd!(c, "PUBSUB", "CHANNELS"), b"*0\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "SHARDCHANNELS"), b"*0\r\n");
    assert_eq!(cmd!(c, "PUBLISH", "a", "x"), b":0\r\n");

    // Many subscribe/unsubscribe cycles on distinct names: the registry drops empty entries.
    let mut sub = Raw::connect(&s).await;
    let mut pipeline = Vec::new();
    for i in 0..2000 {
        let ch = format!("chan:{i}");
        let pat = format!("pat:{i}*");
        pipeline.extend(common::request(&[b"SUBSCRIBE", ch.as_bytes()]));
        pipeline.extend(common::request(&[b"PSUBSCRIBE", pat.as_bytes()]));
        pipeline.extend(common::request(&[b"SSUBSCRIBE", ch.as_bytes()]));
        pipeline.extend(common::request(&[b"UNSUBSCRIBE", ch.as_bytes()]));
        pipeline.extend(common::request(&[b"PUNSUBSCRIBE", pat.as_bytes()]));
        pipeline.extend(common::request(&[b"SUNSUBSCRIBE", ch.as_bytes()]));
    }
    sub.send(&pipeline).await;
    for _ in 0..2000 * 6 {
        sub.reply().await;
    }
    assert_eq!(cmd!(sub, "GET", "x"), b"$-1\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "CHANNELS"), b"*0\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "SHARDCHANNELS"), b"*0\r\n");
    assert_eq!(cmd!(c, "PUBSUB", "NUMPAT"), b":0\r\n");
    assert_eq!(s.state().pubsub.subscriptions(), 0);
    s.shutdown().await;
}

fn lock_attempt_req() -> Vec<u8> {
    common::request(&[b"SET", b"order-42", b"uuid-b:1", b"NX", b"PX", b"30000"])
}

/// One client holds a Redisson-style lock hash; a waiter subscribes to the lock's channel,
/// the holder deletes the lock and publishes the unlock message, the waiter wakes and takes
/// the lock with SET NX.
async fn redisson_waiter(resp3: bool) {
    let s = server().await;
    let channel = "redisson_lock__channel:{order-42}";
    let mut holder = Raw::connect(&s).await;
    let mut waiter = Raw::connect(&s).await;
    assert_eq!(cmd!(holder, "HSET", "order-42", "uuid-a:1", "1"), b":1\r\n");
    assert_eq!(cmd!(holder, "PEXPIRE", "order-42", "30000"), b":1\r\n");
    let mut taker = if resp3 {
        assert_eq!(cmd!(waiter, "HELLO", "3")[0], b'%');
        None
    } else {
        Some(Raw::connect(&s).await)
    };
    let confirm = format!(
        "{}3\r\n$9\r\nsubscribe\r\n${}\r\n{}\r\n:1\r\n",
        if resp3 { '>' } else { '*' },
        channel.len(),
        channel
    );
    assert_eq!(cmd!(waiter, "SUBSCRIBE", channel), confirm.as_bytes());
    // The lock is held: a first attempt fails.
    {
        let c = taker.as_mut().unwrap_or(&mut waiter);
        c.send(&lock_attempt_req()).await;
        assert_eq!(
            c.reply().await,
            if resp3 { &b"_\r\n"[..] } else { b"$-1\r\n" }
        );
    }
    let started = Instant::now();
    assert_eq!(cmd!(holder, "DEL", "order-42"), b":1\r\n");
    assert_eq!(cmd!(holder, "PUBLISH", channel, "0"), b":1\r\n");
    let msg = waiter
        .try_reply(Duration::from_secs(2))
        .await
        .expect("the waiter wakes within 2 s");
    let expected = format!(
        "{}3\r\n$7\r\nmessage\r\n${}\r\n{}\r\n$1\r\n0\r\n",
        if resp3 { '>' } else { '*' },
        channel.len(),
        channel
    );
    assert_eq!(msg, expected.as_bytes());
    {
        let c = taker.as_mut().unwrap_or(&mut waiter);
        c.send(&lock_attempt_req()).await;
        assert_eq!(c.reply().await, b"+OK\r\n");
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(cmd!(holder, "GET", "order-42"), b"$8\r\nuuid-b:1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn redisson_waiter_wakes_on_unlock_message_and_takes_the_lock() {
    redisson_waiter(false).await;
}

#[tokio::test]
async fn redisson_waiter_on_resp3_gets_push_frames_and_locks_on_the_same_connection() {
    redisson_waiter(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_subscriber_is_disconnected_and_memory_stays_bounded() {
    const PUBLISHERS: usize = 3;
    const PER_PUBLISHER: usize = 1067;
    const SIZE: usize = 64 * 1024; // 3 x 1067 x 64 KiB = 200 MiB published
    let _heavy = HEAVY.lock().await;
    // Publishers wait for each reply, as ordinary clients do, and pause 1 ms every PACE
    // messages: at most a few hundred MiB/s, so the reading subscriber can be descheduled for
    // ~100 ms on a busy machine without falling 32 MiB behind. (Unpaced publishers pipelining
    // 64 KiB messages outrun any single reader: redis-server 7.0.15 then disconnects the
    // reading subscriber too, by the same limit.)
    const BATCH: usize = 1;
    const PACE: usize = 4;
    let s = server().await;
    let start_rss = rss_bytes();

    // A subscriber that never reads after its confirmation.
    let mut slow = Raw::connect(&s).await;
    cmd!(slow, "SUBSCRIBE", "firehose");

    // A subscriber that reads everything and counts bytes.
    let mut reader = TcpStream::connect(s.local_addr()).await.unwrap();
    reader
        .write_all(&common::request(&[b"SUBSCRIBE", b"firehose"]))
        .await
        .unwrap();
    let confirm = b"*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n";
    let mut head = vec![0u8; confirm.len()];
    reader.read_exact(&mut head).await.unwrap();
    assert_eq!(head, confirm);
    let frame_len = b"*3\r\n$7\r\nmessage\r\n$8\r\nfirehose\r\n".len()
        + format!("${SIZE}\r\n").len()
        + SIZE
        + 2;
    let total = (PUBLISHERS * PER_PUBLISHER * frame_len) as u64;
    let received = Arc::new(AtomicU64::new(0));
    let reading = {
        let received = received.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 256 * 1024];
            let mut first = Vec::new();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
            while received.load(Ordering::Relaxed) < total {
                match tokio::time::timeout_at(deadline, reader.read(&mut buf)).await {
                    Ok(Ok(n)) if n > 0 => {
                        if first.len() < 64 {
                            first.extend_from_slice(&buf[..n.min(64)]);
                        }
                        received.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    _ => break,
                }
            }
            (first, reader)
        })
    };

    // Sample the process RSS while publishing.
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(start_rss));
    let sampler = {
        let (done, peak) = (done.clone(), peak.clone());
        tokio::spawn(async move {
            for _ in 0..20_000 {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                peak.fetch_max(rss_bytes(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };

    let began = Instant::now();
    let mut pubs = Vec::new();
    for p in 0..PUBLISHERS {
        let addr = s.local_addr();
        pubs.push(tokio::spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            let payload = vec![b'a' + p as u8; SIZE];
            let one = common::request(&[b"PUBLISH", b"firehose", &payload]);
            let mut batch = Vec::with_capacity(one.len() * BATCH);
            for _ in 0..BATCH {
                batch.extend_from_slice(&one);
            }
            let mut receivers = Vec::new();
            let mut rbuf = Vec::new();
            for i in 0..PER_PUBLISHER / BATCH {
                if i % PACE == PACE - 1 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                c.write_all(&batch).await.unwrap();
                let mut got = 0;
                while got < BATCH {
                    let mut chunk = [0u8; 256];
                    let n = c.read(&mut chunk).await.unwrap();
                    assert!(n > 0, "publisher connection closed");
                    rbuf.extend_from_slice(&chunk[..n]);
                    while let Some(pos) = rbuf.windows(2).position(|w| w == b"\r\n") {
                        let line: Vec<u8> = rbuf.drain(..pos + 2).collect();
                        receivers.push(line);
                        got += 1;
                    }
                }
            }
            receivers
        }));
    }
    let mut replies = Vec::new();
    for p in pubs {
        replies.extend(p.await.unwrap());
    }
    let publish_secs = began.elapsed().as_secs_f64();
    assert_eq!(replies.len(), PUBLISHERS * PER_PUBLISHER);
    let odd: Vec<String> = replies
        .iter()
        .filter(|r| *r != b":2\r\n" && *r != b":1\r\n")
        .take(3)
        .map(|r| String::from_utf8_lossy(r).into_owned())
        .collect();
    assert!(odd.is_empty(), "unexpected PUBLISH replies {odd:?}");
    // The slow subscriber was dropped along the way.
    assert_eq!(replies.last().unwrap(), b":1\r\n");

    let (first, _reader) = reading.await.unwrap();
    done.store(true, Ordering::Relaxed);
    sampler.await.unwrap();
    assert_eq!(
        received.load(Ordering::Relaxed),
        total,
        "the reader got every message"
    );
    assert!(first.starts_with(b"*3\r\n$7\r\nmessage\r\n$8\r\nfirehose\r\n$65536\r\n"));
    let grown = peak.load(Ordering::Relaxed).saturating_sub(start_rss);
    eprintln!(
        "published 200 MiB from {PUBLISHERS} publishers in {publish_secs:.2} s ({:.0} MiB/s); peak RSS growth {} MiB",
        (PUBLISHERS * PER_PUBLISHER * SIZE) as f64 / (1 << 20) as f64 / publish_secs,
        grown / (1024 * 1024)
    );
    assert!(grown < 100 * 1024 * 1024, "RSS grew by {grown} bytes");

    // The slow subscriber's connection is closed: what the kernel buffered, then EOF.
    let mut buf = vec![0u8; 1 << 20];
    let mut eof = false;
    for _ in 0..10_000 {
        match tokio::time::timeout(Duration::from_secs(5), slow.stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                eof = true;
                break;
            }
            Ok(Ok(_)) => {}
            Err(_) => break,
        }
    }
    assert!(eof, "the slow subscriber was disconnected");
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "PUBSUB", "NUMSUB", "firehose"),
        b"*2\r\n$8\r\nfirehose\r\n:1\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn soft_output_buffer_limit_closes_a_subscriber_over_it_for_too_long() {
    let _heavy = HEAVY.lock().await;
    let s = server().await;
    s.state().config.write().client_output_buffer_limit =
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 0 1mb 60".into();
    let mut slow = Raw::connect(&s).await;
    cmd!(slow, "SUBSCRIBE", "c");
    let mut p = Raw::connect(&s).await;
    let payload = vec![b'x'; 1 << 20];
    // Fill the socket buffers and then 1 MiB+ of backlog: over the soft limit, not for long.
    for _ in 0..32 {
        assert_eq!(p.cmd(&[b"PUBLISH", b"c", &payload]).await, b":1\r\n");
    }
    s.state().clock.advance_ms(61_000);
    assert_eq!(p.cmd(&[b"PUBLISH", b"c", b"x"]).await, b":1\r\n");
    s.state().clock.advance_ms(1_000);
    assert_eq!(p.cmd(&[b"PUBLISH", b"c", b"x"]).await, b":0\r\n");
    let mut buf = vec![0u8; 1 << 20];
    let mut eof = false;
    for _ in 0..1000 {
        match tokio::time::timeout(Duration::from_secs(5), slow.stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                eof = true;
                break;
            }
            Ok(Ok(_)) => {}
            Err(_) => break,
        }
    }
    assert!(eof);
    s.shutdown().await;
}

fn notifying(flags: &str) -> Config {
    Config {
        notify_keyspace_events: flags.into(),
        ..Config::ephemeral()
    }
}

#[tokio::test]
async fn keyspace_events_for_set_expire_del_and_active_expiry() {
    let s = server_with(notifying("KEA")).await;
    let mut sub = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "__key*@0__:*"),
        b"*3\r\n$10\r\npsubscribe\r\n$12\r\n__key*@0__:*\r\n:1\r\n"
    );
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$16\r\n__keyspace@0__:k\r\n$3\r\nset\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$18\r\n__keyevent@0__:set\r\n$1\r\nk\r\n"
    );
    assert_eq!(cmd!(c, "EXPIRE", "k", "100"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$16\r\n__keyspace@0__:k\r\n$6\r\nexpire\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$21\r\n__keyevent@0__:expire\r\n$1\r\nk\r\n"
    );
    assert_eq!(cmd!(c, "DEL", "k"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$16\r\n__keyspace@0__:k\r\n$3\r\ndel\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$18\r\n__keyevent@0__:del\r\n$1\r\nk\r\n"
    );
    assert_eq!(cmd!(c, "SET", "e", "v", "PX", "10000"), b"+OK\r\n");
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$16\r\n__keyspace@0__:e\r\n$3\r\nset\r\n"
    );
    sub.reply().await; // __keyevent@0__:set
    sub.reply().await; // __keyspace@0__:e expire
    sub.reply().await; // __keyevent@0__:expire
    quiet(&mut sub).await;
    // Move time instead of sleeping: the active expirer (10 rounds a second) reclaims it.
    s.state().clock.advance_ms(11_000);
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$16\r\n__keyspace@0__:e\r\n$7\r\nexpired\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$12\r\n__key*@0__:*\r\n$22\r\n__keyevent@0__:expired\r\n$1\r\ne\r\n"
    );
    // Other databases use their own channel names; a plain channel subscription works too.
    assert_eq!(
        cmd!(sub, "SUBSCRIBE", "__keyevent@3__:set"),
        b"*3\r\n$9\r\nsubscribe\r\n$18\r\n__keyevent@3__:set\r\n:2\r\n"
    );
    cmd!(c, "SELECT", "3");
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$18\r\n__keyevent@3__:set\r\n$1\r\nk\r\n"
    );
    quiet(&mut sub).await;
    s.shutdown().await;
}

#[tokio::test]
async fn keyspace_events_respect_the_configured_classes() {
    // Key-event only, generic and expired classes: no `set` (string class), no keyspace.
    let s = server_with(notifying("Egx")).await;
    let mut sub = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    cmd!(sub, "PSUBSCRIBE", "__key*__:*");
    assert_eq!(cmd!(c, "SET", "k", "v", "PX", "10"), b"+OK\r\n");
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$21\r\n__keyevent@0__:expire\r\n$1\r\nk\r\n"
    );
    s.state().clock.advance_ms(1_000);
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$10\r\n__key*__:*\r\n$22\r\n__keyevent@0__:expired\r\n$1\r\nk\r\n"
    );
    // Off: nothing at all.
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "notify-keyspace-events", ""),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "SET", "k", "v", "PX", "10"), b"+OK\r\n");
    assert_eq!(cmd!(c, "DEL", "k"), b":1\r\n");
    quiet(&mut sub).await;
    s.shutdown().await;
}

#[tokio::test]
async fn publish_from_a_script_reaches_subscribers_in_publish_order() {
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    cmd!(sub, "SUBSCRIBE", "c");
    assert_eq!(
        cmd!(
            c,
            "EVAL",
            "redis.call('publish','c','1'); redis.call('publish','c','2'); return redis.call('publish','c','3')",
            "0"
        ),
        b":1\r\n"
    );
    for m in ["1", "2", "3"] {
        let expected = format!("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n{m}\r\n");
        assert_eq!(sub.reply().await, expected.as_bytes());
    }
    // A RESP3 caller subscribed to the channel gets the message before the script's reply.
    let mut own = Raw::connect(&s).await;
    assert_eq!(cmd!(own, "HELLO", "3")[0], b'%');
    cmd!(own, "SUBSCRIBE", "c");
    assert_eq!(
        cmd!(own, "EVAL", "redis.call('publish','c','x'); return 7", "0"),
        b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nx\r\n"
    );
    assert_eq!(own.reply().await, b":7\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn script_publishes_are_written_once_the_script_ends_or_turns_busy() {
    let _heavy = HEAVY.lock().await;
    let s = server_with(Config {
        busy_reply_threshold_ms: 300,
        ..Config::ephemeral()
    })
    .await;
    let mut sub = Raw::connect(&s).await;
    let mut runner = Raw::connect(&s).await;
    let mut killer = Raw::connect(&s).await;
    cmd!(sub, "SUBSCRIBE", "c");
    runner
        .send(&common::request(&[
            b"EVAL",
            b"redis.call('publish','c','1'); while true do end",
            b"0",
        ]))
        .await;
    // Within the threshold nothing is written, as in Redis (the script blocks the server).
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(sub.try_reply(Duration::from_millis(50)).await, None);
    // Past it Redis processes events, writing the pending message, and so do we.
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\n1\r\n"
    );
    assert_eq!(cmd!(killer, "SCRIPT", "KILL"), b"+OK\r\n");
    assert!(runner
        .reply()
        .await
        .starts_with(b"-ERR Script killed by user"));
    s.shutdown().await;
}

#[tokio::test]
async fn reset_leaves_subscribed_mode_and_forgets_every_subscription() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut p = Raw::connect(&s).await;
    cmd!(c, "SUBSCRIBE", "a");
    cmd!(c, "PSUBSCRIBE", "a*");
    cmd!(c, "SSUBSCRIBE", "s");
    assert_eq!(cmd!(c, "RESET"), b"+RESET\r\n");
    assert_eq!(cmd!(c, "GET", "x"), b"$-1\r\n");
    assert_eq!(cmd!(p, "PUBLISH", "a", "m"), b":0\r\n");
    assert_eq!(cmd!(p, "PUBSUB", "NUMPAT"), b":0\r\n");
    assert_eq!(
        cmd!(p, "PUBSUB", "SHARDNUMSUB", "s"),
        b"*2\r\n$1\r\ns\r\n:0\r\n"
    );
    // Subscribing again starts from scratch.
    assert_eq!(
        cmd!(c, "SUBSCRIBE", "a"),
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
    );
    assert_eq!(cmd!(p, "PUBLISH", "a", "m"), b":1\r\n");
    assert_eq!(
        c.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nm\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn lazy_expiry_reports_expired_before_the_commands_own_keymiss() {
    let s = server().await;
    let mut a = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    assert_eq!(
        cmd!(a, "CONFIG", "SET", "notify-keyspace-events", "KEAm"),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "__keyevent@0__:*"),
        b"*3\r\n$10\r\npsubscribe\r\n$16\r\n__keyevent@0__:*\r\n:1\r\n"
    );
    assert_eq!(cmd!(a, "SET", "k", "v", "PX", "100"), b"+OK\r\n");
    s.state().clock.advance_ms(101);
    // Read at once, before an active-expiry round can find the key: the GET expires it.
    assert_eq!(cmd!(a, "GET", "k"), b"$-1\r\n");
    let ev = |e: &str| {
        format!(
            "*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@0__:*\r\n${}\r\n__keyevent@0__:{e}\r\n$1\r\nk\r\n",
            15 + e.len()
        )
        .into_bytes()
    };
    assert_eq!(sub.reply().await, ev("set"));
    assert_eq!(sub.reply().await, ev("expire"));
    assert_eq!(sub.reply().await, ev("expired"));
    assert_eq!(sub.reply().await, ev("keymiss"));
}

/// Redis encodes a message into the subscriber's buffer when it is published, so a HELLO that
/// switches protocol leaves frames already queued in the old one (recorded from redis 7.0.15:
/// a RESP3 subscriber whose HELLO 2 waits for a script that published gets `>3` first).
#[tokio::test]
async fn frames_queued_before_hello_keep_the_protocol_they_were_published_in() {
    let _heavy = HEAVY.lock().await;
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    let mut publ = Raw::connect(&s).await;
    assert_eq!(cmd!(sub, "HELLO", "3")[0], b'%');
    assert_eq!(
        cmd!(sub, "SUBSCRIBE", "ch"),
        b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    );
    publ.send(&common::request(&[
        b"EVAL",
        b"redis.call('publish','ch','m1') local t=redis.call('time') \
          local s=t[1]*1000000+t[2] while true do local u=redis.call('time') \
          if (u[1]*1000000+u[2])-s > 1000000 then break end end return 1",
        b"0",
    ]))
    .await;
    // Well inside the script's second even on a loaded machine.
    tokio::time::sleep(Duration::from_millis(300)).await;
    sub.send(&common::request(&[b"HELLO", b"2"])).await;
    assert_eq!(
        sub.reply().await,
        b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm1\r\n"
    );
    assert!(sub.reply().await.starts_with(b"*14\r\n$6\r\nserver\r\n"));
    assert_eq!(publ.reply().await, b":1\r\n");
    assert_eq!(cmd!(publ, "PUBLISH", "ch", "m2"), b":1\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm2\r\n"
    );
    // Later frames follow the new protocol, pattern messages included.
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "c*"),
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n"
    );
    assert_eq!(cmd!(publ, "PUBLISH", "ch", "m3"), b":2\r\n");
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm3\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$2\r\nm3\r\n"
    );
    quiet(&mut sub).await;
    s.shutdown().await;
}

/// Each message is encoded once per protocol and shared: subscribers speaking RESP2 and RESP3
/// on the same channel each get their own framing, large and small messages in publish order.
#[tokio::test]
async fn mixed_protocol_subscribers_get_large_and_small_messages_in_order() {
    let s = server().await;
    let mut r2 = Raw::connect(&s).await;
    let mut r3 = Raw::connect(&s).await;
    let mut publ = Raw::connect(&s).await;
    assert_eq!(cmd!(r3, "HELLO", "3")[0], b'%');
    cmd!(r2, "SUBSCRIBE", "ch");
    cmd!(r3, "SUBSCRIBE", "ch");
    let bodies: Vec<Vec<u8>> = [10usize, 5000, 3, 100_000, 1023, 1024, 7]
        .iter()
        .enumerate()
        .map(|(i, &n)| vec![b'a' + i as u8; n])
        .collect();
    let mut pipeline = Vec::new();
    for b in &bodies {
        pipeline.extend(common::request(&[b"PUBLISH", b"ch", b]));
    }
    publ.send(&pipeline).await;
    for _ in &bodies {
        assert_eq!(publ.reply().await, b":2\r\n");
    }
    for b in &bodies {
        let mut tail = format!("$7\r\nmessage\r\n$2\r\nch\r\n${}\r\n", b.len()).into_bytes();
        tail.extend_from_slice(b);
        tail.extend_from_slice(b"\r\n");
        assert_eq!(r2.reply().await, [&b"*3\r\n"[..], &tail].concat());
        assert_eq!(r3.reply().await, [&b">3\r\n"[..], &tail].concat());
    }
    quiet(&mut r2).await;
    quiet(&mut r3).await;
    s.shutdown().await;
}

/// A configured pubsub hard limit applies (the cached limits are read from the configuration
/// on first use). Recorded from redis 7.0.15: a subscriber whose held-back messages pass 1kb
/// while a script publishes is closed without being sent any of them.
#[tokio::test]
async fn configured_hard_limit_closes_a_subscriber_without_writing_its_backlog() {
    let _heavy = HEAVY.lock().await;
    let s = server().await;
    let mut publ = Raw::connect(&s).await;
    assert_eq!(
        cmd!(
            publ,
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "pubsub 1kb 0 0"
        ),
        b"+OK\r\n"
    );
    let mut sub = Raw::connect(&s).await;
    cmd!(sub, "SUBSCRIBE", "c");
    let reply = cmd!(
        publ,
        "EVAL",
        "local r={} for i=1,12 do r[i]=redis.call('publish','c',string.rep('x',100)) end return r",
        "0"
    );
    assert!(reply.starts_with(b"*12\r\n:1\r\n"));
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), sub.stream.read(&mut buf))
        .await
        .expect("subscriber closed");
    assert!(matches!(n, Ok(0) | Err(_)), "got {n:?}");
    assert_eq!(cmd!(publ, "PUBLISH", "c", "x"), b":0\r\n");
    s.shutdown().await;
}

/// The `omem` CLIENT LIST shows for the client named `name`, None once it is gone.
async fn omem_of(c: &mut Raw, name: &str) -> Option<u64> {
    let list = String::from_utf8(c.cmd(&[b"CLIENT", b"LIST"]).await).unwrap();
    let line = list
        .lines()
        .find(|l| l.contains(&format!(" name={name} ")))?;
    line.split(" omem=").nth(1)?.split(' ').next()?.parse().ok()
}

/// A subscriber that stopped reading stays over the pubsub soft limit once nothing more is
/// published: Redis's cron still closes it when the soft limit's time has passed (moved
/// here with the server's clock, so the test does not wait for it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_over_the_soft_limit_is_closed_without_more_traffic() {
    let s = server().await;
    s.freeze();
    let mut c = Raw::connect(&s).await;
    c.cmd(&[
        b"CONFIG",
        b"SET",
        b"client-output-buffer-limit",
        b"pubsub 0 100000 3",
    ])
    .await;
    // A subscriber that never reads again: the socket's buffers fill, then its backlog.
    let mut sub = TcpStream::connect(s.local_addr()).await.unwrap();
    sub.write_all(&common::request(&[b"CLIENT", b"SETNAME", b"slow"]))
        .await
        .unwrap();
    sub.write_all(&common::request(&[b"SUBSCRIBE", b"foo"]))
        .await
        .unwrap();
    let mut buf = [0u8; 64];
    let mut got = 0;
    while got < b"+OK\r\n*3\r\n$9\r\nsubscribe\r\n$3\r\nfoo\r\n:1\r\n".len() {
        got += sub.read(&mut buf).await.unwrap();
    }
    let msg = vec![b'x'; 1000];
    let mut over = false;
    for _ in 0..20_000 {
        c.cmd(&[b"PUBLISH", b"foo", &msg]).await;
        if omem_of(&mut c, "slow").await.is_some_and(|m| m > 100_000) {
            over = true;
            break;
        }
    }
    assert!(
        over,
        "the subscriber's output never went over the soft limit"
    );
    // Still there while under the soft limit's time...
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(omem_of(&mut c, "slow").await.is_some());
    // ...and closed once more than its 3 seconds have passed, with nothing published.
    s.advance(Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(5);
    while omem_of(&mut c, "slow").await.is_some() {
        assert!(Instant::now() < deadline, "the subscriber was not closed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    s.shutdown().await;
}
