//! Replies to Lua values and back, as Redis 7.0's script_lua.c (redisProtocolToLuaType and
//! luaReplyToRedisReply) does, for a script speaking RESP2 (the default) or RESP3.

use crate::num::{c_ll, format_double};
use crate::reply::Reply;
use bytes::Bytes;
use mlua::{Lua, Result, Table, Value};

/// `{err="CODE msg"}` built as luaPushErrorBuff does: a leading `-CODE ` is split off, a
/// message without one gets `ERR`, and CR/LF are trimmed from both ends.
pub fn error_table(lua: &Lua, text: &[u8]) -> Result<Table> {
    let (code, msg): (&[u8], &[u8]) = if let Some(rest) = text.strip_prefix(b"-") {
        match rest.iter().position(|&c| c == b' ') {
            Some(p) => (&rest[..p], &rest[p + 1..]),
            None => (b"ERR", rest),
        }
    } else {
        (b"ERR", text)
    };
    let mut s = 0;
    let mut e = msg.len();
    while s < e && (msg[s] == b'\r' || msg[s] == b'\n') {
        s += 1;
    }
    while e > s && (msg[e - 1] == b'\r' || msg[e - 1] == b'\n') {
        e -= 1;
    }
    let mut full = Vec::with_capacity(code.len() + 1 + e - s);
    full.extend_from_slice(code);
    full.push(b' ');
    full.extend_from_slice(&msg[s..e]);
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(&full)?)?;
    Ok(t)
}

fn single(lua: &Lua, key: &str, v: Value) -> Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(key, v)?;
    Ok(Value::Table(t))
}

/// A command's reply as the script sees it; `resp` is the script client's protocol.
pub fn reply_to_lua(lua: &Lua, r: &Reply, resp: u8) -> Result<Value> {
    let r3 = resp >= 3;
    Ok(match r {
        Reply::Simple(s) => single(lua, "ok", Value::String(lua.create_string(s)?))?,
        Reply::Error(e) => {
            let mut text = Vec::with_capacity(e.len() + 1);
            text.push(b'-');
            text.extend_from_slice(e);
            let t = error_table(lua, &text)?;
            t.raw_set("ignore_error_stats_update", true)?;
            Value::Table(t)
        }
        Reply::Int(n) => Value::Number(*n as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Nil | Reply::NilArray => {
            if r3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Array(items) | Reply::Push(items) => array(lua, items, resp)?,
        Reply::Set(items) => {
            if r3 {
                let t = lua.create_table()?;
                for i in items {
                    let k = reply_to_lua(lua, i, resp)?;
                    if !k.is_nil() {
                        t.raw_set(k, true)?;
                    }
                }
                single(lua, "set", Value::Table(t))?
            } else {
                array(lua, items, resp)?
            }
        }
        Reply::Map(pairs) => {
            if r3 {
                let t = lua.create_table()?;
                for (k, v) in pairs {
                    let k = reply_to_lua(lua, k, resp)?;
                    if !k.is_nil() {
                        t.raw_set(k, reply_to_lua(lua, v, resp)?)?;
                    }
                }
                single(lua, "map", Value::Table(t))?
            } else {
                let t = lua.create_table()?;
                let mut i = 1;
                for (k, v) in pairs {
                    t.raw_set(i, reply_to_lua(lua, k, resp)?)?;
                    t.raw_set(i + 1, reply_to_lua(lua, v, resp)?)?;
                    i += 2;
                }
                Value::Table(t)
            }
        }
        Reply::Double(d) => {
            if r3 {
                single(lua, "double", Value::Number(*d))?
            } else {
                Value::String(lua.create_string(format_double(*d))?)
            }
        }
        Reply::Bool(b) => {
            if r3 {
                Value::Boolean(*b)
            } else {
                Value::Number(if *b { 1.0 } else { 0.0 })
            }
        }
        Reply::Verbatim(s) => {
            if r3 {
                let v = lua.create_table()?;
                v.raw_set("format", "txt")?;
                v.raw_set("string", lua.create_string(s)?)?;
                single(lua, "verbatim_string", Value::Table(v))?
            } else {
                Value::String(lua.create_string(s)?)
            }
        }
        // Only commands scripts may not call (SUBSCRIBE...) answer this way.
        Reply::NoReply => Value::Boolean(false),
        Reply::BigNumber(s) => {
            if r3 {
                single(lua, "big_number", Value::String(lua.create_string(s)?))?
            } else {
                Value::String(lua.create_string(s)?)
            }
        }
    })
}

fn array(lua: &Lua, items: &[Reply], resp: u8) -> Result<Value> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, it) in items.iter().enumerate() {
        let v = reply_to_lua(lua, it, resp)?;
        if !v.is_nil() {
            t.raw_set(i + 1, v)?;
        }
    }
    Ok(Value::Table(t))
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => Some(*n),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// Redis replaces CR and LF by spaces in status and error lines.
fn one_line(b: &[u8]) -> Bytes {
    Bytes::from(
        b.iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
            .collect::<Vec<u8>>(),
    )
}

/// The script's return value as a reply; `resp` is the script client's protocol (it decides
/// how booleans are sent).
pub fn lua_to_reply(v: &Value, resp: u8, depth: usize) -> Reply {
    if depth > 1000 {
        return Reply::Error(Bytes::from_static(b"ERR reached lua stack limit"));
    }
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(b) => {
            if resp == 2 {
                if *b {
                    Reply::Int(1)
                } else {
                    Reply::Nil
                }
            } else {
                Reply::Bool(*b)
            }
        }
        Value::Integer(i) => Reply::Int(*i),
        Value::Number(n) => Reply::Int(c_ll(*n)),
        Value::Table(t) => table_to_reply(t, resp, depth),
        _ => Reply::Nil,
    }
}

fn table_to_reply(t: &Table, resp: u8, depth: usize) -> Reply {
    let get = |k: &str| t.raw_get::<Value>(k).unwrap_or(Value::Nil);
    if let Value::String(e) = get("err") {
        return Reply::Error(one_line(&e.as_bytes()));
    }
    if let Value::String(s) = get("ok") {
        return Reply::Simple(one_line(&s.as_bytes()));
    }
    if let Some(d) = number(&get("double")) {
        return Reply::Double(d);
    }
    if let Value::String(s) = get("big_number") {
        return Reply::BigNumber(one_line(&s.as_bytes()));
    }
    if let Value::Table(v) = get("verbatim_string") {
        if let (Ok(Value::String(_)), Ok(Value::String(s))) =
            (v.raw_get::<Value>("format"), v.raw_get::<Value>("string"))
        {
            return Reply::Verbatim(Bytes::copy_from_slice(&s.as_bytes()));
        }
    }
    if let Value::Table(m) = get("map") {
        let mut out = Vec::new();
        for (k, v) in m.pairs::<Value, Value>().flatten() {
            out.push((
                lua_to_reply(&k, resp, depth + 1),
                lua_to_reply(&v, resp, depth + 1),
            ));
        }
        return Reply::Map(out);
    }
    if let Value::Table(s) = get("set") {
        let mut out = Vec::new();
        for (k, _) in s.pairs::<Value, Value>().flatten() {
            out.push(lua_to_reply(&k, resp, depth + 1));
        }
        return Reply::Set(out);
    }
    let mut out = Vec::new();
    let mut j = 1i64;
    loop {
        match t.raw_get::<Value>(j) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => out.push(lua_to_reply(&v, resp, depth + 1)),
        }
        j += 1;
    }
    Reply::Array(out)
}

/// KEYS or ARGV: the arguments as a Lua array of strings (luaCreateArray).
pub fn str_array(lua: &Lua, items: &[Bytes]) -> Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}
