//! Lua scripting as Redis 7.0 does it: one Lua 5.1 interpreter per server holding EVAL's
//! script cache (by the SHA-1 of the text) and the function libraries, Redis's replies and
//! error texts both ways.
//!
//! This layer knows nothing of the command table, clients or the keyspace: a running script
//! reaches the server only through the [`Host`] its caller passes in (the command layer
//! implements it, so `redis.call` goes through the same dispatch as a network client).
//! Atomicity is the caller's business too: it runs [`Scripting::eval`] and
//! [`Scripting::fcall`] holding the server lock. Both run through `Scripting::run`: the same
//! hook (kill flag, long-run tick), memory limit, error shapes and reply conversion.
//!
//! This file holds [`Scripting`] (the interpreter slot, the script state the server reads)
//! and the script cache's and flags' lookups; `run.rs` the one run path EVAL and FCALL take
//! and the errors a failed run answers; `watch.rs` the running script as the KILL commands
//! and the watchdog thread see it.

mod convert;
mod engine;
mod ffi;
mod functions;
mod host;
mod ldb;
mod lib_fn;
mod library_admin;
mod libs;
mod raw;
mod redis_lib;
mod registration;
mod run;
pub mod script_flags;
mod watchdog;

pub use engine::sha1_hex;
pub use host::Host;
pub use ldb::{DebugConn, DebugSession, Read as DebugRead};
pub use library_admin::{RestorePolicy, ScriptMemory};

use crate::error::{self, RedisError};
use engine::{sha_str, Engine};
use host::{HookState, HostPtr, SlotRef};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use watchdog::Watch;

/// Default cap on the interpreter's memory: a hostile script gets an error, not the server.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// Server-wide script state.
pub struct Scripting {
    engine: Mutex<Option<Engine>>,
    /// The hook's state, the running script and the watchdog, shared with the watchdog.
    watch: Arc<Watch>,
    /// The running script called a write command: the KILL commands must refuse.
    wrote: AtomicBool,

    memory_limit: AtomicUsize,
    /// (libraries << 32) | functions: FUNCTION STATS reads it while a function runs.
    function_counts: AtomicU64,
    /// redisLrand48's state behind math.random: server-wide like Redis's static, so it
    /// survives SCRIPT FLUSH and is not reseeded per script.
    rand: Arc<AtomicU64>,
}

// SAFETY: set and cleared on the thread that runs the script, used only by Lua callbacks
// that run inside that call on the same thread.
unsafe impl Send for HostPtr {}

// SAFETY: the slot lives as long as the engine, which owns the interpreter holding this.
unsafe impl Send for SlotRef {}

/// Which of the four script commands runs.
#[derive(Clone, Copy)]
pub struct EvalKind {
    /// EVALSHA / EVALSHA_RO.
    pub by_sha: bool,
    /// EVAL_RO / EVALSHA_RO.
    pub readonly: bool,
}

impl Scripting {
    /// `tick` runs from the Lua count hook every few thousand instructions while a script
    /// runs: the caller's chance to keep other clients served (Redis processes events there).
    pub fn new(tick: fn()) -> Self {
        Scripting {
            engine: Mutex::new(None),
            watch: Arc::new(Watch {
                hook: HookState {
                    kill: AtomicBool::new(false),
                    tick,
                    poked: AtomicBool::new(false),
                },
                current: Mutex::new(None),
                running: AtomicBool::new(false),
                thread: OnceLock::new(),
                parked: AtomicBool::new(false),
            }),
            wrote: AtomicBool::new(false),
            memory_limit: AtomicUsize::new(DEFAULT_MEMORY_LIMIT),
            function_counts: AtomicU64::new(0),
            rand: Arc::new(AtomicU64::new(0x1234_ABCD_330E)),
        }
    }

    /// Cap the interpreter's memory (bytes); applies to the next script run.
    pub fn set_memory_limit(&self, bytes: usize) {
        self.memory_limit.store(bytes, Ordering::Relaxed);
    }

    /// How long the current script has run, if one runs.
    pub fn running_for(&self) -> Option<std::time::Duration> {
        if !self.watch.running.load(Ordering::Acquire) {
            return None;
        }
        // A script under the debugger is not busy: as Redis's blocked server, it answers no
        // one meanwhile (no BUSY), and SCRIPT KILL finds nothing to kill.
        self.watch
            .current
            .lock()
            .as_ref()
            .filter(|r| !r.debugging)
            .map(|r| crate::clock::mono_since(r.started))
    }

    /// Whether the running script (if any) is an EVAL script rather than a function.
    fn running_eval(&self) -> Option<bool> {
        self.watch.current.lock().as_ref().map(|r| r.is_eval)
    }

    /// The error other commands get while a script is busy: it names the command that can
    /// kill it (SCRIPT KILL for EVAL, FUNCTION KILL for a function).
    pub fn busy_error(&self) -> RedisError {
        match self.running_eval() {
            Some(false) => RedisError::new(error::BUSY_FUNCTION),
            _ => RedisError::new(error::BUSY),
        }
    }

    /// The running script called a write command (the KILL commands then answer UNKILLABLE).
    pub fn mark_wrote(&self) {
        self.wrote.store(true, Ordering::Release);
    }

    /// Whether the running script has called a write command yet.
    pub fn has_written(&self) -> bool {
        self.wrote.load(Ordering::Acquire)
    }

    /// The flags a script will run with, as Redis reads them before running it (its shebang,
    /// or EVAL compatibility mode): None for an unknown SHA or a bad shebang, which the run
    /// itself reports. maxmemory's check before EVAL reads them.
    pub fn flags_of(&self, by_sha: bool, body_or_sha: &[u8]) -> Option<u32> {
        let mut g = self.engine.lock();
        if by_sha {
            return g
                .as_mut()?
                .find(&engine::lower_sha(body_or_sha)?)
                .map(|(_, flags)| flags);
        }
        let sha = sha1_hex(body_or_sha);
        if let Some(sc) = g.as_ref().and_then(|e| e.scripts.get(&sha)) {
            return Some(sc.flags);
        }
        engine::shebang_flags(body_or_sha).ok().map(|(f, _)| f)
    }

    /// The flags a script command will run with, for decisions taken before it runs that
    /// must not wait for a running script (CLIENT PAUSE WRITE): an EVAL body's shebang, a
    /// cached script's or a function's flags. None when unknown or while the interpreter is
    /// busy (the caller then goes by the command's own flags).
    pub fn flags_now(&self, fcall: bool, by_sha: bool, arg: &[u8]) -> Option<u32> {
        if !fcall && !by_sha {
            return engine::shebang_flags(arg).ok().map(|(f, _)| f);
        }
        let g = self.engine.try_lock()?;
        let eng = g.as_ref()?;
        if fcall {
            return eng.libs.function(arg).map(|f| f.flags);
        }
        eng.scripts
            .get(sha_str(&engine::lower_sha(arg)?))
            .map(|s| s.flags)
    }

    /// The flags of function `name` (None: no such function), read before FCALL runs.
    pub fn function_flags(&self, name: &[u8]) -> Option<u32> {
        let g = self.engine.lock();
        g.as_ref()?.libs.function(name).map(|f| f.flags)
    }

    /// SCRIPT LOAD: compile and cache, returning the SHA.
    pub fn load(&self, body: &[u8]) -> Result<String, RedisError> {
        self.with_engine(|eng| eng.compile(body))
    }

    /// SCRIPT EXISTS for one SHA.
    pub fn exists(&self, sha: &[u8]) -> bool {
        let g = self.engine.lock();
        let key = String::from_utf8_lossy(sha).to_ascii_lowercase();
        g.as_ref().is_some_and(|e| e.scripts.contains_key(&key))
    }

    /// SCRIPT FLUSH: an empty script cache; the interpreter and the function libraries stay.
    pub fn flush(&self) {
        if let Some(eng) = self.engine.lock().as_mut() {
            if eng.flush_scripts().is_err() {
                // The interpreter could not even reset its cjson: start over with libraries.
                crate::log::warning("SCRIPT FLUSH could not reset the interpreter");
            }
        }
    }

    /// Run `f` on the engine, creating it on first use.
    fn with_engine<R>(
        &self,
        f: impl FnOnce(&mut Engine) -> Result<R, RedisError>,
    ) -> Result<R, RedisError> {
        let mut g = self.engine.lock();
        if g.is_none() {
            let e = Engine::new(self.rand.clone())
                .map_err(|e| error::err(format!("ERR Lua init failed: {e}")))?;
            *g = Some(e);
        }
        f(g.as_mut().expect("engine present"))
    }

    /// After the libraries changed: free the registry slots of dropped callbacks and publish
    /// the counts FUNCTION STATS reads.
    fn libraries_changed(&self, eng: &Engine) {
        eng.lua.expire_registry_values();
        let (libs, funcs) = eng.libs.counts();
        self.function_counts
            .store(((libs as u64) << 32) | funcs as u64, Ordering::Relaxed);
    }
}
