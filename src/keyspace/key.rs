//! The stored form of a key: short keys (lock names such as `lock:123456`) live inline in the
//! shard's entry, so they cost no allocation of their own; longer ones go to the heap.

use bytes::Bytes;
use std::fmt;
use std::ops::Deref;

/// Longest key kept inline: fills the 24 bytes of a `Box<[u8]>` plus the enum tag.
const INLINE: usize = 22;

#[derive(Clone)]
pub enum Key {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Box<[u8]>),
}

const _: () = assert!(std::mem::size_of::<Key>() == 24);

impl Key {
    pub fn new(b: &[u8]) -> Key {
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            Key::Inline {
                len: b.len() as u8,
                buf,
            }
        } else {
            Key::Heap(b.into())
        }
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Key::Inline { len, buf } => &buf[..*len as usize],
            Key::Heap(b) => b,
        }
    }

    /// A copy as `Bytes` (for replies and expiry reports).
    pub fn to_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(self.as_bytes())
    }

    /// Like [`Key::to_bytes`], without copying a heap key.
    pub fn into_bytes(self) -> Bytes {
        match self {
            Key::Heap(b) => Bytes::from(b),
            k => k.to_bytes(),
        }
    }
}

impl Deref for Key {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Key {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq<[u8]> for Key {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes() == other
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&Bytes::copy_from_slice(self.as_bytes()), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keys_are_inline_and_long_ones_round_trip() {
        for n in [0, 1, 11, INLINE, INLINE + 1, 300] {
            let s: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            let k = Key::new(&s);
            assert_eq!(matches!(k, Key::Inline { .. }), n <= INLINE);
            assert_eq!(k.as_bytes(), &s[..]);
            assert_eq!(&k.clone().into_bytes()[..], &s[..]);
        }
    }
}
