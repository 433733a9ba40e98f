//! The `redis` table scripts see: call/pcall through the [`Host`], the reply helpers, log,
//! setresp, sha1hex, the constants. Library functions are mlua callbacks wrapped in the C
//! trampoline of [`super::ffi`], so they can raise Redis's error tables.

use super::{convert, sha1_hex, with_host};
use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Table, Value};

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

pub(super) fn redis_lib(lua: &Lua, mt: &Function) -> mlua::Result<Table> {
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
            // redis.LOG_DEBUG..LOG_WARNING are Redis's log levels 0..3.
            crate::log::log(crate::log::Level::from_u8(level as u8), &msg);
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
            with_host(lua, |h| h.set_resp(resp as u8));
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
            match with_host(lua, |h| h.acl_check(&args)) {
                Some(Ok(allowed)) => Ok(Out::Ok(vec![Value::Boolean(allowed)])),
                Some(Err(msg)) => raise(lua, msg),
                None => raise(lua, "Invalid command passed to redis.acl_check_cmd()"),
            }
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
    let Some(outcome) = with_host(lua, |h| h.call(&args).map(|r| (r, h.resp()))) else {
        return fail(
            lua,
            "redis.call/pcall can only be called inside a script invocation",
        );
    };
    let (reply, resp) = match outcome {
        Ok(r) => r,
        Err(msg) => return fail(lua, msg),
    };
    let is_err = reply.is_error();
    let v = convert::reply_to_lua(lua, &reply, resp)?;
    Ok(if is_err && raise_err {
        Out::Raise(v)
    } else {
        Out::Ok(vec![v])
    })
}
