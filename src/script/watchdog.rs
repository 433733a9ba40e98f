//! The running script as the KILL commands, FUNCTION STATS and the watchdog see it: which
//! script runs on which Lua state, how another thread makes its hook fire or stops it, and
//! the watchdog thread that pokes a script running long. Apart from the run path because
//! this is the part other threads touch while a script runs, under its own lock.

use super::host::HookState;
use super::{ffi, Scripting};
use crate::error::{self, RedisError};
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// How often the watchdog looks at a running script: one that has run this long gets its
/// hook run at its next instruction, however long each instruction takes.
const WATCH_EVERY: Duration = Duration::from_millis(10);
/// Looks without a running script after which the watchdog parks until the next run.
const WATCH_IDLE: u32 = 100;

/// What the KILL commands and the watchdog share with the running script.
pub(super) struct Watch {
    pub(super) hook: HookState,
    /// The running script; under this lock another thread may install a hook on its state.
    pub(super) current: Mutex<Option<Running>>,
    pub(super) running: AtomicBool,
    /// The watchdog thread (started by the first run); parked while no script runs.
    pub(super) thread: OnceLock<std::thread::Thread>,
    pub(super) parked: AtomicBool,
}

/// The Lua state a script runs on, for another thread's `lua_sethook`.
#[derive(Clone, Copy)]
pub(super) struct StatePtr(pub(super) *mut mlua::ffi::lua_State);
// SAFETY: only used under `Watch::current`'s lock while the run on that state is in progress,
// for lua_sethook, which Lua documents as safe to call asynchronously (its signal handler
// does).
unsafe impl Send for StatePtr {}

/// The running script, as FUNCTION STATS and the KILL commands see it.
pub(super) struct Running {
    /// When it started ([`crate::clock::mono_ns`]).
    pub(super) started: i64,
    /// EVAL/EVALSHA (SCRIPT KILL applies) or FCALL (FUNCTION KILL applies).
    pub(super) is_eval: bool,
    /// For a function: its name and the command that called it.
    pub(super) function: Option<(Arc<str>, CallArgs)>,
    /// The state it runs on.
    pub(super) state: StatePtr,
    /// Run under the Lua debugger: its own line hook must stay, so it is never poked.
    pub(super) debugging: bool,
}

impl Watch {
    /// Make the running script's hook fire at its next instruction: its tick (the hand-off of
    /// the worker's other clients) and the kill check then come within one instruction rather
    /// than [`HOOK_EVERY`] of them.
    fn poke(&self, running: &Running) {
        if running.debugging {
            return;
        }
        // SAFETY: `state` is the running script's (see `StatePtr`); the hook and its count
        // are plain stores, and the hook reads the registry entry the run installed.
        unsafe {
            mlua::ffi::lua_sethook(
                running.state.0,
                Some(ffi::kill_hook),
                mlua::ffi::LUA_MASKCOUNT,
                1,
            );
        }
        self.poked.store(true, Ordering::Release);
    }

    /// Make the running script call the tick at its next interrupt check too, if it is inside
    /// a long C call (a backtracking `string.find`) where the count hook cannot run: the tick
    /// hands the worker's other tasks off once the script has run long, as from the hook.
    /// Without it a script stuck in one C call kept the clients whose tasks waited on its
    /// worker (a yield before writing, the LIFO slot) without replies, SCRIPT KILL among them.
    fn soft_interrupt(&self, running: &Running) {
        ffi::SOFT_TICK.get_or_init(|| self.hook.tick);
        // SAFETY: as `poke`: a plain store in the running state's global part, under
        // `current`'s lock like `stop`'s interrupt, so the two do not race.
        unsafe { ffi::lua_softinterrupt(running.state.0) };
    }

    /// Stop the running script: the flag its hook checks, an interrupt of the C call it may be
    /// in (the patched Lua's string, table and buffer loops and its lexer check it, then
    /// unwind as from an allocation failure, which every caller of those survives), and a poke
    /// so the hook runs at the next instruction.
    fn stop(&self, running: &Running) {
        self.hook.kill.store(true, Ordering::Release);
        // SAFETY: as `poke`: a plain store in the running state's global part.
        unsafe { ffi::lua_interrupt(running.state.0) };
        self.poke(running);
    }

    /// One look of the watchdog: poke a script that has run for a while or was asked to stop.
    /// Whether a script was running.
    fn look(&self) -> bool {
        let cur = self.current.lock();
        let Some(r) = cur.as_ref() else {
            return false;
        };
        if self.hook.kill.load(Ordering::Acquire) || crate::clock::mono_since(r.started) >= WATCH_EVERY {
            self.poke(r);
            self.soft_interrupt(r);
        }
        true
    }
}

impl std::ops::Deref for Watch {
    type Target = HookState;
    fn deref(&self) -> &HookState {
        &self.hook
    }
}

/// The watchdog: every [`WATCH_EVERY`] while scripts run, pokes one that has run longer, so a
/// script whose instructions are each expensive still hands its worker's clients off and
/// still sees a kill at once. It ends when its `Scripting` is dropped.
fn watchdog(watch: Weak<Watch>) {
    let mut idle = 0;
    loop {
        let Some(w) = watch.upgrade() else {
            return;
        };
        if w.look() {
            idle = 0;
        } else {
            idle += 1;
        }
        if idle >= WATCH_IDLE {
            w.parked.store(true, Ordering::SeqCst);
            let still_idle = w.current.lock().is_none();
            drop(w);
            if still_idle {
                // Woken by the next run; the timeout notices a dropped `Scripting`.
                std::thread::park_timeout(Duration::from_millis(500));
            }
            if let Some(w) = watch.upgrade() {
                w.parked.store(false, Ordering::SeqCst);
            }
        } else {
            drop(w);
            std::thread::sleep(WATCH_EVERY);
        }
    }
}

/// The arguments of the running FCALL, borrowed for the run: FUNCTION STATS copies them out
/// under [`Scripting::current`]'s lock, which the run clears before its arguments go away, so
/// an FCALL allocates nothing for it.
pub(super) struct CallArgs(pub(super) *const [Bytes]);

// SAFETY: only dereferenced under the `current` lock while the run that set it is in progress.
unsafe impl Send for CallArgs {}

impl CallArgs {
    /// A copy of the arguments (cheap: each is a reference-counted slice).
    pub(super) fn to_vec(&self) -> Vec<Bytes> {
        // SAFETY: see the type's documentation.
        unsafe { (*self.0).to_vec() }
    }
}

impl Scripting {
    /// SCRIPT KILL (`eval` true) or FUNCTION KILL once the caller has decided the script may
    /// be killed (scriptKill): refused once it has written, and each command kills only its
    /// own kind of script.
    pub fn kill(&self, eval: bool) -> Result<(), RedisError> {
        let cur = self.watch.current.lock();
        let running = cur
            .as_ref()
            .filter(|_| self.watch.running.load(Ordering::Acquire));
        let Some(r) = running else {
            return Err(RedisError::new(error::NOTBUSY));
        };
        if self.wrote.load(Ordering::Acquire) {
            return Err(RedisError::new(error::UNKILLABLE));
        }
        if eval && !r.is_eval {
            return Err(RedisError::new(error::BUSY_FUNCTION));
        }
        if !eval && r.is_eval {
            return Err(RedisError::new(error::BUSY));
        }
        self.watch.stop(r);
        Ok(())
    }

    /// Stop the running script whatever it did (SHUTDOWN NOSAVE: the server is going away).
    pub fn abort(&self) {
        let cur = self.watch.current.lock();
        if let Some(r) = cur.as_ref() {
            self.watch.stop(r);
        }
    }

    /// Start the watchdog on the first run, wake it if it parked.
    pub(super) fn wake_watchdog(&self) {
        match self.watch.thread.get() {
            Some(t) => {
                if self.watch.parked.load(Ordering::SeqCst) {
                    t.unpark();
                }
            }
            None => {
                let weak = Arc::downgrade(&self.watch);
                // Without a thread (none can be started) scripts still stop: the count hook
                // and the interrupt see the kill flag, only later.
                if let Ok(h) = std::thread::Builder::new()
                    .name("script-watchdog".into())
                    .spawn(move || watchdog(weak))
                {
                    let _ = self.watch.thread.set(h.thread().clone());
                }
            }
        }
    }
}
