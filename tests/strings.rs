//! The strings and counters family. Every expected reply was recorded from redis-server 7.0.15.

mod common;
use common::*;
use resplock::keyspace::{Entry, Value};
use resplock::types::hash::Hash;
use resplock::ServerHandle;

const WRONGTYPE: &[u8] = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const NOT_INT: &[u8] = b"-ERR value is not an integer or out of range\r\n";
const NOT_FLOAT: &[u8] = b"-ERR value is not a valid float\r\n";
const SYNTAX: &[u8] = b"-ERR syntax error\r\n";
const NIL: &[u8] = b"$-1\r\n";
const OK: &[u8] = b"+OK\r\n";
const EMPTY: &[u8] = b"$0\r\n\r\n";

/// Store a hash at `key` directly, so wrong-type checks do not depend on the hash commands.
fn put_hash(s: &ServerHandle, key: &str) {
    let mut h = Hash::new();
    h.set(b"f", b"v");
    s.state()
        .keyspace
        .db(0)
        .lock(key.as_bytes())
        .insert(key.as_bytes(), Entry::new(Value::Hash(h)));
}

/// The key's absolute expiry in ms (0: none), or None if the key is missing.
fn expires_at(s: &ServerHandle, key: &str) -> Option<i64> {
    let now = s.state().clock.now_ms();
    s.state()
        .keyspace
        .db(0)
        .lock(key.as_bytes())
        .get(key.as_bytes(), now)
        .map(|e| e.expires_at())
}

/// Remaining TTL in ms as PTTL would say it (-1: none, -2: missing).
fn pttl(s: &ServerHandle, key: &str) -> i64 {
    match expires_at(s, key) {
        None => -2,
        Some(0) => -1,
        Some(t) => t - s.state().clock.now_ms(),
    }
}

async fn setup() -> (ServerHandle, Raw) {
    let s = server().await;
    let c = Raw::connect(&s).await;
    (s, c)
}

// ---------------------------------------------------------------- GET / SET

#[tokio::test]
async fn get_returns_value_nil_or_wrongtype() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "hello"), OK);
    assert_eq!(cmd!(c, "GET", "k"), b"$5\r\nhello\r\n");
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "GET", "h"), WRONGTYPE);
    s.shutdown().await;
}

#[tokio::test]
async fn get_and_set_count_keyspace_hits_and_misses() {
    let (s, mut c) = setup().await;
    let stats = &s.state().stats;
    let hits = || stats.keyspace_hits.get();
    let misses = || stats.keyspace_misses.get();
    cmd!(c, "GET", "k");
    cmd!(c, "SET", "k", "v");
    cmd!(c, "GET", "k");
    cmd!(c, "MGET", "k", "nope");
    assert_eq!((hits(), misses()), (2, 2));
    s.shutdown().await;
}

#[tokio::test]
async fn set_overwrites_any_type_and_clears_ttl() {
    let (s, mut c) = setup().await;
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "SET", "h", "v"), OK);
    assert_eq!(cmd!(c, "GET", "h"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "SET", "k", "v", "EX", "100"), OK);
    assert!(pttl(&s, "k") > 99_000);
    assert_eq!(cmd!(c, "SET", "k", "w"), OK);
    assert_eq!(pttl(&s, "k"), -1);
    s.shutdown().await;
}

#[tokio::test]
async fn set_keepttl_keeps_the_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v", "px", "100000"), OK);
    let at = expires_at(&s, "k").unwrap();
    assert_eq!(cmd!(c, "SET", "k", "w", "keepttl"), OK);
    assert_eq!(expires_at(&s, "k"), Some(at));
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nw\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn set_expire_options_set_absolute_and_relative_times() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "a", "v", "EX", "10"), OK);
    assert!((9_900..=10_000).contains(&pttl(&s, "a")));
    assert_eq!(cmd!(c, "SET", "b", "v", "PX", "1500"), OK);
    assert!((1_400..=1_500).contains(&pttl(&s, "b")));
    assert_eq!(cmd!(c, "SET", "c", "v", "EXAT", "99999999999"), OK);
    assert_eq!(expires_at(&s, "c"), Some(99_999_999_999_000));
    assert_eq!(cmd!(c, "SET", "d", "v", "PXAT", "99999999999999"), OK);
    assert_eq!(expires_at(&s, "d"), Some(99_999_999_999_999));
    // The same unit twice is allowed: the last one wins.
    assert_eq!(cmd!(c, "SET", "e", "v", "ex", "1", "ex", "100"), OK);
    assert!(pttl(&s, "e") > 99_000);
    s.shutdown().await;
}

#[tokio::test]
async fn set_key_expires_when_clock_passes_ttl() {
    let (s, mut c) = setup().await;
    // Frozen, so the margins below are the test's own: a running clock adds the real time
    // between the requests, more than the 1 ms margin on a loaded machine.
    s.state().clock.freeze();
    assert_eq!(cmd!(c, "SET", "k", "v", "PX", "1000"), OK);
    s.state().clock.advance_ms(999);
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nv\r\n");
    s.state().clock.advance_ms(2);
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    s.shutdown().await;
}

#[tokio::test]
async fn set_exat_pxat_in_the_past_leaves_no_key() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v", "PXAT", "1"), OK);
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "v", "EXAT", "1"), OK);
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    s.shutdown().await;
}

#[tokio::test]
async fn set_invalid_expire_times() {
    let (s, mut c) = setup().await;
    let invalid: &[u8] = b"-ERR invalid expire time in 'set' command\r\n";
    assert_eq!(cmd!(c, "SET", "k", "v", "EX", "0"), invalid);
    assert_eq!(cmd!(c, "SET", "k", "v", "PX", "-5"), invalid);
    assert_eq!(cmd!(c, "SET", "k", "v", "EX", "9223372036854775"), invalid);
    assert_eq!(cmd!(c, "SET", "k", "v", "EX", "9223372036854776"), invalid);
    assert_eq!(
        cmd!(c, "SET", "k", "v", "PX", "9223372036854775807"),
        invalid
    );
    assert_eq!(cmd!(c, "SET", "k", "v", "EX", "abc"), NOT_INT);
    assert_eq!(cmd!(c, "SET", "k", "v", "EXAT", "9223372036854775"), OK);
    s.shutdown().await;
}

#[tokio::test]
async fn set_conflicting_or_incomplete_options_are_syntax_errors() {
    let (s, mut c) = setup().await;
    for args in [
        &["SET", "k", "v", "ex"][..],
        &["SET", "k", "v", "ex", "10", "nx", "xx"],
        &["SET", "k", "v", "xx", "nx"],
        &["SET", "k", "v", "px", "100", "keepttl"],
        &["SET", "k", "v", "keepttl", "px", "100"],
        &["SET", "k", "v", "ex", "1", "px", "100"],
        &["SET", "k", "v", "exat", "1", "pxat", "100"],
        &["SET", "k", "v", "persist"],
        &["SET", "k", "v", "foo"],
    ] {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        assert_eq!(c.cmd(&argv).await, SYNTAX, "{args:?}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn set_repeated_flags_are_accepted() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(cmd!(c, "SET", "k", "v", "nx", "NX"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "v", "keepttl", "KEEPTTL"), OK);
    assert_eq!(cmd!(c, "SET", "k", "w", "get", "get"), b"$1\r\nv\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn set_option_names_stop_at_nul_like_c_strings() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(cmd!(c, "SET", "k", "v", b"nx\x00zz"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "w", b"keepttl\x00zz"), OK);
    s.shutdown().await;
}

#[tokio::test]
async fn set_nx_xx_reply_nil_when_not_written() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v", "XX"), NIL);
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "v", "NX"), OK);
    assert_eq!(cmd!(c, "SET", "k", "w", "NX"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "w", "XX"), OK);
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nw\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn set_get_returns_old_value_with_nx_and_xx() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "m", "v", "GET"), NIL);
    assert_eq!(cmd!(c, "GET", "m"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    // NX + GET on an existing key: old value, not written.
    assert_eq!(cmd!(c, "SET", "k", "w", "NX", "GET"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nv\r\n");
    // NX + GET on a missing key: nil, written.
    assert_eq!(cmd!(c, "SET", "k2", "w", "NX", "GET"), NIL);
    assert_eq!(cmd!(c, "GET", "k2"), b"$1\r\nw\r\n");
    // XX + GET on a missing key: nil, not written.
    assert_eq!(cmd!(c, "SET", "k3", "w", "XX", "GET"), NIL);
    assert_eq!(cmd!(c, "GET", "k3"), NIL);
    assert_eq!(cmd!(c, "SET", "k", "x", "XX", "GET"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nx\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn set_get_on_wrong_type_fails_without_writing() {
    let (s, mut c) = setup().await;
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "SET", "h", "v", "GET"), WRONGTYPE);
    assert_eq!(cmd!(c, "SET", "h", "v", "NX", "GET"), WRONGTYPE);
    assert_eq!(cmd!(c, "GET", "h"), WRONGTYPE);
    // The expire time is checked first.
    assert_eq!(
        cmd!(c, "SET", "h", "v", "EX", "0", "GET"),
        b"-ERR invalid expire time in 'set' command\r\n"
    );
    assert_eq!(cmd!(c, "SET", "h", "v", "EX", "abc", "GET"), NOT_INT);
    s.shutdown().await;
}

#[tokio::test]
async fn set_stores_binary_values() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", b"k\x00\r\n", b"\x00\xff\r\n"), OK);
    assert_eq!(cmd!(c, "GET", b"k\x00\r\n"), b"$4\r\n\x00\xff\r\n\r\n");
    assert_eq!(cmd!(c, "SET", "e", ""), OK);
    assert_eq!(cmd!(c, "GET", "e"), EMPTY);
    s.shutdown().await;
}

// ---------------------------------------------------------------- SETNX / SETEX / PSETEX

#[tokio::test]
async fn setnx_sets_only_missing_keys() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SETNX", "k", "a"), b":1\r\n");
    assert_eq!(cmd!(c, "SETNX", "k", "b"), b":0\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\na\r\n");
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "SETNX", "h", "b"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn setex_and_psetex_set_value_and_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SETEX", "k", "10", "v"), OK);
    assert!((9_900..=10_000).contains(&pttl(&s, "k")));
    assert_eq!(cmd!(c, "GET", "k"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "PSETEX", "p", "1500", "v"), OK);
    assert!((1_400..=1_500).contains(&pttl(&s, "p")));
    s.state().clock.advance_ms(1_501);
    assert_eq!(cmd!(c, "GET", "p"), NIL);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "SETEX", "h", "10", "v"), OK);
    s.shutdown().await;
}

#[tokio::test]
async fn setex_rejects_zero_negative_and_bad_times() {
    let (s, mut c) = setup().await;
    let setex: &[u8] = b"-ERR invalid expire time in 'setex' command\r\n";
    assert_eq!(cmd!(c, "SETEX", "k", "0", "v"), setex);
    assert_eq!(cmd!(c, "SETEX", "k", "-1", "v"), setex);
    assert_eq!(cmd!(c, "SETEX", "k", "9223372036854776", "v"), setex);
    assert_eq!(cmd!(c, "SETEX", "k", "abc", "v"), NOT_INT);
    assert_eq!(
        cmd!(c, "PSETEX", "k", "0", "v"),
        b"-ERR invalid expire time in 'psetex' command\r\n"
    );
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    s.shutdown().await;
}

// ---------------------------------------------------------------- GETSET / GETDEL / GETEX

#[tokio::test]
async fn getset_returns_old_value_and_clears_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "GETSET", "k", "1"), NIL);
    assert_eq!(cmd!(c, "GETSET", "k", "2"), b"$1\r\n1\r\n");
    assert_eq!(cmd!(c, "SET", "t", "v", "EX", "100"), OK);
    assert_eq!(cmd!(c, "GETSET", "t", "w"), b"$1\r\nv\r\n");
    assert_eq!(pttl(&s, "t"), -1);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "GETSET", "h", "v"), WRONGTYPE);
    assert_eq!(cmd!(c, "GET", "h"), WRONGTYPE);
    s.shutdown().await;
}

#[tokio::test]
async fn getdel_removes_key_and_returns_old_value() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(cmd!(c, "GETDEL", "k"), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "GETDEL", "k"), NIL);
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "GETDEL", "h"), WRONGTYPE);
    assert_eq!(expires_at(&s, "h"), Some(0));
    s.shutdown().await;
}

#[tokio::test]
async fn getex_sets_and_removes_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(cmd!(c, "GETEX", "k"), b"$1\r\nv\r\n");
    assert_eq!(pttl(&s, "k"), -1);
    assert_eq!(cmd!(c, "GETEX", "k", "EX", "10"), b"$1\r\nv\r\n");
    assert!((9_900..=10_000).contains(&pttl(&s, "k")));
    assert_eq!(cmd!(c, "GETEX", "k", "px", "1500"), b"$1\r\nv\r\n");
    assert!((1_400..=1_500).contains(&pttl(&s, "k")));
    assert_eq!(cmd!(c, "GETEX", "k", "exat", "99999999999"), b"$1\r\nv\r\n");
    assert_eq!(expires_at(&s, "k"), Some(99_999_999_999_000));
    assert_eq!(
        cmd!(c, "GETEX", "k", "PXAT", "99999999999999"),
        b"$1\r\nv\r\n"
    );
    assert_eq!(expires_at(&s, "k"), Some(99_999_999_999_999));
    assert_eq!(cmd!(c, "GETEX", "k", "PERSIST"), b"$1\r\nv\r\n");
    assert_eq!(pttl(&s, "k"), -1);
    assert_eq!(cmd!(c, "GETEX", "k", "persist", "persist"), b"$1\r\nv\r\n");
    assert_eq!(
        cmd!(c, "GETEX", "k", "ex", "10", "ex", "20"),
        b"$1\r\nv\r\n"
    );
    assert!(pttl(&s, "k") > 19_000);
    s.shutdown().await;
}

#[tokio::test]
async fn getex_absolute_time_in_the_past_deletes_the_key() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(cmd!(c, "GETEX", "k", "EXAT", "1"), b"$1\r\nv\r\n");
    assert_eq!(expires_at(&s, "k"), None);
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    let now = s.state().clock.now_ms().to_string();
    assert_eq!(cmd!(c, "GETEX", "k", "PXAT", now), b"$1\r\nv\r\n");
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    s.shutdown().await;
}

#[tokio::test]
async fn getex_errors_follow_redis_order() {
    let (s, mut c) = setup().await;
    // Missing key: nil even with an invalid time.
    assert_eq!(cmd!(c, "GETEX", "nokey", "EX", "0"), NIL);
    // Wrong type is reported before the invalid time.
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "GETEX", "h", "EX", "0"), WRONGTYPE);
    assert_eq!(cmd!(c, "GETEX", "h"), WRONGTYPE);
    assert_eq!(cmd!(c, "SET", "k", "v"), OK);
    assert_eq!(
        cmd!(c, "GETEX", "k", "EX", "0"),
        b"-ERR invalid expire time in 'getex' command\r\n"
    );
    assert_eq!(cmd!(c, "GETEX", "k", "EX", "x"), NOT_INT);
    // Option errors come first of all.
    assert_eq!(cmd!(c, "GETEX", "nokey", "EX"), SYNTAX);
    for opt in [
        &["ex", "10", "persist"][..],
        &["persist", "ex", "10"],
        &["ex", "10", "px", "10"],
        &["nx"],
        &["xx"],
        &["keepttl"],
        &["get"],
        &["ex"],
    ] {
        let mut argv: Vec<&[u8]> = vec![b"GETEX", b"k"];
        argv.extend(opt.iter().map(|a| a.as_bytes()));
        assert_eq!(c.cmd(&argv).await, SYNTAX, "{opt:?}");
    }
    assert_eq!(pttl(&s, "k"), -1);
    s.shutdown().await;
}

// ---------------------------------------------------------------- MGET / MSET / MSETNX

#[tokio::test]
async fn mget_returns_nil_for_missing_and_wrong_type() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "MSET", "a", "1", "b", "2"), OK);
    put_hash(&s, "h");
    assert_eq!(
        cmd!(c, "MGET", "a", "h", "nokey", "b", "a"),
        b"*5\r\n$1\r\n1\r\n$-1\r\n$-1\r\n$1\r\n2\r\n$1\r\n1\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn mset_overwrites_clears_ttl_and_last_duplicate_wins() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "a", "old", "EX", "100"), OK);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "MSET", "a", "1", "h", "2", "a", "3"), OK);
    assert_eq!(cmd!(c, "MGET", "a", "h"), b"*2\r\n$1\r\n3\r\n$1\r\n2\r\n");
    assert_eq!(pttl(&s, "a"), -1);
    s.shutdown().await;
}

#[tokio::test]
async fn mset_and_msetnx_need_pairs() {
    let (s, mut c) = setup().await;
    assert_eq!(
        cmd!(c, "MSET", "a"),
        b"-ERR wrong number of arguments for 'mset' command\r\n"
    );
    assert_eq!(
        cmd!(c, "MSET", "a", "1", "b"),
        b"-ERR wrong number of arguments for 'mset' command\r\n"
    );
    assert_eq!(
        cmd!(c, "MSETNX", "a", "1", "b"),
        b"-ERR wrong number of arguments for 'msetnx' command\r\n"
    );
    assert_eq!(
        cmd!(c, "MGET"),
        b"-ERR wrong number of arguments for 'mget' command\r\n"
    );
    assert_eq!(cmd!(c, "GET", "a"), NIL);
    s.shutdown().await;
}

#[tokio::test]
async fn msetnx_is_all_or_nothing() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "MSETNX", "c", "1", "d", "2"), b":1\r\n");
    assert_eq!(cmd!(c, "MSETNX", "c", "9", "e", "2"), b":0\r\n");
    assert_eq!(cmd!(c, "MGET", "c", "e"), b"*2\r\n$1\r\n1\r\n$-1\r\n");
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "MSETNX", "f", "1", "h", "2"), b":0\r\n");
    assert_eq!(cmd!(c, "GET", "f"), NIL);
    // Duplicate new keys: the last value wins.
    assert_eq!(cmd!(c, "MSETNX", "a", "1", "a", "2"), b":1\r\n");
    assert_eq!(cmd!(c, "GET", "a"), b"$1\r\n2\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn msetnx_sees_expired_keys_as_missing() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "a", "v", "PX", "100"), OK);
    assert_eq!(cmd!(c, "MSETNX", "a", "1", "b", "2"), b":0\r\n");
    s.state().clock.advance_ms(101);
    assert_eq!(cmd!(c, "MSETNX", "a", "1", "b", "2"), b":1\r\n");
    assert_eq!(pttl(&s, "a"), -1);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mset_is_atomic_for_concurrent_mget() {
    let s = server().await;
    let mut w = Raw::connect(&s).await;
    let mut r = Raw::connect(&s).await;
    // Keys spread over many shards.
    let keys: Vec<String> = (0..16).map(|i| format!("key:{i}")).collect();
    let writer = tokio::spawn(async move {
        for n in 0..300 {
            let v = n.to_string();
            let mut argv: Vec<&[u8]> = vec![b"MSET"];
            for k in &keys {
                argv.push(k.as_bytes());
                argv.push(v.as_bytes());
            }
            assert_eq!(w.cmd(&argv).await, OK);
        }
    });
    let mget: Vec<String> = (0..16).map(|i| format!("key:{i}")).collect();
    for _ in 0..300 {
        let mut argv: Vec<&[u8]> = vec![b"MGET"];
        argv.extend(mget.iter().map(|k| k.as_bytes()));
        let reply = r.cmd(&argv).await;
        let text = String::from_utf8(reply).unwrap();
        let mut lines = text.split("\r\n").skip(1);
        let mut values = Vec::new();
        while let Some(head) = lines.next() {
            match head {
                "$-1" => values.push("nil"),
                "" => {}
                _ => values.push(lines.next().unwrap()),
            }
        }
        assert_eq!(values.len(), 16);
        assert!(
            values.iter().all(|v| *v == values[0]),
            "torn MSET seen: {text:?}"
        );
    }
    writer.await.unwrap();
    s.shutdown().await;
}

// ---------------------------------------------------------------- APPEND / STRLEN / ranges

#[tokio::test]
async fn append_creates_extends_and_keeps_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "APPEND", "k", "Hello"), b":5\r\n");
    assert_eq!(cmd!(c, "APPEND", "k", " World"), b":11\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$11\r\nHello World\r\n");
    assert_eq!(cmd!(c, "APPEND", "e", ""), b":0\r\n");
    assert_eq!(cmd!(c, "GET", "e"), EMPTY);
    assert_eq!(cmd!(c, "SET", "t", "a", "EX", "100"), OK);
    assert_eq!(cmd!(c, "APPEND", "t", "b"), b":2\r\n");
    assert!(pttl(&s, "t") > 99_000);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "APPEND", "h", "x"), WRONGTYPE);
    s.shutdown().await;
}

#[tokio::test]
async fn append_many_times_builds_the_whole_string() {
    let (s, mut c) = setup().await;
    for i in 0..200 {
        let reply = cmd!(c, "APPEND", "k", "ab");
        assert_eq!(reply, format!(":{}\r\n", 2 * (i + 1)).into_bytes());
    }
    let mut expected = b"$400\r\n".to_vec();
    expected.extend(b"ab".repeat(200));
    expected.extend(b"\r\n");
    assert_eq!(cmd!(c, "GET", "k"), expected);
    s.shutdown().await;
}

#[tokio::test]
async fn strlen_counts_bytes() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "STRLEN", "k"), b":0\r\n");
    assert_eq!(cmd!(c, "SET", "k", "12345"), OK);
    assert_eq!(cmd!(c, "STRLEN", "k"), b":5\r\n");
    assert_eq!(cmd!(c, "SET", "k", b"\xff\x00"), OK);
    assert_eq!(cmd!(c, "STRLEN", "k"), b":2\r\n");
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "STRLEN", "h"), WRONGTYPE);
    s.shutdown().await;
}

#[tokio::test]
async fn getrange_handles_negative_and_out_of_range_indexes() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "s", "Hello World"), OK);
    let cases: &[(&str, &str, &[u8])] = &[
        ("0", "3", b"$4\r\nHell\r\n"),
        ("-3", "-1", b"$3\r\nrld\r\n"),
        ("0", "-1", b"$11\r\nHello World\r\n"),
        ("10", "100", b"$1\r\nd\r\n"),
        ("-1", "-5", EMPTY),
        ("-100", "-200", EMPTY),
        ("5", "2", EMPTY),
        ("-100", "2", b"$3\r\nHel\r\n"),
        ("100", "200", EMPTY),
        (
            "-9223372036854775808",
            "9223372036854775807",
            b"$11\r\nHello World\r\n",
        ),
        ("0", "0", b"$1\r\nH\r\n"),
        ("-1", "0", EMPTY),
    ];
    for (start, end, want) in cases {
        assert_eq!(&cmd!(c, "GETRANGE", "s", start, end), want, "{start} {end}");
    }
    assert_eq!(cmd!(c, "SUBSTR", "s", "0", "4"), b"$5\r\nHello\r\n");
    assert_eq!(cmd!(c, "SET", "e", ""), OK);
    assert_eq!(cmd!(c, "GETRANGE", "e", "0", "-1"), EMPTY);
    assert_eq!(cmd!(c, "GETRANGE", "e", "-1", "0"), EMPTY);
    assert_eq!(cmd!(c, "GETRANGE", "nokey", "0", "1"), EMPTY);
    s.shutdown().await;
}

#[tokio::test]
async fn getrange_checks_indexes_before_the_key() {
    let (s, mut c) = setup().await;
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "GETRANGE", "h", "a", "1"), NOT_INT);
    assert_eq!(cmd!(c, "GETRANGE", "nokey", "0", "b"), NOT_INT);
    assert_eq!(cmd!(c, "GETRANGE", "h", "0", "1"), WRONGTYPE);
    assert_eq!(cmd!(c, "SUBSTR", "h", "0", "1"), WRONGTYPE);
    s.shutdown().await;
}

#[tokio::test]
async fn setrange_pads_with_zero_bytes_and_overwrites() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SETRANGE", "k", "2", "x"), b":3\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$3\r\n\x00\x00x\r\n");
    assert_eq!(cmd!(c, "SET", "s", "Hello World"), OK);
    assert_eq!(cmd!(c, "SETRANGE", "s", "6", "Redis"), b":11\r\n");
    assert_eq!(cmd!(c, "GET", "s"), b"$11\r\nHello Redis\r\n");
    assert_eq!(cmd!(c, "SETRANGE", "s", "9", "Redis!"), b":15\r\n");
    assert_eq!(cmd!(c, "GET", "s"), b"$15\r\nHello RedRedis!\r\n");
    assert_eq!(cmd!(c, "SET", "t", "abc", "EX", "100"), OK);
    assert_eq!(cmd!(c, "SETRANGE", "t", "0", "x"), b":3\r\n");
    assert!(pttl(&s, "t") > 99_000);
    s.shutdown().await;
}

#[tokio::test]
async fn setrange_with_empty_value_writes_nothing() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SETRANGE", "k", "1", ""), b":0\r\n");
    assert_eq!(cmd!(c, "GET", "k"), NIL);
    // No size check when nothing is written.
    assert_eq!(cmd!(c, "SETRANGE", "k", "536870912", ""), b":0\r\n");
    assert_eq!(cmd!(c, "SET", "k", "abc"), OK);
    assert_eq!(cmd!(c, "SETRANGE", "k", "536870912", ""), b":3\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn setrange_offset_errors() {
    let (s, mut c) = setup().await;
    let too_big: &[u8] = b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
    assert_eq!(
        cmd!(c, "SETRANGE", "k", "-1", "x"),
        b"-ERR offset is out of range\r\n"
    );
    assert_eq!(cmd!(c, "SETRANGE", "k", "abc", "x"), NOT_INT);
    assert_eq!(
        cmd!(c, "SETRANGE", "k", "9223372036854775808", "x"),
        NOT_INT
    );
    assert_eq!(cmd!(c, "SETRANGE", "k", "536870912", "x"), too_big);
    assert_eq!(cmd!(c, "SETRANGE", "k", "536870911", "xy"), too_big);
    assert_eq!(
        cmd!(c, "SETRANGE", "k", "9223372036854775807", "x"),
        too_big
    );
    assert_eq!(cmd!(c, "SET", "k", "abc"), OK);
    assert_eq!(cmd!(c, "SETRANGE", "k", "536870912", "x"), too_big);
    put_hash(&s, "h");
    assert_eq!(
        cmd!(c, "SETRANGE", "h", "-1", ""),
        b"-ERR offset is out of range\r\n"
    );
    assert_eq!(cmd!(c, "SETRANGE", "h", "0", ""), WRONGTYPE);
    assert_eq!(cmd!(c, "SETRANGE", "h", "0", "x"), WRONGTYPE);
    s.shutdown().await;
}

// ---------------------------------------------------------------- counters

#[tokio::test]
async fn incr_decr_family_counts() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "INCR", "n"), b":1\r\n");
    assert_eq!(cmd!(c, "INCRBY", "n", "10"), b":11\r\n");
    assert_eq!(cmd!(c, "DECR", "n"), b":10\r\n");
    assert_eq!(cmd!(c, "DECRBY", "n", "15"), b":-5\r\n");
    assert_eq!(cmd!(c, "INCRBY", "n", "-5"), b":-10\r\n");
    assert_eq!(cmd!(c, "GET", "n"), b"$3\r\n-10\r\n");
    assert_eq!(cmd!(c, "DECR", "m"), b":-1\r\n");
    assert_eq!(cmd!(c, "SET", "n", "9223372036854775806"), OK);
    assert_eq!(cmd!(c, "INCR", "n"), b":9223372036854775807\r\n");
    assert_eq!(cmd!(c, "INCRBY", "n", "0"), b":9223372036854775807\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn incr_overflow_is_an_error() {
    let (s, mut c) = setup().await;
    let overflow: &[u8] = b"-ERR increment or decrement would overflow\r\n";
    assert_eq!(cmd!(c, "SET", "n", "9223372036854775807"), OK);
    assert_eq!(cmd!(c, "INCR", "n"), overflow);
    assert_eq!(cmd!(c, "INCRBY", "n", "9223372036854775807"), overflow);
    assert_eq!(cmd!(c, "SET", "n", "-9223372036854775808"), OK);
    assert_eq!(cmd!(c, "DECR", "n"), overflow);
    assert_eq!(cmd!(c, "DECRBY", "n", "1"), overflow);
    assert_eq!(cmd!(c, "GET", "n"), b"$20\r\n-9223372036854775808\r\n");
    let decr: &[u8] = b"-ERR decrement would overflow\r\n";
    assert_eq!(cmd!(c, "DECRBY", "n", "-9223372036854775808"), decr);
    assert_eq!(cmd!(c, "DECRBY", "x", "-9223372036854775808"), decr);
    assert_eq!(cmd!(c, "GET", "x"), NIL);
    s.shutdown().await;
}

#[tokio::test]
async fn incr_rejects_non_integer_values_and_increments() {
    let (s, mut c) = setup().await;
    for bad in [
        "abc",
        " 1",
        "1 ",
        "-0",
        "01",
        "+1",
        "1.5",
        "",
        "9223372036854775808",
    ] {
        assert_eq!(cmd!(c, "SET", "s", bad), OK);
        assert_eq!(cmd!(c, "INCR", "s"), NOT_INT, "{bad:?}");
    }
    assert_eq!(cmd!(c, "INCRBY", "x", "9223372036854775808"), NOT_INT);
    assert_eq!(cmd!(c, "INCRBY", "x", "abc"), NOT_INT);
    assert_eq!(cmd!(c, "INCRBY", "x", " 1"), NOT_INT);
    assert_eq!(cmd!(c, "DECRBY", "x", "1.0"), NOT_INT);
    put_hash(&s, "h");
    assert_eq!(cmd!(c, "INCR", "h"), WRONGTYPE);
    assert_eq!(cmd!(c, "DECR", "h"), WRONGTYPE);
    assert_eq!(cmd!(c, "INCRBY", "h", "1"), WRONGTYPE);
    // The increment is parsed before the key is looked at.
    assert_eq!(cmd!(c, "INCRBY", "h", "x"), NOT_INT);
    s.shutdown().await;
}

#[tokio::test]
async fn incr_keeps_the_ttl() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "n", "5", "EX", "100"), OK);
    let at = expires_at(&s, "n").unwrap();
    assert_eq!(cmd!(c, "INCR", "n"), b":6\r\n");
    assert_eq!(cmd!(c, "DECRBY", "n", "2"), b":4\r\n");
    assert_eq!(cmd!(c, "INCRBYFLOAT", "n", "0.5"), b"$3\r\n4.5\r\n");
    assert_eq!(expires_at(&s, "n"), Some(at));
    s.shutdown().await;
}

#[tokio::test]
async fn incr_on_expired_key_starts_from_zero() {
    let (s, mut c) = setup().await;
    assert_eq!(cmd!(c, "SET", "n", "5", "PX", "100"), OK);
    s.state().clock.advance_ms(101);
    assert_eq!(cmd!(c, "INCR", "n"), b":1\r\n");
    assert_eq!(pttl(&s, "n"), -1);
    s.shutdown().await;
}

#[tokio::test]
async fn incrbyfloat_formats_like_redis_long_double() {
    let (s, mut c) = setup().await;
    let cases: &[(&str, &str, &[u8])] = &[
        ("10.50", "0.1", b"$4\r\n10.6\r\n"),
        ("0.1", "0.2", b"$3\r\n0.3\r\n"),
        ("1000.1", "0", b"$22\r\n1000.09999999999999998\r\n"),
        ("123456.789", "0", b"$24\r\n123456.78900000000000148\r\n"),
        ("5.0e3", "2.0e2", b"$4\r\n5200\r\n"),
        ("1e20", "0", b"$21\r\n100000000000000000000\r\n"),
        ("1.5e-7", "0", b"$10\r\n0.00000015\r\n"),
        ("0.1", "-0.1", b"$1\r\n0\r\n"),
        ("-0.0000000000000000001", "0", b"$1\r\n0\r\n"),
        (
            "0.000003814697265625",
            "0",
            b"$19\r\n0.00000381469726562\r\n",
        ),
        (
            "5",
            "0.00000000000000001",
            b"$19\r\n5.00000000000000001\r\n",
        ),
        ("5", "0.000000000000000001", b"$1\r\n5\r\n"),
        ("3", "0x1p3", b"$2\r\n11\r\n"),
        ("3", ".5", b"$3\r\n3.5\r\n"),
        ("3", "5.", b"$1\r\n8\r\n"),
        ("3", "+1", b"$1\r\n4\r\n"),
        ("-5.25", "0", b"$5\r\n-5.25\r\n"),
        ("1e4000", "-1e4000", b"$1\r\n0\r\n"),
        ("0", "0e-99999", b"$1\r\n0\r\n"),
    ];
    for (start, incr, want) in cases {
        assert_eq!(cmd!(c, "SET", "f", start), OK);
        assert_eq!(&cmd!(c, "INCRBYFLOAT", "f", incr), want, "{start} + {incr}");
        // The reply is also the stored value.
        assert_eq!(&cmd!(c, "GET", "f"), want);
    }
    assert_eq!(cmd!(c, "INCRBYFLOAT", "new", "1.5"), b"$3\r\n1.5\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn incrbyfloat_prints_huge_values_in_full() {
    let (s, mut c) = setup().await;
    let reply = cmd!(c, "INCRBYFLOAT", "f", "1e300");
    let want = "1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144";
    assert_eq!(reply, format!("${}\r\n{want}\r\n", want.len()).into_bytes());
    let reply = cmd!(c, "INCRBYFLOAT", "g", "1e4932");
    assert!(reply.starts_with(b"$4933\r\n1000000000000000000006018949387963891323837774"));
    s.shutdown().await;
}

#[tokio::test]
async fn incrbyfloat_rejects_nan_infinity_and_bad_floats() {
    let (s, mut c) = setup().await;
    let nan_inf: &[u8] = b"-ERR increment would produce NaN or Infinity\r\n";
    for inf in ["inf", "-inf", "INF", "infinity"] {
        assert_eq!(cmd!(c, "INCRBYFLOAT", "f", inf), nan_inf, "{inf}");
    }
    assert_eq!(cmd!(c, "SET", "f", "1.18e4932"), OK);
    assert_eq!(cmd!(c, "INCRBYFLOAT", "f", "1.18e4932"), nan_inf);
    for bad in [
        "nan", "nan(123)", "1e99999", "1e-99999", "1e4933", "1e-4951", "0x", "0xg", "0x1p", "1p3",
        " 1", "1 ", "", ".", "1e", "1_0", "abc",
    ] {
        assert_eq!(cmd!(c, "INCRBYFLOAT", "f", bad), NOT_FLOAT, "{bad:?}");
    }
    assert_eq!(cmd!(c, "INCRBYFLOAT", "f", b"1\x00abc"), NOT_FLOAT);
    assert_eq!(cmd!(c, "GET", "f"), b"$9\r\n1.18e4932\r\n");
    assert_eq!(cmd!(c, "SET", "s", "abc"), OK);
    assert_eq!(cmd!(c, "INCRBYFLOAT", "s", "1"), NOT_FLOAT);
    put_hash(&s, "h");
    // The type is checked before the increment is parsed.
    assert_eq!(cmd!(c, "INCRBYFLOAT", "h", "x"), WRONGTYPE);
    s.shutdown().await;
}

// ---------------------------------------------------------------- arity and the table

#[tokio::test]
async fn wrong_arity_errors_name_the_command() {
    let (s, mut c) = setup().await;
    let cases: &[&[&str]] = &[
        &["get"],
        &["get", "a", "b"],
        &["set", "x"],
        &["setnx", "x"],
        &["setex", "x", "10"],
        &["psetex", "x", "10"],
        &["getset", "x"],
        &["getdel"],
        &["getex"],
        &["append", "x"],
        &["strlen"],
        &["getrange", "x", "0"],
        &["substr", "x", "0"],
        &["setrange", "x", "0"],
        &["incr"],
        &["incrby", "x"],
        &["decr"],
        &["decrby", "x"],
        &["incrbyfloat", "x"],
        &["mset", "a"],
        &["msetnx", "a"],
    ];
    for args in cases {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let want = format!(
            "-ERR wrong number of arguments for '{}' command\r\n",
            args[0]
        );
        assert_eq!(c.cmd(&argv).await, want.into_bytes());
    }
    s.shutdown().await;
}

#[test]
fn command_table_matches_redis_command_info() {
    use resplock::cmd::flags::*;
    // (name, arity, flags, first, last, step, since) from COMMAND INFO / COMMAND DOCS.
    let rows: &[(&str, i32, u32, i32, i32, i32, &str)] = &[
        ("get", 2, READONLY | FAST, 1, 1, 1, "1.0.0"),
        ("set", -3, WRITE | DENYOOM, 1, 1, 1, "1.0.0"),
        ("setnx", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("setex", 4, WRITE | DENYOOM, 1, 1, 1, "2.0.0"),
        ("psetex", 4, WRITE | DENYOOM, 1, 1, 1, "2.6.0"),
        ("getset", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("getdel", 2, WRITE | FAST, 1, 1, 1, "6.2.0"),
        ("getex", -2, WRITE | FAST, 1, 1, 1, "6.2.0"),
        ("mget", -2, READONLY | FAST, 1, -1, 1, "1.0.0"),
        ("mset", -3, WRITE | DENYOOM, 1, -1, 2, "1.0.1"),
        ("msetnx", -3, WRITE | DENYOOM, 1, -1, 2, "1.0.1"),
        ("append", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "2.0.0"),
        ("strlen", 2, READONLY | FAST, 1, 1, 1, "2.2.0"),
        ("getrange", 4, READONLY, 1, 1, 1, "2.4.0"),
        ("substr", 4, READONLY, 1, 1, 1, "1.0.0"),
        ("setrange", 4, WRITE | DENYOOM, 1, 1, 1, "2.2.0"),
        ("incr", 2, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("incrby", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("decr", 2, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("decrby", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "1.0.0"),
        ("incrbyfloat", 3, WRITE | DENYOOM | FAST, 1, 1, 1, "2.6.0"),
    ];
    for &(name, arity, flags, first, last, step, since) in rows {
        let c = resplock::cmd::lookup(name.as_bytes()).expect(name);
        assert_eq!(
            (c.arity, c.flags, c.first_key, c.last_key, c.step, c.since),
            (arity, flags, first, last, step, since),
            "{name}"
        );
        assert_eq!(c.group, "string", "{name}");
        assert!(!c.summary.is_empty(), "{name}");
    }
    assert_eq!(
        resplock::cmd::lookup(b"mset").unwrap().summary,
        "Set multiple keys to multiple values"
    );
}

// ---------------------------------------------------------------- RESP3 and keyspace events

#[tokio::test]
async fn resp3_nulls_and_float_replies() {
    let (s, mut c) = setup().await;
    c.cmd(&[b"HELLO", b"3"]).await;
    assert_eq!(cmd!(c, "SET", "a", "1"), OK);
    assert_eq!(cmd!(c, "MGET", "a", "zz"), b"*2\r\n$1\r\n1\r\n_\r\n");
    assert_eq!(cmd!(c, "GET", "zz"), b"_\r\n");
    assert_eq!(cmd!(c, "GETEX", "zz"), b"_\r\n");
    assert_eq!(cmd!(c, "SET", "zz", "v", "XX"), b"_\r\n");
    assert_eq!(cmd!(c, "INCRBYFLOAT", "f", "1.5"), b"$3\r\n1.5\r\n");
    s.shutdown().await;
}

/// (event, key) of each keyevent message until `marker` arrives on `key == "marker"`.
async fn keyevents_until_marker(sub: &mut Raw) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for _ in 0..200 {
        let frame = String::from_utf8(sub.reply().await).unwrap();
        let lines: Vec<&str> = frame.split("\r\n").collect();
        let event = lines[6].trim_start_matches("__keyevent@0__:").to_string();
        let key = lines[8].to_string();
        if key == "marker" {
            return out;
        }
        out.push((event, key));
    }
    panic!("no marker event");
}

#[tokio::test]
async fn commands_raise_redis_keyspace_events() {
    let mut config = resplock::Config::ephemeral();
    config.notify_keyspace_events = "KEAm".into();
    let s = server_with(config).await;
    let mut sub = Raw::connect(&s).await;
    sub.cmd(&[b"PSUBSCRIBE", b"__keyevent@0__:*"]).await;
    let mut c = Raw::connect(&s).await;
    put_hash(&s, "h");
    let script: &[&[&str]] = &[
        &["SET", "k", "v", "EX", "10"],
        &["SET", "k", "v", "KEEPTTL"],
        &["GET", "missing"],
        &["SET", "m", "v", "GET"],
        &["SET", "k", "w", "NX", "GET"],
        &["SET", "k3", "w", "XX", "GET"],
        &["GETEX", "k", "PERSIST"],
        &["GETEX", "k", "PERSIST"],
        &["GETEX", "k", "EX", "10"],
        &["GETEX", "k", "EXAT", "1"],
        &["SET", "k", "v"],
        &["GETDEL", "k"],
        &["GETSET", "k", "1"],
        &["INCR", "k"],
        &["INCRBYFLOAT", "k", "1.5"],
        &["APPEND", "k", "x"],
        &["APPEND", "new", ""],
        &["SETRANGE", "k", "1", "ab"],
        &["SETRANGE", "k", "1", ""],
        &["MSET", "a", "1", "b", "2"],
        &["MSETNX", "a", "1", "e", "2"],
        &["MGET", "a", "zz"],
        &["SETNX", "z", "1"],
        &["SETEX", "s", "10", "v"],
        &["STRLEN", "nokey"],
        &["GET", "h"],
        &["INCR", "h"],
        &["APPEND", "marker", "x"],
    ];
    for args in script {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        c.cmd(&argv).await;
    }
    let got = keyevents_until_marker(&mut sub).await;
    let want: Vec<(String, String)> = [
        ("set", "k"),
        ("expire", "k"),
        ("set", "k"),
        ("keymiss", "missing"),
        ("keymiss", "m"),
        ("set", "m"),
        ("keymiss", "k3"),
        ("persist", "k"),
        ("expire", "k"),
        ("del", "k"),
        ("set", "k"),
        ("del", "k"),
        ("keymiss", "k"),
        ("set", "k"),
        ("incrby", "k"),
        ("incrbyfloat", "k"),
        ("append", "k"),
        ("append", "new"),
        ("setrange", "k"),
        ("set", "a"),
        ("set", "b"),
        ("keymiss", "zz"),
        ("set", "z"),
        ("set", "s"),
        ("expire", "s"),
        ("keymiss", "nokey"),
    ]
    .iter()
    .map(|(e, k)| (e.to_string(), k.to_string()))
    .collect();
    assert_eq!(got, want);
    s.shutdown().await;
}
