//! The listpack encoding: members in (score, member) order in one buffer, searched
//! linearly as Redis's listpack is.

use std::ops::Range;

use super::order::cmp_entry;

/// The small encoding, one buffer as Redis's listpack: a u32 member count, then per member
/// in (score, member) order `[header, LEB128][score][member]`, the header being the member's
/// length times two plus one when the score is an f64 (8 bytes LE) and plus zero when it is
/// an integer kept as a zigzag LEB128 (Redis's listpack stores integral scores as integers
/// too: a small sorted set of small scores then takes no more memory than in Redis). Empty
/// means no allocation. It grows and shrinks exactly, as Redis's listpack reallocates.
#[derive(Clone, Default)]
pub struct Listpack {
    pub(super) buf: Vec<u8>,
}

/// Where one listpack entry lies.
pub(super) struct LpEntry {
    /// Its first byte.
    pub(super) off: usize,
    /// The member's bytes.
    pub(super) member: Range<usize>,
    /// One past its last byte.
    pub(super) end: usize,
    pub(super) score: f64,
    /// Its rank (set by searches that count).
    pub(super) index: usize,
}

/// Integral scores in this range are stored as integers (every such f64 is exact).
const INT_SCORE_LIMIT: f64 = (1u64 << 53) as f64;

/// The score as an integer if it is stored as one: integral and within ±2^53. -0 is one too,
/// so it reads back as 0, as in Redis, whose zzlInsertAt stores any score double2ll takes
/// (-0 == 0) as an integer: ZSCORE, ZRANGE and the pops of a listpack-encoded set answer 0
/// where a skiplist-encoded one keeps -0.
fn int_score(score: f64) -> Option<i64> {
    (score.fract() == 0.0 && score.abs() < INT_SCORE_LIMIT).then_some(score as i64)
}

pub(super) fn lp_entry(buf: &[u8], off: usize) -> LpEntry {
    let (header, n) = read_varint(&buf[off..]);
    let (len, float) = (header >> 1, header & 1 == 1);
    let at = off + n;
    let (score, start) = if float {
        let s = f64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
        (s, at + 8)
    } else {
        let (z, m) = read_varint(&buf[at..]);
        let v = ((z >> 1) as i64) ^ -((z & 1) as i64);
        (v as f64, at + m)
    };
    LpEntry {
        off,
        member: start..start + len,
        end: start + len,
        score,
        index: 0,
    }
}

fn read_varint(b: &[u8]) -> (usize, usize) {
    let (mut v, mut shift, mut i) = (0usize, 0, 0);
    loop {
        let c = b[i];
        v |= ((c & 0x7f) as usize) << shift;
        i += 1;
        if c & 0x80 == 0 {
            return (v, i);
        }
        shift += 7;
    }
}

fn write_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Listpack {
    pub(super) fn len(&self) -> usize {
        match self.buf.get(..4) {
            Some(b) => u32::from_le_bytes(b.try_into().unwrap()) as usize,
            None => 0,
        }
    }

    fn set_len(&mut self, n: usize) {
        if n == 0 {
            self.buf = Vec::new();
        } else {
            self.buf[..4].copy_from_slice(&(n as u32).to_le_bytes());
        }
    }

    fn entries(&self) -> impl Iterator<Item = LpEntry> + '_ {
        let mut at = 4;
        let mut index = 0;
        std::iter::from_fn(move || {
            if at >= self.buf.len() {
                return None;
            }
            let mut e = lp_entry(&self.buf, at);
            e.index = index;
            index += 1;
            at = e.end;
            Some(e)
        })
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (&[u8], f64)> + '_ {
        self.entries()
            .map(move |e| (&self.buf[e.member.clone()], e.score))
    }

    pub(super) fn find(&self, member: &[u8]) -> Option<LpEntry> {
        self.entries()
            .find(|e| &self.buf[e.member.clone()] == member)
    }

    /// Byte offset of the entry at rank `i` (the end of the buffer past the last).
    pub(super) fn offset_of(&self, i: usize) -> usize {
        self.entries()
            .nth(i)
            .map_or(self.buf.len().max(4), |e| e.off)
    }

    fn encode(member: &[u8], score: f64) -> Vec<u8> {
        let mut e = Vec::with_capacity(10 + 8 + member.len());
        match int_score(score) {
            Some(v) => {
                write_varint(&mut e, member.len() << 1);
                write_varint(&mut e, ((v << 1) ^ (v >> 63)) as u64 as usize);
            }
            None => {
                write_varint(&mut e, (member.len() << 1) | 1);
                e.extend_from_slice(&score.to_le_bytes());
            }
        }
        e.extend_from_slice(member);
        e
    }

    /// zzlInsert: at its place in (score, member) order; the member must be absent.
    pub(super) fn insert(&mut self, member: &[u8], score: f64) {
        let at = self
            .entries()
            .find(|e| cmp_entry(e.score, &self.buf[e.member.clone()], score, member).is_gt())
            .map(|e| e.off);
        let entry = Self::encode(member, score);
        let n = self.len() + 1;
        if self.buf.is_empty() {
            self.buf.reserve_exact(4 + entry.len());
            self.buf.extend_from_slice(&[0; 4]);
        } else {
            self.buf.reserve_exact(entry.len());
        }
        match at {
            Some(at) => {
                self.buf.splice(at..at, entry);
            }
            None => self.buf.extend_from_slice(&entry),
        }
        self.set_len(n);
    }

    /// Append a member known to sort after every other (building from sorted input).
    pub(super) fn push_back(&mut self, member: &[u8], score: f64) {
        if self.buf.is_empty() {
            self.buf.extend_from_slice(&[0; 4]);
        }
        let n = self.len() + 1;
        self.buf.extend_from_slice(&Self::encode(member, score));
        self.set_len(n);
    }

    /// Drop the `count` entries in bytes `from..to`.
    pub(super) fn delete(&mut self, from: usize, to: usize, count: usize) {
        let n = self.len() - count;
        self.buf.drain(from..to);
        self.set_len(n);
        self.buf.shrink_to_fit();
    }

    /// As zzlFirstInRange/zzlFirstInLexRange and the forward walk after it: from the first
    /// entry above `min` for as long as entries stay below `max`.
    pub(super) fn ranks_between(
        &self,
        above_min: impl Fn(&[u8], f64) -> bool,
        below_max: impl Fn(&[u8], f64) -> bool,
    ) -> Range<usize> {
        let mut it = self.iter().enumerate();
        let start = match it.by_ref().find(|(_, (m, s))| above_min(m, *s)) {
            Some((i, (m, s))) if below_max(m, s) => i,
            _ => return 0..0,
        };
        let end = it
            .find(|(_, (m, s))| !below_max(m, *s))
            .map_or(self.len(), |(i, _)| i);
        start..end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_round_trip_whether_stored_as_integers_or_floats() {
        let scores = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            1.5,
            9007199254740991.0,
            -9007199254740991.0,
            9007199254740992.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ];
        let mut lp = Listpack::default();
        let mut sorted = scores.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        for (i, s) in sorted.iter().enumerate() {
            lp.push_back(format!("m{i}").as_bytes(), *s);
        }
        let back: Vec<f64> = lp.iter().map(|(_, s)| s).collect();
        assert_eq!(back.len(), sorted.len());
        for (a, b) in back.iter().zip(&sorted) {
            // -0 is stored as the integer 0, as Redis's listpack does.
            let b = if *b == 0.0 { 0.0 } else { *b };
            assert_eq!(a.to_bits(), b.to_bits(), "{b} comes back bit for bit");
        }
    }

    #[test]
    fn small_integral_scores_take_two_bytes_besides_the_member() {
        let mut lp = Listpack::default();
        lp.push_back(b"member-0", 7.0);
        assert_eq!(lp.buf.len(), 4 + 1 + 1 + 8);
    }
}
