//! The intset encoding: canonical 64-bit integers packed in one sorted buffer, as Redis's
//! `intset.c`, and the rule (`string2ll`) for which members qualify.

/// Redis's intset: one buffer, the first byte the width of every value (2, 4 or 8 bytes,
/// widened for good when a value needs it), then the values little-endian in ascending
/// order. Empty means no allocation. Found by binary search; inserts and removes move the
/// tail and reallocate exactly, as intsetAdd/intsetRemove do.
#[derive(Clone, Default)]
pub struct Intset {
    pub(super) buf: Vec<u8>,
}

impl Intset {
    pub(super) fn width(&self) -> usize {
        self.buf.first().map_or(2, |&w| w as usize)
    }

    pub(super) fn len(&self) -> usize {
        match self.buf.len() {
            0 => 0,
            n => (n - 1) / self.width(),
        }
    }

    pub(super) fn get(&self, i: usize) -> i64 {
        let w = self.width();
        let b = &self.buf[1 + i * w..1 + (i + 1) * w];
        match w {
            2 => i16::from_le_bytes([b[0], b[1]]) as i64,
            4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64,
            _ => i64::from_le_bytes(b.try_into().unwrap()),
        }
    }

    fn search(&self, v: i64) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    pub(super) fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    pub(super) fn insert(&mut self, v: i64) -> bool {
        let need = value_width(v);
        if self.buf.is_empty() {
            self.buf.reserve_exact(1 + need);
            self.buf.push(need as u8);
            push_le(&mut self.buf, v, need);
            return true;
        }
        if need > self.width() {
            // intsetUpgradeAndAdd: the new value is out of range, so it goes first or last.
            let n = self.len();
            let mut buf = Vec::with_capacity(1 + (n + 1) * need);
            buf.push(need as u8);
            if v < 0 {
                push_le(&mut buf, v, need);
            }
            for i in 0..n {
                push_le(&mut buf, self.get(i), need);
            }
            if v >= 0 {
                push_le(&mut buf, v, need);
            }
            self.buf = buf;
            return true;
        }
        match self.search(v) {
            Ok(_) => false,
            Err(at) => {
                let w = self.width();
                let mut bytes = [0u8; 8];
                bytes[..w].copy_from_slice(&v.to_le_bytes()[..w]);
                self.buf.reserve_exact(w);
                let off = 1 + at * w;
                self.buf.splice(off..off, bytes[..w].iter().copied());
                true
            }
        }
    }

    pub(super) fn remove(&mut self, v: i64) -> bool {
        match self.search(v) {
            Ok(i) => {
                self.remove_at(i);
                true
            }
            Err(_) => false,
        }
    }

    pub(super) fn remove_at(&mut self, i: usize) {
        if self.len() == 1 {
            self.buf = Vec::new();
            return;
        }
        let w = self.width();
        self.buf.drain(1 + i * w..1 + (i + 1) * w);
        self.buf.shrink_to_fit();
    }

    /// Drop the values at these (distinct) positions in one pass.
    pub(super) fn remove_indices(&mut self, idx: &[usize]) {
        let n = self.len();
        if idx.len() >= n {
            self.buf = Vec::new();
            return;
        }
        let mut gone = vec![false; n];
        for &i in idx {
            gone[i] = true;
        }
        let w = self.width();
        let mut buf = Vec::with_capacity(1 + (n - idx.len()) * w);
        buf.push(w as u8);
        for (i, &g) in gone.iter().enumerate() {
            if !g {
                buf.extend_from_slice(&self.buf[1 + i * w..1 + (i + 1) * w]);
            }
        }
        self.buf = buf;
    }
}

/// _intsetValueEncoding: the narrowest of 2, 4, 8 bytes that holds `v`.
fn value_width(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

fn push_le(buf: &mut Vec<u8>, v: i64, w: usize) {
    buf.extend_from_slice(&v.to_le_bytes()[..w]);
}

/// Redis's string2ll: an optional '-', then digits with no leading zero (or a lone "0");
/// no '+', no spaces, at most 20 bytes, within i64. Only such members go in an intset, so
/// "007" or "+1" stay strings, as in Redis.
pub(in crate::types) fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}
