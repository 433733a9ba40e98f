//! Persistence, as redis-server 7.0 does it: RDB saves (SAVE, BGSAVE, the `save` points:
//! `save.rs`), loading at start and DEBUG RELOAD (`load.rs`), the append-only log
//! (`aof/`: its state and run-time switch in `mod.rs`, loading in `load.rs`, BGREWRITEAOF in
//! `rewrite.rs`), what they read from the configuration (`settings.rs`) and keep
//! (`registry.rs`). The formats are `crate::rdb`'s and `crate::aof`'s.
//!
//! This file holds what the request path asks of persistence: refusing writes while the disk
//! fails (-MISCONF) and commands while loading (-LOADING), appending effects to the log, and
//! making sure the log holds a write before its reply leaves.

// Err(()) here means "failed, and why was already logged as redis-server logs it": callers
// only decide whether the server may go on.
#![allow(clippy::result_unit_err)]

pub mod aof;
pub mod child;
pub mod load;
pub mod registry;
pub mod save;
pub mod settings;

use crate::cmd::base::flags;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::RedisError;
use std::sync::atomic::Ordering;

/// The -MISCONF error of a failed background save (shared.bgsaveerr).
const MISCONF_RDB: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
use crate::error::LOADING;

/// processCommand's disk check (writeCommandsDeniedByDiskError): writes (and PING) are
/// refused while the last background save failed or the AOF cannot be written.
pub fn disk_error(state: &ServerState, writes: bool, cmd: &Command) -> Option<RedisError> {
    if !writes && cmd.name != "ping" {
        return None;
    }
    if state.persist.rdb_denies_writes.load(Ordering::Relaxed) {
        return Some(RedisError::new(MISCONF_RDB));
    }
    if !crate::aof::append::any_write_failed() {
        return None;
    }
    let aof = state.persist.aof.read();
    if let Some(a) = aof.as_ref() {
        if a.write_failed.load(Ordering::Relaxed) {
            return Some(crate::error::err(format!(
                "MISCONF Errors writing to the AOF file: {}",
                a.last_error()
            )));
        }
    }
    None
}

/// The server is still starting (its dataset loading): a request may have to wait in
/// [`wait_for_start`].
pub fn starting(state: &ServerState) -> bool {
    state.persist.starting.load(Ordering::Acquire)
}

/// A request that arrives while the server starts waits until the dataset is loaded, as
/// redis-server's clients wait in the listen backlog until its event loop runs: a server with
/// no file (or a small one) never answers -LOADING. Only a load that has read more than
/// redis-server's `loading-process-events-interval-bytes` (2 MB), after which redis-server
/// serves events with -LOADING, lets the request through to [`loading_error`].
pub async fn wait_for_start(state: &ServerState) {
    const EVENTS_INTERVAL_BYTES: u64 = 2 * 1024 * 1024;
    while state.persist.starting.load(Ordering::Acquire)
        && !(state.persist.loading.load(Ordering::Acquire)
            && state.persist.loaded_bytes.load(Ordering::Relaxed) >= EVENTS_INTERVAL_BYTES)
    {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// processCommand's loading check: while the dataset loads, only commands flagged LOADING
/// run (INFO, PING's kin...), the rest get -LOADING.
pub fn loading_error(
    state: &ServerState,
    cmd: &Command,
    parent: Option<&Command>,
) -> Option<RedisError> {
    if !state.persist.loading.load(Ordering::Acquire)
        && !state.persist.starting.load(Ordering::Acquire)
    {
        return None;
    }
    let allowed = cmd.has(flags::LOADING) || parent.is_some_and(|p| p.has(flags::LOADING));
    (!allowed).then(|| RedisError::new(LOADING))
}

/// Before replies leave: the AOF holds (and under `appendfsync always` has synced) every
/// effect appended so far, so no client sees a write that a crash could take back. Under
/// `always` the connection awaits the log's thread, which fsyncs once for every connection
/// waiting together, while its worker serves the others; otherwise the write into the page
/// cache is done here, on the worker.
pub async fn before_reply(state: &ServerState) {
    if !before_reply_now(state) {
        let aof = state.persist.aof.read().clone();
        if let Some(aof) = aof {
            aof.durable(aof.appended()).await;
        }
    }
}

/// [`before_reply`] without waiting: false when the replies must wait for an fsync
/// (`appendfsync always` with writes not yet synced), which the caller then awaits with
/// [`before_reply`] (the event loop hands the client to a task for it).
pub fn before_reply_now(state: &ServerState) -> bool {
    if state.persist.aof_state.load(Ordering::Relaxed) == aof::OFF {
        return true;
    }
    let aof = state.persist.aof.read().clone();
    if let Some(aof) = aof {
        let upto = aof.appended();
        if !aof.is_flushed(upto) {
            if aof.policy() == crate::aof::append::Fsync::Always {
                return false;
            }
            // A write into the page cache takes microseconds, far less than handing the
            // worker's other tasks to another thread (block_in_place, per request): with
            // it, `everysec` served a fifth of redis-server's SET NX PX rate.
            aof.flush_to(upto);
        }
    }
    true
}

/// finishShutdown's persistence half, before the server stops (SHUTDOWN, SIGTERM): a running
/// BGSAVE stopped, the AOF written and synced (a rewrite stopped), and a final RDB saved when
/// `save` points are set (or `save`), unless `nosave`. Err: the server must not stop (a
/// failed final save without `force`, or the AOF's first rewrite still running); the reason
/// was logged. The caller holds the server lock.
pub fn prepare_shutdown(
    state: &ServerState,
    save: bool,
    nosave: bool,
    force: bool,
) -> Result<(), ()> {
    use registry::JobKind;
    let error = || {
        crate::log::warning(
            "Errors trying to shut down the server. Check the logs for more information.",
        );
        Err(())
    };
    if save::running(state) == Some(JobKind::Rdb) {
        crate::log::warning("There is a child saving an .rdb. Killing it!");
        save::cancel(state, JobKind::Rdb);
    }
    if state.persist.aof_state.load(Ordering::Relaxed) != aof::OFF {
        if save::running(state) == Some(JobKind::AofRewrite) {
            if state.persist.aof_state.load(Ordering::Relaxed) == aof::WAIT_REWRITE {
                if force {
                    crate::log::warning("Writing initial AOF. Exit anyway.");
                } else {
                    crate::log::warning("Writing initial AOF, can't exit.");
                    return error();
                }
            }
            crate::log::warning("There is a child rewriting the AOF. Killing it!");
            save::cancel(state, JobKind::AofRewrite);
        }
        aof::sync_for_shutdown(state);
    }
    let points = !settings::save_points(&state.config.read()).is_empty();
    if (points && !nosave) || save {
        crate::log::notice("Saving the final RDB snapshot before exiting.");
        if save::save(state).is_err() {
            if force {
                crate::log::warning("Error trying to save the DB. Exit anyway.");
            } else {
                crate::log::warning("Error trying to save the DB, can't exit.");
                return error();
            }
        }
    }
    Ok(())
}

/// INFO persistence's fields, in redis-server 7.0.15's order. A background job's "copy on
/// write" figures are its serialized records waiting in memory (see `crate::rdb::snapshot`).
pub fn info(state: &ServerState, kv: &mut dyn FnMut(&str, &dyn std::fmt::Display)) {
    use registry::JobKind;
    let loading = state.persist.loading.load(Ordering::Acquire);
    let now = state.clock.now_ms() / 1000;
    kv("loading", &(loading as u8));
    kv("async_loading", &0);
    let job = state.persist.job.lock();
    let (cow, peak) = job.as_ref().map_or((0, 0), |j| {
        (
            j.sink.stats.buffered.load(Ordering::Relaxed),
            j.sink.stats.peak_buffered.load(Ordering::Relaxed),
        )
    });
    kv("current_cow_peak", &peak);
    kv("current_cow_size", &cow);
    kv("current_cow_size_age", &0);
    kv(
        "current_fork_perc",
        &format!(
            "{:.2}",
            job.as_ref().map_or(0.0, |j| {
                if j.keys_total == 0 {
                    0.0
                } else {
                    j.sink.stats.keys_written.load(Ordering::Relaxed) as f64 * 100.0
                        / j.keys_total as f64
                }
            })
        ),
    );
    kv(
        "current_save_keys_processed",
        &job.as_ref()
            .map_or(0, |j| j.sink.stats.keys_written.load(Ordering::Relaxed)),
    );
    kv(
        "current_save_keys_total",
        &job.as_ref().map_or(0, |j| j.keys_total),
    );
    let running = |k: JobKind| job.as_ref().filter(|j| j.kind == k);
    let st = state.persist.stats.lock();
    kv(
        "rdb_changes_since_last_save",
        &state.dirty.load(Ordering::Relaxed),
    );
    kv(
        "rdb_bgsave_in_progress",
        &(running(JobKind::Rdb).is_some() as u8),
    );
    kv(
        "rdb_last_save_time",
        &state.lastsave.load(Ordering::Relaxed),
    );
    kv(
        "rdb_last_bgsave_status",
        &if st.last_bgsave_ok { "ok" } else { "err" },
    );
    kv("rdb_last_bgsave_time_sec", &st.last_bgsave_secs);
    kv(
        "rdb_current_bgsave_time_sec",
        &running(JobKind::Rdb).map_or(-1, |j| j.started.elapsed().as_secs() as i64),
    );
    kv("rdb_saves", &st.rdb_saves);
    kv("rdb_last_cow_size", &st.last_cow);
    kv("rdb_last_load_keys_expired", &st.last_load_expired);
    kv("rdb_last_load_keys_loaded", &st.last_load_loaded);
    let aof_state = state.persist.aof_state.load(Ordering::Relaxed);
    kv("aof_enabled", &((aof_state != aof::OFF) as u8));
    kv(
        "aof_rewrite_in_progress",
        &(running(JobKind::AofRewrite).is_some() as u8),
    );
    kv(
        "aof_rewrite_scheduled",
        &(state.persist.rewrite_scheduled.load(Ordering::Relaxed) as u8),
    );
    kv("aof_last_rewrite_time_sec", &st.aof_last_rewrite_secs);
    kv(
        "aof_current_rewrite_time_sec",
        &running(JobKind::AofRewrite).map_or(-1, |j| j.started.elapsed().as_secs() as i64),
    );
    kv(
        "aof_last_bgrewrite_status",
        &if st.aof_last_rewrite_ok { "ok" } else { "err" },
    );
    kv("aof_rewrites", &st.aof_rewrites);
    kv(
        "aof_rewrites_consecutive_failures",
        &st.aof_rewrite_failures,
    );
    let appender = state.persist.aof.read().clone();
    let write_ok = appender
        .as_ref()
        .is_none_or(|a| !a.write_failed.load(Ordering::Relaxed));
    kv(
        "aof_last_write_status",
        &if write_ok { "ok" } else { "err" },
    );
    kv("aof_last_cow_size", &st.aof_last_cow);
    kv("module_fork_in_progress", &0);
    kv("module_fork_last_cow_size", &0);
    drop(st);
    drop(job);
    if let (Some(a), true) = (appender, aof_state != aof::OFF) {
        kv("aof_current_size", &a.current_size.load(Ordering::Relaxed));
        kv("aof_base_size", &a.base_size.load(Ordering::Relaxed));
        kv(
            "aof_pending_rewrite",
            &(state.persist.rewrite_scheduled.load(Ordering::Relaxed) as u8),
        );
        kv("aof_buffer_length", &a.buffered());
        kv("aof_pending_bio_fsync", &(a.sync_pending() as u8));
        kv(
            "aof_delayed_fsync",
            &a.delayed_fsync.load(Ordering::Relaxed),
        );
    }
    if loading {
        let l = state.persist.load_info.lock();
        let loaded = state.persist.loaded_bytes.load(Ordering::Relaxed);
        let elapsed = (now - l.start).max(0);
        let perc = if l.total == 0 {
            0.0
        } else {
            loaded as f64 * 100.0 / l.total as f64
        };
        let eta = if elapsed == 0 || loaded == 0 {
            1
        } else {
            ((l.total.saturating_sub(loaded)) as f64 / (loaded as f64 / elapsed as f64)) as i64
        };
        kv("loading_start_time", &l.start);
        kv("loading_total_bytes", &l.total);
        kv("loading_rdb_used_mem", &l.rdb_used_mem);
        kv("loading_loaded_bytes", &loaded);
        kv("loading_loaded_perc", &format!("{perc:.2}"));
        kv("loading_eta_seconds", &eta);
    }
    // resplock's own (stop-writes-after-restart), only while the parameter is on.
    state.restart_delay.info(state.clock.now_ms(), kv);
}

/// CONFIG SET of persistence settings took effect in the configuration: apply them
/// (updateAppendonly, the appendfsync policy, the -MISCONF condition). Err: the parameter
/// and Redis's reason, for CONFIG SET's error.
pub fn config_changed(
    state: &ServerState,
    names: &[&str],
    in_exec: bool,
) -> Result<(), (&'static str, &'static str)> {
    let c = state.config.read().clone();
    for &name in names {
        match name {
            "appendonly" => {
                let on = settings::aof_enabled(&c);
                let running = state.persist.aof_state.load(Ordering::Relaxed) != aof::OFF;
                if !on && running {
                    aof::turn_off(state);
                } else if on && !running && aof::turn_on(state, in_exec).is_err() {
                    return Err(("appendonly", "Unable to turn on AOF. Check server logs."));
                }
            }
            "save" | "stop-writes-on-bgsave-error" => save::refresh_write_denial(state),
            _ => {}
        }
    }
    if let Some(a) = state.persist.aof.read().as_ref() {
        a.set_policy(crate::aof::append::Fsync::parse(&c.appendfsync));
        let yes = |n: &str| c.get(n).is_some_and(|v| v == "yes");
        a.timestamps
            .store(yes("aof-timestamp-enabled"), Ordering::Relaxed);
        a.no_fsync_on_rewrite
            .store(yes("no-appendfsync-on-rewrite"), Ordering::Relaxed);
    }
    Ok(())
}
