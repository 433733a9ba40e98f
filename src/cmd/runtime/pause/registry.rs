//! The pause ServerState keeps (CLIENT PAUSE's kind and end, and the clients waiting); the
//! waiting itself is in `pause/mod.rs`.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;

/// What a pause holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseKind {
    /// Nothing (no pause).
    Off = 0,
    /// Commands that may write or replicate.
    Write = 1,
    /// Every command.
    All = 2,
}

/// The server's pause: its kind and end (server clock, ms), and the clients waiting.
pub struct Pause {
    /// A pause may be in force (every command reads this; the mutex only when set).
    pub(super) any: std::sync::atomic::AtomicBool,
    pub(super) current: Mutex<(PauseKind, i64)>,
    /// Writes paused while a shutdown waits for the replicas (PAUSE_DURING_SHUTDOWN): kept
    /// apart from CLIENT PAUSE's, which UNPAUSE ends without ending this one.
    during_shutdown: std::sync::atomic::AtomicBool,
    pub(super) changed: Notify,
    /// Clients waiting for the pause to end (counted in INFO's blocked_clients).
    pub waiting: AtomicUsize,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            any: std::sync::atomic::AtomicBool::new(false),
            current: Mutex::new((PauseKind::Off, 0)),
            during_shutdown: std::sync::atomic::AtomicBool::new(false),
            changed: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }
}

impl Pause {
    /// CLIENT PAUSE: a second pause keeps the more restrictive kind and the later end.
    pub fn pause(&self, kind: PauseKind, end_ms: i64) {
        let mut c = self.current.lock();
        c.0 = c.0.max(kind);
        c.1 = c.1.max(end_ms);
        self.any.store(true, Ordering::Relaxed);
        drop(c);
        self.changed.notify_waiters();
    }

    /// CLIENT UNPAUSE.
    pub fn unpause(&self) {
        *self.current.lock() = (PauseKind::Off, 0);
        self.any
            .store(self.during_shutdown.load(Ordering::Relaxed), Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// A shutdown waiting for lagging replicas pauses writes (`on`) until it ends or is
    /// cancelled.
    pub fn pause_for_shutdown(&self, on: bool) {
        let c = self.current.lock();
        self.during_shutdown.store(on, Ordering::Relaxed);
        self.any
            .store(on || c.0 != PauseKind::Off, Ordering::Relaxed);
        drop(c);
        self.changed.notify_waiters();
    }

    /// The pause in force now (an expired one is cleared), reading the time only when a pause
    /// may be in force: every command asks, and a clock read cost more than the rest of the
    /// question.
    pub fn in_force_at(&self, now_ms: impl FnOnce() -> i64) -> (PauseKind, i64) {
        if !self.any.load(Ordering::Relaxed) {
            return (PauseKind::Off, 0);
        }
        let now_ms = now_ms();
        let mut c = self.current.lock();
        let shutdown = self.during_shutdown.load(Ordering::Relaxed);
        if c.0 != PauseKind::Off && c.1 < now_ms {
            *c = (PauseKind::Off, 0);
            self.any.store(shutdown, Ordering::Relaxed);
        }
        if shutdown && c.0 < PauseKind::Write {
            return (PauseKind::Write, i64::MAX);
        }
        *c
    }
}
