//! One node of a stream: a listpack laid out byte for byte as t_stream.c lays it out, so the
//! node splits, MEMORY USAGE and (later) RDB payloads are Redis's own.
//!
//! ```text
//! master entry: count | deleted | num-fields | field_1 .. field_N | 0
//! each entry:   flags | ms-delta | seq-delta | [num-fields | field_1 value_1 ..] | lp-count
//!               (with SAMEFIELDS set, the fields are the master's and only values follow)
//! ```
//! `count` is the live entries, `deleted` the tombstones; the IDs are deltas from the node's
//! master ID (its key in the stream's map); `lp-count` lets an entry be found from its end.

use crate::types::alloc::jemalloc_size;
use crate::types::list::entry::{decode, prev_start, Encoded};
use crate::types::list::Elem;

use super::id::StreamId;

/// Entry flag: a tombstone.
pub(super) const FLAG_DELETED: i64 = 1;
/// Entry flag: the entry's fields are the master entry's, and only its values are stored.
pub(super) const FLAG_SAMEFIELDS: i64 = 2;

/// A listpack's header: total bytes (u32) and element count (u16).
const HDR: usize = 6;
/// The element count that means "too many to say" (lpGetNumElements then counts).
const NUMELE_UNKNOWN: u16 = u16::MAX;
/// Redis preallocates a new node's listpack to at most this much (or stream-node-max-bytes).
const MAX_PREALLOC: usize = 4096;

/// A stream node (see the module docs).
#[derive(Clone)]
pub(super) struct Node {
    lp: Vec<u8>,
    /// What jemalloc would report for this listpack in redis-server (zmalloc_size), which
    /// MEMORY USAGE adds up: the preallocation, its growth and the shrink when the node is
    /// closed. The bytes here are held exactly (plus `Vec` growth on the open node).
    alloc: u32,
}

/// An integer element as stored; stream metadata is always integer-encoded.
#[inline]
fn int_at(lp: &[u8], p: usize) -> i64 {
    match decode(lp, p).0 {
        Elem::Int(v) => v,
        // lpGetInteger parses a string element; a node built here never has one there.
        Elem::Bytes(b) => crate::num::parse_ll(b).unwrap_or(0),
    }
}

/// The position after the element at `p` (possibly the end byte).
#[inline]
fn skip(lp: &[u8], p: usize) -> usize {
    p + decode(lp, p).1
}

/// The element after `p`, or `None` at the end (lpNext).
#[inline]
pub(super) fn next(lp: &[u8], p: usize) -> Option<usize> {
    let q = skip(lp, p);
    (lp[q] != 0xFF).then_some(q)
}

/// The element before `p`, or `None` at the first (lpPrev).
#[inline]
pub(super) fn prev(lp: &[u8], p: usize) -> Option<usize> {
    (p > HDR).then(|| prev_start(lp, p))
}

/// The element at `p`.
#[inline]
pub(super) fn elem(lp: &[u8], p: usize) -> Elem<'_> {
    decode(lp, p).0
}

/// Where an entry's parts are, as read from its flags position.
#[derive(Clone, Copy, Debug)]
pub(super) struct EntryPos {
    pub flags: i64,
    pub id: StreamId,
    /// Its field count (the master's with SAMEFIELDS).
    pub numfields: usize,
    /// The first of its own elements after the ID: the first field, or with SAMEFIELDS the
    /// first value.
    pub body: usize,
    /// Its lp-count element.
    pub tail: usize,
}

impl Node {
    /// A node holding its master entry (the fields of `pairs`) and that first entry
    /// (lpNew with Redis's preallocation, then the master and the entry appended).
    pub(super) fn new<B: AsRef<[u8]>>(id: StreamId, pairs: &[B], max_bytes: u64) -> Node {
        let prealloc = if max_bytes > 0 && (max_bytes as usize) < MAX_PREALLOC {
            max_bytes as usize
        } else {
            MAX_PREALLOC
        };
        let nf = pairs.len() / 2;
        let mut n = Node {
            lp: Vec::with_capacity(64 + pairs.iter().map(|b| b.as_ref().len() + 2).sum::<usize>()),
            alloc: jemalloc_size(prealloc.max(HDR + 1)) as u32,
        };
        n.lp.extend_from_slice(&[0; HDR]);
        n.lp.push(0xFF);
        n.push(&Encoded::int(1));
        n.push(&Encoded::int(0));
        n.push(&Encoded::int(nf as i64));
        for f in pairs.iter().step_by(2) {
            n.push(&Encoded::new(f.as_ref()));
        }
        n.push(&Encoded::int(0));
        n.push_entry(FLAG_SAMEFIELDS, id, id, pairs);
        n.account_growth();
        n
    }

    /// A node from a listpack read back from a payload (checked by the loader), held in an
    /// allocation Redis would size `alloc`.
    pub(super) fn loaded(lp: Vec<u8>, alloc: u32) -> Node {
        Node { lp, alloc }
    }

    /// The allocation as a listpack read back from a file has: its exact size.
    pub(super) fn fit_alloc(&mut self) {
        self.alloc = jemalloc_size(self.lp.len()) as u32;
    }

    /// The listpack's bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.lp
    }

    /// lpBytes.
    pub(super) fn lp_bytes(&self) -> usize {
        self.lp.len()
    }

    /// What redis-server's allocator would give this listpack.
    pub(super) fn alloc_size(&self) -> usize {
        self.alloc as usize
    }

    /// Appends one element before the end byte, keeping the header right (lpAppend).
    fn push(&mut self, e: &Encoded<'_>) {
        let len = e.len();
        let end = self.lp.len() - 1;
        self.lp.resize(end + len + 1, 0);
        e.write(&mut self.lp[end..end + len]);
        self.lp[end + len] = 0xFF;
        let ne = u16::from_le_bytes([self.lp[4], self.lp[5]]);
        if ne != NUMELE_UNKNOWN {
            self.lp[4..6].copy_from_slice(&(ne + 1).to_le_bytes());
        }
        self.set_total();
    }

    fn set_total(&mut self) {
        let t = self.lp.len() as u32;
        self.lp[0..4].copy_from_slice(&t.to_le_bytes());
    }

    /// A grown listpack is reallocated to its new size when it outgrows its allocation.
    fn account_growth(&mut self) {
        if self.lp.len() > self.alloc as usize {
            self.alloc = jemalloc_size(self.lp.len()) as u32;
        }
    }

    /// Replaces the integer at `p` (lpReplaceInteger); a shorter encoding makes Redis
    /// reallocate down, a longer one may make it grow.
    fn replace_int(&mut self, p: usize, v: i64) {
        let old = decode(&self.lp, p).1;
        let e = Encoded::int(v);
        let new = e.len();
        if new != old {
            if new > old {
                self.lp.reserve_exact(new - old);
            }
            self.lp.splice(p..p + old, std::iter::repeat_n(0, new));
            self.set_total();
            if new < old {
                self.alloc = jemalloc_size(self.lp.len()) as u32;
            } else {
                self.account_growth();
            }
        }
        e.write(&mut self.lp[p..p + new]);
    }

    /// Live entries (the master's count).
    pub(super) fn count(&self) -> i64 {
        int_at(&self.lp, HDR)
    }

    /// Tombstones (the master's deleted count).
    pub(super) fn deleted(&self) -> i64 {
        int_at(&self.lp, skip(&self.lp, HDR))
    }

    /// The master entry's field count and the position of its first field.
    pub(super) fn master_fields(&self) -> (usize, usize) {
        let p = skip(&self.lp, skip(&self.lp, HDR));
        (int_at(&self.lp, p) as usize, skip(&self.lp, p))
    }

    /// The flags position of the first entry (past the master's terminator).
    pub(super) fn first_entry(&self) -> Option<usize> {
        let (nf, mut p) = self.master_fields();
        for _ in 0..nf {
            p = skip(&self.lp, p);
        }
        next(&self.lp, p)
    }

    /// The lp-count position of the last entry, or of the master terminator (0) when the
    /// node has no entries.
    pub(super) fn last_tail(&self) -> usize {
        prev_start(&self.lp, self.lp.len() - 1)
    }

    /// Reads the entry whose flags are at `p`.
    pub(super) fn entry_at(&self, master: StreamId, p: usize) -> EntryPos {
        entry_at(&self.lp, master, self.master_fields().0, p)
    }

    /// The flags position of the entry whose lp-count is at `tail`, or `None` when `tail` is
    /// the master terminator (going backward, the start of the node).
    pub(super) fn entry_start(&self, tail: usize) -> Option<usize> {
        let n = int_at(&self.lp, tail);
        if n == 0 {
            return None;
        }
        let mut p = tail;
        for _ in 0..n {
            p = prev_start(&self.lp, p);
        }
        Some(p)
    }

    /// The last entry's ID, tombstone or not (lpGetEdgeStreamID backward).
    pub(super) fn last_id(&self, master: StreamId) -> Option<StreamId> {
        self.entry_start(self.last_tail())
            .map(|p| self.entry_at(master, p).id)
    }

    /// Live plus deleted entries.
    pub(super) fn total_entries(&self) -> i64 {
        self.count() + self.deleted()
    }

    /// Appends an entry to this (open) node: the live count goes up and the fields are
    /// compressed against the master's when they are the same (streamAppendItem).
    pub(super) fn append<B: AsRef<[u8]>>(&mut self, master: StreamId, id: StreamId, pairs: &[B]) {
        let c = self.count();
        self.replace_int(HDR, c + 1);
        let (mnf, mut p) = self.master_fields();
        let mut flags = 0;
        if pairs.len() / 2 == mnf {
            let same = pairs.iter().step_by(2).all(|f| {
                let is = elem(&self.lp, p) == f.as_ref();
                p = skip(&self.lp, p);
                is
            });
            if same {
                flags = FLAG_SAMEFIELDS;
            }
        }
        let room = pairs.iter().map(|b| b.as_ref().len() + 10).sum::<usize>() + 40;
        if self.lp.capacity() - self.lp.len() < room {
            // Grow by half again (Vec alone would double): only the open node has room.
            let want = room.max(self.lp.len() / 2);
            self.lp.reserve_exact(want);
        }
        self.push_entry(flags, master, id, pairs);
        self.account_growth();
    }

    fn push_entry<B: AsRef<[u8]>>(
        &mut self,
        flags: i64,
        master: StreamId,
        id: StreamId,
        pairs: &[B],
    ) {
        let nf = pairs.len() / 2;
        self.push(&Encoded::int(flags));
        self.push(&Encoded::int(id.ms.wrapping_sub(master.ms) as i64));
        self.push(&Encoded::int(id.seq.wrapping_sub(master.seq) as i64));
        let same = flags & FLAG_SAMEFIELDS != 0;
        if !same {
            self.push(&Encoded::int(nf as i64));
        }
        for pair in pairs.chunks_exact(2) {
            if !same {
                self.push(&Encoded::new(pair[0].as_ref()));
            }
            self.push(&Encoded::new(pair[1].as_ref()));
        }
        let lp_count = nf + 3 + if same { 0 } else { nf + 1 };
        self.push(&Encoded::int(lp_count as i64));
    }

    /// Closes the node (a new one is started after it): Redis shrinks its listpack to fit.
    pub(super) fn close(&mut self) {
        self.lp.shrink_to_fit();
        if self.lp.len() < self.alloc as usize {
            self.alloc = jemalloc_size(self.lp.len()) as u32;
        }
    }

    /// Marks the entry at `p` deleted and moves one from the live count to the deleted count
    /// (streamIteratorRemoveEntry, when the node keeps other live entries).
    pub(super) fn mark_deleted(&mut self, p: usize) {
        let flags = int_at(&self.lp, p);
        // Flags stay within 0..=3: a one-byte integer either way, so `p` stays valid.
        self.replace_int(p, flags | FLAG_DELETED);
        self.adjust_counts(-1, 1);
    }

    /// Flags the entry at `p` as a tombstone without touching the counts (the trimmer
    /// fixes them once per node).
    pub(super) fn flag_deleted(&mut self, p: usize) {
        let flags = int_at(&self.lp, p);
        self.replace_int(p, flags | FLAG_DELETED);
    }

    /// Adds to the live and deleted counts.
    pub(super) fn adjust_counts(&mut self, live: i64, deleted: i64) {
        let c = self.count();
        self.replace_int(HDR, c + live);
        let q = skip(&self.lp, HDR);
        let d = int_at(&self.lp, q);
        self.replace_int(q, d + deleted);
    }

    /// Bytes held by this node beyond its struct (for the process's own accounting).
    pub(super) fn heap_bytes(&self) -> usize {
        self.lp.capacity()
    }
}

/// Reads the entry whose flags are at `p` in listpack `lp`.
pub(super) fn entry_at(lp: &[u8], master: StreamId, master_nf: usize, p: usize) -> EntryPos {
    let flags = int_at(lp, p);
    let mut q = skip(lp, p);
    let ms = master.ms.wrapping_add(int_at(lp, q) as u64);
    q = skip(lp, q);
    let seq = master.seq.wrapping_add(int_at(lp, q) as u64);
    q = skip(lp, q);
    let (numfields, body, n_elems) = if flags & FLAG_SAMEFIELDS != 0 {
        (master_nf, q, master_nf)
    } else {
        let nf = int_at(lp, q) as usize;
        (nf, skip(lp, q), nf * 2)
    };
    let mut tail = body;
    for _ in 0..n_elems {
        tail = skip(lp, tail);
    }
    EntryPos {
        flags,
        id: StreamId::new(ms, seq),
        numfields,
        body,
        tail,
    }
}
