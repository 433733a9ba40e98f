//! lua-cjson 2.1 as Redis bundles it, with its defaults and error texts.

use super::*;
use crate::script::{lib_fn, Out};
use mlua::{Function, LightUserData, Lua, Result, Table, Value};

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

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

fn json_number(out: &mut Vec<u8>, n: f64) -> std::result::Result<(), String> {
    if !n.is_finite() {
        return Err("Cannot serialise number: must not be NaN or Inf".into());
    }
    out.extend_from_slice(crate::num::format_g(n, 14).as_bytes());
    Ok(())
}

fn json_encode(out: &mut Vec<u8>, v: &Value, depth: usize) -> std::result::Result<(), String> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(i) => json_number(out, *i as f64)?,
        Value::Number(n) => json_number(out, *n)?,
        Value::String(s) => json_escape(out, &s.as_bytes()),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Table(t) => {
            if depth >= 1000 {
                return Err(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                ));
            }
            // lua_array_length: all keys positive integers, not excessively sparse.
            let mut max = 0f64;
            let mut items = 0usize;
            let mut is_array = true;
            for (k, _) in t.pairs::<Value, Value>().flatten() {
                let n = match k {
                    Value::Integer(i) => i as f64,
                    Value::Number(n) => n,
                    _ => {
                        is_array = false;
                        break;
                    }
                };
                if n < 1.0 || n.fract() != 0.0 {
                    is_array = false;
                    break;
                }
                max = max.max(n);
                items += 1;
            }
            if is_array && items > 0 {
                if max > (items * 2) as f64 && max > 10.0 {
                    return Err("Cannot serialise table: excessively sparse array".into());
                }
                out.push(b'[');
                for i in 1..=(max as usize) {
                    if i > 1 {
                        out.push(b',');
                    }
                    let v: Value = t.raw_get(i).unwrap_or(Value::Nil);
                    json_encode(out, &v, depth + 1)?;
                }
                out.push(b']');
            } else {
                out.push(b'{');
                let mut first = true;
                for (k, v) in t.pairs::<Value, Value>().flatten() {
                    if !first {
                        out.push(b',');
                    }
                    first = false;
                    match &k {
                        Value::String(s) => json_escape(out, &s.as_bytes()),
                        Value::Integer(i) => {
                            json_escape(out, crate::num::format_g(*i as f64, 14).as_bytes())
                        }
                        Value::Number(n) => {
                            json_escape(out, crate::num::format_g(*n, 14).as_bytes())
                        }
                        _ => {
                            return Err(
                                "Cannot serialise table: table key must be a number or string"
                                    .into(),
                            )
                        }
                    }
                    out.push(b':');
                    json_encode(out, &v, depth + 1)?;
                }
                out.push(b'}');
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

struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

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

impl<'a> JsonParser<'a> {
    /// The next token and the 1-based character where it starts.
    fn next(&mut self) -> (Tok, usize) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
        let at = self.i + 1;
        let Some(&c) = self.s.get(self.i) else {
            return (Tok::End, at);
        };
        let simple = |p: &mut Self, t: Tok| {
            p.i += 1;
            (t, at)
        };
        match c {
            b'{' => simple(self, Tok::ObjBegin),
            b'}' => simple(self, Tok::ObjEnd),
            b'[' => simple(self, Tok::ArrBegin),
            b']' => simple(self, Tok::ArrEnd),
            b':' => simple(self, Tok::Colon),
            b',' => simple(self, Tok::Comma),
            b'"' => (self.string(), at),
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(
                        self.s[self.i],
                        b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'
                    )
                {
                    self.i += 1;
                }
                match std::str::from_utf8(&self.s[start..self.i])
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                {
                    Some(n) => (Tok::Num(n), at),
                    None => (Tok::Error("invalid number"), at),
                }
            }
            _ => {
                for (word, tok) in [
                    (&b"true"[..], Tok::Bool(true)),
                    (b"false", Tok::Bool(false)),
                    (b"null", Tok::Null),
                ] {
                    if self.s[self.i..].starts_with(word) {
                        self.i += word.len();
                        return (tok, at);
                    }
                }
                (Tok::Error("invalid token"), at)
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.i..self.i + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.i += 4;
        Some(v)
    }

    fn string(&mut self) -> Tok {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Tok::Error("unexpected end of string");
            };
            self.i += 1;
            match c {
                b'"' => return Tok::Str(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return Tok::Error("unexpected end of string");
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let Some(mut cp) = self.hex4() else {
                                return Tok::Error("invalid unicode escape code");
                            };
                            if (0xD800..0xDC00).contains(&cp) {
                                if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Tok::Error("invalid unicode escape code");
                                }
                                self.i += 2;
                                match self.hex4() {
                                    Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                    }
                                    _ => return Tok::Error("invalid unicode escape code"),
                                }
                            }
                            match char::from_u32(cp) {
                                Some(ch) => {
                                    let mut b = [0u8; 4];
                                    out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                                }
                                None => return Tok::Error("invalid unicode escape code"),
                            }
                        }
                        _ => return Tok::Error("invalid escape code"),
                    }
                }
                c => out.push(c),
            }
        }
    }

    fn value(
        &mut self,
        lua: &Lua,
        tok: (Tok, usize),
        depth: usize,
    ) -> std::result::Result<Value, String> {
        let err = |exp: &str, t: &Tok, at: usize| {
            format!("Expected {exp} but found {} at character {at}", t.name())
        };
        let (t, at) = tok;
        let lerr = |e: mlua::Error| e.to_string();
        match t {
            Tok::Str(s) => Ok(Value::String(lua.create_string(&s).map_err(lerr)?)),
            Tok::Num(n) => Ok(Value::Number(n)),
            Tok::Bool(b) => Ok(Value::Boolean(b)),
            Tok::Null => Ok(null()),
            Tok::ObjBegin | Tok::ArrBegin if depth >= 1000 => Err(format!(
                "Found too many nested data structures ({}) at character {at}",
                depth + 1
            )),
            Tok::ArrBegin => {
                let tbl = lua.create_table().map_err(lerr)?;
                let mut n = 1;
                let first = self.next();
                if matches!(first.0, Tok::ArrEnd) {
                    return Ok(Value::Table(tbl));
                }
                let mut cur = first;
                loop {
                    let v = self.value(lua, cur, depth + 1)?;
                    tbl.raw_set(n, v).map_err(lerr)?;
                    n += 1;
                    let (t, at) = self.next();
                    match t {
                        Tok::Comma => cur = self.next(),
                        Tok::ArrEnd => return Ok(Value::Table(tbl)),
                        t => return Err(err("comma or array end", &t, at)),
                    }
                }
            }
            Tok::ObjBegin => {
                let tbl = lua.create_table().map_err(lerr)?;
                let (mut t, mut at) = self.next();
                if matches!(t, Tok::ObjEnd) {
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
                    let v = self.value(lua, vt, depth + 1)?;
                    tbl.raw_set(lua.create_string(&k).map_err(lerr)?, v)
                        .map_err(lerr)?;
                    let (n, nat) = self.next();
                    match n {
                        Tok::Comma => (t, at) = self.next(),
                        Tok::ObjEnd => return Ok(Value::Table(tbl)),
                        n => return Err(err("comma or object end", &n, nat)),
                    }
                }
            }
            t => Err(err("value", &t, at)),
        }
    }
}

pub fn cjson(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "encode",
        lib_fn(lua, mt, |lua, a| {
            if a.len() != 1 {
                return Ok(Out::Arg(1, "expected 1 argument".into()));
            }
            let v = a.into_iter().next().unwrap_or(Value::Nil);
            let mut out = Vec::new();
            match json_encode(&mut out, &v, 0) {
                Ok(()) => Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)])),
                Err(e) => Ok(Out::Where(e)),
            }
        })?,
    )?;
    t.raw_set(
        "decode",
        lib_fn(lua, mt, |lua, a| {
            if a.len() != 1 {
                return Ok(Out::Arg(1, "expected 1 argument".into()));
            }
            let v = a.into_iter().next().unwrap_or(Value::Nil);
            let s = match &v {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
                    Some(s) => s.as_bytes().to_vec(),
                    None => Vec::new(),
                },
                other => return Ok(type_err(1, "string", Some(other))),
            };
            let mut p = JsonParser { s: &s, i: 0 };
            let first = p.next();
            let v = match p.value(lua, first, 0) {
                Ok(v) => v,
                Err(e) => return Ok(Out::Where(e)),
            };
            let (t, at) = p.next();
            if !matches!(t, Tok::End) {
                return Ok(Out::Where(format!(
                    "Expected the end but found {} at character {at}",
                    t.name()
                )));
            }
            Ok(Out::Ok(vec![v]))
        })?,
    )?;
    t.raw_set("null", null())?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    // Configuration functions are accepted and report lua-cjson's defaults.
    for (name, ret) in [
        (
            "encode_sparse_array",
            vec![Value::Boolean(false), num(2.0), num(10.0)],
        ),
        ("encode_max_depth", vec![num(1000.0)]),
        ("decode_max_depth", vec![num(1000.0)]),
        ("encode_number_precision", vec![num(14.0)]),
        ("encode_keep_buffer", vec![Value::Boolean(true)]),
        ("encode_invalid_numbers", vec![Value::Boolean(false)]),
        ("decode_invalid_numbers", vec![Value::Boolean(true)]),
    ] {
        t.raw_set(name, lib_fn(lua, mt, move |_, _| Ok(Out::Ok(ret.clone())))?)?;
    }
    t.raw_set(
        "new",
        lib_fn(lua, mt, |_, _| {
            Ok(Out::Where("cjson.new is not supported".into()))
        })?,
    )?;
    Ok(t)
}
