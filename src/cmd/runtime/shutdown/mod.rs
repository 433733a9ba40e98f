//! Stopping the server as redis-server 7.0 does (prepareForShutdown, finishShutdown,
//! abortShutdown and the signal handler): SHUTDOWN or a signal starts it; a master whose
//! replicas lag behind pauses writes and waits for them, up to `shutdown-timeout` seconds
//! (the cron checks every tick), unless NOW; then the AOF is synced and the final RDB
//! written (`persist::prepare_shutdown`), and the server stops. SHUTDOWN ABORT, or a failed
//! final save, cancels a shutdown in progress: the clients blocked in SHUTDOWN get
//! "Errors trying to SHUTDOWN. Check logs.". A second SIGINT exits at once.

pub mod registry;

pub use registry::{Signal, Stopping, FORCE, NOSAVE, NOW, SAVE};

use crate::cmd::runtime::state::ServerState;
use std::sync::atomic::Ordering;

/// How a shutdown attempt went.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The server stops now (its shutdown token is cancelled).
    Exit,
    /// Waiting for lagging replicas (or a shutdown was already waiting): SHUTDOWN's client
    /// stays blocked until it ends.
    Waiting,
    /// The final save failed: the server goes on; the reason was logged.
    Failed,
}

/// prepareForShutdown with Redis's SHUTDOWN_* `flags`. The caller holds the server lock.
pub fn prepare(state: &ServerState, mut flags: u32) -> Outcome {
    let now = state.clock.now_ms();
    {
        let mut p = state.stopping.inner.lock();
        if p.deadline_ms != 0 {
            return Outcome::Waiting;
        }
        // A half-loaded dataset is never saved over the file it came from.
        if state.persist.loading.load(Ordering::Acquire) {
            flags = (flags & !SAVE) | NOSAVE;
        }
        p.flags = flags;
    }
    crate::log::warning("User requested shutdown...");
    let timeout_s = state
        .config
        .read()
        .get("shutdown-timeout")
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(10);
    if flags & NOW == 0 && timeout_s != 0 && !replicas_in_sync(state) {
        state.stopping.inner.lock().deadline_ms = now + timeout_s * 1000;
        crate::cmd::runtime::replication::request_acks(state);
        state.pause.pause_for_shutdown(true);
        crate::log::notice("Waiting for replicas before shutting down.");
        return Outcome::Waiting;
    }
    finish(state)
}

/// isReadyToShutdown: every replica acknowledged the master's whole stream.
fn replicas_in_sync(state: &ServerState) -> bool {
    let offset = state.replication.offset();
    state
        .replication
        .replicas
        .lock()
        .iter()
        .all(|r| r.ack_offset.load(Ordering::Relaxed) == offset)
}

/// finishShutdown: the lagging replicas logged, persistence's part done, and the server
/// stopped; on a failed final save the shutdown is cancelled instead.
pub fn finish(state: &ServerState) -> Outcome {
    use crate::cmd::runtime::replication::registry::LinkState;
    let flags = state.stopping.inner.lock().flags;
    let offset = state.replication.offset();
    let now_s = state.clock.now_ms() / 1000;
    let replicas = state.replication.replicas.lock().clone();
    let mut lagging = 0;
    for r in &replicas {
        let acked = r.ack_offset.load(Ordering::Relaxed);
        if acked == offset {
            continue;
        }
        lagging += 1;
        let lag = if r.state() == LinkState::Online {
            now_s - r.ack_time_ms.load(Ordering::Relaxed) / 1000
        } else {
            0
        };
        let name = if r.port > 0 {
            format!("{}:{}", r.ip, r.port)
        } else {
            r.info.addr.clone()
        };
        crate::log::warning(&format!(
            "Lagging replica {name} reported offset {} behind master, lag={lag}, state={}.",
            offset - acked,
            r.state().name()
        ));
    }
    if !replicas.is_empty() {
        crate::log::notice(&format!(
            "{} of {} replicas are in sync when shutting down.",
            replicas.len() - lagging,
            replicas.len()
        ));
    }
    let (save, nosave, force) = (flags & SAVE != 0, flags & NOSAVE != 0, flags & FORCE != 0);
    if crate::cmd::runtime::persist::prepare_shutdown(state, save, nosave, force).is_err() {
        cancel(state);
        return Outcome::Failed;
    }
    // The port refuses connections before any client sees its connection close, as after
    // Redis's exit: a client that reconnects at once gets "connection refused".
    if let Some(l) = state.listeners.get() {
        l.close_all();
    }
    state.shutdown.cancel();
    Outcome::Exit
}

/// cancelShutdown: nothing pending any more, the SHUTDOWN clients answered with the error,
/// writes resumed.
fn cancel(state: &ServerState) {
    *state.stopping.inner.lock() = registry::Pending::default();
    crate::cmd::runtime::blocking::fail_shutdown_waiters(state);
    state.pause.pause_for_shutdown(false);
}

/// SHUTDOWN ABORT (abortShutdown): false when no shutdown was started or asked for.
pub fn abort(state: &ServerState) -> bool {
    let mut p = state.stopping.inner.lock();
    if p.deadline_ms != 0 {
        drop(p);
        cancel(state);
    } else if p.asap {
        p.asap = false;
    } else {
        return false;
    }
    crate::log::notice("Shutdown manually aborted.");
    true
}

/// serverCron's part, every tick (the caller holds the server lock): a shutdown a signal
/// asked for starts, with shutdown-on-sigint/-sigterm's flags; one waiting for replicas
/// finishes once they caught up or its time is up.
pub fn cron(state: &ServerState) {
    let (asap, deadline, signal) = {
        let p = state.stopping.inner.lock();
        (p.asap, p.deadline_ms, p.signal)
    };
    if asap && deadline == 0 {
        let flags = match signal {
            Some(Signal::Int) => state.config.read().shutdown_on_signal(true),
            Some(Signal::Term) => state.config.read().shutdown_on_signal(false),
            None => 0,
        };
        prepare(state, flags);
    } else if deadline != 0 && (state.clock.now_ms() >= deadline || replicas_in_sync(state)) {
        finish(state);
    }
}

/// Whether the cron has a shutdown to act on (read without the server lock).
pub fn pending(state: &ServerState) -> bool {
    let p = state.stopping.inner.lock();
    p.asap || p.deadline_ms != 0
}

/// The signal handler (sigShutdownHandler): a second SIGINT while a shutdown is asked for
/// exits at once with status 1, removing the final save's temp file; otherwise the shutdown
/// is scheduled for the cron, with Redis's log line.
pub fn signal(state: &ServerState, sig: Signal) {
    let mut p = state.stopping.inner.lock();
    if p.asap && sig == Signal::Int {
        crate::log::from_signal_handler("You insist... exiting now.");
        crate::cmd::runtime::persist::save::remove_temp_files(state);
        std::process::exit(1);
    }
    let msg = if state.persist.loading.load(Ordering::Acquire) {
        "Received shutdown signal during loading, scheduling shutdown."
    } else if sig == Signal::Int {
        "Received SIGINT scheduling shutdown..."
    } else {
        "Received SIGTERM scheduling shutdown..."
    };
    crate::log::from_signal_handler(msg);
    p.asap = true;
    p.signal = Some(sig);
}
