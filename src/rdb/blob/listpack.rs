//! Redis's listpack as a serialized blob (the form RDB files carry for small hashes, sorted
//! sets and list nodes): a 6-byte header (total bytes u32, element count u16, 65535 meaning
//! "count them"), entries, and a 0xFF terminator. Each entry is an encoding byte (integers
//! of 7, 13, 16, 24, 32 or 64 bits; strings with 6-, 12- or 32-bit lengths), its data, and a
//! back length of 1 to 5 bytes so the blob can be walked from either end.

use super::Item;

const HDR: usize = 6;
const EOF: u8 = 0xFF;
/// The count field's "unknown" value (LP_HDR_NUMELE_UNKNOWN).
const COUNT_UNKNOWN: u16 = u16::MAX;

/// Builds a listpack blob entry by entry, as lpAppend does (strings that are canonical
/// integers are stored as integers).
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// Bytes of the back length of an entry whose encoding and data take `l` bytes.
fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

impl Builder {
    /// An empty listpack.
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&[0; HDR]);
        Builder { buf, count: 0 }
    }

    /// Append `s` (lpAppend): an integer encoding when it reads as one, else a string.
    pub fn push(&mut self, s: &[u8]) {
        match crate::num::parse_ll(s) {
            Some(v) => self.push_int(v),
            None => self.push_str(s),
        }
    }

    /// Append an integer in the smallest encoding that holds it (lpAppendInteger).
    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        let b = &mut self.buf;
        if (0..=127).contains(&v) {
            b.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = (v as u16) & 0x1fff;
            b.push(0xC0 | (u >> 8) as u8);
            b.push(u as u8);
        } else if (-32768..=32767).contains(&v) {
            b.push(0xF1);
            b.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-8_388_608..=8_388_607).contains(&v) {
            b.push(0xF2);
            b.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if (i32::MIN as i64..=i32::MAX as i64).contains(&v) {
            b.push(0xF3);
            b.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            b.push(0xF4);
            b.extend_from_slice(&v.to_le_bytes());
        }
        self.finish_entry(start);
    }

    /// Append a string as a string, whatever it reads as.
    pub fn push_str(&mut self, s: &[u8]) {
        let start = self.buf.len();
        let len = s.len();
        let b = &mut self.buf;
        if len < 64 {
            b.push(0x80 | len as u8);
        } else if len < 4096 {
            b.push(0xE0 | (len >> 8) as u8);
            b.push(len as u8);
        } else {
            b.push(0xF0);
            b.extend_from_slice(&(len as u32).to_le_bytes());
        }
        b.extend_from_slice(s);
        self.finish_entry(start);
    }

    /// Append the back length of the entry that starts at `start` (lpEncodeBacklen: high
    /// bits first, every byte but the first flagged).
    fn finish_entry(&mut self, start: usize) {
        let l = self.buf.len() - start;
        let n = backlen_size(l);
        for i in 0..n {
            let shift = 7 * (n - 1 - i);
            self.buf
                .push(((l >> shift) & 127) as u8 | if i == 0 { 0 } else { 128 });
        }
        self.count += 1;
    }

    /// Append entries already in listpack entry encoding (a list node's buffer).
    pub fn push_encoded(&mut self, entries: &[u8], count: usize) {
        self.buf.extend_from_slice(entries);
        self.count += count;
    }

    /// Entries so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// No entries yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The finished blob.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = if self.count >= COUNT_UNKNOWN as usize {
            COUNT_UNKNOWN
        } else {
            self.count as u16
        };
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// One entry at `p` (which is inside the blob, before its terminator): the item and the
/// entry's whole length including the back length; None if it is malformed or reaches past
/// `end` (lpValidateNext).
fn entry(b: &[u8], p: usize, end: usize) -> Option<(Item<'_>, usize)> {
    let at = |i: usize| -> Option<u8> { (p + i < end).then(|| b[p + i]) };
    let first = b[p];
    let (item, enc_len) = if first & 0x80 == 0 {
        (Item::Int(first as i64), 1)
    } else if first & 0xC0 == 0x80 {
        let n = (first & 0x3f) as usize;
        (Item::Str(b.get(p + 1..p + 1 + n)?), 1 + n)
    } else if first & 0xE0 == 0xC0 {
        let u = ((first as u16 & 0x1f) << 8) | at(1)? as u16;
        (Item::Int((((u << 3) as i16) >> 3) as i64), 2)
    } else if first & 0xF0 == 0xE0 {
        let n = ((first as usize & 0x0f) << 8) | at(1)? as usize;
        (Item::Str(b.get(p + 2..p + 2 + n)?), 2 + n)
    } else {
        let int = |w: usize| -> Option<[u8; 8]> {
            let mut v = [0u8; 8];
            v[..w].copy_from_slice(b.get(p + 1..p + 1 + w)?);
            Some(v)
        };
        match first {
            0xF0 => {
                let n = u32::from_le_bytes(b.get(p + 1..p + 5)?.try_into().ok()?) as usize;
                (Item::Str(b.get(p + 5..(p + 5).checked_add(n)?)?), 5 + n)
            }
            0xF1 => {
                let v = int(2)?;
                (Item::Int(i16::from_le_bytes([v[0], v[1]]) as i64), 3)
            }
            0xF2 => {
                let v = int(3)?;
                (
                    Item::Int((i32::from_le_bytes([0, v[0], v[1], v[2]]) >> 8) as i64),
                    4,
                )
            }
            0xF3 => {
                let v = int(4)?;
                (
                    Item::Int(i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64),
                    5,
                )
            }
            0xF4 => (Item::Int(i64::from_le_bytes(int(8)?)), 9),
            _ => return None,
        }
    };
    let bl = backlen_size(enc_len);
    let total = enc_len.checked_add(bl)?;
    if p.checked_add(total)? > end {
        return None;
    }
    // The back length must say the same as the front (lpDecodeBacklen from the entry's end).
    let mut q = p + total - 1;
    let mut val = (b[q] & 127) as usize;
    let mut shift = 0;
    let mut read = 1;
    while b[q] & 128 != 0 {
        if read == 5 || q == p {
            return None;
        }
        q -= 1;
        shift += 7;
        val |= ((b[q] & 127) as usize) << shift;
        read += 1;
    }
    (val == enc_len && read == bl).then_some((item, total))
}

/// Walk a listpack blob from an untrusted source, checking it as lpValidateIntegrity does
/// with deep validation (header size, terminator, every entry inside the blob with matching
/// back lengths, the count when stated), and hand each item to `f`. False if anything is
/// wrong or `f` refused an item.
pub fn walk<'a>(blob: &'a [u8], mut f: impl FnMut(Item<'a>) -> bool) -> bool {
    if blob.len() < HDR + 1 {
        return false;
    }
    let total = u32::from_le_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    if total != blob.len() || blob[blob.len() - 1] != EOF {
        return false;
    }
    let stated = u16::from_le_bytes([blob[4], blob[5]]);
    let end = blob.len() - 1;
    let mut p = HDR;
    let mut count = 0usize;
    while p < end {
        let Some((item, n)) = entry(blob, p, end) else {
            return false;
        };
        if !f(item) {
            return false;
        }
        p += n;
        count += 1;
    }
    p == end && (stated == COUNT_UNKNOWN || stated as usize == count)
}

/// The items of a checked blob, or None if it is malformed.
pub fn items(blob: &[u8]) -> Option<Vec<Item<'_>>> {
    let mut out = Vec::new();
    walk(blob, |it| {
        out.push(it);
        true
    })
    .then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_encoding_round_trips_through_a_checked_walk() {
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            32767,
            40000,
            -8_388_608,
            8_388_607,
            8_388_608,
            i32::MIN as i64,
            i32::MAX as i64,
            i32::MAX as i64 + 1,
            i64::MIN,
            i64::MAX,
        ];
        let strs: Vec<Vec<u8>> = vec![
            vec![],
            b"abc".to_vec(),
            vec![b'x'; 63],
            vec![b'y'; 64],
            vec![b'z'; 4095],
            vec![b'w'; 4096],
            vec![b'v'; 70_000],
            b"007".to_vec(),
            b"-0".to_vec(),
        ];
        let mut b = Builder::new();
        for &v in &ints {
            b.push(v.to_string().as_bytes());
        }
        for s in &strs {
            b.push(s);
        }
        let blob = b.finish();
        let got = items(&blob).expect("valid");
        let mut want: Vec<Item> = ints.iter().map(|&v| Item::Int(v)).collect();
        want.extend(strs.iter().map(|s| Item::Str(s)));
        assert_eq!(got, want);
    }

    #[test]
    fn a_listpack_as_redis_writes_it_reads_back() {
        // redis-server's listpack for the hash {f1: v1, n: 5}: lpAppend of "f1", "v1", "n", "5".
        let blob = [
            20, 0, 0, 0, 4, 0, 0x82, b'f', b'1', 3, 0x82, b'v', b'1', 3, 0x81, b'n', 2, 5, 1, 0xff,
        ];
        let want = vec![
            Item::Str(b"f1"),
            Item::Str(b"v1"),
            Item::Str(b"n"),
            Item::Int(5),
        ];
        assert_eq!(items(&blob), Some(want));
        let mut b = Builder::new();
        for s in [&b"f1"[..], b"v1", b"n", b"5"] {
            b.push(s);
        }
        assert_eq!(b.finish(), blob);
        let mut wrong_total = blob;
        wrong_total[0] = 21;
        assert_eq!(items(&wrong_total), None);
    }

    #[test]
    fn corrupt_listpacks_are_refused() {
        let mut b = Builder::new();
        b.push(b"hello");
        b.push(b"12345");
        let good = b.finish();
        assert!(items(&good).is_some());
        // Every truncation, every single-byte change of the header, a wrong back length.
        for n in 0..good.len() {
            assert!(items(&good[..n]).is_none(), "truncated at {n}");
        }
        let mut bad = good.clone();
        bad[4] = 3; // count says 3
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[HDR + 6] = 9; // back length of "hello" (1 + 5 = 6)
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[HDR] = 0xF7; // no such encoding
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[HDR] = 0x80 | 40; // string longer than the blob
        assert!(items(&bad).is_none());
    }
}
