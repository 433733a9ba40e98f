//! Replies to Lua values and back, as Redis 7.0's script_lua.c (redisProtocolToLuaType and
//! luaReplyToRedisReply) does, for a script speaking RESP2 (the default) or RESP3.

use crate::num::c_ll;
use crate::reply::Reply;
use bytes::Bytes;
use mlua::{Lua, Result, Table, Value};

/// `{err="CODE msg"}` built as luaPushErrorBuff does: a leading `-CODE ` is split off, a
/// message without one gets `ERR`, and CR/LF are trimmed from both ends.
pub fn error_table(lua: &Lua, text: &[u8]) -> Result<Table> {
    let (code, msg) = super::raw::split_error(text);
    let mut full = Vec::with_capacity(code.len() + 1 + msg.len());
    full.extend_from_slice(code);
    full.push(b' ');
    full.extend_from_slice(msg);
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(&full)?)?;
    Ok(t)
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

/// A boolean the script returned: in RESP2 true is 1 and false a null, in RESP3 a boolean.
pub fn bool_reply(b: bool, resp: u8) -> Reply {
    match (resp, b) {
        (2, true) => Reply::Int(1),
        (2, false) => Reply::Nil,
        _ => Reply::Bool(b),
    }
}

/// The script's return value as a reply; `resp` is the script client's protocol (it decides
/// how booleans are sent).
pub fn lua_to_reply(v: &Value, resp: u8, depth: usize) -> Reply {
    if depth > 1000 {
        return Reply::Error(Bytes::from_static(b"ERR reached lua stack limit"));
    }
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(b) => bool_reply(*b, resp),
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
