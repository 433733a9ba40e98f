//! Saving the dataset to `dbfilename` as redis-server does: SAVE on the calling thread,
//! BGSAVE on a thread of its own from a point-in-time snapshot while clients keep running
//! (`crate::rdb::snapshot`), its file written by a child process (`super::child`) when the
//! server is resplock's binary, the `save` points and scheduled saves checked by the cron, with
//! redis-server's log lines and INFO's counters. A file is written to a temp name, synced,
//! then renamed over the old one: a crash never leaves half a file under the real name.

use crate::cmd::runtime::persist::child::{self, Failure};
use crate::cmd::runtime::persist::registry::{Job, JobKind};
use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::ServerState;
use crate::rdb::file::{Aux, KeyFormat};
use crate::rdb::snapshot::{self, Plan, Sink};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Seconds to wait after a failed background save before a save point tries again
/// (CONFIG_BGSAVE_RETRY_DELAY).
const RETRY_DELAY_S: i64 = 5;

fn unix_now(state: &ServerState) -> i64 {
    state.clock.now_ms() / 1000
}

/// What a file of the dataset as it is now holds besides its keys. Call it under the server
/// lock, right before the snapshot starts.
pub fn plan(state: &ServerState, aof_base: bool) -> Plan {
    let c = state.config.read();
    let now = state.clock.now_ms();
    Plan {
        aux: Aux {
            ctime: now / 1000,
            used_mem: crate::alloc::used_memory().unwrap_or(0) as u64,
            aof_base,
            // An AOF's base carries no replication history (Redis saves it without rsi).
            repl: if aof_base {
                None
            } else {
                state.replication.save_info()
            },
        },
        checksum: settings::checksum(&c),
        format: KeyFormat {
            compress: settings::compression(&c),
            access: settings::access_save(&c, state.access_policy()),
            now_ms: now,
        },
        functions: state
            .scripting
            .function_codes()
            .into_iter()
            .map(|c| c.to_vec())
            .collect(),
        sizes: snapshot::sizes(&state.keyspace),
        key_delay_us: c
            .get("rdb-key-save-delay")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    }
}

/// Write the snapshot `sink` captures into `dir`/`tmp`, sync it, and rename it to `dest`
/// (then sync the directory). The error is the line redis-server logs.
pub fn write_file(
    state: &ServerState,
    sink: &Sink,
    plan: &Plan,
    dest: &Path,
    tmp: &Path,
    cancelled: &AtomicBool,
) -> Result<u64, String> {
    let cwd = || {
        std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| "unknown".into())
    };
    // A test server's own directory is made on its first save (Config::ephemeral).
    if let Some(d) = tmp.parent() {
        if !d.as_os_str().is_empty() && !d.exists() && state.config.read().has_ephemeral_dir() {
            let _ = std::fs::create_dir_all(d);
        }
    }
    let f = match std::fs::File::create(tmp) {
        Ok(f) => f,
        Err(e) => {
            // The capture still has to end.
            state.keyspace.end_capture();
            return Err(format!(
                "Failed opening the temp RDB file {} (in server root dir {}) for saving: {}",
                tmp.file_name().unwrap_or_default().to_string_lossy(),
                cwd(),
                crate::config::strerror(&e)
            ));
        }
    };
    let stop = || cancelled.load(Ordering::Relaxed);
    let result = snapshot::write(
        &state.keyspace,
        sink,
        plan,
        std::io::BufWriter::with_capacity(1 << 16, f),
        &stop,
    );
    let fail = |op: &str, e: std::io::Error| {
        let _ = std::fs::remove_file(tmp);
        format!(
            "Write error saving DB on disk({op}): {}",
            crate::config::strerror(&e)
        )
    };
    let (w, bytes) = result.map_err(|e| fail("rdbSaveRio", e))?;
    let f = w.into_inner().map_err(|e| fail("fflush", e.into_error()))?;
    f.sync_all().map_err(|e| fail("fsync", e))?;
    drop(f);
    if let Err(e) = std::fs::rename(tmp, dest) {
        let _ = std::fs::remove_file(tmp);
        return Err(format!(
            "Error moving temp DB file {} on the final destination {} (in server root dir {}): {}",
            tmp.file_name().unwrap_or_default().to_string_lossy(),
            // Redis names the file as configured, from inside `dir`.
            dest.strip_prefix(".").unwrap_or(dest).display(),
            cwd(),
            crate::config::strerror(&e)
        ));
    }
    if let Some(parent) = dest.parent() {
        let d = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        std::fs::File::open(d)
            .and_then(|d| d.sync_all())
            .map_err(|e| {
                format!(
                    "Write error saving DB on disk(fsyncFileDir): {}",
                    crate::config::strerror(&e)
                )
            })?;
    }
    Ok(bytes)
}

fn temp_path(state: &ServerState, id: u64) -> PathBuf {
    let dir = settings::dir(&state.config.read());
    dir.join(format!("temp-{}-{id}.rdb", std::process::id()))
}

/// rdbSave: write the dataset to `dbfilename` now, on this thread (SAVE, FLUSHALL with save
/// points, SHUTDOWN, DEBUG RELOAD). The caller holds the server lock. Err: the failure was
/// logged.
pub fn save(state: &ServerState) -> Result<(), ()> {
    let p = plan(state, false);
    let sink = match snapshot::begin(&state.keyspace, &p) {
        Ok(s) => s,
        Err(_) => {
            crate::log::warning("Can't save while a background job captures the dataset");
            return Err(());
        }
    };
    let dest = settings::rdb_path(&state.config.read());
    let none = AtomicBool::new(false);
    // rdbSave's temp file is named after the process alone (a second SIGINT removes it).
    let tmp = settings::dir(&state.config.read()).join(format!("temp-{}.rdb", std::process::id()));
    match write_file(state, &sink, &p, &dest, &tmp, &none) {
        Ok(_) => {
            crate::log::notice("DB saved on disk");
            saved(state);
            state.persist.stats.lock().last_bgsave_ok = true;
            refresh_write_denial(state);
            Ok(())
        }
        Err(msg) => {
            crate::log::warning(&msg);
            Err(())
        }
    }
}

/// rdbRemoveTempFile at a hurried exit (a second SIGINT): the temp files of this
/// process's saves, the one on the caller's thread and background ones.
pub fn remove_temp_files(state: &ServerState) {
    let dir = settings::dir(&state.config.read());
    let pid = std::process::id();
    let (sync, background) = (format!("temp-{pid}.rdb"), format!("temp-{pid}-"));
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &dir
    }) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name == sync || (name.starts_with(&background) && name.ends_with(".rdb")) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A save on this thread succeeded: no change is pending, and LASTSAVE moves.
fn saved(state: &ServerState) {
    state.dirty.store(0, Ordering::Relaxed);
    state.lastsave.store(unix_now(state), Ordering::Relaxed);
}

/// A background save succeeded: the changes made before it started are saved, those made
/// since are still pending; LASTSAVE moves.
fn saved_in_background(state: &ServerState, dirty_before: u64) {
    let _ = state
        .dirty
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| {
            Some(d.saturating_sub(dirty_before))
        });
    state.lastsave.store(unix_now(state), Ordering::Relaxed);
}

/// Whether writes are refused (-MISCONF) because the last background save failed
/// (writeCommandsDeniedByDiskError's RDB half), recomputed when either input changes.
pub fn refresh_write_denial(state: &ServerState) {
    let c = state.config.read();
    let deny = settings::stop_writes_on_bgsave_error(&c)
        && !settings::save_points(&c).is_empty()
        && !state.persist.stats.lock().last_bgsave_ok;
    state
        .persist
        .rdb_denies_writes
        .store(deny, Ordering::Relaxed);
}

/// Why a background job did not start.
#[derive(Debug, PartialEq, Eq)]
pub enum StartError {
    /// Another job runs (Redis's active child).
    Busy,
    /// It could not start.
    Failed,
}

/// rdbSaveBackground: start a BGSAVE. The caller holds the server lock; the file is the
/// dataset as of this call.
pub fn bgsave(state: &ServerState) -> Result<(), StartError> {
    let mut job = state.persist.job.lock();
    if job.is_some() {
        return Err(StartError::Busy);
    }
    let Some(server) = state.persist.server.get().and_then(|w| w.upgrade()) else {
        return Err(StartError::Failed);
    };
    let p = plan(state, false);
    let keys_total = p.sizes.iter().map(|s| s.0).sum();
    let sink = snapshot::begin(&state.keyspace, &p).map_err(|_| StartError::Busy)?;
    let id = state.persist.next_job.fetch_add(1, Ordering::Relaxed);
    let cancelled = Arc::new(AtomicBool::new(false));
    {
        let mut st = state.persist.stats.lock();
        st.rdb_saves += 1;
        st.dirty_before = state.dirty.load(Ordering::Relaxed);
        st.lastbgsave_try = unix_now(state);
    }
    *job = Some(Job {
        kind: JobKind::Rdb,
        id,
        started: Instant::now(),
        sink: sink.clone(),
        cancelled: cancelled.clone(),
        keys_total,
        child: None,
    });
    drop(job);
    let dest = settings::rdb_path(&state.config.read());
    let tmp = temp_path(state, id);
    let writer = match start_child(state, child::Kind::Rdb) {
        Ok(w) => w,
        Err(why) => {
            state.keyspace.end_capture();
            *state.persist.job.lock() = None;
            crate::log::warning(&format!("Can't save in background: fork: {why}"));
            state.persist.stats.lock().last_bgsave_ok = false;
            refresh_write_denial(state);
            return Err(StartError::Failed);
        }
    };
    if let (Some(w), Some(j)) = (&writer, state.persist.job.lock().as_mut()) {
        j.child = Some(w.pid);
    }
    let spawned = std::thread::Builder::new()
        .name("bgsave".into())
        .spawn(move || {
            let r = match writer {
                Some(w) => through_child(&server, &sink, &p, w, &cancelled),
                None => write_file(&server, &sink, &p, &dest, &tmp, &cancelled)
                    .map_err(Failure::Error),
            };
            bgsave_done(&server, id, r, &cancelled);
        });
    if spawned.is_err() {
        state.keyspace.end_capture();
        *state.persist.job.lock() = None;
        crate::log::warning("Can't save in background: fork: Resource temporarily unavailable");
        state.persist.stats.lock().last_bgsave_ok = false;
        refresh_write_denial(state);
        return Err(StartError::Failed);
    }
    crate::log::notice(&format!(
        "Background saving started by pid {}",
        std::process::id()
    ));
    Ok(())
}

/// backgroundSaveDoneHandler: the BGSAVE thread finished (or was told to stop).
fn bgsave_done(state: &ServerState, id: u64, r: Result<u64, Failure>, cancelled: &AtomicBool) {
    let job = {
        let mut job = state.persist.job.lock();
        match job.as_ref() {
            Some(j) if j.id == id => job.take(),
            _ => None,
        }
    };
    if cancelled.load(Ordering::Relaxed) {
        return;
    }
    let secs = job
        .as_ref()
        .map_or(0, |j| j.started.elapsed().as_secs() as i64);
    let cow = job
        .as_ref()
        .map_or(0, |j| j.sink.stats.peak_buffered.load(Ordering::Relaxed));
    match r {
        Ok(_) => {
            crate::log::notice("DB saved on disk");
            crate::log::notice("Background saving terminated with success");
            let before = {
                let mut st = state.persist.stats.lock();
                st.last_bgsave_ok = true;
                st.last_bgsave_secs = secs;
                st.last_cow = cow;
                st.dirty_before
            };
            saved_in_background(state, before);
        }
        Err(Failure::Error(msg)) => {
            if !msg.is_empty() {
                crate::log::warning(&msg);
            }
            crate::log::warning("Background saving error");
            let mut st = state.persist.stats.lock();
            st.last_bgsave_ok = false;
            st.last_bgsave_secs = secs;
        }
        Err(Failure::Signal(sig)) => {
            crate::log::warning(&format!("Background saving terminated by signal {sig}"));
            // SIGUSR1 is how a job is stopped without calling it a failure.
            let mut st = state.persist.stats.lock();
            st.last_bgsave_ok = sig == libc::SIGUSR1 && st.last_bgsave_ok;
            st.last_bgsave_secs = secs;
        }
    }
    refresh_write_denial(state);
}

/// killRDBChild: stop the running BGSAVE (FLUSHALL, SHUTDOWN), leaving no file; its temp
/// file is removed.
pub fn cancel(state: &ServerState, kind: JobKind) -> bool {
    let job = {
        let mut job = state.persist.job.lock();
        match job.as_ref() {
            Some(j) if j.kind == kind => job.take(),
            _ => None,
        }
    };
    let Some(job) = job else {
        return false;
    };
    job.cancelled.store(true, Ordering::Relaxed);
    state.keyspace.end_capture();
    match job.child {
        // killRDBChild: SIGUSR1, then rdbRemoveTempFile. The child made its file before the
        // job was registered, so nothing makes it after this.
        Some(pid) => {
            child::signal(pid, libc::SIGUSR1);
            let dir = match kind {
                JobKind::Rdb => settings::dir(&state.config.read()),
                JobKind::AofRewrite => settings::aof_dir(&state.config.read()),
            };
            let kind = match kind {
                JobKind::Rdb => child::Kind::Rdb,
                JobKind::AofRewrite => child::Kind::AofBase,
            };
            let _ = std::fs::remove_file(dir.join(kind.temp_name(pid)));
        }
        None => {
            let _ = std::fs::remove_file(temp_path(state, job.id));
        }
    }
    true
}

/// Start the writer child of a background job, when this process can (`None`: the job's
/// thread writes the file). Err: why it could not start. The caller holds the server lock.
pub(super) fn start_child(
    state: &ServerState,
    kind: child::Kind,
) -> Result<Option<child::Writer>, String> {
    if !child::available() {
        return Ok(None);
    }
    let (dir, dest) = {
        let c = state.config.read();
        match kind {
            child::Kind::Rdb => (settings::dir(&c), settings::rdb_path(&c)),
            child::Kind::AofBase => (settings::aof_dir(&c), PathBuf::new()),
        }
    };
    // A test server's own directory is made on its first save (Config::ephemeral).
    if !dir.as_os_str().is_empty() && !dir.exists() && state.config.read().has_ephemeral_dir() {
        let _ = std::fs::create_dir_all(&dir);
    }
    let w = child::spawn(kind, &dir, &dest)?;
    crate::cmd::runtime::oom::apply_to_child(&state.config.read(), w.pid);
    let mut st = state.persist.stats.lock();
    st.forks += 1;
    st.latest_fork_us = w.start_us;
    Ok(Some(w))
}

/// A BGSAVE's bytes through its writer child, which syncs and renames the file.
fn through_child(
    state: &ServerState,
    sink: &Sink,
    plan: &Plan,
    mut w: child::Writer,
    cancelled: &AtomicBool,
) -> Result<u64, Failure> {
    let stop = || cancelled.load(Ordering::Relaxed);
    let temp = w.temp.clone();
    let r = match snapshot::write(&state.keyspace, sink, plan, &mut w, &stop) {
        Ok((_, n)) => w.finish().map(|_| n),
        Err(_) => Err(w.abandon()),
    };
    // rdbRemoveTempFile: a killed child leaves its file.
    if matches!(r, Err(Failure::Signal(_))) {
        let _ = std::fs::remove_file(temp);
    }
    r
}

/// What the cron has to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// A BGSAVE that waited for the previous job (BGSAVE SCHEDULE).
    Scheduled,
    /// A `save` point (seconds, changes) was reached.
    SavePoint(i64, u64),
}

/// serverCron's persistence check: a scheduled BGSAVE once no job runs, else the first
/// `save` point reached (`save 900 1`: at least 1 change and more than 900 s since the last
/// save), unless the last background save failed less than 5 s ago.
pub fn due(state: &ServerState) -> Option<Due> {
    if state.persist.job.lock().is_some() || state.persist.loading.load(Ordering::Relaxed) {
        return None;
    }
    let now = unix_now(state);
    let (ok, tried) = {
        let st = state.persist.stats.lock();
        (st.last_bgsave_ok, st.lastbgsave_try)
    };
    let may_retry = ok || now - tried > RETRY_DELAY_S;
    if !may_retry {
        return None;
    }
    if state.persist.bgsave_scheduled.load(Ordering::Relaxed) {
        return Some(Due::Scheduled);
    }
    let points = settings::save_points(&state.config.read());
    let dirty = state.dirty.load(Ordering::Relaxed);
    let lastsave = state.lastsave.load(Ordering::Relaxed);
    points
        .into_iter()
        .find(|&(secs, changes)| dirty >= changes && now - lastsave > secs)
        .map(|(secs, changes)| Due::SavePoint(secs, changes))
}

/// Start what [`due`] found; the caller holds the server lock.
pub fn start_due(state: &ServerState, due: Due) {
    match due {
        Due::Scheduled => {
            if bgsave(state).is_ok() {
                state
                    .persist
                    .bgsave_scheduled
                    .store(false, Ordering::Relaxed);
            }
        }
        Due::SavePoint(secs, changes) => {
            crate::log::notice(&format!("{changes} changes in {secs} seconds. Saving..."));
            let _ = bgsave(state);
        }
    }
}

/// SAVE's and BGSAVE's and INFO's view of the running job.
pub fn running(state: &ServerState) -> Option<JobKind> {
    state.persist.job.lock().as_ref().map(|j| j.kind)
}
