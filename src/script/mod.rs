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

mod convert;
mod engine;
mod ffi;
mod function_cmds;
mod functions;
mod host;
mod lib_fn;
mod libs;
mod raw;
mod redis_lib;
mod registration;
pub mod script_flags;

pub use engine::sha1_hex;
pub use function_cmds::{RestorePolicy, ScriptMemory};
pub use host::Host;

use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use engine::{sha_str, Engine};
use host::{HookState, HostPtr, SlotRef, HOOK_EVERY};
use mlua::{Lua, Table, Value};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How often the watchdog looks at a running script: one that has run this long gets its
/// hook run at its next instruction, however long each instruction takes.
const WATCH_EVERY: Duration = Duration::from_millis(10);
/// Looks without a running script after which the watchdog parks until the next run.
const WATCH_IDLE: u32 = 100;

/// Growth of the interpreter's memory since its last full collection that triggers one.
const BIG_GARBAGE: usize = 4 << 20;

/// Default cap on the interpreter's memory: a hostile script gets an error, not the server.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// What the KILL commands and the watchdog share with the running script.
struct Watch {
    hook: HookState,
    /// The running script; under this lock another thread may install a hook on its state.
    current: Mutex<Option<Running>>,
    running: AtomicBool,
    /// The watchdog thread (started by the first run); parked while no script runs.
    thread: OnceLock<std::thread::Thread>,
    parked: AtomicBool,
}

/// The Lua state a script runs on, for another thread's `lua_sethook`.
#[derive(Clone, Copy)]
struct StatePtr(*mut mlua::ffi::lua_State);
// SAFETY: only used under `Watch::current`'s lock while the run on that state is in progress,
// for lua_sethook, which Lua documents as safe to call asynchronously (its signal handler
// does).
unsafe impl Send for StatePtr {}

/// The running script, as FUNCTION STATS and the KILL commands see it.
struct Running {
    started: Instant,
    /// EVAL/EVALSHA (SCRIPT KILL applies) or FCALL (FUNCTION KILL applies).
    is_eval: bool,
    /// For a function: its name and the command that called it.
    function: Option<(Arc<str>, CallArgs)>,
    /// The state it runs on.
    state: StatePtr,
}

impl Watch {
    /// Make the running script's hook fire at its next instruction: its tick (the hand-off of
    /// the worker's other clients) and the kill check then come within one instruction rather
    /// than [`HOOK_EVERY`] of them.
    fn poke(&self, running: &Running) {
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
        if self.hook.kill.load(Ordering::Acquire) || r.started.elapsed() >= WATCH_EVERY {
            self.poke(r);
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
struct CallArgs(*const [Bytes]);

// SAFETY: only dereferenced under the `current` lock while the run that set it is in progress.
unsafe impl Send for CallArgs {}

impl CallArgs {
    /// A copy of the arguments (cheap: each is a reference-counted slice).
    fn to_vec(&self) -> Vec<Bytes> {
        // SAFETY: see the type's documentation.
        unsafe { (*self.0).to_vec() }
    }
}

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

/// One run of a script or function, for [`Scripting::run`].
struct Job<'a> {
    /// Registry reference of the compiled script or the function's callback.
    func: std::os::raw::c_int,
    /// The script's SHA or the function's name, as error messages call it.
    name: &'a str,
    keys: &'a [Bytes],
    argv: &'a [Bytes],
    is_eval: bool,
    /// The function's name, for FUNCTION STATS (None for EVAL).
    function: Option<Arc<str>>,
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
        self.watch
            .current
            .lock()
            .as_ref()
            .map(|r| r.started.elapsed())
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
        let g = self.engine.lock();
        if by_sha {
            return g
                .as_ref()?
                .scripts
                .get(sha_str(&engine::lower_sha(body_or_sha)?))
                .map(|s| s.flags);
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
    fn wake_watchdog(&self) {
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

    /// evalGenericCommand: run EVAL/EVALSHA(_RO) `args` (the command name first). The caller
    /// holds the server lock for the whole call; `host` serves the script's `redis.call`s.
    pub fn eval(&self, host: &mut dyn Host, kind: EvalKind, args: &[Bytes]) -> Reply {
        let r = self.with_engine(|eng| {
            // evalShaCommand refuses a SHA of the wrong length before anything else.
            let given = engine::lower_sha(&args[1]);
            if kind.by_sha && given.is_none() {
                return Err(RedisError::new(error::NOSCRIPT));
            }
            let numkeys = numkeys(args, error::NOT_INTEGER)?;
            let sha_buf = if let (true, Some(given)) = (kind.by_sha, given) {
                given
            } else {
                eng.compile_buf(&args[1])?
            };
            let sha = sha_str(&sha_buf);
            let (func, sflags) = match eng.scripts.get(sha) {
                Some(sc) if !sha.is_empty() => (sc.func.id(), sc.flags),
                _ => return Err(RedisError::new(error::NOSCRIPT)),
            };
            let compat = sflags & script_flags::EVAL_COMPAT != 0;
            if !compat {
                host.prepare(sflags)?;
            }
            if !compat && sflags & script_flags::NO_WRITES == 0 && kind.readonly {
                return Err(RedisError::new(error::SCRIPT_RO_WITH_WRITE_FLAG));
            }
            host.set_readonly(kind.readonly || (!compat && sflags & script_flags::NO_WRITES != 0));
            let job = Job {
                func,
                name: sha,
                keys: &args[3..3 + numkeys],
                argv: &args[3 + numkeys..],
                is_eval: true,
                function: None,
            };
            Ok(self.run(eng, host, job, args))
        });
        r.unwrap_or_else(Reply::error)
    }

    /// fcallCommandGeneric: run FCALL/FCALL_RO `args` (the command name first), under the same
    /// conditions as [`Scripting::eval`].
    pub fn fcall(&self, host: &mut dyn Host, readonly: bool, args: &[Bytes]) -> Reply {
        let r = self.with_engine(|eng| {
            let Some(f) = eng.libs.function(&args[1]).cloned() else {
                return Err(RedisError::new(error::FUNCTION_NOT_FOUND));
            };
            let numkeys = numkeys(args, error::FUNCTION_BAD_NUMKEYS)?;
            host.prepare(f.flags)?;
            if f.flags & script_flags::NO_WRITES == 0 && readonly {
                return Err(RedisError::new(error::SCRIPT_RO_WITH_WRITE_FLAG));
            }
            host.set_readonly(readonly || f.flags & script_flags::NO_WRITES != 0);
            let job = Job {
                func: f.callback.id(),
                name: &f.name,
                keys: &args[3..3 + numkeys],
                argv: &args[3 + numkeys..],
                is_eval: false,
                function: Some(f.name.clone()),
            };
            Ok(self.run(eng, host, job, args))
        });
        r.unwrap_or_else(Reply::error)
    }

    /// luaCallFunction: run one script or function to its reply, with the hook, the memory
    /// limit and the running state FUNCTION STATS and the KILL commands read.
    fn run(&self, eng: &mut Engine, host: &mut dyn Host, job: Job, args: &[Bytes]) -> Reply {
        let limit = self.memory_limit.load(Ordering::Relaxed);
        if limit != eng.limit_set {
            let _ = eng.lua.set_memory_limit(limit);
            eng.limit_set = limit;
        }
        // SAFETY (lifetime erasure): the slot is cleared below before `host` goes out of
        // scope, and Lua callbacks only run inside the call below.
        let host_ptr: *mut (dyn Host + '_) = host;
        let host_ptr: *mut (dyn Host + 'static) = unsafe { std::mem::transmute(host_ptr) };
        eng.slot.0.set(Some(HostPtr(host_ptr)));
        self.wrote.store(false, Ordering::Release);
        let state = eng.main;
        *self.watch.current.lock() = Some(Running {
            started: Instant::now(),
            is_eval: job.is_eval,
            function: job
                .function
                .map(|name| (name, CallArgs(args as *const [Bytes]))),
            state: StatePtr(state),
        });
        self.watch.running.store(true, Ordering::Release);
        self.wake_watchdog();
        let hook: *const HookState = &self.watch.hook;
        let params = raw::RunParams {
            runner: if job.is_eval {
                &eng.eval_runner
            } else {
                &eng.function_runner
            },
            func: job.func,
            keys: job.keys,
            argv: job.argv,
            hook,
            hook_every: HOOK_EVERY,
        };
        let mut scalar = raw::Scalar::Other;
        let lua = &eng.lua;
        // SAFETY: the references in `params` are live registry entries, `hook` outlives the
        // call, and `raw::run` keeps the rule of its module.
        let result =
            unsafe { lua.exec_raw::<(bool, Value)>((), |l| raw::run(l, &params, &mut scalar)) };
        if result.is_err() {
            // The run failed before its script did (out of memory building KEYS): the hook
            // may still be installed.
            set_hook(lua, hook, 0);
        }
        self.watch.running.store(false, Ordering::Release);
        *self.watch.current.lock() = None;
        // No other thread touches the state from here on (the KILL commands and the watchdog
        // act under `current`'s lock, and only while it holds a run): a kill that came after
        // the script ended is forgotten, and a hook installed after the run's own removal goes.
        let fired_at = if self.watch.kill.load(Ordering::Acquire) {
            self.watch.kill.store(false, Ordering::Relaxed);
            // SAFETY: reads and plain stores in the state's global part, owned by this thread.
            unsafe {
                let at = interrupted_at(state);
                ffi::lua_clearinterrupt(state);
                at
            }
        } else {
            None
        };
        if self.watch.poked.load(Ordering::Acquire) {
            self.watch.poked.store(false, Ordering::Relaxed);
            // SAFETY: lua_sethook on the engine's state, which this thread owns again.
            unsafe { mlua::ffi::lua_sethook(state, None, 0, 0) };
        }
        eng.slot.0.set(None);
        let resp = host.resp();
        let name = job.name;
        let reply = match (result, scalar) {
            // Interrupted inside a C call (see `HookState::kill`): the unwinding was a memory
            // error, but the client gets what the hook would have raised there.
            (Err(mlua::Error::MemoryError(_)), _) | (Ok((false, Value::String(_))), _)
                if fired_at.is_some() =>
            {
                Reply::Error(killed_error(name, fired_at.as_ref()))
            }
            (Ok(_), raw::Scalar::Nil) => Reply::Nil,
            (Ok(_), raw::Scalar::Bool(b)) => convert::bool_reply(b, resp),
            (Ok(_), raw::Scalar::Int(n)) => Reply::Int(n),
            (Ok(_), raw::Scalar::Str(b)) => Reply::Bulk(b),
            (Ok((true, v)), _) => convert::lua_to_reply(&v, resp, 0),
            (Ok((false, Value::Table(t))), _) => Reply::Error(error_from_table(&t, name)),
            (Ok((false, v)), _) => {
                let msg = match &v {
                    Value::String(s) => s.to_string_lossy(),
                    _ => "execution failure".to_string(),
                };
                Reply::error(run_error(name, &msg))
            }
            (Err(mlua::Error::MemoryError(_)), _) => {
                Reply::error(run_error(name, "not enough memory"))
            }
            (Err(e), _) => Reply::error(run_error(name, &e.to_string())),
        };
        eng.runs += 1;
        if eng.runs.is_multiple_of(50) || matches!(reply, Reply::Error(_)) {
            // As luaCallFunction: a collection step of 50 every 50 runs (LUA_GC_CYCLE_PERIOD),
            // so garbage from the runs between is taken back without a full cycle's latency.
            // SAFETY: one lua_gc call, protected by exec_raw.
            let _ = unsafe {
                lua.exec_raw::<()>((), |l| {
                    mlua::ffi::lua_gc(l, mlua::ffi::LUA_GCSTEP, 50);
                })
            };
        }
        // A script that left a lot of garbage (a big string built, a big table returned) is
        // collected at once, so the interpreter's memory goes back instead of lingering until
        // enough later scripts have run.
        let used = lua.used_memory();
        if used > limit / 2 || used > eng.collected_at + BIG_GARBAGE {
            let _ = lua.gc_collect();
            eng.collected_at = lua.used_memory();
        }
        reply
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

/// The number of keys of an EVAL/FCALL call (`args[2]`), checked against the arguments.
fn numkeys(args: &[Bytes], not_integer: &'static str) -> Result<usize, RedisError> {
    let n = crate::num::parse_ll(&args[2]).ok_or(RedisError::new(not_integer))?;
    if n > args.len() as i64 - 3 {
        return Err(RedisError::new(error::SCRIPT_TOO_MANY_KEYS));
    }
    if n < 0 {
        return Err(RedisError::new(error::SCRIPT_NEGATIVE_KEYS));
    }
    Ok(n as usize)
}

/// `Error running script <name>, <msg>` as luaCallFunction words non-table errors.
fn run_error(name: &str, msg: &str) -> RedisError {
    let msg: String = msg.chars().take(100).collect();
    error::err(format!("ERR Error running script {name}, {msg}\n"))
}

/// The final error of a failed script: `<err> script: <name>, on <source>:<line>.`
fn error_from_table(t: &Table, name: &str) -> Bytes {
    let msg = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        Ok(Value::Number(n)) => crate::num::format_g(n, 14).into_bytes(),
        Ok(Value::Integer(n)) => n.to_string().into_bytes(),
        _ => b"ERR unknown error".to_vec(),
    };
    let mut out = msg;
    let source = t.raw_get::<Value>("source").ok();
    let line = t.raw_get::<Value>("line").ok();
    if let (Some(Value::String(src)), Some(line)) = (source, line) {
        let line = match line {
            Value::Integer(i) => Some(i.to_string()),
            Value::Number(n) => Some(crate::num::format_g(n, 14)),
            Value::String(s) => Some(s.to_string_lossy()),
            _ => None,
        };
        if let Some(line) = line {
            out.extend_from_slice(format!(" script: {name}, on ").as_bytes());
            out.extend_from_slice(&src.as_bytes());
            out.extend_from_slice(format!(":{line}.").as_bytes());
        }
    }
    for c in out.iter_mut() {
        if *c == b'\r' || *c == b'\n' {
            *c = b' ';
        }
    }
    Bytes::from(out)
}

/// Where the interrupt fired during the run that just ended: the source and current line of
/// the innermost Lua function (line -1: none), or None if it did not fire.
///
/// # Safety
/// `state` is the engine's state and no Lua code runs on it meanwhile.
unsafe fn interrupted_at(state: *mut mlua::ffi::lua_State) -> Option<(Vec<u8>, i32)> {
    let mut src = std::ptr::null();
    let mut len = 0usize;
    let line = ffi::lua_interruptedat(state, &mut src, &mut len);
    if line == -2 {
        return None;
    }
    let source = if src.is_null() {
        Vec::new()
    } else {
        std::slice::from_raw_parts(src as *const u8, len).to_vec()
    };
    Some((source, line))
}

/// The error of a script killed inside a C call, as the count hook raises it through Redis's
/// error handler: `ERR Script killed by user with SCRIPT KILL... script: <name>, on
/// <source>:<line>.`
fn killed_error(name: &str, at: Option<&(Vec<u8>, i32)>) -> Bytes {
    let mut out = error::SCRIPT_KILLED.as_bytes().to_vec();
    if let Some((source, line)) = at.filter(|(_, line)| *line >= 0) {
        out.extend_from_slice(format!(" script: {name}, on ").as_bytes());
        out.extend_from_slice(source);
        out.extend_from_slice(format!(":{line}.").as_bytes());
    }
    Bytes::from(out)
}

fn set_hook(lua: &Lua, hook: *const HookState, count: i32) {
    let hook_addr = hook as usize;
    let _ = unsafe {
        lua.exec_raw::<()>((), move |state| {
            ffi::set_hook(state, hook_addr as *const HookState, count);
        })
    };
}
