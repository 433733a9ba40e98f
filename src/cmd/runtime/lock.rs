//! The server lock. Every command, script, transaction, expiry cycle and hand-off to a
//! blocked client runs holding it, so the keyspace and the registries beside it (watched
//! keys, blocked clients, subscriptions' delivery order) change one command at a time, exactly
//! as in single-threaded Redis. Reading and writing sockets run outside it, on every worker at
//! once; the lock is held for the command itself (a few hundred nanoseconds for SET, a few
//! microseconds for a lock script), or for a run of a client's pipelined requests that
//! cannot wait (`dispatch::execute::Batch`), as Redis serves a client's query buffer whole.
//! MIGRATE alone holds it while it waits on its target, as Redis's blocks the whole server, at
//! most its timeout per step (`runtime/migrate.rs`).
//!
//! Waiting: a holder is almost always short, so a contender first blocks its thread for at
//! most `SHORT_WAIT` (a futex wait, which lets a preempted holder run on the same CPU).
//! Only a long holder (a script or transaction running for longer than that) makes
//! contenders wait asynchronously, so they can answer BUSY past busy-reply-threshold and a
//! worker thread never sleeps behind a script.

use crate::cmd::runtime::state::ServerState;
use parking_lot::{Mutex, MutexGuard};
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a contender blocks its thread before it waits asynchronously.
const SHORT_WAIT: Duration = Duration::from_micros(200);

/// See the module documentation.
#[derive(Default)]
pub struct ServerLock {
    mutex: Mutex<()>,
    /// Tasks waiting asynchronously for a release: a release notifies only if there are any,
    /// so ordinary commands pay one atomic load.
    async_waiters: AtomicUsize,
    released: Notify,
}

/// Proof that the caller holds the server lock; releasing it wakes asynchronous waiters.
/// Never leaves the thread that took it (its guard is not `Send`), so the thread knows
/// it holds the lock (see [`ServerLock::held_here`]).
pub struct Held<'a> {
    guard: Option<MutexGuard<'a, ()>>,
    lock: &'a ServerLock,
    /// The lock this thread held before (another server's, in a process running several).
    outer: *const ServerLock,
}

thread_local! {
    /// The server lock this thread holds now (null: none).
    static HELD_HERE: std::cell::Cell<*const ServerLock> =
        const { std::cell::Cell::new(std::ptr::null()) };
}

impl<'a> Held<'a> {
    fn new(guard: MutexGuard<'a, ()>, lock: &'a ServerLock) -> Held<'a> {
        let outer = HELD_HERE.replace(lock);
        Held {
            guard: Some(guard),
            lock,
            outer,
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        HELD_HERE.set(self.outer);
        drop(self.guard.take());
        // Pairs with the fence in `released`: either this load sees the waiter, or the
        // waiter's check sees the lock free.
        fence(Ordering::SeqCst);
        if self.lock.async_waiters.load(Ordering::Relaxed) > 0 {
            self.lock.released.notify_waiters();
        }
    }
}

impl ServerLock {
    /// A free lock.
    pub fn new() -> Self {
        Self::default()
    }

    /// Take the lock if it is free (the common case: one atomic operation).
    pub fn try_lock(&self) -> Option<Held<'_>> {
        self.mutex.try_lock().map(|g| Held::new(g, self))
    }

    /// Take the lock, blocking this thread at most `SHORT_WAIT` for a short holder.
    pub fn lock_briefly(&self) -> Option<Held<'_>> {
        self.mutex.try_lock_for(SHORT_WAIT).map(|g| Held::new(g, self))
    }

    /// Take the lock, blocking this thread as long as it takes (for blocking threads only:
    /// never on an async worker).
    pub fn lock_blocking(&self) -> Held<'_> {
        Held::new(self.mutex.lock(), self)
    }

    /// Whether this thread holds the lock now: what is only written under it may be written
    /// with plain loads and stores (no other thread writes it meanwhile).
    #[inline]
    pub fn held_here(&self) -> bool {
        std::ptr::eq(HELD_HERE.get(), self)
    }

    /// Whether someone holds the lock now.
    pub fn is_locked(&self) -> bool {
        self.mutex.is_locked()
    }

    /// Resolve once the lock may have been released (callers then try again). Holds nothing
    /// while it waits.
    pub async fn released(&self) {
        let notified = self.released.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        self.async_waiters.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if self.mutex.is_locked() {
            // The timeout is a second line of defence, not the mechanism.
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
        self.async_waiters.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Add `n` to a statistic: with a plain load and store when `exclusive` (the caller holds the
/// server lock, and only holders write this counter: a locked add per command cost a few
/// percent of a pipelined GET), else with an atomic add (a counter of its own, which readers
/// add to the other). Shared by the command statistics and the server's counters.
#[inline]
pub fn add_to(counter: &AtomicU64, n: u64, exclusive: bool) {
    if exclusive {
        counter.store(counter.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    } else {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// A script has run past busy-reply-threshold: other clients get BUSY.
pub fn script_busy(state: &ServerState) -> bool {
    let threshold = state.config.read().busy_reply_threshold_ms;
    threshold > 0
        && state
            .scripting
            .running_for()
            .is_some_and(|ran| ran.as_millis() as u64 >= threshold)
}

/// Run `take` holding the server lock, waiting while a script holds it, unless the script is
/// past busy-reply-threshold (then Redis serves events meanwhile, so `take` runs at once).
/// The connection takes its queued pushes this way: Redis writes what a script published when
/// the script ends. None if `stop` resolved first.
pub async fn when_no_script<R>(
    state: &ServerState,
    stop: impl std::future::Future<Output = ()>,
    mut take: impl FnMut() -> R,
) -> Option<R> {
    tokio::pin!(stop);
    loop {
        if let Some(held) = state.lock.lock_briefly() {
            let r = take();
            drop(held);
            return Some(r);
        }
        if script_busy(state) {
            return Some(take());
        }
        tokio::select! {
            _ = &mut stop => return None,
            _ = state.lock.released() => {}
        }
    }
}
