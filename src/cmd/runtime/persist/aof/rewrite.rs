//! Rewriting the append-only log (rewriteAppendOnlyFile, BGREWRITEAOF): a base file of the
//! dataset written from a snapshot, synchronously for an empty log at start or on a thread
//! of its own in the background, then installed with the manifest switched and the rewritten
//! incremental files retired (backgroundRewriteDoneHandler).

use crate::aof::manifest::write_manifest;
use crate::cmd::runtime::persist::aof::{manifest_name, temp_incr_name, ON, WAIT_REWRITE};
use crate::cmd::runtime::persist::child::{self, Failure};
use crate::cmd::runtime::persist::registry::{Job, JobKind};
use crate::cmd::runtime::persist::save::{self, StartError};
use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::ServerState;
use crate::rdb::snapshot::{self, Records, Sink};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The rewrite's base file contents, written synchronously (rewriteAppendOnlyFile): the
/// dataset as it is now, to `dest` through a temp file. The caller holds the server lock.
pub(super) fn rewrite_now(state: &ServerState, dest: &Path) -> Result<(), ()> {
    let (sink, plan, use_rdb) = begin_base(state).map_err(|_| {
        crate::log::warning("Can't rewrite the AOF while another job captures the dataset");
    })?;
    let tmp = settings::dir(&state.config.read())
        .join(format!("temp-rewriteaof-{}.aof", std::process::id()));
    let none = AtomicBool::new(false);
    write_base(state, &sink, &plan, use_rdb, &tmp, &none)
        .and_then(|_| {
            std::fs::rename(&tmp, dest).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!(
                    "Error moving temp append only file on the final destination: {}",
                    crate::config::strerror(&e)
                )
            })
        })
        .map_err(|msg| crate::log::warning(&msg))
}

/// Start the snapshot a base file is written from: RDB records (aof-use-rdb-preamble) or
/// commands.
fn begin_base(
    state: &ServerState,
) -> Result<(Arc<Sink>, snapshot::Plan, bool), crate::keyspace::CaptureBusy> {
    let plan = save::plan(state, true);
    let use_rdb = settings::aof_use_rdb_preamble(&state.config.read());
    let records = if use_rdb {
        Records::Rdb(plan.format)
    } else {
        Records::Custom(crate::aof::encode::rewrite_key)
    };
    let sink = snapshot::begin_capture(&state.keyspace, records)?;
    Ok((sink, plan, use_rdb))
}

/// Write a base file from the snapshot into `tmp` and sync it (the caller renames it). The
/// error is the line redis-server logs.
fn write_base(
    state: &ServerState,
    sink: &Sink,
    plan: &snapshot::Plan,
    use_rdb: bool,
    tmp: &Path,
    cancelled: &AtomicBool,
) -> Result<u64, String> {
    let werr = |e: std::io::Error| {
        let _ = std::fs::remove_file(tmp);
        format!(
            "Write error writing append only file on disk: {}",
            crate::config::strerror(&e)
        )
    };
    let f = match std::fs::File::create(tmp) {
        Ok(f) => f,
        Err(e) => {
            snapshot::finish(&state.keyspace, sink);
            return Err(format!(
                "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): {}",
                crate::config::strerror(&e)
            ));
        }
    };
    let w = std::io::BufWriter::with_capacity(1 << 16, f);
    let stop = || cancelled.load(Ordering::Relaxed);
    let (w, n) = if use_rdb {
        snapshot::write(&state.keyspace, sink, plan, w, &stop).map_err(werr)?
    } else {
        let r = write_commands(state, sink, plan, w, &stop);
        snapshot::finish(&state.keyspace, sink);
        r.map_err(werr)?
    };
    let f = w.into_inner().map_err(|e| werr(e.into_error()))?;
    f.sync_all().map_err(werr)?;
    Ok(n)
}

/// A base file's bytes through its writer child, which syncs it (the server renames it).
fn base_through_child(
    state: &ServerState,
    sink: &Sink,
    plan: &snapshot::Plan,
    use_rdb: bool,
    mut w: child::Writer,
    cancelled: &AtomicBool,
) -> Result<u64, String> {
    let stop = || cancelled.load(Ordering::Relaxed);
    let written = if use_rdb {
        snapshot::write(&state.keyspace, sink, plan, &mut w, &stop).map(|(_, n)| n)
    } else {
        let r = write_commands(state, sink, plan, &mut w, &stop).map(|(_, n)| n);
        snapshot::finish(&state.keyspace, sink);
        r
    };
    let ended = match written {
        Ok(n) => w.finish().map(|_| n),
        Err(_) => Err(w.abandon()),
    };
    ended.map_err(|f| match f {
        Failure::Error(msg) => msg,
        Failure::Signal(sig) => format!("Background AOF rewrite terminated by signal {sig}"),
    })
}

/// rewriteAppendOnlyFileRio: the dataset as commands (a timestamp annotation when enabled,
/// FUNCTION LOAD per library, then per database a SELECT and each key's commands).
fn write_commands<W: Write>(
    state: &ServerState,
    sink: &Sink,
    plan: &snapshot::Plan,
    mut w: W,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<(W, u64)> {
    let mut n = 0u64;
    let mut head = Vec::new();
    if state
        .config
        .read()
        .get("aof-timestamp-enabled")
        .is_some_and(|v| v == "yes")
    {
        crate::aof::encode::timestamp(&mut head, plan.aux.ctime);
    }
    for code in &plan.functions {
        crate::aof::encode::function_load(&mut head, code);
    }
    w.write_all(&head)?;
    n += head.len() as u64;
    for db in 0..state.keyspace.databases() {
        let mut selected = false;
        for idx in 0..crate::keyspace::SHARDS {
            if stop() {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            if let Some(bytes) = snapshot::take(&state.keyspace, sink, db, idx) {
                if !selected {
                    let mut s = Vec::new();
                    crate::aof::encode::select(&mut s, db);
                    w.write_all(&s)?;
                    n += s.len() as u64;
                    selected = true;
                }
                w.write_all(&bytes)?;
                n += bytes.len() as u64;
            }
        }
    }
    Ok((w, n))
}

/// rewriteAppendOnlyFileBackground: start BGREWRITEAOF. The caller holds the server lock.
/// From now on the log appends to a new incremental file, and a base file of the dataset as
/// of now is written on a thread of its own.
pub fn rewrite_background(state: &ServerState) -> Result<(), StartError> {
    if state.persist.job.lock().is_some() {
        return Err(StartError::Busy);
    }
    let Some(server) = state.persist.server.get().and_then(|w| w.upgrade()) else {
        return Err(StartError::Failed);
    };
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let fail = |st: &ServerState| {
        st.persist.stats.lock().aof_last_rewrite_ok = false;
        Err(StartError::Failed)
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return fail(state);
    }
    // openNewIncrAofForAppend: writes from this moment go to a new incremental file (the
    // temp one while waiting for the first rewrite), in step with the snapshot below.
    let waiting = state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE;
    let appender = state.persist.aof.read().clone();
    if let Some(a) = &appender {
        let mut m = state.persist.manifest.lock().clone().unwrap_or_default();
        let name = if waiting {
            temp_incr_name(&c)
        } else {
            m.new_incr(&settings::appendfilename(&c))
        };
        let file = match std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(dir.join(&name))
        {
            Ok(f) => f,
            Err(e) => {
                crate::log::warning(&format!(
                    "Can't open the append-only file {name}: {}",
                    crate::config::strerror(&e)
                ));
                return fail(state);
            }
        };
        if !waiting {
            if write_manifest(&dir, &manifest_name(&c), &m.to_text()).is_err() {
                return fail(state);
            }
            *state.persist.manifest.lock() = Some(m);
        }
        crate::log::notice(&format!(
            "Creating AOF incr file {name} on background rewrite"
        ));
        a.switch_file(file);
    }
    let (sink, plan, use_rdb) = match begin_base(state) {
        Ok(b) => b,
        Err(_) => return Err(StartError::Busy),
    };
    let id = state.persist.next_job.fetch_add(1, Ordering::Relaxed);
    let cancelled = Arc::new(AtomicBool::new(false));
    *state.persist.job.lock() = Some(Job {
        kind: JobKind::AofRewrite,
        id,
        started: Instant::now(),
        sink: sink.clone(),
        cancelled: cancelled.clone(),
        keys_total: plan.sizes.iter().map(|s| s.0).sum(),
        child: None,
    });
    state.persist.stats.lock().aof_rewrites += 1;
    state
        .persist
        .rewrite_scheduled
        .store(false, Ordering::Relaxed);
    if let Some(a) = &appender {
        a.child_active.store(true, Ordering::Relaxed);
    }
    let writer = match save::start_child(state, child::Kind::AofBase) {
        Ok(w) => w,
        Err(why) => {
            snapshot::finish(
                &state.keyspace,
                &state.persist.job.lock().take().expect("set above").sink,
            );
            if let Some(a) = &appender {
                a.child_active.store(false, Ordering::Relaxed);
            }
            crate::log::warning(&format!(
                "Can't rewrite append only file in background: fork: {why}"
            ));
            return fail(state);
        }
    };
    let tmp = match &writer {
        Some(w) => {
            if let Some(j) = state.persist.job.lock().as_mut() {
                j.child = Some(w.pid);
            }
            w.temp.clone()
        }
        None => temp_base_path(state, id),
    };
    let spawned = std::thread::Builder::new()
        .name("bgrewriteaof".into())
        .spawn(move || {
            let r = match writer {
                Some(w) => base_through_child(&server, &sink, &plan, use_rdb, w, &cancelled),
                None => write_base(&server, &sink, &plan, use_rdb, &tmp, &cancelled),
            };
            rewrite_done(&server, id, r, &tmp, &cancelled);
        });
    if spawned.is_err() {
        snapshot::finish(
            &state.keyspace,
            &state.persist.job.lock().take().expect("set above").sink,
        );
        crate::log::warning(
            "Can't rewrite append only file in background: fork: Resource temporarily unavailable",
        );
        return fail(state);
    }
    crate::log::notice(&format!(
        "Background append only file rewriting started by pid {}",
        std::process::id()
    ));
    Ok(())
}

fn temp_base_path(state: &ServerState, id: u64) -> PathBuf {
    settings::aof_dir(&state.config.read()).join(format!(
        "temp-rewriteaof-bg-{}-{id}.aof",
        std::process::id()
    ))
}

/// backgroundRewriteDoneHandler: install the new base file, retire the rewritten
/// incremental files, save the manifest, remove the history.
fn rewrite_done(
    state: &ServerState,
    id: u64,
    r: Result<u64, String>,
    tmp: &Path,
    cancelled: &AtomicBool,
) {
    // Everything below changes what commands see (the manifest, the files): under the lock.
    let _guard = state.lock.lock_blocking();
    let job = {
        let mut job = state.persist.job.lock();
        match job.as_ref() {
            Some(j) if j.id == id => job.take(),
            _ => None,
        }
    };
    if let Some(a) = state.persist.aof.read().as_ref() {
        a.child_active.store(false, Ordering::Relaxed);
    }
    if cancelled.load(Ordering::Relaxed) || job.is_none() {
        let _ = std::fs::remove_file(tmp);
        return;
    }
    let job = job.expect("checked");
    let secs = job.started.elapsed().as_secs() as i64;
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let name = settings::appendfilename(&c);
    let outcome: Result<(), String> = (|| {
        r?;
        crate::log::notice("Background AOF rewrite terminated with success");
        let mut m = state.persist.manifest.lock().clone().unwrap_or_default();
        let base = m.new_base(&name, settings::aof_use_rdb_preamble(&c));
        std::fs::rename(tmp, dir.join(&base)).map_err(|e| {
            format!(
                "Error trying to rename the temporary AOF base file {} into {}: {}",
                tmp.display(),
                dir.join(&base).display(),
                crate::config::strerror(&e)
            )
        })?;
        crate::log::notice(&format!(
            "Successfully renamed the temporary AOF base file {} into {base}",
            tmp.file_name().unwrap_or_default().to_string_lossy()
        ));
        let waiting = state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE;
        if waiting {
            let temp = temp_incr_name(&c);
            let incr = m.new_incr(&name);
            std::fs::rename(dir.join(&temp), dir.join(&incr)).map_err(|e| {
                let _ = std::fs::remove_file(dir.join(&base));
                format!(
                    "Error trying to rename the temporary AOF incr file {temp} into {incr}: {}",
                    crate::config::strerror(&e)
                )
            })?;
            crate::log::notice(&format!(
                "Successfully renamed the temporary AOF incr file {temp} into {incr}"
            ));
        }
        let aof_on = state.persist.aof.read().is_some();
        m.mark_rewritten_incr_as_history(aof_on);
        write_manifest(&dir, &manifest_name(&c), &m.to_text()).map_err(|e| {
            format!(
                "Can't persist the AOF manifest: {}",
                crate::config::strerror(&e)
            )
        })?;
        // The history goes (aofDelHistoryFiles), unless aof-disable-auto-gc.
        if c.get("aof-disable-auto-gc").is_none_or(|v| v != "yes") {
            for h in std::mem::take(&mut m.history) {
                crate::log::notice(&format!(
                    "Removing the history file {} in the background",
                    h.name
                ));
                let _ = std::fs::remove_file(dir.join(&h.name));
            }
            let _ = write_manifest(&dir, &manifest_name(&c), &m.to_text());
        }
        if let Some(a) = state.persist.aof.read().as_ref() {
            let size = |n: &str| std::fs::metadata(dir.join(n)).map_or(0, |x| x.len());
            let base_size = size(&base);
            a.base_size.store(base_size, Ordering::Relaxed);
            a.current_size
                .store(base_size + a.incr_size(), Ordering::Relaxed);
        }
        *state.persist.manifest.lock() = Some(m);
        if waiting {
            state.persist.aof_state.store(ON, Ordering::Relaxed);
        }
        Ok(())
    })();
    let cow = job.sink.stats.peak_buffered.load(Ordering::Relaxed);
    let mut st = state.persist.stats.lock();
    st.aof_last_rewrite_secs = secs;
    st.aof_last_cow = cow;
    match outcome {
        Ok(()) => {
            st.aof_last_rewrite_ok = true;
            st.aof_rewrite_failures = 0;
            crate::log::notice("Background AOF rewrite finished successfully");
        }
        Err(msg) => {
            let _ = std::fs::remove_file(tmp);
            crate::log::warning(&msg);
            crate::log::warning("Background AOF rewrite terminated with error");
            st.aof_last_rewrite_ok = false;
            st.aof_rewrite_failures += 1;
            if state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE {
                state
                    .persist
                    .rewrite_scheduled
                    .store(true, Ordering::Relaxed);
            }
        }
    }
}
