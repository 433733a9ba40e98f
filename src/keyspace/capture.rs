//! Point-in-time copies of the keyspace without stopping it (what BGSAVE needs), shard by
//! shard: copy-on-write at the granularity of a shard instead of a memory page.
//!
//! [`Keyspace::begin_capture`] starts a capture epoch, with no command running (the caller
//! holds the server lock). From then on, whoever first locks a shard (a command about to
//! read or change it, active expiry, or the background writer walking the shards in order
//! with [`Keyspace::capture_shard`]) hands the shard's contents to the [`ShardSink`] before
//! anything else happens to it, and marks the shard captured for the epoch. Every change to a
//! shard happens under its lock, so each shard reaches the sink exactly once and exactly as
//! it was when the epoch began: the sink sees the dataset at that instant, while clients keep
//! running. A client waits at most for one shard's capture (a 64th of a database).
//!
//! This stands in for Redis's fork(), which a multi-threaded process cannot use safely (a
//! child of a threaded parent may only call async-signal-safe functions: no allocator, no
//! locks other threads might have held).
//!
//! With no capture running, taking a shard's lock costs one extra relaxed atomic load.

use super::{Keyspace, Shard};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Receives each shard as it was when a capture began, once per shard, on whichever thread
/// locked the shard first. It runs with that shard locked (and, on a command's thread, with
/// the server lock held): it should copy or serialize and return.
pub trait ShardSink: Send + Sync {
    /// `contents` is shard `shard` of database `db` as of the capture's start.
    fn capture(&self, db: usize, shard: usize, contents: &Shard);
}

/// The capture state every database of a keyspace shares.
#[derive(Default)]
pub(super) struct Gate {
    /// A capture is running (the one load the lock path pays).
    active: AtomicBool,
    /// The running (or last) capture's number; shards record the last one they were
    /// captured for.
    epoch: AtomicU64,
    sink: RwLock<Option<Arc<dyn ShardSink>>>,
}

impl Gate {
    /// Called with `shard` locked, before the caller may touch it: capture it if a capture is
    /// running and it was not captured yet.
    #[inline]
    pub(super) fn check(&self, db: usize, idx: usize, shard: &mut Shard) {
        if self.active.load(Ordering::Acquire) {
            self.capture_slow(db, idx, shard);
        }
    }

    #[cold]
    fn capture_slow(&self, db: usize, idx: usize, shard: &mut Shard) {
        let epoch = self.epoch.load(Ordering::Acquire);
        if shard.captured == epoch {
            return;
        }
        let sink = self.sink.read().clone();
        if let Some(sink) = sink {
            sink.capture(db, idx, shard);
        }
        shard.captured = epoch;
    }
}

/// Why a capture could not start.
#[derive(Debug, PartialEq, Eq)]
pub struct CaptureBusy;

impl Keyspace {
    /// Start a capture into `sink`. Call it with no command running (under the server lock):
    /// the capture is of the dataset at this moment. Fails if one is already running.
    pub fn begin_capture(&self, sink: Arc<dyn ShardSink>) -> Result<u64, CaptureBusy> {
        let gate = &self.gate;
        let mut slot = gate.sink.write();
        if gate.active.load(Ordering::Acquire) {
            return Err(CaptureBusy);
        }
        *slot = Some(sink);
        let epoch = gate.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        gate.active.store(true, Ordering::Release);
        Ok(epoch)
    }

    /// Make sure shard `idx` of database `db` has been captured (capturing it now, on this
    /// thread, if nobody has): the background writer's step.
    pub fn capture_shard(&self, db: usize, idx: usize) {
        drop(self.db(db).acquire(idx));
    }

    /// End the running capture (after every shard was captured, or to abandon it): shards
    /// are no longer handed to the sink.
    pub fn end_capture(&self) {
        let gate = &self.gate;
        let mut slot = gate.sink.write();
        gate.active.store(false, Ordering::Release);
        *slot = None;
    }

    /// Whether a capture is running.
    pub fn capturing(&self) -> bool {
        self.gate.active.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Entry, Value, SHARDS};
    use super::*;
    use bytes::Bytes;
    use parking_lot::Mutex;
    use std::collections::BTreeMap;

    /// Per (db, shard), the (key, string value) pairs captured.
    type Seen = BTreeMap<(usize, usize), Vec<(Vec<u8>, Vec<u8>)>>;

    /// Records every captured shard's keys and values.
    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Seen>,
    }

    impl ShardSink for Recorder {
        fn capture(&self, db: usize, shard: usize, contents: &Shard) {
            let keys = contents
                .map
                .iter()
                .map(|(k, e)| match &e.value {
                    Value::Str(v) => (k.to_vec(), v.to_vec()),
                    _ => (k.to_vec(), Vec::new()),
                })
                .collect();
            let old = self.seen.lock().insert((db, shard), keys);
            assert!(old.is_none(), "shard {db}/{shard} captured twice");
        }
    }

    fn set(ks: &Keyspace, db: usize, k: &str, v: &str) {
        ks.db(db).lock(k.as_bytes()).insert(
            k.as_bytes(),
            Entry::new(Value::Str(Bytes::copy_from_slice(v.as_bytes()))),
        );
    }

    #[test]
    fn a_capture_sees_the_dataset_of_its_start_whatever_changes_during_it() {
        let ks = Keyspace::new(2);
        for i in 0..2000 {
            set(&ks, i % 2, &format!("k{i}"), "old");
        }
        let rec = Arc::new(Recorder::default());
        ks.begin_capture(rec.clone()).expect("starts");
        assert_eq!(ks.begin_capture(rec.clone()), Err(CaptureBusy));
        // Writers change and add keys while the writer is part way through.
        for idx in 0..SHARDS / 2 {
            ks.capture_shard(0, idx);
        }
        for i in 0..2000 {
            set(&ks, i % 2, &format!("k{i}"), "new");
            set(&ks, i % 2, &format!("later{i}"), "new");
        }
        for db in 0..2 {
            for idx in 0..SHARDS {
                ks.capture_shard(db, idx);
            }
        }
        ks.end_capture();
        let seen = rec.seen.lock();
        assert_eq!(seen.len(), 2 * SHARDS, "every shard exactly once");
        let all: Vec<_> = seen.values().flatten().collect();
        assert_eq!(all.len(), 2000);
        assert!(all.iter().all(|(k, v)| k.starts_with(b"k") && v == b"old"));
        // After the end, locking captures nothing more and a new capture can start.
        set(&ks, 0, "after", "x");
        assert!(!ks.capturing());
        let rec2 = Arc::new(Recorder::default());
        ks.begin_capture(rec2.clone()).expect("starts again");
        ks.capture_shard(1, 3);
        ks.end_capture();
        assert_eq!(rec2.seen.lock().len(), 1);
    }

    #[test]
    fn concurrent_writers_never_leak_a_change_into_the_capture() {
        let ks = Arc::new(Keyspace::new(1));
        for i in 0..5000 {
            set(&ks, 0, &format!("k{i}"), "0");
        }
        for round in 1..=3 {
            let rec = Arc::new(Recorder::default());
            ks.begin_capture(rec.clone()).expect("starts");
            let writers: Vec<_> = (0..2)
                .map(|t| {
                    let ks = ks.clone();
                    std::thread::spawn(move || {
                        for i in (t..5000).step_by(2) {
                            set(&ks, 0, &format!("k{i}"), &round.to_string());
                        }
                    })
                })
                .collect();
            for idx in 0..SHARDS {
                ks.capture_shard(0, idx);
            }
            for w in writers {
                w.join().expect("writer");
            }
            ks.end_capture();
            let seen = rec.seen.lock();
            let want = (round - 1).to_string().into_bytes();
            let values: Vec<_> = seen.values().flatten().collect();
            assert_eq!(values.len(), 5000);
            assert!(values.iter().all(|(_, v)| *v == want), "round {round}");
        }
    }
}
