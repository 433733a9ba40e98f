//! The append-only log's records: commands as RESP arrays of bulk strings, exactly as
//! redis-server appends them (catAppendOnlyGenericCommand, SELECT when the database changes,
//! `#TS:` annotations), and the commands an AOF-format rewrite rebuilds each key with
//! (rewriteAppendOnlyFileRio: SET, RPUSH/SADD/ZADD/HMSET in batches of 64, PEXPIREAT).

use crate::keyspace::{Entry, Value};

/// Items per command in a rewrite (AOF_REWRITE_ITEMS_PER_CMD).
pub const ITEMS_PER_CMD: usize = 64;

fn header(out: &mut Vec<u8>, tag: u8, n: usize) {
    out.push(tag);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// A bulk string.
pub fn bulk(out: &mut Vec<u8>, s: &[u8]) {
    header(out, b'$', s.len());
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

/// A bulk string of an integer's decimal form (rioWriteBulkLongLong).
pub fn bulk_int(out: &mut Vec<u8>, v: i64) {
    bulk(out, itoa::Buffer::new().format(v).as_bytes());
}

/// One command (catAppendOnlyGenericCommand).
pub fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    header(out, b'*', args.len());
    for a in args {
        bulk(out, a);
    }
}

/// SELECT `db`.
pub fn select(out: &mut Vec<u8>, db: usize) {
    out.extend_from_slice(b"*2\r\n$6\r\nSELECT\r\n");
    bulk_int(out, db as i64);
}

/// A timestamp annotation (`#TS:<unix seconds>`), which loading skips.
pub fn timestamp(out: &mut Vec<u8>, unix_secs: i64) {
    out.extend_from_slice(b"#TS:");
    out.extend_from_slice(itoa::Buffer::new().format(unix_secs).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// FUNCTION LOAD of a library's code (rewriteFunctions).
pub fn function_load(out: &mut Vec<u8>, code: &[u8]) {
    command(out, &[b"FUNCTION", b"LOAD", code]);
}

/// Emit `items` as `name key item...` commands of at most [`ITEMS_PER_CMD`] items, each
/// item `per_item` bulk strings written by `write`.
fn batched<I>(
    out: &mut Vec<u8>,
    name: &[u8],
    key: &[u8],
    total: usize,
    per_item: usize,
    items: I,
    mut write: impl FnMut(&mut Vec<u8>, I::Item),
) where
    I: Iterator,
{
    let mut left = total;
    let mut in_cmd = 0;
    for it in items {
        if in_cmd == 0 {
            let n = left.min(ITEMS_PER_CMD);
            header(out, b'*', 2 + n * per_item);
            bulk(out, name);
            bulk(out, key);
        }
        write(out, it);
        in_cmd += 1;
        left -= 1;
        if in_cmd == ITEMS_PER_CMD {
            in_cmd = 0;
        }
    }
}

/// A stream ID as one bulk string (`ms-seq`).
fn bulk_id(out: &mut Vec<u8>, id: crate::types::stream::StreamId) {
    bulk(out, id.to_string().as_bytes());
}

/// A stream as rewriteStreamObject writes it: its entries as XADDs (an empty stream as
/// `XADD key MAXLEN 0 0-1 x y`), XSETID with its counters, then per group XGROUP CREATE
/// with ENTRIESREAD, an XCLAIM ... JUSTID FORCE per pending entry, and XGROUP
/// CREATECONSUMER for consumers holding none.
fn rewrite_stream(out: &mut Vec<u8>, key: &[u8], st: &crate::types::stream::Stream) {
    use crate::types::stream::StreamId;
    if st.is_empty() {
        command(out, &[b"XADD", key, b"MAXLEN", b"0", b"0-1", b"x", b"y"]);
    } else {
        for e in st.range(StreamId::MIN, StreamId::MAX, false) {
            header(out, b'*', 3 + e.num_fields() * 2);
            bulk(out, b"XADD");
            bulk(out, key);
            bulk_id(out, e.id);
            for (f, v) in e.fields() {
                f.with_bytes(|b| bulk(out, b));
                v.with_bytes(|b| bulk(out, b));
            }
        }
    }
    let m = st.meta();
    header(out, b'*', 7);
    bulk(out, b"XSETID");
    bulk(out, key);
    bulk_id(out, m.last_id);
    bulk(out, b"ENTRIESADDED");
    bulk_int(out, m.entries_added as i64);
    bulk(out, b"MAXDELETEDID");
    bulk_id(out, m.max_deleted);
    for (name, g) in st.groups() {
        header(out, b'*', 7);
        bulk(out, b"XGROUP");
        bulk(out, b"CREATE");
        bulk(out, key);
        bulk(out, name);
        bulk_id(out, g.last_id());
        bulk(out, b"ENTRIESREAD");
        bulk_int(out, g.entries_read());
        for (cname, c) in g.consumers() {
            if c.pel_len() == 0 {
                command(out, &[b"XGROUP", b"CREATECONSUMER", key, name, cname]);
                continue;
            }
            for (id, nack) in g.consumer_pel(c) {
                header(out, b'*', 12);
                bulk(out, b"XCLAIM");
                bulk(out, key);
                bulk(out, name);
                bulk(out, cname);
                bulk(out, b"0");
                bulk_id(out, id);
                bulk(out, b"TIME");
                bulk_int(out, nack.delivery_time);
                bulk(out, b"RETRYCOUNT");
                bulk_int(out, nack.delivery_count as i64);
                bulk(out, b"JUSTID");
                bulk(out, b"FORCE");
            }
        }
    }
}

/// The commands that rebuild `key` with `entry`'s value and expiry.
pub fn rewrite_key(out: &mut Vec<u8>, key: &[u8], entry: &Entry) {
    match &entry.value {
        Value::Str(s) => command(out, &[b"SET", key, s]),
        Value::List(l) => batched(out, b"RPUSH", key, l.len(), 1, l.iter(), |o, e| {
            e.with_bytes(|b| bulk(o, b))
        }),
        Value::Set(s) => batched(out, b"SADD", key, s.len(), 1, s.iter(), |o, m| bulk(o, &m)),
        Value::ZSet(z) => batched(out, b"ZADD", key, z.len(), 2, z.iter(), |o, (m, sc)| {
            bulk(o, crate::num::format_double(sc).as_bytes());
            bulk(o, m);
        }),
        Value::Hash(h) => batched(out, b"HMSET", key, h.len(), 2, h.iter(), |o, (f, v)| {
            bulk(o, f);
            bulk(o, v);
        }),
        Value::Stream(st) => rewrite_stream(out, key, st),
    }
    let at = entry.expires_at();
    if at != 0 {
        out.extend_from_slice(b"*3\r\n$9\r\nPEXPIREAT\r\n");
        bulk(out, key);
        bulk_int(out, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::list::List;
    use bytes::Bytes;

    #[test]
    fn records_are_redis_resp() {
        let mut out = Vec::new();
        select(&mut out, 3);
        command(&mut out, &[b"SET", b"k", b""]);
        timestamp(&mut out, 1_700_000_000);
        assert_eq!(
            out,
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n#TS:1700000000\r\n"
        );
    }

    #[test]
    fn a_rewritten_key_comes_in_batches_of_64_then_its_expiry() {
        let mut l = List::new();
        for i in 0..130 {
            l.push_back(i.to_string().as_bytes(), -2);
        }
        let e = Entry::with_expiry(Value::List(l), 1_800_000_000_000);
        let mut out = Vec::new();
        rewrite_key(&mut out, b"l", &e);
        let text = String::from_utf8(out).expect("ascii");
        assert_eq!(text.matches("RPUSH").count(), 3);
        assert!(text.starts_with("*66\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\n0\r\n"));
        assert!(text.contains("*4\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$3\r\n128\r\n$3\r\n129\r\n"));
        assert!(text.ends_with("*3\r\n$9\r\nPEXPIREAT\r\n$1\r\nl\r\n$13\r\n1800000000000\r\n"));
        let mut out = Vec::new();
        rewrite_key(
            &mut out,
            b"s",
            &Entry::new(Value::Str(Bytes::from_static(b"v"))),
        );
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$1\r\ns\r\n$1\r\nv\r\n");
    }
}
