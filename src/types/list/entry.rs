//! Listpack entry encoding, byte for byte as listpack.c writes it, and [`Elem`], an element
//! as read back from a node.

use std::fmt;

use bytes::Bytes;

/// Strings this long or longer can't be integers (Redis's `LONG_STR_SIZE`).
const LONG_STR_SIZE: usize = 21;

/// listpack.c `lpStringToInt64`: only canonical decimal integers qualify.
fn parse_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= LONG_STR_SIZE {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        (v <= i64::MAX as u64 + 1).then(|| 0i64.wrapping_sub(v as i64))
    } else {
        (v <= i64::MAX as u64).then_some(v as i64)
    }
}

/// Bytes of the backlen that follows an entry whose encoding+data is `l` bytes.
#[inline]
fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// An element in its packed form, computed once per write.
pub(crate) struct Encoded<'a> {
    hdr: [u8; 9],
    hdr_len: usize,
    /// The string's bytes; empty for an integer (all in `hdr`).
    body: &'a [u8],
}

impl<'a> Encoded<'a> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        if let Some(v) = parse_int(s) {
            return Encoded::int(v);
        }
        let mut hdr = [0u8; 9];
        let len = s.len();
        let hdr_len = if len < 64 {
            hdr[0] = 0x80 | len as u8;
            1
        } else if len < 4096 {
            hdr[0] = 0xE0 | (len >> 8) as u8;
            hdr[1] = len as u8;
            2
        } else {
            let len32 = u32::try_from(len).expect("list elements must be under 4 GiB");
            hdr[0] = 0xF0;
            hdr[1..5].copy_from_slice(&len32.to_le_bytes());
            5
        };
        Encoded {
            hdr,
            hdr_len,
            body: s,
        }
    }

    /// An integer in its packed form (lpAppendInteger / lpReplaceInteger).
    pub(crate) fn int(v: i64) -> Encoded<'static> {
        let mut hdr = [0u8; 9];
        let hdr_len = if (0..=127).contains(&v) {
            hdr[0] = v as u8;
            1
        } else if (-4096..=4095).contains(&v) {
            let u = (v as u16) & 0x1fff;
            hdr[0] = 0xC0 | (u >> 8) as u8;
            hdr[1] = u as u8;
            2
        } else if (-32768..=32767).contains(&v) {
            hdr[0] = 0xF1;
            hdr[1..3].copy_from_slice(&(v as i16).to_le_bytes());
            3
        } else if (-8388608..=8388607).contains(&v) {
            hdr[0] = 0xF2;
            hdr[1..4].copy_from_slice(&(v as i32).to_le_bytes()[..3]);
            4
        } else if (-2147483648..=2147483647).contains(&v) {
            hdr[0] = 0xF3;
            hdr[1..5].copy_from_slice(&(v as i32).to_le_bytes());
            5
        } else {
            hdr[0] = 0xF4;
            hdr[1..9].copy_from_slice(&v.to_le_bytes());
            9
        };
        Encoded {
            hdr,
            hdr_len,
            body: &[],
        }
    }

    #[inline]
    fn enc_len(&self) -> usize {
        self.hdr_len + self.body.len()
    }

    /// The whole entry: encoding, data and backlen.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        let l = self.enc_len();
        l + backlen_size(l)
    }

    /// Writes the entry into `out`, which is exactly [`Encoded::len`] bytes.
    pub(crate) fn write(&self, out: &mut [u8]) {
        let (h, rest) = out.split_at_mut(self.hdr_len);
        h.copy_from_slice(&self.hdr[..self.hdr_len]);
        let (b, back) = rest.split_at_mut(self.body.len());
        b.copy_from_slice(self.body);
        let l = self.enc_len();
        // listpack.c lpEncodeBacklen: high bits first, every byte but the first flagged.
        let n = back.len();
        for (i, byte) in back.iter_mut().enumerate() {
            let shift = 7 * (n - 1 - i);
            *byte = ((l >> shift) & 127) as u8 | if i == 0 { 0 } else { 128 };
        }
    }
}

/// Decodes the entry starting at `p`: the element and the entry's whole length.
#[inline]
pub(crate) fn decode(buf: &[u8], p: usize) -> (Elem<'_>, usize) {
    let b = buf[p];
    let (elem, enc_len) = if b & 0x80 == 0 {
        (Elem::Int(i64::from(b)), 1)
    } else if b & 0xC0 == 0x80 {
        let n = usize::from(b & 0x3f);
        (Elem::Bytes(&buf[p + 1..p + 1 + n]), 1 + n)
    } else if b & 0xE0 == 0xC0 {
        let u = (u16::from(b & 0x1f) << 8) | u16::from(buf[p + 1]);
        (Elem::Int(i64::from(((u << 3) as i16) >> 3)), 2)
    } else if b & 0xF0 == 0xE0 {
        let n = (usize::from(b & 0x0f) << 8) | usize::from(buf[p + 1]);
        (Elem::Bytes(&buf[p + 2..p + 2 + n]), 2 + n)
    } else {
        match b {
            0xF0 => {
                let n = u32::from_le_bytes(buf[p + 1..p + 5].try_into().unwrap()) as usize;
                (Elem::Bytes(&buf[p + 5..p + 5 + n]), 5 + n)
            }
            0xF1 => {
                let v = i16::from_le_bytes([buf[p + 1], buf[p + 2]]);
                (Elem::Int(i64::from(v)), 3)
            }
            0xF2 => {
                let v = i32::from_le_bytes([0, buf[p + 1], buf[p + 2], buf[p + 3]]) >> 8;
                (Elem::Int(i64::from(v)), 4)
            }
            0xF3 => {
                let v = i32::from_le_bytes(buf[p + 1..p + 5].try_into().unwrap());
                (Elem::Int(i64::from(v)), 5)
            }
            0xF4 => {
                let v = i64::from_le_bytes(buf[p + 1..p + 9].try_into().unwrap());
                (Elem::Int(v), 9)
            }
            _ => unreachable!("corrupt list node: encoding byte {b:#x}"),
        }
    };
    (elem, enc_len + backlen_size(enc_len))
}

/// Where the entry that ends at `end` starts, read from its backlen (lpDecodeBacklen).
#[inline]
pub(crate) fn prev_start(buf: &[u8], end: usize) -> usize {
    let mut q = end - 1;
    let mut val = usize::from(buf[q] & 127);
    let mut shift = 0;
    while buf[q] & 128 != 0 {
        q -= 1;
        shift += 7;
        val |= usize::from(buf[q] & 127) << shift;
    }
    q - val
}

/// One element as stored: a borrowed string, or a canonical integer packed as a number.
///
/// The integer form saves formatting until a reply needs the bytes; either way the bytes are
/// those that were pushed. Equal elements always have the same variant, so `==` is exact.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Elem<'a> {
    /// A string that is not a canonical integer (or is too long to be one).
    Bytes(&'a [u8]),
    /// A canonical integer, stored packed; its bytes are its decimal form.
    Int(i64),
}

impl Elem<'_> {
    /// Calls `f` with the element's bytes, formatting an integer on the stack: the way to
    /// write a reply or compare without allocating.
    #[inline]
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match *self {
            Elem::Bytes(b) => f(b),
            Elem::Int(v) => f(itoa::Buffer::new().format(v).as_bytes()),
        }
    }

    /// The element's bytes, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(<[u8]>::to_vec)
    }

    /// The element's bytes, copied into a `Bytes` for a reply.
    pub fn to_bytes(&self) -> Bytes {
        self.with_bytes(Bytes::copy_from_slice)
    }

    /// The value when the element is a canonical integer (so an integer reply or arithmetic
    /// needs no parsing); `None` for any other string.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Elem::Int(v) => Some(v),
            Elem::Bytes(_) => None,
        }
    }

    /// The element's length in bytes (what STRLEN would say), without formatting.
    pub fn len(&self) -> usize {
        match *self {
            Elem::Bytes(b) => b.len(),
            Elem::Int(v) => {
                let mut n = usize::from(v < 0) + 1;
                let mut u = v.unsigned_abs();
                while u >= 10 {
                    u /= 10;
                    n += 1;
                }
                n
            }
        }
    }

    /// True for the empty string (an integer never is).
    pub fn is_empty(&self) -> bool {
        matches!(self, Elem::Bytes(b) if b.is_empty())
    }
}

impl PartialEq<[u8]> for Elem<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        Needle::new(other).matches(*self)
    }
}

impl PartialEq<&[u8]> for Elem<'_> {
    fn eq(&self, other: &&[u8]) -> bool {
        Needle::new(other).matches(*self)
    }
}

impl fmt::Debug for Elem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Elem::Bytes(b) => write!(f, "\"{}\"", b.escape_ascii()),
            Elem::Int(v) => write!(f, "{v}"),
        }
    }
}

/// A value searched for (LREM, LPOS, LINSERT's pivot), classified once: a canonical integer
/// can only match packed integers and any other string only strings, since the encoder packs
/// every canonical integer.
pub(super) struct Needle<'a> {
    bytes: &'a [u8],
    int: Option<i64>,
}

impl<'a> Needle<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Needle {
            bytes,
            int: parse_int(bytes),
        }
    }

    #[inline]
    pub(super) fn matches(&self, e: Elem<'_>) -> bool {
        match (e, self.int) {
            (Elem::Int(v), Some(n)) => v == n,
            (Elem::Bytes(b), None) => b == self.bytes,
            _ => false,
        }
    }
}
