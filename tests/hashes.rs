mod common;
use common::*;

#[tokio::test]
async fn hset_counts_new_fields_and_hgetall_keeps_insertion_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "HSET", "h", "a", "1", "b", "2"), b":2\r\n");
    assert_eq!(cmd!(c, "HSET", "h", "a", "3", "c", "4"), b":1\r\n");
    assert_eq!(
        cmd!(c, "HGETALL", "h"),
        b"*6\r\n$1\r\na\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n4\r\n"
    );
    assert_eq!(
        cmd!(c, "HKEYS", "h"),
        b"*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"
    );
    assert_eq!(
        cmd!(c, "HVALS", "h"),
        b"*3\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n4\r\n"
    );
    assert_eq!(cmd!(c, "HLEN", "h"), b":3\r\n");
    assert_eq!(cmd!(c, "HMSET", "h", "d", "5"), b"+OK\r\n");
    assert_eq!(
        cmd!(c, "HSET", "h", "a"),
        &b"-ERR wrong number of arguments for 'hset' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HMSET", "h", "a", "1", "b"),
        &b"-ERR wrong number of arguments for 'hmset' command\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn hash_reads_answer_nil_zero_or_empty_for_missing_keys_and_fields() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "HGET", "nokey", "f"), b"$-1\r\n");
    assert_eq!(cmd!(c, "HMGET", "nokey", "a", "b"), b"*2\r\n$-1\r\n$-1\r\n");
    assert_eq!(cmd!(c, "HLEN", "nokey"), b":0\r\n");
    assert_eq!(cmd!(c, "HEXISTS", "nokey", "f"), b":0\r\n");
    assert_eq!(cmd!(c, "HSTRLEN", "nokey", "f"), b":0\r\n");
    assert_eq!(cmd!(c, "HGETALL", "nokey"), b"*0\r\n");
    assert_eq!(cmd!(c, "HSET", "h", "f", "hello"), b":1\r\n");
    assert_eq!(
        cmd!(c, "HMGET", "h", "f", "g"),
        b"*2\r\n$5\r\nhello\r\n$-1\r\n"
    );
    assert_eq!(cmd!(c, "HSTRLEN", "h", "f"), b":5\r\n");
    assert_eq!(cmd!(c, "HEXISTS", "h", "f"), b":1\r\n");
    assert_eq!(cmd!(c, "HRANDFIELD", "nokey"), b"$-1\r\n");
    assert_eq!(cmd!(c, "HRANDFIELD", "nokey", "3"), b"*0\r\n");
    assert_eq!(cmd!(c, "HSCAN", "nokey", "0"), b"*2\r\n$1\r\n0\r\n*0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn hash_commands_on_a_string_are_wrongtype() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "str", "v");
    let wt = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
    assert_eq!(cmd!(c, "HSET", "str", "f", "v"), wt);
    assert_eq!(cmd!(c, "HGET", "str", "f"), wt);
    assert_eq!(cmd!(c, "HEXISTS", "str", "f"), wt);
    assert_eq!(cmd!(c, "HINCRBY", "str", "f", "1"), wt);
    assert_eq!(cmd!(c, "HDEL", "str", "f"), wt);
    assert_eq!(cmd!(c, "HSCAN", "str", "0"), wt);
    s.shutdown().await;
}

#[tokio::test]
async fn hsetnx_sets_only_missing_fields() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "HSETNX", "h", "f", "1"), b":1\r\n");
    assert_eq!(cmd!(c, "HSETNX", "h", "f", "2"), b":0\r\n");
    assert_eq!(cmd!(c, "HGET", "h", "f"), b"$1\r\n1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn deleting_the_last_field_removes_the_key() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HSET", "lock", "uuid:1", "1", "uuid:2", "1");
    assert_eq!(cmd!(c, "HDEL", "lock", "uuid:1", "nope"), b":1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "lock"), b":1\r\n");
    assert_eq!(cmd!(c, "HDEL", "lock", "uuid:2", "uuid:2"), b":1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "lock"), b":0\r\n");
    assert_eq!(cmd!(c, "HDEL", "lock", "uuid:2"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn hincrby_counts_reentrant_holds_like_redisson() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "HINCRBY", "lock", "uuid:1", "1"), b":1\r\n");
    assert_eq!(cmd!(c, "HINCRBY", "lock", "uuid:1", "1"), b":2\r\n");
    assert_eq!(cmd!(c, "HINCRBY", "lock", "uuid:1", "-2"), b":0\r\n");
    assert_eq!(cmd!(c, "HGET", "lock", "uuid:1"), b"$1\r\n0\r\n");
    assert_eq!(
        cmd!(c, "HINCRBY", "lock", "uuid:1", "x"),
        &b"-ERR value is not an integer or out of range\r\n"[..]
    );
    cmd!(c, "HSET", "lock", "s", "abc");
    assert_eq!(
        cmd!(c, "HINCRBY", "lock", "s", "1"),
        &b"-ERR hash value is not an integer\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HINCRBY", "big", "f", "9223372036854775807"),
        &b":9223372036854775807\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HINCRBY", "big", "f", "1"),
        &b"-ERR increment or decrement would overflow\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HINCRBY", "big", "f", "-1"),
        &b":9223372036854775806\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn hincrbyfloat_uses_long_double_formatting() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "HINCRBYFLOAT", "f", "v", "1000.1"),
        &b"$22\r\n1000.09999999999999998\r\n"[..]
    );
    assert_eq!(cmd!(c, "HINCRBYFLOAT", "g", "v", "0.1"), b"$3\r\n0.1\r\n");
    assert_eq!(cmd!(c, "HINCRBYFLOAT", "g", "v", "0.2"), b"$3\r\n0.3\r\n");
    assert_eq!(cmd!(c, "HINCRBYFLOAT", "g", "v", "-0.3"), b"$1\r\n0\r\n");
    assert_eq!(
        cmd!(c, "HINCRBYFLOAT", "g", "v", "inf"),
        &b"-ERR value is NaN or Infinity\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HINCRBYFLOAT", "g", "v", "x"),
        &b"-ERR value is not a valid float\r\n"[..]
    );
    cmd!(c, "HSET", "g", "s", "abc");
    assert_eq!(
        cmd!(c, "HINCRBYFLOAT", "g", "s", "1"),
        &b"-ERR hash value is not a float\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn resp3_hgetall_is_a_map_and_hrandfield_pairs_are_arrays() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HELLO", "3");
    cmd!(c, "HSET", "h", "a", "1");
    assert_eq!(cmd!(c, "HGETALL", "h"), b"%1\r\n$1\r\na\r\n$1\r\n1\r\n");
    assert_eq!(cmd!(c, "HGETALL", "nokey"), b"%0\r\n");
    assert_eq!(cmd!(c, "HGET", "h", "zz"), b"_\r\n");
    assert_eq!(
        cmd!(c, "HRANDFIELD", "h", "-2", "WITHVALUES"),
        &b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn hrandfield_counts_and_errors() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HSET", "h", "a", "1", "b", "2");
    // A count at least the size returns every field once, in hash order.
    assert_eq!(
        cmd!(c, "HRANDFIELD", "h", "5", "WITHVALUES"),
        &b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"[..]
    );
    assert_eq!(cmd!(c, "HRANDFIELD", "h", "0"), b"*0\r\n");
    let r = cmd!(c, "HRANDFIELD", "h", "-5");
    assert!(
        r.starts_with(b"*5\r\n"),
        "{:?}",
        String::from_utf8_lossy(&r)
    );
    assert_eq!(
        cmd!(c, "HRANDFIELD", "h", "1", "foo"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(
        cmd!(c, "HRANDFIELD", "h", "-9223372036854775808"),
        &b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HRANDFIELD", "h", "4611686018427387904", "withvalues"),
        &b"-ERR value is out of range\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn hscan_returns_small_hashes_whole_and_filters_by_match() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HSET", "h", "a1", "x", "b1", "y", "a2", "z");
    assert_eq!(
        cmd!(c, "HSCAN", "h", "0", "COUNT", "1"),
        &b"*2\r\n$1\r\n0\r\n*6\r\n$2\r\na1\r\n$1\r\nx\r\n$2\r\nb1\r\n$1\r\ny\r\n$2\r\na2\r\n$1\r\nz\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HSCAN", "h", "0", "MATCH", "a*"),
        &b"*2\r\n$1\r\n0\r\n*4\r\n$2\r\na1\r\n$1\r\nx\r\n$2\r\na2\r\n$1\r\nz\r\n"[..]
    );
    assert_eq!(cmd!(c, "HSCAN", "h", "x"), b"-ERR invalid cursor\r\n");
    assert_eq!(
        cmd!(c, "HSCAN", "h", "0", "COUNT", "0"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(
        cmd!(c, "HSCAN", "h", "0", "MATCH"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(
        cmd!(c, "HSCAN", "h", "0", "COUNT", "x"),
        &b"-ERR value is not an integer or out of range\r\n"[..]
    );
    s.shutdown().await;
}

/// Parse `*2 $n cursor *m ...` into (cursor, fields) for HSCAN pages.
fn scan_page(r: &[u8]) -> (String, Vec<String>) {
    let text = String::from_utf8_lossy(r);
    let lines: Vec<&str> = text.split("\r\n").collect();
    let cursor = lines[2].to_string();
    let n: usize = lines[3][1..].parse().unwrap();
    let items: Vec<String> = (0..n).map(|i| lines[5 + 2 * i].to_string()).collect();
    let fields = items.chunks(2).map(|p| p[0].clone()).collect();
    (cursor, fields)
}

#[tokio::test]
async fn hscan_pages_through_a_large_hash_exactly_once() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    for i in 0..300 {
        cmd!(c, "HSET", "big", format!("field:{i}"), "v");
    }
    let mut seen = std::collections::HashSet::new();
    let mut cursor = "0".to_string();
    for _ in 0..1000 {
        let (next, fields) = scan_page(&cmd!(c, "HSCAN", "big", &cursor, "COUNT", "25"));
        for f in fields {
            assert!(seen.insert(f), "field returned twice");
        }
        cursor = next;
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(cursor, "0");
    assert_eq!(seen.len(), 300);
    s.shutdown().await;
}

#[tokio::test]
async fn hash_writes_raise_keyspace_events_and_del_when_emptied() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let mut sub = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "notify-keyspace-events", "KEA"),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(sub, "PSUBSCRIBE", "__keyevent@0__:*"),
        &b"*3\r\n$10\r\npsubscribe\r\n$16\r\n__keyevent@0__:*\r\n:1\r\n"[..]
    );
    cmd!(c, "HSET", "ev", "f", "1");
    cmd!(c, "HINCRBY", "ev", "f", "2");
    cmd!(c, "HINCRBYFLOAT", "ev", "f", "1.5");
    cmd!(c, "HSETNX", "ev", "f", "x");
    cmd!(c, "HDEL", "ev", "f");
    for event in ["hset", "hincrby", "hincrbyfloat", "hdel", "del"] {
        let ch = format!("__keyevent@0__:{event}");
        let want = format!(
            "*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@0__:*\r\n${}\r\n{ch}\r\n$2\r\nev\r\n",
            ch.len()
        );
        assert_eq!(String::from_utf8_lossy(&sub.reply().await), want);
    }
    s.shutdown().await;
}
