//! The set type, in Redis 7.0's two encodings.
//!
//! A set starts as an [`Intset`] (a sorted, packed array of integers, as Redis's `intset.c`)
//! while every member is a canonical 64-bit integer and there are at most
//! `set-max-intset-entries` of them; SMEMBERS of such a set therefore comes back in ascending
//! numeric order, exactly as from Redis. Past either limit it becomes a hash table with a dense
//! member array (O(1) add, remove, lookup and uniform random access for SPOP/SRANDMEMBER) and,
//! as in Redis, never converts back.
//!
//! This module also holds the small models of Redis's allocator and dict that both this file
//! and `zset.rs` use to answer MEMORY USAGE the way Redis would.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use ahash::RandomState;
use bytes::Bytes;
use hashbrown::HashTable;

/// Redis's default `set-max-intset-entries`: the most members an intset-encoded set holds.
pub const SET_MAX_INTSET_ENTRIES: usize = 512;

/// Redis caps `set-max-intset-entries` at 2^30 "due to intset internals" (t_set.c).
const INTSET_HARD_LIMIT: usize = 1 << 30;

/// A set, in Redis's `intset` or `hashtable` encoding. 24 bytes, so it fits the keyspace's
/// 32-byte value enum.
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

    /// SISMEMBER.
    pub fn contains(&self, member: &[u8]) -> bool {
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

/// Redis's intset: one buffer, the first byte the width of every value (2, 4 or 8 bytes,
/// widened for good when a value needs it), then the values little-endian in ascending
/// order. Empty means no allocation. Found by binary search; inserts and removes move the
/// tail and reallocate exactly, as intsetAdd/intsetRemove do.
#[derive(Clone, Default)]
pub struct Intset {
    buf: Vec<u8>,
}

impl Intset {
    fn width(&self) -> usize {
        self.buf.first().map_or(2, |&w| w as usize)
    }

    fn len(&self) -> usize {
        match self.buf.len() {
            0 => 0,
            n => (n - 1) / self.width(),
        }
    }

    fn get(&self, i: usize) -> i64 {
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

    fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    fn insert(&mut self, v: i64) -> bool {
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

    fn remove(&mut self, v: i64) -> bool {
        match self.search(v) {
            Ok(i) => {
                self.remove_at(i);
                true
            }
            Err(_) => false,
        }
    }

    fn remove_at(&mut self, i: usize) {
        if self.len() == 1 {
            self.buf = Vec::new();
            return;
        }
        let w = self.width();
        self.buf.drain(1 + i * w..1 + (i + 1) * w);
        self.buf.shrink_to_fit();
    }

    /// Drop the values at these (distinct) positions in one pass.
    fn remove_indices(&mut self, idx: &[usize]) {
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

/// The hash-table encoding: members in a dense array (O(1) uniform random access; removal
/// swaps the last member into the hole) and a table of their positions keyed by member.
#[derive(Clone)]
pub struct SetTable {
    members: Vec<Box<[u8]>>,
    index: HashTable<u32>,
    /// What Redis's dict for the same operations would look like, for MEMORY USAGE.
    dict: DictModel,
}

impl SetTable {
    fn find(&self, member: &[u8]) -> Option<usize> {
        let members = &self.members;
        self.index
            .find(hash_bytes(member), |&i| &*members[i as usize] == member)
            .map(|&i| i as usize)
    }

    /// Append a member known to be absent.
    fn push_new(&mut self, member: &[u8]) {
        let i = self.members.len() as u32;
        self.members.push(member.into());
        let members = &self.members;
        self.index
            .insert_unique(hash_bytes(member), i, |&j| hash_bytes(&members[j as usize]));
    }

    fn add(&mut self, member: &[u8]) -> bool {
        // dictAddRaw: one rehash step, then the lookup that may expand the table.
        self.dict.rehash_step();
        if self.find(member).is_some() {
            return false;
        }
        self.dict.expand_if_needed(self.members.len());
        self.push_new(member);
        true
    }

    fn remove(&mut self, member: &[u8]) -> bool {
        match self.find(member) {
            Some(i) => {
                self.remove_at(i);
                true
            }
            None => {
                self.dict.rehash_step();
                false
            }
        }
    }

    /// Remove the member at position `i`, moving the last member into its place.
    fn remove_at(&mut self, i: usize) -> Box<[u8]> {
        // dictDelete (a rehash step), then setTypeRemove's htNeedsResize/dictResize.
        self.dict.rehash_step();
        let members = &self.members;
        let h = hash_bytes(&members[i]);
        if let Ok(e) = self.index.find_entry(h, |&j| j as usize == i) {
            e.remove();
        }
        let last = self.members.len() - 1;
        if i != last {
            let h = hash_bytes(&self.members[last]);
            if let Some(slot) = self.index.find_mut(h, |&j| j as usize == last) {
                *slot = i as u32;
            }
        }
        let out = self.members.swap_remove(i);
        self.dict.resize_if_needed(self.members.len());
        self.shrink();
        out
    }

    /// Give memory back once the set has shrunk to a quarter of its capacity.
    fn shrink(&mut self) {
        let n = self.members.len();
        if n > 16 && n * 4 < self.members.capacity() {
            self.members.shrink_to(n * 2);
            let members = &self.members;
            self.index
                .shrink_to(n * 2, |&j| hash_bytes(&members[j as usize]));
        }
    }
}

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

/// Redis's string2ll: an optional '-', then digits with no leading zero (or a lone "0");
/// no '+', no spaces, at most 20 bytes, within i64. Only such members go in an intset, so
/// "007" or "+1" stay strings, as in Redis.
pub(super) fn string2ll(s: &[u8]) -> Option<i64> {
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

/// One process-wide hasher for set and sorted-set tables (randomly keyed at start, so
/// members cannot be chosen to collide), instead of 32 bytes of state per value.
pub(super) fn hash_bytes(b: &[u8]) -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    STATE.get_or_init(RandomState::new).hash_one(b)
}

// ---- Models of Redis's memory accounting, for MEMORY USAGE ----------------------------

/// sizeof(robj).
pub(super) const ROBJ: usize = 16;
/// sizeof(dict) in Redis 7.0.
pub(super) const DICT: usize = 56;
/// sizeof(dictEntry).
pub(super) const DICT_ENTRY: usize = 24;

/// The usable size jemalloc (Redis's allocator) gives a request of `n` bytes: 8, then
/// multiples of 16 up to 128, then four size classes per doubling.
pub(super) fn jemalloc_size(n: usize) -> usize {
    if n <= 8 {
        8
    } else if n <= 128 {
        (n + 15) & !15
    } else {
        let p = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
        let step = p / 4;
        n.div_ceil(step) * step
    }
}

/// sdsZmallocSize of an sds made by sdsnewlen for a `len`-byte string: header by sds type
/// (an empty string gets type 8), the bytes and the terminator, rounded by jemalloc.
pub(super) fn sds_alloc_size(len: usize) -> usize {
    let hdr = match len {
        0 => 3,
        1..=31 => 1,
        32..=255 => 3,
        256..=65535 => 5,
        _ if (len as u64) < (1u64 << 32) => 9,
        _ => 17,
    };
    jemalloc_size(hdr + len + 1)
}

/// The bucket count of Redis's dict had it gone through the same adds and deletes: its
/// power-of-two table grows when full and shrinks below 10% fill, and rehashes
/// incrementally, one bucket per operation, during which both tables count (dictSlots).
/// The steps a rehash takes are estimated from the expected number of non-empty buckets.
#[derive(Clone, Debug, Default)]
pub(super) struct DictModel {
    size0: usize,
    size1: usize,
    rehash_left: usize,
}

impl DictModel {
    /// dictCreate then dictExpand(n): as setTypeConvert presizes the converted set.
    pub(super) fn with_expand(n: usize) -> Self {
        DictModel {
            size0: next_table_size(n),
            size1: 0,
            rehash_left: 0,
        }
    }

    /// dictSlots: buckets in both tables.
    pub(super) fn slots(&self) -> usize {
        self.size0 + self.size1
    }

    /// _dictRehashStep, which every dict lookup, add and delete performs while rehashing.
    pub(super) fn rehash_step(&mut self) {
        if self.size1 != 0 {
            self.rehash_left = self.rehash_left.saturating_sub(1);
            if self.rehash_left == 0 {
                self.size0 = self.size1;
                self.size1 = 0;
            }
        }
    }

    /// _dictExpandIfNeeded before adding to a dict holding `used` entries.
    pub(super) fn expand_if_needed(&mut self, used: usize) {
        if self.size1 != 0 {
            return;
        }
        if self.size0 == 0 {
            self.size0 = 4;
        } else if used >= self.size0 {
            self.start_rehash(used, next_table_size(used + 1));
        }
    }

    /// htNeedsResize then dictResize after a delete left `used` entries.
    pub(super) fn resize_if_needed(&mut self, used: usize) {
        let size = self.slots();
        if size > 4 && used * 100 / size < 10 && self.size1 == 0 {
            let new = next_table_size(used.max(4));
            if new != self.size0 {
                self.start_rehash(used, new);
            }
        }
    }

    fn start_rehash(&mut self, used: usize, new: usize) {
        let s = self.size0 as f64;
        // Expected non-empty buckets among size0 holding `used` entries, plus the steps that
        // stop after visiting ten empty buckets.
        let nonempty = s * (1.0 - (1.0 - 1.0 / s).powf(used as f64));
        let steps = nonempty + (s - nonempty) / 10.0;
        self.size1 = new;
        self.rehash_left = (steps.round() as usize).max(1);
    }
}

/// _dictNextExp: the power of two at or above `n`, at least 4.
fn next_table_size(n: usize) -> usize {
    n.max(4).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn members(s: &Set) -> Vec<Vec<u8>> {
        s.iter().map(|m| m.to_vec()).collect()
    }

    fn sorted_members(s: &Set) -> Vec<Vec<u8>> {
        let mut v = members(s);
        v.sort();
        v
    }

    #[test]
    fn set_value_fits_the_keyspace_enum() {
        assert!(std::mem::size_of::<Set>() <= 24);
    }

    #[test]
    fn string2ll_accepts_only_canonical_integers() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"-1"), Some(-1));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"+1",
            b"01",
            b" 1",
            b"1 ",
            b"1a",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"00",
            b"123456789012345678901",
        ] {
            assert_eq!(string2ll(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn integers_stay_an_intset_sorted_numerically() {
        let mut s = Set::new();
        for m in ["10", "-3", "2", "100000", "2", "-70000", "5000000000"] {
            s.add(m.as_bytes(), SET_MAX_INTSET_ENTRIES);
        }
        assert_eq!(s.encoding(), "intset");
        assert_eq!(s.len(), 6);
        let got: Vec<String> = s
            .iter()
            .map(|m| String::from_utf8(m.to_vec()).unwrap())
            .collect();
        assert_eq!(
            got,
            ["-70000", "-3", "2", "10", "100000", "5000000000"].map(String::from)
        );
        assert!(s.contains(b"5000000000"));
        assert!(!s.contains(b"05000000000"));
        assert!(!s.contains(b"abc"));
        assert!(s.remove(b"-3"));
        assert!(!s.remove(b"-3"));
        assert!(!s.remove(b"x"));
        assert_eq!(s.iter().next().unwrap().as_int(), Some(-70000));
    }

    #[test]
    fn non_canonical_integer_converts_to_hashtable() {
        for odd in ["-0", "+1", "01", " 1", "abc", "1.0"] {
            let mut s = Set::new();
            s.add(b"1", SET_MAX_INTSET_ENTRIES);
            assert!(s.add(odd.as_bytes(), SET_MAX_INTSET_ENTRIES));
            assert_eq!(s.encoding(), "hashtable", "{odd}");
            assert!(s.contains(b"1") && s.contains(odd.as_bytes()));
            assert_eq!(s.len(), 2);
        }
    }

    #[test]
    fn intset_converts_past_max_entries_and_never_back() {
        let mut s = Set::new();
        for i in 0..512 {
            assert!(s.add(i.to_string().as_bytes(), 512));
        }
        assert_eq!(s.encoding(), "intset");
        assert!(!s.add(b"7", 512));
        assert_eq!(s.encoding(), "intset");
        assert!(s.add(b"512", 512));
        assert_eq!(s.encoding(), "hashtable");
        for i in 0..500 {
            assert!(s.remove(i.to_string().as_bytes()));
        }
        assert_eq!(s.encoding(), "hashtable");
        assert_eq!(s.len(), 13);
        assert!(s.contains(b"511") && !s.contains(b"5"));

        let mut s = Set::new();
        s.add(b"1", 0);
        assert_eq!(s.encoding(), "hashtable");
    }

    #[test]
    fn removing_the_last_member_frees_the_intset() {
        let mut s = Set::new();
        s.add(b"5", 512);
        assert!(s.remove(b"5"));
        assert!(s.is_empty());
        match &s {
            Set::Intset(is) => assert_eq!(is.buf.capacity(), 0),
            _ => panic!(),
        }
    }

    #[test]
    fn random_member_pop_and_samples() {
        fastrand::seed(7);
        for hashtable in [false, true] {
            let mut s = Set::new();
            for i in 0..100 {
                s.add(i.to_string().as_bytes(), 512);
            }
            if hashtable {
                s.add(b"x", 512);
                s.remove(b"x");
            }
            assert_eq!(s.is_intset(), !hashtable);
            assert!(s.contains(&s.random_member().unwrap()));
            let d = s.random_distinct(30);
            assert_eq!(d.len(), 30);
            let uniq: BTreeSet<Vec<u8>> = d.iter().map(|m| m.to_vec()).collect();
            assert_eq!(uniq.len(), 30);
            assert_eq!(s.random_distinct(1000).len(), 100);
            let r = s.random_with_repetition(500);
            assert_eq!(r.len(), 500);
            assert!(r.iter().all(|m| s.contains(m)));
            let popped = s.pop_random_n(40);
            assert_eq!(popped.len(), 40);
            assert_eq!(s.len(), 60);
            assert!(popped.iter().all(|m| !s.contains(m)));
            let one = s.pop_random().unwrap();
            assert!(!s.contains(&one));
            let rest = s.pop_random_n(usize::MAX);
            assert_eq!(rest.len(), 59);
            assert!(s.is_empty() && s.pop_random().is_none() && s.random_member().is_none());
            assert!(s.random_with_repetition(3).is_empty());
        }
    }

    #[test]
    fn random_member_is_roughly_uniform() {
        fastrand::seed(11);
        for hashtable in [false, true] {
            let mut s = Set::new();
            for i in 0..10 {
                s.add(i.to_string().as_bytes(), if hashtable { 0 } else { 512 });
            }
            let mut counts = [0usize; 10];
            for _ in 0..20000 {
                let m = s.random_member().unwrap();
                counts[string2ll(&m).unwrap() as usize] += 1;
            }
            assert!(
                counts.iter().all(|&c| (1600..2400).contains(&c)),
                "{counts:?}"
            );
        }
    }

    #[test]
    fn sample_distinct_covers_both_strategies() {
        fastrand::seed(3);
        for (len, n) in [(10, 10), (10, 3), (1000, 5), (1000, 999), (5, 0), (0, 4)] {
            let v = sample_distinct(len, n);
            assert_eq!(v.len(), n.min(len));
            let u: BTreeSet<usize> = v.iter().copied().collect();
            assert_eq!(u.len(), v.len());
            assert!(v.iter().all(|&i| i < len));
        }
    }

    /// Random adds, removes and pops against a BTreeSet, across the intset -> hashtable
    /// conversion (integers first, strings later, a small intset limit).
    #[test]
    fn randomized_against_btreeset_model() {
        let mut converted = 0;
        for seed in 0..20u64 {
            fastrand::seed(seed);
            let mut s = Set::new();
            let mut model = BTreeSet::<Vec<u8>>::new();
            let max = 64;
            for step in 0..3000 {
                let member: Vec<u8> = if step < 1500 || fastrand::bool() {
                    match fastrand::u8(..4) {
                        0 => fastrand::i64(-40..40).to_string().into_bytes(),
                        1 => fastrand::i64(..).to_string().into_bytes(),
                        2 => fastrand::i64(-70000..70000).to_string().into_bytes(),
                        _ => fastrand::i64(-3_000_000_000..3_000_000_000)
                            .to_string()
                            .into_bytes(),
                    }
                } else {
                    format!("m{}", fastrand::u32(..200)).into_bytes()
                };
                match fastrand::u8(..10) {
                    0..=5 => assert_eq!(s.add(&member, max), model.insert(member.clone())),
                    6..=7 => assert_eq!(s.remove(&member), model.remove(&member)),
                    8 => {
                        if let Some(p) = s.pop_random() {
                            assert!(model.remove(&p[..]));
                        } else {
                            assert!(model.is_empty());
                        }
                    }
                    _ => assert_eq!(s.contains(&member), model.contains(&member)),
                }
                assert_eq!(s.len(), model.len());
                if s.is_intset() {
                    assert!(s.len() <= max);
                }
            }
            let got = sorted_members(&s);
            let want: Vec<Vec<u8>> = model.iter().cloned().collect();
            assert_eq!(got, want, "seed {seed}");
            if s.is_intset() {
                let ints: Vec<i64> = s.iter().map(|m| m.as_int().unwrap()).collect();
                assert!(ints.windows(2).all(|w| w[0] < w[1]));
            } else {
                converted += 1;
            }
        }
        assert!(
            converted > 10,
            "most runs must reach the hashtable encoding"
        );
    }

    #[test]
    fn jemalloc_size_classes() {
        let cases = [
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (100, 112),
            (128, 128),
            (129, 160),
            (257, 320),
            (1008, 1024),
            (1025, 1280),
            (8193, 10240),
            (16384, 16384),
            (16385, 20480),
        ];
        for (n, want) in cases {
            assert_eq!(jemalloc_size(n), want, "{n}");
        }
        assert_eq!(sds_alloc_size(2), 8);
        assert_eq!(sds_alloc_size(0), 8);
        assert_eq!(sds_alloc_size(31), 40_usize.next_multiple_of(16));
        assert_eq!(sds_alloc_size(32), 48);
    }

    /// MEMORY USAGE of the same sets on redis-server 7.0.15, minus the key's share (its sds
    /// plus the 24-byte dictEntry): `sadd is10 1..10` reports 80 (key "is10": 8+24),
    /// `is500` 1072, `hs10` (m1..m10) 616 (key 32), `hs1000` (m1..m1000) 40296 (key 32).
    #[test]
    fn mem_usage_matches_redis_for_the_measured_sets() {
        let build = |n: usize, prefix: &str| {
            let mut s = Set::new();
            for i in 1..=n {
                s.add(format!("{prefix}{i}").as_bytes(), SET_MAX_INTSET_ENTRIES);
            }
            s
        };
        assert_eq!(build(10, "").mem_usage(), 80 - 32);
        assert_eq!(build(500, "").mem_usage(), 1072 - 32);
        assert_eq!(build(10, "m").mem_usage(), 616 - 32);
        assert_eq!(build(1000, "m").mem_usage(), 40296 - 32);
        assert_eq!(build(1000, "m").mem_usage_samples(0), 40296 - 32);
    }

    #[test]
    fn dict_model_grows_rehashes_and_shrinks() {
        let mut d = DictModel::default();
        for used in 0..4 {
            d.rehash_step();
            d.expand_if_needed(used);
        }
        assert_eq!(d.slots(), 4);
        d.rehash_step();
        d.expand_if_needed(4);
        assert_eq!(d.slots(), 12);
        for _ in 0..10 {
            d.rehash_step();
        }
        assert_eq!(d.slots(), 8);
        d.resize_if_needed(0);
        assert_eq!(d.slots(), 12);
        for _ in 0..10 {
            d.rehash_step();
        }
        assert_eq!(d.slots(), 4);
    }
}
