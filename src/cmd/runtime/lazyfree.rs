//! Lazy freeing, as Redis's lazyfree.c: a deleted value whose freeing takes many allocations
//! (more than 64, Redis's LAZYFREE_THRESHOLD, by [`crate::keyspace::Value::free_effort`]) is
//! dropped on a thread of its own (Redis's BIO_LAZY_FREE), so UNLINK of a million-member set
//! answers at once and holds no lock while the memory goes. INFO's
//! `lazyfree_pending_objects` and `lazyfreed_objects` count them.

use crate::keyspace::Entry;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

/// Values freeing at most this many allocations are freed at once.
pub const THRESHOLD: usize = 64;

/// A server's lazy-free thread (started on first use) and its counters.
#[derive(Default)]
pub struct LazyFree {
    counts: Arc<Counts>,
    tx: Mutex<Option<Sender<Entry>>>,
}

#[derive(Default)]
struct Counts {
    pending: AtomicU64,
    freed: AtomicU64,
}

impl LazyFree {
    /// Values handed to the thread and not freed yet.
    pub fn pending(&self) -> u64 {
        self.counts.pending.load(Ordering::Relaxed)
    }

    /// Values the thread freed since the start or CONFIG RESETSTAT.
    pub fn freed(&self) -> u64 {
        self.counts.freed.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT (lazyfreeResetStats).
    pub fn reset_stats(&self) {
        self.counts.freed.store(0, Ordering::Relaxed);
    }

    /// dbAsyncDelete's freeing of a deleted key's entry: on the thread when it is costly,
    /// here otherwise.
    pub fn free(&self, entry: Entry) {
        if entry.value.free_effort() <= THRESHOLD {
            drop(entry);
            return;
        }
        let mut tx = self.tx.lock();
        if tx.is_none() {
            let (send, recv) = std::sync::mpsc::channel::<Entry>();
            let counts = self.counts.clone();
            let started = std::thread::Builder::new()
                .name("lazyfree".into())
                .spawn(move || {
                    for e in recv {
                        drop(e);
                        counts.pending.fetch_sub(1, Ordering::Relaxed);
                        counts.freed.fetch_add(1, Ordering::Relaxed);
                    }
                });
            if started.is_err() {
                // No thread: freed here, as a synchronous DEL would.
                return;
            }
            *tx = Some(send);
        }
        self.counts.pending.fetch_add(1, Ordering::Relaxed);
        if let Some(Err(e)) = tx.as_ref().map(|t| t.send(entry)) {
            self.counts.pending.fetch_sub(1, Ordering::Relaxed);
            drop(e.0);
        }
    }
}
