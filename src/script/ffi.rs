//! The few raw C functions the Lua environment needs. They exist because Redis raises errors
//! whose value is a Lua table (`{err=...}`) from C functions, and reports the caller's line;
//! mlua callbacks can only raise wrapped Rust errors, so every library function that may fail
//! is an mlua callback wrapped in [`tramp`], a C closure that raises what the callback asks for.
//! None of these functions keeps a Rust value with a destructor alive across `lua_error`.

use super::HookState;
use mlua::ffi;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

/// Registry key of the light userdata pointing at the running script's [`HookState`].
pub const HOOK_STATE_KEY: &std::ffi::CStr = c"resplock.hook";

/// Calls its upvalue (the implementation) with all arguments. The implementation returns a
/// status first: `false` then the results; `true` then a value to raise as is; the string
/// `"where"` then a message to raise prefixed with the caller's position (as `luaL_error`);
/// a number N then a message to raise through `luaL_argerror(N, msg)`, which names the
/// function as the caller's code called it; a table and a count N: the N results, in the table
/// (more than an mlua callback can push; a C function may return up to LUAI_MAXCSTACK).
pub unsafe extern "C-unwind" fn tramp(l: *mut ffi::lua_State) -> c_int {
    let n = ffi::lua_gettop(l);
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

/// Lua 5.1's `unpack` with the fix for CVE-2025-46817 (Redis 8.2.2's lbaselib.c): the count
/// `e - i + 1` is computed without signed overflow, so no range can wrap into a small count
/// while the copy loop runs over the whole range. Installed as the scripts' global `unpack`.
pub unsafe extern "C-unwind" fn unpack(l: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(l, 1, ffi::LUA_TTABLE);
    // luaL_optint / luaL_checkint: a lua_Integer cast to C int, as the original.
    let mut i = ffi::luaL_optinteger(l, 2, 1) as c_int;
    let e = if ffi::lua_type(l, 3) <= 0 {
        ffi::lua_objlen(l, 1) as c_int
    } else {
        ffi::luaL_checkinteger(l, 3) as c_int
    };
    if i > e {
        return 0;
    }
    // Elements minus one, in unsigned arithmetic: never negative, never wrapped.
    let n = (e as u32).wrapping_sub(i as u32);
    if n >= i32::MAX as u32 || ffi::lua_checkstack(l, (n + 1) as c_int) == 0 {
        return ffi::luaL_error(l, c"too many results to unpack".as_ptr());
    }
    ffi::lua_rawgeti(l, 1, i as _);
    while i < e {
        i += 1;
        ffi::lua_rawgeti(l, 1, i as _);
    }
    (n + 1) as c_int
}

/// `make_tramp(impl)` returns the C closure [`tramp`] over `impl`.
pub unsafe extern "C-unwind" fn make_tramp(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_settop(l, 1);
    ffi::lua_pushcclosure(l, tramp, 1);
    1
}

/// The count hook of a running script: runs the caller's tick (which keeps the rest of the
/// server responsive), and once SCRIPT KILL set the flag raises Redis's error, firing from
/// then on every line so `pcall` cannot swallow it for long.
pub unsafe extern "C-unwind" fn kill_hook(l: *mut ffi::lua_State, _ar: *mut ffi::lua_Debug) {
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, HOOK_STATE_KEY.as_ptr());
    let hook = ffi::lua_touserdata(l, -1) as *const HookState;
    ffi::lua_settop(l, -2);
    if hook.is_null() {
        return;
    }
    ((*hook).tick)();
    if !(*hook).kill.load(Ordering::Acquire) {
        return;
    }
    ffi::lua_sethook(l, Some(kill_hook), ffi::LUA_MASKLINE, 0);
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_pushstring(l, c"ERR Script killed by user with SCRIPT KILL...".as_ptr());
    ffi::lua_setfield(l, -2, c"err".as_ptr());
    ffi::lua_error(l);
}

/// Install (count > 0) or remove the kill hook and register the hook state's address.
pub unsafe extern "C-unwind" fn set_hook(
    l: *mut ffi::lua_State,
    hook: *const HookState,
    count: c_int,
) {
    ffi::lua_pushlightuserdata(l, hook as *mut _);
    ffi::lua_setfield(l, ffi::LUA_REGISTRYINDEX, HOOK_STATE_KEY.as_ptr());
    if count > 0 {
        ffi::lua_sethook(l, Some(kill_hook), ffi::LUA_MASKCOUNT, count);
    } else {
        ffi::lua_sethook(l, None, 0, 0);
    }
}
