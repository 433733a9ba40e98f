//! Lua scripting as Redis 7.0 does it: one Lua 5.1 interpreter per server, scripts cached by
//! the SHA-1 of their text, the `redis` library dispatching through the command table, and
//! Redis's replies and error texts both ways.
//!
//! Atomicity comes from the keyspace gate: a script runs on a blocking thread holding
//! `gate.exclusive()`, so no other client's command interleaves with it, whatever keys it
//! touches. Lock order is always gate, then the interpreter mutex.

mod convert;
mod ffi;
mod libs;

use crate::client::Client;
use crate::cmd::{self, flags, Command, Ctx};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use crate::cmd::ServerState;
use bytes::Bytes;
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Instructions between two checks of the kill flag.
const HOOK_EVERY: i32 = 10_000;
/// Default cap on the interpreter's memory: a hostile script gets an error, not the server.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// Script flags from a `#!lua flags=...` shebang.
pub mod script_flags {
    pub const EVAL_COMPAT: u32 = 1;
    pub const NO_WRITES: u32 = 1 << 1;
    pub const ALLOW_OOM: u32 = 1 << 2;
    pub const ALLOW_STALE: u32 = 1 << 3;
    pub const NO_CLUSTER: u32 = 1 << 4;
    pub const ALLOW_CROSS_SLOT: u32 = 1 << 5;
}

/// Server-wide script state, kept in [`ServerState`].
pub struct Scripting {
    engine: Mutex<Option<Engine>>,
    /// Set by SCRIPT KILL, read by the Lua count hook (its address is in the Lua registry).
    kill: Box<AtomicBool>,
    running: AtomicBool,
    started: Mutex<Option<Instant>>,
    /// The running script called a write command: SCRIPT KILL must refuse.
    wrote: AtomicBool,
    memory_limit: AtomicUsize,
    /// redisLrand48's state behind math.random: server-wide like Redis's static, so it
    /// survives SCRIPT FLUSH and is not reseeded per script.
    rand: std::sync::atomic::AtomicU64,
}

impl Default for Scripting {
    fn default() -> Self {
        Scripting {
            engine: Mutex::new(None),
            kill: Box::new(AtomicBool::new(false)),
            running: AtomicBool::new(false),
            started: Mutex::new(None),
            wrote: AtomicBool::new(false),
            memory_limit: AtomicUsize::new(DEFAULT_MEMORY_LIMIT),
            rand: std::sync::atomic::AtomicU64::new(0x1234_ABCD_330E),
        }
    }
}

struct Script {
    func: Function,
    flags: u32,
}

struct Engine {
    lua: Lua,
    scripts: HashMap<String, Script>,
    setenv: Function,
    run: Function,
    runs: u64,
}

/// What redis.call needs during one run, kept in the interpreter's app data for its whole
/// life so no run allocates one: `shared` is set only while a script runs (outside runs it
/// would make a reference cycle), and the script's client is reset, not rebuilt, per run.
struct RunCtx {
    state: Option<Arc<ServerState>>,
    client: Client,
    now: i64,
    readonly: bool,
}

impl Scripting {
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

    /// SCRIPT LOAD: compile and cache, returning the SHA.
    pub fn load(&self, body: &[u8]) -> Result<String, RedisError> {
        let mut g = self.engine.lock();
        let eng = engine(&mut g)?;
        eng.compile(body)
    }

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
}

fn engine(slot: &mut Option<Engine>) -> Result<&mut Engine, RedisError> {
    if slot.is_none() {
        let e = Engine::new().map_err(|e| error::err(format!("ERR Lua init failed: {e}")))?;
        *slot = Some(e);
    }
    Ok(slot.as_mut().expect("engine present"))
}

pub fn sha1_hex(b: &[u8]) -> String {
    sha_str(&sha1_hex_buf(b)).to_string()
}

/// The lowercase hex SHA-1 of `b`, without allocating.
fn sha1_hex_buf(b: &[u8]) -> [u8; 40] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = sha1_smol::Sha1::from(b).digest().bytes();
    let mut out = [0u8; 40];
    for (i, byte) in digest.iter().enumerate() {
        out[2 * i] = HEX[(byte >> 4) as usize];
        out[2 * i + 1] = HEX[(byte & 15) as usize];
    }
    out
}

/// A hex SHA buffer as text (it is always ASCII).
fn sha_str(buf: &[u8; 40]) -> &str {
    std::str::from_utf8(buf).unwrap_or("")
}

/// Parse a `#!lua ...` first line as evalExtractShebangFlags does; returns (flags, has_shebang).
fn shebang_flags(body: &[u8]) -> Result<(u32, bool), RedisError> {
    if !body.starts_with(b"#!") {
        return Ok((script_flags::EVAL_COMPAT, false));
    }
    let end = body
        .iter()
        .position(|&c| c == b'\n')
        .ok_or(RedisError::new(error::SCRIPT_INVALID_SHEBANG))?;
    let line = String::from_utf8_lossy(&body[..end]);
    let parts: Vec<&str> = line.split_ascii_whitespace().collect();
    if parts.is_empty() {
        return Err(RedisError::new(error::SCRIPT_INVALID_ENGINE));
    }
    if parts[0] != "#!lua" {
        return Err(error::err(format!(
            "ERR Unexpected engine in script shebang: {}",
            parts[0]
        )));
    }
    let mut f = 0;
    for p in &parts[1..] {
        let Some(list) = p.strip_prefix("flags=") else {
            return Err(error::err(format!("ERR Unknown lua shebang option: {p}")));
        };
        for name in list.split(',').filter(|s| !s.is_empty()) {
            f |= match name {
                "no-writes" => script_flags::NO_WRITES,
                "allow-oom" => script_flags::ALLOW_OOM,
                "allow-stale" => script_flags::ALLOW_STALE,
                "no-cluster" => script_flags::NO_CLUSTER,
                "allow-cross-slot-keys" => script_flags::ALLOW_CROSS_SLOT,
                _ => {
                    return Err(error::err(format!(
                        "ERR Unexpected flag in script shebang: {name}"
                    )))
                }
            };
        }
    }
    Ok((f, true))
}

impl Engine {
    fn new() -> mlua::Result<Engine> {
        // The debug library is needed by Redis's error handler; the prelude hides it again.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::new(),
            )
        };
        let make_tramp = unsafe { lua.create_c_function(ffi::make_tramp)? };
        let libs = lua.create_table()?;
        libs.raw_set("redis", redis_lib(&lua, &make_tramp)?)?;
        libs.raw_set("cjson", libs::cjson(&lua, &make_tramp)?)?;
        libs.raw_set("bit", libs::bit(&lua, &make_tramp)?)?;
        libs.raw_set("struct", libs::structlib(&lua, &make_tramp)?)?;
        libs.raw_set("cmsgpack", libs::cmsgpack(&lua, &make_tramp)?)?;
        let math: Table = lua.globals().raw_get("math")?;
        libs::math_random(&lua, &make_tramp, &math)?;
        let (setenv, run): (Function, Function) = lua
            .load(include_str!("prelude.lua"))
            .set_name("=resplock_prelude")
            .call((make_tramp, libs))?;
        lua.set_app_data(RunCtx {
            state: None,
            client: Client::detached(0, 0, 2),
            now: 0,
            readonly: false,
        });
        Ok(Engine {
            lua,
            scripts: HashMap::new(),
            setenv,
            run,
            runs: 0,
        })
    }

    /// Compile `body` once and cache it by SHA (luaCreateFunction).
    fn compile(&mut self, body: &[u8]) -> Result<String, RedisError> {
        let sha = self.compile_buf(body)?;
        Ok(sha_str(&sha).to_string())
    }

    /// [`Engine::compile`] with the SHA on the stack: EVAL of a cached script allocates none.
    fn compile_buf(&mut self, body: &[u8]) -> Result<[u8; 40], RedisError> {
        let buf = sha1_hex_buf(body);
        if self.scripts.contains_key(sha_str(&buf)) {
            return Ok(buf);
        }
        let sha = sha_str(&buf).to_string();
        let (flags, shebang) = shebang_flags(body)?;
        let mut code = body.to_vec();
        if shebang {
            // Keep the line count: Redis reports positions counting the shebang line.
            code[0] = b'-';
            code[1] = b'-';
        }
        if code.first() == Some(&0x1b) {
            return Err(RedisError::new(error::SCRIPT_BINARY_CHUNK));
        }
        let func = self
            .lua
            .load(&code[..])
            .set_name("@user_script")
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function()
            .map_err(|e| {
                let msg = match &e {
                    mlua::Error::SyntaxError { message, .. } => message.clone(),
                    other => other.to_string(),
                };
                error::err(format!("ERR Error compiling script (new function): {msg}"))
            })?;
        let func: Function = self
            .setenv
            .call(func)
            .map_err(|e| error::err(format!("ERR {e}")))?;
        self.scripts.insert(sha, Script { func, flags });
        Ok(buf)
    }
}

/// Which of the four script commands runs.
#[derive(Clone, Copy)]
pub struct EvalKind {
    pub by_sha: bool,
    pub readonly: bool,
}

/// Wait (asynchronously) until no script holds the gate, or fail with BUSY.
async fn wait_no_script(state: &ServerState, cmd: &Command) -> Result<(), RedisError> {
    loop {
        if !state.keyspace.gate.is_exclusive() {
            return Ok(());
        }
        if let Some(e) = busy_error(state, cmd) {
            return Err(e);
        }
        state.keyspace.gate.wait_released().await;
    }
}

/// The BUSY error other clients get once a script ran past busy-reply-threshold.
pub fn busy_error(state: &ServerState, cmd: &Command) -> Option<RedisError> {
    if cmd.has(flags::ALLOW_BUSY) {
        return None;
    }
    let threshold = state.config.read().busy_reply_threshold_ms;
    let ran = state.scripting.running_for()?;
    (threshold > 0 && ran.as_millis() as u64 >= threshold).then(|| RedisError::new(error::BUSY))
}

/// Entry point for rows flagged SCRIPT_RUNNER: EVAL and friends run on a blocking thread
/// holding the gate exclusively; SCRIPT KILL runs without the gate.
pub async fn run_command(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    args: Vec<Bytes>,
) -> Reply {
    if cmd.name == "kill" {
        return match script_kill(state).await {
            Ok(r) => r,
            Err(e) => Reply::error(e),
        };
    }
    let kind = match cmd.name {
        "eval" => EvalKind {
            by_sha: false,
            readonly: false,
        },
        "evalsha" => EvalKind {
            by_sha: true,
            readonly: false,
        },
        "eval_ro" => EvalKind {
            by_sha: false,
            readonly: true,
        },
        "evalsha_ro" => EvalKind {
            by_sha: true,
            readonly: true,
        },
        _ => return Reply::error(error::unknown_command(&args[0], &args[1..])),
    };
    if runs_inline() {
        // The script runs on this worker: a thread handoff per script costs more than a
        // typical script. A long one hands the worker's other tasks off from the hook
        // (see `hand_off_if_long`), so nothing waits behind it for more than about
        // INLINE_GRACE.
        loop {
            if let Err(e) = wait_no_script(state, cmd).await {
                return Reply::error(e);
            }
            if let Some(gate) = state.keyspace.gate.try_exclusive() {
                INLINE_SINCE.with(|s| s.set(Some(Instant::now())));
                let reply = eval(state, client.db, kind, &args);
                INLINE_SINCE.with(|s| s.set(None));
                drop(gate);
                return reply;
            }
            // Commands hold the gate shared only inside synchronous code: retry shortly.
            tokio::task::yield_now().await;
        }
    }
    if let Err(e) = wait_no_script(state, cmd).await {
        return Reply::error(e);
    }
    let sh = state.clone();
    let db = client.db;
    let task = tokio::task::spawn_blocking(move || {
        let _gate = sh.keyspace.gate.exclusive();
        eval(&sh, db, kind, &args)
    });
    match task.await {
        Ok(r) => r,
        Err(_) => Reply::Error(Bytes::from_static(b"ERR script execution failed")),
    }
}

/// Scripts run on the calling worker on a multi-threaded runtime with another worker to serve
/// the other clients meanwhile; on a single-threaded runtime, where block_in_place is not
/// available, they move to a blocking thread.
/// How long a script may run on a worker before the hook hands the worker's other tasks off.
const INLINE_GRACE: std::time::Duration = std::time::Duration::from_millis(1);

thread_local! {
    /// When the script running inline on this thread started (None: no inline script, or its
    /// tasks were already handed off).
    static INLINE_SINCE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Called from the Lua count hook. tokio keeps some runnable tasks where no other worker can
/// take them: the LIFO slot and the list of tasks deferred by a yield or an exhausted coop
/// budget. A script that keeps this worker busy would strand them, and if one of them is the
/// client about to send SCRIPT KILL, an endless script would never be killed. Once a script
/// has run INLINE_GRACE, block_in_place wakes the deferred tasks, moves the LIFO task to the
/// stealable queue and gives the worker's queue to another thread; the short sleep lets that
/// thread take it, after which this thread finishes the script as a blocking thread.
pub(crate) fn hand_off_if_long() {
    let long = INLINE_SINCE.with(|s| match s.get() {
        Some(t) if t.elapsed() >= INLINE_GRACE => {
            s.set(None);
            true
        }
        _ => false,
    });
    if long {
        tokio::task::block_in_place(|| std::thread::sleep(std::time::Duration::from_millis(1)));
    }
}

fn runs_inline() -> bool {
    let h = tokio::runtime::Handle::current();
    matches!(
        h.runtime_flavor(),
        tokio::runtime::RuntimeFlavor::MultiThread
    ) && h.metrics().num_workers() >= 2
}

/// SCRIPT KILL. As in Redis, a kill sent before the script passed busy-reply-threshold is only
/// served once it has (or once the script ended: NOTBUSY).
async fn script_kill(state: &ServerState) -> Result<Reply, RedisError> {
    let s = &state.scripting;
    loop {
        let Some(ran) = s.running_for() else {
            return Err(RedisError::new(error::NOTBUSY));
        };
        let threshold = state.config.read().busy_reply_threshold_ms;
        if threshold > 0 && ran.as_millis() as u64 >= threshold {
            if s.wrote.load(Ordering::Acquire) {
                return Err(RedisError::new(error::UNKILLABLE));
            }
            s.kill.store(true, Ordering::Release);
            return Ok(Reply::ok());
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

/// evalGenericCommand, run with the gate held exclusively.
pub fn eval(state: &Arc<ServerState>, db: usize, kind: EvalKind, args: &[Bytes]) -> Reply {
    match eval_inner(state, db, kind, args) {
        Ok(r) => r,
        Err(e) => Reply::error(e),
    }
}

fn eval_inner(
    state: &Arc<ServerState>,
    db: usize,
    kind: EvalKind,
    args: &[Bytes],
) -> Result<Reply, RedisError> {
    let numkeys = cmd::args::int(&args[2])?;
    if numkeys > args.len() as i64 - 3 {
        return Err(RedisError::new(error::SCRIPT_TOO_MANY_KEYS));
    }
    if numkeys < 0 {
        return Err(RedisError::new(error::SCRIPT_NEGATIVE_KEYS));
    }
    let numkeys = numkeys as usize;
    let s = &state.scripting;
    let mut guard = s.engine.lock();
    let eng = engine(&mut guard)?;
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
    let lua = &eng.lua;
    let to_lua_err = |e: mlua::Error| error::err(format!("ERR {e}"));
    let keys = str_array(lua, &args[3..3 + numkeys]).map_err(to_lua_err)?;
    let argv = str_array(lua, &args[3 + numkeys..]).map_err(to_lua_err)?;
    let g = lua.globals();
    g.raw_set("KEYS", keys).map_err(to_lua_err)?;
    g.raw_set("ARGV", argv).map_err(to_lua_err)?;
    let limit = s.memory_limit.load(Ordering::Relaxed);
    let _ = lua.set_memory_limit(limit);

    let now = state.clock.now_ms();
    match lua.app_data_mut::<RunCtx>() {
        Some(mut rc) => {
            // What a fresh `Client::detached(0, db, 2)` would be.
            rc.state = Some(state.clone());
            rc.client.select(db);
            rc.client.resp = 2;
            rc.client.authenticated = true;
            rc.client.close_after_reply = false;
            rc.now = now;
            rc.readonly = readonly;
        }
        None => return Err(error::err("ERR Lua init failed: no script context")),
    }
    s.kill.store(false, Ordering::Release);
    s.wrote.store(false, Ordering::Release);
    *s.started.lock() = Some(Instant::now());
    s.running.store(true, Ordering::Release);
    let flag: *const AtomicBool = &*s.kill;
    set_hook(lua, flag, HOOK_EVERY);

    let result = eng.run.call::<(bool, Value)>(func);

    set_hook(lua, flag, 0);
    s.running.store(false, Ordering::Release);
    *s.started.lock() = None;
    let resp = match lua.app_data_mut::<RunCtx>() {
        Some(mut rc) => {
            rc.state = None;
            rc.client.resp
        }
        None => 2,
    };
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

fn set_hook(lua: &Lua, flag: *const AtomicBool, count: i32) {
    let flag_addr = flag as usize;
    let _ = unsafe {
        lua.exec_raw::<()>((), move |state| {
            ffi::set_hook(state, flag_addr as *const AtomicBool, count);
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

// ---- the `redis` library -------------------------------------------------------------------

/// Results of a library function for [`ffi::tramp`]: `Ok` values are returned, `Raise` is
/// raised as is, `Where` is raised with the caller's position (luaL_error), `Arg` is raised as
/// luaL_argerror words it (`bad argument #N to 'name' (msg)`, the name taken from the call).
pub(crate) enum Out {
    Ok(Vec<Value>),
    Raise(Value),
    Where(String),
    Arg(i32, String),
}

pub(crate) fn lib_fn<F>(lua: &Lua, make_tramp: &Function, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Out> + Send + 'static,
{
    let inner = lua.create_function(move |lua, args: MultiValue| {
        let mut v = Vec::new();
        match f(lua, args)? {
            Out::Ok(vals) => {
                v.push(Value::Boolean(false));
                v.extend(vals);
            }
            Out::Raise(e) => {
                v.push(Value::Boolean(true));
                v.push(e);
            }
            Out::Where(msg) => {
                v.push(Value::String(lua.create_string("where")?));
                v.push(Value::String(lua.create_string(msg)?));
            }
            Out::Arg(n, msg) => {
                v.push(Value::Integer(n as mlua::Integer));
                v.push(Value::String(lua.create_string(msg)?));
            }
        }
        Ok(MultiValue::from_vec(v))
    })?;
    make_tramp.call(inner)
}

/// Raise `{err="ERR <msg>"}` as luaPushError + luaError do.
fn raise(lua: &Lua, msg: &str) -> mlua::Result<Out> {
    Ok(Out::Raise(Value::Table(convert::error_table(
        lua,
        msg.as_bytes(),
    )?)))
}

fn redis_lib(lua: &Lua, mt: &Function) -> mlua::Result<Table> {
    let r = lua.create_table()?;
    r.raw_set("call", lib_fn(lua, mt, |lua, a| redis_call(lua, a, true))?)?;
    r.raw_set(
        "pcall",
        lib_fn(lua, mt, |lua, a| redis_call(lua, a, false))?,
    )?;
    r.raw_set(
        "error_reply",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let t = match v.as_slice() {
                [Value::String(s)] => {
                    let b = s.as_bytes();
                    let text = if b.first() == Some(&b'-') {
                        b.to_vec()
                    } else {
                        [b"-".as_slice(), &b].concat()
                    };
                    convert::error_table(lua, &text)?
                }
                _ => convert::error_table(lua, b"wrong number or type of arguments")?,
            };
            Ok(Out::Ok(vec![Value::Table(t)]))
        })?,
    )?;
    r.raw_set(
        "status_reply",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let t = match v.as_slice() {
                [Value::String(s)] => {
                    let t = lua.create_table()?;
                    t.raw_set("ok", s.clone())?;
                    t
                }
                _ => convert::error_table(lua, b"wrong number or type of arguments")?,
            };
            Ok(Out::Ok(vec![Value::Table(t)]))
        })?,
    )?;
    r.raw_set(
        "sha1hex",
        lib_fn(lua, mt, |lua, a| {
            if a.len() != 1 {
                return raise(lua, "wrong number of arguments");
            }
            let v = a.into_iter().next().unwrap_or(Value::Nil);
            let bytes = match lua.coerce_string(v)? {
                Some(s) => s.as_bytes().to_vec(),
                None => Vec::new(),
            };
            Ok(Out::Ok(vec![Value::String(
                lua.create_string(sha1_hex(&bytes))?,
            )]))
        })?,
    )?;
    r.raw_set(
        "log",
        lib_fn(lua, mt, |lua, a| {
            if a.len() < 2 {
                return raise(lua, "redis.log() requires two arguments or more.");
            }
            let v: Vec<Value> = a.into_iter().collect();
            let level = match &v[0] {
                Value::Integer(i) => *i as f64,
                Value::Number(n) => *n,
                _ => return raise(lua, "First argument must be a number."),
            };
            if !(0.0..=3.0).contains(&level) || level.fract() != 0.0 {
                return raise(lua, "Invalid debug level.");
            }
            let mut msg = Vec::new();
            for (i, x) in v[1..].iter().enumerate() {
                if i > 0 {
                    msg.push(b' ');
                }
                if let Some(s) = lua.coerce_string(x.clone())? {
                    msg.extend_from_slice(&s.as_bytes());
                }
            }
            let msg = String::from_utf8_lossy(&msg);
            match level as i32 {
                0 => tracing::debug!(target: "lua", "{msg}"),
                1 => tracing::info!(target: "lua", "{msg}"),
                2 => tracing::info!(target: "lua", "{msg}"),
                _ => tracing::warn!(target: "lua", "{msg}"),
            }
            Ok(Out::Ok(vec![]))
        })?,
    )?;
    r.raw_set(
        "setresp",
        lib_fn(lua, mt, |lua, a| {
            if a.len() != 1 {
                return raise(lua, "redis.setresp() requires one argument.");
            }
            let resp = match a.into_iter().next() {
                Some(Value::Integer(i)) => i as f64,
                Some(Value::Number(n)) => n,
                Some(Value::String(s)) => s
                    .to_str()
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0.0),
                _ => 0.0,
            } as i64;
            if resp != 2 && resp != 3 {
                return raise(lua, "RESP version must be 2 or 3.");
            }
            if let Some(mut rc) = lua.app_data_mut::<RunCtx>() {
                rc.client.resp = resp as u8;
            }
            Ok(Out::Ok(vec![]))
        })?,
    )?;
    r.raw_set(
        "set_repl",
        lib_fn(lua, mt, |lua, a| {
            if a.len() != 1 {
                return raise(lua, "redis.set_repl() requires two arguments.");
            }
            let f = match a.into_iter().next() {
                Some(Value::Integer(i)) => i,
                Some(Value::Number(n)) => n as i64,
                _ => 0,
            };
            if f & !3 != 0 {
                return raise(
                    lua,
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                );
            }
            Ok(Out::Ok(vec![]))
        })?,
    )?;
    r.raw_set(
        "replicate_commands",
        lib_fn(lua, mt, |_, _| Ok(Out::Ok(vec![Value::Boolean(true)])))?,
    )?;
    r.raw_set(
        "breakpoint",
        lib_fn(lua, mt, |_, _| Ok(Out::Ok(vec![Value::Boolean(false)])))?,
    )?;
    r.raw_set("debug", lib_fn(lua, mt, |_, _| Ok(Out::Ok(vec![])))?)?;
    r.raw_set(
        "acl_check_cmd",
        lib_fn(lua, mt, |lua, a| {
            let args = match lua_args(lua, a)? {
                Ok(v) => v,
                Err(msg) => return raise(lua, msg),
            };
            if script_lookup(&args).is_none() {
                return raise(lua, "Invalid command passed to redis.acl_check_cmd()");
            }
            Ok(Out::Ok(vec![Value::Boolean(true)]))
        })?,
    )?;
    r.raw_set("REDIS_VERSION", crate::version::REDIS_VERSION)?;
    r.raw_set("REDIS_VERSION_NUM", crate::version::version_num())?;
    for (k, v) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
    ] {
        r.raw_set(k, v)?;
    }
    Ok(r)
}

/// Lua arguments to command arguments (luaArgsToRedisArgv): numbers as `%.17g`.
fn lua_args(lua: &Lua, a: MultiValue) -> mlua::Result<Result<Vec<Bytes>, &'static str>> {
    let _ = lua;
    if a.is_empty() {
        return Ok(Err(
            "Please specify at least one argument for this redis lib call",
        ));
    }
    let mut out = Vec::with_capacity(a.len());
    for v in a {
        match v {
            Value::String(s) => out.push(Bytes::copy_from_slice(&s.as_bytes())),
            Value::Integer(i) => out.push(Bytes::from(i.to_string())),
            Value::Number(n) => out.push(Bytes::from(crate::num::format_double(n))),
            _ => {
                return Ok(Err(
                    "Lua redis lib command arguments must be strings or integers",
                ))
            }
        }
    }
    Ok(Ok(out))
}

/// lookupCommand as scripts see it: a container with a subcommand argument resolves to the
/// subcommand (unknown subcommand: no command); alone, to the container itself.
fn script_lookup(args: &[Bytes]) -> Option<(&'static Command, Option<&'static Command>)> {
    let c = cmd::lookup(&args[0])?;
    if c.subcommands.is_empty() || args.len() < 2 {
        return Some((c, None));
    }
    cmd::lookup_sub(c, &args[1]).map(|s| (s, Some(c)))
}

/// redis.call (raise = true) and redis.pcall (scriptCall's checks, then the command).
fn redis_call(lua: &Lua, a: MultiValue, raise_err: bool) -> mlua::Result<Out> {
    let fail = |lua: &Lua, msg: &str| -> mlua::Result<Out> {
        let t = convert::error_table(lua, msg.as_bytes())?;
        Ok(if raise_err {
            Out::Raise(Value::Table(t))
        } else {
            Out::Ok(vec![Value::Table(t)])
        })
    };
    let args = match lua_args(lua, a)? {
        Ok(v) => v,
        Err(msg) => return fail(lua, msg),
    };
    let Some((c, parent)) = script_lookup(&args) else {
        return fail(lua, "Unknown Redis command called from script");
    };
    if !c.arity_ok(args.len()) {
        return fail(
            lua,
            "Wrong number of args calling Redis command from script",
        );
    }
    if c.has(flags::NOSCRIPT) || parent.is_some_and(|p| p.has(flags::NOSCRIPT)) {
        return fail(lua, "This Redis command is not allowed from script");
    }
    let (reply, resp) = {
        let rc = match lua.app_data_mut::<RunCtx>() {
            Some(rc) if rc.state.is_some() => rc,
            _ => {
                return fail(
                    lua,
                    "redis.call/pcall can only be called inside a script invocation",
                )
            }
        };
        let mut rc = rc;
        if rc.readonly && c.has(flags::WRITE | flags::MAY_REPLICATE) {
            drop(rc);
            return fail(
                lua,
                "Write commands are not allowed from read-only scripts.",
            );
        }
        let rc = &mut *rc;
        let Some(state) = rc.state.as_ref() else {
            return fail(
                lua,
                "redis.call/pcall can only be called inside a script invocation",
            );
        };
        if c.has(flags::WRITE) {
            state.scripting.wrote.store(true, Ordering::Release);
        }
        let mut ctx = Ctx {
            state,
            client: &mut rc.client,
            now: rc.now,
            in_script: true,
        };
        let reply = cmd::call(&mut ctx, c, &args);
        (reply, rc.client.resp)
    };
    let is_err = reply.is_error();
    let v = convert::reply_to_lua(lua, &reply, resp)?;
    Ok(if is_err && raise_err {
        Out::Raise(v)
    } else {
        Out::Ok(vec![v])
    })
}
