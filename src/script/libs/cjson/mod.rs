//! lua-cjson 2.1 as Redis bundles it (deps/lua/src/lua_cjson.c): its defaults, its
//! configuration functions, `cjson.new` and its error texts. Each `cjson` table (the one EVAL
//! scripts see, the functions' one, each `cjson.new()`) has its own configuration.

use super::*;
use crate::script::lib_fn::{lib_fn, Out};
use mlua::{Function, LightUserData, Lua, Result, Table, Value};
use parking_lot::Mutex;
use std::sync::Arc;

mod decode;

/// json_config_t.
#[derive(Clone, Copy)]
struct Config {
    sparse_convert: bool,
    sparse_ratio: i64,
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    /// 0 refuse NaN/Inf, 1 write them (`nan`, `inf`), 2 write `null`.
    encode_invalid: u8,
    decode_invalid: bool,
    keep_buffer: bool,
    precision: i64,
}

const DEFAULTS: Config = Config {
    sparse_convert: false,
    sparse_ratio: 2,
    sparse_safe: 10,
    encode_max_depth: 1000,
    decode_max_depth: 1000,
    encode_invalid: 0,
    decode_invalid: true,
    keep_buffer: true,
    precision: 14,
};

type Cfg = Arc<Mutex<Config>>;

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// char2escape.
fn json_escape(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\u{c:04x}").as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// json_append_number: `%.14g` (the configured precision), NaN and infinities as configured.
fn json_number(out: &mut Vec<u8>, n: f64, cfg: &Config) -> std::result::Result<(), String> {
    if !n.is_finite() {
        match cfg.encode_invalid {
            0 => return Err("Cannot serialise number: must not be NaN or Inf".into()),
            1 if n.is_nan() => {
                out.extend_from_slice(b"nan");
                return Ok(());
            }
            1 => {}
            _ => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    out.extend_from_slice(crate::num::format_g(n, cfg.precision as usize).as_bytes());
    Ok(())
}

fn number_of(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// lua_array_length: Some(max index) for a table whose keys are all positive integers (None
/// for an object), or an error for an excessively sparse array that may not be converted.
/// The index is kept in a C `int` as lua_cjson keeps it: an index past 2^31 makes it negative
/// (x86's conversion gives INT_MIN), so such a table is written as an object.
fn array_length(
    t: &Table,
    cfg: &Config,
    poll: &mut Poll,
) -> std::result::Result<Option<usize>, Fail> {
    let mut max = 0i32;
    let mut items = 0i64;
    for pair in t.pairs::<Value, Value>() {
        if poll.stop() {
            return Err(Fail::Stopped);
        }
        let (k, _) = pair.map_err(|e| e.to_string())?;
        match number_of(&k) {
            Some(n) if n != 0.0 && n.floor() == n && n >= 1.0 => {
                if n > max as f64 {
                    max = if n <= i32::MAX as f64 {
                        n as i32
                    } else {
                        i32::MIN
                    };
                }
                items += 1;
            }
            _ => return Ok(None),
        }
    }
    let max = max as i64;
    if cfg.sparse_ratio > 0 && max > items * cfg.sparse_ratio && max > cfg.sparse_safe {
        if !cfg.sparse_convert {
            return Err(Fail::Msg(
                "Cannot serialise table: excessively sparse array".into(),
            ));
        }
        return Ok(None);
    }
    Ok((max > 0).then_some(max as usize))
}

/// json_append_data.
fn json_encode(
    out: &mut Vec<u8>,
    v: &Value,
    depth: i64,
    cfg: &Config,
    poll: &mut Poll,
) -> std::result::Result<(), Fail> {
    if poll.stop() {
        return Err(Fail::Stopped);
    }
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => json_number(out, *i as f64, cfg)?,
        Value::Number(n) => json_number(out, *n, cfg)?,
        Value::String(s) => json_escape(out, &s.as_bytes()),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > cfg.encode_max_depth {
                return Err(format!("Cannot serialise, excessive nesting ({depth})").into());
            }
            match array_length(t, cfg, poll)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
                        json_encode(out, &v, depth, cfg, poll)?;
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, v) = pair.map_err(|e| e.to_string())?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(s) => {
                                json_escape(out, &s.as_bytes());
                                out.push(b':');
                            }
                            k => match number_of(k) {
                                Some(n) => {
                                    out.push(b'"');
                                    json_number(out, n, cfg)?;
                                    out.extend_from_slice(b"\":");
                                }
                                None => {
                                    return Err(format!(
                                        "Cannot serialise {}: table key must be a number or string",
                                        type_name(Some(k))
                                    )
                                    .into())
                                }
                            },
                        }
                        json_encode(out, &v, depth, cfg, poll)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => {
            return Err(format!(
                "Cannot serialise {}: type not supported",
                type_name(Some(other))
            )
            .into())
        }
    }
    Ok(())
}

/// json_arg_init: at most `n` arguments.
fn arg_count(a: &mlua::MultiValue, n: usize) -> std::result::Result<(), Out> {
    if a.len() > n {
        return Err(Out::Arg(n as i32 + 1, "found too many arguments".into()));
    }
    Ok(())
}

/// json_integer_option: set from argument `i` (1-based) if given; the range error always
/// names argument 1, as lua_cjson's does.
fn integer_option(
    v: Option<&Value>,
    i: usize,
    setting: &mut i64,
    min: i64,
    max: i64,
) -> std::result::Result<Value, Out> {
    if !matches!(v, None | Some(Value::Nil)) {
        let n = check_integer(v, i)?;
        if !(min..=max).contains(&n) {
            return Err(Out::Arg(
                1,
                format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = n;
    }
    Ok(num(*setting as f64))
}

/// json_enum_option: a boolean or one of `options` (by name); answers with the setting.
fn enum_option(
    lua: &Lua,
    v: Option<&Value>,
    setting: &mut u8,
    options: &[&str],
) -> Result<std::result::Result<Value, Out>> {
    match v {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = *b as u8,
        other => {
            let s = match check_string(lua, other, 1)? {
                Ok(s) => s,
                Err(e) => return Ok(Err(e)),
            };
            match options.iter().position(|o| o.as_bytes() == s) {
                Some(p) => *setting = p as u8,
                None => {
                    return Ok(Err(Out::Arg(
                        1,
                        format!("invalid option '{}'", String::from_utf8_lossy(&s)),
                    )))
                }
            }
        }
    }
    Ok(Ok(if *setting <= 1 {
        Value::Boolean(*setting == 1)
    } else {
        Value::String(lua.create_string(options[*setting as usize])?)
    }))
}

const BOOL_OPTIONS: &[&str] = &["off", "on"];

/// A configuration function's body: the results, or the error to raise.
type ConfigBody = fn(&Lua, &[Value], &mut Config) -> Result<std::result::Result<Vec<Value>, Out>>;

/// A configuration function over `cfg`: `f(lua, args, &mut config)` gives the results.
fn config_fn(lua: &Lua, mt: &Function, cfg: &Cfg, nargs: usize, f: ConfigBody) -> Result<Function> {
    let cfg = cfg.clone();
    lib_fn(lua, mt, move |lua, a| {
        if let Err(e) = arg_count(&a, nargs) {
            return Ok(e);
        }
        let v: Vec<Value> = a.into_iter().collect();
        let mut c = *cfg.lock();
        let r = f(lua, &v, &mut c)?;
        *cfg.lock() = c;
        Ok(match r {
            Ok(vals) => Out::Ok(vals),
            Err(e) => e,
        })
    })
}

/// lua_cjson_new: a cjson table with its own configuration.
pub fn cjson(lua: &Lua, mt: &Function) -> Result<Table> {
    let cfg: Cfg = Arc::new(Mutex::new(DEFAULTS));
    let t = lua.create_table()?;
    let c = cfg.clone();
    t.raw_set(
        "encode",
        lib_fn(lua, mt, move |lua, a| {
            if a.len() != 1 {
                return Ok(Out::Arg(1, "expected 1 argument".into()));
            }
            let v = a.into_iter().next().unwrap_or(Value::Nil);
            let conf = *c.lock();
            let mut out = Vec::new();
            match json_encode(&mut out, &v, 0, &conf, &mut Poll::new(lua)) {
                Ok(()) => Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)])),
                Err(e) => Ok(e.out()),
            }
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "decode",
        lib_fn(lua, mt, move |lua, a| {
            if a.len() != 1 {
                return Ok(Out::Arg(1, "expected 1 argument".into()));
            }
            let v: Vec<Value> = a.into_iter().collect();
            let s = match check_string(lua, v.first(), 1)? {
                Ok(s) => s,
                Err(e) => return Ok(e),
            };
            if s.len() >= 2 && (s[0] == 0 || s[1] == 0) {
                return Ok(Out::Where(
                    "JSON parser does not support UTF-16 or UTF-32".into(),
                ));
            }
            match decode::decode(lua, &s, *c.lock()) {
                Ok(v) => Ok(Out::Ok(vec![v])),
                Err(e) => Ok(e.out()),
            }
        })?,
    )?;
    t.raw_set(
        "encode_sparse_array",
        config_fn(lua, mt, &cfg, 3, |lua, v, c| {
            let mut convert = c.sparse_convert as u8;
            let a = match enum_option(lua, v.first(), &mut convert, BOOL_OPTIONS)? {
                Ok(a) => a,
                Err(e) => return Ok(Err(e)),
            };
            c.sparse_convert = convert != 0;
            let b = match integer_option(v.get(1), 2, &mut c.sparse_ratio, 0, i32::MAX as i64) {
                Ok(b) => b,
                Err(e) => return Ok(Err(e)),
            };
            let d = match integer_option(v.get(2), 3, &mut c.sparse_safe, 0, i32::MAX as i64) {
                Ok(d) => d,
                Err(e) => return Ok(Err(e)),
            };
            Ok(Ok(vec![a, b, d]))
        })?,
    )?;
    t.raw_set(
        "encode_max_depth",
        config_fn(lua, mt, &cfg, 1, |_, v, c| {
            Ok(
                integer_option(v.first(), 1, &mut c.encode_max_depth, 1, i32::MAX as i64)
                    .map(|x| vec![x]),
            )
        })?,
    )?;
    t.raw_set(
        "decode_max_depth",
        config_fn(lua, mt, &cfg, 1, |_, v, c| {
            Ok(
                integer_option(v.first(), 1, &mut c.decode_max_depth, 1, i32::MAX as i64)
                    .map(|x| vec![x]),
            )
        })?,
    )?;
    t.raw_set(
        "encode_number_precision",
        config_fn(lua, mt, &cfg, 1, |_, v, c| {
            Ok(integer_option(v.first(), 1, &mut c.precision, 1, 14).map(|x| vec![x]))
        })?,
    )?;
    t.raw_set(
        "encode_keep_buffer",
        config_fn(lua, mt, &cfg, 1, |lua, v, c| {
            let mut s = c.keep_buffer as u8;
            let r = enum_option(lua, v.first(), &mut s, BOOL_OPTIONS)?;
            c.keep_buffer = s != 0;
            Ok(r.map(|x| vec![x]))
        })?,
    )?;
    t.raw_set(
        "encode_invalid_numbers",
        config_fn(lua, mt, &cfg, 1, |lua, v, c| {
            let r = enum_option(
                lua,
                v.first(),
                &mut c.encode_invalid,
                &["off", "on", "null"],
            )?;
            Ok(r.map(|x| vec![x]))
        })?,
    )?;
    t.raw_set(
        "decode_invalid_numbers",
        config_fn(lua, mt, &cfg, 1, |lua, v, c| {
            let mut s = c.decode_invalid as u8;
            let r = enum_option(lua, v.first(), &mut s, BOOL_OPTIONS)?;
            c.decode_invalid = s != 0;
            Ok(r.map(|x| vec![x]))
        })?,
    )?;
    let maker = mt.clone();
    t.raw_set(
        "new",
        lib_fn(lua, mt, move |lua, _| {
            Ok(Out::Ok(vec![Value::Table(cjson(lua, &maker)?)]))
        })?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok(t)
}
