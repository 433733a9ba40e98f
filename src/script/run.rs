//! The one run path of EVAL and FCALL (luaCallFunction): the checks before a run, the hook,
//! memory limit and running state around it, the reply or error after it, and the garbage
//! collection that follows. Apart from `Scripting`'s bookkeeping because this is the code
//! every script call goes through, with the unsafe hand-over of the host to Lua's callbacks.

use super::engine::{self, sha_str, Engine};
use super::host::{HookState, HostPtr, HOOK_EVERY};
use super::watchdog::{CallArgs, Running, StatePtr};
use super::ldb::{self, DebugSession};
use super::{convert, ffi, raw, script_flags, EvalKind, Host, Scripting};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use mlua::{Lua, Table, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Growth of the interpreter's memory since its last full collection that triggers one.
const BIG_GARBAGE: usize = 4 << 20;

/// Growth of the interpreter's memory since its last finished collection cycle below which
/// the periodic collection step is skipped (the interpreter holds about 51 KB live).
const STEP_GARBAGE: usize = 32 << 10;

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
    /// A debugging session (SCRIPT DEBUG) and the script's text it lists.
    debug: Option<(DebugSession, &'a [u8])>,
}

impl Scripting {
    /// evalGenericCommand: run EVAL/EVALSHA(_RO) `args` (the command name first). The caller
    /// holds the server lock for the whole call; `host` serves the script's `redis.call`s.
    pub fn eval(&self, host: &mut dyn Host, kind: EvalKind, args: &[Bytes]) -> Reply {
        self.eval_with(host, kind, args, None)
    }

    /// EVAL under the Lua debugger (evalGenericCommandWithDebugging): the session stops the
    /// script as the client asks and ends with `<endsession>`; the caller closes the client
    /// after the reply. `session` is dropped unused if the script fails to start.
    pub fn eval_debug(
        &self,
        host: &mut dyn Host,
        kind: EvalKind,
        args: &[Bytes],
        session: DebugSession,
    ) -> Reply {
        self.eval_with(host, kind, args, Some(session))
    }

    fn eval_with(
        &self,
        host: &mut dyn Host,
        kind: EvalKind,
        args: &[Bytes],
        session: Option<DebugSession>,
    ) -> Reply {
        let mut session = session;
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
            let Some((func, sflags)) = eng.find(&sha_buf) else {
                return Err(RedisError::new(error::NOSCRIPT));
            };
            let sha = sha_str(&sha_buf);
            let compat = sflags & script_flags::EVAL_COMPAT != 0;
            // A script without a shebang is prepared too (a stale replica refuses it).
            host.prepare(sflags)?;
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
                debug: session.take().map(|s| (s, &args[1][..])),
            };
            Ok(self.run(eng, host, job, args))
        });
        if let Some(s) = session {
            // The script never started (a compile error...): the session still ends.
            ldb::end(ldb::begin(s, &args[1], &self.watch.hook));
        }
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
                debug: None,
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
            started: crate::clock::mono_ns(),
            is_eval: job.is_eval,
            function: job
                .function
                .map(|name| (name, CallArgs(args as *const [Bytes]))),
            state: StatePtr(state),
            debugging: job.debug.is_some(),
        });
        self.watch.running.store(true, Ordering::Release);
        self.wake_watchdog();
        let hook: *const HookState = &self.watch.hook;
        let session = job.debug.map(|(s, body)| ldb::begin(s, body, hook));
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
            register_hook: eng.hook_registered != hook,
            hook_every: HOOK_EVERY,
            debug: session.is_some(),
        };
        let mut scalar = raw::Scalar::Other;
        let lua = &eng.lua;
        let mut tables = job.is_eval.then_some(&mut eng.arg_tables);
        // SAFETY: the references in `params` are live registry entries, `hook` outlives the
        // call, and `raw::run` keeps the rule of its module; this thread owns the state
        // (under the engine's lock), and the stack is put back as it was.
        let result = unsafe {
            let base = mlua::ffi::lua_gettop(state);
            let status = if mlua::ffi::lua_checkstack(state, 4) == 0 {
                None
            } else {
                Some(raw::protected(state, eng.protected_entry, &mut |l| {
                    raw::run(l, &params, tables.take(), &mut scalar)
                }))
            };
            let result = match status {
                None => Err(mlua::Error::MemoryError("stack overflow".into())),
                Some(0) => {
                    let ok = mlua::ffi::lua_toboolean(state, base + 1) != 0;
                    // A scalar was taken out already (nil left in its place).
                    let value = match scalar {
                        raw::Scalar::Other => lua.exec_raw_lua(|raw| {
                            mlua::ffi::lua_settop(state, base + 2);
                            raw.pop_value()
                        }),
                        _ => Value::Nil,
                    };
                    Ok((ok, value))
                }
                Some(status) => Err(protected_error(state, status)),
            };
            mlua::ffi::lua_settop(state, base);
            result
        };
        if result.is_err() {
            // Failed before the script started: the globals may not be the kept tables.
            eng.arg_tables.installed = false;
            // The run failed before its script did (out of memory building KEYS): the hook
            // may still be installed.
            set_hook(lua, hook, 0);
        }
        eng.hook_registered = hook;
        if let Some(session) = session {
            ldb::end(session);
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
            (Ok((true, v)), _) => {
                // A returned error table (`return redis.pcall(...)`) keeps its mark too.
                if let Value::Table(t) = &v {
                    if t.raw_get::<bool>("ignore_error_stats_update").unwrap_or(false) {
                        host.error_counted();
                    }
                }
                convert::lua_to_reply(&v, resp, 0)
            }
            (Ok((false, Value::Table(t))), _) => {
                if t.raw_get::<bool>("ignore_error_stats_update").unwrap_or(false) {
                    host.error_counted();
                }
                Reply::Error(error_from_table(&t, name))
            }
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
        // As luaCallFunction: a collection step of 50 every 50 runs (LUA_GC_CYCLE_PERIOD), so
        // garbage from the runs between is taken back without a full cycle's latency. A step
        // of 50 finishes the cycle of a heap this small, so it costs a whole mark and sweep of
        // the interpreter; it is skipped while the runs since the last finished cycle left
        // less than STEP_GARBAGE (the unlock script leaves about 110 bytes a run: a cycle
        // every 300 runs instead of every 50, and memory still bounded within that slack,
        // which keeps used_memory_lua under the 100 KB Redis's own tests expect).
        let step_due = eng.runs.is_multiple_of(50)
            && heap_bytes(state) > eng.collected_at + STEP_GARBAGE;
        if step_due || matches!(reply, Reply::Error(_)) {
            // SAFETY: one lua_gc call, protected by exec_raw.
            let finished = unsafe {
                lua.exec_raw::<i64>((), |l| {
                    let done = mlua::ffi::lua_gc(l, mlua::ffi::LUA_GCSTEP, 50);
                    mlua::ffi::lua_pushinteger(l, done as _);
                })
            };
            if matches!(finished, Ok(1)) {
                eng.collected_at = heap_bytes(state);
            }
        }
        // A script that left a lot of garbage (a big string built, a big table returned) is
        // collected at once, so the interpreter's memory goes back instead of lingering until
        // enough later scripts have run.
        let used = heap_bytes(state);
        if used > limit / 2 || used > eng.collected_at + BIG_GARBAGE {
            let _ = lua.gc_collect();
            eng.collected_at = heap_bytes(state);
        }
        reply
    }
}

/// The interpreter's heap in bytes, as Lua counts it (what mlua's `used_memory` reports, read
/// without its lock: once per run).
fn heap_bytes(state: *mut mlua::ffi::lua_State) -> usize {
    // SAFETY: LUA_GCCOUNT and LUA_GCCOUNTB only read the global state; the caller owns it.
    unsafe {
        let kb = mlua::ffi::lua_gc(state, mlua::ffi::LUA_GCCOUNT, 0);
        let rem = mlua::ffi::lua_gc(state, mlua::ffi::LUA_GCCOUNTB, 0);
        kb.max(0) as usize * 1024 + rem.max(0) as usize
    }
}

/// The error of a protected call that failed (status non-zero, its error value on top), as
/// mlua would have reported it: out of memory, or a runtime error with its message.
///
/// # Safety
/// The error value is on top of `state`'s stack, which this thread owns.
unsafe fn protected_error(state: *mut mlua::ffi::lua_State, status: std::os::raw::c_int) -> mlua::Error {
    let mut len = 0usize;
    let p = mlua::ffi::lua_tolstring(state, -1, &mut len);
    let msg = if p.is_null() {
        "<non-string error>".to_string()
    } else {
        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
    };
    if status == mlua::ffi::LUA_ERRMEM {
        mlua::Error::MemoryError(msg)
    } else {
        mlua::Error::RuntimeError(msg)
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
