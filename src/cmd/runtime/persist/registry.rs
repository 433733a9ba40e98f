//! What the server keeps for persistence: the live append-only log when `appendonly` is on,
//! the background job (BGSAVE or BGREWRITEAOF) running, what is scheduled, the loading state,
//! and the counters INFO persistence reports.

use crate::aof::append::Appender;
use crate::cmd::runtime::state::ServerState;
use crate::rdb::snapshot::Sink;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

/// What a background job writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// BGSAVE (or a save point, or a replica's full synchronization).
    Rdb,
    /// BGREWRITEAOF: a new base file for the append-only log.
    AofRewrite,
}

/// The background job running (Redis's child process).
pub struct Job {
    /// What it writes.
    pub kind: JobKind,
    /// Its number (temp file names, and telling a cancelled job from its successor).
    pub id: u64,
    /// When it started.
    pub started: Instant,
    /// Its snapshot's capture, for progress and memory figures.
    pub sink: Arc<Sink>,
    /// Set to make the job stop and leave no file.
    pub cancelled: Arc<AtomicBool>,
    /// Keys in the snapshot (INFO's current_save_keys_total).
    pub keys_total: u64,
    /// The child process writing its file, when the job has one (`child`).
    pub child: Option<u32>,
}

/// INFO persistence's counters.
pub struct Stats {
    /// rdb_saves: saves started (SAVE, BGSAVE, save points).
    pub rdb_saves: u64,
    /// rdb_last_bgsave_status.
    pub last_bgsave_ok: bool,
    /// rdb_last_bgsave_time_sec (-1: none yet).
    pub last_bgsave_secs: i64,
    /// Unix seconds of the last BGSAVE attempt (the 5 s retry delay after a failure).
    pub lastbgsave_try: i64,
    /// The change count when the running BGSAVE started: what its success takes off.
    pub dirty_before: u64,
    /// rdb_last_cow_size: the most serialized records that waited in memory.
    pub last_cow: u64,
    /// rdb_last_load_keys_loaded and rdb_last_load_keys_expired.
    pub last_load_loaded: u64,
    /// See `last_load_loaded`.
    pub last_load_expired: u64,
    /// aof_rewrites.
    pub aof_rewrites: u64,
    /// aof_last_bgrewrite_status.
    pub aof_last_rewrite_ok: bool,
    /// aof_last_rewrite_time_sec (-1: none yet).
    pub aof_last_rewrite_secs: i64,
    /// aof_rewrites_consecutive_failures.
    pub aof_rewrite_failures: u64,
    /// aof_last_cow_size.
    pub aof_last_cow: u64,
    /// total_forks: writer children started.
    pub forks: u64,
    /// latest_fork_usec: how long starting the last one took.
    pub latest_fork_us: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            rdb_saves: 0,
            last_bgsave_ok: true,
            last_bgsave_secs: -1,
            lastbgsave_try: 0,
            dirty_before: 0,
            last_cow: 0,
            last_load_loaded: 0,
            last_load_expired: 0,
            aof_rewrites: 0,
            aof_last_rewrite_ok: true,
            aof_last_rewrite_secs: -1,
            aof_rewrite_failures: 0,
            aof_last_cow: 0,
            forks: 0,
            latest_fork_us: 0,
        }
    }
}

/// A load in progress (INFO's loading_* fields).
#[derive(Default)]
pub struct Loading {
    /// Unix seconds it started.
    pub start: i64,
    /// Bytes to load.
    pub total: u64,
    /// used-mem of the file being loaded.
    pub rdb_used_mem: u64,
    /// The replication history the file carries (repl-id, repl-offset, repl-stream-db;
    /// -1 or empty when absent), for loadDataFromDisk.
    pub repl: (String, i64, i64),
}

/// Persistence's state.
#[derive(Default)]
pub struct Persist {
    /// The append-only log being written, while `appendonly` is on.
    pub aof: RwLock<Option<Arc<Appender>>>,
    /// The log's state: off, on, or turned on and waiting for its first rewrite (the
    /// constants of `persist::aof`).
    pub aof_state: AtomicU8,
    /// The manifest of the append-only log, while `appendonly` is on.
    pub manifest: Mutex<Option<crate::aof::manifest::Manifest>>,
    /// The server itself, for the threads background jobs run on.
    pub server: OnceLock<Weak<ServerState>>,
    /// The background job running, if any.
    pub job: Mutex<Option<Job>>,
    /// A BGSAVE waits for the running job to end (BGSAVE SCHEDULE, BGSAVE in MULTI).
    pub bgsave_scheduled: AtomicBool,
    /// A BGREWRITEAOF waits for the running job to end.
    pub rewrite_scheduled: AtomicBool,
    /// The dataset is being loaded: commands without the LOADING flag get -LOADING.
    pub loading: AtomicBool,
    /// The server is starting: from its first connection until the dataset is loaded and
    /// the append-only log open for writes, commands get -LOADING as while `loading` (a
    /// write taken meanwhile would be lost from the log).
    pub starting: AtomicBool,
    /// Bytes loaded so far (loading_loaded_bytes).
    pub loaded_bytes: AtomicU64,
    /// The running load's figures.
    pub load_info: Mutex<Loading>,
    /// The counters.
    pub stats: Mutex<Stats>,
    /// The last background save failed, save points are set and
    /// stop-writes-on-bgsave-error is on: writes get -MISCONF.
    pub rdb_denies_writes: AtomicBool,
    /// Numbers the jobs.
    pub next_job: AtomicU64,
}
