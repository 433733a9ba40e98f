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

/// luaL_checknumber: numbers and numeric strings; the error is luaL_typerror's.
fn check_number(v: Option<&Value>, i: usize) -> std::result::Result<f64, Out> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => match s.to_str().ok().and_then(|t| str2d(&t)) {
            Some(n) => Ok(n),
            None => Err(type_err(i, "number", v)),
        },
        other => Err(type_err(i, "number", other)),
    }
}

/// luaL_typerror: `bad argument #i to 'f' (T expected, got U)`.
fn type_err(i: usize, expected: &str, got: Option<&Value>) -> Out {
    Out::Arg(
        i as i32,
        format!("{expected} expected, got {}", type_name(got)),
    )
}

/// luaO_str2d: strtod (decimal or hex) with surrounding whitespace only.
fn str2d(t: &str) -> Option<f64> {
    let t = t.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let v = u64::from_str_radix(h, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    if body.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        let l = body.to_ascii_lowercase();
        if l != "inf" && l != "infinity" && l != "nan" {
            return None;
        }
    }
    t.parse::<f64>().ok()
}

/// luaL_checkinteger / luaL_optinteger: the number truncated toward zero.
fn check_integer(v: Option<&Value>, i: usize) -> std::result::Result<i64, Out> {
    check_number(v, i).map(|n| n as i64)
}

fn opt_integer(v: Option<&Value>, i: usize, def: i64) -> std::result::Result<i64, Out> {
    match v {
        None | Some(Value::Nil) => Ok(def),
        other => check_integer(other, i),
    }
}

/// luaL_checklstring: strings, and numbers converted to strings.
fn check_string(
    lua: &Lua,
    v: Option<&Value>,
    i: usize,
) -> Result<std::result::Result<Vec<u8>, Out>> {
    match v {
        Some(Value::String(s)) => Ok(Ok(s.as_bytes().to_vec())),
        Some(x @ (Value::Integer(_) | Value::Number(_))) => match lua.coerce_string(x.clone())? {
            Some(s) => Ok(Ok(s.as_bytes().to_vec())),
            None => Ok(Err(type_err(i, "string", v))),
        },
        other => Ok(Err(type_err(i, "string", other))),
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
                match check_number(v.first(), 1) {
                    Ok(x) => Ok(Out::Ok(vec![num(f(tobit(x)) as f64)])),
                    Err(e) => Ok(e),
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
                let mut acc = match check_number(v.first(), 1) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                for i in 1..v.len() {
                    match check_number(v.get(i), i + 1) {
                        Ok(x) => acc = f(acc, tobit(x)),
                        Err(e) => return Ok(e),
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
                let x = match check_number(v.first(), 1) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                let n = match check_number(v.get(1), 2) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                Ok(Out::Ok(vec![num(f(x, n) as f64)]))
            })?,
        )?;
    }
    t.raw_set(
        "tohex",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let x = match check_number(v.first(), 1) {
                Ok(x) => tobit(x) as u32,
                Err(e) => return Ok(e),
            };
            let n = match v.get(1) {
                None | Some(Value::Nil) => 8,
                other => match check_number(other, 2) {
                    Ok(n) => tobit(n),
                    Err(e) => return Ok(e),
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

// ---- struct --------------------------------------------------------------------------------
// Roberto Ierusalimschy's struct library as Redis bundles it (deps/lua/src/lua_struct.c):
// integral sizes up to MAXINTSIZE, `!` alignment, native little endian.

const MAXINTSIZE: usize = 32;
const MAXALIGN: usize = 8;

struct Header {
    little: bool,
    align: usize,
}

/// getnum: the digits at `fmt[*i..]`, or `df` when there are none.
fn getnum(fmt: &[u8], i: &mut usize, df: usize) -> std::result::Result<usize, Out> {
    if !fmt.get(*i).is_some_and(|d| d.is_ascii_digit()) {
        return Ok(df);
    }
    let mut a: i32 = 0;
    while let Some(&d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
        let dv = (d - b'0') as i32;
        if a > i32::MAX / 10 || a * 10 > i32::MAX - dv {
            return Err(Out::Where("integral size overflow".into()));
        }
        a = a * 10 + dv;
        *i += 1;
    }
    Ok(a as usize)
}

/// optsize: the size of one option (0 for options without a fixed one).
fn optsize(opt: u8, fmt: &[u8], i: &mut usize) -> std::result::Result<usize, Out> {
    Ok(match opt {
        b'B' | b'b' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' | b'T' => 8,
        b'f' => 4,
        b'd' => 8,
        b'x' => 1,
        b'c' => getnum(fmt, i, 1)?,
        b'i' | b'I' => {
            let sz = getnum(fmt, i, 4)?;
            if sz > MAXINTSIZE {
                return Err(Out::Where(format!(
                    "integral size {sz} is larger than limit of {MAXINTSIZE}"
                )));
            }
            sz
        }
        _ => 0,
    })
}

fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    size.wrapping_sub(len & (size - 1)) & (size - 1)
}

fn controloptions(
    opt: u8,
    fmt: &[u8],
    i: &mut usize,
    h: &mut Header,
) -> std::result::Result<(), Out> {
    match opt {
        b' ' => Ok(()),
        b'>' => {
            h.little = false;
            Ok(())
        }
        b'<' => {
            h.little = true;
            Ok(())
        }
        b'!' => {
            let a = getnum(fmt, i, MAXALIGN)?;
            if a == 0 || a & (a - 1) != 0 {
                return Err(Out::Where(format!("alignment {a} is not a power of 2")));
            }
            h.align = a;
            Ok(())
        }
        _ => Err(Out::Arg(
            1,
            format!("invalid format option '{}'", opt as char),
        )),
    }
}

fn is_int_opt(opt: u8) -> bool {
    matches!(
        opt,
        b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I'
    )
}

/// `?` for the struct functions: a Lua error result ends the call.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(out) => return Ok(out),
        }
    };
}

fn struct_pack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut out = Vec::new();
    let mut arg = 2usize;
    let mut total = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = tri!(optsize(opt, &fmt, &mut i));
        let toalign = gettoalign(total, &h, opt, size);
        total += toalign;
        out.resize(out.len() + toalign, 0);
        match opt {
            _ if is_int_opt(opt) => {
                let n = tri!(check_number(v.get(arg - 1), arg));
                arg += 1;
                let mut value = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                let mut buf = [0u8; MAXINTSIZE];
                for k in 0..size {
                    let at = if h.little { k } else { size - 1 - k };
                    buf[at] = (value & 0xff) as u8;
                    value >>= 8;
                }
                out.extend_from_slice(&buf[..size]);
            }
            b'x' => out.push(0),
            b'f' | b'd' => {
                let n = tri!(check_number(v.get(arg - 1), arg));
                arg += 1;
                let mut b = if opt == b'f' {
                    (n as f32).to_le_bytes().to_vec()
                } else {
                    n.to_le_bytes().to_vec()
                };
                if !h.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            b'c' | b's' => {
                let s = tri!(check_string(lua, v.get(arg - 1), arg)?);
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // lua_struct.c checks after advancing `arg`, so it names the next one.
                    return Ok(Out::Arg(arg as i32, "string too short".into()));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            _ => tri!(controloptions(opt, &fmt, &mut i, &mut h)),
        }
        total += size;
    }
    Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)]))
}

/// getinteger: only the low 64 bits survive, and the sign mask uses the shift count modulo 64
/// as x86 does for lua_struct.c's oversized shifts.
fn getinteger(b: &[u8], little: bool, signed: bool) -> f64 {
    let size = b.len();
    let mut l: u64 = 0;
    for k in 0..size {
        let at = if little { size - 1 - k } else { k };
        l = (l << 8) | b[at] as u64;
    }
    if !signed {
        return l as f64;
    }
    let mask = u64::MAX << ((size * 8).wrapping_sub(1) & 63);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn struct_unpack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let data = tri!(check_string(lua, v.get(1), 2)?);
    let pos = tri!(opt_integer(v.get(2), 3, 1)) as u64 as usize;
    if pos == 0 {
        return Ok(Out::Arg(3, "offset must be 1 or greater".into()));
    }
    let mut pos = pos - 1;
    let ld = data.len();
    let mut h = Header {
        little: true,
        align: 1,
    };
    let too_short = || Out::Arg(2, "data string too short".into());
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = tri!(optsize(opt, &fmt, &mut i));
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Ok(too_short());
        }
        match opt {
            _ if is_int_opt(opt) => {
                let signed = opt.is_ascii_lowercase();
                out.push(num(getinteger(&data[pos..pos + size], h.little, signed)));
            }
            b'x' => {}
            b'f' => {
                let mut b: [u8; 4] = data[pos..pos + 4].try_into().unwrap_or([0; 4]);
                if !h.little {
                    b.reverse();
                }
                out.push(num(f32::from_le_bytes(b) as f64));
            }
            b'd' => {
                let mut b: [u8; 8] = data[pos..pos + 8].try_into().unwrap_or([0; 8]);
                if !h.little {
                    b.reverse();
                }
                out.push(num(f64::from_le_bytes(b)));
            }
            b'c' => {
                if size == 0 {
                    let prev = out.last().and_then(|p| check_number(Some(p), 0).ok());
                    let Some(n) = prev else {
                        return Ok(Out::Where("format 'c0' needs a previous size".into()));
                    };
                    size = n as u64 as usize;
                    out.pop();
                    if !(size <= ld && pos <= ld - size) {
                        return Ok(too_short());
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(e) = data[pos..].iter().position(|&b| b == 0) else {
                    return Ok(Out::Where("unfinished string in data".into()));
                };
                size = e + 1;
                out.push(Value::String(lua.create_string(&data[pos..pos + e])?));
            }
            _ => tri!(controloptions(opt, &fmt, &mut i, &mut h)),
        }
        pos = pos.wrapping_add(size);
    }
    out.push(num(pos.wrapping_add(1) as f64));
    Ok(Out::Ok(out))
}

fn struct_size(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut pos = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let size = tri!(optsize(opt, &fmt, &mut i));
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return Ok(Out::Arg(1, "option 's' has no fixed size".into()));
        } else if opt == b'c' && size == 0 {
            return Ok(Out::Arg(1, "option 'c0' has no fixed size".into()));
        }
        if !opt.is_ascii_alphanumeric() {
            tri!(controloptions(opt, &fmt, &mut i, &mut h));
        }
        pos = pos.wrapping_add(size);
    }
    Ok(Out::Ok(vec![num(pos as f64)]))
}

pub fn structlib(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", lib_fn(lua, mt, struct_pack)?)?;
    t.raw_set("unpack", lib_fn(lua, mt, struct_unpack)?)?;
    t.raw_set("size", lib_fn(lua, mt, struct_size)?)?;
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

/// Why decoding stopped: mp_cur's errors, and lua_settable's refusal of a nil/NaN key.
enum MpErr {
    Eof,
    BadFmt,
    Raise(&'static str),
    Lua(mlua::Error),
}

impl From<mlua::Error> for MpErr {
    fn from(e: mlua::Error) -> Self {
        MpErr::Lua(e)
    }
}

type MpResult = std::result::Result<Value, MpErr>;

struct MpDec<'a> {
    s: &'a [u8],
    i: usize,
}

impl MpDec<'_> {
    fn take(&mut self, n: usize) -> std::result::Result<&[u8], MpErr> {
        let end = self.i.checked_add(n).ok_or(MpErr::Eof)?;
        let b = self.s.get(self.i..end).ok_or(MpErr::Eof)?;
        self.i = end;
        Ok(b)
    }
    fn be(&mut self, n: usize) -> std::result::Result<u64, MpErr> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
    /// mp_decode_to_lua_type.
    fn value(&mut self, lua: &Lua, depth: usize) -> MpResult {
        if depth > 1000 {
            return Err(MpErr::Raise("stack overflow"));
        }
        let c = *self.s.get(self.i).ok_or(MpErr::Eof)?;
        self.i += 1;
        let n = |x: f64| Ok(Value::Number(x));
        match c {
            0x00..=0x7f => n(c as f64),
            0xe0..=0xff => n(c as i8 as f64),
            0xc0 => Ok(Value::Nil),
            0xc2 => Ok(Value::Boolean(false)),
            0xc3 => Ok(Value::Boolean(true)),
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
            0xd9 => {
                let l = self.be(1)? as usize;
                self.str(lua, l)
            }
            0xda => {
                let l = self.be(2)? as usize;
                self.str(lua, l)
            }
            0xdb => {
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
            _ => Err(MpErr::BadFmt),
        }
    }
    fn str(&mut self, lua: &Lua, l: usize) -> MpResult {
        let b = self.take(l)?;
        Ok(Value::String(lua.create_string(b)?))
    }
    fn arr(&mut self, lua: &Lua, l: usize, depth: usize) -> MpResult {
        // No capacity from the declared length: a short input ends the loop with Eof.
        let t = lua.create_table()?;
        for i in 1..=l {
            let v = self.value(lua, depth + 1)?;
            t.raw_set(i, v)?;
        }
        Ok(Value::Table(t))
    }
    fn map(&mut self, lua: &Lua, l: usize, depth: usize) -> MpResult {
        let t = lua.create_table()?;
        for _ in 0..l {
            let k = self.value(lua, depth + 1)?;
            let v = self.value(lua, depth + 1)?;
            match k {
                Value::Nil => return Err(MpErr::Raise("table index is nil")),
                Value::Number(n) if n.is_nan() => return Err(MpErr::Raise("table index is NaN")),
                _ => t.raw_set(k, v)?,
            }
        }
        Ok(Value::Table(t))
    }
}

/// mp_unpack_full: `limit` values from byte `offset` (both 0: all values, no offset result).
fn mp_unpack_full(lua: &Lua, s: &[u8], limit: i64, offset: i64) -> Result<Out> {
    let decode_all = limit == 0 && offset == 0;
    let len = s.len();
    if offset < 0 || limit < 0 {
        // lua_cmsgpack.c prints the input length where it says "limit".
        return Ok(Out::Where(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    } else if offset as u64 > len as u64 {
        return Ok(Out::Where(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut d = MpDec {
        s: &s[offset as usize..],
        i: 0,
    };
    let mut out = Vec::new();
    let mut cnt = 0i64;
    while d.i < d.s.len() && cnt < limit {
        match d.value(lua, 0) {
            Ok(v) => out.push(v),
            Err(MpErr::Eof) => return Ok(Out::Where("Missing bytes in input.".into())),
            Err(MpErr::BadFmt) => return Ok(Out::Where("Bad data format in input.".into())),
            Err(MpErr::Raise(m)) => return Ok(Out::Raise(Value::String(lua.create_string(m)?))),
            Err(MpErr::Lua(e)) => return Err(e),
        }
        cnt += 1;
    }
    if !decode_all {
        let left = d.s.len() - d.i;
        let next = if left == 0 { -1 } else { (len - left) as i64 };
        out.insert(0, num(next as f64));
    }
    Ok(Out::Ok(out))
}

pub fn cmsgpack(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lib_fn(lua, mt, |lua, a| {
            if a.is_empty() {
                return Ok(Out::Arg(0, "MessagePack pack needs input.".into()));
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
            let v: Vec<Value> = a.into_iter().collect();
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, 0, 0)
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let offset = tri!(opt_integer(v.get(1), 2, 0)) as i32 as i64;
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, 1, offset)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let limit = tri!(check_integer(v.get(1), 2)) as i32 as i64;
            let offset = tri!(opt_integer(v.get(2), 3, 0)) as i32 as i64;
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, limit, offset)
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

// ---- math.random ---------------------------------------------------------------------------

/// rand.c's redisLrand48 state after `redisSrand48(seed)`.
pub fn srand48_state(seed: i32) -> u64 {
    let s = seed as u32 as u64;
    ((s >> 16) << 32) | ((s & 0xffff) << 16) | 0x330E
}

/// redisLrand48: one step of the 48-bit LCG, the top 31 bits.
fn lrand48(state: &std::sync::atomic::AtomicU64) -> i32 {
    use std::sync::atomic::Ordering;
    let x = state.load(Ordering::Relaxed);
    let x = 0x5DEECE66Du64.wrapping_mul(x).wrapping_add(0xB) & ((1u64 << 48) - 1);
    state.store(x, Ordering::Relaxed);
    (x >> 17) as i32
}

/// luaL_checkint.
fn check_int(v: Option<&Value>, i: usize) -> std::result::Result<i32, Out> {
    check_integer(v, i).map(|n| n as i32)
}

fn with_rand<T>(lua: &Lua, f: impl FnOnce(&std::sync::atomic::AtomicU64) -> T) -> T {
    match lua.app_data_ref::<super::RunCtx>() {
        Some(rc) if rc.state.is_some() => f(&rc.state.as_ref().expect("checked").scripting.rand),
        _ => f(&std::sync::atomic::AtomicU64::new(srand48_state(0))),
    }
}

/// Redis's redis_math_random / redis_math_randomseed, which replace Lua's own so scripts get
/// the same sequence on every platform.
pub fn math_random(lua: &Lua, mt: &Function, math: &Table) -> Result<()> {
    math.raw_set(
        "random",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let max = i32::MAX;
            let r = with_rand(lua, |s| (lrand48(s) % max) as f64 / max as f64);
            let x = match v.len() {
                0 => r,
                1 => {
                    let u = tri!(check_int(v.first(), 1));
                    if u < 1 {
                        return Ok(Out::Arg(1, "interval is empty".into()));
                    }
                    (r * u as f64).floor() + 1.0
                }
                2 => {
                    let l = tri!(check_int(v.first(), 1));
                    let u = tri!(check_int(v.get(1), 2));
                    if l > u {
                        return Ok(Out::Arg(2, "interval is empty".into()));
                    }
                    (r * u.wrapping_sub(l).wrapping_add(1) as f64).floor() + l as f64
                }
                _ => return Ok(Out::Where("wrong number of arguments".into())),
            };
            Ok(Out::Ok(vec![num(x)]))
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let seed = tri!(check_int(v.first(), 1));
            with_rand(lua, |s| {
                s.store(srand48_state(seed), std::sync::atomic::Ordering::Relaxed)
            });
            Ok(Out::Ok(vec![]))
        })?,
    )?;
    Ok(())
}
