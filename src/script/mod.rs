//! Lua scripting as Redis 7.0 does it: one Lua 5.1 interpreter per server, scripts cached by
//! the SHA-1 of their text, Redis's replies and error texts both ways.
//!
//! This layer knows nothing of the command table, clients or the keyspace: a running script
//! reaches the server only through the [`Host`] its caller passes in (the command layer
//! implements it, so `redis.call` goes through the same dispatch as a network client).
//! Atomicity is the caller's business too: it runs [`Scripting::eval`] holding the keyspace
//! exclusively.

mod convert;
mod engine;
mod ffi;
mod libs;
mod redis_lib;

pub use engine::sha1_hex;
pub(crate) use redis_lib::{lib_fn, Out};

use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use engine::{sha_str, Engine};
use mlua::{Lua, Table, Value};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Instructions between two runs of the count hook (kill flag, long-run callback).
const HOOK_EVERY: i32 = 10_000;
/// Default cap on the interpreter's memory: a hostile script gets an error, not the server.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// Script flags from a `#!lua flags=...` shebang.
pub mod script_flags {
    /// No shebang: Redis's pre-7.0 behaviour (EVAL compatibility mode).
    pub const EVAL_COMPAT: u32 = 1;
    /// `no-writes`
    pub const NO_WRITES: u32 = 1 << 1;
    /// `allow-oom`
    pub const ALLOW_OOM: u32 = 1 << 2;
    /// `allow-stale`
    pub const ALLOW_STALE: u32 = 1 << 3;
    /// `no-cluster`
    pub const NO_CLUSTER: u32 = 1 << 4;
    /// `allow-cross-slot-keys`
    pub const ALLOW_CROSS_SLOT: u32 = 1 << 5;
}

/// What a running script may ask of the server. The command layer implements it for each
/// run: the script's own client (db, RESP version), the command table, write tracking.
pub trait Host {
    /// `redis.call`/`redis.pcall`: run one command with scriptCall's checks. `Ok` is the
    /// command's reply (an error reply included); `Err` is a refusal before the command runs
    /// (unknown command, wrong arity, not allowed from scripts, write in a read-only script).
    fn call(&mut self, args: &[Bytes]) -> Result<Reply, &'static str>;
    /// `redis.acl_check_cmd`: whether the script's user may run `args`; `Err` when `args`
    /// names no command.
    fn acl_check(&mut self, args: &[Bytes]) -> Result<bool, &'static str>;
    /// The protocol the script's client speaks (RESP2 until `redis.setresp(3)`).
    fn resp(&self) -> u8;
    /// `redis.setresp`.
    fn set_resp(&mut self, resp: u8);
    /// Told before the script body runs whether its writes are refused (EVAL_RO, or a
    /// `no-writes` shebang flag).
    fn set_readonly(&mut self, readonly: bool);
}

/// State the count hook reads through the Lua registry: the kill flag and the callback that
/// lets the caller keep the rest of the server responsive while a script runs long.
pub(crate) struct HookState {
    kill: AtomicBool,
    tick: fn(),
}

/// Server-wide script state.
pub struct Scripting {
    engine: Mutex<Option<Engine>>,
    hook: Box<HookState>,
    running: AtomicBool,
    started: Mutex<Option<Instant>>,
    /// The running script called a write command: SCRIPT KILL must refuse.
    wrote: AtomicBool,
    memory_limit: AtomicUsize,
    /// redisLrand48's state behind math.random: server-wide like Redis's static, so it
    /// survives SCRIPT FLUSH and is not reseeded per script.
    rand: Arc<AtomicU64>,
}

/// What the interpreter keeps in its app data: the host of the running script (only while
/// one runs) and the random state.
pub(crate) struct RunCtx {
    host: Option<HostPtr>,
    rand: Arc<AtomicU64>,
}

/// The running script's host, borrowed for the duration of [`Scripting::eval`].
struct HostPtr(*mut (dyn Host + 'static));
// SAFETY: set and cleared on the thread that runs the script, used only by Lua callbacks
// that run inside that call on the same thread.
unsafe impl Send for HostPtr {}

/// Run `f` with the running script's host; None outside a script run.
fn with_host<R>(lua: &Lua, f: impl FnOnce(&mut dyn Host) -> R) -> Option<R> {
    let ptr = lua.app_data_ref::<RunCtx>()?.host.as_ref()?.0;
    // SAFETY: the pointer is valid while a script runs (see `Scripting::eval`), and callbacks
    // only run inside that call; the app-data borrow is released before `f` runs.
    Some(f(unsafe { &mut *ptr }))
}

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
            hook: Box::new(HookState {
                kill: AtomicBool::new(false),
                tick,
            }),
            running: AtomicBool::new(false),
            started: Mutex::new(None),
            wrote: AtomicBool::new(false),
            memory_limit: AtomicUsize::new(DEFAULT_MEMORY_LIMIT),
            rand: Arc::new(AtomicU64::new(0x1234_ABCD_330E)),
        }
    }

    /// Cap the interpreter's memory (bytes); applies to the next script run.
    pub fn set_memory_limit(&self, bytes: usize) {
        self.memory_limit.store(bytes, Ordering::Relaxed);
    }

    /// How long the current script has run, if one runs.
    pub fn running_for(&self) -> Option<std::time::Duration> {
        if !self.running.load(Ordering::Acquire) {
            return None;
        }
        self.started.lock().map(|s| s.elapsed())
    }

    /// The running script called a write command (SCRIPT KILL then answers UNKILLABLE).
    pub fn mark_wrote(&self) {
        self.wrote.store(true, Ordering::Release);
    }

    /// SCRIPT KILL once the caller has decided the script may be killed: refused with
    /// UNKILLABLE once the script has written.
    pub fn kill(&self) -> Result<(), RedisError> {
        if self.running_for().is_none() {
            return Err(RedisError::new(error::NOTBUSY));
        }
        if self.wrote.load(Ordering::Acquire) {
            return Err(RedisError::new(error::UNKILLABLE));
        }
        self.hook.kill.store(true, Ordering::Release);
        Ok(())
    }

    /// SCRIPT LOAD: compile and cache, returning the SHA.
    pub fn load(&self, body: &[u8]) -> Result<String, RedisError> {
        let mut g = self.engine.lock();
        let eng = self.engine_in(&mut g)?;
        eng.compile(body)
    }

    /// SCRIPT EXISTS for one SHA.
    pub fn exists(&self, sha: &[u8]) -> bool {
        let g = self.engine.lock();
        let key = String::from_utf8_lossy(sha).to_ascii_lowercase();
        g.as_ref().is_some_and(|e| e.scripts.contains_key(&key))
    }

    /// SCRIPT FLUSH: a new interpreter and an empty cache, as Redis.
    pub fn flush(&self) {
        let old = self.engine.lock().take();
        drop(old);
    }

    fn engine_in<'a>(&self, slot: &'a mut Option<Engine>) -> Result<&'a mut Engine, RedisError> {
        if slot.is_none() {
            let e = Engine::new(self.rand.clone())
                .map_err(|e| error::err(format!("ERR Lua init failed: {e}")))?;
            *slot = Some(e);
        }
        Ok(slot.as_mut().expect("engine present"))
    }

    /// evalGenericCommand: run EVAL/EVALSHA(_RO) `args` (the command name first). The caller
    /// holds the keyspace exclusively for the whole call; `host` serves the script's
    /// `redis.call`s.
    pub fn eval(&self, host: &mut dyn Host, kind: EvalKind, args: &[Bytes]) -> Reply {
        match self.eval_inner(host, kind, args) {
            Ok(r) => r,
            Err(e) => Reply::error(e),
        }
    }

    fn eval_inner(
        &self,
        host: &mut dyn Host,
        kind: EvalKind,
        args: &[Bytes],
    ) -> Result<Reply, RedisError> {
        let numkeys = crate::num::parse_ll(&args[2]).ok_or(RedisError::new(error::NOT_INTEGER))?;
        if numkeys > args.len() as i64 - 3 {
            return Err(RedisError::new(error::SCRIPT_TOO_MANY_KEYS));
        }
        if numkeys < 0 {
            return Err(RedisError::new(error::SCRIPT_NEGATIVE_KEYS));
        }
        let numkeys = numkeys as usize;
        let mut guard = self.engine.lock();
        let eng = self.engine_in(&mut guard)?;
        let sha_buf = if kind.by_sha {
            let Ok(given) = <&[u8; 40]>::try_from(&args[1][..]) else {
                return Err(RedisError::new(error::NOSCRIPT));
            };
            given.map(|c| c.to_ascii_lowercase())
        } else {
            eng.compile_buf(&args[1])?
        };
        let sha = sha_str(&sha_buf);
        let (func, sflags) = match eng.scripts.get(sha) {
            Some(sc) if !sha.is_empty() => (sc.func.clone(), sc.flags),
            _ => return Err(RedisError::new(error::NOSCRIPT)),
        };
        let compat = sflags & script_flags::EVAL_COMPAT != 0;
        if !compat && sflags & script_flags::NO_WRITES == 0 && kind.readonly {
            return Err(RedisError::new(error::SCRIPT_RO_WITH_WRITE_FLAG));
        }
        let readonly = kind.readonly || (!compat && sflags & script_flags::NO_WRITES != 0);
        host.set_readonly(readonly);
        let lua = &eng.lua;
        let to_lua_err = |e: mlua::Error| error::err(format!("ERR {e}"));
        let keys = str_array(lua, &args[3..3 + numkeys]).map_err(to_lua_err)?;
        let argv = str_array(lua, &args[3 + numkeys..]).map_err(to_lua_err)?;
        let g = lua.globals();
        g.raw_set("KEYS", keys).map_err(to_lua_err)?;
        g.raw_set("ARGV", argv).map_err(to_lua_err)?;
        let limit = self.memory_limit.load(Ordering::Relaxed);
        let _ = lua.set_memory_limit(limit);

        // SAFETY (lifetime erasure): the pointer is cleared below before `host` goes out of
        // scope, and Lua callbacks only run inside `eng.run.call`.
        let host_ptr: *mut (dyn Host + '_) = host;
        let host_ptr: *mut (dyn Host + 'static) = unsafe { std::mem::transmute(host_ptr) };
        match lua.app_data_mut::<RunCtx>() {
            Some(mut rc) => rc.host = Some(HostPtr(host_ptr)),
            None => return Err(error::err("ERR Lua init failed: no script context")),
        }
        self.hook.kill.store(false, Ordering::Release);
        self.wrote.store(false, Ordering::Release);
        *self.started.lock() = Some(Instant::now());
        self.running.store(true, Ordering::Release);
        let hook: *const HookState = &*self.hook;
        set_hook(lua, hook, HOOK_EVERY);

        let result = eng.run.call::<(bool, Value)>(func);

        set_hook(lua, hook, 0);
        self.running.store(false, Ordering::Release);
        *self.started.lock() = None;
        if let Some(mut rc) = lua.app_data_mut::<RunCtx>() {
            rc.host = None;
        }
        let resp = host.resp();
        let reply = match result {
            Ok((true, v)) => convert::lua_to_reply(&v, resp, 0),
            Ok((false, Value::Table(t))) => Reply::Error(error_from_table(&t, sha)),
            Ok((false, v)) => {
                let msg = match &v {
                    Value::String(s) => s.to_string_lossy(),
                    _ => "execution failure".to_string(),
                };
                Reply::error(run_error(sha, &msg))
            }
            Err(mlua::Error::MemoryError(_)) => Reply::error(run_error(sha, "not enough memory")),
            Err(e) => Reply::error(run_error(sha, &e.to_string())),
        };
        eng.runs += 1;
        if eng.runs % 50 == 0 || matches!(reply, Reply::Error(_)) {
            let _ = lua.gc_step();
        }
        if lua.used_memory() > limit / 2 {
            let _ = lua.gc_collect();
        }
        Ok(reply)
    }
}

/// `Error running script <sha>, <msg>` as luaCallFunction words non-table errors.
fn run_error(sha: &str, msg: &str) -> RedisError {
    let msg: String = msg.chars().take(100).collect();
    error::err(format!("ERR Error running script {sha}, {msg}\n"))
}

/// The final error of a failed script: `<err> script: <sha>, on <source>:<line>.`
fn error_from_table(t: &Table, sha: &str) -> Bytes {
    let msg = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        Ok(Value::Number(n)) => crate::num::format_double(n).into_bytes(),
        Ok(Value::Integer(n)) => n.to_string().into_bytes(),
        _ => b"ERR unknown error".to_vec(),
    };
    let mut out = msg;
    let source = t.raw_get::<Value>("source").ok();
    let line = t.raw_get::<Value>("line").ok();
    if let (Some(Value::String(src)), Some(line)) = (source, line) {
        let line = match line {
            Value::Integer(i) => Some(i.to_string()),
            Value::Number(n) => Some(crate::num::format_double(n)),
            Value::String(s) => Some(s.to_string_lossy()),
            _ => None,
        };
        if let Some(line) = line {
            out.extend_from_slice(format!(" script: {sha}, on ").as_bytes());
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

fn set_hook(lua: &Lua, hook: *const HookState, count: i32) {
    let hook_addr = hook as usize;
    let _ = unsafe {
        lua.exec_raw::<()>((), move |state| {
            ffi::set_hook(state, hook_addr as *const HookState, count);
        })
    };
}

fn str_array(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}
