//! What ServerState keeps of a shutdown in progress (Redis's shutdown_asap, shutdown_flags,
//! shutdown_mstime and last_sig_received); what is done with it is in `shutdown/mod.rs`.

use parking_lot::Mutex;

/// SHUTDOWN's SAVE (Redis's SHUTDOWN_* bits, as shutdown-on-sigint/-sigterm hold them).
pub const SAVE: u32 = 1;
/// SHUTDOWN's NOSAVE.
pub const NOSAVE: u32 = 2;
/// SHUTDOWN's NOW: do not wait for lagging replicas.
pub const NOW: u32 = 4;
/// SHUTDOWN's FORCE: exit even if the final save or the AOF fails.
pub const FORCE: u32 = 8;

/// The signal that asked for the shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT.
    Int,
    /// SIGTERM.
    Term,
}

/// The state of a shutdown: asked for by a signal and not started yet, or started and
/// waiting (until `deadline_ms`) for the replicas to catch up.
#[derive(Default)]
pub struct Stopping {
    pub(super) inner: Mutex<Pending>,
}

#[derive(Default)]
pub(super) struct Pending {
    /// A signal asked for a shutdown the cron has not started yet (shutdown_asap).
    pub(super) asap: bool,
    /// Which signal.
    pub(super) signal: Option<Signal>,
    /// The SHUTDOWN_* flags of the shutdown started.
    pub(super) flags: u32,
    /// Server clock (ms) by which the shutdown goes on without the lagging replicas;
    /// 0 when none is started (shutdown_mstime).
    pub(super) deadline_ms: i64,
}

impl Stopping {
    /// Milliseconds left before a started shutdown stops waiting for replicas (INFO's
    /// shutdown_in_milliseconds); None when none is started.
    pub fn remaining_ms(&self, now_ms: i64) -> Option<i64> {
        let p = self.inner.lock();
        (p.deadline_ms != 0).then_some(p.deadline_ms - now_ms)
    }
}
