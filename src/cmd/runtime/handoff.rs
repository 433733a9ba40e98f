//! Scripts run on the worker that received them (a thread hand-off per script costs more than
//! a typical script); one that runs long hands the worker's other tasks to another thread
//! from the Lua count hook ([`hand_off_if_long`]), or from the soft interrupt the script
//! watchdog raises when the script is inside one long C call where the hook cannot run, so
//! BUSY, SCRIPT KILL and SHUTDOWN stay served. This file is that hand-off and the marks a
//! script runner sets around a script.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a script may run on a worker before the hook hands the worker's other tasks off.
const INLINE_GRACE: Duration = Duration::from_millis(1);

thread_local! {
    /// When the script running inline on this thread started ([`crate::clock::mono_ns`];
    /// None: no inline script, or its tasks were already handed off).
    pub static INLINE_SINCE: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

thread_local! {
    /// What else must move off this thread when a script runs long: the event loop running
    /// the script holds other clients in the same task, which block_in_place cannot move
    /// (see `connection::event_loop`). Taken (run once) by [`hand_off_if_long`].
    static ON_LONG: std::cell::RefCell<Option<Arc<dyn Fn() + Send + Sync>>> =
        const { std::cell::RefCell::new(None) };
}

/// Set (or clear, `None`) what [`hand_off_if_long`] runs first on this thread.
pub fn set_on_long(hook: Option<Arc<dyn Fn() + Send + Sync>>) {
    ON_LONG.with(|h| *h.borrow_mut() = hook);
}

/// The scripting layer's tick, called from the Lua count hook. tokio keeps some runnable
/// tasks where no other worker can take them (the LIFO slot, the tasks deferred by a yield),
/// and an I/O event is only noticed by a worker parked on the driver: a script that keeps
/// this worker busy could strand other clients, SCRIPT KILL among them. Once a script has run
/// INLINE_GRACE, block_in_place wakes the deferred tasks, makes the LIFO task stealable and
/// offers this worker's core to a fresh thread. That thread may start too late under load
/// (block_in_place then takes the core back), so inside it a probe task is spawned from
/// outside the runtime and awaited: once any worker has run it, the runtime is being driven
/// by a thread other than this one, which finishes the script. If it never runs, the next
/// tick tries again.
pub fn hand_off_if_long() {
    let long = INLINE_SINCE.with(|s| match s.get() {
        Some(t) if crate::clock::mono_since(t) >= INLINE_GRACE => {
            s.set(None);
            true
        }
        _ => false,
    });
    if !long {
        return;
    }
    if let Some(hook) = ON_LONG.with(|h| h.borrow_mut().take()) {
        hook();
    }
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probe = ran.clone();
    let driven = tokio::task::block_in_place(|| {
        handle.spawn(async move { probe.store(true, Ordering::Release) });
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(100) {
            if ran.load(Ordering::Acquire) {
                return true;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
        false
    });
    if !driven {
        INLINE_SINCE.with(|s| s.set(Some(crate::clock::mono_ns())));
    }
}

/// Scripts run on the calling worker on a multi-threaded runtime (even with one worker:
/// block_in_place then hands that worker's queue to a fresh thread); on a current-thread
/// runtime, where block_in_place is not available, they move to a blocking thread.
pub fn runs_inline() -> bool {
    matches!(
        tokio::runtime::Handle::current().runtime_flavor(),
        tokio::runtime::RuntimeFlavor::MultiThread
    )
}

/// Mark the script starting on this thread now as running inline (the hook may hand off
/// after INLINE_GRACE), or clear the mark (`None`) when it ends.
pub fn set_inline_since(since: Option<i64>) {
    INLINE_SINCE.with(|s| s.set(since));
}

/// Run `f`, which blocks (on the disk, on another server's socket), letting the
/// runtime move this worker's other tasks meanwhile when it can (block_in_place on a
/// multi-threaded runtime; directly otherwise, and off any runtime).
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}
