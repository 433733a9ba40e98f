//! The reply encoder, checked by an independent decoder (redis-protocol): any reply value
//! encodes in RESP2 and RESP3 to exactly one frame that decodes to what the value means in
//! that protocol (maps flattened, doubles as bulk strings in RESP2, nulls, booleans...).
//! Replies are generated within the encoder's contract: simple strings and errors hold no CR
//! or LF (handlers sanitize them, as Redis's addReplyError does), big numbers are digits.
#![no_main]

use arbitrary::{Result, Unstructured};
use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use redis_protocol::resp2::types::OwnedFrame as F2;
use redis_protocol::resp3::types::OwnedFrame as F3;
use resplock::num::{format_double, format_human};
use resplock::protocol::encode;
use resplock::Reply;

/// Text for a simple string or error: printable ASCII (the decoder keeps errors as `String`).
fn line(u: &mut Unstructured) -> Result<Bytes> {
    let n = u.int_in_range(0..=12)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(u.int_in_range(b' '..=b'~')?);
    }
    Ok(Bytes::from(v))
}

fn blob(u: &mut Unstructured) -> Result<Bytes> {
    let n = u.int_in_range(0..=40)?;
    Ok(Bytes::copy_from_slice(u.bytes(n.min(u.len()))?))
}

/// Map keys and set members: kinds the decoder can hash, no duplicates.
fn key(u: &mut Unstructured) -> Result<Reply> {
    Ok(match u.int_in_range(0..=2)? {
        0 => Reply::Bulk(blob(u)?),
        1 => Reply::Int(u.arbitrary()?),
        _ => Reply::Simple(line(u)?),
    })
}

fn reply(u: &mut Unstructured, depth: u32) -> Result<Reply> {
    let top = if depth >= 4 { 10 } else { 14 };
    Ok(match u.int_in_range(0..=top)? {
        0 => Reply::Simple(line(u)?),
        1 => Reply::Error(line(u)?),
        2 => Reply::Int(u.arbitrary()?),
        3 => Reply::Bulk(blob(u)?),
        4 => Reply::Nil,
        5 => Reply::NilArray,
        6 => Reply::Double(u.arbitrary()?),
        7 => Reply::Bool(u.arbitrary()?),
        8 => Reply::Verbatim(blob(u)?),
        9 => {
            let n: u64 = u.arbitrary()?;
            let neg: bool = u.arbitrary()?;
            Reply::BigNumber(Bytes::from(format!("{}{n}{n}", if neg { "-" } else { "" })))
        }
        10 => Reply::HumanDouble(u.arbitrary()?),
        11 => Reply::Array(items(u, depth)?),
        12 => Reply::Push(items(u, depth)?),
        13 => {
            let n = u.int_in_range(0..=6)?;
            let mut pairs: Vec<(Reply, Reply)> = Vec::new();
            for _ in 0..n {
                let k = key(u)?;
                if pairs.iter().all(|(x, _)| x != &k) {
                    pairs.push((k, reply(u, depth + 1)?));
                }
            }
            Reply::Map(pairs)
        }
        _ => {
            let n = u.int_in_range(0..=6)?;
            let mut set: Vec<Reply> = Vec::new();
            for _ in 0..n {
                let k = key(u)?;
                if !set.contains(&k) {
                    set.push(k);
                }
            }
            Reply::Set(set)
        }
    })
}

fn items(u: &mut Unstructured, depth: u32) -> Result<Vec<Reply>> {
    let n = u.int_in_range(0..=6)?;
    (0..n).map(|_| reply(u, depth + 1)).collect()
}

/// What a RESP2 client sees for `r`.
fn same2(got: &F2, r: &Reply) -> bool {
    let bulk = |b: &[u8]| matches!(got, F2::BulkString(g) if g == b);
    match r {
        Reply::Simple(s) => matches!(got, F2::SimpleString(g) if g == s),
        Reply::Error(e) => matches!(got, F2::Error(g) if g.as_bytes() == e),
        Reply::Int(i) => matches!(got, F2::Integer(g) if g == i),
        Reply::Bool(b) => matches!(got, F2::Integer(g) if *g == i64::from(*b)),
        Reply::Bulk(b) | Reply::Verbatim(b) | Reply::BigNumber(b) => bulk(b),
        Reply::Double(d) => bulk(format_double(*d).as_bytes()),
        Reply::HumanDouble(d) => bulk(format_human(*d).as_bytes()),
        Reply::Nil | Reply::NilArray => matches!(got, F2::Null),
        Reply::Array(xs) | Reply::Set(xs) | Reply::Push(xs) => match got {
            F2::Array(g) => g.len() == xs.len() && g.iter().zip(xs).all(|(g, x)| same2(g, x)),
            _ => false,
        },
        Reply::Map(pairs) => match got {
            F2::Array(g) => {
                g.len() == 2 * pairs.len()
                    && pairs
                        .iter()
                        .enumerate()
                        .all(|(i, (k, v))| same2(&g[2 * i], k) && same2(&g[2 * i + 1], v))
            }
            _ => false,
        },
        Reply::NoReply => false,
        // RESP2 drops the attribute: the reply it describes is all that is sent.
        Reply::Attributed(_, r) => same2(got, r),
    }
}

/// The decoder's frame for a map key or set member.
fn key3(r: &Reply) -> F3 {
    match r {
        Reply::Bulk(b) => F3::BlobString {
            data: b.to_vec(),
            attributes: None,
        },
        Reply::Int(i) => F3::Number {
            data: *i,
            attributes: None,
        },
        Reply::Simple(s) => F3::SimpleString {
            data: s.to_vec(),
            attributes: None,
        },
        other => panic!("not a key kind: {other:?}"),
    }
}

/// What a RESP3 client sees for `r`.
fn same3(got: &F3, r: &Reply) -> bool {
    let list = |g: &Vec<F3>, xs: &Vec<Reply>| {
        g.len() == xs.len() && g.iter().zip(xs).all(|(g, x)| same3(g, x))
    };
    match (r, got) {
        (Reply::Simple(s), F3::SimpleString { data, .. }) => data == s,
        (Reply::Error(e), F3::SimpleError { data, .. }) => data.as_bytes() == e,
        (Reply::Int(i), F3::Number { data, .. }) => data == i,
        (Reply::Bool(b), F3::Boolean { data, .. }) => data == b,
        (Reply::Bulk(b), F3::BlobString { data, .. }) => data == b,
        (Reply::Verbatim(b), F3::VerbatimString { data, .. }) => data == b,
        (Reply::BigNumber(b), F3::BigNumber { data, .. }) => data == b,
        (Reply::Double(d), F3::Double { data, .. }) => (d.is_nan() && data.is_nan()) || d == data,
        // Redis's human form is fixed-point with 17 decimals (7e-322 is "0"): the client
        // reads the number the text says.
        (Reply::HumanDouble(d), F3::Double { data, .. }) => {
            let said: f64 = format_human(*d).parse().unwrap_or(f64::NAN);
            (said.is_nan() && data.is_nan()) || said == *data
        }
        (Reply::Nil | Reply::NilArray, F3::Null) => true,
        (Reply::Array(xs), F3::Array { data, .. }) => list(data, xs),
        (Reply::Push(xs), F3::Push { data, .. }) => list(data, xs),
        (Reply::Set(xs), F3::Set { data, .. }) => {
            data.len() == xs.len() && xs.iter().all(|x| data.contains(&key3(x)))
        }
        (Reply::Map(pairs), F3::Map { data, .. }) => {
            data.len() == pairs.len()
                && pairs
                    .iter()
                    .all(|(k, v)| data.get(&key3(k)).is_some_and(|g| same3(g, v)))
        }
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(r) = reply(&mut u, 0) else { return };
    let mut b2 = BytesMut::new();
    encode(&r, 2, &mut b2);
    let (f2, used) = redis_protocol::resp2::decode::decode(&b2)
        .expect("RESP2 decodes")
        .expect("RESP2 frame complete");
    assert_eq!(used, b2.len(), "RESP2: one frame, nothing left over");
    assert!(same2(&f2, &r), "RESP2 mismatch: {r:?} -> {f2:?}");

    let mut b3 = BytesMut::new();
    encode(&r, 3, &mut b3);
    let (f3, used) = redis_protocol::resp3::decode::complete::decode(&b3)
        .expect("RESP3 decodes")
        .expect("RESP3 frame complete");
    assert_eq!(used, b3.len(), "RESP3: one frame, nothing left over");
    assert!(same3(&f3, &r), "RESP3 mismatch: {r:?} -> {f3:?}");
});
