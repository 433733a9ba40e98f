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
    pub(super) changed: Notify,
    /// Clients waiting for the pause to end (counted in INFO's blocked_clients).
    pub waiting: AtomicUsize,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            any: std::sync::atomic::AtomicBool::new(false),
            current: Mutex::new((PauseKind::Off, 0)),
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
        self.any.store(false, Ordering::Relaxed);
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
        if c.0 != PauseKind::Off && c.1 < now_ms {
            *c = (PauseKind::Off, 0);
            self.any.store(false, Ordering::Relaxed);
        }
        *c
    }
}
