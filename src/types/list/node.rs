//! One quicklist node (entries back to back in a buffer) and quicklist.c's rules for it:
//! the fill limits, plain nodes for large elements, and when a node may take an element or
//! merge with another.

use super::entry::{decode, prev_start, Encoded, Needle};

/// Redis's packed threshold (1 GB): an element at least this long gets a node of its own.
pub const PACKED_THRESHOLD: usize = 1 << 30;
/// Node byte limits for fills -1..-5 (quicklist.c `optimization_level`).
const OPTIMIZATION_LEVEL: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// A node limited by entry count still may not pass 8 KB (quicklist.c `SIZE_SAFETY_LIMIT`).
pub(super) const SIZE_SAFETY_LIMIT: usize = 8192;
/// quicklist.c's per-entry overhead estimate when judging whether an element fits a node.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;
/// quicklist.c `FILL_MAX`: larger positive fills are clamped to it.
pub(super) const FILL_MAX: i32 = (1 << 15) - 1;
/// A listpack's 6-byte header and 1-byte EOF, which nodes here leave out but Redis counts.
const LP_FRAME: usize = 7;

/// The packed threshold in force: process-wide, as Redis's `packed_threshold` global, which
/// DEBUG QUICKLIST-PACKED-THRESHOLD changes ([`set_packed_threshold`]).
#[cfg(not(test))]
static PACKED_THRESHOLD_NOW: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(PACKED_THRESHOLD);

#[cfg(not(test))]
#[inline]
fn packed_threshold() -> usize {
    PACKED_THRESHOLD_NOW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Redis's quicklistisSetPackedThreshold: elements of `sz` bytes or more get plain nodes from
/// now on; 0 restores the default; false (unchanged) at 4 GB minus 1 MB or more.
pub fn set_packed_threshold(sz: u64) -> bool {
    if sz > (1u64 << 32) - (1 << 20) {
        return false;
    }
    let sz = if sz == 0 {
        PACKED_THRESHOLD
    } else {
        sz as usize
    };
    #[cfg(not(test))]
    PACKED_THRESHOLD_NOW.store(sz, std::sync::atomic::Ordering::Relaxed);
    #[cfg(test)]
    TEST_PACKED_THRESHOLD.with(|t| t.set(sz));
    true
}

#[cfg(test)]
thread_local! {
    /// Tests lower the threshold (as Redis's DEBUG QUICKLIST-PACKED-THRESHOLD does) to try
    /// plain nodes without gigabyte elements; per thread so parallel tests don't interfere.
    pub(super) static TEST_PACKED_THRESHOLD: std::cell::Cell<usize> =
        const { std::cell::Cell::new(PACKED_THRESHOLD) };
}

#[cfg(test)]
fn packed_threshold() -> usize {
    TEST_PACKED_THRESHOLD.with(|t| t.get())
}

#[inline]
pub(super) fn is_large(sz: usize) -> bool {
    sz >= packed_threshold()
}

/// Redis's quicklistSetFill clamping.
pub(super) fn clamp_fill(fill: i32) -> i32 {
    fill.clamp(-(OPTIMIZATION_LEVEL.len() as i32), FILL_MAX)
}

/// jemalloc's size class for an `n`-byte request (what Redis's `zmalloc_size` reports); also
/// the growth step for node buffers, so they waste at most about a quarter, as Redis's do.
pub(super) fn size_class(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return (n + 15) & !15;
    }
    let log = usize::BITS - 1 - (n - 1).leading_zeros();
    let spacing = 1usize << (log - 2);
    (n + spacing - 1) & !(spacing - 1)
}

/// One quicklist node: entries back to back in listpack entry encoding.
#[derive(Clone)]
pub(super) struct Node {
    pub(super) buf: Vec<u8>,
    pub(super) count: u32,
    /// Redis's plain node: holds one large element and never takes another or merges.
    pub(super) plain: bool,
}

impl Node {
    pub(super) fn with_entry(e: &Encoded<'_>, plain: bool) -> Node {
        let mut buf = Vec::with_capacity(if plain { e.len() } else { size_class(e.len()) });
        buf.resize(e.len(), 0);
        e.write(&mut buf);
        Node {
            buf,
            count: 1,
            plain,
        }
    }

    /// The node's size as Redis sees it (`node->sz`): the listpack's bytes, or a plain
    /// node's raw element.
    pub(super) fn redis_sz(&self) -> usize {
        if self.plain {
            decode(&self.buf, 0).0.len()
        } else {
            self.buf.len() + LP_FRAME
        }
    }

    /// Byte offset of entry `off` (< count), walked from the nearer end (listpack `lpSeek`).
    pub(super) fn seek(&self, off: usize) -> usize {
        let count = self.count as usize;
        debug_assert!(off < count);
        if off <= count / 2 {
            let mut p = 0;
            for _ in 0..off {
                p += decode(&self.buf, p).1;
            }
            p
        } else {
            let mut p = self.buf.len();
            for _ in off..count {
                p = prev_start(&self.buf, p);
            }
            p
        }
    }

    /// Opens an `n`-byte gap at byte `at`, growing by size class rather than doubling.
    pub(super) fn open_gap(&mut self, at: usize, n: usize) -> &mut [u8] {
        let old = self.buf.len();
        if old + n > self.buf.capacity() {
            self.buf.reserve_exact(size_class(old + n) - old);
        }
        self.buf.resize(old + n, 0);
        self.buf.copy_within(at..old, at + n);
        &mut self.buf[at..at + n]
    }

    pub(super) fn insert_entry(&mut self, at: usize, e: &Encoded<'_>) {
        e.write(self.open_gap(at, e.len()));
        self.count += 1;
    }

    pub(super) fn push_entry(&mut self, e: &Encoded<'_>) {
        self.insert_entry(self.buf.len(), e);
    }

    /// Removes `n` entries occupying bytes `range`.
    pub(super) fn remove_bytes(&mut self, range: std::ops::Range<usize>, n: usize) {
        self.buf.drain(range);
        self.count -= n as u32;
        self.shrink();
    }

    /// Gives memory back once a buffer has shrunk well below its capacity.
    pub(super) fn shrink(&mut self) {
        let len = self.buf.len();
        if self.buf.capacity() > size_class(len + len / 4 + 16) {
            self.buf.shrink_to(size_class(len));
        }
    }

    /// quicklist.c `_quicklistSplitNode`: with `after`, this node keeps entries `..=off` and
    /// the returned node gets the rest; otherwise the returned node gets `..off` and this
    /// node keeps `off..`.
    pub(super) fn split(&mut self, off: usize, after: bool) -> Node {
        let count = self.count as usize;
        let mut pos = self.seek(off);
        let (buf, taken) = if after {
            pos += decode(&self.buf, pos).1;
            let tail = self.buf[pos..].to_vec();
            self.buf.truncate(pos);
            (tail, count - off - 1)
        } else {
            (self.buf.drain(..pos).collect(), off)
        };
        self.count -= taken as u32;
        self.shrink();
        Node {
            buf,
            count: taken as u32,
            plain: false,
        }
    }

    /// Appends `right`'s entries after this node's, moving the smaller buffer into the larger.
    pub(super) fn absorb(&mut self, mut right: Node) {
        if self.buf.len() < right.buf.len() {
            std::mem::swap(&mut self.buf, &mut right.buf);
            let left = right.buf;
            self.open_gap(0, left.len()).copy_from_slice(&left);
        } else {
            let at = self.buf.len();
            self.open_gap(at, right.buf.len())
                .copy_from_slice(&right.buf);
        }
        self.count += right.count;
    }

    /// LREM within one node: removes up to `quota` entries matching `needle` (the last ones
    /// when `from_tail`) in one compacting pass, and returns how many went.
    pub(super) fn remove_matching(
        &mut self,
        needle: &Needle<'_>,
        quota: usize,
        from_tail: bool,
    ) -> usize {
        let len = self.buf.len();
        // Matches to leave alone first: from the tail, only the last `quota` matches go.
        let mut skip = 0;
        if from_tail && quota < self.count as usize {
            let mut total = 0;
            let mut p = 0;
            while p < len {
                let (e, n) = decode(&self.buf, p);
                total += usize::from(needle.matches(e));
                p += n;
            }
            skip = total.saturating_sub(quota);
        }
        let (mut r, mut w, mut removed) = (0, 0, 0);
        while r < len && removed < quota {
            let (e, n) = decode(&self.buf, r);
            if needle.matches(e) {
                if skip > 0 {
                    skip -= 1;
                } else {
                    removed += 1;
                    r += n;
                    continue;
                }
            }
            if w != r {
                self.buf.copy_within(r..r + n, w);
            }
            w += n;
            r += n;
        }
        if removed > 0 {
            self.buf.copy_within(r..len, w);
            self.buf.truncate(w + (len - r));
            self.count -= removed as u32;
            self.shrink();
        }
        removed
    }
}

/// quicklist.c `_quicklistNodeSizeMeetsOptimizationRequirement`.
#[inline]
fn size_meets_optimization(sz: usize, fill: i32) -> bool {
    fill < 0 && sz <= OPTIMIZATION_LEVEL[(-fill - 1) as usize]
}

/// quicklist.c `_quicklistNodeAllowInsert`: may an `sz`-byte element join `node`?
pub(super) fn allow_insert(node: &Node, fill: i32, sz: usize) -> bool {
    if node.plain || is_large(sz) {
        return false;
    }
    let new_sz = node.redis_sz() + sz + SIZE_ESTIMATE_OVERHEAD;
    if size_meets_optimization(new_sz, fill) {
        true
    } else if new_sz > SIZE_SAFETY_LIMIT {
        false
    } else {
        (node.count as i64) < i64::from(fill)
    }
}

/// quicklist.c `_quicklistNodeAllowMerge`: may `a` and `b` become one node?
pub(super) fn allow_merge(a: &Node, b: &Node, fill: i32) -> bool {
    if a.plain || b.plain {
        return false;
    }
    // Redis's approximation: minus 11 for one listpack's header and trailer.
    let merge_sz = (a.redis_sz() + b.redis_sz()).saturating_sub(11);
    if size_meets_optimization(merge_sz, fill) {
        true
    } else if merge_sz > SIZE_SAFETY_LIMIT {
        false
    } else {
        i64::from(a.count) + i64::from(b.count) <= i64::from(fill)
    }
}
