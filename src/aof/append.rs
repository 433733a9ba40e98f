//! The live append-only log: commands' effects are appended to a buffer in the order they
//! run (under the server lock, as Redis appends to `aof_buf` in `call()`), and written to the
//! current incremental file before their replies leave (as Redis writes in `beforeSleep`,
//! before it writes replies). With `appendfsync always` the write is also fsynced before the
//! replies; with `everysec` a background thread fsyncs once a second; with `no` the OS
//! decides. A write is group-committed: whoever flushes first writes (and syncs) everything
//! appended so far, and the others find their bytes already there.
//!
//! Under `always` the connections do not fsync themselves: they ask the log's thread for an
//! offset and await it ([`Appender::durable`]) while their worker serves other connections.
//! The thread writes everything appended so far, fsyncs once and wakes every connection
//! whose offset that covers, so the clients that wait together share one fsync, as the
//! clients Redis serves in one event-loop iteration share its `beforeSleep` fsync.
//!
//! A process killed at any moment therefore loses no acknowledged write under any policy
//! (the bytes are in the kernel's page cache before the reply); a machine that loses power
//! loses at most the writes since the last fsync (none with `always`, about a second with
//! `everysec`).

use crate::log;
use parking_lot::{Condvar, Mutex};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// appendfsync.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// fsync before every reply that follows a write.
    Always,
    /// fsync in the background once a second.
    EverySec,
    /// Leave it to the OS.
    No,
}

impl Fsync {
    /// From the config's spelling.
    pub fn parse(s: &str) -> Fsync {
        match s.to_ascii_lowercase().as_str() {
            "always" => Fsync::Always,
            "no" => Fsync::No,
            _ => Fsync::EverySec,
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Fsync {
        match c {
            0 => Fsync::Always,
            2 => Fsync::No,
            _ => Fsync::EverySec,
        }
    }
}

/// Records appended and not yet written, in order.
struct Pending {
    buf: Vec<u8>,
    /// The database the last appended command ran in (a SELECT is appended on a change).
    selected_db: Option<usize>,
    /// Unix seconds of the last `#TS:` annotation, when annotations are on.
    last_ts: i64,
    /// Offset (bytes appended since the appender started) of the end of `buf`.
    end: u64,
}

/// The file being appended to.
struct Output {
    /// Shared with the log's thread, which fsyncs it without holding `out`.
    file: Option<Arc<File>>,
    /// Size of the current incremental file.
    incr_size: u64,
}

/// Logs of this process whose last write failed: every write command asks whether its log
/// is one (MISCONF), and this lets it answer with one load instead of the log's lock.
static FAILING: AtomicUsize = AtomicUsize::new(0);

/// Whether any log of this process has a failed last write (see [`Appender::write_failed`]).
pub fn any_write_failed() -> bool {
    FAILING.load(Ordering::Relaxed) != 0
}

impl Drop for Appender {
    fn drop(&mut self) {
        if *self.write_failed.get_mut() {
            FAILING.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The live log.
pub struct Appender {
    pending: Mutex<Pending>,
    out: Mutex<Output>,
    /// Offsets written to the file, and synced to disk.
    written: AtomicU64,
    synced: AtomicU64,
    policy: AtomicU8,
    /// Annotate with `#TS:` (aof-timestamp-enabled).
    pub timestamps: AtomicBool,
    /// Skip fsyncs while a save or rewrite runs (no-appendfsync-on-rewrite).
    pub no_fsync_on_rewrite: AtomicBool,
    /// A save or rewrite is running (for `no_fsync_on_rewrite`).
    pub child_active: AtomicBool,
    /// The last write failed (INFO's aof_last_write_status); writes are refused meanwhile
    /// (MISCONF), as Redis refuses them.
    pub write_failed: AtomicBool,
    /// The last write error's text (for -MISCONF).
    last_error: Mutex<String>,
    /// fsyncs the background thread had to skip behind (INFO's aof_delayed_fsync).
    pub delayed_fsync: AtomicU64,
    /// Total bytes of the log files (INFO's aof_current_size, set at load and rewrite).
    pub current_size: AtomicU64,
    /// The base file's size (INFO's aof_base_size).
    pub base_size: AtomicU64,
    stop: AtomicBool,
    tick: (Mutex<()>, Condvar),
    /// The highest offset a connection waits for under `always` ([`Appender::durable`]).
    requested: AtomicU64,
    /// The log's thread sleeps on `tick` (a requester must wake it).
    sleeping: AtomicBool,
    /// The offset replies may acknowledge under `always` (written and fsynced, or written
    /// while fsyncs are skipped), for the connections awaiting it.
    acked: tokio::sync::watch::Sender<u64>,
}

impl Appender {
    /// A log appending to `file` (already positioned at its end, of `incr_size` bytes) with
    /// `policy`; starts the once-a-second fsync thread.
    pub fn start(file: File, incr_size: u64, policy: Fsync) -> Arc<Appender> {
        let a = Arc::new(Appender {
            pending: Mutex::new(Pending {
                buf: Vec::new(),
                selected_db: None,
                last_ts: 0,
                end: 0,
            }),
            out: Mutex::new(Output {
                file: Some(Arc::new(file)),
                incr_size,
            }),
            written: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            policy: AtomicU8::new(policy.code()),
            timestamps: AtomicBool::new(false),
            no_fsync_on_rewrite: AtomicBool::new(false),
            child_active: AtomicBool::new(false),
            write_failed: AtomicBool::new(false),
            last_error: Mutex::new(String::new()),
            delayed_fsync: AtomicU64::new(0),
            current_size: AtomicU64::new(incr_size),
            base_size: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            tick: (Mutex::new(()), Condvar::new()),
            requested: AtomicU64::new(0),
            sleeping: AtomicBool::new(false),
            acked: tokio::sync::watch::Sender::new(0),
        });
        let bg = a.clone();
        std::thread::Builder::new()
            .name("aof-fsync".into())
            .spawn(move || bg.fsync_loop())
            .expect("spawn the AOF fsync thread");
        a
    }

    /// The fsync policy.
    pub fn policy(&self) -> Fsync {
        Fsync::from_code(self.policy.load(Ordering::Relaxed))
    }

    /// Change the fsync policy (CONFIG SET appendfsync).
    pub fn set_policy(&self, p: Fsync) {
        self.policy.store(p.code(), Ordering::Relaxed);
    }

    /// Append one command run in database `db` (feedAppendOnlyFile); returns the offset its
    /// bytes end at, which [`Appender::flush_to`] takes. Call it in execution order (under
    /// the server lock).
    pub fn feed(&self, db: usize, args: &[&[u8]], now_secs: i64) -> u64 {
        let mut p = self.pending.lock();
        let before = p.buf.len();
        if self.timestamps.load(Ordering::Relaxed) && p.last_ts < now_secs {
            p.last_ts = now_secs;
            super::encode::timestamp(&mut p.buf, now_secs);
        }
        if p.selected_db != Some(db) {
            super::encode::select(&mut p.buf, db);
            p.selected_db = Some(db);
        }
        super::encode::command(&mut p.buf, args);
        p.end += (p.buf.len() - before) as u64;
        p.end
    }

    /// Whether everything up to `offset` is in the file (and synced, under `always`): the
    /// check [`Appender::flush_to`] starts with, for callers that avoid blocking calls.
    pub fn is_flushed(&self, offset: u64) -> bool {
        self.written.load(Ordering::Acquire) >= offset
            && (self.policy() != Fsync::Always
                || self.synced.load(Ordering::Acquire) >= offset
                || self.fsync_skipped())
    }

    /// The last write error, as strerror words it.
    pub fn last_error(&self) -> String {
        self.last_error.lock().clone()
    }

    /// Bytes appended and not yet written (INFO's aof_buffer_length).
    pub fn buffered(&self) -> usize {
        self.pending.lock().buf.len()
    }

    /// The offset everything appended so far ends at.
    pub fn appended(&self) -> u64 {
        self.pending.lock().end
    }

    /// Make sure the log holds everything up to `offset` before the caller replies: written
    /// to the file (and fsynced under `always`). Blocks for the write (and fsync). Returns
    /// false if the write failed (the bytes stay buffered for the next try).
    pub fn flush_to(&self, offset: u64) -> bool {
        let always = self.policy() == Fsync::Always;
        let done = |a: &Appender| {
            a.written.load(Ordering::Acquire) >= offset
                && (!always || a.synced.load(Ordering::Acquire) >= offset || a.fsync_skipped())
        };
        if done(self) {
            return true;
        }
        let mut out = self.out.lock();
        if done(self) {
            return true;
        }
        let ok = self.write_pending(&mut out);
        if ok && always && !self.fsync_skipped() {
            let target = self.written.load(Ordering::Acquire);
            if let Some(f) = &out.file {
                if let Err(e) = f.sync_data() {
                    log::warning(&format!(
                        "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. Exiting...",
                        crate::config::strerror(&e)
                    ));
                    std::process::exit(1);
                }
            }
            self.synced_to(target);
        }
        ok
    }

    /// Wait, without blocking the thread, until everything up to `offset` is written and
    /// fsynced (or written, while fsyncs are skipped for a rewrite): the `always` policy's
    /// wait before replies. The log's thread does the write and the fsync for every
    /// connection waiting meanwhile at once.
    pub async fn durable(&self, offset: u64) {
        let mut rx = self.acked.subscribe();
        if *rx.borrow_and_update() >= offset {
            return;
        }
        self.requested.fetch_max(offset, Ordering::SeqCst);
        // Paired with the thread's SeqCst store of `sleeping` before its last look at
        // `requested`: either it sees this request or this sees it asleep.
        if self.sleeping.load(Ordering::SeqCst) {
            let _g = self.tick.0.lock();
            self.tick.1.notify_one();
        }
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|&acked| acked >= offset).await;
    }

    /// Everything up to `offset` is synced: replies up to it may leave.
    fn synced_to(&self, offset: u64) {
        self.synced.fetch_max(offset, Ordering::AcqRel);
        self.acked_to(offset);
    }

    /// Wake the connections waiting for offsets up to `offset`.
    fn acked_to(&self, offset: u64) {
        self.acked.send_if_modified(|a| {
            let more = offset > *a;
            if more {
                *a = offset;
            }
            more
        });
    }

    /// Whether a connection waits for an offset not yet acknowledged.
    fn demanded(&self) -> bool {
        self.requested.load(Ordering::SeqCst) > *self.acked.borrow()
    }

    /// The log thread's turn for waiting connections: write everything appended, fsync it
    /// once (outside `out`, so INFO and a rewrite's switch are not held up by the disk),
    /// and wake every connection it covers.
    fn serve_requests(&self) {
        let (ok, target, file) = {
            let mut out = self.out.lock();
            let ok = self.write_pending(&mut out);
            (ok, self.written.load(Ordering::Acquire), out.file.clone())
        };
        if !ok {
            // Only when the policy left `always` meanwhile (a failed write under `always`
            // exits): the replies leave as they would have without waiting, the failure
            // already noted for -MISCONF.
            self.acked_to(self.requested.load(Ordering::SeqCst));
            return;
        }
        if self.fsync_skipped() {
            self.acked_to(target);
            return;
        }
        if let Some(f) = file {
            if let Err(e) = f.sync_data() {
                if self.policy() == Fsync::Always {
                    log::warning(&format!(
                        "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. Exiting...",
                        crate::config::strerror(&e)
                    ));
                    std::process::exit(1);
                }
                self.acked_to(target);
                return;
            }
        }
        self.synced_to(target);
    }

    fn fsync_skipped(&self) -> bool {
        self.no_fsync_on_rewrite.load(Ordering::Relaxed)
            && self.child_active.load(Ordering::Relaxed)
    }

    /// Write whatever is buffered (flushAppendOnlyFile's write half). Called with `out` held.
    fn write_pending(&self, out: &mut Output) -> bool {
        let (buf, end) = {
            let mut p = self.pending.lock();
            if p.buf.is_empty() {
                return true;
            }
            let cap = p.buf.capacity();
            let keep = if cap <= 4096 { cap } else { 0 };
            (
                std::mem::replace(&mut p.buf, Vec::with_capacity(keep)),
                p.end,
            )
        };
        let Some(file) = out.file.as_deref() else {
            return false;
        };
        match (&mut &*file).write_all(&buf) {
            Ok(()) => {
                out.incr_size += buf.len() as u64;
                self.current_size
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                self.written.store(end, Ordering::Release);
                if self.write_failed.swap(false, Ordering::Relaxed) {
                    FAILING.fetch_sub(1, Ordering::Relaxed);
                    log::warning("AOF write error looks solved, Redis can write again.");
                }
                true
            }
            Err(e) => {
                let text = crate::config::strerror(&e);
                log::warning(&format!("Error writing to the AOF file: {text}"));
                *self.last_error.lock() = text;
                // A partial write is cut off again, so the file holds whole commands.
                let _ = file.set_len(out.incr_size);
                if self.policy() == Fsync::Always {
                    log::warning("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...");
                    std::process::exit(1);
                }
                if !self.write_failed.swap(true, Ordering::Relaxed) {
                    FAILING.fetch_add(1, Ordering::Relaxed);
                }
                // Put the bytes back in front of what was appended since.
                let mut p = self.pending.lock();
                let mut back = buf;
                back.extend_from_slice(&p.buf);
                p.buf = back;
                false
            }
        }
    }

    /// Write everything appended, and fsync it (before a rewrite switches files, and at
    /// shutdown).
    pub fn flush_and_sync(&self) -> bool {
        let mut out = self.out.lock();
        let ok = self.write_pending(&mut out);
        if let Some(f) = &out.file {
            if f.sync_data().is_ok() {
                self.synced_to(self.written.load(Ordering::Acquire));
            }
        }
        ok
    }

    /// Continue in `file` (a new incremental file: BGREWRITEAOF, or appendonly turned on):
    /// what is buffered goes to the old file first, which is synced and closed. The next
    /// record starts with a SELECT.
    pub fn switch_file(&self, file: File) {
        let mut out = self.out.lock();
        self.write_pending(&mut out);
        if let Some(old) = out.file.take() {
            let _ = old.sync_data();
        }
        self.synced_to(self.written.load(Ordering::Acquire));
        out.file = Some(Arc::new(file));
        out.incr_size = 0;
        self.pending.lock().selected_db = None;
    }

    /// The current incremental file's size.
    pub fn incr_size(&self) -> u64 {
        self.out.lock().incr_size
    }

    /// Whether some written bytes are not yet synced (INFO's aof_pending_bio_fsync).
    pub fn sync_pending(&self) -> bool {
        self.synced.load(Ordering::Acquire) < self.written.load(Ordering::Acquire)
    }

    /// Stop the background thread, after a last write and fsync (appendonly turned off,
    /// shutdown).
    pub fn stop(&self) {
        self.flush_and_sync();
        self.stop.store(true, Ordering::Relaxed);
        self.tick.1.notify_all();
        self.out.lock().file = None;
        // Nothing is written from now on: no connection waits for it.
        self.acked_to(u64::MAX);
    }

    /// The log's thread. Under `always`: as soon as connections wait, write and fsync for
    /// all of them at once ([`Appender::serve_requests`]); while it does, the next ones
    /// gather. Once a second: write what is buffered (replies normally did) and, under
    /// everysec, fsync what was written since the last one.
    fn fsync_loop(&self) {
        let mut last = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            if self.demanded() {
                self.serve_requests();
                continue;
            }
            {
                let mut g = self.tick.0.lock();
                self.sleeping.store(true, Ordering::SeqCst);
                if !self.demanded() && !self.stop.load(Ordering::Relaxed) {
                    self.tick.1.wait_for(&mut g, Duration::from_millis(100));
                }
                self.sleeping.store(false, Ordering::SeqCst);
            }
            if self.stop.load(Ordering::Relaxed) || last.elapsed() < Duration::from_secs(1) {
                continue;
            }
            last = Instant::now();
            let policy = self.policy();
            if policy == Fsync::No {
                continue;
            }
            let mut out = self.out.lock();
            self.write_pending(&mut out);
            if self.fsync_skipped() {
                continue;
            }
            let target = self.written.load(Ordering::Acquire);
            if self.synced.load(Ordering::Acquire) >= target {
                continue;
            }
            // fsync outside the lock lets writes proceed meanwhile: the file is shared, so
            // appends continue while the disk catches up.
            let dup = out.file.clone();
            drop(out);
            if let Some(f) = dup {
                let started = Instant::now();
                if f.sync_data().is_ok() {
                    self.synced_to(target);
                }
                if started.elapsed() > Duration::from_secs(2) {
                    self.delayed_fsync.fetch_add(1, Ordering::Relaxed);
                    log::notice("Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer without waiting for fsync to complete, this may slow down Redis.");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file() -> (std::path::PathBuf, File) {
        let p = std::env::temp_dir().join(format!(
            "resplock-append-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .expect("create");
        (p, f)
    }

    #[test]
    fn records_reach_the_file_in_order_with_a_select_per_database_change() {
        let (p, f) = temp_file();
        let a = Appender::start(f, 0, Fsync::Always);
        let o1 = a.feed(0, &[b"SET", b"a", b"1"], 0);
        let o2 = a.feed(0, &[b"SET", b"b", b"2"], 0);
        let o3 = a.feed(2, &[b"DEL", b"a"], 0);
        assert!(o1 < o2 && o2 < o3);
        assert!(a.flush_to(o2));
        assert_eq!(a.buffered(), 0, "a flush writes everything appended");
        assert!(a.flush_to(o3));
        assert!(!a.sync_pending());
        let text = std::fs::read_to_string(&p).expect("read");
        assert_eq!(
            text,
            "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n\
             *3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n\
             *2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$3\r\nDEL\r\n$1\r\na\r\n"
        );
        // A new file starts with a SELECT again.
        let (p2, f2) = temp_file();
        a.switch_file(f2);
        let o = a.feed(2, &[b"DEL", b"b"], 0);
        a.set_policy(Fsync::No);
        assert!(a.flush_to(o));
        assert_eq!(
            std::fs::read_to_string(&p2).expect("read"),
            "*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*2\r\n$3\r\nDEL\r\n$1\r\nb\r\n"
        );
        a.stop();
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(p2);
    }

    #[test]
    fn a_failed_write_is_seen_by_the_lock_free_check_until_a_write_succeeds() {
        // /dev/full refuses every write with ENOSPC, as a full disk does.
        let full = std::fs::OpenOptions::new()
            .append(true)
            .open("/dev/full")
            .expect("/dev/full");
        let a = Appender::start(full, 0, Fsync::No);
        let o = a.feed(0, &[b"SET", b"k", b"v"], 0);
        assert!(!a.flush_to(o));
        assert!(a.write_failed.load(Ordering::Relaxed));
        assert!(any_write_failed());
        let (p, f) = temp_file();
        a.switch_file(f);
        assert!(a.flush_to(a.feed(0, &[b"DEL", b"k"], 0)));
        assert!(!a.write_failed.load(Ordering::Relaxed));
        assert!(!any_write_failed());
        a.stop();
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn concurrent_flushes_group_commit_and_lose_nothing() {
        let (p, f) = temp_file();
        let a = Appender::start(f, 0, Fsync::Always);
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let a = a.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let k = format!("{t}:{i}");
                        let o = a.feed(0, &[b"SET", k.as_bytes(), b"v"], 0);
                        assert!(a.flush_to(o));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        a.stop();
        let text = std::fs::read_to_string(&p).expect("read");
        assert_eq!(text.matches("$3\r\nSET\r\n").count(), 800);
        assert_eq!(text.matches("SELECT").count(), 1);
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn connections_awaiting_always_are_all_woken_with_their_records_synced() {
        let (p, f) = temp_file();
        let a = Appender::start(f, 0, Fsync::Always);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let tasks: Vec<_> = (0..50)
                .map(|t| {
                    let a = a.clone();
                    tokio::spawn(async move {
                        for i in 0..20 {
                            let k = format!("{t}:{i}");
                            let o = a.feed(0, &[b"SET", k.as_bytes(), b"v"], 0);
                            a.durable(o).await;
                            assert!(a.synced.load(Ordering::Acquire) >= o, "acknowledged unsynced");
                        }
                    })
                })
                .collect();
            for t in tasks {
                tokio::time::timeout(Duration::from_secs(30), t)
                    .await
                    .expect("every waiter is woken")
                    .expect("task");
            }
        });
        assert!(!a.sync_pending());
        let text = std::fs::read_to_string(&p).expect("read");
        assert_eq!(text.matches("$3\r\nSET\r\n").count(), 1000);
        a.stop();
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn a_stopped_log_releases_its_waiters() {
        let (p, f) = temp_file();
        let a = Appender::start(f, 0, Fsync::Always);
        a.stop();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        rt.block_on(async {
            tokio::time::timeout(Duration::from_secs(10), a.durable(1 << 40))
                .await
                .expect("no wait on a stopped log");
        });
        let _ = std::fs::remove_file(p);
    }
}
