//! lua-cjson 2.1 as Redis bundles it (deps/lua/src/lua_cjson.c): its defaults, its
//! configuration functions, `cjson.new` and its error texts. Each `cjson` table (the one EVAL
//! scripts see, the functions' one, each `cjson.new()`) has its own configuration.

use super::*;
use crate::script::{lib_fn, Out};
use mlua::{Function, LightUserData, Lua, Result, Table, Value};
use parking_lot::Mutex;
use std::sync::Arc;

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
fn array_length(t: &Table, cfg: &Config) -> std::result::Result<Option<usize>, String> {
    let mut max = 0i32;
    let mut items = 0i64;
    for pair in t.pairs::<Value, Value>() {
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
            return Err("Cannot serialise table: excessively sparse array".into());
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
) -> std::result::Result<(), String> {
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
                return Err(format!("Cannot serialise, excessive nesting ({depth})"));
            }
            match array_length(t, cfg)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
                        json_encode(out, &v, depth, cfg)?;
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
                                    ))
                                }
                            },
                        }
                        json_encode(out, &v, depth, cfg)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => {
            return Err(format!(
                "Cannot serialise {}: type not supported",
                type_name(Some(other))
            ))
        }
    }
    Ok(())
}

/// C's strtod on a prefix of `s`: (value, bytes used), or None if no number starts there.
/// Decimal, hexadecimal, `inf`/`infinity` and `nan` with an optional sign, as glibc reads them.
fn strtod_prefix(s: &[u8]) -> Option<(f64, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut i = 0;
    let neg = match at(0) {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let sign = |v: f64| if neg { -v } else { v };
    let rest = &s[i.min(s.len())..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    if starts(b"infinity") {
        return Some((sign(f64::INFINITY), i + 8));
    }
    if starts(b"inf") {
        return Some((sign(f64::INFINITY), i + 3));
    }
    if starts(b"nan") {
        let mut j = i + 3;
        if at(j) == b'(' {
            let mut k = j + 1;
            while at(k).is_ascii_alphanumeric() || at(k) == b'_' {
                k += 1;
            }
            if at(k) == b')' {
                j = k + 1;
            }
        }
        return Some((sign(f64::NAN), j));
    }
    if at(i) == b'0' && (at(i + 1) | 0x20) == b'x' {
        let mut j = i + 2;
        let (mut mant, mut exp, mut digits) = (0f64, 0i32, 0);
        while at(j).is_ascii_hexdigit() {
            mant = mant * 16.0 + (at(j) as char).to_digit(16).unwrap_or(0) as f64;
            j += 1;
            digits += 1;
        }
        if at(j) == b'.' {
            j += 1;
            while at(j).is_ascii_hexdigit() {
                mant = mant * 16.0 + (at(j) as char).to_digit(16).unwrap_or(0) as f64;
                exp -= 4;
                j += 1;
                digits += 1;
            }
        }
        if digits == 0 {
            // "0x" alone reads as 0 followed by "x".
            return Some((sign(0.0), i + 1));
        }
        if (at(j) | 0x20) == b'p' {
            let mut k = j + 1;
            let eneg = match at(k) {
                b'-' => {
                    k += 1;
                    true
                }
                b'+' => {
                    k += 1;
                    false
                }
                _ => false,
            };
            if at(k).is_ascii_digit() {
                let mut e = 0i32;
                while at(k).is_ascii_digit() {
                    e = e.saturating_mul(10).saturating_add((at(k) - b'0') as i32);
                    k += 1;
                }
                exp = exp.saturating_add(if eneg { -e } else { e });
                j = k;
            }
        }
        return Some((sign(mant * 2f64.powi(exp)), j));
    }
    let start = i;
    let mut j = i;
    let mut digits = 0;
    while at(j).is_ascii_digit() {
        j += 1;
        digits += 1;
    }
    if at(j) == b'.' {
        j += 1;
        while at(j).is_ascii_digit() {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if (at(j) | 0x20) == b'e' {
        let mut k = j + 1;
        if at(k) == b'+' || at(k) == b'-' {
            k += 1;
        }
        if at(k).is_ascii_digit() {
            while at(k).is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    let text = std::str::from_utf8(&s[start..j]).ok()?;
    let v: f64 = text.parse().ok()?;
    Some((sign(v), j))
}

/// A token and the 0-based index where it starts (or, for errors, where the error is).
enum Tok {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Tok {
    fn name(&self) -> &'static str {
        match self {
            Tok::ObjBegin => "T_OBJ_BEGIN",
            Tok::ObjEnd => "T_OBJ_END",
            Tok::ArrBegin => "T_ARR_BEGIN",
            Tok::ArrEnd => "T_ARR_END",
            Tok::Str(_) => "T_STRING",
            Tok::Num(_) => "T_NUMBER",
            Tok::Bool(_) => "T_BOOLEAN",
            Tok::Null => "T_NULL",
            Tok::Colon => "T_COLON",
            Tok::Comma => "T_COMMA",
            Tok::End => "T_END",
            Tok::Error(e) => e,
        }
    }
}

/// json_parse_t. The input is read as the C string it is in lua_cjson: a NUL byte ends it.
struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: i64,
    cfg: Config,
}

impl JsonParser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.s.get(i).copied().unwrap_or(0)
    }

    /// json_is_invalid_number: what strtod accepts but strict JSON does not.
    fn invalid_number(&self) -> bool {
        let mut p = self.i;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        if c <= b'9' {
            return false;
        }
        let rest = &self.s[p.min(self.s.len())..];
        rest.len() >= 3
            && (rest[..3].eq_ignore_ascii_case(b"inf") || rest[..3].eq_ignore_ascii_case(b"nan"))
    }

    fn number(&mut self) -> (Tok, usize) {
        let at = self.i;
        let end = self.s[at..]
            .iter()
            .position(|&c| c == 0)
            .map_or(self.s.len(), |p| at + p);
        match strtod_prefix(&self.s[at..end]) {
            Some((n, used)) if used > 0 => {
                self.i += used;
                (Tok::Num(n), at)
            }
            _ => (Tok::Error("invalid number"), at),
        }
    }

    /// json_next_token.
    fn next(&mut self) -> (Tok, usize) {
        while matches!(self.at(self.i), b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
        let at = self.i;
        let c = self.at(at);
        let simple = |p: &mut Self, t: Tok| {
            p.i += 1;
            (t, at)
        };
        match c {
            0 => (Tok::End, at),
            b'{' => simple(self, Tok::ObjBegin),
            b'}' => simple(self, Tok::ObjEnd),
            b'[' => simple(self, Tok::ArrBegin),
            b']' => simple(self, Tok::ArrEnd),
            b':' => simple(self, Tok::Colon),
            b',' => simple(self, Tok::Comma),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                if !self.cfg.decode_invalid && self.invalid_number() {
                    return (Tok::Error("invalid number"), at);
                }
                self.number()
            }
            b'f' | b'i' | b'I' | b'n' | b'N' | b't' | b'+' => {
                for (word, tok) in [
                    (&b"true"[..], Tok::Bool(true)),
                    (b"false", Tok::Bool(false)),
                    (b"null", Tok::Null),
                ] {
                    if self.s[at..].starts_with(word) {
                        self.i += word.len();
                        return (tok, at);
                    }
                }
                if self.cfg.decode_invalid && self.invalid_number() {
                    return self.number();
                }
                (Tok::Error("invalid token"), at)
            }
            _ => (Tok::Error("invalid token"), at),
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let mut v = 0;
        for k in 0..4 {
            v = (v << 4) | (self.at(at + k) as char).to_digit(16)?;
        }
        Some(v)
    }

    /// json_append_unicode_escape at `self.i` (the backslash): the UTF-8 bytes and the escape's
    /// length.
    fn unicode_escape(&self) -> Option<(Vec<u8>, usize)> {
        let mut cp = self.hex4(self.i + 2)?;
        let mut len = 6;
        if cp & 0xF800 == 0xD800 {
            if cp & 0x400 != 0 {
                return None;
            }
            if self.at(self.i + 6) != b'\\' || self.at(self.i + 7) != b'u' {
                return None;
            }
            let low = self.hex4(self.i + 8)?;
            if low & 0xFC00 != 0xDC00 {
                return None;
            }
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        // codepoint_to_utf8, which also encodes lone low surrogates as lua_cjson does.
        let mut out = Vec::with_capacity(4);
        if cp <= 0x7F {
            out.push(cp as u8);
        } else if cp <= 0x7FF {
            out.extend_from_slice(&[(cp >> 6) as u8 | 0xC0, (cp & 0x3F) as u8 | 0x80]);
        } else if cp <= 0xFFFF {
            out.extend_from_slice(&[
                (cp >> 12) as u8 | 0xE0,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]);
        } else {
            out.extend_from_slice(&[
                (cp >> 18) as u8 | 0xF0,
                ((cp >> 12) & 0x3F) as u8 | 0x80,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]);
        }
        Some((out, len))
    }

    /// json_next_string_token; `self.i` is at the opening quote.
    fn string(&mut self) -> (Tok, usize) {
        let at = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let c = self.at(self.i);
            match c {
                b'"' => {
                    self.i += 1;
                    return (Tok::Str(out), at);
                }
                0 => return (Tok::Error("unexpected end of string"), self.i),
                b'\\' => {
                    let e = match self.at(self.i + 1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b't' => b'\t',
                        b'n' => b'\n',
                        b'f' => 12,
                        b'r' => b'\r',
                        b'u' => match self.unicode_escape() {
                            Some((bytes, len)) => {
                                out.extend_from_slice(&bytes);
                                self.i += len;
                                continue;
                            }
                            None => return (Tok::Error("invalid unicode escape code"), self.i),
                        },
                        _ => return (Tok::Error("invalid escape code"), self.i),
                    };
                    out.push(e);
                    self.i += 2;
                }
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    fn descend(&mut self) -> std::result::Result<(), String> {
        self.depth += 1;
        if self.depth > self.cfg.decode_max_depth {
            return Err(format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.i
            ));
        }
        Ok(())
    }

    /// json_process_value.
    fn value(&mut self, lua: &Lua, tok: (Tok, usize)) -> std::result::Result<Value, String> {
        let err = |exp: &str, t: &Tok, at: usize| {
            format!(
                "Expected {exp} but found {} at character {}",
                t.name(),
                at + 1
            )
        };
        let lerr = |e: mlua::Error| e.to_string();
        let (t, at) = tok;
        match t {
            Tok::Str(s) => Ok(Value::String(lua.create_string(&s).map_err(lerr)?)),
            Tok::Num(n) => Ok(Value::Number(n)),
            Tok::Bool(b) => Ok(Value::Boolean(b)),
            Tok::Null => Ok(null()),
            Tok::ArrBegin => {
                self.descend()?;
                let tbl = lua.create_table().map_err(lerr)?;
                let mut cur = self.next();
                if matches!(cur.0, Tok::ArrEnd) {
                    self.depth -= 1;
                    return Ok(Value::Table(tbl));
                }
                let mut n = 1;
                loop {
                    let v = self.value(lua, cur)?;
                    tbl.raw_set(n, v).map_err(lerr)?;
                    n += 1;
                    let (t, at) = self.next();
                    match t {
                        Tok::Comma => cur = self.next(),
                        Tok::ArrEnd => {
                            self.depth -= 1;
                            return Ok(Value::Table(tbl));
                        }
                        t => return Err(err("comma or array end", &t, at)),
                    }
                }
            }
            Tok::ObjBegin => {
                self.descend()?;
                let tbl = lua.create_table().map_err(lerr)?;
                let (mut t, mut at) = self.next();
                if matches!(t, Tok::ObjEnd) {
                    self.depth -= 1;
                    return Ok(Value::Table(tbl));
                }
                loop {
                    let Tok::Str(k) = t else {
                        return Err(err("object key string", &t, at));
                    };
                    let (c, cat) = self.next();
                    if !matches!(c, Tok::Colon) {
                        return Err(err("colon", &c, cat));
                    }
                    let vt = self.next();
                    let v = self.value(lua, vt)?;
                    tbl.raw_set(lua.create_string(&k).map_err(lerr)?, v)
                        .map_err(lerr)?;
                    let (n, nat) = self.next();
                    match n {
                        Tok::Comma => (t, at) = self.next(),
                        Tok::ObjEnd => {
                            self.depth -= 1;
                            return Ok(Value::Table(tbl));
                        }
                        n => return Err(err("comma or object end", &n, nat)),
                    }
                }
            }
            t => Err(err("value", &t, at)),
        }
    }
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
            match json_encode(&mut out, &v, 0, &conf) {
                Ok(()) => Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)])),
                Err(e) => Ok(Out::Where(e)),
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
            let mut p = JsonParser {
                s: &s,
                i: 0,
                depth: 0,
                cfg: *c.lock(),
            };
            let first = p.next();
            let v = match p.value(lua, first) {
                Ok(v) => v,
                Err(e) => return Ok(Out::Where(e)),
            };
            let (t, at) = p.next();
            if !matches!(t, Tok::End) {
                return Ok(Out::Where(format!(
                    "Expected the end but found {} at character {}",
                    t.name(),
                    at + 1
                )));
            }
            Ok(Out::Ok(vec![v]))
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
