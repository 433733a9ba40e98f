//! The sandbox's guarded versions of Lua's raw-access functions, as C functions that run the
//! original C implementation in their own frame once the guard passed. Redis patches its Lua
//! with read-only tables; resplock emulates them with proxies (see `prelude.lua`), and these
//! wrappers keep the emulation invisible: a proxy is refused (`rawset`, `setmetatable`,
//! `table.insert/remove/sort`) or swapped for the table it stands for (`rawget`, `next`,
//! `pairs`), then Lua's own function runs as if the script had called it, so its argument
//! errors name the function as called and carry the script's position, exactly as Redis's.
//! (Written in Lua, they reported `resplock_prelude:N: bad argument #1 to 'raw_rawset'`.)

use mlua::ffi;
use std::os::raw::c_int;
use std::sync::OnceLock;

/// Registry keys the prelude fills: proxy -> real table, proxy -> what getmetatable shows,
/// and the string metatable's proxy.
const PROXY_KEY: &std::ffi::CStr = c"resplock.proxy";
const FAKE_MT_KEY: &std::ffi::CStr = c"resplock.fake_mt";
const STRING_MT_KEY: &std::ffi::CStr = c"resplock.string_mt";

const RO: &std::ffi::CStr = c"Attempt to modify a readonly table";

/// Lua's original C functions, read before the prelude replaces them.
struct Originals {
    rawset: ffi::lua_CFunction,
    rawget: ffi::lua_CFunction,
    next: ffi::lua_CFunction,
    pairs: ffi::lua_CFunction,
    setmetatable: ffi::lua_CFunction,
    getmetatable: ffi::lua_CFunction,
    tinsert: ffi::lua_CFunction,
    tremove: ffi::lua_CFunction,
    tsort: ffi::lua_CFunction,
}

static ORIGINALS: OnceLock<Originals> = OnceLock::new();

unsafe fn global_cfn(
    l: *mut ffi::lua_State,
    table: Option<&std::ffi::CStr>,
    name: &std::ffi::CStr,
) -> Option<ffi::lua_CFunction> {
    match table {
        Some(t) => {
            ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, t.as_ptr());
            ffi::lua_getfield(l, -1, name.as_ptr());
            let f = ffi::lua_tocfunction(l, -1);
            ffi::lua_settop(l, -3);
            f
        }
        None => {
            ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, name.as_ptr());
            let f = ffi::lua_tocfunction(l, -1);
            ffi::lua_settop(l, -2);
            f
        }
    }
}

/// Record Lua's originals (once per process: every state shares the same C library) and
/// push the guarded functions as a table {rawset=..., ...} for the prelude.
pub unsafe extern "C-unwind" fn install(l: *mut ffi::lua_State) -> c_int {
    if ORIGINALS.get().is_none() {
        let t = c"table";
        let all = (|| {
            Some(Originals {
                rawset: global_cfn(l, None, c"rawset")?,
                rawget: global_cfn(l, None, c"rawget")?,
                next: global_cfn(l, None, c"next")?,
                pairs: global_cfn(l, None, c"pairs")?,
                setmetatable: global_cfn(l, None, c"setmetatable")?,
                getmetatable: global_cfn(l, None, c"getmetatable")?,
                tinsert: global_cfn(l, Some(t), c"insert")?,
                tremove: global_cfn(l, Some(t), c"remove")?,
                tsort: global_cfn(l, Some(t), c"sort")?,
            })
        })();
        if let Some(o) = all {
            let _ = ORIGINALS.set(o);
        }
    }
    ffi::lua_createtable(l, 0, 9);
    let set = |name: &std::ffi::CStr, f: ffi::lua_CFunction| {
        ffi::lua_pushcclosure(l, f, 0);
        ffi::lua_setfield(l, -2, name.as_ptr());
    };
    set(c"rawset", rawset);
    set(c"rawget", rawget);
    set(c"next", next);
    set(c"setmetatable", setmetatable);
    set(c"getmetatable", getmetatable);
    set(c"insert", tinsert);
    set(c"remove", tremove);
    set(c"sort", tsort);
    // pairs returns its upvalue as the iterator, as luaB_pairs does: Lua's own next (the
    // table it iterates is already the real one).
    if let Some(o) = ORIGINALS.get() {
        ffi::lua_pushcclosure(l, o.next, 0);
        ffi::lua_pushcclosure(l, pairs, 1);
        ffi::lua_setfield(l, -2, c"pairs".as_ptr());
    }
    1
}

fn orig() -> &'static Originals {
    ORIGINALS.get().expect("sandbox originals installed")
}

/// Is the value at `idx` a proxy? Leaves the stack as it was.
unsafe fn is_proxy(l: *mut ffi::lua_State, idx: c_int) -> bool {
    if ffi::lua_gettop(l) < idx || ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
        return false;
    }
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, PROXY_KEY.as_ptr());
    ffi::lua_pushvalue(l, idx);
    ffi::lua_rawget(l, -2);
    let proxy = ffi::lua_type(l, -1) != ffi::LUA_TNIL;
    ffi::lua_settop(l, -3);
    proxy
}

/// If the value at `idx` is a proxy, put the real table in its place.
unsafe fn unwrap_proxy(l: *mut ffi::lua_State, idx: c_int) {
    if ffi::lua_gettop(l) < idx || ffi::lua_type(l, idx) != ffi::LUA_TTABLE {
        return;
    }
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, PROXY_KEY.as_ptr());
    ffi::lua_pushvalue(l, idx);
    ffi::lua_rawget(l, -2);
    if ffi::lua_type(l, -1) != ffi::LUA_TNIL {
        ffi::lua_replace(l, idx);
        ffi::lua_settop(l, -2);
    } else {
        ffi::lua_settop(l, -3);
    }
}

unsafe fn refuse(l: *mut ffi::lua_State) -> c_int {
    ffi::lua_pushstring(l, RO.as_ptr());
    ffi::lua_error(l)
}

unsafe extern "C-unwind" fn rawset(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        return refuse(l);
    }
    (orig().rawset)(l)
}

unsafe extern "C-unwind" fn rawget(l: *mut ffi::lua_State) -> c_int {
    unwrap_proxy(l, 1);
    (orig().rawget)(l)
}

unsafe extern "C-unwind" fn next(l: *mut ffi::lua_State) -> c_int {
    unwrap_proxy(l, 1);
    (orig().next)(l)
}

unsafe extern "C-unwind" fn pairs(l: *mut ffi::lua_State) -> c_int {
    unwrap_proxy(l, 1);
    (orig().pairs)(l)
}

unsafe extern "C-unwind" fn setmetatable(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        return refuse(l);
    }
    (orig().setmetatable)(l)
}

unsafe extern "C-unwind" fn getmetatable(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, FAKE_MT_KEY.as_ptr());
        ffi::lua_pushvalue(l, 1);
        ffi::lua_rawget(l, -2);
        return 1;
    }
    if ffi::lua_gettop(l) >= 1 && ffi::lua_type(l, 1) == ffi::LUA_TSTRING {
        ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, STRING_MT_KEY.as_ptr());
        return 1;
    }
    (orig().getmetatable)(l)
}

unsafe extern "C-unwind" fn tinsert(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        return refuse(l);
    }
    (orig().tinsert)(l)
}

unsafe extern "C-unwind" fn tremove(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        return refuse(l);
    }
    (orig().tremove)(l)
}

unsafe extern "C-unwind" fn tsort(l: *mut ffi::lua_State) -> c_int {
    if is_proxy(l, 1) {
        return refuse(l);
    }
    (orig().tsort)(l)
}
