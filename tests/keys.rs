//! Generic keyspace commands, replies recorded from redis-server 7.0.15.
mod common;
use common::*;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// `cmd!` with the request future boxed: `Raw::reply` keeps a 64 KiB buffer across an await,
/// and tests with many commands would otherwise overflow the test thread's stack.
macro_rules! cmd {
    ($raw:expr, $($a:expr),+ $(,)?) => {
        Box::pin($raw.cmd(&[$(AsRef::<[u8]>::as_ref(&$a)),+])).await
    };
}

/// The bulk strings of a flat array reply (`*n` of `$len` items), in order.
fn bulks(r: &[u8]) -> Vec<Vec<u8>> {
    fn line(r: &[u8], pos: usize) -> (usize, usize) {
        let eol = pos + r[pos..].windows(2).position(|w| w == b"\r\n").unwrap();
        let n: usize = std::str::from_utf8(&r[pos + 1..eol])
            .unwrap()
            .parse()
            .unwrap();
        (n, eol + 2)
    }
    assert_eq!(r[0], b'*', "not an array: {:?}", String::from_utf8_lossy(r));
    let (n, mut pos) = line(r, 0);
    let mut out = Vec::new();
    for _ in 0..n {
        assert_eq!(r[pos], b'$');
        let (len, start) = line(r, pos);
        out.push(r[start..start + len].to_vec());
        pos = start + len + 2;
    }
    assert_eq!(pos, r.len());
    out
}

fn sorted(mut v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    v.sort();
    v
}

fn strs(v: &[&str]) -> Vec<Vec<u8>> {
    sorted(v.iter().map(|s| s.as_bytes().to_vec()).collect())
}

/// A SCAN reply: (next cursor, keys).
fn scan_page(r: &[u8]) -> (String, Vec<Vec<u8>>) {
    assert!(
        r.starts_with(b"*2\r\n$"),
        "{:?}",
        String::from_utf8_lossy(r)
    );
    let body = &r[4..];
    let eol = body.windows(2).position(|w| w == b"\r\n").unwrap();
    let len: usize = std::str::from_utf8(&body[1..eol]).unwrap().parse().unwrap();
    let cursor = String::from_utf8(body[eol + 2..eol + 2 + len].to_vec()).unwrap();
    (cursor, bulks(&body[eol + 2 + len + 2..]))
}

#[tokio::test]
async fn del_counts_each_existing_key_once() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "1");
    cmd!(c, "SET", "b", "2");
    assert_eq!(cmd!(c, "DEL", "a", "a", "nokey", "b"), b":2\r\n");
    assert_eq!(cmd!(c, "DEL", "a"), b":0\r\n");
    assert_eq!(
        cmd!(c, "DEL"),
        b"-ERR wrong number of arguments for 'del' command\r\n"
    );
    cmd!(c, "SET", "t", "v");
    cmd!(c, "HSET", "h", "f", "v");
    assert_eq!(cmd!(c, "UNLINK", "t", "h", "nokey"), b":2\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn exists_and_touch_count_duplicates() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "b", "1");
    cmd!(c, "SET", "d", "1");
    assert_eq!(cmd!(c, "EXISTS", "b", "b", "zz", "d"), b":3\r\n");
    assert_eq!(cmd!(c, "EXISTS", "zz"), b":0\r\n");
    assert_eq!(cmd!(c, "TOUCH", "b", "b", "zz"), b":2\r\n");
    assert_eq!(cmd!(c, "TOUCH", "nokey"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn type_names_value_kind_or_none() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "s", "v");
    cmd!(c, "HSET", "h", "f", "v");
    assert_eq!(cmd!(c, "TYPE", "s"), b"+string\r\n");
    assert_eq!(cmd!(c, "TYPE", "h"), b"+hash\r\n");
    assert_eq!(cmd!(c, "TYPE", "nokey"), b"+none\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn expire_nx_xx_gt_lt_follow_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v");
    // No TTL yet: XX and GT refuse, LT treats "no TTL" as infinite and accepts.
    assert_eq!(cmd!(c, "EXPIRE", "k", "100", "xx"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "100", "gt"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "100", "lt"), b":1\r\n");
    assert_eq!(cmd!(c, "TTL", "k"), b":100\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "200", "NX"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "50", "xx", "gt"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "200", "xx", "gt"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "300", "lt"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "150", "LT"), b":1\r\n");
    assert_eq!(cmd!(c, "TTL", "k"), b":150\r\n");
    assert_eq!(cmd!(c, "PERSIST", "k"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "100", "nx"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "nokey", "100"), b":0\r\n");
    // Absolute times, checked exactly through (P)EXPIRETIME.
    assert_eq!(cmd!(c, "PEXPIREAT", "k", "99999999999999"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIRETIME", "k"), b":100000000000\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "k"), b":99999999999999\r\n");
    assert_eq!(cmd!(c, "EXPIREAT", "k", "99999999999"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "k"), b":99999999999000\r\n");
    assert_eq!(cmd!(c, "EXPIREAT", "k", "99999999999", "gt"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIREAT", "k", "99999999998", "lt"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "k"), b":99999999998000\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn expire_option_errors_match_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "1");
    let nx = b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n";
    assert_eq!(cmd!(c, "EXPIRE", "a", "10", "nx", "xx"), nx);
    assert_eq!(cmd!(c, "EXPIRE", "a", "10", "nx", "gt"), nx);
    assert_eq!(cmd!(c, "EXPIRE", "a", "10", "lt", "nx"), nx);
    // Flags are checked before the number and before the key.
    assert_eq!(cmd!(c, "EXPIRE", "a", "x", "nx", "xx"), nx);
    assert_eq!(cmd!(c, "EXPIRE", "nokey", "10", "nx", "xx"), nx);
    assert_eq!(
        cmd!(c, "PEXPIRE", "a", "10", "gt", "lt"),
        b"-ERR GT and LT options at the same time are not compatible\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "x", "foo"),
        b"-ERR Unsupported option foo\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "1", b"f\x00oo"),
        b"-ERR Unsupported option f\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "1", "f\r\noo"),
        b"-ERR Unsupported option f  oo\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "x"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "nokey", "x"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a"),
        b"-ERR wrong number of arguments for 'expire' command\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn expire_overflow_is_invalid_expire_time() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "1");
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "9223372036854775807"),
        b"-ERR invalid expire time in 'expire' command\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "9223372036854775"),
        b"-ERR invalid expire time in 'expire' command\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIRE", "a", "-9223372036854775808"),
        b"-ERR invalid expire time in 'expire' command\r\n"
    );
    assert_eq!(
        cmd!(c, "PEXPIRE", "a", "9223372036854775807"),
        b"-ERR invalid expire time in 'pexpire' command\r\n"
    );
    assert_eq!(
        cmd!(c, "EXPIREAT", "a", "9223372036854776"),
        b"-ERR invalid expire time in 'expireat' command\r\n"
    );
    // The largest values that fit are accepted.
    assert_eq!(cmd!(c, "EXPIRE", "a", "9223372036854"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIREAT", "a", "9223372036854775"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIREAT", "a", "9223372036854775807"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "a"), b":9223372036854775807\r\n");
    // A hugely negative relative time is just in the past: the key goes.
    assert_eq!(cmd!(c, "PEXPIRE", "a", "-9223372036854775808"), b":1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "a"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn expire_in_the_past_deletes_the_key() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for args in [
        ["EXPIRE", "k", "0"],
        ["EXPIRE", "k", "-1"],
        ["PEXPIRE", "k", "-100"],
        ["EXPIREAT", "k", "100"],
        ["PEXPIREAT", "k", "1"],
    ] {
        assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
        assert_eq!(cmd!(c, args[0], args[1], args[2]), b":1\r\n", "{args:?}");
        assert_eq!(cmd!(c, "EXISTS", "k"), b":0\r\n", "{args:?}");
        assert_eq!(cmd!(c, "TTL", "k"), b":-2\r\n");
    }
    // LT with a negative time on a persistent key deletes it too.
    cmd!(c, "SET", "k2", "v");
    assert_eq!(cmd!(c, "EXPIRE", "k2", "-5", "lt"), b":1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "k2"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn ttl_family_reports_missing_persistent_and_remaining() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(cmd!(c, cmd, "nokey"), b":-2\r\n");
    }
    cmd!(c, "SET", "k", "v");
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(cmd!(c, cmd, "k"), b":-1\r\n");
    }
    assert_eq!(cmd!(c, "EXPIRE", "k", "100"), b":1\r\n");
    assert_eq!(cmd!(c, "TTL", "k"), b":100\r\n");
    s.state().clock.advance_ms(30_000);
    assert_eq!(cmd!(c, "TTL", "k"), b":70\r\n");
    // TTL rounds to the nearest second: 69.4 s left reads as 69.
    s.state().clock.advance_ms(600);
    assert_eq!(cmd!(c, "TTL", "k"), b":69\r\n");
    let pttl = String::from_utf8(cmd!(c, "PTTL", "k")).unwrap();
    let ms: i64 = pttl[1..pttl.len() - 2].parse().unwrap();
    assert!((68_000..=69_400).contains(&ms), "{pttl}");
    s.state().clock.advance_ms(70_000);
    assert_eq!(cmd!(c, "TTL", "k"), b":-2\r\n");
    assert_eq!(cmd!(c, "PTTL", "k"), b":-2\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn expired_key_reads_as_missing_everywhere() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v");
    cmd!(c, "SET", "live", "v");
    assert_eq!(cmd!(c, "PEXPIRE", "k", "1000"), b":1\r\n");
    s.state().clock.advance_ms(1_500);
    assert_eq!(cmd!(c, "EXISTS", "k"), b":0\r\n");
    assert_eq!(cmd!(c, "TYPE", "k"), b"+none\r\n");
    assert_eq!(cmd!(c, "PERSIST", "k"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "k", "100"), b":0\r\n");
    assert_eq!(cmd!(c, "RENAME", "k", "x"), b"-ERR no such key\r\n");
    assert_eq!(cmd!(c, "COPY", "k", "x"), b":0\r\n");
    assert_eq!(cmd!(c, "KEYS", "*"), b"*1\r\n$4\r\nlive\r\n");
    assert_eq!(cmd!(c, "RANDOMKEY"), b"$4\r\nlive\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn persist_removes_ttl_once() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "b", "v");
    assert_eq!(cmd!(c, "PERSIST", "b"), b":0\r\n");
    assert_eq!(cmd!(c, "EXPIRE", "b", "100"), b":1\r\n");
    assert_eq!(cmd!(c, "PERSIST", "b"), b":1\r\n");
    assert_eq!(cmd!(c, "PERSIST", "b"), b":0\r\n");
    assert_eq!(cmd!(c, "TTL", "b"), b":-1\r\n");
    assert_eq!(cmd!(c, "PERSIST", "nokey"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn keys_matches_redis_glob() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for k in ["foo", "fao", "fxo", "f", "F*o", "k"] {
        cmd!(c, "SET", k, "1");
    }
    assert_eq!(
        sorted(bulks(&cmd!(c, "KEYS", "f?o"))),
        strs(&["foo", "fao", "fxo"])
    );
    assert_eq!(cmd!(c, "KEYS", "f[a-b]o"), b"*1\r\n$3\r\nfao\r\n");
    assert_eq!(
        sorted(bulks(&cmd!(c, "KEYS", "f[^a]o"))),
        strs(&["foo", "fxo"])
    );
    assert_eq!(cmd!(c, "KEYS", "F\\*o"), b"*1\r\n$3\r\nF*o\r\n");
    assert_eq!(cmd!(c, "KEYS", "["), b"*0\r\n");
    assert_eq!(cmd!(c, "KEYS", "nomatch*"), b"*0\r\n");
    assert_eq!(
        sorted(bulks(&cmd!(c, "KEYS", "*"))),
        strs(&["foo", "fao", "fxo", "f", "F*o", "k"])
    );
    s.shutdown().await;
}

#[tokio::test]
async fn keys_glob_quirks_match_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for k in [&b"\xff"[..], b"\x00", b"b", b"Z", b"", b"_"] {
        cmd!(c, "SET", k, "1");
    }
    // Ranges compare signed chars: [a-\xff] is really [\xff-a].
    assert_eq!(
        sorted(bulks(&cmd!(c, "KEYS", b"[a-\xff]"))),
        sorted(vec![
            b"\xff".to_vec(),
            b"\x00".to_vec(),
            b"Z".to_vec(),
            b"_".to_vec()
        ])
    );
    // "[a-]" is the range ']'..'a'.
    assert_eq!(cmd!(c, "KEYS", "[a-]"), b"*1\r\n$1\r\n_\r\n");
    // The empty key matches only the empty pattern (and the "*" shortcut).
    assert_eq!(cmd!(c, "KEYS", ""), b"*1\r\n$0\r\n\r\n");
    assert!(!bulks(&cmd!(c, "KEYS", "**")).contains(&Vec::new()));
    assert_eq!(bulks(&cmd!(c, "KEYS", "*")).len(), 6);
    // Deeply nested stars neither hang nor match past Redis's nesting limit.
    cmd!(c, "FLUSHALL");
    cmd!(c, "SET", "a".repeat(1500), "1");
    let t = Instant::now();
    assert_eq!(bulks(&cmd!(c, "KEYS", "a*".repeat(1000) + "a")).len(), 1);
    assert_eq!(cmd!(c, "KEYS", "a*".repeat(1001) + "a"), b"*0\r\n");
    assert_eq!(cmd!(c, "KEYS", "a*".repeat(700) + "b"), b"*0\r\n");
    assert!(t.elapsed() < Duration::from_secs(5));
    s.shutdown().await;
}

#[tokio::test]
async fn scan_options_and_errors_match_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "1");
    cmd!(c, "HSET", "h", "f", "v");
    let all = |r: Vec<u8>| {
        let (cur, keys) = scan_page(&r);
        assert_eq!(cur, "0");
        sorted(keys)
    };
    assert_eq!(all(cmd!(c, "SCAN", "0")), strs(&["a", "h"]));
    // strtoul: empty and "+0" are cursor 0.
    assert_eq!(all(cmd!(c, "SCAN", "")), strs(&["a", "h"]));
    assert_eq!(all(cmd!(c, "SCAN", "+0")), strs(&["a", "h"]));
    assert_eq!(all(cmd!(c, "SCAN", "0", "TYPE", "HASH")), strs(&["h"]));
    assert_eq!(all(cmd!(c, "SCAN", "0", "type", "nosuch")), strs(&[]));
    assert_eq!(
        all(cmd!(c, "SCAN", "0", "type", "string", "type", "hash")),
        strs(&["h"])
    );
    assert_eq!(
        all(cmd!(c, "SCAN", "0", "match", "*", "count", "100")),
        strs(&["a", "h"])
    );
    assert_eq!(all(cmd!(c, "SCAN", "0", "MATCH", "h*")), strs(&["h"]));
    assert_eq!(
        all(cmd!(c, "SCAN", "0", "count", "9223372036854775807")),
        strs(&["a", "h"])
    );
    let inv = b"-ERR invalid cursor\r\n";
    for bad in [" 0", "0 ", "18446744073709551616", "0x", "abc", "+", "-"] {
        assert_eq!(cmd!(c, "SCAN", bad), inv, "{bad:?}");
    }
    assert_eq!(cmd!(c, "SCAN", "abc", "bogus"), inv);
    let syn = b"-ERR syntax error\r\n";
    assert_eq!(cmd!(c, "SCAN", "0", "count", "0"), syn);
    assert_eq!(cmd!(c, "SCAN", "0", "count", "-1"), syn);
    assert_eq!(cmd!(c, "SCAN", "0", "count"), syn);
    assert_eq!(cmd!(c, "SCAN", "0", "match"), syn);
    assert_eq!(cmd!(c, "SCAN", "0", "bogus"), syn);
    assert_eq!(cmd!(c, "SCAN", "0", "count", "0", "bogus"), syn);
    assert_eq!(
        cmd!(c, "SCAN", "0", "count", "x"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "SCAN"),
        b"-ERR wrong number of arguments for 'scan' command\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn scan_returns_every_key_exactly_once_while_keys_are_added() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut w = Raw::connect(&s).await;
    let originals: HashSet<Vec<u8>> = (0..1000).map(|i| format!("key:{i}").into_bytes()).collect();
    for k in &originals {
        cmd!(c, "SET", k, "v");
    }
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut cursor = "0".to_string();
    let mut pages = 0;
    let mut added = 0;
    loop {
        let (next, keys) = scan_page(&cmd!(c, "SCAN", &cursor, "COUNT", "25"));
        assert!(keys.len() <= 40, "page of {}", keys.len());
        seen.extend(keys);
        // Another client adds keys between pages.
        for _ in 0..5 {
            cmd!(w, "SET", format!("new:{added}"), "v");
            added += 1;
        }
        pages += 1;
        assert!(pages < 1000, "scan does not terminate");
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    let unique: HashSet<Vec<u8>> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "a key was returned twice");
    for k in &originals {
        assert!(
            unique.contains(k),
            "missed {:?}",
            String::from_utf8_lossy(k)
        );
    }
    assert!(pages >= 1000 / 40);
    s.shutdown().await;
}

#[tokio::test]
async fn scan_match_pages_may_be_empty_but_cover_all() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for i in 0..200 {
        cmd!(c, "SET", format!("user:{i}"), "v");
        cmd!(c, "SET", format!("other:{i}"), "v");
    }
    let mut found = HashSet::new();
    let mut cursor = "0".to_string();
    for _ in 0..1000 {
        let (next, keys) = scan_page(&cmd!(c, "SCAN", &cursor, "MATCH", "user:*"));
        for k in keys {
            assert!(k.starts_with(b"user:"));
            assert!(found.insert(k));
        }
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(cursor, "0");
    assert_eq!(found.len(), 200);
    s.shutdown().await;
}

#[tokio::test]
async fn randomkey_returns_live_key_or_nil() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "RANDOMKEY"), b"$-1\r\n");
    cmd!(c, "SET", "a", "1");
    assert_eq!(cmd!(c, "RANDOMKEY"), b"$1\r\na\r\n");
    cmd!(c, "SET", "b", "1");
    let mut got = HashSet::new();
    for _ in 0..200 {
        got.insert(cmd!(c, "RANDOMKEY"));
    }
    assert_eq!(got.len(), 2);
    // Only expired keys left: nil.
    for i in 0..50 {
        cmd!(c, "SET", format!("t{i}"), "v", "PX", "100");
    }
    cmd!(c, "DEL", "a", "b");
    s.state().clock.advance_ms(1000);
    assert_eq!(cmd!(c, "RANDOMKEY"), b"$-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn rename_moves_value_and_ttl() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "RENAME", "nokey", "x"), b"-ERR no such key\r\n");
    assert_eq!(cmd!(c, "RENAME", "nokey", "nokey"), b"-ERR no such key\r\n");
    assert_eq!(
        cmd!(c, "RENAMENX", "nokey", "nokey"),
        b"-ERR no such key\r\n"
    );
    cmd!(c, "SET", "a", "1");
    assert_eq!(cmd!(c, "RENAME", "a", "a"), b"+OK\r\n");
    assert_eq!(cmd!(c, "RENAMENX", "a", "a"), b":0\r\n");
    cmd!(c, "SET", "b", "2");
    assert_eq!(cmd!(c, "RENAMENX", "a", "b"), b":0\r\n");
    assert_eq!(cmd!(c, "PEXPIREAT", "a", "99999999999999"), b":1\r\n");
    assert_eq!(cmd!(c, "RENAME", "a", "c"), b"+OK\r\n");
    assert_eq!(cmd!(c, "EXISTS", "a"), b":0\r\n");
    assert_eq!(cmd!(c, "GET", "c"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "c"), b":99999999999999\r\n");
    assert_eq!(cmd!(c, "RENAMENX", "c", "d"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "d"), b":99999999999999\r\n");
    // Overwriting takes the source's TTL (or lack of one).
    cmd!(c, "SET", "e", "5");
    assert_eq!(cmd!(c, "RENAME", "e", "d"), b"+OK\r\n");
    assert_eq!(cmd!(c, "GET", "d"), b"$1\r\n5\r\n");
    assert_eq!(cmd!(c, "TTL", "d"), b":-1\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":2\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn copy_options_errors_and_ttl() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "1");
    let same = b"-ERR source and destination objects are the same\r\n";
    assert_eq!(cmd!(c, "COPY", "a", "a"), same);
    assert_eq!(cmd!(c, "COPY", "nokey", "nokey"), same);
    assert_eq!(cmd!(c, "COPY", "a", "a", "db", "0"), same);
    assert_eq!(cmd!(c, "COPY", "a", "a", "db", "1"), b":1\r\n");
    let range = b"-ERR DB index is out of range\r\n";
    assert_eq!(cmd!(c, "COPY", "a", "b", "db", "16"), range);
    assert_eq!(cmd!(c, "COPY", "a", "b", "db", "-1"), range);
    assert_eq!(
        cmd!(c, "COPY", "a", "b", "db", "x"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "COPY", "a", "b", "db", "4294967296"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    assert_eq!(cmd!(c, "COPY", "a", "b", "db"), b"-ERR syntax error\r\n");
    assert_eq!(cmd!(c, "COPY", "a", "b", "foo"), b"-ERR syntax error\r\n");
    assert_eq!(cmd!(c, "COPY", "nokey", "b"), b":0\r\n");
    assert_eq!(cmd!(c, "PEXPIREAT", "a", "99999999999999"), b":1\r\n");
    assert_eq!(cmd!(c, "COPY", "a", "b"), b":1\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "b"), b":99999999999999\r\n");
    assert_eq!(cmd!(c, "COPY", "a", "b"), b":0\r\n");
    cmd!(c, "HSET", "h", "f", "v");
    assert_eq!(cmd!(c, "COPY", "h", "b", "REPLACE", "replace"), b":1\r\n");
    assert_eq!(cmd!(c, "TYPE", "b"), b"+hash\r\n");
    assert_eq!(cmd!(c, "TTL", "b"), b":-1\r\n");
    // The copy is independent of the source.
    cmd!(c, "HSET", "h", "f", "changed");
    assert_eq!(cmd!(c, "HGET", "b", "f"), b"$1\r\nv\r\n");
    // Across databases.
    assert_eq!(cmd!(c, "COPY", "h", "h", "DB", "3"), b":1\r\n");
    assert_eq!(cmd!(c, "COPY", "h", "h", "DB", "3"), b":0\r\n");
    cmd!(c, "SELECT", "3");
    assert_eq!(cmd!(c, "HGET", "h", "f"), b"$7\r\nchanged\r\n");
    assert_eq!(cmd!(c, "COPY", "h", "h", "db", "0", "replace"), b":1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn move_to_another_db() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let same = b"-ERR source and destination objects are the same\r\n";
    assert_eq!(cmd!(c, "MOVE", "nokey", "0"), same);
    assert_eq!(cmd!(c, "MOVE", "nokey", "1"), b":0\r\n");
    assert_eq!(
        cmd!(c, "MOVE", "a", "16"),
        b"-ERR DB index is out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "MOVE", "a", "x"),
        b"-ERR value is not an integer or out of range\r\n"
    );
    cmd!(c, "SET", "m", "v", "PX", "100000");
    assert_eq!(cmd!(c, "MOVE", "m", "1"), b":1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "m"), b":0\r\n");
    cmd!(c, "SET", "m", "v2");
    assert_eq!(cmd!(c, "MOVE", "m", "1"), b":0\r\n");
    cmd!(c, "SELECT", "1");
    assert_eq!(cmd!(c, "GET", "m"), b"$1\r\nv\r\n");
    let pttl = cmd!(c, "PTTL", "m");
    assert!(pttl != b":-1\r\n" && pttl != b":-2\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn dbsize_flushdb_flushall() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    cmd!(c, "SET", "a", "1");
    cmd!(c, "SET", "b", "1");
    assert_eq!(cmd!(c, "DBSIZE"), b":2\r\n");
    assert_eq!(cmd!(c, "FLUSHDB", "x"), b"-ERR syntax error\r\n");
    assert_eq!(
        cmd!(c, "FLUSHDB", "async", "sync"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(cmd!(c, "FLUSHALL", "x"), b"-ERR syntax error\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":2\r\n");
    cmd!(c, "SELECT", "2");
    cmd!(c, "SET", "z", "1");
    assert_eq!(cmd!(c, "FLUSHDB", "ASYNC"), b"+OK\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    cmd!(c, "SET", "z", "1");
    cmd!(c, "SELECT", "0");
    assert_eq!(cmd!(c, "DBSIZE"), b":2\r\n");
    assert_eq!(cmd!(c, "FLUSHDB", "sync"), b"+OK\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    cmd!(c, "SET", "a", "1");
    assert_eq!(cmd!(c, "FLUSHALL"), b"+OK\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    cmd!(c, "SELECT", "2");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    assert_eq!(cmd!(c, "FLUSHALL", "SYNC"), b"+OK\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn swapdb_swaps_contents() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "SWAPDB", "0", "x"),
        b"-ERR invalid second DB index\r\n"
    );
    assert_eq!(
        cmd!(c, "SWAPDB", "x", "0"),
        b"-ERR invalid first DB index\r\n"
    );
    assert_eq!(
        cmd!(c, "SWAPDB", "0", "16"),
        b"-ERR DB index is out of range\r\n"
    );
    assert_eq!(
        cmd!(c, "SWAPDB", "-1", "0"),
        b"-ERR DB index is out of range\r\n"
    );
    assert_eq!(cmd!(c, "SWAPDB", "0", "0"), b"+OK\r\n");
    cmd!(c, "SET", "m", "zero");
    cmd!(c, "SET", "only0", "v", "PX", "100000");
    cmd!(c, "SELECT", "1");
    cmd!(c, "SET", "m", "one");
    cmd!(c, "SELECT", "0");
    assert_eq!(cmd!(c, "SWAPDB", "0", "1"), b"+OK\r\n");
    assert_eq!(cmd!(c, "GET", "m"), b"$3\r\none\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":1\r\n");
    assert_eq!(cmd!(c, "SWAPDB", "1", "0"), b"+OK\r\n");
    assert_eq!(cmd!(c, "GET", "m"), b"$4\r\nzero\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":2\r\n");
    let pttl = cmd!(c, "PTTL", "only0");
    assert!(pttl != b":-1\r\n" && pttl != b":-2\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn active_expiry_reclaims_keys_without_reads() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    // TTLs long in real time, passed by moving the clock: 500 SETs on a loaded machine
    // must not see the first keys expire before the count is checked.
    for i in 0..500 {
        cmd!(c, "SET", format!("t{i}"), "v", "PX", "60000");
    }
    cmd!(c, "SET", "keep", "v");
    assert_eq!(cmd!(c, "DBSIZE"), b":501\r\n");
    s.state().clock.advance_ms(60_100);
    let deadline = Instant::now() + Duration::from_millis(3000);
    loop {
        if cmd!(c, "DBSIZE") == b":1\r\n" {
            break;
        }
        assert!(Instant::now() < deadline, "expired keys not reclaimed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    s.shutdown().await;
}

#[tokio::test]
async fn multi_key_commands_are_atomic_under_concurrency() {
    // RENAME back and forth while another client checks that exactly one name exists.
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "x", "v");
    let mut r = Raw::connect(&s).await;
    let renamer = tokio::spawn(async move {
        for _ in 0..300 {
            assert_eq!(cmd!(r, "RENAME", "x", "y"), b"+OK\r\n");
            assert_eq!(cmd!(r, "RENAME", "y", "x"), b"+OK\r\n");
        }
    });
    for _ in 0..300 {
        assert_eq!(cmd!(c, "EXISTS", "x", "y"), b":1\r\n");
    }
    renamer.await.unwrap();
    s.shutdown().await;
}

#[tokio::test]
async fn keys_scan_type_in_resp3() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HELLO", "3");
    cmd!(c, "SET", "a", "1");
    assert_eq!(cmd!(c, "KEYS", "*"), b"*1\r\n$1\r\na\r\n");
    assert_eq!(cmd!(c, "SCAN", "0"), b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\na\r\n");
    assert_eq!(cmd!(c, "TYPE", "a"), b"+string\r\n");
    assert_eq!(cmd!(c, "RANDOMKEY"), b"$1\r\na\r\n");
    cmd!(c, "DEL", "a");
    assert_eq!(cmd!(c, "RANDOMKEY"), b"_\r\n");
    s.shutdown().await;
}

#[test]
fn command_rows_match_redis_command_info() {
    use resplock::cmd::{flags, lookup};
    let del = lookup(b"DEL").unwrap();
    assert_eq!(
        (del.arity, del.first_key, del.last_key, del.step),
        (-2, 1, -1, 1)
    );
    assert_eq!(del.flags, flags::WRITE);
    assert_eq!(
        (del.group, del.since, del.summary),
        ("generic", "1.0.0", "Delete a key")
    );
    let copy = lookup(b"copy").unwrap();
    assert_eq!(copy.flags, flags::WRITE | flags::DENYOOM);
    assert_eq!((copy.first_key, copy.last_key), (1, 2));
    let scan = lookup(b"scan").unwrap();
    assert_eq!(
        (scan.arity, scan.flags, scan.first_key),
        (-2, flags::READONLY, 0)
    );
    let dbsize = lookup(b"dbsize").unwrap();
    assert_eq!(
        (dbsize.group, dbsize.flags),
        ("server", flags::READONLY | flags::FAST)
    );
    let touch = lookup(b"touch").unwrap();
    assert_eq!(touch.since, "3.2.1");
}

/// (channel, message) of every pmessage that arrives within a short wait.
async fn pmessages(sub: &mut Raw) -> Vec<(String, String)> {
    let mut out = Vec::new();
    while let Some(f) = Box::pin(sub.try_reply(Duration::from_millis(300))).await {
        let items = bulks(&f);
        assert_eq!(items[0], b"pmessage");
        out.push((
            String::from_utf8_lossy(&items[2]).into_owned(),
            String::from_utf8_lossy(&items[3]).into_owned(),
        ));
    }
    out
}

#[tokio::test]
async fn keyspace_events_match_redis() {
    let config = resplock::Config {
        notify_keyspace_events: "Egm".into(),
        ..resplock::Config::ephemeral()
    };
    let s = server_with(config).await;
    let mut c = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "__keyevent@*"),
        b"*3\r\n$10\r\npsubscribe\r\n$12\r\n__keyevent@*\r\n:1\r\n"
    );
    cmd!(c, "SET", "k", "v");
    cmd!(c, "EXPIRE", "k", "-1");
    cmd!(c, "SET", "k", "v");
    cmd!(c, "EXPIRE", "k", "100");
    cmd!(c, "PERSIST", "k");
    cmd!(c, "RENAME", "k", "k2");
    cmd!(c, "COPY", "k2", "k3");
    cmd!(c, "COPY", "k2", "k4", "db", "3");
    cmd!(c, "SET", "m", "1");
    cmd!(c, "MOVE", "m", "5");
    cmd!(c, "DEL", "k2", "k3", "k2");
    cmd!(c, "SET", "k", "v");
    cmd!(c, "PEXPIREAT", "k", "1");
    // Read lookups that miss raise keymiss; write lookups do not.
    cmd!(c, "EXISTS", "nokey", "n2");
    cmd!(c, "TTL", "nokey");
    cmd!(c, "RENAME", "nokey", "x");
    cmd!(c, "EXPIRE", "nokey", "1");
    let expected: Vec<(String, String)> = [
        ("__keyevent@0__:del", "k"),
        ("__keyevent@0__:expire", "k"),
        ("__keyevent@0__:persist", "k"),
        ("__keyevent@0__:rename_from", "k"),
        ("__keyevent@0__:rename_to", "k2"),
        ("__keyevent@0__:copy_to", "k3"),
        ("__keyevent@3__:copy_to", "k4"),
        ("__keyevent@0__:move_from", "m"),
        ("__keyevent@5__:move_to", "m"),
        ("__keyevent@0__:del", "k2"),
        ("__keyevent@0__:del", "k3"),
        ("__keyevent@0__:del", "k"),
        ("__keyevent@0__:keymiss", "nokey"),
        ("__keyevent@0__:keymiss", "n2"),
        ("__keyevent@0__:keymiss", "nokey"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(pmessages(&mut sub).await, expected);
    s.shutdown().await;
}

#[tokio::test]
async fn expiretime_of_the_largest_pexpireat_rounds_like_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    assert_eq!(cmd!(c, "PEXPIREAT", "k", "9223372036854775807"), b":1\r\n");
    assert_eq!(cmd!(c, "EXPIRETIME", "k"), b":9223372036854776\r\n");
    assert_eq!(cmd!(c, "PEXPIRETIME", "k"), b":9223372036854775807\r\n");
}

/// The `lazyfreed_objects` figure of INFO memory.
async fn lazyfreed(c: &mut Raw) -> String {
    let info = String::from_utf8(c.cmd(&[b"INFO", b"memory"]).await).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("lazyfreed_objects:"))
        .expect("lazyfreed_objects")
        .trim()
        .to_string()
}

/// Wait (at most 5 s) until the lazy-free thread has freed `want` values in all.
async fn settle(c: &mut Raw, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while lazyfreed(c).await != want {
        assert!(
            Instant::now() < deadline,
            "lazyfreed_objects never reached {want}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// UNLINK (and DEL with lazyfree-lazy-user-del) frees a value of more than 64 allocations
/// on the lazy-free thread, counted in INFO as redis-server 7.0.15 counts it (recorded): a
/// small set is freed at once, a plain DEL frees synchronously, CONFIG RESETSTAT zeroes it.
#[tokio::test]
async fn unlink_frees_big_values_lazily_and_counts_them() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let script = b"for i=1,1000 do redis.call('sadd','big','m'..i) end \
        for i=1,1000 do redis.call('sadd','big2','m'..i) end \
        for i=1,1000 do redis.call('sadd','big3','m'..i) end \
        for i=1,10 do redis.call('sadd','small','m'..i) end return 1";
    assert_eq!(c.cmd(&[b"EVAL", script, b"0"]).await, b":1\r\n");
    assert_eq!(c.cmd(&[b"UNLINK", b"small"]).await, b":1\r\n");
    assert_eq!(lazyfreed(&mut c).await, "0");
    assert_eq!(c.cmd(&[b"UNLINK", b"big"]).await, b":1\r\n");
    settle(&mut c, "1").await;
    assert_eq!(c.cmd(&[b"DEL", b"big2"]).await, b":1\r\n");
    assert_eq!(lazyfreed(&mut c).await, "1");
    c.cmd(&[b"CONFIG", b"SET", b"lazyfree-lazy-user-del", b"yes"])
        .await;
    assert_eq!(c.cmd(&[b"DEL", b"big3"]).await, b":1\r\n");
    settle(&mut c, "2").await;
    assert_eq!(c.cmd(&[b"CONFIG", b"RESETSTAT"]).await, b"+OK\r\n");
    assert_eq!(lazyfreed(&mut c).await, "0");
    s.shutdown().await;
}
