//! A connection's pending replies: encoded bytes, with large values kept as the `Bytes` the
//! reply already holds instead of being copied in. A GET of a 10 MB value then costs no
//! copy and no second 10 MB while it is written: the header stays in the buffer, the value
//! goes out as its own slice of one vectored write, and what follows it continues in the
//! buffer, so the bytes on the wire and their order are exactly those of a plain buffer.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::collections::VecDeque;
use std::io::IoSlice;

/// Values this long or longer are shared rather than copied: below it a copy is cheaper than
/// a slice of its own (a chunk to queue, one more iovec for the kernel to walk).
pub const SHARE_MIN: usize = 16 * 1024;

/// Slices handed to one vectored write at most (well under the kernel's IOV_MAX).
pub const MAX_SLICES: usize = 64;

/// Pending output: `chunks` (frozen encoded bytes and shared values) in order, then `tail`,
/// which is where anything encoded next is appended.
#[derive(Default)]
pub struct Output {
    chunks: VecDeque<Bytes>,
    /// Bytes in `chunks`.
    chunked: usize,
    tail: BytesMut,
}

impl Output {
    /// Nothing pending, holding no buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes waiting to be written (what the output-buffer limits and CLIENT LIST's `omem`
    /// count).
    pub fn len(&self) -> usize {
        self.chunked + self.tail.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer replies are appended to, for writers of plain bytes (pushes, frames that
    /// follow a reply); what is appended goes out after everything already pending.
    pub fn tail(&mut self) -> &mut BytesMut {
        &mut self.tail
    }

    /// Append a value of a reply: shared if long (see [`SHARE_MIN`]), else copied.
    pub fn put_value(&mut self, v: &Bytes) {
        if v.len() < SHARE_MIN {
            self.tail.put_slice(v);
            return;
        }
        if !self.tail.is_empty() {
            // What the tail holds goes out first; the tail keeps the rest of its allocation.
            let head = self.tail.split().freeze();
            self.chunked += head.len();
            self.chunks.push_back(head);
        }
        self.chunked += v.len();
        self.chunks.push_back(v.clone());
    }

    /// Fill `slices` with the pending bytes in order; how many were filled.
    pub fn slices<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        for c in &self.chunks {
            if n == slices.len() {
                return n;
            }
            slices[n] = IoSlice::new(c);
            n += 1;
        }
        if n < slices.len() && !self.tail.is_empty() {
            slices[n] = IoSlice::new(&self.tail);
            n += 1;
        }
        n
    }

    /// Whether all pending bytes are in the one buffer (nothing shared is waiting).
    pub fn contiguous(&self) -> Option<&[u8]> {
        self.chunks.is_empty().then_some(&self.tail[..])
    }

    /// `n` pending bytes were written: forget them (a shared value is released once all of
    /// it is out).
    pub fn advance(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.chunks.front_mut() else {
                self.tail.advance(n);
                return;
            };
            if n < front.len() {
                front.advance(n);
                self.chunked -= n;
                return;
            }
            n -= front.len();
            self.chunked -= front.len();
            self.chunks.pop_front();
        }
    }

    /// Bytes allocated for the buffer itself (shared values not counted: they are the
    /// keyspace's, or the reply's).
    pub fn capacity(&self) -> usize {
        self.tail.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(o: &Output) -> Vec<u8> {
        let mut s = [IoSlice::new(&[]); MAX_SLICES];
        let n = o.slices(&mut s);
        s[..n].iter().flat_map(|s| s.iter().copied()).collect()
    }

    #[test]
    fn large_values_are_shared_and_bytes_keep_their_order() {
        let mut o = Output::new();
        o.tail().put_slice(b"$20000\r\n");
        let big = Bytes::from(vec![b'x'; 20000]);
        o.put_value(&big);
        o.tail().put_slice(b"\r\n+OK\r\n");
        o.put_value(&Bytes::from_static(b"small"));
        let mut want = b"$20000\r\n".to_vec();
        want.extend_from_slice(&big);
        want.extend_from_slice(b"\r\n+OK\r\nsmall");
        assert_eq!(o.len(), want.len());
        assert_eq!(pending(&o), want);
        assert!(o.contiguous().is_none(), "the large value was not copied");
    }

    #[test]
    fn partial_writes_advance_across_chunks() {
        let mut o = Output::new();
        o.tail().put_slice(b"ab");
        o.put_value(&Bytes::from(vec![b'v'; SHARE_MIN]));
        o.tail().put_slice(b"cd");
        let all = pending(&o);
        let mut written = 0;
        for step in [1, 2, SHARE_MIN - 2, 1, 1, 1] {
            o.advance(step);
            written += step;
            assert_eq!(pending(&o), all[written..]);
            assert_eq!(o.len(), all.len() - written);
        }
        assert!(o.is_empty());
    }
}
