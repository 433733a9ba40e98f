//! What a connection task waits on besides its socket, without a lock on the request path.
//!
//! A connection used to wait on three things besides its socket: CLIENT KILL (a
//! `CancellationToken`), server shutdown (another, shared by every client) and its push queue
//! (a `Notify`). Each of those takes a mutex to register a waiter, again to poll it and again
//! to drop it, so every request paid about nine lock operations, one of them on a mutex all
//! clients share; and `CancellationToken::is_cancelled` locks too. Here one [`Doorbell`] per
//! connection is rung by all three (a lock-free flag and waker slot: it has one waiter), and
//! [`Cancel`] answers `is_cancelled` from an atomic flag.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// Wakes the one task that waits on it. A ring with nobody waiting is kept until the next
/// wait, which then returns at once (as `Notify::notify_one` keeps a permit).
#[derive(Default)]
pub struct Doorbell {
    rung: AtomicBool,
    waker: AtomicWaker,
}

impl Doorbell {
    /// Ring: the waiter wakes (or its next wait returns at once).
    pub fn ring(&self) {
        self.rung.store(true, Ordering::Release);
        self.waker.wake();
    }

    /// Resolves once the bell has rung since this last resolved. One waiter at a time.
    pub fn rung(&self) -> Rung<'_> {
        Rung(self)
    }

    /// Have `waker` woken by the next ring (a waiter that is not a task: the event loop's
    /// clients, see `connection::event_loop`). A ring takes the waker, so the caller watches
    /// again after each wake, then looks at what it watches for.
    pub fn watch(&self, waker: &std::task::Waker) {
        self.waker.register(waker);
    }

    fn take(&self) -> bool {
        // A load first: the common poll finds nothing and writes nothing.
        self.rung.load(Ordering::Acquire) && self.rung.swap(false, Ordering::AcqRel)
    }
}

/// The future of [`Doorbell::rung`].
pub struct Rung<'a>(&'a Doorbell);

impl Future for Rung<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.take() {
            return Poll::Ready(());
        }
        self.0.waker.register(cx.waker());
        // A ring between the first check and the registration woke nobody: check again.
        if self.0.take() {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

/// A cancellation (CLIENT KILL, shutdown) that rings a doorbell, or runs a hook, when it
/// fires, and answers [`Cancel::is_cancelled`] without a lock. Clones share it.
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    token: CancellationToken,
    bell: Doorbell,
    /// Run once, by the first [`Cancel::cancel`] (shutdown rings every client's bell).
    hook: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Cancel {
    /// Not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancel: waiters of [`Cancel::cancelled`] wake, the doorbell rings, the hook runs.
    /// True for the call that cancelled, false if it already was.
    pub fn cancel(&self) -> bool {
        if self.0.cancelled.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.0.token.cancel();
        self.0.bell.ring();
        if let Some(hook) = self.0.hook.get() {
            hook();
        }
        true
    }

    /// Whether [`Cancel::cancel`] was called (one atomic load).
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Acquire)
    }

    /// Resolves once cancelled (for waits off the request path: pauses, blocked writes).
    pub fn cancelled(&self) -> WaitForCancellationFuture<'_> {
        self.0.token.cancelled()
    }

    /// The doorbell [`Cancel::cancel`] rings; others (a push queue) may ring it too.
    pub fn bell(&self) -> &Doorbell {
        &self.0.bell
    }

    /// Run `hook` when cancelled (at once if already). Set once; later calls are ignored.
    pub fn on_cancel(&self, hook: Box<dyn Fn() + Send + Sync>) {
        if self.0.hook.set(hook).is_ok() && self.is_cancelled() {
            if let Some(hook) = self.0.hook.get() {
                hook();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[tokio::test]
    async fn a_ring_before_the_wait_is_kept_for_it() {
        let bell = Doorbell::default();
        bell.ring();
        tokio::time::timeout(Duration::from_secs(5), bell.rung())
            .await
            .expect("kept ring");
        // Consumed: the next wait blocks.
        assert!(tokio::time::timeout(Duration::from_millis(20), bell.rung())
            .await
            .is_err());
    }

    #[tokio::test]
    async fn a_ring_from_another_thread_wakes_the_waiter() {
        let c = Cancel::new();
        let c2 = c.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            c2.cancel();
        });
        tokio::time::timeout(Duration::from_secs(5), c.bell().rung())
            .await
            .expect("woken by cancel");
        assert!(c.is_cancelled());
        tokio::time::timeout(Duration::from_secs(5), c.cancelled())
            .await
            .expect("token cancelled too");
        t.join().unwrap();
    }

    #[test]
    fn the_hook_runs_once_also_when_set_after_cancelling() {
        let runs = Arc::new(AtomicUsize::new(0));
        let c = Cancel::new();
        let r = runs.clone();
        c.on_cancel(Box::new(move || {
            r.fetch_add(1, Ordering::Relaxed);
        }));
        c.cancel();
        c.cancel();
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        let late = Cancel::new();
        late.cancel();
        let r = runs.clone();
        late.on_cancel(Box::new(move || {
            r.fetch_add(1, Ordering::Relaxed);
        }));
        assert_eq!(runs.load(Ordering::Relaxed), 2);
    }
}
