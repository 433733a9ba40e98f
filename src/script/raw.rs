//! The per-call hot path of scripts in Lua's C API: `redis.call`/`redis.pcall`, and a run's
//! setup and scalar result. Through mlua each value moved cost a protected call (a fresh C
//! closure) and a handle on mlua's auxiliary stack: about thirty allocations per run of a lock
//! script, the largest share of its CPU. Here arguments are read straight off the Lua stack and
//! replies pushed straight onto it.
//!
//! The rule kept throughout: a Lua call that may raise (anything that allocates in Lua, whose
//! errors are a longjmp) never runs while a frame of ours owns a value with a destructor. Such
//! calls run inside a protected call whose frames only borrow ([`push_outcome`], [`run`] under
//! [`protected`]), or before any owned value exists.

use super::ffi as sffi;
use super::ldb;
use super::host::{ArgBuffers, HookState, HostPtr, HostSlot};
use crate::error;
use crate::num::{c_ll, format_double};
use crate::reply::Reply;
use bytes::Bytes;
use mlua::{ffi, Function, Lua};
use std::ffi::c_void;
use std::os::raw::c_int;

/// Upvalues of the `redis.call` and `redis.pcall` closures.
const UP_RAISE: c_int = 1;

const UP_SLOT: c_int = 2;

const UP_PUSH: c_int = 3;

/// `redis.call` (`raise`) or `redis.pcall` as a C closure over the engine's host slot.
pub(super) fn call_fn(lua: &Lua, raise: bool, slot: &HostSlot) -> mlua::Result<Function> {
    let slot = slot as *const HostSlot as usize;
    // SAFETY: pushes three values and replaces them by one closure; nothing here raises but
    // the allocation of the closure, which exec_raw protects.
    unsafe {
        lua.exec_raw::<Function>((), move |l| {
            ffi::lua_pushboolean(l, raise as c_int);
            ffi::lua_pushlightuserdata(l, slot as *mut c_void);
            ffi::lua_pushcfunction(l, push_outcome);
            ffi::lua_pushcclosure(l, redis_call, 3);
        })
    }
}

/// What one `redis.call` produced, pushed onto the Lua stack by [`push_outcome`].
enum Outcome {
    /// The arguments were unusable, or no script runs: an error table.
    Bad(&'static str),
    /// Refused before running (scriptCall's checks): an error table its stats ignore.
    Refused(&'static str),
    /// The command's reply and the protocol the script speaks.
    Reply(Reply, u8),
}

/// luaRedisGenericCommand: run the command the arguments name, return its reply as a Lua
/// value, or raise its error (`redis.call`).
unsafe extern "C-unwind" fn redis_call(l: *mut ffi::lua_State) -> c_int {
    if call_and_push(l) {
        ffi::lua_error(l);
    }
    1
}

/// The body of [`redis_call`]: pushes one value and says whether to raise it. Everything it
/// owns is gone when it returns, so the caller may raise.
unsafe fn call_and_push(l: *mut ffi::lua_State) -> bool {
    let raise = ffi::lua_toboolean(l, ffi::lua_upvalueindex(UP_RAISE)) != 0;
    let slot = &*(ffi::lua_touserdata(l, ffi::lua_upvalueindex(UP_SLOT)) as *const HostSlot);
    let mut bufs = slot.1.take();
    let outcome = match read_args(l, &mut bufs) {
        Err(msg) => Outcome::Bad(msg),
        Ok(()) => match slot.0.get() {
            None => Outcome::Bad(error::LUA_CALL_OUTSIDE),
            Some(HostPtr(host)) => {
                // SAFETY: the slot holds the host only while the run that set it is in
                // progress on this thread (see `Scripting::run`).
                let host = &mut *host;
                let args = &bufs.args;
                if let Some(s) = ldb::stepping() {
                    s.log_command(args);
                }
                match host.call(args) {
                    Ok(reply) => Outcome::Reply(reply, host.resp()),
                    Err(msg) => Outcome::Refused(msg),
                }
            }
        },
    };
    if let Some(s) = ldb::stepping() {
        // The debugger logs what the script is handed back (luaPushErrorBuff, then the
        // reply as ldbLogRedisReply reads it).
        match &outcome {
            Outcome::Bad(msg) | Outcome::Refused(msg) => s.log_error(msg.as_bytes()),
            Outcome::Reply(r, resp) => {
                if let Reply::Error(e) = r {
                    s.log_error(&[b"-".as_slice(), e].concat());
                }
                s.log_reply(r, *resp);
            }
        }
    }
    // The buffer's room is about the largest call's arguments (`capacity` after the splits
    // shows only what is left of it).
    let held: usize = bufs.args.iter().map(|a| a.len()).sum();
    bufs.args.clear();
    if bufs.args.capacity() <= KEEP_ARGS && held <= KEEP_ARG_BYTES {
        slot.1.set(bufs);
    } else {
        // A call with many or long arguments does not keep its buffers for the rest.
        drop(bufs);
    }
    let is_error = match &outcome {
        Outcome::Reply(r, _) => r.is_error(),
        _ => true,
    };
    // Push under protection: an out-of-memory error must not longjmp over `outcome`.
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(UP_PUSH));
    ffi::lua_pushlightuserdata(l, &outcome as *const Outcome as *mut c_void);
    let status = ffi::lua_pcall(l, 1, 1, 0);
    drop(outcome);
    // A failed push left its error on top: raise it whatever the caller was.
    status != 0 || (is_error && raise)
}

/// Arguments a kept [`ArgBuffers`] vector may have room for.
const KEEP_ARGS: usize = 64;
/// Bytes a kept [`ArgBuffers`] buffer may have room for.
const KEEP_ARG_BYTES: usize = 64 << 10;

/// luaArgsToRedisArgv: strings as they are, numbers as `%.17g`; anything else refuses the
/// call. Fills `bufs.args` (empty on entry); all arguments are split from `bufs.bytes`, which
/// gets its room back once the previous call's arguments are gone, so a call usually
/// allocates nothing.
unsafe fn read_args(l: *mut ffi::lua_State, bufs: &mut ArgBuffers) -> Result<(), &'static str> {
    let n = ffi::lua_gettop(l);
    if n == 0 {
        return Err(error::LUA_CALL_NO_ARGS);
    }
    let mut total = 0;
    for i in 1..=n {
        total += match ffi::lua_type(l, i) {
            ffi::LUA_TSTRING => ffi::lua_objlen(l, i),
            ffi::LUA_TNUMBER => 24,
            _ => return Err(error::LUA_CALL_BAD_ARG),
        };
    }
    let buf = &mut bufs.bytes;
    buf.reserve(total);
    bufs.args.reserve(n as usize);
    for i in 1..=n {
        if ffi::lua_type(l, i) == ffi::LUA_TNUMBER {
            buf.extend_from_slice(format_double(ffi::lua_tonumber(l, i)).as_bytes());
        } else {
            buf.extend_from_slice(string_at(l, i));
        }
        bufs.args.push(buf.split().freeze());
    }
    Ok(())
}

/// The string at `idx` (which must be a string: no conversion, so nothing allocates).
unsafe fn string_at<'a>(l: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    let p = ffi::lua_tolstring(l, idx, &mut len);
    if p.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(p as *const u8, len)
}

/// `push_outcome(outcome)`, called protected by [`call_and_push`]: pushes the [`Outcome`]
/// its light userdata points at. Its frames only borrow.
unsafe extern "C-unwind" fn push_outcome(l: *mut ffi::lua_State) -> c_int {
    let outcome = &*(ffi::lua_touserdata(l, 1) as *const Outcome);
    match outcome {
        Outcome::Bad(msg) => push_error_table(l, split_error(msg.as_bytes()), false),
        Outcome::Refused(msg) => push_error_table(l, split_error(msg.as_bytes()), true),
        Outcome::Reply(r, resp) => push_reply(l, r, *resp),
    }
    1
}

/// `{err="CODE msg"}` as luaPushErrorBuff builds it from `(code, msg)`; `ignore_stats` marks
/// an error already counted (`ignore_error_stats_update`).
unsafe fn push_error_table(
    l: *mut ffi::lua_State,
    (code, msg): (&[u8], &[u8]),
    ignore_stats: bool,
) {
    ffi::lua_createtable(l, 0, 2);
    push_bytes(l, code);
    push_bytes(l, b" ");
    push_bytes(l, msg);
    ffi::lua_concat(l, 3);
    ffi::lua_setfield(l, -2, c"err".as_ptr());
    if ignore_stats {
        ffi::lua_pushboolean(l, 1);
        ffi::lua_setfield(l, -2, c"ignore_error_stats_update".as_ptr());
    }
}

/// An error text's code and message as luaPushErrorBuff splits them: a leading `-CODE ` is
/// split off, a message without one gets `ERR`, and CR/LF are trimmed from both ends.
pub(super) fn split_error(text: &[u8]) -> (&[u8], &[u8]) {
    match text.strip_prefix(b"-") {
        Some(rest) => split_code(rest),
        None => (b"ERR", trim_crlf(text)),
    }
}

/// An error reply's text (no leading `-`): its code up to the first space, then the message.
fn split_code(rest: &[u8]) -> (&[u8], &[u8]) {
    match rest.iter().position(|&c| c == b' ') {
        Some(p) => (&rest[..p], trim_crlf(&rest[p + 1..])),
        None => (b"ERR", trim_crlf(rest)),
    }
}

fn trim_crlf(msg: &[u8]) -> &[u8] {
    let crlf = |c: &u8| *c == b'\r' || *c == b'\n';
    let s = msg.iter().position(|c| !crlf(c)).unwrap_or(msg.len());
    let e = msg.iter().rposition(|c| !crlf(c)).map_or(s, |e| e + 1);
    &msg[s..e]
}

unsafe fn push_bytes(l: *mut ffi::lua_State, b: &[u8]) {
    ffi::lua_pushlstring(l, b.as_ptr() as *const _, b.len());
}

/// `{key=<value on top>}`, replacing the value.
unsafe fn wrap_single(l: *mut ffi::lua_State, key: &std::ffi::CStr) {
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_insert(l, -2);
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// redisProtocolToLuaType: a command's reply as the script sees it, in the script's protocol
/// (`resp`). Exactly one value is pushed.
unsafe fn push_reply(l: *mut ffi::lua_State, r: &Reply, resp: u8) {
    ffi::luaL_checkstack(l, 4, std::ptr::null());
    let r3 = resp >= 3;
    match r {
        Reply::Simple(s) => {
            push_bytes(l, s);
            wrap_single(l, c"ok");
        }
        Reply::Error(e) => push_error_table(l, split_code(e), true),
        Reply::Int(n) => ffi::lua_pushnumber(l, *n as f64),
        Reply::Bulk(b) => push_bytes(l, b),
        Reply::Nil | Reply::NilArray => {
            if r3 {
                ffi::lua_pushnil(l)
            } else {
                ffi::lua_pushboolean(l, 0)
            }
        }
        Reply::Array(items) | Reply::Push(items) => push_array(l, items, resp),
        Reply::Set(items) if r3 => {
            // Not presized: Redis's lua_newtable grows the table as members arrive, and a
            // table's iteration order (what the script sees, and returns) follows its growth.
            ffi::lua_createtable(l, 0, 0);
            for it in items.iter() {
                push_reply(l, it, resp);
                if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                    ffi::lua_settop(l, -2);
                } else {
                    ffi::lua_pushboolean(l, 1);
                    ffi::lua_rawset(l, -3);
                }
            }
            wrap_single(l, c"set");
        }
        Reply::Set(items) => push_array(l, items, resp),
        Reply::Map(pairs) if r3 => {
            // Not presized, as for sets: a map with null values (XINFO's lag) leaves fewer
            // entries than pairs, and a bigger table would iterate in another order.
            ffi::lua_createtable(l, 0, 0);
            for (k, v) in pairs.iter() {
                push_reply(l, k, resp);
                if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
                    ffi::lua_settop(l, -2);
                    continue;
                }
                push_reply(l, v, resp);
                ffi::lua_rawset(l, -3);
            }
            wrap_single(l, c"map");
        }
        Reply::Map(pairs) => {
            ffi::lua_createtable(l, (pairs.len() * 2) as c_int, 0);
            let mut i = 1;
            for (k, v) in pairs.iter() {
                push_reply(l, k, resp);
                set_index(l, i);
                push_reply(l, v, resp);
                set_index(l, i + 1);
                i += 2;
            }
        }
        Reply::Double(d) => {
            if r3 {
                ffi::lua_pushnumber(l, *d);
                wrap_single(l, c"double");
            } else {
                push_formatted(l, *d);
            }
        }
        Reply::HumanDouble(d) => {
            // Redis hands Lua the printed text: RESP3 parses it back into a number.
            let mut buf = [0u8; 400];
            let n = human_text(*d, &mut buf);
            if r3 {
                let v = std::str::from_utf8(&buf[..n])
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .unwrap_or(*d);
                ffi::lua_pushnumber(l, v);
                wrap_single(l, c"double");
            } else {
                push_bytes(l, &buf[..n]);
            }
        }
        Reply::Bool(b) => {
            if r3 {
                ffi::lua_pushboolean(l, *b as c_int)
            } else {
                ffi::lua_pushnumber(l, if *b { 1.0 } else { 0.0 })
            }
        }
        Reply::Verbatim(s) => {
            push_bytes(l, s);
            if r3 {
                ffi::lua_createtable(l, 0, 2);
                ffi::lua_pushstring(l, c"txt".as_ptr());
                ffi::lua_setfield(l, -2, c"format".as_ptr());
                ffi::lua_insert(l, -2);
                ffi::lua_setfield(l, -2, c"string".as_ptr());
                wrap_single(l, c"verbatim_string");
            }
        }
        // Only commands scripts may not call (SUBSCRIBE...) answer this way.
        Reply::NoReply => ffi::lua_pushboolean(l, 0),
        // Lua never sees attributes (redisProtocolToLuaType skips them).
        Reply::Attributed(_, r) => push_reply(l, r, resp),
        Reply::BigNumber(s) => {
            push_bytes(l, s);
            if r3 {
                wrap_single(l, c"big_number");
            }
        }
    }
}

/// `%.17g` of `d` pushed as a string, formatted into a stack buffer first so no owned string
/// is alive when the push may raise.
unsafe fn push_formatted(l: *mut ffi::lua_State, d: f64) {
    let mut buf = [0u8; 64];
    let n = {
        let s = format_double(d);
        let n = s.len().min(buf.len());
        buf[..n].copy_from_slice(&s.as_bytes()[..n]);
        n
    };
    push_bytes(l, &buf[..n]);
}

/// A human double's text in `buf` (no owned value may live across a Lua call that raises).
fn human_text(d: f64, buf: &mut [u8; 400]) -> usize {
    let s = crate::num::format_human(d);
    let n = s.len().min(buf.len());
    buf[..n].copy_from_slice(&s.as_bytes()[..n]);
    n
}

/// `t[i] = <value on top>` for the table under it; a nil is skipped (popped), as setting a
/// nil element is a no-op.
unsafe fn set_index(l: *mut ffi::lua_State, i: usize) {
    if ffi::lua_type(l, -1) == ffi::LUA_TNIL {
        ffi::lua_settop(l, -2);
    } else {
        ffi::lua_rawseti(l, -2, i as _);
    }
}

unsafe fn push_array(l: *mut ffi::lua_State, items: &[Reply], resp: u8) {
    ffi::lua_createtable(l, items.len() as c_int, 0);
    for (i, it) in items.iter().enumerate() {
        push_reply(l, it, resp);
        set_index(l, i + 1);
    }
}

/// What one run needs, for [`run`]: registry references of the runner, its handler (and for
/// a function the environment) and the compiled script or callback.
pub(super) struct RunParams<'a> {
    /// Registry references: the runner C function, then its leading arguments (the handler
    /// for EVAL; the environment and the handler for a function).
    pub runner: &'a [c_int],
    /// Registry reference of the script's compiled chunk or the function's callback.
    pub func: c_int,
    pub keys: &'a [Bytes],
    pub argv: &'a [Bytes],
    pub hook: *const HookState,
    /// Whether `hook` must be registered first (the engine registered another, or none).
    pub register_hook: bool,
    /// Instructions between two runs of the count hook.
    pub hook_every: c_int,
    /// Under the Lua debugger: its line hook instead of the count hook.
    pub debug: bool,
}

/// A script's result when it is a scalar, taken off the stack at once; tables and errors go
/// the general way (through mlua values).
pub(super) enum Scalar {
    /// Not a scalar (or the run failed): see the values the run left.
    Other,
    Nil,
    Bool(bool),
    Int(i64),
    Str(Bytes),
}

/// One run (inside mlua's `exec_raw`, which protects it): push the runner and its arguments
/// with KEYS and ARGV built in place, run under the count hook, and leave `(ok, value)`. A
/// scalar result is moved into `out` and its value replaced by nil.
///
/// # Safety
/// `l` is the engine's state inside a protected call, the registry references are live, and
/// `p.hook` outlives the run.
pub(super) unsafe fn run(
    l: *mut ffi::lua_State,
    p: &RunParams,
    tables: Option<&mut ArgTables>,
    out: &mut Scalar,
) {
    ffi::luaL_checkstack(l, 8, std::ptr::null());
    for &r in p.runner {
        ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, r as _);
    }
    ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, p.func as _);
    match tables {
        Some(t) => {
            push_reused(l, t, 0, p.keys);
            push_reused(l, t, 1, p.argv);
            t.installed = true;
        }
        None => {
            push_strings(l, p.keys);
            push_strings(l, p.argv);
        }
    }
    if p.register_hook {
        sffi::register_hook_state(l, p.hook);
    }
    if p.debug {
        ffi::lua_sethook(
            l,
            Some(super::ldb::ldb_hook),
            ffi::LUA_MASKLINE | ffi::LUA_MASKCOUNT,
            super::ldb::HOOK_COUNT,
        );
    } else {
        sffi::install_kill_hook(l, p.hook_every);
    }
    ffi::lua_call(l, p.runner.len() as c_int + 2, 2);
    sffi::install_kill_hook(l, 0);
    if ffi::lua_toboolean(l, -2) == 0 {
        return;
    }
    let scalar = match ffi::lua_type(l, -1) {
        ffi::LUA_TNIL => Scalar::Nil,
        ffi::LUA_TBOOLEAN => Scalar::Bool(ffi::lua_toboolean(l, -1) != 0),
        ffi::LUA_TNUMBER => Scalar::Int(c_ll(ffi::lua_tonumber(l, -1))),
        ffi::LUA_TSTRING => Scalar::Str(Bytes::copy_from_slice(string_at(l, -1))),
        _ => return,
    };
    // From here nothing may raise: both only shrink or reuse the stack.
    *out = scalar;
    ffi::lua_settop(l, -2);
    ffi::lua_pushnil(l);
}

/// The C function [`protected`] calls: runs the closure its light userdata points at on a
/// stack holding nothing else, and returns what the closure left.
pub(super) unsafe extern "C-unwind" fn protected_entry(l: *mut ffi::lua_State) -> c_int {
    let f = ffi::lua_touserdata(l, 1) as *mut &mut dyn FnMut(*mut ffi::lua_State);
    ffi::lua_settop(l, 0);
    (*f)(l);
    ffi::lua_gettop(l)
}

/// Run `f` on `l` in protected mode, as mlua's `exec_raw` does, without the two C closures
/// `exec_raw` creates on every call (its error handler and trampoline: garbage for the
/// collector and a tenth of an unlock script's fixed cost). `entry` is the registry reference
/// of [`protected_entry`]; the caller has room for two values on the stack. Returns
/// `lua_pcall`'s status: 0 with what `f` left on top of the stack, else the error value.
///
/// # Safety
/// `l` is a state this thread owns; `f` must not panic, and keeps no value with a destructor
/// alive where it may raise (a Lua error unwinds past it).
pub(super) unsafe fn protected(
    l: *mut ffi::lua_State,
    entry: c_int,
    f: &mut dyn FnMut(*mut ffi::lua_State),
) -> c_int {
    let mut f = f;
    ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, entry as _);
    ffi::lua_pushlightuserdata(l, (&mut f) as *mut &mut dyn FnMut(_) as *mut c_void);
    ffi::lua_pcall(l, 1, ffi::LUA_MULTRET, 0)
}

/// EVAL's KEYS and ARGV tables, kept from one run to the next. Redis builds both afresh for
/// every run (luaCreateArray): two tables of garbage per script call, the largest part of
/// what a lock script leaves for the collector. A script cannot keep a reference to either
/// past its run (its globals are read-only, and so is every table they reach), so refilling
/// the same two is invisible to it, provided it finds exactly its own keys and arguments:
/// a table a script changed beyond its items (an added field, a metatable) is replaced.
/// Functions get theirs afresh: a library may keep a function's arguments in an upvalue.
pub(super) struct ArgTables {
    /// Registry references of the KEYS and ARGV tables.
    pub refs: [c_int; 2],
    /// How many items each held when last filled.
    pub lens: [usize; 2],
    /// Whether the globals KEYS and ARGV are these two tables (false until a run set them,
    /// and after a run that failed before its script started).
    pub installed: bool,
}

/// Tables that held more items than this are replaced rather than refilled: checking a
/// table walks its whole array part, which keeps the size of its largest filling.
const REUSE_MAX: usize = 64;

/// Push KEYS (`which` 0) or ARGV (1) for a run: nil after refilling the kept table in place
/// (the global already is that table), or a new table made the kept one, which the runner
/// then makes the global.
unsafe fn push_reused(l: *mut ffi::lua_State, t: &mut ArgTables, which: usize, items: &[Bytes]) {
    let last = t.lens[which];
    ffi::lua_rawgeti(l, ffi::LUA_REGISTRYINDEX, t.refs[which] as _);
    if t.installed && last <= REUSE_MAX && items.len() <= REUSE_MAX && holds_exactly(l, last) {
        for (i, b) in items.iter().enumerate() {
            push_bytes(l, b);
            ffi::lua_rawseti(l, -2, (i + 1) as _);
        }
        for i in items.len() + 1..=last {
            ffi::lua_pushnil(l);
            ffi::lua_rawseti(l, -2, i as _);
        }
        t.lens[which] = items.len();
        ffi::lua_settop(l, -2);
        ffi::lua_pushnil(l);
        return;
    }
    ffi::lua_settop(l, -2);
    push_strings(l, items);
    ffi::lua_pushvalue(l, -1);
    ffi::lua_rawseti(l, ffi::LUA_REGISTRYINDEX, t.refs[which] as _);
    t.lens[which] = items.len();
}

/// Whether the table on top has no metatable and exactly the fields `1..=n` (whatever their
/// values, which the next filling replaces), all in its array part: one pass over the table's
/// parts in C (a walk with `lua_next` cost more than the refill itself). A table whose items
/// moved to its hash part is replaced, as one with a stray field is.
unsafe fn holds_exactly(l: *mut ffi::lua_State, n: usize) -> bool {
    sffi::lua_isplainarray(l, -1, n as c_int) != 0
}

/// KEYS or ARGV as a Lua array of strings (luaCreateArray).
unsafe fn push_strings(l: *mut ffi::lua_State, items: &[Bytes]) {
    ffi::lua_createtable(l, items.len() as c_int, 0);
    for (i, b) in items.iter().enumerate() {
        push_bytes(l, b);
        ffi::lua_rawseti(l, -2, (i + 1) as _);
    }
}
