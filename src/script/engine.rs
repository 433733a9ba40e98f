//! The one Lua 5.1 interpreter with Redis's two environments (EVAL's globals and the function
//! engine's), the cache of compiled EVAL scripts by SHA-1 (luaCreateFunction) and the function
//! libraries ([`super::functions`]). Built lazily on first use; SCRIPT FLUSH empties the script
//! cache without dropping it, so libraries survive.

use super::host::{HostSlot, RunCtx, SlotRef};
use super::{ffi, functions::Libraries, libs, raw, redis_lib, script_flags};
use crate::error::{self, RedisError};
use mlua::{Function, Lua, LuaOptions, RegistryKey, StdLib, Table};
use std::os::raw::c_int;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A compiled script and the flags of its shebang. The function is kept in the Lua registry
/// (as Redis keeps it), not as an mlua handle: mlua's handles live on one auxiliary Lua stack
/// that holds about 8000 values at most.
pub(super) struct Script {
    pub func: RegistryKey,
    pub flags: u32,
    /// The script's text length, for INFO's used_memory_scripts_eval.
    pub body_len: usize,
}

/// What running a function needs besides the function itself (luaEngineCtx).
pub(super) struct FunctionEnv {
    /// The (empty, read-only) table functions see as their globals.
    pub env: Table,
    /// `env`'s metatable: `__index` is `globals`, or the loading API during FUNCTION LOAD.
    pub env_meta: Table,
    /// The function engine's globals (libraries and its `redis` API).
    pub globals: Table,
    /// What library code sees while FUNCTION LOAD runs it: the loading `redis` API only.
    pub library_api: Table,
    /// [`ffi::load_library`].
    pub load: Function,
}

pub(super) struct Engine {
    pub lua: Lua,
    /// aHash: EVALSHA looks a script up twice per call (flags, then the run).
    pub scripts: ahash::AHashMap<String, Script>,
    /// The script [`Engine::find`] found last (its SHA, function and flags): an EVALSHA
    /// looks its script up twice (the flags before the run, the function in it), and a
    /// client usually runs one script over and over, so a compare replaces both hash lookups.
    last_found: Option<([u8; 40], c_int, u32)>,
    pub libs: Libraries,
    pub functions: FunctionEnv,
    pub runs: u64,
    /// The interpreter's memory after its last full collection.
    pub collected_at: usize,
    /// The memory limit last given to the interpreter.
    pub limit_set: usize,
    /// Where `redis.call` finds the running script's host (boxed: its address is an upvalue).
    pub slot: Box<HostSlot>,
    /// Registry references of [`ffi::run_eval`] and EVAL's handler, as `raw::run` pushes them.
    pub eval_runner: [c_int; 2],
    /// Registry references of [`ffi::run_function`], the function environment and handler.
    pub function_runner: [c_int; 3],
    /// Registry reference of [`raw::protected_entry`], which runs are called through.
    pub protected_entry: c_int,
    /// The hook state whose address the registry holds for the kill hook (null: none yet).
    pub hook_registered: *const super::host::HookState,
    /// EVAL's KEYS and ARGV, refilled from run to run.
    pub arg_tables: raw::ArgTables,
    /// Keeps the runner references (and the KEYS and ARGV tables' slots) alive.
    _anchors: Vec<RegistryKey>,
    /// The interpreter's main state, where runs happen: the KILL commands and the watchdog
    /// install a hook on it from other threads.
    pub main: *mut mlua::ffi::lua_State,
}

// SAFETY: `main` is only a handle on the interpreter `lua` owns (which is Send); the engine is
// used under its mutex, and other threads use the pointer only as `Scripting`'s `StatePtr` says.
unsafe impl Send for Engine {}

impl Engine {
    /// `rand` is the server-wide redisLrand48 state behind `math.random` (it outlives the
    /// interpreter, as Redis's static does).
    pub fn new(rand: Arc<AtomicU64>) -> mlua::Result<Engine> {
        // The debug library is needed by Redis's error handler; the prelude drops it again.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::new(),
            )
        };
        let c = |f| unsafe { lua.create_c_function(f) };
        let make_tramp = c(ffi::make_tramp)?;
        let slot = Box::new(HostSlot::default());
        let libs_t = lua.create_table()?;
        for (name, api) in [
            ("redis_eval", redis_lib::Api::Eval),
            ("redis_function", redis_lib::Api::Function),
            ("redis_load", redis_lib::Api::Load),
        ] {
            libs_t.raw_set(name, redis_lib::redis_lib(&lua, &make_tramp, api, &slot)?)?;
        }
        libs_t.raw_set("cjson_eval", libs::cjson(&lua, &make_tramp)?)?;
        libs_t.raw_set("cjson_function", libs::cjson(&lua, &make_tramp)?)?;
        libs_t.raw_set("bit", libs::bit(&lua, &make_tramp)?)?;
        libs_t.raw_set("struct", libs::structlib(&lua, &make_tramp)?)?;
        libs_t.raw_set("cmsgpack", libs::cmsgpack(&lua, &make_tramp)?)?;
        let math: Table = lua.globals().raw_get("math")?;
        libs::math_random(&lua, &make_tramp, &math)?;
        c(ffi::init_registry)?.call::<()>(())?;
        let (handler, env, env_meta, globals, library_api): (Function, Table, Table, Table, Table) =
            lua.load(include_str!("prelude.lua"))
                .set_name("=resplock_prelude")
                .call((
                    libs_t,
                    c(ffi::protect)?,
                    c(ffi::set_readonly)?,
                    c(ffi::protected_table_error)?,
                    c(ffi::redis_pcall)?,
                ))?;
        let eval_handler: Function = lua.globals().raw_get("__redis__err__handler")?;
        lua.set_app_data(RunCtx {
            slot: SlotRef(&*slot),
            rand,
            loading: None,
        });
        let mut main = std::ptr::null_mut();
        // SAFETY: only reads the state exec_raw runs on, which at top level is the main one.
        unsafe { lua.exec_raw::<()>((), |l| main = l)? };
        // SAFETY: a plain store in the new state's global part.
        unsafe { ffi::lua_setinterruptcb(main, Some(ffi::soft_tick)) };
        let run_eval = c(ffi::run_eval)?;
        let run_function = c(ffi::run_function)?;
        let anchors = vec![
            lua.create_registry_value(&run_eval)?,
            lua.create_registry_value(&eval_handler)?,
            lua.create_registry_value(&run_function)?,
            lua.create_registry_value(&env)?,
            lua.create_registry_value(&handler)?,
            lua.create_registry_value(lua.create_table()?)?,
            lua.create_registry_value(lua.create_table()?)?,
            lua.create_registry_value(c(raw::protected_entry)?)?,
        ];
        Ok(Engine {
            eval_runner: [anchors[0].id(), anchors[1].id()],
            function_runner: [anchors[2].id(), anchors[3].id(), anchors[4].id()],
            protected_entry: anchors[7].id(),
            hook_registered: std::ptr::null(),
            last_found: None,
            arg_tables: raw::ArgTables {
                refs: [anchors[5].id(), anchors[6].id()],
                lens: [0, 0],
                installed: false,
            },
            _anchors: anchors,
            main,
            slot,
            limit_set: usize::MAX,
            functions: FunctionEnv {
                env,
                env_meta,
                globals,
                library_api,
                load: c(ffi::load_library)?,
            },
            lua,
            scripts: ahash::AHashMap::new(),
            libs: Libraries::default(),
            runs: 0,
            collected_at: 0,
        })
    }

    /// Compile `body` once and cache it by SHA (luaCreateFunction).
    pub fn compile(&mut self, body: &[u8]) -> Result<String, RedisError> {
        let sha = self.compile_buf(body)?;
        Ok(sha_str(&sha).to_string())
    }

    /// [`Engine::compile`] with the SHA on the stack: EVAL of a cached script allocates none.
    pub fn compile_buf(&mut self, body: &[u8]) -> Result<[u8; 40], RedisError> {
        let buf = sha1_hex_buf(body);
        if self.scripts.contains_key(sha_str(&buf)) {
            return Ok(buf);
        }
        let sha = sha_str(&buf).to_string();
        let (flags, shebang_len) = shebang_flags(body)?;
        // The shebang line is skipped but its line feed kept, so positions count it.
        let func = compile_chunk(&self.lua, &body[shebang_len..])?;
        let func = self
            .lua
            .create_registry_value(func)
            .map_err(|e| error::err(format!("ERR {e}")))?;
        self.scripts.insert(
            sha,
            Script {
                func,
                flags,
                body_len: body.len(),
            },
        );
        Ok(buf)
    }

    /// The registry reference and flags of the cached script with SHA `sha` (lowercase).
    pub fn find(&mut self, sha: &[u8; 40]) -> Option<(c_int, u32)> {
        if let Some((last, func, flags)) = &self.last_found {
            if same_sha(last, sha) {
                return Some((*func, *flags));
            }
        }
        let name = sha_str(sha);
        let sc = self.scripts.get(name).filter(|_| !name.is_empty())?;
        let found = (sc.func.id(), sc.flags);
        self.last_found = Some((*sha, found.0, found.1));
        Some(found)
    }

    /// SCRIPT FLUSH: forget every cached script. The interpreter and the function libraries
    /// stay; EVAL's `cjson` starts over with its defaults, as in Redis's fresh interpreter.
    pub fn flush_scripts(&mut self) -> mlua::Result<()> {
        self.scripts = ahash::AHashMap::new();
        self.last_found = None;
        self.lua.expire_registry_values();
        let make_tramp = unsafe { self.lua.create_c_function(ffi::make_tramp)? };
        let cjson = libs::cjson(&self.lua, &make_tramp)?;
        let swap = self.lua.load(
            "local set_readonly, protect, cjson = ... \
             set_readonly(_G, false) rawset(_G, 'cjson', cjson) set_readonly(_G, true) \
             protect(cjson)",
        );
        let c = |f| unsafe { self.lua.create_c_function(f) };
        swap.set_name("=resplock_flush").call::<()>((
            c(ffi::set_readonly)?,
            c(ffi::protect)?,
            cjson,
        ))?;
        self.lua.gc_collect()?;
        self.lua.gc_collect()
    }

    /// Bytes of script text in the cache (INFO's used_memory_scripts_eval counts them with
    /// the SHAs).
    pub fn scripts_memory(&self) -> usize {
        self.scripts.values().map(|s| s.body_len + 40).sum()
    }
}

/// Compile a script's code with Lua's own luaL_loadbuffer, so a syntax error's message keeps
/// the script's bytes raw, as Redis sends them (mlua's SyntaxError holds a lossy UTF-8
/// String, which turned a byte like 0xff into U+FFFD).
fn compile_chunk(lua: &Lua, code: &[u8]) -> Result<Function, RedisError> {
    let to_err = |e: mlua::Error| error::err(format!("ERR {e}"));
    // SAFETY: luaL_loadbuffer reads `code` for its length and leaves one value (the function
    // or the message) on the stack; a nil goes under it so both outcomes return two values.
    let (func, msg): (Option<Function>, Option<mlua::LuaString>) = unsafe {
        lua.exec_raw((), |l| {
            let r = mlua::ffi::luaL_loadbuffer(
                l,
                code.as_ptr().cast(),
                code.len(),
                c"@user_script".as_ptr(),
            );
            mlua::ffi::lua_pushnil(l);
            if r != 0 {
                mlua::ffi::lua_insert(l, -2);
            }
        })
    }
    .map_err(to_err)?;
    func.ok_or_else(|| {
        let mut text = b"ERR Error compiling script (new function): ".to_vec();
        if let Some(m) = msg {
            text.extend_from_slice(&m.as_bytes());
        }
        error::err_bytes(text)
    })
}

/// The lowercase hex SHA-1 of `b`.
pub fn sha1_hex(b: &[u8]) -> String {
    sha_str(&sha1_hex_buf(b)).to_string()
}

/// The lowercase hex SHA-1 of `b`, without allocating.
pub(super) fn sha1_hex_buf(b: &[u8]) -> [u8; 40] {
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
/// A SHA as the script cache keys it (lower case), on the stack: EVALSHA asks for it twice
/// per call (its flags, then the run). None when it is not 40 bytes (no cached script has
/// such a name).
pub(super) fn lower_sha(sha: &[u8]) -> Option<[u8; 40]> {
    let given = <&[u8; 40]>::try_from(sha).ok()?;
    Some(given.map(|c| c.to_ascii_lowercase()))
}

/// `a == b` in five word compares, inline: the array comparison calls memcmp, and a
/// pipelined EVALSHA made two of these calls (4-5% of its samples with the call's setup).
#[inline]
fn same_sha(a: &[u8; 40], b: &[u8; 40]) -> bool {
    let word = |s: &[u8; 40], i: usize| {
        u64::from_ne_bytes(s[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
    };
    (0..5).fold(0u64, |d, i| d | (word(a, i) ^ word(b, i))) == 0
}

pub(super) fn sha_str(buf: &[u8; 40]) -> &str {
    std::str::from_utf8(buf).unwrap_or("")
}

/// evalExtractShebangFlags: the flags of a `#!lua ...` first line and the line's length (the
/// part of the body the compiler skips); no shebang is EVAL's compatibility mode.
pub(super) fn shebang_flags(body: &[u8]) -> Result<(u32, usize), RedisError> {
    if !body.starts_with(b"#!") {
        return Ok((script_flags::EVAL_COMPAT, 0));
    }
    let end = body
        .iter()
        .position(|&c| c == b'\n')
        .ok_or(RedisError::new(error::SCRIPT_INVALID_SHEBANG))?;
    let parts = match crate::config::split_args(&body[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err(RedisError::new(error::SCRIPT_INVALID_ENGINE)),
    };
    if parts[0] != b"#!lua" {
        return Err(error::err(format!(
            "ERR Unexpected engine in script shebang: {}",
            String::from_utf8_lossy(&parts[0])
        )));
    }
    let mut f = 0;
    for p in &parts[1..] {
        let Some(list) = p.strip_prefix(b"flags=") else {
            return Err(error::err(format!(
                "ERR Unknown lua shebang option: {}",
                String::from_utf8_lossy(p)
            )));
        };
        // sdssplitlen: an empty list has no flags, but "a,,b" has an empty one.
        if list.is_empty() {
            continue;
        }
        for name in list.split(|&c| c == b',') {
            match script_flags::by_name(name, false) {
                Some(flag) => f |= flag,
                None => {
                    return Err(error::err(format!(
                        "ERR Unexpected flag in script shebang: {}",
                        String::from_utf8_lossy(name)
                    )))
                }
            }
        }
    }
    Ok((f, end))
}

#[cfg(test)]
mod tests {
    use super::same_sha;

    #[test]
    fn shas_compare_equal_only_when_every_byte_is() {
        let a = *b"b70c2384248f88e6b75b9f89241a180f856ad852";
        assert!(same_sha(&a, &a.clone()));
        for i in 0..40 {
            let mut b = a;
            b[i] ^= 1;
            assert!(!same_sha(&a, &b), "byte {i}");
        }
    }
}
