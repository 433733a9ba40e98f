//! Used memory as Redis counts it (zmalloc's used_memory): bytes handed out by the allocator
//! and not yet freed. [`Counting`] wraps the process's global allocator and keeps that count;
//! `maxmemory` and INFO read it through [`used_memory`]. The binary installs it around
//! mimalloc; an embedding process that wants maxmemory enforced installs it around its own.
//!
//! Why an allocator-level count and not an accounting of values: every byte a client can make
//! the server hold (values, keys, encodings, query and reply buffers, Lua) is counted without
//! every type keeping its own figures in step, exactly as Redis's zmalloc does. The count is
//! kept in cache-line-padded shards: each of the first threads that allocate (the workers,
//! started first) gets a shard of its own, which only it writes, so its hot path is a plain
//! add, no atomic read-modify-write (an uncontended `lock xadd` still costs about twenty
//! cycles, and a script request allocates a dozen times); later threads share one shard
//! with atomic adds. Readers sum the shards.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

/// Shards a thread may own alone; shard 0 is the shared one.
const OWNED: usize = 31;

#[repr(align(64))]
struct Shard(AtomicIsize);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: Shard = Shard(AtomicIsize::new(0));
static COUNTS: [Shard; OWNED + 1] = [ZERO; OWNED + 1];
/// How many threads have claimed a shard (those past OWNED share shard 0).
static CLAIMED: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// This thread's shard (usize::MAX: not picked yet). Const-initialized and without a
    /// destructor, so reading it never allocates.
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Add `n` to this thread's count.
#[inline]
fn count(n: isize) {
    // The first allocation through `Counting` marks the count as the process's (a load on a
    // shared line afterwards, not a store, so it costs no contention).
    if !INSTALLED.load(Ordering::Relaxed) {
        INSTALLED.store(true, Ordering::Relaxed);
    }
    let i = SHARD
        .try_with(|s| {
            let mut i = s.get();
            if i == usize::MAX {
                let k = CLAIMED.fetch_add(1, Ordering::Relaxed);
                i = if k < OWNED { k + 1 } else { 0 };
                s.set(i);
            }
            i
        })
        .unwrap_or(0);
    let c = &COUNTS[i].0;
    if i == 0 {
        c.fetch_add(n, Ordering::Relaxed);
    } else {
        // Only this thread writes its own shard: a load and a store cannot lose an update.
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }
}

/// A global allocator that counts the bytes live in `A` (see the module documentation).
///
/// ```
/// // In a binary (not in a test, which keeps the system allocator):
/// #[global_allocator]
/// static ALLOC: resplock::alloc::Counting<std::alloc::System> = resplock::alloc::Counting(std::alloc::System);
///
/// fn main() {
///     let v = vec![0u8; 1 << 20];
///     assert!(resplock::alloc::used_memory().unwrap() >= 1 << 20);
///     drop(v);
/// }
/// ```
pub struct Counting<A>(pub A);

unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = self.0.alloc_zeroed(layout);
        if !p.is_null() {
            count(layout.size() as isize);
        }
        p
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        self.0.dealloc(ptr, layout);
        count(-(layout.size() as isize));
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = self.0.realloc(ptr, layout, new_size);
        if !p.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes allocated and not freed, if the process counts them ([`Counting`] is its global
/// allocator); None otherwise.
///
/// ```
/// // A test binary does not install `Counting` as its allocator: nothing is counted.
/// assert_eq!(resplock::alloc::used_memory(), None);
/// ```
pub fn used_memory() -> Option<usize> {
    if !INSTALLED.load(Ordering::Relaxed) {
        return None;
    }
    let total: isize = COUNTS.iter().map(|s| s.0.load(Ordering::Relaxed)).sum();
    Some(total.max(0) as usize)
}

/// Resident set size in bytes (Linux /proc; 0 elsewhere).
pub(crate) fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .unwrap_or_default()
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}
