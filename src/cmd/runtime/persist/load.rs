//! Loading the dataset as redis-server does at start (loadDataFromDisk): the append-only log
//! when `appendonly` is on, else `dbfilename` if it exists; with redis-server's log lines,
//! INFO's loading fields, and -LOADING for commands that cannot run meanwhile. A file that
//! fails to load stops the server (redis-server exits), never a half-loaded dataset served.

use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::ServerState;
use crate::rdb::file::{self, Event, LoadOptions, LoadSummary};
use crate::rdb::{Decoder, LoadError, StreamSource};
use bytes::Bytes;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// The options a load at start (or DEBUG RELOAD) reads files with.
pub fn options(state: &ServerState, drop_expired: bool, log: bool) -> LoadOptions {
    let c = state.config.read();
    LoadOptions {
        databases: c.databases,
        limits: settings::load_limits(&c),
        now_ms: state.clock.now_ms(),
        drop_expired,
        checksum: settings::checksum(&c),
        policy: state.access_policy(),
        log,
    }
}

/// Store one thing found in a file: keys into their database (a key already there is an
/// error unless `replace`, as with DEBUG RELOAD MERGE), libraries into the function engine.
pub fn apply(state: &ServerState, ev: Event, replace: bool) -> Result<(), LoadError> {
    match ev {
        Event::Key { db, key, entry } => {
            let mut shard = state.keyspace.db(db).lock(&key);
            if !replace && shard.map.get(&key).is_some() {
                return Err(LoadError::DuplicateKey { key, db });
            }
            shard.insert(&key, entry);
            Ok(())
        }
        Event::Function(code) => state
            .scripting
            .function_load(&Bytes::from(code), replace)
            .map(|_| ())
            .map_err(|e| LoadError::Function(String::from_utf8_lossy(e.as_bytes()).into_owned())),
        Event::Aux(k, v) => {
            let text = || String::from_utf8_lossy(&v).into_owned();
            let mut l = state.persist.load_info.lock();
            if k.eq_ignore_ascii_case(b"used-mem") {
                l.rdb_used_mem = text().parse().unwrap_or(0);
            } else if k.eq_ignore_ascii_case(b"repl-id") {
                l.repl.0 = text();
            } else if k.eq_ignore_ascii_case(b"repl-offset") {
                // strtoll: what does not parse is 0.
                l.repl.1 = text().parse().unwrap_or(0);
            } else if k.eq_ignore_ascii_case(b"repl-stream-db") {
                l.repl.2 = text().parse().unwrap_or(0);
            }
            Ok(())
        }
        // Dropped at load: only a master starting from its own file tells its replicas
        // ([`load_rdb`]'s `feed_expired`).
        Event::ResizeDb { .. } | Event::Expired { .. } => Ok(()),
    }
}

/// Mark the start of a load of `total` bytes (startLoading).
pub fn start_loading(state: &ServerState, total: u64) {
    {
        let mut l = state.persist.load_info.lock();
        l.start = state.clock.now_ms() / 1000;
        l.total = total;
        l.rdb_used_mem = 0;
        l.repl = (String::new(), -1, 0);
    }
    state.persist.loaded_bytes.store(0, Ordering::Relaxed);
    state.persist.loading.store(true, Ordering::Release);
}

/// The load ended (stopLoading).
pub fn stop_loading(state: &ServerState) {
    state.persist.loading.store(false, Ordering::Release);
}

/// rdbLoad: read the RDB file at `path` into the keyspace. Ok(None) when there is no file.
/// `feed_expired` (RDBFLAGS_FEED_REPL: a master loading at start) puts a DEL (UNLINK with
/// lazyfree-lazy-expire) of every key dropped as expired into the replication stream, so a
/// replica that continues the file's history drops it too.
pub fn load_rdb(
    state: &ServerState,
    path: &Path,
    opts: &LoadOptions,
    replace: bool,
    feed_expired: bool,
) -> Result<Option<LoadSummary>, (LoadError, u64)> {
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((LoadError::Io(e), 0)),
    };
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    start_loading(state, total);
    let counted = Counting {
        inner: f,
        n: &state.persist.loaded_bytes,
    };
    let mut d = Decoder::from_source(StreamSource::new(counted));
    let del = crate::cmd::runtime::propagate::expired_deletion(state);
    let r = file::read_header(&mut d, opts.log).and_then(|v| {
        file::load_body(&mut d, v, opts, &mut |ev| match ev {
            Event::Expired { db, key } if feed_expired => {
                crate::cmd::runtime::replication::feed(
                    state,
                    db,
                    &[Bytes::from_static(del), Bytes::from(key)],
                );
                Ok(())
            }
            ev => apply(state, ev, replace),
        })
    });
    stop_loading(state);
    match r {
        Ok(summary) => {
            let mut st = state.persist.stats.lock();
            st.last_load_loaded = summary.keys_loaded;
            st.last_load_expired = summary.keys_expired;
            Ok(Some(summary))
        }
        Err(e) => Err((e, d.consumed())),
    }
}

/// A reader that counts the bytes it read into INFO's loading_loaded_bytes.
pub struct Counting<'a, R> {
    /// The file.
    pub inner: R,
    /// Where the count goes.
    pub n: &'a std::sync::atomic::AtomicU64,
}

impl<R: std::io::Read> std::io::Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
}

/// Log what redis-server logs when a file fails to load, ending with the exit line.
pub fn log_failure(e: &LoadError, offset: u64) {
    for line in e.log_lines(offset) {
        crate::log::warning(&line);
    }
    if let LoadError::DuplicateKey { .. } = e {
        crate::log::warning("Duplicated key found in RDB file");
    }
    crate::log::warning("Terminating server after rdb file reading failure.");
}

/// loadDataFromDisk: the append-only log when it is on, else the RDB file. Err: the failure
/// was logged and the server must not serve (redis-server exits).
pub fn load_at_start(state: &ServerState) -> Result<(), ()> {
    let started = Instant::now();
    if settings::aof_enabled(&state.config.read()) {
        return crate::cmd::runtime::persist::aof::load::load_at_start(state);
    }
    let path = settings::rdb_path(&state.config.read());
    // A replica keeps the keys that expired: its master's DELs will come (iAmMaster).
    let master = state
        .config
        .read()
        .get("replicaof")
        .is_none_or(|v| v.is_empty());
    let opts = options(state, master, true);
    let size = crate::cmd::runtime::replication::registry::backlog_size(&state.config.read());
    if master {
        // loadDataFromDisk: a master's history starts before the load, for the DELs of the
        // keys it drops as expired; it is kept only if the file continues a history.
        state.replication.start_history(size);
    }
    match load_rdb(state, &path, &opts, false, master) {
        Ok(None) => {
            state.replication.drop_history();
            Ok(())
        }
        Ok(Some(_)) => {
            crate::log::notice(&format!(
                "DB loaded from disk: {:.3} seconds",
                started.elapsed().as_secs_f64()
            ));
            let (id, offset, db) = state.persist.load_info.lock().repl.clone();
            if state
                .replication
                .restore_history(&id, offset, db, master, size)
            {
                state.propagation.set_active(true);
            }
            Ok(())
        }
        Err((e, offset)) => {
            match &e {
                LoadError::Io(io) => crate::log::warning(&format!(
                    "Fatal error loading the DB: {}. Exiting.",
                    crate::config::strerror(io)
                )),
                // read_header logged which; rdbLoad then fails with EINVAL.
                LoadError::Signature | LoadError::Version(_) => {
                    crate::log::warning("Fatal error loading the DB: Invalid argument. Exiting.")
                }
                LoadError::TooManyDbs { .. } => crate::log::warning(&e.to_string()),
                _ => log_failure(&e, offset),
            }
            Err(())
        }
    }
}

/// emptyData(-1): every database emptied and the function libraries dropped (before DEBUG
/// RELOAD and DEBUG LOADAOF load their file). WATCHed keys count as changed.
pub fn empty_data(state: &ServerState, now: i64) {
    crate::cmd::runtime::watch::flushed(state, None, now);
    crate::cmd::runtime::tracking::flushed(state, 0);
    for i in 0..state.keyspace.databases() {
        let mut all = state.keyspace.db(i).lock_all();
        for s in all.shards() {
            s.clear();
        }
    }
    state.scripting.function_flush();
}

/// Why DEBUG RELOAD failed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReloadError {
    /// The save before the load failed (-ERR).
    Save,
    /// There was no file to load, or a library in it was already loaded ("Error trying to load
    /// the RDB dump").
    Load,
    /// The file did not load: the server stops, as redis-server exits.
    Fatal,
}

/// `DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]`: save the dataset (unless NOSAVE), empty it
/// (unless NOFLUSH), load the file back (MERGE: its keys replace existing ones). The caller
/// holds the server lock.
pub fn debug_reload(
    state: &ServerState,
    merge: bool,
    noflush: bool,
    nosave: bool,
) -> Result<(), ReloadError> {
    if !nosave {
        crate::cmd::runtime::persist::save::save(state).map_err(|_| ReloadError::Save)?;
    }
    let now = state.clock.now_ms();
    if !noflush {
        empty_data(state, now);
    }
    let path = settings::rdb_path(&state.config.read());
    let opts = options(state, true, true);
    match load_rdb(state, &path, &opts, merge, false) {
        Ok(Some(_)) => {
            crate::log::warning("DB reloaded by DEBUG RELOAD");
            Ok(())
        }
        Ok(None) => Err(ReloadError::Load),
        // A library that is already there (NOFLUSH without MERGE) is no corruption: Redis
        // logs it and DEBUG RELOAD answers the load error; the server carries on.
        Err((LoadError::Function(e), _)) => {
            crate::log::warning(&format!("Failed loading library, {e}"));
            crate::log::warning("Short read or OOM loading DB. Unrecoverable error, aborting now.");
            Err(ReloadError::Load)
        }
        Err((e, offset)) => {
            log_failure(&e, offset);
            state.shutdown.cancel();
            Err(ReloadError::Fatal)
        }
    }
}
