//! An RDB file of the dataset at one instant, written while clients keep running (BGSAVE),
//! on top of the keyspace's shard captures ([`crate::keyspace::ShardSink`]).
//!
//! [`begin`] (called under the server lock, no command running) records what the file's
//! header needs (aux fields, function libraries, each database's key counts) and starts a
//! capture. [`write`] (on a thread of its own, without the server lock) walks the databases'
//! shards in order: each shard is serialized into its key records either by the writer when
//! it gets there, or earlier by the first command that locks the shard (it pays for that one
//! shard, once). Records serialized ahead of the writer wait in memory until written; a shard
//! nobody touched is serialized and written straight through. The file is the dataset as it
//! was at [`begin`], and the capture ends when the writer is done (or gives up).

use super::file::{self, Aux, FileWriter, KeyFormat};
use crate::keyspace::{CaptureBusy, Entry, Keyspace, Shard, ShardSink, SHARDS};
use parking_lot::Mutex;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::ThreadId;
use std::time::Instant;

/// What a snapshot's file holds besides its keys, fixed at its start.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The aux fields.
    pub aux: Aux,
    /// rdbchecksum.
    pub checksum: bool,
    /// How key records are written (compression, access records, the time).
    pub format: KeyFormat,
    /// Every function library's code.
    pub functions: Vec<Vec<u8>>,
    /// Per database, (keys, keys with a TTL) at the start; databases without keys are left
    /// out of the file, as Redis leaves them.
    pub sizes: Vec<(u64, u64)>,
    /// rdb-key-save-delay: microseconds the writer waits per key written (negative -N:
    /// one microsecond every N keys, as Redis's debugDelay sleeps with odds 1/N). Tests
    /// use it to make a save last.
    pub key_delay_us: i64,
}

/// Counters of a snapshot, for INFO and for measuring what it cost.
#[derive(Debug, Default)]
pub struct Stats {
    /// Shards serialized by a command's thread (ahead of the writer).
    pub foreground_captures: AtomicUsize,
    /// The longest such serialization, in microseconds: the longest a client waited.
    pub longest_foreground_us: AtomicU64,
    /// Bytes of records serialized by commands ahead of the writer and not yet written (what
    /// a save costs in memory beyond the dataset: Redis's copy-on-write figure).
    pub buffered: AtomicU64,
    /// The most `buffered` reached.
    pub peak_buffered: AtomicU64,
    /// Keys written so far (rdb_bgsave's progress).
    pub keys_written: AtomicU64,
}

/// How a captured shard's keys become bytes.
#[derive(Clone, Copy)]
pub enum Records {
    /// RDB key records (an RDB file, an AOF base with the RDB preamble).
    Rdb(KeyFormat),
    /// Anything else, key by key (an AOF base of commands).
    Custom(fn(&mut Vec<u8>, &[u8], &Entry)),
}

/// One shard's capture: its serialized records, how many keys they hold, and whether a
/// command serialized them ahead of the writer.
type Captured = (Vec<u8>, u64, bool);

/// The capture sink: serialized records per (database, shard), until the writer takes them.
pub struct Sink {
    records: Records,
    /// Per (database, shard): the records, how many keys they hold, and whether a command
    /// serialized them ahead of the writer (then they count as waiting in memory).
    slots: Vec<Mutex<Option<Captured>>>,
    writer: Mutex<Option<ThreadId>>,
    /// What this snapshot cost so far.
    pub stats: Stats,
}

impl Sink {
    fn serialize(&self, shard: &Shard) -> Vec<u8> {
        let mut out = Vec::with_capacity(shard.map.len() * 64);
        for (k, e) in shard.map.iter() {
            match self.records {
                Records::Rdb(f) => file::put_key(&mut out, k, e, &f),
                Records::Custom(f) => f(&mut out, k, e),
            }
        }
        out
    }
}

impl ShardSink for Sink {
    fn capture(&self, db: usize, shard: usize, contents: &Shard) {
        let started = Instant::now();
        let bytes = self.serialize(contents);
        let n = bytes.len() as u64;
        let ahead = *self.writer.lock() != Some(std::thread::current().id());
        *self.slots[db * SHARDS + shard].lock() = Some((bytes, contents.map.len() as u64, ahead));
        if ahead {
            let now = self.stats.buffered.fetch_add(n, Ordering::Relaxed) + n;
            self.stats.peak_buffered.fetch_max(now, Ordering::Relaxed);
            self.stats
                .foreground_captures
                .fetch_add(1, Ordering::Relaxed);
            let us = started.elapsed().as_micros() as u64;
            self.stats
                .longest_foreground_us
                .fetch_max(us, Ordering::Relaxed);
        }
    }
}

/// Start a snapshot of `ks` whose keys become `records`. Call it with no command running
/// (the server lock held): the snapshot is of this moment. Fails if a capture is running.
pub fn begin_capture(ks: &Keyspace, records: Records) -> Result<Arc<Sink>, CaptureBusy> {
    let sink = Arc::new(Sink {
        records,
        slots: (0..ks.databases() * SHARDS)
            .map(|_| Mutex::new(None))
            .collect(),
        writer: Mutex::new(None),
        stats: Stats::default(),
    });
    ks.begin_capture(sink.clone())?;
    Ok(sink)
}

/// Start an RDB snapshot with `plan` (see [`begin_capture`]).
pub fn begin(ks: &Keyspace, plan: &Plan) -> Result<Arc<Sink>, CaptureBusy> {
    begin_capture(ks, Records::Rdb(plan.format))
}

/// Each database's (keys, keys with a TTL) now, for [`Plan::sizes`].
pub fn sizes(ks: &Keyspace) -> Vec<(u64, u64)> {
    (0..ks.databases())
        .map(|i| {
            let db = ks.db(i);
            (db.len() as u64, db.volatile() as u64)
        })
        .collect()
}

/// The writer's step: the records of shard `idx` of database `db` as they were when the
/// capture began (serialized now, on this thread, if nobody captured the shard yet), and
/// their bytes no longer count as waiting in memory. None for a shard without keys.
pub fn take(ks: &Keyspace, sink: &Sink, db: usize, idx: usize) -> Option<Vec<u8>> {
    *sink.writer.lock() = Some(std::thread::current().id());
    ks.capture_shard(db, idx);
    let (bytes, keys, ahead) = sink.slots[db * SHARDS + idx].lock().take()?;
    if ahead {
        sink.stats
            .buffered
            .fetch_sub(bytes.len() as u64, Ordering::Relaxed);
    }
    sink.stats.keys_written.fetch_add(keys, Ordering::Relaxed);
    (!bytes.is_empty()).then_some(bytes)
}

/// End the capture (done or abandoned) and drop whatever records were not taken.
pub fn finish(ks: &Keyspace, sink: &Sink) {
    ks.end_capture();
    for slot in &sink.slots {
        slot.lock().take();
    }
    sink.stats.buffered.store(0, Ordering::Relaxed);
}

/// Write the RDB snapshot `sink` captures to `out`, walking every shard in order; ends the
/// capture however it goes. Returns the writer (to flush and sync) and the bytes written.
/// `stop` is asked between shards: true abandons the file (an Interrupted error).
pub fn write<W: Write>(
    ks: &Keyspace,
    sink: &Sink,
    plan: &Plan,
    out: W,
    stop: &dyn Fn() -> bool,
) -> io::Result<(W, u64)> {
    let result = write_rdb(ks, sink, plan, out, stop);
    finish(ks, sink);
    result
}

fn write_rdb<W: Write>(
    ks: &Keyspace,
    sink: &Sink,
    plan: &Plan,
    out: W,
    stop: &dyn Fn() -> bool,
) -> io::Result<(W, u64)> {
    let mut w = FileWriter::begin(out, &plan.aux, plan.checksum)?;
    for code in &plan.functions {
        w.function(code, plan.format.compress)?;
    }
    for db in 0..ks.databases() {
        let (keys, expires) = plan.sizes.get(db).copied().unwrap_or((0, 0));
        if keys > 0 {
            w.select_db(db, keys, expires)?;
        }
        for idx in 0..SHARDS {
            if stop() {
                return Err(io::ErrorKind::Interrupted.into());
            }
            // A database without keys still has its shards captured, so the capture ends
            // with every shard seen.
            let before = sink.stats.keys_written.load(Ordering::Relaxed);
            if let Some(bytes) = take(ks, sink, db, idx) {
                w.write(&bytes)?;
            }
            let keys = sink.stats.keys_written.load(Ordering::Relaxed) - before;
            delay_keys(plan.key_delay_us, keys, stop)?;
        }
    }
    let written = w.written();
    let out = w.finish()?;
    Ok((out, written + 9))
}

/// rdb-key-save-delay's wait after `keys` keys were written, in slices short enough that a
/// cancelled save stops within about 10 ms.
fn delay_keys(delay_us: i64, keys: u64, stop: &dyn Fn() -> bool) -> io::Result<()> {
    let total_us = match delay_us {
        0 => return Ok(()),
        d if d > 0 => (d as u64).saturating_mul(keys),
        d => keys / d.unsigned_abs(),
    };
    let end = Instant::now() + std::time::Duration::from_micros(total_us);
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if stop() {
            return Err(io::ErrorKind::Interrupted.into());
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(10)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;
    use crate::rdb::decode::Reader;
    use crate::rdb::file::{AccessSave, Event, LoadOptions};
    use bytes::Bytes;

    fn plan(ks: &Keyspace) -> Plan {
        Plan {
            aux: Aux::default(),
            checksum: true,
            format: KeyFormat {
                compress: true,
                access: AccessSave::None,
                now_ms: 0,
            },
            functions: vec![b"#!lua name=x\n".to_vec()],
            sizes: sizes(ks),
            key_delay_us: 0,
        }
    }

    fn set(ks: &Keyspace, db: usize, k: &str, v: &str) {
        ks.db(db).lock(k.as_bytes()).insert(
            k.as_bytes(),
            Entry::new(Value::Str(Bytes::copy_from_slice(v.as_bytes()))),
        );
    }

    fn load(data: &[u8]) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
        let mut r = Reader::new(data);
        let v = file::read_header(&mut r, false).expect("header");
        let mut out = Vec::new();
        file::load_body(&mut r, v, &LoadOptions::default(), &mut |ev| {
            if let Event::Key { db, key, entry } = ev {
                if let Value::Str(s) = entry.value {
                    out.push((db, key, s.to_vec()));
                }
            }
            Ok(())
        })
        .expect("loads");
        out.sort();
        out
    }

    #[test]
    fn a_background_snapshot_is_the_dataset_of_its_start() {
        let ks = Arc::new(Keyspace::new(3));
        for i in 0..3000 {
            set(&ks, i % 2 * 2, &format!("k{i}"), "before");
        }
        let p = plan(&ks);
        let sink = begin(&ks, &p).expect("begins");
        let writer = {
            let ks = ks.clone();
            let sink = sink.clone();
            let p = p.clone();
            std::thread::spawn(move || {
                write(&ks, &sink, &p, Vec::new(), &|| false).expect("writes")
            })
        };
        for i in 0..3000 {
            set(&ks, i % 2 * 2, &format!("k{i}"), "after");
            set(&ks, 1, &format!("new{i}"), "after");
        }
        let (data, n) = writer.join().expect("writer");
        assert_eq!(n as usize, data.len());
        assert!(!ks.capturing());
        let keys = load(&data);
        assert_eq!(keys.len(), 3000);
        assert!(keys.iter().all(|(db, _, v)| *db != 1 && v == b"before"));
        assert_eq!(sink.stats.buffered.load(Ordering::Relaxed), 0);
        // The next snapshot sees the changes.
        let p = plan(&ks);
        let sink = begin(&ks, &p).expect("begins");
        let (data, _) = write(&ks, &sink, &p, Vec::new(), &|| false).expect("writes");
        assert_eq!(sink.stats.keys_written.load(Ordering::Relaxed), 6000);
        // Abandoned when asked: an error, and the capture ends.
        let sink = begin(&ks, &p).expect("begins");
        let r = write(&ks, &sink, &p, Vec::new(), &|| true);
        assert!(r.is_err());
        assert!(!ks.capturing());
        assert_eq!(load(&data).len(), 6000);
        assert_eq!(sink.stats.foreground_captures.load(Ordering::Relaxed), 0);
    }
}
