//! The append-only log at the server level, as redis-server 7.0 runs it. Here: its state
//! (off, on, waiting for the first rewrite), the manifest's name and reading, opening it for
//! appending at start (aofOpenIfNeededOnServerStart), turning it on and off at run time, and
//! when the cron rewrites it as it grows. Loading it (at start and DEBUG LOADAOF, with the
//! upgrade of an old single-file AOF) is [`load`]; BGREWRITEAOF (a new incremental file from
//! the moment of the snapshot, a new base file written from the snapshot, then the manifest
//! switched and the old files removed) is [`rewrite`]. The files and their format are
//! `crate::aof`'s (its `load` reads a log; this `load` runs one into the server).

pub mod load;
pub mod rewrite;

use crate::aof::append::{Appender, Fsync};
use crate::aof::manifest::{write_manifest, Manifest};
use crate::cmd::runtime::persist::aof::rewrite::{rewrite_background, rewrite_now};
use crate::cmd::runtime::persist::registry::JobKind;
use crate::cmd::runtime::persist::save::{self};
use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::ServerState;
use std::path::Path;
use std::sync::atomic::Ordering;

/// aof_state: off.
pub const OFF: u8 = 0;
/// aof_state: on.
pub const ON: u8 = 1;
/// aof_state: turned on at run time, waiting for the first rewrite to finish.
pub const WAIT_REWRITE: u8 = 2;

fn manifest_name(c: &crate::config::Config) -> String {
    format!("{}.manifest", settings::appendfilename(c))
}

/// Read the manifest of the AOF directory; an empty one if there is no directory or no
/// manifest (aofLoadManifestFromDisk). Err: the fatal lines were logged.
fn read_manifest(state: &ServerState) -> Result<Manifest, ()> {
    let c = state.config.read().clone();
    let path = settings::aof_dir(&c).join(manifest_name(&c));
    match std::fs::read(&path) {
        Ok(text) => Manifest::parse(&text).map_err(|e| {
            for l in e.log_lines() {
                crate::log::warning(&l);
            }
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(e) => {
            crate::log::warning(&format!(
                "Fatal error: can't open the AOF manifest file {} for reading: {}",
                path.display(),
                crate::config::strerror(&e)
            ));
            Err(())
        }
    }
}

/// The temp incremental file written while the log waits for its first rewrite.
fn temp_incr_name(c: &crate::config::Config) -> String {
    format!("temp-{}.incr", settings::appendfilename(c))
}

/// aofOpenIfNeededOnServerStart: a base file for an empty log, the last incremental file
/// opened for appending (a new one if there is none), the manifest saved.
fn open_on_start(state: &ServerState, mut m: Manifest) -> Result<(), ()> {
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let name = settings::appendfilename(&c);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    if m.base.is_none() && m.incr.is_empty() {
        let base = m.new_base(&name, settings::aof_use_rdb_preamble(&c));
        rewrite_now(state, &dir.join(&base))?;
        crate::log::notice(&format!("Creating AOF base file {base} on server start"));
    }
    let existed = !m.incr.is_empty();
    let incr = m.last_incr(&name);
    let file = open_append(&dir.join(&incr)).map_err(|e| {
        crate::log::warning(&format!(
            "Can't open the append-only file {incr}: {}",
            crate::config::strerror(&e)
        ));
    })?;
    write_manifest(&dir, &manifest_name(&c), &m.to_text()).map_err(|e| {
        crate::log::warning(&format!(
            "Can't open the AOF manifest file {}: {}",
            manifest_name(&c),
            crate::config::strerror(&e)
        ));
    })?;
    let incr_size = file.metadata().map(|m| m.len()).unwrap_or(0);
    start_appender(state, file, incr_size, &m);
    *state.persist.manifest.lock() = Some(m);
    state.persist.aof_state.store(ON, Ordering::Relaxed);
    crate::log::notice(&if existed {
        format!("Opening AOF incr file {incr} on server start")
    } else {
        format!("Creating AOF incr file {incr} on server start")
    });
    Ok(())
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// Install the live log writing to `file` and turn propagation on.
fn start_appender(state: &ServerState, file: std::fs::File, incr_size: u64, m: &Manifest) {
    let c = state.config.read().clone();
    let a = Appender::start(file, incr_size, Fsync::parse(&c.appendfsync));
    a.timestamps.store(
        c.get("aof-timestamp-enabled").is_some_and(|v| v == "yes"),
        Ordering::Relaxed,
    );
    a.no_fsync_on_rewrite.store(
        c.get("no-appendfsync-on-rewrite")
            .is_some_and(|v| v == "yes"),
        Ordering::Relaxed,
    );
    let dir = settings::aof_dir(&c);
    let size = |n: &str| std::fs::metadata(dir.join(n)).map_or(0, |m| m.len());
    let base = m.base.as_ref().map_or(0, |b| size(&b.name));
    let total: u64 = m.load_order().map(|f| size(&f.name)).sum();
    a.base_size.store(base, Ordering::Relaxed);
    a.current_size.store(total, Ordering::Relaxed);
    *state.persist.aof.write() = Some(a);
    refresh_propagation(state);
}

/// Propagation runs while the log is written or a replica listens.
pub fn refresh_propagation(state: &ServerState) {
    let on = state.persist.aof.read().is_some() || state.replication.has_backlog();
    state.propagation.set_active(on);
}

/// CONFIG SET appendonly yes (startAppendOnly): the log is written from now on, to a
/// temp incremental file until a first rewrite has made its base.
pub fn turn_on(state: &ServerState, in_exec: bool) -> Result<(), ()> {
    if state.persist.aof_state.load(Ordering::Relaxed) != OFF {
        return Ok(());
    }
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    let temp = dir.join(temp_incr_name(&c));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&temp)
        .map_err(|_| ())?;
    let m = read_manifest(state).unwrap_or_default();
    start_appender(state, file, 0, &m);
    *state.persist.manifest.lock() = Some(m);
    state
        .persist
        .aof_state
        .store(WAIT_REWRITE, Ordering::Relaxed);
    let busy = state.persist.job.lock().as_ref().map(|j| j.kind);
    if busy == Some(JobKind::Rdb) || in_exec {
        state
            .persist
            .rewrite_scheduled
            .store(true, Ordering::Relaxed);
        crate::log::warning(if in_exec {
            "AOF was enabled during a transaction. An AOF background was scheduled to start when possible."
        } else {
            "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible."
        });
        return Ok(());
    }
    if busy == Some(JobKind::AofRewrite) {
        crate::log::warning("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.");
        save::cancel(state, JobKind::AofRewrite);
    }
    if rewrite_background(state).is_err() {
        turn_off(state);
        crate::log::warning("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
        return Err(());
    }
    Ok(())
}

/// CONFIG SET appendonly no (stopAppendOnly): the last writes synced, the log closed, a
/// rewrite in progress stopped.
pub fn turn_off(state: &ServerState) {
    if let Some(a) = state.persist.aof.write().take() {
        a.stop();
    }
    save::cancel(state, JobKind::AofRewrite);
    state
        .persist
        .rewrite_scheduled
        .store(false, Ordering::Relaxed);
    state.persist.aof_state.store(OFF, Ordering::Relaxed);
    *state.persist.manifest.lock() = None;
    refresh_propagation(state);
}

/// What the cron has to start for the log.
pub fn due(state: &ServerState) -> bool {
    if state.persist.job.lock().is_some() || state.persist.loading.load(Ordering::Relaxed) {
        return false;
    }
    if state.persist.rewrite_scheduled.load(Ordering::Relaxed) {
        return true;
    }
    let Some(a) = state.persist.aof.read().clone() else {
        return false;
    };
    if state.persist.aof_state.load(Ordering::Relaxed) != ON {
        return false;
    }
    let c = state.config.read();
    let perc: u64 = c
        .get("auto-aof-rewrite-percentage")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let min: u64 = c
        .get("auto-aof-rewrite-min-size")
        .and_then(|v| crate::config::memtoull(v.as_bytes()))
        .unwrap_or(64 << 20);
    let current = a.current_size.load(Ordering::Relaxed);
    if perc == 0 || current <= min {
        return false;
    }
    let base = a.base_size.load(Ordering::Relaxed).max(1);
    let growth = (current * 100 / base).saturating_sub(100);
    if growth >= perc {
        crate::log::notice(&format!(
            "Starting automatic rewriting of AOF on {growth}% growth"
        ));
        return true;
    }
    false
}

/// Write and sync the log before the server stops (prepareForShutdown).
pub fn sync_for_shutdown(state: &ServerState) {
    if let Some(a) = state.persist.aof.read().as_ref() {
        crate::log::notice("Calling fsync() on the AOF file.");
        a.flush_and_sync();
    }
}
