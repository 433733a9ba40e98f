//! One Lua 5.1 interpreter with Redis's environment, and the cache of compiled scripts by
//! SHA-1 (luaCreateFunction). Built lazily on first use and thrown away by SCRIPT FLUSH.

use super::{ffi, libs, redis_lib, script_flags, RunCtx};
use crate::error::{self, RedisError};
use mlua::{Function, Lua, LuaOptions, StdLib, Table};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// A compiled script and the flags of its shebang.
pub(super) struct Script {
    pub func: Function,
    pub flags: u32,
}

pub(super) struct Engine {
    pub lua: Lua,
    pub scripts: HashMap<String, Script>,
    setenv: Function,
    pub run: Function,
    pub runs: u64,
}

impl Engine {
    /// `rand` is the server-wide redisLrand48 state behind `math.random` (it outlives the
    /// interpreter, as Redis's static does).
    pub fn new(rand: Arc<AtomicU64>) -> mlua::Result<Engine> {
        // The debug library is needed by Redis's error handler; the prelude hides it again.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::new(),
            )
        };
        let make_tramp = unsafe { lua.create_c_function(ffi::make_tramp)? };
        let libs_t = lua.create_table()?;
        libs_t.raw_set("redis", redis_lib::redis_lib(&lua, &make_tramp)?)?;
        libs_t.raw_set("cjson", libs::cjson(&lua, &make_tramp)?)?;
        libs_t.raw_set("bit", libs::bit(&lua, &make_tramp)?)?;
        libs_t.raw_set("struct", libs::structlib(&lua, &make_tramp)?)?;
        libs_t.raw_set("cmsgpack", libs::cmsgpack(&lua, &make_tramp)?)?;
        let math: Table = lua.globals().raw_get("math")?;
        libs::math_random(&lua, &make_tramp, &math)?;
        let (setenv, run): (Function, Function) = lua
            .load(include_str!("prelude.lua"))
            .set_name("=resplock_prelude")
            .call((make_tramp, libs_t))?;
        lua.set_app_data(RunCtx { host: None, rand });
        Ok(Engine {
            lua,
            scripts: HashMap::new(),
            setenv,
            run,
            runs: 0,
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
pub(super) fn sha_str(buf: &[u8; 40]) -> &str {
    std::str::from_utf8(buf).unwrap_or("")
}

/// Parse a `#!lua ...` first line as evalExtractShebangFlags does; returns (flags, has_shebang).
pub(super) fn shebang_flags(body: &[u8]) -> Result<(u32, bool), RedisError> {
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
