//! The `redis` tables scripts see: EVAL's (luaRegisterRedisAPI plus the debugger hooks and
//! `replicate_commands`), the function engine's (the same without those), and the loading API
//! FUNCTION LOAD's code sees (`register_function`, `log`, the version). Library functions are
//! mlua callbacks wrapped in the C trampoline of [`super::ffi`], so they can raise Redis's
//! error tables. `redis.call` goes through [`super::host::Host::call`]; the argument and reply
//! conversions are the small functions [`lua_args`] and [`convert::reply_to_lua`].

use super::host::{with_host, RunCtx};
use super::lib_fn::{lib_fn, packed, packed_lib_fn, Out};
use super::registration;
use super::{convert, engine::sha1_hex};
use crate::error;
use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Table, Value};

/// Raise `{err="ERR <msg>"}` as luaPushError + luaError do.
fn raise(lua: &Lua, msg: &str) -> mlua::Result<Out> {
    Ok(Out::Raise(Value::Table(convert::error_table(
        lua,
        msg.as_bytes(),
    )?)))
}

/// Which `redis` table to build.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    /// EVAL scripts' (scriptingInit).
    Eval,
    /// Functions' at run time (luaRegisterRedisAPI).
    Function,
    /// Library code's while FUNCTION LOAD runs it.
    Load,
}

pub(super) fn redis_lib(
    lua: &Lua,
    mt: &Function,
    api: Api,
    slot: &super::host::HostSlot,
) -> mlua::Result<Table> {
    let r = lua.create_table()?;
    r.raw_set("log", lib_fn(lua, mt, log)?)?;
    for (k, v) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
    ] {
        r.raw_set(k, v)?;
    }
    r.raw_set("REDIS_VERSION_NUM", crate::version::version_num())?;
    r.raw_set("REDIS_VERSION", crate::version::REDIS_VERSION)?;
    if api == Api::Load {
        r.raw_set("register_function", lib_fn(lua, mt, register_function)?)?;
        return Ok(r);
    }
    r.raw_set("call", super::raw::call_fn(lua, true, slot)?)?;
    r.raw_set("pcall", super::raw::call_fn(lua, false, slot)?)?;
    r.raw_set("setresp", lib_fn(lua, mt, setresp)?)?;
    r.raw_set("sha1hex", lib_fn(lua, mt, sha1hex)?)?;
    r.raw_set(
        "error_reply",
        lib_fn(lua, mt, |lua, a| single_field(lua, a, "err"))?,
    )?;
    r.raw_set(
        "status_reply",
        lib_fn(lua, mt, |lua, a| single_field(lua, a, "ok"))?,
    )?;
    r.raw_set("set_repl", lib_fn(lua, mt, set_repl)?)?;
    for (k, v) in [
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
    ] {
        r.raw_set(k, v)?;
    }
    r.raw_set("acl_check_cmd", packed_lib_fn(lua, mt, acl_check_cmd)?)?;
    if api == Api::Eval {
        // The Lua debugger's (SCRIPT DEBUG): no-ops outside a session.
        r.raw_set(
            "breakpoint",
            lib_fn(lua, mt, |_, _| {
                Ok(Out::Ok(vec![Value::Boolean(super::ldb::breakpoint())]))
            })?,
        )?;
        // SAFETY: a plain C function of the debugger; it raises nothing.
        r.raw_set("debug", unsafe {
            lua.create_c_function(super::ldb::redis_debug)?
        })?;
        // Redis 7 always replicates effects: the call is accepted and answers true.
        r.raw_set(
            "replicate_commands",
            lib_fn(lua, mt, |_, _| Ok(Out::Ok(vec![Value::Boolean(true)])))?,
        )?;
    }
    Ok(r)
}

/// lua_tonumber: numbers, and strings that read as numbers; anything else is 0.
fn to_number(lua: &Lua, v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        s @ Value::String(_) => lua.coerce_number(s.clone()).ok().flatten(),
        _ => None,
    }
}

/// redis.log(level, ...): the message goes to resplock's log at the matching level.
fn log(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
    if a.len() < 2 {
        return raise(lua, error::LUA_LOG_ARGS);
    }
    let v: Vec<Value> = a.into_iter().collect();
    let Some(level) = to_number(lua, v.first()) else {
        return raise(lua, error::LUA_LOG_LEVEL_NOT_NUMBER);
    };
    let level = level as i32;
    if !(0..=3).contains(&level) {
        return raise(lua, error::LUA_LOG_LEVEL_INVALID);
    }
    let mut msg = Vec::new();
    for x in &v[1..] {
        if let Some(s) = lua.coerce_string(x.clone())? {
            if !msg.is_empty() {
                msg.push(b' ');
            }
            msg.extend_from_slice(&s.as_bytes());
        }
    }
    let msg = String::from_utf8_lossy(&msg);
    // redis.LOG_DEBUG..LOG_WARNING are Redis's log levels 0..3.
    crate::log::log(crate::log::Level::from_u8(level as u8), &msg);
    Ok(Out::Ok(vec![]))
}

fn setresp(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
    if a.len() != 1 {
        return raise(lua, error::LUA_SETRESP_ARGS);
    }
    let v: Vec<Value> = a.into_iter().collect();
    let resp = to_number(lua, v.first()).unwrap_or(0.0) as i32;
    if resp != 2 && resp != 3 {
        return raise(lua, error::LUA_SETRESP_VERSION);
    }
    with_host(lua, |h| h.set_resp(resp as u8));
    Ok(Out::Ok(vec![]))
}

fn sha1hex(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
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
}

/// redis.error_reply / redis.status_reply: `{err=...}` / `{ok=...}`; a wrong call returns
/// (not raises) an error table.
fn single_field(lua: &Lua, a: MultiValue, field: &str) -> mlua::Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let t = match v.as_slice() {
        [Value::String(s)] if field == "err" => {
            let b = s.as_bytes();
            let text = if b.first() == Some(&b'-') {
                b.to_vec()
            } else {
                [b"-".as_slice(), &b].concat()
            };
            convert::error_table(lua, &text)?
        }
        [Value::String(s)] => {
            let t = lua.create_table()?;
            t.raw_set(field, s.clone())?;
            t
        }
        _ => convert::error_table(lua, b"wrong number or type of arguments")?,
    };
    Ok(Out::Ok(vec![Value::Table(t)]))
}

/// redis.set_repl: where the script's next commands propagate (REPL_AOF, REPL_REPLICA,
/// REPL_ALL, REPL_NONE).
fn set_repl(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
    if a.len() != 1 {
        return raise(lua, error::LUA_SET_REPL_ARGS);
    }
    let v: Vec<Value> = a.into_iter().collect();
    let f = to_number(lua, v.first()).unwrap_or(0.0) as i32;
    if f & !3 != 0 {
        return raise(lua, error::LUA_SET_REPL_FLAGS);
    }
    with_host(lua, |h| h.set_repl(f as u8));
    Ok(Out::Ok(vec![]))
}

fn acl_check_cmd(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
    let args = match lua_args(a)? {
        Ok(v) => v,
        Err(msg) => return raise(lua, msg),
    };
    match with_host(lua, |h| h.acl_check(&args)) {
        Some(Ok(allowed)) => Ok(Out::Ok(vec![Value::Boolean(allowed)])),
        Some(Err(msg)) => raise(lua, msg),
        None => raise(lua, error::LUA_ACL_CHECK_OUTSIDE),
    }
}

/// Lua arguments to command arguments (luaArgsToRedisArgv): numbers as `%.17g`. Packed
/// arguments are converted one at a time.
pub(super) fn lua_args(a: MultiValue) -> mlua::Result<Result<Vec<Bytes>, &'static str>> {
    if a.is_empty() {
        return Ok(Err(error::LUA_CALL_NO_ARGS));
    }
    let one = |v: Value| match v {
        Value::String(s) => Ok(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Integer(i) => Ok(Bytes::from(crate::num::format_double(i as f64))),
        Value::Number(n) => Ok(Bytes::from(crate::num::format_double(n))),
        _ => Err(error::LUA_CALL_BAD_ARG),
    };
    if let Some((t, n)) = packed(&a) {
        let mut out = Vec::with_capacity(n.max(0) as usize);
        for i in 1..=n {
            match one(t.raw_get(i)?) {
                Ok(b) => out.push(b),
                Err(e) => return Ok(Err(e)),
            }
        }
        return Ok(Ok(out));
    }
    Ok(a.into_iter().map(one).collect())
}

/// lua_isstring's strings: strings and numbers, as text.
fn string_arg(lua: &Lua, v: &Value) -> mlua::Result<Option<Vec<u8>>> {
    Ok(match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => {
            lua.coerce_string(v.clone())?.map(|s| s.as_bytes().to_vec())
        }
        _ => None,
    })
}

/// What `redis.register_function` was given.
struct Registration {
    name: Vec<u8>,
    desc: Option<Bytes>,
    flags: u32,
    callback: Function,
}

/// luaRegisterFunction: `register_function(name, callback)` or
/// `register_function{function_name=..., callback=..., flags={...}, description=...}`.
fn register_function(lua: &Lua, a: MultiValue) -> mlua::Result<Out> {
    if lua
        .app_data_ref::<RunCtx>()
        .is_none_or(|rc| rc.loading.is_none())
    {
        return raise(lua, error::LUA_REGISTER_OUTSIDE_LOAD);
    }
    let v: Vec<Value> = a.into_iter().collect();
    let reg = match v.as_slice() {
        [t] => named_registration(lua, t)?,
        [name, callback] => match string_arg(lua, name)? {
            None => Err(error::LUA_REGISTER_NAME_NOT_STRING),
            Some(name) => match callback {
                Value::Function(f) => Ok(Registration {
                    name,
                    desc: None,
                    flags: 0,
                    callback: f.clone(),
                }),
                _ => Err(error::LUA_REGISTER_CALLBACK_NOT_FUNCTION),
            },
        },
        _ => Err(error::LUA_REGISTER_ARGS),
    };
    let reg = match reg {
        Ok(r) => r,
        Err(msg) => return raise(lua, msg),
    };
    let done = match lua.app_data_mut::<RunCtx>() {
        Some(mut rc) => match rc.loading.as_mut() {
            Some(loading) => {
                let key = lua.create_registry_value(reg.callback)?;
                registration::register(loading, reg.name, reg.desc, reg.flags, key)
            }
            None => Err(error::LUA_REGISTER_OUTSIDE_LOAD),
        },
        None => Err(error::LUA_REGISTER_OUTSIDE_LOAD),
    };
    match done {
        Ok(()) => Ok(Out::Ok(vec![])),
        Err(msg) => raise(lua, msg),
    }
}

/// luaRegisterFunctionReadNamedArgs.
fn named_registration(lua: &Lua, t: &Value) -> mlua::Result<Result<Registration, &'static str>> {
    let Value::Table(t) = t else {
        return Ok(Err(error::LUA_REGISTER_SINGLE_ARG));
    };
    let (mut name, mut desc, mut callback, mut flags) = (None, None, None, 0);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let Some(key) = string_arg(lua, &k)? else {
            return Ok(Err(error::LUA_REGISTER_KEY_NOT_STRING));
        };
        if key.eq_ignore_ascii_case(b"function_name") {
            match string_arg(lua, &v)? {
                Some(n) => name = Some(n),
                None => return Ok(Err(error::LUA_REGISTER_FUNCTION_NAME_NOT_STRING)),
            }
        } else if key.eq_ignore_ascii_case(b"description") {
            match string_arg(lua, &v)? {
                Some(d) => desc = Some(Bytes::from(d)),
                None => return Ok(Err(error::LUA_REGISTER_DESCRIPTION_NOT_STRING)),
            }
        } else if key.eq_ignore_ascii_case(b"callback") {
            match v {
                Value::Function(f) => callback = Some(f),
                _ => return Ok(Err(error::LUA_REGISTER_CALLBACK_ARG_NOT_FUNCTION)),
            }
        } else if key.eq_ignore_ascii_case(b"flags") {
            let Value::Table(list) = v else {
                return Ok(Err(error::LUA_REGISTER_FLAGS_NOT_TABLE));
            };
            flags = 0;
            let mut j = 1;
            loop {
                let item: Value = list.get(j)?;
                if item.is_nil() {
                    break;
                }
                match string_arg(lua, &item)?.and_then(|s| registration::flag_by_name(&s)) {
                    Some(f) => flags |= f,
                    None => return Ok(Err(error::LUA_REGISTER_UNKNOWN_FLAG)),
                }
                j += 1;
            }
        } else {
            return Ok(Err(error::LUA_REGISTER_UNKNOWN_ARG));
        }
    }
    let Some(name) = name else {
        return Ok(Err(error::LUA_REGISTER_NO_NAME));
    };
    let Some(callback) = callback else {
        return Ok(Err(error::LUA_REGISTER_NO_CALLBACK));
    };
    Ok(Ok(Registration {
        name,
        desc,
        flags,
        callback,
    }))
}
