//! Streams beyond the recorded sessions of conformance/streams.case: IDs and idle times that
//! follow the server clock (so a test clock moves them), blocking reads served exactly once
//! under concurrency, their timeouts on the virtual clock, CLIENT UNBLOCK, and client tracking
//! of stream keys.

mod common;
use common::*;
use std::collections::HashSet;
use std::time::Duration;

fn int(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// The bulk strings of a reply, in order (IDs, fields and values of an XRANGE or XREAD).
fn bulks(reply: &[u8]) -> Vec<String> {
    let text = String::from_utf8(reply.to_vec()).unwrap();
    let lines: Vec<&str> = text.split("\r\n").collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with('$') && lines[i] != "$-1" {
            out.push(lines[i + 1].to_string());
            i += 2;
        } else {
            i += 1;
        }
    }
    out
}

#[tokio::test]
async fn generated_ids_come_from_the_server_clock() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    s.state().clock.set_ms(1_000_000);
    s.state().clock.freeze();
    assert_eq!(cmd!(c, "XADD", "s", "*", "f", "v"), b"$9\r\n1000000-0\r\n");
    assert_eq!(cmd!(c, "XADD", "s", "*", "f", "v"), b"$9\r\n1000000-1\r\n");
    s.state().clock.advance_ms(5);
    assert_eq!(cmd!(c, "XADD", "s", "*", "f", "v"), b"$9\r\n1000005-0\r\n");
    // Back in time: the last ID's milliseconds are kept, the sequence moves on.
    s.state().clock.set_ms(999_000);
    assert_eq!(cmd!(c, "XADD", "s", "*", "f", "v"), b"$9\r\n1000005-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn idle_times_follow_the_server_clock() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    s.state().clock.freeze();
    cmd!(c, "XADD", "s", "1-0", "f", "v");
    cmd!(c, "XGROUP", "CREATE", "s", "g", "0");
    cmd!(c, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">");
    s.state().clock.advance_ms(60_000);
    let p = cmd!(c, "XPENDING", "s", "g", "-", "+", "10");
    assert!(String::from_utf8_lossy(&p).contains(":60000\r\n"), "{p:?}");
    let r = cmd!(c, "XAUTOCLAIM", "s", "g", "bob", "59000", "0", "JUSTID");
    assert_eq!(bulks(&r), vec!["0-0", "1-0"]);
    s.state().clock.advance_ms(1_000);
    let info = String::from_utf8(cmd!(c, "XINFO", "CONSUMERS", "s", "g")).unwrap();
    // alice was last seen a minute and a second ago, bob (created by the claim) a second ago.
    assert!(
        info.contains(":61000\r\n") && info.contains(":1000\r\n"),
        "{info}"
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_entry_reaches_exactly_one_blocked_group_reader() {
    const READERS: usize = 8;
    const ENTRIES: usize = 400;
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    cmd!(admin, "XGROUP", "CREATE", "q", "g", "$", "MKSTREAM");
    let mut readers = Vec::new();
    for r in 0..READERS {
        let mut c = Raw::connect(&s).await;
        readers.push(tokio::spawn(async move {
            let name = format!("c{r}");
            let mut got = Vec::new();
            loop {
                let reply = cmd!(
                    c,
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    &name,
                    "COUNT",
                    "1",
                    "BLOCK",
                    "2000",
                    "STREAMS",
                    "q",
                    ">"
                );
                if reply == b"*-1\r\n" {
                    return got;
                }
                got.extend(bulks(&reply).into_iter().filter(|b| b.ends_with("-0")));
            }
        }));
    }
    until_blocked(&mut admin, READERS as i64).await;
    let mut w = Raw::connect(&s).await;
    for i in 1..=ENTRIES {
        let id = format!("{i}-0");
        let reply = cmd!(w, "XADD", "q", &id, "n", &i.to_string());
        assert!(reply.ends_with(format!("{id}\r\n").as_bytes()), "{reply:?}");
    }
    let mut seen = HashSet::new();
    let mut total = 0;
    for r in readers {
        let got = r.await.unwrap();
        total += got.len();
        seen.extend(got);
    }
    assert_eq!(total, ENTRIES, "each entry delivered once");
    assert_eq!(seen.len(), ENTRIES);
    let pending = cmd!(admin, "XPENDING", "q", "g");
    assert!(pending.starts_with(format!("*4\r\n:{ENTRIES}\r\n").as_bytes()));
    s.shutdown().await;
}

#[tokio::test]
async fn a_blocked_read_times_out_when_the_virtual_clock_moves() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    c.send(b"XREAD BLOCK 3600000 STREAMS s $\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert!(c.try_reply(Duration::from_millis(100)).await.is_none());
    s.state().clock.advance_ms(3_600_000 + 5);
    assert_eq!(c.reply().await, b"*-1\r\n");
    cmd!(admin, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    c.send(b"XREADGROUP GROUP g c BLOCK 10000 STREAMS s >\r\n")
        .await;
    until_blocked(&mut admin, 1).await;
    s.state().clock.advance_ms(10_005);
    assert_eq!(c.reply().await, b"*-1\r\n");
    // A reader that timed out never became a consumer (Redis creates it when served).
    assert_eq!(cmd!(admin, "XINFO", "CONSUMERS", "s", "g"), b"*0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn client_unblock_answers_a_blocked_reader_as_timeout_or_error() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    let id = int(&cmd!(c, "CLIENT", "ID")).to_string();
    c.send(b"XREAD BLOCK 0 STREAMS s $\r\nPING\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id), b":1\r\n");
    assert_eq!(c.reply().await, b"*-1\r\n");
    assert_eq!(c.reply().await, b"+PONG\r\n");
    cmd!(admin, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    c.send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n")
        .await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id, "ERROR"), b":1\r\n");
    assert_eq!(
        c.reply().await,
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    // The unblocked reader took nothing.
    cmd!(admin, "XADD", "s", "1-0", "f", "v");
    assert_eq!(
        cmd!(admin, "XPENDING", "s", "g"),
        b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn tracking_invalidates_a_stream_read_by_the_client() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut w = Raw::connect(&s).await;
    cmd!(c, "HELLO", "3");
    assert_eq!(cmd!(c, "CLIENT", "TRACKING", "on"), b"+OK\r\n");
    cmd!(w, "XADD", "s", "1-0", "f", "v");
    cmd!(c, "XRANGE", "s", "-", "+");
    cmd!(w, "XADD", "s", "2-0", "f", "v");
    let push = c.reply().await;
    assert_eq!(push, b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ns\r\n");
    cmd!(c, "XLEN", "s");
    cmd!(w, "XDEL", "s", "2-0");
    assert_eq!(c.reply().await, push);
    s.shutdown().await;
}

#[tokio::test]
async fn an_expired_stream_fails_its_blocked_group_readers_as_a_deleted_one() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut group_reader = Raw::connect(&s).await;
    let mut plain_reader = Raw::connect(&s).await;
    s.state().clock.freeze();
    cmd!(admin, "XADD", "s", "1-0", "f", "v");
    cmd!(admin, "XGROUP", "CREATE", "s", "g", "$");
    group_reader
        .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n")
        .await;
    plain_reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n").await;
    until_blocked(&mut admin, 2).await;
    cmd!(admin, "PEXPIRE", "s", "1000");
    // The active expiry cycle removes the key once the clock passes its time.
    s.state().clock.advance_ms(1_005);
    assert_eq!(
        group_reader.reply().await,
        b"-UNBLOCKED the stream key no longer exists\r\n"
    );
    // A plain reader waits for the stream to come back with an entry after its ID (1-0).
    assert!(plain_reader
        .try_reply(Duration::from_millis(100))
        .await
        .is_none());
    cmd!(admin, "XADD", "s", "1-0", "f", "w");
    assert!(plain_reader
        .try_reply(Duration::from_millis(100))
        .await
        .is_none());
    cmd!(admin, "XADD", "s", "2-0", "f", "x");
    assert_eq!(
        plain_reader.reply().await,
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nx\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn a_stream_expired_by_a_lookup_fails_its_blocked_group_readers() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut reader = Raw::connect(&s).await;
    s.state().clock.freeze();
    // No active expiry: only a lookup (lazy expiry) can remove the key.
    s.state()
        .active_expire_enabled
        .store(false, std::sync::atomic::Ordering::Relaxed);
    cmd!(admin, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM");
    reader
        .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS s >\r\n")
        .await;
    until_blocked(&mut admin, 1).await;
    cmd!(admin, "PEXPIRE", "s", "1000");
    s.state().clock.advance_ms(1_005);
    assert!(reader.try_reply(Duration::from_millis(100)).await.is_none());
    assert_eq!(cmd!(admin, "EXISTS", "s"), b":0\r\n");
    assert_eq!(
        reader.reply().await,
        b"-UNBLOCKED the stream key no longer exists\r\n"
    );
    s.shutdown().await;
}

/// keyspace_hits and keyspace_misses from INFO stats.
async fn hits_misses(c: &mut Raw) -> (i64, i64) {
    let info = String::from_utf8(cmd!(c, "INFO", "stats")).unwrap();
    let field = |name: &str| -> i64 {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (field("keyspace_hits:"), field("keyspace_misses:"))
}

#[tokio::test]
async fn stream_reads_count_keyspace_hits_and_misses_as_lookup_key_read_does() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "XADD", "s", "1-0", "f", "v");
    cmd!(c, "XGROUP", "CREATE", "s", "g", "0");
    cmd!(c, "SET", "str", "x");
    // (command, hits, misses) as redis-server 7.0.15 counts them.
    let cases: &[(&[&str], i64, i64)] = &[
        (&["XRANGE", "nokey", "-", "+"], 0, 1),
        (&["XREVRANGE", "s", "+", "-"], 1, 0),
        (&["XLEN", "nokey"], 0, 1),
        (&["XLEN", "str"], 1, 0),
        // XREAD looks every key up twice: to parse its ID, then to serve it.
        (&["XREAD", "STREAMS", "nokey", "s", "0", "0"], 2, 2),
        (&["XREAD", "STREAMS", "nokey", "nokey2", "0", "bad"], 0, 2),
        (
            &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
            2,
            0,
        ),
        (
            &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">"],
            0,
            1,
        ),
        (&["XPENDING", "nokey", "g"], 0, 1),
        (&["XPENDING", "nokey", "g", "-", "+", "bad"], 0, 0),
        (&["XACK", "nokey", "g", "1-0"], 0, 1),
        (&["XCLAIM", "nokey", "g", "c", "0", "1-0"], 0, 1),
        // XAUTOCLAIM looks its key up before it parses its arguments.
        (&["XAUTOCLAIM", "nokey", "g", "c", "bad", "0"], 0, 1),
        (&["XAUTOCLAIM", "str", "g", "c", "0", "0"], 1, 0),
        (&["XINFO", "STREAM", "nokey"], 0, 1),
        (&["XINFO", "GROUPS", "s"], 1, 0),
        // Writers use lookupKeyWrite, which counts nothing.
        (&["XDEL", "nokey", "1-0"], 0, 0),
        (&["XTRIM", "s", "MAXLEN", "5"], 0, 0),
        (&["XSETID", "nokey", "1-0"], 0, 0),
        (&["XGROUP", "CREATECONSUMER", "s", "g", "d"], 0, 0),
        (&["XADD", "s", "NOMKSTREAM", "2-0", "f", "v"], 0, 0),
    ];
    for (args, hits, misses) in cases {
        cmd!(c, "CONFIG", "RESETSTAT");
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        c.cmd(&argv).await;
        assert_eq!(
            hits_misses(&mut c).await,
            (*hits, *misses),
            "{}",
            args.join(" ")
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn stream_reads_of_missing_keys_raise_keymiss_writes_do_not() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    cmd!(c, "CONFIG", "SET", "notify-keyspace-events", "Em");
    cmd!(sub, "SUBSCRIBE", "__keyevent@0__:keymiss");
    for args in [
        &["XDEL", "w1", "1-0"][..],
        &["XGROUP", "DESTROY", "w2", "g"],
        &["XREAD", "STREAMS", "a", "b", "0", "0"],
        &["XCLAIM", "c", "g", "x", "0", "1-0"],
        &["XINFO", "CONSUMERS", "d", "g"],
    ] {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        c.cmd(&argv).await;
    }
    let mut keys = Vec::new();
    while let Some(m) = sub.try_reply(Duration::from_millis(200)).await {
        keys.push(bulks(&m).pop().unwrap());
    }
    // XREAD: both keys for the IDs, then both again to serve them.
    assert_eq!(keys, ["a", "b", "a", "b", "c", "d"]);
    s.shutdown().await;
}

/// The commands in an AOF file, each as its arguments joined by spaces.
fn aof_commands(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    let line = |i: &mut usize| -> usize {
        let end = *i + bytes[*i..].windows(2).position(|w| w == b"\r\n").unwrap();
        let n = std::str::from_utf8(&bytes[*i + 1..end])
            .unwrap()
            .parse()
            .unwrap();
        *i = end + 2;
        n
    };
    while i < bytes.len() {
        let n = line(&mut i);
        let mut args = Vec::new();
        for _ in 0..n {
            let len = line(&mut i);
            args.push(String::from_utf8_lossy(&bytes[i..i + len]).into_owned());
            i += len + 2;
        }
        out.push(args.join(" "));
    }
    out
}

#[tokio::test]
async fn stream_writes_reach_the_aof_as_redis_rewrites_them() {
    let mut config = resplock::Config::ephemeral();
    config.appendonly = "yes".into();
    let dir = config.dir.clone().unwrap().join("appendonlydir");
    let s = server_with(config).await;
    let mut c = Raw::connect(&s).await;
    s.state().clock.set_ms(1_000_000);
    s.state().clock.freeze();
    for args in [
        &["XADD", "s", "*", "f", "v"][..],
        // `~` removes whole nodes: the one node goes, the AOF gets the length it left.
        &["XADD", "s", "MAXLEN", "~", "0", "5000000-*", "f", "v"],
        &["XTRIM", "s", "MAXLEN", "1"],
        &["XADD", "s", "6000000", "f", "v"],
        &["XGROUP", "CREATE", "s", "g", "0"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ],
        &["XADD", "s", "6500000", "f", "v"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "NOACK",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        &["XAUTOCLAIM", "s", "g", "carol", "0", "0"],
        &[
            "XCLAIM", "s", "g", "dave", "0", "5000000", "LASTID", "7000000",
        ],
        &["XCLAIM", "s", "g", "dave", "0", "1-0", "LASTID", "8000000"],
    ] {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        c.cmd(&argv).await;
    }
    // A blocked reader served by an XADD: the XADD, then the reader's XCLAIM.
    let mut w = Raw::connect(&s).await;
    w.send(b"XREADGROUP GROUP g w BLOCK 0 STREAMS s >\r\n")
        .await;
    until_blocked(&mut c, 1).await;
    cmd!(c, "XADD", "s", "9000000", "f", "v");
    w.reply().await;
    // As redis-server 7.0.15 writes its AOF for the same commands (its clock aside).
    let want = [
        "XADD s 1000000-0 f v",
        "XADD s MAXLEN = 0 5000000-0 f v",
        "XADD s 6000000 f v",
        "XGROUP CREATE s g 0",
        "XCLAIM s g alice 0 6000000-0 TIME 1000000 RETRYCOUNT 1 FORCE JUSTID LASTID 6000000-0",
        "XADD s 6500000 f v",
        "MULTI",
        "XGROUP CREATECONSUMER s g bob",
        "XGROUP SETID s g 6500000-0 ENTRIESREAD 4",
        "EXEC",
        "XCLAIM s g carol 0 6000000-0 TIME 1000000 RETRYCOUNT 3 FORCE JUSTID LASTID 6500000-0",
        "XGROUP SETID s g 7000000-0 ENTRIESREAD 4",
        "XGROUP SETID s g 8000000-0 ENTRIESREAD 4",
        "XADD s 9000000 f v",
        "XCLAIM s g w 0 9000000-0 TIME 1000000 RETRYCOUNT 1 FORCE JUSTID LASTID 9000000-0",
    ];
    let mut got = Vec::new();
    for _ in 0..200 {
        let bytes = std::fs::read(dir.join("appendonly.aof.1.incr.aof")).unwrap_or_default();
        got = aof_commands(&bytes);
        got.retain(|c| !c.starts_with("SELECT"));
        if got.len() >= want.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(got, want);
    s.shutdown().await;
}
