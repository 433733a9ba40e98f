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

/// Who paused (Redis's pause_purpose): each keeps its own kind and end, and what is in
/// force is the most restrictive kind among them with that kind's latest end. CLIENT
/// UNPAUSE ends only CLIENT PAUSE's, so a FAILOVER's pause outlives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PausePurpose {
    /// CLIENT PAUSE (and the in-process cluster's manual failover, which pauses as one).
    Client = 0,
    /// FAILOVER, from its start until it ends or is aborted.
    Failover = 1,
    /// A shutdown waiting for lagging replicas (PAUSE_DURING_SHUTDOWN): writes, until it ends
    /// or is cancelled.
    Shutdown = 2,
}

const PURPOSES: usize = 3;

/// Each purpose's (kind, end), then the aggregate in force.
type Slots = ([(PauseKind, i64); PURPOSES], (PauseKind, i64));

/// The server's pause: each purpose's kind and end (server clock, ms), what is in force, and
/// the clients waiting.
pub struct Pause {
    /// A pause may be in force (every command reads this; the mutex only when set).
    pub(super) any: std::sync::atomic::AtomicBool,
    /// Per purpose, then the aggregate in force.
    pub(super) current: Mutex<Slots>,
    pub(super) changed: Notify,
    /// Clients waiting for the pause to end (counted in INFO's blocked_clients).
    pub waiting: AtomicUsize,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            any: std::sync::atomic::AtomicBool::new(false),
            current: Mutex::new(([(PauseKind::Off, 0); PURPOSES], (PauseKind::Off, 0))),
            changed: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }
}

/// updateClientPauseTypeAndEndTime: drop the purposes whose end passed (`now_ms` None keeps
/// them), then the most restrictive kind and its latest end.
fn aggregate(per: &mut [(PauseKind, i64); PURPOSES], now_ms: Option<i64>) -> (PauseKind, i64) {
    let mut kind = PauseKind::Off;
    for p in per.iter_mut() {
        if p.0 != PauseKind::Off && now_ms.is_some_and(|now| p.1 < now) {
            *p = (PauseKind::Off, 0);
        }
        kind = kind.max(p.0);
    }
    let end = per
        .iter()
        .filter(|p| kind != PauseKind::Off && p.0 == kind)
        .map(|p| p.1)
        .max()
        .unwrap_or(0);
    (kind, end)
}

impl Pause {
    /// CLIENT PAUSE: a second pause keeps the more restrictive kind and the later end.
    pub fn pause(&self, kind: PauseKind, end_ms: i64) {
        self.pause_for(PausePurpose::Client, kind, end_ms);
    }

    /// pauseClients(purpose, end, kind): that purpose's pause, merged with what it had.
    pub fn pause_for(&self, purpose: PausePurpose, kind: PauseKind, end_ms: i64) {
        let mut c = self.current.lock();
        let p = &mut c.0[purpose as usize];
        if p.0 == PauseKind::Off {
            *p = (kind, end_ms);
        } else {
            *p = (p.0.max(kind), p.1.max(end_ms));
        }
        c.1 = aggregate(&mut c.0, None);
        self.any.store(c.1 .0 != PauseKind::Off, Ordering::Relaxed);
        drop(c);
        self.changed.notify_waiters();
    }

    /// CLIENT UNPAUSE.
    pub fn unpause(&self) {
        self.unpause_for(PausePurpose::Client);
    }

    /// unpauseClients(purpose): that purpose's pause ends; another's may remain.
    pub fn unpause_for(&self, purpose: PausePurpose) {
        let mut c = self.current.lock();
        c.0[purpose as usize] = (PauseKind::Off, 0);
        c.1 = aggregate(&mut c.0, None);
        self.any.store(c.1 .0 != PauseKind::Off, Ordering::Relaxed);
        drop(c);
        self.changed.notify_waiters();
    }

    /// A shutdown waiting for lagging replicas pauses writes (`on`) until it ends or is
    /// cancelled; CLIENT UNPAUSE leaves this pause alone.
    pub fn pause_for_shutdown(&self, on: bool) {
        if on {
            self.pause_for(PausePurpose::Shutdown, PauseKind::Write, i64::MAX);
        } else {
            self.unpause_for(PausePurpose::Shutdown);
        }
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
        if c.1 .0 != PauseKind::Off && c.1 .1 < now_ms {
            c.1 = aggregate(&mut c.0, Some(now_ms));
            self.any.store(c.1 .0 != PauseKind::Off, Ordering::Relaxed);
        }
        c.1
    }
}
