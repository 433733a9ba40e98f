//! lua_cjson's decoder: its tokenizer (strtod for numbers, NUL as the end of input, its
//! invalid-number rules), its parser, and its error texts with their character positions.

use super::{null, Config, Fail, Poll};
use mlua::{Lua, Value};

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
    poll: Poll<'a>,
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

    /// strtod from here. C's strtod stops at the NUL that ends the input as lua_cjson sees it;
    /// every scan in `strtod_prefix` stops at a NUL too, so the rest of the input is passed as
    /// is (looking for the NUL first made decoding an array of numbers quadratic).
    fn number(&mut self) -> (Tok, usize) {
        let at = self.i;
        match strtod_prefix(&self.s[at..]) {
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
    fn value(&mut self, lua: &Lua, tok: (Tok, usize)) -> std::result::Result<Value, Fail> {
        if self.poll.stop() {
            return Err(Fail::Stopped);
        }
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
                        t => return Err(err("comma or array end", &t, at).into()),
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
                        return Err(err("object key string", &t, at).into());
                    };
                    let (c, cat) = self.next();
                    if !matches!(c, Tok::Colon) {
                        return Err(err("colon", &c, cat).into());
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
                        n => return Err(err("comma or object end", &n, nat).into()),
                    }
                }
            }
            t => Err(err("value", &t, at).into()),
        }
    }
}

/// json_decode's body: the value `s` holds, or the error to raise.
pub(super) fn decode(lua: &Lua, s: &[u8], cfg: Config) -> std::result::Result<Value, Fail> {
    let mut p = JsonParser {
        s,
        i: 0,
        depth: 0,
        cfg,
        poll: Poll::new(lua),
    };
    let first = p.next();
    let v = p.value(lua, first)?;
    let (t, at) = p.next();
    if !matches!(t, Tok::End) {
        return Err(format!(
            "Expected the end but found {} at character {}",
            t.name(),
            at + 1
        )
        .into());
    }
    Ok(v)
}
