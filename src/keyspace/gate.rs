//! The script gate: ordinary commands hold it shared (one uncontended atomic add), a script
//! holds it exclusively, so a script is isolated from every other client even for keys it did
//! not declare. Waiting is async so a blocked client never stalls a runtime thread.

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

pub struct Gate {
    lock: RwLock<()>,
    /// True while an exclusive holder (a script) runs.
    exclusive: AtomicBool,
    released: Notify,
}

pub type GateGuard<'a> = RwLockReadGuard<'a, ()>;

pub struct ExclusiveGuard<'a> {
    gate: &'a Gate,
    _g: RwLockWriteGuard<'a, ()>,
}

impl Drop for ExclusiveGuard<'_> {
    fn drop(&mut self) {
        self.gate.exclusive.store(false, Ordering::Release);
        self.gate.released.notify_waiters();
    }
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    pub fn new() -> Self {
        Gate {
            lock: RwLock::new(()),
            exclusive: AtomicBool::new(false),
            released: Notify::new(),
        }
    }

    pub fn try_shared(&self) -> Option<GateGuard<'_>> {
        self.lock.try_read()
    }

    /// Wait (asynchronously, holding nothing) until an exclusive holder may have released the
    /// gate; callers then retry [`Gate::try_shared`]. A guard is never held across an await.
    pub async fn wait_released(&self) {
        let notified = self.released.notified();
        if self.lock.try_read().is_some() {
            return;
        }
        // A short timeout covers a release that raced with registering the waiter.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(5), notified).await;
    }

    /// Hold the gate exclusively; blocks the calling (non-async) thread.
    pub fn exclusive(&self) -> ExclusiveGuard<'_> {
        let g = self.lock.write();
        self.exclusive.store(true, Ordering::Release);
        ExclusiveGuard { gate: self, _g: g }
    }

    /// Hold the gate exclusively if nobody holds it; never blocks (a worker thread must not
    /// park behind another script).
    pub fn try_exclusive(&self) -> Option<ExclusiveGuard<'_>> {
        let g = self.lock.try_write()?;
        self.exclusive.store(true, Ordering::Release);
        Some(ExclusiveGuard { gate: self, _g: g })
    }

    pub fn is_exclusive(&self) -> bool {
        self.exclusive.load(Ordering::Acquire)
    }
}
