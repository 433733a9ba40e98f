//! The sorted-set type, in Redis 7.0's two encodings.
//!
//! Members are ordered by score, ties by member bytes (memcmp order, a prefix first), exactly
//! as Redis orders them; scores are never NaN (the caller rejects NaN input, and an INCR that
//! would produce one reports [`ZAddOutcome::Nan`] and changes nothing).
//!
//! While a sorted set has at most `zset-max-listpack-entries` members, none longer than
//! `zset-max-listpack-value`, it is a [`Listpack`]: one buffer in order, searched linearly as
//! Redis's listpack is. Past that it becomes a [`SkipList`]: Redis's skiplist with spans
//! (O(log n) insert, delete, rank and access by rank) whose 64-byte nodes live in one dense
//! arena per level class (so a descent's upper levels stay in few cache lines), plus a
//! member -> node hash table (O(1) ZSCORE, and O(1) uniform random members).
//!
//! Range operations work on ranks: [`ZSet::score_ranks`] and [`ZSet::lex_ranks`] turn
//! bounds into a range of ranks in O(log n), which [`ZSet::range`] walks either way and
//! [`ZSet::remove_range_by_rank`] deletes, so LIMIT offsets and counts cost nothing extra.

mod bounds;
mod iter;
mod listpack;
mod mem;
mod member;
mod order;
mod skiplist;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_bounds;
#[cfg(test)]
mod tests_model;

use std::fmt;
use std::ops::Range;

use bytes::Bytes;

use super::set::sample_distinct;

pub use bounds::{LexBound, ScoreBound};
pub use iter::ZRangeIter;
pub use listpack::Listpack;
pub use skiplist::SkipList;

use listpack::lp_entry;
#[cfg(test)]
use order::cmp_entry;

/// Redis's default `zset-max-listpack-entries`.
pub const ZSET_MAX_LISTPACK_ENTRIES: usize = 128;
/// Redis's default `zset-max-listpack-value`.
pub const ZSET_MAX_LISTPACK_VALUE: usize = 64;

/// Redis's listpacks refuse to grow past 1 GiB (LISTPACK_MAX_SAFETY_SIZE).
const LISTPACK_MAX_SAFETY_SIZE: usize = 1 << 30;

/// The two settings that decide a sorted set's encoding, read from the configuration by the
/// caller at each write (CONFIG SET changes them at run time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZSetLimits {
    /// `zset-max-listpack-entries`: most members a listpack holds.
    pub max_listpack_entries: usize,
    /// `zset-max-listpack-value`: longest member a listpack holds.
    pub max_listpack_value: usize,
}

impl Default for ZSetLimits {
    fn default() -> Self {
        ZSetLimits {
            max_listpack_entries: ZSET_MAX_LISTPACK_ENTRIES,
            max_listpack_value: ZSET_MAX_LISTPACK_VALUE,
        }
    }
}

/// ZADD's options, applied as Redis's zsetAdd applies them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZAddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing members.
    pub xx: bool,
    /// Only update when the new score is greater.
    pub gt: bool,
    /// Only update when the new score is less.
    pub lt: bool,
    /// Add the score to the current one (0 for a new member).
    pub incr: bool,
}

/// What one ZADD element did, so the caller can count added/changed members (CH) and reply
/// to INCR.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZAddOutcome {
    /// A new member, with this score.
    Added(f64),
    /// An existing member's score changed to this.
    Updated(f64),
    /// An existing member kept this score (the same score again, or INCR by 0).
    Unchanged(f64),
    /// Nothing done: NX on an existing member, XX on a missing one, or GT/LT refused (ZADD
    /// INCR replies nil).
    Skipped,
    /// The score, or the INCR result, is NaN: Redis's "resulting score is not a number
    /// (NaN)"; nothing changed.
    Nan,
}

/// A sorted set in Redis's `listpack` or `skiplist` encoding. 24 bytes, so it fits the
/// keyspace value enum (whose types are at most 32 bytes).
#[derive(Clone)]
pub enum ZSet {
    /// Small: one ordered buffer.
    Listpack(Listpack),
    /// Large: skiplist plus hash table, boxed to keep the enum small.
    Skiplist(Box<SkipList>),
}

const _: () = assert!(std::mem::size_of::<ZSet>() <= 24);

impl Default for ZSet {
    fn default() -> Self {
        ZSet::new()
    }
}

impl fmt::Debug for ZSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZSet")
            .field("encoding", &self.encoding())
            .field("len", &self.len())
            .finish()
    }
}

impl ZSet {
    /// An empty listpack-encoded sorted set (createZsetListpackObject); allocates nothing.
    pub fn new() -> Self {
        ZSet::Listpack(Listpack::default())
    }

    /// An empty skiplist-encoded sorted set (createZsetObject): what ZADD creates when
    /// `zset-max-listpack-entries` is 0 or the first member is longer than
    /// `zset-max-listpack-value`, and ZRANGESTORE/ZUNIONSTORE for large results.
    pub fn new_skiplist() -> Self {
        ZSet::Skiplist(Box::new(SkipList::new()))
    }

    /// ZCARD.
    pub fn len(&self) -> usize {
        match self {
            ZSet::Listpack(lp) => lp.len(),
            ZSet::Skiplist(sl) => sl.len(),
        }
    }

    /// True with no members (the keyspace deletes such a key).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OBJECT ENCODING's answer: `listpack` or `skiplist`.
    pub fn encoding(&self) -> &'static str {
        match self {
            ZSet::Listpack(_) => "listpack",
            ZSet::Skiplist(_) => "skiplist",
        }
    }

    /// True while listpack-encoded.
    pub fn is_listpack(&self) -> bool {
        matches!(self, ZSet::Listpack(_))
    }

    /// ZSCORE.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            ZSet::Listpack(lp) => lp.find(member).map(|e| e.score),
            ZSet::Skiplist(sl) => sl.find(member).map(|x| sl.nodes[x as usize].score),
        }
    }

    /// True if `member` is in the set.
    pub fn contains(&self, member: &[u8]) -> bool {
        self.score(member).is_some()
    }

    /// Set a member's score, adding it if new: (added, changed). A new member that does not
    /// fit the listpack `limits` converts the set to a skiplist first, as zsetAdd does.
    pub fn insert_or_update(
        &mut self,
        member: &[u8],
        score: f64,
        limits: ZSetLimits,
    ) -> (bool, bool) {
        match self.add(member, score, ZAddFlags::default(), limits) {
            ZAddOutcome::Added(_) => (true, true),
            ZAddOutcome::Updated(_) => (false, true),
            _ => (false, false),
        }
    }

    /// One ZADD/ZINCRBY element with Redis's zsetAdd semantics: NX/XX/GT/LT/INCR (GT and LT
    /// only gate existing members), NaN reported, the encoding converted when a new member
    /// breaks the listpack `limits`. Updating a member never converts.
    pub fn add(
        &mut self,
        member: &[u8],
        score: f64,
        flags: ZAddFlags,
        limits: ZSetLimits,
    ) -> ZAddOutcome {
        if score.is_nan() {
            return ZAddOutcome::Nan;
        }
        // Current score -> the score to store, or why not.
        let decide = |cur: f64| -> Result<f64, ZAddOutcome> {
            if flags.nx {
                return Err(ZAddOutcome::Skipped);
            }
            let mut s = score;
            if flags.incr {
                s += cur;
                if s.is_nan() {
                    return Err(ZAddOutcome::Nan);
                }
            }
            if (flags.lt && s >= cur) || (flags.gt && s <= cur) {
                return Err(ZAddOutcome::Skipped);
            }
            Ok(s)
        };
        if let ZSet::Listpack(lp) = self {
            if let Some(e) = lp.find(member) {
                let s = match decide(e.score) {
                    Ok(s) => s,
                    Err(out) => return out,
                };
                if s == e.score {
                    return ZAddOutcome::Unchanged(s);
                }
                lp.delete(e.off, e.end, 1);
                lp.insert(member, s);
                return ZAddOutcome::Updated(s);
            }
            if flags.xx {
                return ZAddOutcome::Skipped;
            }
            if lp.len() < limits.max_listpack_entries
                && member.len() <= limits.max_listpack_value
                && lp.buf.len() + member.len() <= LISTPACK_MAX_SAFETY_SIZE
            {
                lp.insert(member, score);
                return ZAddOutcome::Added(score);
            }
            self.convert_to_skiplist();
        }
        let ZSet::Skiplist(sl) = self else {
            unreachable!("converted above")
        };
        // dictFind.
        sl.dict.rehash_step();
        if let Some(x) = sl.find(member) {
            let cur = sl.nodes[x as usize].score;
            let s = match decide(cur) {
                Ok(s) => s,
                Err(out) => return out,
            };
            if s == cur {
                return ZAddOutcome::Unchanged(s);
            }
            sl.update_score(x, s);
            return ZAddOutcome::Updated(s);
        }
        if flags.xx {
            return ZAddOutcome::Skipped;
        }
        sl.insert_new(member, score);
        ZAddOutcome::Added(score)
    }

    /// ZREM of one member; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            ZSet::Listpack(lp) => match lp.find(member) {
                Some(e) => {
                    lp.delete(e.off, e.end, 1);
                    true
                }
                None => false,
            },
            ZSet::Skiplist(sl) => {
                let gone = sl.delete(member);
                sl.dict.resize_if_needed(sl.len());
                sl.shrink();
                gone
            }
        }
    }

    /// ZRANK (ZREVRANK with `reverse`): 0-based.
    pub fn rank(&self, member: &[u8], reverse: bool) -> Option<usize> {
        let r = match self {
            ZSet::Listpack(lp) => lp.find(member)?.index,
            ZSet::Skiplist(sl) => sl.rank_of(sl.find(member)?),
        };
        Some(if reverse { self.len() - 1 - r } else { r })
    }

    /// The member at a 0-based rank in ascending order.
    pub fn get_by_rank(&self, rank: usize) -> Option<(&[u8], f64)> {
        self.range(rank..rank.saturating_add(1), false).next()
    }

    /// The ascending ranks of the members whose scores lie within `min`..`max` (empty when
    /// none, or when the bounds cross): O(log n) for a skiplist. Its length is ZCOUNT.
    pub fn score_ranks(&self, min: &ScoreBound, max: &ScoreBound) -> Range<usize> {
        match self {
            ZSet::Listpack(lp) => {
                lp.ranks_between(|_, s| min.admits_above(s), |_, s| max.admits_below(s))
            }
            ZSet::Skiplist(sl) => {
                let start = sl.count_prefix(|n| !min.admits_above(n.score));
                let end = sl.count_prefix(|n| max.admits_below(n.score));
                start..end.max(start)
            }
        }
    }

    /// The ascending ranks of the members within a lex range. Meaningful, as in Redis, when
    /// every score is equal; otherwise it follows Redis's walk (linear for a listpack, a
    /// descent for a skiplist). Its length is ZLEXCOUNT.
    pub fn lex_ranks(&self, min: &LexBound, max: &LexBound) -> Range<usize> {
        match self {
            ZSet::Listpack(lp) => {
                lp.ranks_between(|m, _| min.admits_above(m), |m, _| max.admits_below(m))
            }
            ZSet::Skiplist(sl) => {
                let start = sl.count_prefix(|n| !min.admits_above(&n.ele));
                let end = sl.count_prefix(|n| max.admits_below(&n.ele));
                start..end.max(start)
            }
        }
    }

    /// ZCOUNT.
    pub fn count_in_score_range(&self, min: &ScoreBound, max: &ScoreBound) -> usize {
        self.score_ranks(min, max).len()
    }

    /// ZLEXCOUNT.
    pub fn count_in_lex_range(&self, min: &LexBound, max: &LexBound) -> usize {
        self.lex_ranks(min, max).len()
    }

    /// ZRANGEBYSCORE (ZREVRANGEBYSCORE with `reverse`) without LIMIT; for LIMIT, narrow
    /// [`ZSet::score_ranks`] and call [`ZSet::range`].
    pub fn range_by_score(
        &self,
        min: &ScoreBound,
        max: &ScoreBound,
        reverse: bool,
    ) -> ZRangeIter<'_> {
        self.range(self.score_ranks(min, max), reverse)
    }

    /// ZRANGEBYLEX (ZREVRANGEBYLEX with `reverse`) without LIMIT.
    pub fn range_by_lex(&self, min: &LexBound, max: &LexBound, reverse: bool) -> ZRangeIter<'_> {
        self.range(self.lex_ranks(min, max), reverse)
    }

    /// ZREMRANGEBYRANK on ascending ranks (clamped); the number removed.
    pub fn remove_range_by_rank(&mut self, ranks: Range<usize>) -> usize {
        let end = ranks.end.min(self.len());
        let start = ranks.start.min(end);
        if start == end {
            return 0;
        }
        match self {
            ZSet::Listpack(lp) => {
                let a = lp.offset_of(start);
                let mut b = a;
                for _ in start..end {
                    b = lp_entry(&lp.buf, b).end;
                }
                lp.delete(a, b, end - start);
            }
            ZSet::Skiplist(sl) => {
                sl.delete_ranks(start, end);
                sl.dict.resize_if_needed(sl.len());
                sl.shrink();
            }
        }
        end - start
    }

    /// ZREMRANGEBYSCORE; the number removed.
    pub fn remove_range_by_score(&mut self, min: &ScoreBound, max: &ScoreBound) -> usize {
        let r = self.score_ranks(min, max);
        self.remove_range_by_rank(r)
    }

    /// ZREMRANGEBYLEX; the number removed.
    pub fn remove_range_by_lex(&mut self, min: &LexBound, max: &LexBound) -> usize {
        let r = self.lex_ranks(min, max);
        self.remove_range_by_rank(r)
    }

    /// ZPOPMIN (ZPOPMAX with `max`): remove and return up to `count` members, lowest first
    /// (highest first with `max`).
    pub fn pop(&mut self, count: usize, max: bool) -> Vec<(Bytes, f64)> {
        let len = self.len();
        let n = count.min(len);
        let ranks = if max { len - n..len } else { 0..n };
        let out: Vec<(Bytes, f64)> = self
            .range(ranks.clone(), max)
            .map(|(m, s)| (Bytes::copy_from_slice(m), s))
            .collect();
        self.remove_range_by_rank(ranks);
        out
    }

    /// A uniformly random member (ZRANDMEMBER without a count): O(1) for a skiplist.
    pub fn random_member(&self) -> Option<(&[u8], f64)> {
        match self.len() {
            0 => None,
            n => self.nth_any_order(fastrand::usize(..n)),
        }
    }

    /// `min(n, len)` distinct members chosen uniformly, in random order (ZRANDMEMBER with a
    /// positive count; the caller serves `n >= len` from [`ZSet::iter`] as Redis does).
    pub fn random_distinct(&self, n: usize) -> Vec<(&[u8], f64)> {
        let picks = sample_distinct(self.len(), n);
        self.pick_any_order(&picks)
    }

    /// `n` members drawn independently, so possibly repeated (ZRANDMEMBER with a negative
    /// count). Empty when the set is.
    pub fn random_with_repetition(&self, n: usize) -> Vec<(&[u8], f64)> {
        let len = self.len();
        if len == 0 {
            return Vec::new();
        }
        let picks: Vec<usize> = (0..n).map(|_| fastrand::usize(..len)).collect();
        self.pick_any_order(&picks)
    }

    /// Redis's zsetConvertToListpackIfNeeded, for the stores (ZUNIONSTORE, ZRANGESTORE...)
    /// that build a skiplist first: back to a listpack when the result fits `limits`.
    pub fn convert_to_listpack_if_small(&mut self, limits: ZSetLimits) {
        let ZSet::Skiplist(sl) = self else { return };
        if sl.len() > limits.max_listpack_entries {
            return;
        }
        let (mut longest, mut total) = (0, 0);
        for n in sl.nodes.iter() {
            longest = longest.max(n.ele.len());
            total += n.ele.len();
        }
        if longest > limits.max_listpack_value || total > LISTPACK_MAX_SAFETY_SIZE {
            return;
        }
        let mut lp = Listpack::default();
        for (m, s) in self.iter() {
            lp.push_back(m, s);
        }
        *self = ZSet::Listpack(lp);
    }

    /// The i-th member in storage order (any order, for random picks): O(1) for a skiplist
    /// without freed slots, O(log n) with.
    fn nth_any_order(&self, i: usize) -> Option<(&[u8], f64)> {
        match self {
            ZSet::Listpack(_) => self.get_by_rank(i),
            // With no holes slot i + 1 is a uniform pick; with holes, rank i is.
            ZSet::Skiplist(sl) if sl.nodes.holes() == 0 => {
                sl.nodes.nth(i).map(|n| (&n.ele[..], n.score))
            }
            ZSet::Skiplist(_) => self.get_by_rank(i),
        }
    }

    fn pick_any_order(&self, picks: &[usize]) -> Vec<(&[u8], f64)> {
        match self {
            ZSet::Listpack(lp) => {
                let entries: Vec<(&[u8], f64)> = lp.iter().collect();
                picks.iter().map(|&i| entries[i]).collect()
            }
            ZSet::Skiplist(_) => picks
                .iter()
                .filter_map(|&i| self.nth_any_order(i))
                .collect(),
        }
    }

    /// Redis's zsetConvert to skiplist: each member added to a fresh dict and skiplist (also
    /// what SORT does to the sorted set it reads).
    pub fn convert_to_skiplist(&mut self) {
        if let ZSet::Listpack(lp) = self {
            let mut sl = SkipList::new();
            for (m, s) in lp.iter() {
                sl.dict.rehash_step();
                sl.dict.expand_if_needed(sl.len());
                sl.push_and_link(m, s);
            }
            *self = ZSet::Skiplist(Box::new(sl));
        }
    }
}
