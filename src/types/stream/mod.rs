//! Redis 7.0's stream value, as a pure data structure: entries, trimming, tombstones, the
//! stream's counters and its consumer groups (see `group.rs`).
//!
//! Entries live as Redis keeps them: nodes of up to `stream-node-max-entries` entries /
//! `stream-node-max-bytes` bytes, each one listpack in t_stream.c's layout (a master entry
//! whose fields later entries are compressed against, IDs as deltas from the node's first
//! ID, deletions as tombstones), keyed by their first ID in a `BTreeMap` where Redis has a
//! radix tree. A small entry costs about the same 15 or so bytes as in redis-server, node
//! boundaries fall where Redis puts them (so XINFO's radix-tree figures and approximate
//! trimming agree), and MEMORY USAGE follows objectComputeSize from the same listpack sizes.
//!
//! Nothing here knows keys, clients or the wire: times come in as arguments (the command
//! layer passes the server clock, so a test clock moves IDs and idle times), errors come out
//! as [`StreamError`] for the command layer to spell as Redis does.

#![warn(missing_docs)]

mod delivery;
mod group;
mod id;
mod iter;
mod load;
mod node;
mod rax;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_group;
#[cfg(test)]
mod tests_model;

use std::collections::BTreeMap;

pub use delivery::{AutoClaim, Claim, ClaimOptions};
pub use group::{Consumer, Group, LoadPelIssue, Nack, PelChange, PendingEntry, PendingSummary};
pub use id::{
    parse_add_id, parse_id, parse_interval, parse_range_end, parse_range_start, parse_strict_id,
    AddId, IdBuf, StreamError, StreamId,
};

pub use iter::{Entry, Fields, Range};
pub use load::{LoadIssue, SavedCounters};

use iter::range_in;
use node::{Node, FLAG_DELETED};

/// The largest total of field and value bytes one entry may have (STREAM_LISTPACK_MAX_SIZE).
pub const MAX_ENTRY_BYTES: usize = 1 << 30;

/// The read counter of a group whose position is unknown (SCG_INVALID_ENTRIES_READ).
pub const INVALID_ENTRIES_READ: i64 = -1;

/// How big a node may grow: `stream-node-max-bytes` (0: no limit but Redis's 1 GB) and
/// `stream-node-max-entries` (0: no limit).
#[derive(Clone, Copy, Debug)]
pub struct NodeLimits {
    /// stream-node-max-bytes.
    pub max_bytes: u64,
    /// stream-node-max-entries.
    pub max_entries: i64,
}

impl Default for NodeLimits {
    /// Redis's defaults: 4096 bytes, 100 entries.
    fn default() -> Self {
        NodeLimits {
            max_bytes: 4096,
            max_entries: 100,
        }
    }
}

/// A trimming strategy (XADD/XTRIM's MAXLEN or MINID).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TrimStrategy {
    /// Keep at most this many entries.
    MaxLen(u64),
    /// Keep no entry below this ID.
    MinId(StreamId),
}

/// A trim request: the strategy, `~` (whole nodes only) and LIMIT (0: none), as the command
/// layer resolved them (its default LIMIT for `~` is 100 nodes' worth).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Trim {
    /// What to trim to.
    pub strategy: TrimStrategy,
    /// `~`: only remove whole nodes.
    pub approx: bool,
    /// The most entries to remove, 0 for no limit.
    pub limit: u64,
}

/// sizeof(stream) on 64-bit Redis 7.0, for MEMORY USAGE.
const REDIS_STREAM: usize = 80;
/// sizeof(robj).
const REDIS_ROBJ: usize = 16;

/// A stream value (see the module docs). One pointer wide.
#[derive(Clone, Default)]
pub struct Stream {
    inner: Box<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    /// Nodes by their master (first) ID.
    nodes: BTreeMap<u128, Node>,
    length: u64,
    last_id: StreamId,
    /// The first live entry's ID, 0-0 when empty (s->first_id).
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
    /// Consumer groups by name.
    groups: BTreeMap<Box<[u8]>, Group>,
}

/// The stream's counters, as XINFO STREAM reports them and group reads need them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Live entries.
    pub length: u64,
    /// The last ID generated or set.
    pub last_id: StreamId,
    /// The first live entry's ID, 0-0 when empty (recorded-first-entry-id).
    pub first_id: StreamId,
    /// The largest ID ever deleted by XDEL (or set by XSETID).
    pub max_deleted: StreamId,
    /// Entries ever added.
    pub entries_added: u64,
}

impl Meta {
    /// True when some tombstone may lie between `start` and the end (streamRangeHasTombstones
    /// with no end): Redis only knows the largest deleted ID.
    pub fn range_has_tombstones(&self, start: StreamId) -> bool {
        if self.length == 0 || self.max_deleted.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted {
            return false;
        }
        start <= self.max_deleted
    }

    /// How many entries lie from the first ever added to `id` inclusive, when that can be
    /// known (streamEstimateDistanceFromFirstEverEntry); `None` otherwise.
    pub fn distance_from_first(&self, id: StreamId) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(self.entries_added as i64);
        }
        match id.cmp(&self.last_id) {
            std::cmp::Ordering::Equal => return Some(self.entries_added as i64),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        if self.max_deleted.is_zero() || self.max_deleted < self.first_id {
            match id.cmp(&self.first_id) {
                std::cmp::Ordering::Less => {
                    return Some(self.entries_added as i64 - self.length as i64)
                }
                std::cmp::Ordering::Equal => {
                    return Some(self.entries_added as i64 - self.length as i64 + 1)
                }
                std::cmp::Ordering::Greater => {}
            }
        }
        None
    }

    /// A group's lag, or `None` when it cannot be known (streamReplyWithCGLag).
    pub fn lag(&self, last_id: StreamId, entries_read: i64) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if entries_read != INVALID_ENTRIES_READ && !self.range_has_tombstones(last_id) {
            return Some(self.entries_added as i64 - entries_read);
        }
        self.distance_from_first(last_id)
            .map(|read| self.entries_added as i64 - read)
    }
}

/// Its length and last ID (the entries are long).
impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream(len {}, last {:?})", self.len(), self.last_id())
    }
}

impl Stream {
    /// An empty stream (XADD's first entry, XGROUP CREATE MKSTREAM, or MAXLEN 0 leave one).
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries (XLEN).
    pub fn len(&self) -> u64 {
        self.inner.length
    }

    /// True with no live entries (an empty stream is still a key, unlike other types).
    pub fn is_empty(&self) -> bool {
        self.inner.length == 0
    }

    /// The counters.
    pub fn meta(&self) -> Meta {
        let i = &self.inner;
        Meta {
            length: i.length,
            last_id: i.last_id,
            first_id: i.first_id,
            max_deleted: i.max_deleted,
            entries_added: i.entries_added,
        }
    }

    /// The last ID generated or set (what `$` means).
    pub fn last_id(&self) -> StreamId {
        self.inner.last_id
    }

    /// The first entry's ID, tombstones included (streamGetEdgeID(s, 1, 0)), or the largest ID
    /// when there is none: an approximate MINID trim propagates as an exact one to this ID.
    pub fn first_id_with_tombstones(&self) -> StreamId {
        self.inner
            .nodes
            .iter()
            .find_map(|(&k, n)| {
                let p = n.first_entry()?;
                Some(n.entry_at(StreamId::from_key(k), p).id)
            })
            .unwrap_or(StreamId::MAX)
    }

    /// The nodes in order: each one's master ID and its listpack, byte for byte as Redis
    /// keeps it (what an RDB payload holds).
    pub fn listpacks(&self) -> impl Iterator<Item = (StreamId, &[u8])> {
        self.inner
            .nodes
            .iter()
            .map(|(&k, n)| (StreamId::from_key(k), n.bytes()))
    }

    /// Nodes (XINFO's radix-tree-keys).
    pub fn node_count(&self) -> usize {
        self.inner.nodes.len()
    }

    /// Nodes of the radix tree redis-server would hold (XINFO's radix-tree-nodes).
    pub fn rax_node_count(&self) -> usize {
        rax::rax_nodes(self.inner.nodes.keys().map(|&k| k.to_be_bytes()))
    }

    /// Adds an entry of `pairs` (field, value, field, value...; at least one pair) with an ID
    /// from `id` and `now_ms` (streamAppendItem). Returns the new ID.
    pub fn add<B: AsRef<[u8]>>(
        &mut self,
        id: AddId,
        pairs: &[B],
        now_ms: u64,
        limits: NodeLimits,
    ) -> Result<StreamId, StreamError> {
        debug_assert!(pairs.len() >= 2 && pairs.len().is_multiple_of(2));
        let last = self.inner.last_id;
        let id = match id {
            AddId::Exact(id) => id,
            AddId::Ms(ms) => {
                if last.ms == ms {
                    if last.seq == u64::MAX {
                        return Err(StreamError::SeqExhausted);
                    }
                    StreamId::new(ms, last.seq + 1)
                } else {
                    StreamId::new(ms, 0)
                }
            }
            AddId::Auto => {
                if now_ms > last.ms {
                    StreamId::new(now_ms, 0)
                } else {
                    last.incr().unwrap_or(StreamId::MIN)
                }
            }
        };
        if id <= last {
            return Err(StreamError::IdNotGreater);
        }
        let total: usize = pairs.iter().map(|b| b.as_ref().len()).sum();
        if total > MAX_ENTRY_BYTES {
            return Err(StreamError::TooLarge);
        }
        let i = &mut *self.inner;
        let mut open = None;
        if let Some((&k, tail)) = i.nodes.iter_mut().next_back() {
            let max_bytes = match limits.max_bytes {
                0 => MAX_ENTRY_BYTES,
                b if b > MAX_ENTRY_BYTES as u64 => MAX_ENTRY_BYTES,
                b => b as usize,
            };
            let full = tail.lp_bytes() + total >= max_bytes
                || (limits.max_entries != 0 && tail.total_entries() >= limits.max_entries);
            if full {
                tail.close();
            } else {
                open = Some(k);
            }
        }
        match open {
            Some(k) => {
                let tail = i.nodes.get_mut(&k).expect("tail node");
                tail.append(StreamId::from_key(k), id, pairs);
            }
            None => {
                i.nodes
                    .insert(id.key(), Node::new(id, pairs, limits.max_bytes));
            }
        }
        i.length += 1;
        i.entries_added += 1;
        i.last_id = id;
        if i.length == 1 {
            i.first_id = id;
        }
        Ok(id)
    }

    /// Entries from `start` to `end` inclusive, backward when `rev`.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Range<'_> {
        range_in(&self.inner.nodes, start, end, rev)
    }

    /// The entry with this ID, if it is live (streamEntryExists).
    pub fn get(&self, id: StreamId) -> Option<Entry<'_>> {
        self.range(id, id, false).next()
    }

    /// The last live entry's ID (streamLastValidID), `None` when empty.
    pub fn last_valid_id(&self) -> Option<StreamId> {
        self.range(StreamId::MIN, StreamId::MAX, true)
            .next()
            .map(|e| e.id)
    }

    /// Deletes the live entry `id`, as XDEL deletes one (the counters and the node's
    /// tombstone; the whole node goes with its last live entry). Returns whether it existed.
    /// XDEL's stream-level updates are in [`Stream::delete`].
    fn delete_one(&mut self, id: StreamId) -> bool {
        let i = &mut *self.inner;
        let Some((&k, node)) = i.nodes.range_mut(..=id.key()).next_back() else {
            return false;
        };
        let master = StreamId::from_key(k);
        let mut pos = node.first_entry();
        while let Some(p) = pos {
            let e = node.entry_at(master, p);
            if e.id > id {
                return false;
            }
            if e.id == id {
                if e.flags & FLAG_DELETED != 0 {
                    return false;
                }
                if node.count() == 1 {
                    i.nodes.remove(&k);
                } else {
                    node.mark_deleted(p);
                }
                i.length -= 1;
                return true;
            }
            pos = node::next(node.bytes(), e.tail);
        }
        false
    }

    /// XDEL: deletes the live entries among `ids` and returns how many; updates the largest
    /// deleted ID and the first entry's ID as Redis does.
    pub fn delete(&mut self, ids: &[StreamId]) -> usize {
        let mut deleted = 0;
        let mut first_entry = false;
        for &id in ids {
            if self.delete_one(id) {
                let i = &mut *self.inner;
                if id == i.first_id {
                    first_entry = true;
                }
                if id > i.max_deleted {
                    i.max_deleted = id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.inner.length == 0 {
                self.inner.first_id = StreamId::MIN;
            } else if first_entry {
                self.inner.first_id = self.first_live_id();
            }
        }
        deleted
    }

    fn first_live_id(&self) -> StreamId {
        self.range(StreamId::MIN, StreamId::MAX, false)
            .next()
            .map_or(StreamId::MAX, |e| e.id)
    }

    /// Trims (streamTrim): whole nodes from the head while they fit the strategy, then,
    /// unless approximate, tombstones inside the next node. Returns the entries removed.
    pub fn trim(&mut self, t: Trim) -> u64 {
        let i = &mut *self.inner;
        let mut deleted: u64 = 0;
        while let Some(mut e) = i.nodes.first_entry() {
            if let TrimStrategy::MaxLen(maxlen) = t.strategy {
                if i.length <= maxlen {
                    break;
                }
            }
            let k = *e.key();
            let entries = e.get().count() as u64;
            if t.limit != 0 && deleted + entries > t.limit {
                break;
            }
            let master = StreamId::from_key(k);
            let remove = match t.strategy {
                TrimStrategy::MaxLen(maxlen) => i.length - entries >= maxlen,
                TrimStrategy::MinId(min) => e.get().last_id(master).is_some_and(|l| l < min),
            };
            if remove {
                e.remove();
                i.length -= entries;
                deleted += entries;
                continue;
            }
            if t.approx {
                break;
            }
            let node = e.get_mut();
            let mut from_node: i64 = 0;
            let mut pos = node.first_entry();
            while let Some(p) = pos {
                let en = node.entry_at(master, p);
                let stop = match t.strategy {
                    TrimStrategy::MaxLen(maxlen) => i.length <= maxlen,
                    TrimStrategy::MinId(min) => en.id >= min,
                };
                if stop {
                    break;
                }
                if en.flags & FLAG_DELETED == 0 {
                    node.flag_deleted(p);
                    from_node += 1;
                    i.length -= 1;
                }
                pos = node::next(node.bytes(), en.tail);
            }
            node.adjust_counts(-from_node, from_node);
            deleted += from_node as u64;
            break;
        }
        if i.length == 0 {
            i.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.inner.first_id = self.first_live_id();
        }
        deleted
    }

    /// XSETID: a new last ID, and optionally the entries-added counter and the largest
    /// deleted ID (a zero `max_deleted` leaves it). The caller has checked that
    /// `max_deleted` is not above `id`.
    pub fn set_id(
        &mut self,
        id: StreamId,
        entries_added: Option<u64>,
        max_deleted: StreamId,
    ) -> Result<(), StreamError> {
        if self.inner.length > 0 {
            let top = self.last_valid_id().unwrap_or(StreamId::MIN);
            if id < top {
                return Err(StreamError::SetIdTooSmall);
            }
            if entries_added.is_some_and(|n| self.inner.length > n) {
                return Err(StreamError::EntriesAddedTooSmall);
            }
        }
        let i = &mut *self.inner;
        i.last_id = id;
        if let Some(n) = entries_added {
            i.entries_added = n;
        }
        if !max_deleted.is_zero() {
            i.max_deleted = max_deleted;
        }
        Ok(())
    }

    /// Consumer groups by name, in name order.
    pub fn groups(&self) -> impl Iterator<Item = (&[u8], &Group)> {
        self.inner.groups.iter().map(|(k, v)| (&k[..], v))
    }

    /// The number of consumer groups.
    pub fn group_count(&self) -> usize {
        self.inner.groups.len()
    }

    /// The group named `name`.
    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.inner.groups.get(name)
    }

    /// The group named `name`, to change.
    pub fn group_mut(&mut self, name: &[u8]) -> Option<&mut Group> {
        self.inner.groups.get_mut(name)
    }

    /// XGROUP CREATE: a group at `last_id` with `entries_read` (-1: unknown). False if the
    /// name is taken.
    pub fn create_group(&mut self, name: &[u8], last_id: StreamId, entries_read: i64) -> bool {
        let groups = &mut self.inner.groups;
        if groups.contains_key(name) {
            return false;
        }
        groups.insert(name.into(), Group::new(last_id, entries_read));
        true
    }

    /// XGROUP DESTROY. False if there was no such group.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        self.inner.groups.remove(name).is_some()
    }

    /// MEMORY USAGE's figure for this value (objectComputeSize): the listpacks of the first
    /// `samples` nodes (0: all) averaged over all but the last, plus the last one's, Redis's estimate
    /// of its radix trees, and the groups' PELs and consumers.
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        let i = &self.inner;
        let mut size = REDIS_ROBJ + REDIS_STREAM;
        size += rax_usage(i.nodes.len(), self.rax_node_count());
        let mut lpsize = 0usize;
        let mut taken = 0usize;
        let samples = if samples == 0 { usize::MAX } else { samples };
        for n in i.nodes.values().take(samples) {
            lpsize += n.alloc_size();
            taken += 1;
        }
        if i.nodes.len() <= taken {
            size += lpsize;
        } else {
            size += lpsize.checked_div(taken).unwrap_or(0) * (i.nodes.len() - 1);
            size += i.nodes.values().next_back().map_or(0, Node::alloc_size);
        }
        for (_, g) in self.groups() {
            size += g.mem_usage();
        }
        size
    }

    /// Bytes this value holds in this process beyond its handle (for the server's own
    /// accounting and the memory bench).
    pub fn heap_bytes(&self) -> usize {
        let i = &self.inner;
        std::mem::size_of::<Inner>() + i.nodes.values().map(|n| n.heap_bytes() + 48).sum::<usize>()
    }
}

/// Redis's guess at a radix tree's size (streamRadixTreeMemoryUsage): 16 bytes a key and
/// 4 + 240 per node.
fn rax_usage(keys: usize, nodes: usize) -> usize {
    keys * 16 + nodes * 4 + nodes * 8 * 30
}
