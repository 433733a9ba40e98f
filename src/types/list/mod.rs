//! Redis 7.0's list value: a quicklist (a sequence of packed listpack nodes), as a pure data
//! structure.
//!
//! Redis 7.0 stores every list as a quicklist (OBJECT ENCODING always says "quicklist"): a
//! doubly linked list of listpacks, each bounded by `list-max-listpack-size` (the *fill*). This
//! module keeps the same shape so memory and behaviour match:
//!
//! * A [`List`] is a box around a `VecDeque` of nodes; a node is one `Vec<u8>` holding its
//!   entries back to back in Redis's listpack entry encoding (encoding byte(s), data, backlen),
//!   so an element costs its bytes plus 2 to 10 bytes and no allocation of its own. The
//!   listpack's 6-byte header and EOF byte are left out (the node keeps its count and the `Vec`
//!   its length), but node sizes are judged as Redis judges them, header included, so a list
//!   built by pushes is cut into exactly the nodes Redis would make.
//! * Canonical integers ("0", "-12", "9223372036854775807"; never "007", "+1" or "-0") are
//!   packed as Redis packs them (1 to 9 bytes) and read back as the same decimal string, so
//!   bytes out always equal bytes in; [`Elem`] hands them out without formatting until asked.
//! * The backlen after each entry lets a node be walked from either end, so an index near the
//!   tail is reached from the tail, as `lpSeek` and `quicklistGetIteratorAtIdx` do.
//! * Inserting into a full node splits it and merges the pieces with their neighbours when
//!   they fit (quicklist's `_quicklistInsert` and `_quicklistMergeNodes`); [`List::remove`]
//!   (LREM) also merges the nodes it shrank, which Redis does not, so churn stays compact.
//! * An element of [`PACKED_THRESHOLD`] bytes or more gets a node of its own (Redis 7.0's
//!   plain node), never shared or merged.
//!
//! The fill (an `i32` with `list-max-listpack-size`'s meaning: -1..-5 bound a node to
//! 4/8/16/32/64 KB, a positive N to N entries, within 8 KB) is passed to every operation that
//! adds elements; the list remembers the last one for the merges that [`List::remove`] and
//! [`List::set`] make. (Redis fixes a list's fill when the list is created; here the caller
//! decides, normally passing the current config.) Index arguments follow Redis: negative
//! indexes count from the tail. An element must be under 4 GiB, Redis's own ceiling; a larger
//! one panics.

#![warn(missing_docs)]

pub(crate) mod entry;
mod iter;
mod node;
mod quicklist;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_model;

use std::collections::VecDeque;
use std::fmt;

use bytes::Bytes;

pub use entry::Elem;
pub use iter::Iter;
pub use node::{set_packed_threshold, PACKED_THRESHOLD};

use entry::{decode, prev_start, Encoded, Needle};
use node::{allow_insert, is_large, size_class, Node};

/// Redis's default `list-max-listpack-size`: nodes of at most 8 KB.
pub const DEFAULT_FILL: i32 = -2;

/// How many nodes MEMORY USAGE samples by default before extrapolating (its SAMPLES 5).
pub const MEMORY_USAGE_SAMPLES: usize = 5;

/// sizeof(robj), sizeof(quicklist) and sizeof(quicklistNode) on 64-bit Redis 7.0, as
/// `objectComputeSize` adds them.
const REDIS_ROBJ: usize = 16;
const REDIS_QUICKLIST: usize = 40;
const REDIS_QUICKLIST_NODE: usize = 40;

/// A Redis list value: a quicklist of packed nodes (see the module docs).
///
/// One pointer wide, so it fits the keyspace value enum (whose types are at most 32 bytes).
#[derive(Clone)]
pub struct List {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    nodes: VecDeque<Node>,
    len: usize,
    /// The fill last passed in, for merges made by operations that take none.
    fill: i32,
}

impl Default for List {
    fn default() -> Self {
        List::new()
    }
}

/// Lists are equal when they hold the same elements in the same order, however the nodes
/// are cut.
impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for List {}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl List {
    /// An empty list (the keyspace deletes a list once it is empty, as Redis does).
    pub fn new() -> List {
        List {
            inner: Box::new(Inner {
                nodes: VecDeque::new(),
                len: 0,
                fill: DEFAULT_FILL,
            }),
        }
    }

    /// Number of elements (LLEN).
    #[inline]
    pub fn len(&self) -> usize {
        self.inner.len
    }

    /// True when the list holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Number of nodes (DEBUG OBJECT's `ql_nodes`), for introspection and tests.
    pub fn node_count(&self) -> usize {
        self.inner.nodes.len()
    }

    /// LPUSH one element (quicklistPushHead), with `fill` as `list-max-listpack-size`.
    ///
    /// Panics if `value` is 4 GiB or longer (Redis's own ceiling for an element).
    pub fn push_front(&mut self, value: &[u8], fill: i32) {
        let fill = self.note_fill(fill);
        let enc = Encoded::new(value);
        match self.inner.nodes.front_mut() {
            Some(head) if allow_insert(head, fill, value.len()) => head.insert_entry(0, &enc),
            _ => self.insert_node(0, Node::with_entry(&enc, is_large(value.len()))),
        }
        self.inner.len += 1;
    }

    /// RPUSH one element (quicklistPushTail), with `fill` as `list-max-listpack-size`.
    ///
    /// Panics if `value` is 4 GiB or longer (Redis's own ceiling for an element).
    pub fn push_back(&mut self, value: &[u8], fill: i32) {
        let fill = self.note_fill(fill);
        let enc = Encoded::new(value);
        match self.inner.nodes.back_mut() {
            Some(tail) if allow_insert(tail, fill, value.len()) => tail.push_entry(&enc),
            _ => {
                let at = self.inner.nodes.len();
                self.insert_node(at, Node::with_entry(&enc, is_large(value.len())));
            }
        }
        self.inner.len += 1;
    }

    /// LPOP: the head element, if any.
    pub fn pop_front(&mut self) -> Option<Bytes> {
        let node = self.inner.nodes.front_mut()?;
        let (e, n) = decode(&node.buf, 0);
        let out = e.to_bytes();
        if node.count == 1 {
            self.remove_node(0);
        } else {
            node.remove_bytes(0..n, 1);
        }
        self.inner.len -= 1;
        Some(out)
    }

    /// RPOP: the tail element, if any.
    pub fn pop_back(&mut self) -> Option<Bytes> {
        let last = self.inner.nodes.len().checked_sub(1)?;
        let node = &mut self.inner.nodes[last];
        let start = prev_start(&node.buf, node.buf.len());
        let out = decode(&node.buf, start).0.to_bytes();
        if node.count == 1 {
            self.remove_node(last);
        } else {
            let end = node.buf.len();
            node.remove_bytes(start..end, 1);
        }
        self.inner.len -= 1;
        Some(out)
    }

    /// LPOP with a count: up to `count` elements from the head, in list order, dropping
    /// whole nodes without walking them twice.
    pub fn pop_front_n(&mut self, count: usize) -> Vec<Bytes> {
        let n = count.min(self.inner.len);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let need = n - out.len();
            let node = self.inner.nodes.front_mut().expect("len counts the nodes");
            let take = need.min(node.count as usize);
            let mut p = 0;
            for _ in 0..take {
                let (e, l) = decode(&node.buf, p);
                out.push(e.to_bytes());
                p += l;
            }
            if take == node.count as usize {
                self.inner.nodes.pop_front();
            } else {
                node.remove_bytes(0..p, take);
            }
        }
        self.inner.len -= n;
        Self::shrink_nodes(&mut self.inner.nodes);
        out
    }

    /// RPOP with a count: up to `count` elements from the tail, in the order popped (tail
    /// first, as RPOP's reply lists them).
    pub fn pop_back_n(&mut self, count: usize) -> Vec<Bytes> {
        let n = count.min(self.inner.len);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let need = n - out.len();
            let node = self.inner.nodes.back_mut().expect("len counts the nodes");
            let take = need.min(node.count as usize);
            let mut p = node.buf.len();
            for _ in 0..take {
                p = prev_start(&node.buf, p);
                out.push(decode(&node.buf, p).0.to_bytes());
            }
            if take == node.count as usize {
                self.inner.nodes.pop_back();
            } else {
                let end = node.buf.len();
                node.remove_bytes(p..end, take);
            }
        }
        self.inner.len -= n;
        Self::shrink_nodes(&mut self.inner.nodes);
        out
    }

    /// LINDEX: the element at `index` (negative from the tail), `None` out of range.
    pub fn get(&self, index: i64) -> Option<Elem<'_>> {
        let (ni, off) = self.locate(self.normalize(index)?);
        let node = &self.inner.nodes[ni];
        Some(decode(&node.buf, node.seek(off)).0)
    }

    /// [`List::get`] copied into `Bytes` for a reply.
    pub fn get_bytes(&self, index: i64) -> Option<Bytes> {
        self.get(index).map(|e| e.to_bytes())
    }

    /// LSET: replaces the element at `index`; false (Redis's "index out of range") when
    /// there is none. Replaced in place, as lpReplace does, without a fill check; a large
    /// element moves to (or out of) a node of its own.
    pub fn set(&mut self, index: i64, value: &[u8]) -> bool {
        let Some(i) = self.normalize(index) else {
            return false;
        };
        let (ni, off) = self.locate(i);
        let node = &mut self.inner.nodes[ni];
        if !node.plain && !is_large(value.len()) {
            let pos = node.seek(off);
            let old = decode(&node.buf, pos).1;
            let enc = Encoded::new(value);
            let new = enc.len();
            if new > old {
                node.open_gap(pos + old, new - old);
            } else if new < old {
                node.buf.drain(pos + new..pos + old);
                node.shrink();
            }
            enc.write(&mut node.buf[pos..pos + new]);
        } else {
            // quicklistReplaceEntry: insert the new element after the old, then drop the old.
            let fill = self.inner.fill;
            self.insert_at_entry(ni, off, true, value, fill);
            self.delete_entry(ni, off);
        }
        true
    }

    /// LINSERT: puts `value` before (or after) the first element equal to `pivot`, and
    /// returns the new length (LINSERT's reply); `None` when no element equals `pivot`.
    pub fn insert(&mut self, before: bool, pivot: &[u8], value: &[u8], fill: i32) -> Option<usize> {
        let fill = self.note_fill(fill);
        let needle = Needle::new(pivot);
        let (ni, off) = self.inner.nodes.iter().enumerate().find_map(|(ni, node)| {
            let mut p = 0;
            for off in 0..node.count as usize {
                let (e, n) = decode(&node.buf, p);
                if needle.matches(e) {
                    return Some((ni, off));
                }
                p += n;
            }
            None
        })?;
        self.insert_at_entry(ni, off, !before, value, fill);
        Some(self.inner.len)
    }

    /// LREM: removes elements equal to `value`: the first `count` from the head when
    /// `count > 0`, the last `-count` from the tail when `count < 0`, all when 0. Returns
    /// how many went. Each node is rewritten in one pass and the nodes it shrank are merged
    /// with their neighbours where the fill allows.
    pub fn remove(&mut self, count: i64, value: &[u8]) -> usize {
        let needle = Needle::new(value);
        let from_tail = count < 0;
        let mut quota = match count {
            0 => usize::MAX,
            c => usize::try_from(c.unsigned_abs()).unwrap_or(usize::MAX),
        };
        let n = self.inner.nodes.len();
        let (mut removed, mut lo, mut hi) = (0, usize::MAX, 0);
        for step in 0..n {
            let i = if from_tail { n - 1 - step } else { step };
            let k = self.inner.nodes[i].remove_matching(&needle, quota, from_tail);
            if k > 0 {
                removed += k;
                quota -= k;
                lo = lo.min(i);
                hi = hi.max(i);
                if quota == 0 {
                    break;
                }
            }
        }
        if removed > 0 {
            self.inner.len -= removed;
            self.compact(lo, hi);
        }
        removed
    }

    /// LTRIM: keeps only `start..=stop` (Redis's index rules: negative from the tail, an
    /// empty or out-of-range window empties the list). Returns how many elements went.
    pub fn trim(&mut self, start: i64, stop: i64) -> usize {
        let len = self.inner.len as i64;
        let (ltrim, rtrim) = match Self::window(len, start, stop) {
            None => (len, 0),
            Some((s, e)) => (s, len - e - 1),
        };
        self.delete_front(ltrim as usize);
        self.delete_back(rtrim as usize);
        (ltrim + rtrim) as usize
    }

    /// LPOS: positions (0-based from the head, as LINDEX counts) of elements equal to
    /// `value`. `rank` picks the first match to report (1 = first; negative searches from
    /// the tail; 0 finds nothing, LPOS rejects it before asking), `count` caps how many are
    /// reported (0 = all, as COUNT 0), and `maxlen` caps how many elements are compared
    /// (0 = no cap). Without COUNT, LPOS's answer is `positions(v, rank, 1, maxlen).first()`
    /// (see [`List::position`]).
    pub fn positions(&self, value: &[u8], rank: i64, count: usize, maxlen: usize) -> Vec<usize> {
        if rank == 0 || self.is_empty() {
            return Vec::new();
        }
        let needle = Needle::new(value);
        if rank > 0 {
            scan_matches(
                self.iter(),
                &needle,
                rank.unsigned_abs(),
                count,
                maxlen,
                |i| i,
            )
        } else {
            let last = self.inner.len - 1;
            scan_matches(
                self.iter_rev(),
                &needle,
                rank.unsigned_abs(),
                count,
                maxlen,
                |i| last - i,
            )
        }
    }

    /// LPOS without COUNT: the position of the `rank`-th match, compared within the first
    /// `maxlen` elements (0 = all); see [`List::positions`].
    pub fn position(&self, value: &[u8], rank: i64, maxlen: usize) -> Option<usize> {
        self.positions(value, rank, 1, maxlen).first().copied()
    }

    /// What Redis 7.0's MEMORY USAGE reports for this list's value with its default SAMPLES
    /// (5): the object header, the quicklist, and per node a quicklistNode plus the
    /// listpack's jemalloc size, averaged over the first 5 nodes and multiplied by the node
    /// count. MEMORY USAGE adds the key's allocation and a 24-byte dict entry on top.
    pub fn mem_usage(&self) -> usize {
        self.mem_usage_samples(MEMORY_USAGE_SAMPLES)
    }

    /// [`List::mem_usage`] with MEMORY USAGE's SAMPLES `samples` (0 = every node).
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        let nodes = &self.inner.nodes;
        let base = REDIS_ROBJ + REDIS_QUICKLIST;
        if nodes.is_empty() {
            return base;
        }
        let samples = if samples == 0 { usize::MAX } else { samples };
        let (mut elesize, mut taken) = (0usize, 0usize);
        for node in nodes.iter().take(samples) {
            elesize += REDIS_QUICKLIST_NODE + size_class(node.redis_sz());
            taken += 1;
        }
        base + (elesize as f64 / taken as f64 * nodes.len() as f64) as usize
    }

    /// The nodes as Redis serializes them (RDB's quicklist: one listpack per packed node, the
    /// element itself for a plain node), head to tail.
    pub fn node_views(&self) -> impl Iterator<Item = NodeView<'_>> + '_ {
        self.inner.nodes.iter().map(|n| {
            if n.plain {
                NodeView::Plain(decode(&n.buf, 0).0)
            } else {
                NodeView::Packed {
                    entries: &n.buf,
                    count: n.count as usize,
                }
            }
        })
    }

    /// Bytes this list has asked the allocator for (its box, the node table and the node
    /// buffers' capacity), for the server's own memory accounting and compactness tests.
    pub fn heap_bytes(&self) -> usize {
        let nodes = &self.inner.nodes;
        std::mem::size_of::<Inner>()
            + nodes.capacity() * std::mem::size_of::<Node>()
            + nodes.iter().map(|n| n.buf.capacity()).sum::<usize>()
    }
}

/// One node of a list as Redis's RDB writes it; see [`List::node_views`].
pub enum NodeView<'a> {
    /// A listpack node: its entries in listpack entry encoding (encoding, data, back
    /// length each), without the listpack's header and terminator, and how many there are.
    Packed {
        /// The entries back to back.
        entries: &'a [u8],
        /// How many entries.
        count: usize,
    },
    /// A plain node's one large element.
    Plain(Elem<'a>),
}

/// lposCommand's loop over `it`: reports match positions (mapped by `pos` from the scan
/// index) from the `rank`-th match on, at most `count` of them (0 = all), comparing at most
/// `maxlen` elements (0 = all).
fn scan_matches<'a>(
    it: impl Iterator<Item = Elem<'a>>,
    needle: &Needle<'_>,
    rank: u64,
    count: usize,
    maxlen: usize,
    pos: impl Fn(usize) -> usize,
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut matches: u64 = 0;
    for (index, e) in it.enumerate() {
        if maxlen != 0 && index >= maxlen {
            break;
        }
        if needle.matches(e) {
            matches += 1;
            if matches >= rank {
                out.push(pos(index));
                if count != 0 && out.len() >= count {
                    break;
                }
            }
        }
    }
    out
}
