//! The set type, in Redis 7.0's two encodings.
//!
//! A set starts as an [`Intset`] (a sorted, packed array of integers, as Redis's `intset.c`)
//! while every member is a canonical 64-bit integer and there are at most
//! `set-max-intset-entries` of them; SMEMBERS of such a set therefore comes back in ascending
//! numeric order, exactly as from Redis. Past either limit it becomes a hash table with a dense
//! member array (O(1) add, remove, lookup and uniform random access for SPOP/SRANDMEMBER) and,
//! as in Redis, never converts back.
//!
//! This module also holds (in `mem.rs`) the small models of Redis's allocator and dict that
//! both sets and `zset` use to answer MEMORY USAGE the way Redis would.

mod intset;
mod mem;
mod table;
#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;
use hashbrown::HashTable;

pub use intset::Intset;
pub use table::SetTable;

pub(super) use intset::string2ll;
pub(super) use mem::{jemalloc_size, sds_alloc_size, DictModel, DICT, DICT_ENTRY, ROBJ};
pub(super) use table::hash_bytes;

/// Redis's default `set-max-intset-entries`: the most members an intset-encoded set holds.
pub const SET_MAX_INTSET_ENTRIES: usize = 512;

/// Redis caps `set-max-intset-entries` at 2^30 "due to intset internals" (t_set.c).
const INTSET_HARD_LIMIT: usize = 1 << 30;

/// A set, in Redis's `intset` or `hashtable` encoding. 24 bytes, so it fits the keyspace's
/// value enum (whose types are at most 32 bytes).
#[derive(Clone)]
pub enum Set {
    /// Sorted integers, as Redis's intset.
    Intset(Intset),
    /// Any members; boxed to keep the enum small.
    Table(Box<SetTable>),
}

const _: () = assert!(std::mem::size_of::<Set>() <= 24);

impl Default for Set {
    fn default() -> Self {
        Set::new()
    }
}

impl fmt::Debug for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Set")
            .field("encoding", &self.encoding())
            .field("len", &self.len())
            .finish()
    }
}

impl Set {
    /// An empty set in the intset encoding; allocates nothing until the first add. Redis
    /// creates a set as an intset when its first member is an integer and as a hash table
    /// otherwise: adding a non-integer here converts at once, which comes to the same.
    pub fn new() -> Self {
        Set::Intset(Intset::default())
    }

    /// SCARD.
    pub fn len(&self) -> usize {
        match self {
            Set::Intset(is) => is.len(),
            Set::Table(t) => t.members.len(),
        }
    }

    /// True for a set with no members (the keyspace deletes such a key).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OBJECT ENCODING's answer: `intset` or `hashtable`.
    pub fn encoding(&self) -> &'static str {
        match self {
            Set::Intset(_) => "intset",
            Set::Table(_) => "hashtable",
        }
    }

    /// The byte width of an intset's values (2, 4 or 8; it only ever widens, as Redis's
    /// intset encoding does), which RDB's intset blob records; None for a hash table.
    pub fn intset_width(&self) -> Option<usize> {
        match self {
            Set::Intset(is) => Some(is.width()),
            Set::Table(_) => None,
        }
    }

    /// True while the set is an intset (members sorted numerically).
    pub fn is_intset(&self) -> bool {
        matches!(self, Set::Intset(_))
    }

    /// SADD of one member; true if it was not there. `max_intset_entries` is the current
    /// `set-max-intset-entries`: as Redis's setTypeAdd, a non-integer member or an intset
    /// growing past it converts the set to a hash table for good.
    pub fn add(&mut self, member: &[u8], max_intset_entries: usize) -> bool {
        match self {
            Set::Intset(is) => match string2ll(member) {
                Some(v) => {
                    if !is.insert(v) {
                        return false;
                    }
                    if is.len() > max_intset_entries.min(INTSET_HARD_LIMIT) {
                        self.convert();
                    }
                    true
                }
                None => {
                    self.convert();
                    self.add(member, max_intset_entries)
                }
            },
            Set::Table(t) => t.add(member),
        }
    }

    /// SREM of one member; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            Set::Intset(is) => string2ll(member).is_some_and(|v| is.remove(v)),
            Set::Table(t) => t.remove(member),
        }
    }

    /// SISMEMBER (setTypeIsMember): a lookup, which steps a rehashing table's rehash as
    /// Redis's dictFind does (MEMORY USAGE sees the difference).
    pub fn contains(&self, member: &[u8]) -> bool {
        if let Set::Table(t) = self {
            t.dict.rehash_step();
        }
        self.has(member)
    }

    /// Whether `member` is in the set, without the lookup Redis would count (for answers
    /// Redis computes without looking the member up in this set).
    pub fn has(&self, member: &[u8]) -> bool {
        match self {
            Set::Intset(is) => string2ll(member).is_some_and(|v| is.contains(v)),
            Set::Table(t) => t.find(member).is_some(),
        }
    }

    /// The members: ascending for an intset (as Redis's SMEMBERS), storage order for a table.
    pub fn iter(&self) -> SetIter<'_> {
        SetIter {
            set: self,
            at: 0,
            end: self.len(),
        }
    }

    /// The i-th member in [`Set::iter`]'s order (O(1) in both encodings).
    pub fn get_index(&self, i: usize) -> Option<Member<'_>> {
        match self {
            Set::Intset(is) => (i < is.len()).then(|| Member::int(is.get(i))),
            Set::Table(t) => t.members.get(i).map(|m| Member::bytes(m)),
        }
    }

    /// A uniformly random member (SRANDMEMBER, SPOP without a count), None when empty.
    pub fn random_member(&self) -> Option<Member<'_>> {
        match self.len() {
            0 => None,
            n => self.get_index(fastrand::usize(..n)),
        }
    }

    /// Remove and return a uniformly random member (SPOP without a count).
    pub fn pop_random(&mut self) -> Option<Bytes> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let i = fastrand::usize(..n);
        Some(match self {
            Set::Intset(is) => {
                let v = is.get(i);
                is.remove_at(i);
                Member::int(v).to_bytes()
            }
            Set::Table(t) => t.remove_at(i).into(),
        })
    }

    /// `min(n, len)` distinct members chosen uniformly, in random order (SRANDMEMBER with a
    /// positive count; the caller serves `n >= len` from [`Set::iter`] as Redis does).
    pub fn random_distinct(&self, n: usize) -> Vec<Member<'_>> {
        sample_distinct(self.len(), n)
            .into_iter()
            .filter_map(|i| self.get_index(i))
            .collect()
    }

    /// `n` members drawn independently, so possibly repeated (SRANDMEMBER with a negative
    /// count). Empty when the set is.
    pub fn random_with_repetition(&self, n: usize) -> Vec<Member<'_>> {
        let len = self.len();
        if len == 0 {
            return Vec::new();
        }
        (0..n)
            .filter_map(|_| self.get_index(fastrand::usize(..len)))
            .collect()
    }

    /// Remove and return `min(n, len)` distinct random members (SPOP with a count), in random
    /// order. O(n) for a table, one O(len) pass for an intset; the encoding is kept.
    pub fn pop_random_n(&mut self, n: usize) -> Vec<Bytes> {
        let n = n.min(self.len());
        match self {
            Set::Table(t) => (0..n)
                .map(|_| {
                    let i = fastrand::usize(..t.members.len());
                    t.remove_at(i).into()
                })
                .collect(),
            Set::Intset(is) => {
                let picked = sample_distinct(is.len(), n);
                let out = picked
                    .iter()
                    .map(|&i| Member::int(is.get(i)).to_bytes())
                    .collect();
                is.remove_indices(&picked);
                out
            }
        }
    }

    /// What Redis's MEMORY USAGE would report for this set's value (objectComputeSize with
    /// the default 5 samples), not counting the key: the caller adds the key's sds and the
    /// 24-byte dictEntry, as memoryCommand does.
    pub fn mem_usage(&self) -> usize {
        self.mem_usage_samples(5)
    }

    /// [`Set::mem_usage`] with MEMORY USAGE's SAMPLES count (0 means all members).
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        match self {
            Set::Intset(is) => ROBJ + jemalloc_size(8 + is.len() * is.width()),
            Set::Table(t) => {
                let samples = if samples == 0 { usize::MAX } else { samples };
                let mut size = 0;
                let mut n = 0usize;
                for m in t.members.iter().take(samples) {
                    size += DICT_ENTRY + sds_alloc_size(m.len());
                    n += 1;
                }
                let mut usage = ROBJ + DICT + 8 * t.dict.slots();
                if n > 0 {
                    usage += (size as f64 / n as f64 * t.members.len() as f64) as usize;
                }
                usage
            }
        }
    }

    /// Redis's setTypeConvert: the intset's members, as decimal strings, in a hash table
    /// presized for them.
    fn convert(&mut self) {
        if let Set::Intset(is) = self {
            let n = is.len();
            let mut t = SetTable {
                members: Vec::with_capacity(n + 1),
                index: HashTable::with_capacity(n + 1),
                dict: DictModel::with_expand(n),
            };
            for i in 0..n {
                t.push_new(&Member::int(is.get(i)));
            }
            *self = Set::Table(Box::new(t));
        }
    }
}

/// A set member as bytes: borrowed from a table, formatted in place from an intset (no
/// allocation either way). Derefs to `[u8]`.
#[derive(Clone, Copy)]
pub struct Member<'a> {
    repr: MemberRepr<'a>,
}

#[derive(Clone, Copy)]
enum MemberRepr<'a> {
    Int { value: i64, buf: [u8; 20], len: u8 },
    Bytes(&'a [u8]),
}

impl<'a> Member<'a> {
    fn int(value: i64) -> Self {
        let mut buf = [0u8; 20];
        let mut f = itoa::Buffer::new();
        let s = f.format(value).as_bytes();
        buf[..s.len()].copy_from_slice(s);
        Member {
            repr: MemberRepr::Int {
                value,
                buf,
                len: s.len() as u8,
            },
        }
    }

    fn bytes(b: &'a [u8]) -> Self {
        Member {
            repr: MemberRepr::Bytes(b),
        }
    }

    /// The member as an integer when it came from an intset (SINTERCARD and friends can then
    /// skip parsing).
    pub fn as_int(&self) -> Option<i64> {
        match self.repr {
            MemberRepr::Int { value, .. } => Some(value),
            MemberRepr::Bytes(_) => None,
        }
    }

    /// An owned copy, for a reply or for storing elsewhere.
    pub fn to_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}

impl Deref for Member<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.repr {
            MemberRepr::Int { buf, len, .. } => &buf[..*len as usize],
            MemberRepr::Bytes(b) => b,
        }
    }
}

impl PartialEq for Member<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Member<'_> {}

impl fmt::Debug for Member<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

/// Walks a set's members; see [`Set::iter`].
pub struct SetIter<'a> {
    set: &'a Set,
    at: usize,
    end: usize,
}

impl<'a> Iterator for SetIter<'a> {
    type Item = Member<'a>;
    fn next(&mut self) -> Option<Member<'a>> {
        if self.at >= self.end {
            return None;
        }
        self.at += 1;
        self.set.get_index(self.at - 1)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.at;
        (n, Some(n))
    }
}

impl ExactSizeIterator for SetIter<'_> {}

/// `min(n, len)` distinct indices below `len`, uniformly chosen, in random order: a partial
/// Fisher-Yates shuffle when `n` is a large part of `len`, Floyd's sampling otherwise (so
/// the cost is O(n), not O(len)).
pub(super) fn sample_distinct(len: usize, n: usize) -> Vec<usize> {
    let n = n.min(len);
    if n == 0 {
        return Vec::new();
    }
    if n * 4 >= len {
        let mut v: Vec<usize> = (0..len).collect();
        for i in 0..n {
            let j = fastrand::usize(i..len);
            v.swap(i, j);
        }
        v.truncate(n);
        return v;
    }
    let mut seen = std::collections::HashSet::with_capacity(n);
    let mut out = Vec::with_capacity(n);
    for j in len - n..len {
        let t = fastrand::usize(..=j);
        let pick = if seen.insert(t) { t } else { j };
        if pick == j {
            seen.insert(j);
        }
        out.push(pick);
    }
    fastrand::shuffle(&mut out);
    out
}
