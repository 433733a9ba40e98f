//! The test clock and the dataset under test: the clock moved with the keys it made stale
//! expired at once, copies of the dataset kept by name, and a simulated restart. The
//! embedding API (`server/backend/`) and the `RESPLOCK.*` family call these holding the
//! server lock.

use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::state::ServerState;
use crate::keyspace::Snapshot;
use std::sync::Arc;

// ------------------------------------------------------------------------------- the clock

/// Move the clock with `change` (`how`: advance, set, reset, for the lock history), then
/// expire at once every key the move made stale (with its `expired` events), so a test sees
/// expiry when it moves time, not a cron round later. The caller holds the server lock.
pub fn move_clock(state: &ServerState, how: &str, change: impl FnOnce(&crate::clock::Clock)) {
    let history = lock_history::on(state);
    let system = crate::clock::system_us();
    let from = state.clock.at_us(system);
    change(&state.clock);
    if history {
        let to = state.clock.at_us(system);
        lock_history::clock_moved(state, system, from, to, how);
        state
            .lock_history
            .clock_moving
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    state.keyspace.expire_all(state.clock.now_ms());
    state
        .lock_history
        .clock_moving
        .store(false, std::sync::atomic::Ordering::Relaxed);
}

/// Stop the clock (RESPLOCK.CLOCK FREEZE, `Backend::freeze`).
pub fn freeze_clock(state: &ServerState) {
    state.clock.freeze();
    if lock_history::on(state) {
        let t = state.clock.now_us();
        lock_history::clock_moved(state, crate::clock::system_us(), t, t, "freeze");
    }
}

/// Let the clock run again from where it stands.
pub fn resume_clock(state: &ServerState) {
    state.clock.resume();
    if lock_history::on(state) {
        let system = crate::clock::system_us();
        let t = state.clock.at_us(system);
        lock_history::clock_moved(state, system, t, t, "resume");
    }
}

/// Name a snapshot is kept under when none is given.
pub const DEFAULT_SNAPSHOT: &str = "default";

/// Keep a copy of the whole dataset under `name`. The caller holds the server lock.
pub fn take_snapshot(state: &ServerState, name: &str) -> Arc<Snapshot> {
    let snap = Arc::new(state.keyspace.snapshot());
    state
        .snapshots
        .lock()
        .insert(name.to_string(), snap.clone());
    snap
}

/// What a simulated restart comes back with.
#[derive(Clone, Debug)]
pub enum Restore {
    /// Nothing: a restart without persistence.
    Empty,
    /// The data as it is (connections, scripts and the rest still go).
    Keep,
    /// An older copy: the writes made since are lost, as in a failover to a replica that
    /// had not received them.
    From(Arc<Snapshot>),
}

/// Simulate a restart of the server process without persistence: every connection is
/// closed, the script cache is emptied and the dataset becomes `restore`'s. The port,
/// configuration, clock and fault rules stay (they belong to the test, not the process).
/// `spare` (the caller's connection) is left for the caller to close; `label` says what
/// came back in the lock history (`empty`, `keep`, `from NAME`). The caller holds the server
/// lock.
pub fn restart(state: &ServerState, restore: &Restore, spare: Option<u64>, label: &str) {
    match restore {
        Restore::Empty => state.keyspace.restore(&Snapshot::default()),
        Restore::Keep => {}
        Restore::From(s) => state.keyspace.restore(s),
    }
    if lock_history::on(state) {
        lock_history::restarted(state, label);
    }
    // A restart as far as stop-writes-after-restart is concerned: its delay starts again.
    state.restart_delay.begin(state.clock.now_ms());
    state.scripting.flush();
    super::faults::disconnect(state, |c| Some(c.id) != spare);
}
