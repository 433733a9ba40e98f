//! The raw C functions the Lua environment needs. They exist because Redis raises errors whose
//! value is a Lua table (`{err=...}`) from C functions, reports the caller's line, and marks
//! tables read-only through its patched Lua (`vendor/lua-src`); mlua callbacks can only raise
//! wrapped Rust errors, so every library function that may fail is an mlua callback wrapped in
//! [`tramp`], a C closure that raises what the callback asks for. None of these functions keeps
//! a Rust value with a destructor alive across `lua_error`.

use super::host::{HookState, HOOK_EVERY};
use mlua::ffi;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;
use std::time::Instant;

extern "C-unwind" {
    /// Redis's Lua patch: mark the table at `idx` read-only (`enabled` 1) or writable (0).
    fn lua_enablereadonlytable(l: *mut ffi::lua_State, idx: c_int, enabled: c_int);
    /// Redis's Lua patch: whether the table at `idx` is read-only.
    fn lua_isreadonlytable(l: *mut ffi::lua_State, idx: c_int) -> c_int;
    /// resplock's Lua patch: whether the table at `idx` has no metatable and exactly the keys
    /// `1..=n`, all in its array part (never raises).
    pub fn lua_isplainarray(l: *mut ffi::lua_State, idx: c_int, n: c_int) -> c_int;
    /// resplock's Lua patch: ask the running code to stop inside a long C call: the next check
    /// in the loops of the string, table and buffer functions and of the lexer unwinds with
    /// LUA_ERRMEM, once. A plain store: other threads may call it while code runs.
    pub fn lua_interrupt(l: *mut ffi::lua_State);
    /// resplock's Lua patch: make the next interrupt check call the callback set by
    /// [`lua_setinterruptcb`] and go on, unless a [`lua_interrupt`] is pending. A plain store,
    /// like `lua_interrupt`; the two must not race (both are called under `current`'s lock).
    pub fn lua_softinterrupt(l: *mut ffi::lua_State);
    /// resplock's Lua patch: the callback of [`lua_softinterrupt`].
    pub fn lua_setinterruptcb(l: *mut ffi::lua_State, cb: Option<extern "C" fn()>);
    /// resplock's Lua patch: forget a pending interrupt and where the last one fired.
    pub fn lua_clearinterrupt(l: *mut ffi::lua_State);
    /// resplock's Lua patch: the flag of a pending interrupt, which long loops poll.
    pub fn lua_getinterrupt(l: *mut ffi::lua_State) -> *const c_int;
    /// resplock's Lua patch: unwind (LUA_ERRMEM) if an interrupt is pending, clearing it.
    pub fn lua_checkinterrupt(l: *mut ffi::lua_State);
    /// resplock's Lua patch: the current line of the innermost Lua function when an interrupt
    /// fired (-1: no Lua function; -2: none fired since `lua_clearinterrupt`) and that
    /// function's source.
    pub fn lua_interruptedat(
        l: *mut ffi::lua_State,
        source: *mut *const std::os::raw::c_char,
        len: *mut usize,
    ) -> c_int;
}

/// The tick the soft interrupt calls (every server of a process passes the same one); set
/// by the watchdog when it first raises one.
pub static SOFT_TICK: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// The callback of [`lua_softinterrupt`]: the server's tick, on the thread running the
/// script.
pub extern "C" fn soft_tick() {
    if let Some(tick) = SOFT_TICK.get() {
        tick();
    }
}

/// Registry key of the light userdata pointing at the running script's [`HookState`].
pub const HOOK_STATE_KEY: &std::ffi::CStr = c"resplock.hook";
/// Registry key of the light userdata pointing at the FUNCTION LOAD deadline.
const LOAD_DEADLINE_KEY: &std::ffi::CStr = c"resplock.load_deadline";

/// Calls its upvalue (the implementation) with all arguments. The implementation returns a
/// status first: `false` then the results; `true` then a value to raise as is; the string
/// `"where"` then a message to raise prefixed with the caller's position (as `luaL_error`);
/// a number N then a message to raise through `luaL_argerror(N, msg)`, which names the
/// function as the caller's code called it; a table and a count N then the N results it
/// holds; [`stopped_marker`] alone when the implementation saw the script asked to stop
/// (the pending interrupt then unwinds; if the kill hook consumed it already, the call
/// returns nothing and the hook raises at the next instruction).
///
/// More than [`PACK_ARGS`] arguments are passed packed, as `(PACKED, table, n)`: an mlua
/// callback cannot return while its frame holds almost LUAI_MAXCSTACK values, and Redis takes
/// up to that many (`redis.call('lpush', k, unpack(t))` with 7999 values).
pub unsafe extern "C-unwind" fn tramp(l: *mut ffi::lua_State) -> c_int {
    let mut n = ffi::lua_gettop(l);
    if n > PACK_ARGS {
        ffi::lua_createtable(l, n, 0);
        ffi::lua_insert(l, 1);
        for i in (1..=n).rev() {
            ffi::lua_rawseti(l, 1, i as ffi::lua_Integer);
        }
        ffi::lua_pushlightuserdata(l, packed_marker());
        ffi::lua_insert(l, 1);
        ffi::lua_pushinteger(l, n as ffi::lua_Integer);
        n = 3;
    }
    ffi::lua_pushvalue(l, ffi::lua_upvalueindex(1));
    ffi::lua_insert(l, 1);
    ffi::lua_call(l, n, ffi::LUA_MULTRET);
    let nres = ffi::lua_gettop(l);
    if nres == 0 {
        return 0;
    }
    match ffi::lua_type(l, 1) {
        ffi::LUA_TBOOLEAN if ffi::lua_toboolean(l, 1) != 0 => {
            ffi::lua_settop(l, 2);
            ffi::lua_error(l)
        }
        ffi::LUA_TNUMBER => {
            let narg = ffi::lua_tonumber(l, 1) as c_int;
            ffi::lua_settop(l, 2);
            let msg = ffi::lua_tostring(l, 2);
            ffi::luaL_argerror(l, narg, msg)
        }
        // Many results, handed over in a table (see `redis_lib::MANY_RESULTS`): a C function
        // may return up to LUAI_MAXCSTACK values where an mlua callback cannot push them.
        ffi::LUA_TTABLE => {
            ffi::lua_settop(l, 2);
            let count = ffi::lua_tointeger(l, 2) as c_int;
            ffi::lua_settop(l, 1);
            if ffi::lua_checkstack(l, count) == 0 {
                return ffi::luaL_error(l, c"stack overflow (too many results)".as_ptr());
            }
            for i in 1..=count {
                ffi::lua_rawgeti(l, 1, i as _);
            }
            ffi::lua_remove(l, 1);
            count
        }
        ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(l, 1) == stopped_marker() => {
            ffi::lua_settop(l, 0);
            lua_checkinterrupt(l);
            0
        }
        ffi::LUA_TSTRING => {
            ffi::lua_settop(l, 2);
            ffi::luaL_where(l, 1);
            ffi::lua_insert(l, 2);
            ffi::lua_concat(l, 2);
            ffi::lua_error(l)
        }
        _ => {
            ffi::lua_remove(l, 1);
            nres - 1
        }
    }
}

/// Above this many arguments [`tramp`] packs them into a table.
pub const PACK_ARGS: c_int = 256;

static PACKED: u8 = 0;
static STOPPED: u8 = 0;

/// The light userdata a library implementation returns to say it stopped for a kill.
pub fn stopped_marker() -> *mut std::ffi::c_void {
    &STOPPED as *const u8 as *mut std::ffi::c_void
}

/// The light userdata that marks packed arguments (see [`tramp`]).
pub fn packed_marker() -> *mut std::ffi::c_void {
    &PACKED as *const u8 as *mut std::ffi::c_void
}

/// `make_tramp(impl)` returns the C closure [`tramp`] over `impl`.
pub unsafe extern "C-unwind" fn make_tramp(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 1);
    ffi::lua_pushcclosure(l, tramp, 1);
    1
}

/// The count hook of a running script: runs the caller's tick (which keeps the rest of the
/// server responsive), and once SCRIPT KILL or FUNCTION KILL set the flag raises Redis's error,
/// firing from then on every line so `pcall` cannot swallow it for long. Another thread may
/// have made it fire at the next instruction (see `Scripting`'s watchdog); it then goes back
/// to every [`HOOK_EVERY`] instructions.
pub unsafe extern "C-unwind" fn kill_hook(l: *mut ffi::lua_State, _ar: *mut ffi::lua_Debug) {
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, HOOK_STATE_KEY.as_ptr());
    let hook = ffi::lua_touserdata(l, -1) as *const HookState;
    ffi::lua_settop(l, -2);
    if hook.is_null() {
        return;
    }
    ((*hook).tick)();
    if !(*hook).kill.load(Ordering::Acquire) {
        if ffi::lua_gethookcount(l) != HOOK_EVERY {
            ffi::lua_sethook(l, Some(kill_hook), ffi::LUA_MASKCOUNT, HOOK_EVERY);
        }
        return;
    }
    // From here on the hook stops the script; a pending interrupt would only turn its error
    // into a memory error.
    lua_clearinterrupt(l);
    ffi::lua_sethook(l, Some(kill_hook), ffi::LUA_MASKLINE, 0);
    push_error_table(l, crate::error::SCRIPT_KILLED);
    ffi::lua_error(l);
}

/// Push `{err=msg}`, the error value Redis's C functions raise (luaPushError).
unsafe fn push_error_table(l: *mut ffi::lua_State, msg: &str) {
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_pushlstring(l, msg.as_ptr() as *const _, msg.len());
    ffi::lua_setfield(l, -2, c"err".as_ptr());
}

/// Install (count > 0) or remove the kill hook and register the hook state's address.
pub unsafe extern "C-unwind" fn set_hook(
    l: *mut ffi::lua_State,
    hook: *const HookState,
    count: c_int,
) {
    register_hook_state(l, hook);
    install_kill_hook(l, count);
}

/// Register the address of the hook state the kill hook reads (a registry write: the engine
/// does it once, not per run).
pub unsafe fn register_hook_state(l: *mut ffi::lua_State, hook: *const HookState) {
    ffi::lua_pushlightuserdata(l, hook as *mut _);
    ffi::lua_setfield(l, ffi::LUA_REGISTRYINDEX, HOOK_STATE_KEY.as_ptr());
}

/// Install (count > 0) or remove the kill hook, over the hook state registered before.
pub unsafe fn install_kill_hook(l: *mut ffi::lua_State, count: c_int) {
    if count > 0 {
        ffi::lua_sethook(l, Some(kill_hook), ffi::LUA_MASKCOUNT, count);
    } else {
        ffi::lua_sethook(l, None, 0, 0);
    }
}

/// luaEngineLoadHook: FUNCTION LOAD's code gets 500 ms to register its functions.
unsafe extern "C-unwind" fn load_hook(l: *mut ffi::lua_State, _ar: *mut ffi::lua_Debug) {
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, LOAD_DEADLINE_KEY.as_ptr());
    let deadline = ffi::lua_touserdata(l, -1) as *const Instant;
    ffi::lua_settop(l, -2);
    if deadline.is_null() || Instant::now() < *deadline {
        return;
    }
    ffi::lua_sethook(l, Some(load_hook), ffi::LUA_MASKLINE, 0);
    push_error_table(l, crate::error::FUNCTION_LOAD_TIMEOUT);
    ffi::lua_error(l);
}

/// Install the FUNCTION LOAD timeout hook (`deadline` non-null, valid until removed) or remove it.
pub unsafe fn set_load_hook(l: *mut ffi::lua_State, deadline: *const Instant) {
    ffi::lua_pushlightuserdata(l, deadline as *mut _);
    ffi::lua_setfield(l, ffi::LUA_REGISTRYINDEX, LOAD_DEADLINE_KEY.as_ptr());
    if deadline.is_null() {
        ffi::lua_sethook(l, None, 0, 0);
    } else {
        ffi::lua_sethook(l, Some(load_hook), ffi::LUA_MASKCOUNT, 100_000);
    }
}

/// luaProtectedTableError, the `__index` of the globals: reading a missing global is an error.
pub unsafe extern "C-unwind" fn protected_table_error(l: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(l) != 2 {
        ffi::lua_pushstring(
            l,
            c"Wrong number of arguments to luaProtectedTableError".as_ptr(),
        );
        raise_where(l)
    }
    if ffi::lua_isstring(l, -1) == 0 {
        ffi::lua_pushstring(
            l,
            c"Second argument to luaProtectedTableError must be a string or number".as_ptr(),
        );
        raise_where(l)
    }
    ffi::lua_pushstring(
        l,
        c"Script attempted to access nonexistent global variable '".as_ptr(),
    );
    ffi::lua_pushvalue(l, 2);
    ffi::lua_pushstring(l, c"'".as_ptr());
    ffi::lua_concat(l, 3);
    raise_where(l)
}

/// Raise the string on top of the stack prefixed with the caller's position (luaL_error).
unsafe fn raise_where(l: *mut ffi::lua_State) -> ! {
    ffi::luaL_where(l, 1);
    ffi::lua_insert(l, -2);
    ffi::lua_concat(l, 2);
    ffi::lua_error(l)
}

/// luaRedisPcall, Redis's `pcall`: an error table is returned as its `err` string.
pub unsafe extern "C-unwind" fn redis_pcall(l: *mut ffi::lua_State) -> c_int {
    let argc = ffi::lua_gettop(l);
    ffi::lua_pushboolean(l, 1);
    if argc == 0 {
        // Redis calls its placeholder `true`: (false, "attempt to call a boolean value").
        if ffi::lua_pcall(l, 0, ffi::LUA_MULTRET, 0) != 0 {
            ffi::lua_pushboolean(l, 0);
            ffi::lua_insert(l, 1);
        }
        return ffi::lua_gettop(l);
    }
    ffi::lua_insert(l, 1);
    if ffi::lua_pcall(l, argc - 1, ffi::LUA_MULTRET, 0) != 0 {
        ffi::lua_remove(l, 1);
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            ffi::lua_getfield(l, -1, c"err".as_ptr());
            if ffi::lua_isstring(l, -1) != 0 {
                ffi::lua_replace(l, -2);
            }
        }
        ffi::lua_pushboolean(l, 0);
        ffi::lua_insert(l, 1);
    }
    ffi::lua_gettop(l)
}

/// `protect(t)`: luaSetTableProtectionRecursively, read-only `t`, every table reachable from it
/// and their metatables.
pub unsafe extern "C-unwind" fn protect(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 1);
    if ffi::lua_type(l, 1) == ffi::LUA_TTABLE {
        protect_top(l);
    }
    0
}

unsafe fn protect_top(l: *mut ffi::lua_State) {
    if lua_isreadonlytable(l, -1) != 0 {
        return;
    }
    lua_enablereadonlytable(l, -1, 1);
    ffi::luaL_checkstack(l, 3, std::ptr::null());
    ffi::lua_pushnil(l);
    while ffi::lua_next(l, -2) != 0 {
        if ffi::lua_type(l, -1) == ffi::LUA_TTABLE {
            protect_top(l);
        }
        ffi::lua_settop(l, -2);
    }
    if ffi::lua_getmetatable(l, -1) != 0 {
        protect_top(l);
        ffi::lua_settop(l, -2);
    }
}

/// `set_readonly(t, flag)`: lua_enablereadonlytable on one table.
pub unsafe extern "C-unwind" fn set_readonly(l: *mut ffi::lua_State) -> c_int {
    if ffi::lua_type(l, 1) == ffi::LUA_TTABLE {
        lua_enablereadonlytable(l, 1, ffi::lua_toboolean(l, 2));
    }
    0
}

/// `run_eval(handler, f, keys, argv)`: set the KEYS and ARGV globals (the globals are opened
/// for that moment, as luaCallFunction does; nil leaves one as it is), then `f()` under
/// `handler`. Returns `(true, result)` or `(false, error)`.
pub unsafe extern "C-unwind" fn run_eval(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 4);
    // nil: the global already is the table, refilled in place (see `raw::ArgTables`).
    let new_keys = ffi::lua_type(l, 3) != ffi::LUA_TNIL;
    let new_argv = ffi::lua_type(l, 4) != ffi::LUA_TNIL;
    if new_keys || new_argv {
        lua_enablereadonlytable(l, ffi::LUA_GLOBALSINDEX, 0);
        if new_argv {
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"ARGV".as_ptr());
        }
        ffi::lua_settop(l, 3);
        if new_keys {
            ffi::lua_setfield(l, ffi::LUA_GLOBALSINDEX, c"KEYS".as_ptr());
        }
        lua_enablereadonlytable(l, ffi::LUA_GLOBALSINDEX, 1);
    }
    ffi::lua_settop(l, 2);
    finish_run(l, ffi::lua_pcall(l, 0, 1, 1))
}

/// `run_function(globals, handler, f, keys, argv)`: `f(keys, argv)` under `handler` with
/// `globals` as the running thread's globals (the function environment), restored after.
/// Returns `(true, result)` or `(false, error)`.
pub unsafe extern "C-unwind" fn run_function(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 5);
    ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX);
    ffi::lua_insert(l, 1); // 1 old globals, 2 env, 3 handler, 4 f, 5 keys, 6 argv
    ffi::lua_pushvalue(l, 2);
    ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
    ffi::lua_remove(l, 2); // 1 old globals, 2 handler, 3 f, 4 keys, 5 argv
    let status = ffi::lua_pcall(l, 2, 1, 2);
    ffi::lua_pushvalue(l, 1);
    ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
    finish_run(l, status)
}

/// After `lua_pcall` left one value on top: return `(status == 0, value)`.
unsafe fn finish_run(l: *mut ffi::lua_State, status: c_int) -> c_int {
    ffi::lua_pushboolean(l, (status == 0) as c_int);
    ffi::lua_insert(l, -2);
    2
}

/// `load_library(env, env_meta, lib_api, func_globals, code, deadline)`: luaEngineCreate. Runs
/// `code` (a library's body) with `env` as the running thread's globals and `env_meta.__index`
/// pointed at the loading API (`redis.register_function`...), under the FUNCTION LOAD timeout
/// hook, then points `env_meta.__index` back at `func_globals` and restores the globals.
/// Returns `(0, nil)`, `(1, compile error message)` or `(2, error value)`. Nothing here
/// allocates between the switch and the restore except inside the protected calls, so an error
/// can never leave the switched environment behind.
pub unsafe extern "C-unwind" fn load_library(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 6);
    let deadline = ffi::lua_touserdata(l, 6) as *const Instant;
    point_index(l, 2, 3);
    ffi::lua_pushvalue(l, ffi::LUA_GLOBALSINDEX); // 7: the globals to restore
    ffi::lua_pushvalue(l, 1);
    ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
    let mut len = 0usize;
    let code = ffi::lua_tolstring(l, 5, &mut len);
    let status = if ffi::luaL_loadbuffer(l, code, len, c"@user_function".as_ptr()) != 0 {
        1
    } else {
        set_load_hook(l, deadline);
        let s = ffi::lua_pcall(l, 0, 0, 0);
        set_load_hook(l, std::ptr::null());
        if s != 0 {
            2
        } else {
            ffi::lua_pushnil(l);
            0
        }
    };
    point_index(l, 2, 4);
    ffi::lua_pushvalue(l, 7);
    ffi::lua_replace(l, ffi::LUA_GLOBALSINDEX);
    ffi::lua_pushinteger(l, status);
    ffi::lua_insert(l, -2);
    2
}

/// `meta.__index = value` on the read-only metatable at `meta` (the field exists already, so
/// the write allocates nothing).
unsafe fn point_index(l: *mut ffi::lua_State, meta: c_int, value: c_int) {
    lua_enablereadonlytable(l, meta, 0);
    ffi::lua_pushvalue(l, value);
    ffi::lua_setfield(l, meta, c"__index".as_ptr());
    lua_enablereadonlytable(l, meta, 1);
}

/// Create the registry entries the hooks read, so that installing a hook later never
/// allocates.
pub unsafe extern "C-unwind" fn init_registry(l: *mut ffi::lua_State) -> c_int {
    set_load_hook(l, std::ptr::null());
    set_hook(l, std::ptr::null(), 0);
    0
}
