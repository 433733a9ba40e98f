//! Models of Redis's memory accounting, for MEMORY USAGE: jemalloc's size classes, sds
//! allocation sizes and the dict's bucket count, shared by sets and sorted sets.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// sizeof(robj).
pub(in crate::types) const ROBJ: usize = 16;
/// sizeof(dict) in Redis 7.0.
pub(in crate::types) const DICT: usize = 56;
/// sizeof(dictEntry).
pub(in crate::types) const DICT_ENTRY: usize = 24;

/// The usable size jemalloc (Redis's allocator) gives a request of `n` bytes: 8, then
/// multiples of 16 up to 128, then four size classes per doubling.
pub(in crate::types) fn jemalloc_size(n: usize) -> usize {
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
pub(in crate::types) fn sds_alloc_size(len: usize) -> usize {
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

/// The bucket count of Redis's dict had it gone through the same operations: its
/// power-of-two table grows when full and shrinks below 10% fill, and rehashes
/// incrementally, one bucket per operation, during which both tables count (dictSlots).
/// The steps a rehash takes are estimated from the expected number of non-empty buckets.
/// A lookup steps the rehash too (dictFind), and lookups take the set by shared reference,
/// so the model's counters are atomics (relaxed: the value is only used under its key's lock).
#[derive(Debug, Default)]
pub(in crate::types) struct DictModel {
    size0: AtomicUsize,
    size1: AtomicUsize,
    rehash_left: AtomicUsize,
}

impl Clone for DictModel {
    fn clone(&self) -> Self {
        DictModel {
            size0: AtomicUsize::new(self.size0.load(Relaxed)),
            size1: AtomicUsize::new(self.size1.load(Relaxed)),
            rehash_left: AtomicUsize::new(self.rehash_left.load(Relaxed)),
        }
    }
}

impl DictModel {
    /// dictCreate then dictExpand(n): as setTypeConvert presizes the converted set.
    pub(in crate::types) fn with_expand(n: usize) -> Self {
        DictModel {
            size0: AtomicUsize::new(next_table_size(n)),
            ..DictModel::default()
        }
    }

    /// dictSlots: buckets in both tables.
    pub(in crate::types) fn slots(&self) -> usize {
        self.size0.load(Relaxed) + self.size1.load(Relaxed)
    }

    /// _dictRehashStep, which every dict lookup (dictFind), add and delete performs while
    /// rehashing.
    pub(in crate::types) fn rehash_step(&self) {
        let size1 = self.size1.load(Relaxed);
        if size1 != 0 {
            let left = self.rehash_left.load(Relaxed).saturating_sub(1);
            self.rehash_left.store(left, Relaxed);
            if left == 0 {
                self.size0.store(size1, Relaxed);
                self.size1.store(0, Relaxed);
            }
        }
    }

    /// _dictExpandIfNeeded before adding to a dict holding `used` entries.
    pub(in crate::types) fn expand_if_needed(&mut self, used: usize) {
        if *self.size1.get_mut() != 0 {
            return;
        }
        let size0 = *self.size0.get_mut();
        if size0 == 0 {
            *self.size0.get_mut() = 4;
        } else if used >= size0 {
            self.start_rehash(used, next_table_size(used + 1));
        }
    }

    /// htNeedsResize then dictResize after a delete left `used` entries.
    pub(in crate::types) fn resize_if_needed(&mut self, used: usize) {
        let size = self.slots();
        if size > 4 && used * 100 / size < 10 && *self.size1.get_mut() == 0 {
            let new = next_table_size(used.max(4));
            if new != *self.size0.get_mut() {
                self.start_rehash(used, new);
            }
        }
    }

    fn start_rehash(&mut self, used: usize, new: usize) {
        let s = *self.size0.get_mut() as f64;
        // Expected non-empty buckets among size0 holding `used` entries, plus the steps that
        // stop after visiting ten empty buckets.
        let nonempty = s * (1.0 - (1.0 - 1.0 / s).powf(used as f64));
        let steps = nonempty + (s - nonempty) / 10.0;
        *self.size1.get_mut() = new;
        *self.rehash_left.get_mut() = (steps.round() as usize).max(1);
    }
}

/// _dictNextExp: the power of two at or above `n`, at least 4.
fn next_table_size(n: usize) -> usize {
    n.max(4).next_power_of_two()
}
