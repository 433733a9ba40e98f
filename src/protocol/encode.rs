use super::output::Output;
use crate::num::format_double;
use crate::reply::Reply;
use bytes::{BufMut, Bytes, BytesMut};

/// Where replies are encoded: a plain buffer, or a connection's [`Output`], which shares
/// large values instead of copying them.
pub trait Sink {
    /// The buffer encoded bytes are appended to.
    fn buf(&mut self) -> &mut BytesMut;
    /// Append a value a reply holds (a bulk string's contents).
    fn value(&mut self, v: &Bytes) {
        self.buf().put_slice(v);
    }
}

impl Sink for BytesMut {
    fn buf(&mut self) -> &mut BytesMut {
        self
    }
}

impl Sink for Output {
    fn buf(&mut self) -> &mut BytesMut {
        self.tail()
    }
    fn value(&mut self, v: &Bytes) {
        self.put_value(v);
    }
}

/// A bulk string whose contents are a value the reply holds (shared by an [`Output`]).
fn put_bulk_value<S: Sink>(out: &mut S, prefix: u8, v: &Bytes) {
    put_int_line(out.buf(), prefix, v.len() as i64);
    out.value(v);
    out.buf().put_slice(b"\r\n");
}

fn put_int_line(out: &mut BytesMut, prefix: u8, n: i64) {
    let mut b = itoa::Buffer::new();
    out.put_u8(prefix);
    out.put_slice(b.format(n).as_bytes());
    out.put_slice(b"\r\n");
}

fn put_bulk(out: &mut BytesMut, prefix: u8, data: &[u8]) {
    put_int_line(out, prefix, data.len() as i64);
    out.put_slice(data);
    out.put_slice(b"\r\n");
}

/// An array of bulk strings as one RESP2 frame (`*N`); pub/sub encodes each message once
/// this way and shares the bytes with every subscriber (RESP3 subscribers get the same bytes
/// with `>` in place of `*`).
pub fn encode_bulks(parts: &[&[u8]]) -> Bytes {
    let len = 16 + parts.iter().map(|p| p.len() + 16).sum::<usize>();
    let mut out = BytesMut::with_capacity(len);
    put_int_line(&mut out, b'*', parts.len() as i64);
    for p in parts {
        put_bulk(&mut out, b'$', p);
    }
    out.freeze()
}

/// Append `reply` to `out` in RESP `proto` (2 or 3).
pub fn encode<S: Sink>(reply: &Reply, proto: u8, sink: &mut S) {
    let resp3 = proto >= 3;
    let out = sink.buf();
    match reply {
        Reply::Simple(s) => {
            out.put_u8(b'+');
            out.put_slice(s);
            out.put_slice(b"\r\n");
        }
        Reply::Error(e) => {
            out.put_u8(b'-');
            out.put_slice(e);
            out.put_slice(b"\r\n");
        }
        Reply::Int(n) => put_int_line(out, b':', *n),
        Reply::Bulk(b) => put_bulk_value(sink, b'$', b),
        Reply::Nil => out.put_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
        Reply::NilArray => out.put_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
        Reply::Array(items) => {
            put_int_line(out, b'*', items.len() as i64);
            for i in items {
                encode(i, proto, sink);
            }
        }
        Reply::Set(items) => {
            put_int_line(out, if resp3 { b'~' } else { b'*' }, items.len() as i64);
            for i in items {
                encode(i, proto, sink);
            }
        }
        Reply::Push(items) => {
            put_int_line(out, if resp3 { b'>' } else { b'*' }, items.len() as i64);
            for i in items {
                encode(i, proto, sink);
            }
        }
        Reply::Map(pairs) => {
            if resp3 {
                put_int_line(out, b'%', pairs.len() as i64);
            } else {
                put_int_line(out, b'*', 2 * pairs.len() as i64);
            }
            for (k, v) in pairs {
                encode(k, proto, sink);
                encode(v, proto, sink);
            }
        }
        Reply::Double(d) => {
            let s = format_double(*d);
            if resp3 {
                out.put_u8(b',');
                out.put_slice(s.as_bytes());
                out.put_slice(b"\r\n");
            } else {
                put_bulk(out, b'$', s.as_bytes());
            }
        }
        Reply::HumanDouble(d) => {
            let s = crate::num::format_human(*d);
            if resp3 {
                out.put_u8(b',');
                out.put_slice(s.as_bytes());
                out.put_slice(b"\r\n");
            } else {
                put_bulk(out, b'$', s.as_bytes());
            }
        }
        Reply::Bool(b) => {
            if resp3 {
                out.put_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
            } else {
                out.put_slice(if *b { b":1\r\n" } else { b":0\r\n" });
            }
        }
        Reply::Verbatim(b) => {
            if resp3 {
                put_int_line(out, b'=', b.len() as i64 + 4);
                out.put_slice(b"txt:");
                sink.value(b);
                sink.buf().put_slice(b"\r\n");
            } else {
                put_bulk_value(sink, b'$', b);
            }
        }
        Reply::NoReply => {}
        Reply::Attributed(pairs, reply) => {
            if resp3 {
                put_int_line(out, b'|', pairs.len() as i64);
                for (k, v) in pairs {
                    encode(k, proto, sink);
                    encode(v, proto, sink);
                }
            }
            encode(reply, proto, sink);
        }
        Reply::BigNumber(b) => {
            if resp3 {
                out.put_u8(b'(');
                out.put_slice(b);
                out.put_slice(b"\r\n");
            } else {
                put_bulk(out, b'$', b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_and_map_differ_by_protocol() {
        let mut b = BytesMut::new();
        encode(&Reply::Nil, 2, &mut b);
        encode(&Reply::Nil, 3, &mut b);
        assert_eq!(&b[..], b"$-1\r\n_\r\n");
    }
}
