//! Redis's bundled Lua libraries, rewritten in Rust: `bit` (LuaBitOp), `cjson` (lua-cjson 2.1
//! with Redis's defaults), `struct` (Roberto's struct, common formats) and `cmsgpack`.
//! Errors are raised with the caller's position, as luaL_error does.

use super::{lib_fn, Out};
use mlua::{Function, LightUserData, Lua, MultiValue, Result, Table, Value};

fn type_name(v: Option<&Value>) -> &'static str {
    match v {
        None => "no value",
        Some(Value::Nil) => "nil",
        Some(Value::Boolean(_)) => "boolean",
        Some(Value::Integer(_)) | Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Table(_)) => "table",
        Some(Value::Function(_)) => "function",
        Some(Value::Thread(_)) => "thread",
        _ => "userdata",
    }
}

/// luaL_checknumber: numbers and numeric strings.
fn check_number(v: Option<&Value>, i: usize, name: &str) -> std::result::Result<f64, String> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => {
            if let Some(n) = s.to_str().ok().and_then(|t| t.trim().parse::<f64>().ok()) {
                return Ok(n);
            }
            Err(format!(
                "bad argument #{i} to '{name}' (number expected, got string)"
            ))
        }
        other => Err(format!(
            "bad argument #{i} to '{name}' (number expected, got {})",
            type_name(other)
        )),
    }
}

fn num(n: f64) -> Value {
    Value::Number(n)
}

// ---- bit -----------------------------------------------------------------------------------

/// LuaBitOp's normalisation: round to nearest, keep the low 32 bits, signed.
fn tobit(d: f64) -> i32 {
    if !d.is_finite() {
        return 0;
    }
    let r = d.round_ties_even().rem_euclid(4294967296.0);
    r as u64 as u32 as i32
}

type BitOp = fn(i32, i32) -> i32;
type BitUnary = (&'static str, fn(i32) -> i32);

pub fn bit(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    let unary: [BitUnary; 3] = [
        ("tobit", |x| x),
        ("bnot", |x| !x),
        ("bswap", |x| x.swap_bytes()),
    ];
    for (name, f) in unary {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                match check_number(v.first(), 1, name) {
                    Ok(x) => Ok(Out::Ok(vec![num(f(tobit(x)) as f64)])),
                    Err(e) => Ok(Out::Where(e)),
                }
            })?,
        )?;
    }
    let folds: [(&'static str, BitOp); 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, f) in folds {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                let mut acc = match check_number(v.first(), 1, name) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(Out::Where(e)),
                };
                for i in 1..v.len() {
                    match check_number(v.get(i), i + 1, name) {
                        Ok(x) => acc = f(acc, tobit(x)),
                        Err(e) => return Ok(Out::Where(e)),
                    }
                }
                Ok(Out::Ok(vec![num(acc as f64)]))
            })?,
        )?;
    }
    let shifts: [(&'static str, BitOp); 5] = [
        ("lshift", |x, n| ((x as u32) << (n & 31)) as i32),
        ("rshift", |x, n| ((x as u32) >> (n & 31)) as i32),
        ("arshift", |x, n| x >> (n & 31)),
        ("rol", |x, n| (x as u32).rotate_left((n & 31) as u32) as i32),
        ("ror", |x, n| {
            (x as u32).rotate_right((n & 31) as u32) as i32
        }),
    ];
    for (name, f) in shifts {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                let x = match check_number(v.first(), 1, name) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(Out::Where(e)),
                };
                let n = match check_number(v.get(1), 2, name) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(Out::Where(e)),
                };
                Ok(Out::Ok(vec![num(f(x, n) as f64)]))
            })?,
        )?;
    }
    t.raw_set(
        "tohex",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let x = match check_number(v.first(), 1, "tohex") {
                Ok(x) => tobit(x) as u32,
                Err(e) => return Ok(Out::Where(e)),
            };
            let n = match v.get(1) {
                None | Some(Value::Nil) => 8,
                other => match check_number(other, 2, "tohex") {
                    Ok(n) => tobit(n),
                    Err(e) => return Ok(Out::Where(e)),
                },
            };
            let upper = n < 0;
            let n = n.unsigned_abs().min(8) as usize;
            let s = if upper {
                format!("{x:08X}")
            } else {
                format!("{x:08x}")
            };
            Ok(Out::Ok(vec![Value::String(
                lua.create_string(&s[8 - n..])?,
            )]))
        })?,
    )?;
    Ok(t)
}

// ---- cjson ---------------------------------------------------------------------------------

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
    out.extend_from_slice(g14(n).as_bytes());
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
                        Value::Integer(i) => json_escape(out, g14(*i as f64).as_bytes()),
                        Value::Number(n) => json_escape(out, g14(*n).as_bytes()),
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
                return Ok(Out::Where(
                    "bad argument #1 to 'encode' (expected 1 argument)".into(),
                ));
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
                return Ok(Out::Where(
                    "bad argument #1 to 'decode' (expected 1 argument)".into(),
                ));
            }
            let v = a.into_iter().next().unwrap_or(Value::Nil);
            let s = match &v {
                Value::String(s) => s.as_bytes().to_vec(),
                Value::Integer(_) | Value::Number(_) => match lua.coerce_string(v.clone())? {
                    Some(s) => s.as_bytes().to_vec(),
                    None => Vec::new(),
                },
                other => {
                    return Ok(Out::Where(format!(
                        "bad argument #1 to 'decode' (string expected, got {})",
                        type_name(Some(other))
                    )))
                }
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

// ---- struct --------------------------------------------------------------------------------

struct Fmt<'a> {
    f: &'a [u8],
    i: usize,
    little: bool,
}

impl Fmt<'_> {
    /// The next option and its optional size.
    fn next(&mut self) -> Option<(u8, Option<usize>)> {
        while let Some(&c) = self.f.get(self.i) {
            self.i += 1;
            match c {
                b'<' => self.little = true,
                b'>' => self.little = false,
                b'=' => self.little = cfg!(target_endian = "little"),
                b'!' | b' ' => {
                    while self.f.get(self.i).is_some_and(|d| d.is_ascii_digit()) {
                        self.i += 1;
                    }
                }
                _ => {
                    let start = self.i;
                    while self.f.get(self.i).is_some_and(|d| d.is_ascii_digit()) {
                        self.i += 1;
                    }
                    let n = std::str::from_utf8(&self.f[start..self.i])
                        .ok()
                        .and_then(|s| s.parse().ok());
                    return Some((c, n));
                }
            }
        }
        None
    }
}

fn int_size(c: u8, n: Option<usize>) -> Option<usize> {
    Some(match c {
        b'b' | b'B' => 1,
        b'h' | b'H' => 2,
        b'l' | b'L' | b'T' => 8,
        b'i' | b'I' => n.unwrap_or(4),
        _ => return None,
    })
}

fn struct_pack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = match v.first() {
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        other => {
            return Ok(Out::Where(format!(
                "bad argument #1 to 'pack' (string expected, got {})",
                type_name(other)
            )))
        }
    };
    let mut f = Fmt {
        f: &fmt,
        i: 0,
        little: true,
    };
    let mut out = Vec::new();
    let mut arg = 1;
    while let Some((c, n)) = f.next() {
        if let Some(size) = int_size(c, n) {
            if !(1..=8).contains(&size) {
                return Ok(Out::Where(format!(
                    "integral size {size} is larger than limit of 8"
                )));
            }
            let x = match check_number(v.get(arg), arg + 1, "pack") {
                Ok(x) => x,
                Err(e) => return Ok(Out::Where(e)),
            };
            arg += 1;
            let bytes = (x as i64).to_le_bytes();
            let mut b = bytes[..size].to_vec();
            if !f.little {
                b.reverse();
            }
            out.extend_from_slice(&b);
            continue;
        }
        match c {
            b'x' => out.push(0),
            b'f' | b'd' => {
                let x = match check_number(v.get(arg), arg + 1, "pack") {
                    Ok(x) => x,
                    Err(e) => return Ok(Out::Where(e)),
                };
                arg += 1;
                let mut b = if c == b'f' {
                    (x as f32).to_le_bytes().to_vec()
                } else {
                    x.to_le_bytes().to_vec()
                };
                if !f.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            b'c' | b's' => {
                let s = match lua.coerce_string(v.get(arg).cloned().unwrap_or(Value::Nil))? {
                    Some(s) => s.as_bytes().to_vec(),
                    None => {
                        return Ok(Out::Where(format!(
                            "bad argument #{} to 'pack' (string expected, got {})",
                            arg + 1,
                            type_name(v.get(arg))
                        )))
                    }
                };
                arg += 1;
                if c == b's' {
                    out.extend_from_slice(&s);
                    out.push(0);
                } else {
                    let len = match n {
                        Some(0) | None if n.is_none() => 1,
                        Some(0) => s.len(),
                        Some(l) => l,
                        None => 1,
                    };
                    if s.len() < len {
                        return Ok(Out::Where(format!(
                            "bad argument #{arg} to 'pack' (string too short)"
                        )));
                    }
                    out.extend_from_slice(&s[..len]);
                }
            }
            _ => return Ok(Out::Where(format!("invalid format option '{}'", c as char))),
        }
    }
    Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)]))
}

fn struct_unpack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let (fmt, data) = match (v.first(), v.get(1)) {
        (Some(Value::String(f)), Some(Value::String(d))) => {
            (f.as_bytes().to_vec(), d.as_bytes().to_vec())
        }
        (Some(Value::String(_)), other) => {
            return Ok(Out::Where(format!(
                "bad argument #2 to 'unpack' (string expected, got {})",
                type_name(other)
            )))
        }
        (other, _) => {
            return Ok(Out::Where(format!(
                "bad argument #1 to 'unpack' (string expected, got {})",
                type_name(other)
            )))
        }
    };
    let mut pos = match v.get(2) {
        None | Some(Value::Nil) => 0,
        other => match check_number(other, 3, "unpack") {
            Ok(p) if p >= 1.0 => p as usize - 1,
            _ => {
                return Ok(Out::Where(
                    "bad argument #3 to 'unpack' (offset must be 1 or greater)".into(),
                ))
            }
        },
    };
    let short = || Out::Where("bad argument #2 to 'unpack' (data string too short)".into());
    let mut f = Fmt {
        f: &fmt,
        i: 0,
        little: true,
    };
    let mut out = Vec::new();
    let mut last_num: Option<f64> = None;
    while let Some((c, n)) = f.next() {
        if let Some(size) = int_size(c, n) {
            if !(1..=8).contains(&size) {
                return Ok(Out::Where(format!(
                    "integral size {size} is larger than limit of 8"
                )));
            }
            let Some(b) = data.get(pos..pos + size) else {
                return Ok(short());
            };
            let mut b = b.to_vec();
            if !f.little {
                b.reverse();
            }
            let mut buf = [0u8; 8];
            buf[..size].copy_from_slice(&b);
            let raw = u64::from_le_bytes(buf);
            let signed = c.is_ascii_lowercase();
            let val = if signed && size < 8 {
                let shift = 64 - 8 * size as u32;
                (((raw << shift) as i64) >> shift) as f64
            } else if signed {
                raw as i64 as f64
            } else {
                raw as f64
            };
            pos += size;
            last_num = Some(val);
            out.push(num(val));
            continue;
        }
        match c {
            b'x' => pos += 1,
            b'f' | b'd' => {
                let size = if c == b'f' { 4 } else { 8 };
                let Some(b) = data.get(pos..pos + size) else {
                    return Ok(short());
                };
                let mut b = b.to_vec();
                if !f.little {
                    b.reverse();
                }
                let val = if size == 4 {
                    f32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as f64
                } else {
                    f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))
                };
                pos += size;
                last_num = Some(val);
                out.push(num(val));
            }
            b's' => {
                let Some(end) = data[pos.min(data.len())..].iter().position(|&b| b == 0) else {
                    return Ok(Out::Where("unfinished string in data".into()));
                };
                out.push(Value::String(lua.create_string(&data[pos..pos + end])?));
                pos += end + 1;
            }
            b'c' => {
                let len = match n {
                    None => 1,
                    Some(0) => match out.pop() {
                        Some(_) => last_num.unwrap_or(0.0) as usize,
                        None => 0,
                    },
                    Some(l) => l,
                };
                let Some(b) = data.get(pos..pos + len) else {
                    return Ok(short());
                };
                out.push(Value::String(lua.create_string(b)?));
                pos += len;
            }
            _ => return Ok(Out::Where(format!("invalid format option '{}'", c as char))),
        }
    }
    out.push(num((pos + 1) as f64));
    Ok(Out::Ok(out))
}

pub fn structlib(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", lib_fn(lua, mt, struct_pack)?)?;
    t.raw_set("unpack", lib_fn(lua, mt, struct_unpack)?)?;
    t.raw_set(
        "size",
        lib_fn(lua, mt, |_, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let fmt = match v.first() {
                Some(Value::String(s)) => s.as_bytes().to_vec(),
                other => {
                    return Ok(Out::Where(format!(
                        "bad argument #1 to 'size' (string expected, got {})",
                        type_name(other)
                    )))
                }
            };
            let mut f = Fmt {
                f: &fmt,
                i: 0,
                little: true,
            };
            let mut size = 0usize;
            while let Some((c, n)) = f.next() {
                size += match c {
                    b'x' => 1,
                    b'f' => 4,
                    b'd' => 8,
                    b'c' => n.unwrap_or(1),
                    b's' => return Ok(Out::Where("options 's' has no fixed size".into())),
                    _ => match int_size(c, n) {
                        Some(s) => s,
                        None => {
                            return Ok(Out::Where(format!("invalid format option '{}'", c as char)))
                        }
                    },
                };
            }
            Ok(Out::Ok(vec![num(size as f64)]))
        })?,
    )?;
    Ok(t)
}

// ---- cmsgpack ------------------------------------------------------------------------------

fn mp_encode(out: &mut Vec<u8>, v: &Value, depth: usize) {
    match v {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => mp_int(out, *i),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.is_finite() && n.abs() < 9.2e18 {
                mp_int(out, *n as i64);
            } else if (*n as f32) as f64 == *n {
                out.push(0xca);
                out.extend_from_slice(&(*n as f32).to_be_bytes());
            } else {
                out.push(0xcb);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        Value::String(s) => {
            let b = s.as_bytes();
            let l = b.len();
            if l < 32 {
                out.push(0xa0 | l as u8);
            } else if l <= 0xff {
                out.extend_from_slice(&[0xd9, l as u8]);
            } else if l <= 0xffff {
                out.push(0xda);
                out.extend_from_slice(&(l as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&(l as u32).to_be_bytes());
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if depth < 16 => {
            let len = t.raw_len();
            let count = t.pairs::<Value, Value>().count();
            if len > 0 && len == count {
                mp_len(out, len, 0x90, 0xdc);
                for i in 1..=len {
                    let v: Value = t.raw_get(i).unwrap_or(Value::Nil);
                    mp_encode(out, &v, depth + 1);
                }
            } else {
                mp_len(out, count, 0x80, 0xde);
                for (k, v) in t.pairs::<Value, Value>().flatten() {
                    mp_encode(out, &k, depth + 1);
                    mp_encode(out, &v, depth + 1);
                }
            }
        }
        _ => out.push(0xc0),
    }
}

fn mp_len(out: &mut Vec<u8>, n: usize, fix: u8, big: u8) {
    if n < 16 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(big);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(big + 1);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn mp_int(out: &mut Vec<u8>, i: i64) {
    if (0..128).contains(&i) {
        out.push(i as u8);
    } else if (-32..0).contains(&i) {
        out.push(i as i8 as u8);
    } else if i >= 0 {
        if i <= 0xff {
            out.extend_from_slice(&[0xcc, i as u8]);
        } else if i <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(i as u16).to_be_bytes());
        } else if i <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(i as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(i as u64).to_be_bytes());
        }
    } else if i >= -128 {
        out.extend_from_slice(&[0xd0, i as i8 as u8]);
    } else if i >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= i32::MIN as i64 {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

struct MpDec<'a> {
    s: &'a [u8],
    i: usize,
}

impl MpDec<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let b = self.s.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(b)
    }
    fn be(&mut self, n: usize) -> Option<u64> {
        Some(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
    fn value(&mut self, lua: &Lua, depth: usize) -> Option<Value> {
        if depth > 1000 {
            return None;
        }
        let c = *self.s.get(self.i)?;
        self.i += 1;
        let n = |x: f64| Some(Value::Number(x));
        match c {
            0x00..=0x7f => n(c as f64),
            0xe0..=0xff => n(c as i8 as f64),
            0xc0 => Some(Value::Nil),
            0xc2 => Some(Value::Boolean(false)),
            0xc3 => Some(Value::Boolean(true)),
            0xcc => n(self.be(1)? as f64),
            0xcd => n(self.be(2)? as f64),
            0xce => n(self.be(4)? as f64),
            0xcf => n(self.be(8)? as f64),
            0xd0 => n(self.be(1)? as u8 as i8 as f64),
            0xd1 => n(self.be(2)? as u16 as i16 as f64),
            0xd2 => n(self.be(4)? as u32 as i32 as f64),
            0xd3 => n(self.be(8)? as i64 as f64),
            0xca => n(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => n(f64::from_bits(self.be(8)?)),
            0xa0..=0xbf => self.str(lua, (c & 0x1f) as usize),
            0xd9 | 0xc4 => {
                let l = self.be(1)? as usize;
                self.str(lua, l)
            }
            0xda | 0xc5 => {
                let l = self.be(2)? as usize;
                self.str(lua, l)
            }
            0xdb | 0xc6 => {
                let l = self.be(4)? as usize;
                self.str(lua, l)
            }
            0x90..=0x9f => self.arr(lua, (c & 0x0f) as usize, depth),
            0xdc => {
                let l = self.be(2)? as usize;
                self.arr(lua, l, depth)
            }
            0xdd => {
                let l = self.be(4)? as usize;
                self.arr(lua, l, depth)
            }
            0x80..=0x8f => self.map(lua, (c & 0x0f) as usize, depth),
            0xde => {
                let l = self.be(2)? as usize;
                self.map(lua, l, depth)
            }
            0xdf => {
                let l = self.be(4)? as usize;
                self.map(lua, l, depth)
            }
            _ => None,
        }
    }
    fn str(&mut self, lua: &Lua, l: usize) -> Option<Value> {
        let b = self.take(l)?.to_vec();
        lua.create_string(&b).ok().map(Value::String)
    }
    fn arr(&mut self, lua: &Lua, l: usize, depth: usize) -> Option<Value> {
        if l > self.s.len() - self.i {
            return None;
        }
        let t = lua.create_table().ok()?;
        for i in 1..=l {
            let v = self.value(lua, depth + 1)?;
            t.raw_set(i, v).ok()?;
        }
        Some(Value::Table(t))
    }
    fn map(&mut self, lua: &Lua, l: usize, depth: usize) -> Option<Value> {
        if l > self.s.len() - self.i {
            return None;
        }
        let t = lua.create_table().ok()?;
        for _ in 0..l {
            let k = self.value(lua, depth + 1)?;
            let v = self.value(lua, depth + 1)?;
            if !k.is_nil() {
                t.raw_set(k, v).ok()?;
            }
        }
        Some(Value::Table(t))
    }
}

pub fn cmsgpack(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lib_fn(lua, mt, |lua, a| {
            if a.is_empty() {
                return Ok(Out::Where("MessagePack pack needs input.".into()));
            }
            let mut out = Vec::new();
            for v in a.iter() {
                mp_encode(&mut out, v, 0);
            }
            Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)]))
        })?,
    )?;
    t.raw_set(
        "unpack",
        lib_fn(lua, mt, |lua, a| {
            let s = match a.into_iter().next() {
                Some(Value::String(s)) => s.as_bytes().to_vec(),
                _ => return Ok(Out::Where("MessagePack unpack needs a string.".into())),
            };
            let mut d = MpDec { s: &s, i: 0 };
            let mut out = Vec::new();
            while d.i < s.len() {
                match d.value(lua, 0) {
                    Some(v) => out.push(v),
                    None => return Ok(Out::Where("Missing bytes in input.".into())),
                }
            }
            Ok(Out::Ok(out))
        })?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

/// printf's `%.14g` (lua-cjson's number format and Lua's own tostring).
fn g14(d: f64) -> String {
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let p = 14usize;
    let e = format!("{:.*e}", p - 1, d);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if x < -4 || x >= p as i32 {
        let sign = if x < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), x.abs())
    } else {
        let decimals = (p as i32 - 1 - x).max(0) as usize;
        trim(&format!("{d:.decimals$}"))
    }
}
