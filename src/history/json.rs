//! The JSON of the history files: one object a line, written and read here so the formats
//! need no serialization crate. Strings are bytes (lock keys and tokens need not be UTF-8):
//! a byte that is not part of valid UTF-8 is written as a lone low surrogate `\udcXX`, the
//! escape Python's `surrogateescape` uses, so a Python test reads and writes the same keys.

/// A parsed JSON value. Objects keep their members in order (they are small).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Vec<u8>),
    Arr(Vec<Json>),
    Obj(Vec<(Vec<u8>, Json)>),
}

#[cfg(test)]
impl Json {
    /// The member `name` of an object.
    pub(crate) fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m
                .iter()
                .find(|(k, _)| k.as_slice() == name.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Parses one JSON document; trailing spaces are allowed.
#[cfg(test)]
pub(crate) fn parse(text: &[u8]) -> Result<Json, String> {
    let mut p = Parser { s: text, i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text at column {}", p.i + 1));
    }
    Ok(v)
}

/// Nesting deeper than this is refused (a history line is two or three levels deep).
const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\r' | b'\n') {
            self.i += 1;
        }
    }

    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at column {}", self.i + 1))
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return self.err("nested too deep");
        }
        self.ws();
        match self.s.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(members));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return self.err("expected a member name");
                    }
                    let k = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return self.err("expected ':'");
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    members.push((k, v));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Json::Obj(members));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(items));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(c) if *c == b'-' || c.is_ascii_digit() => self.number(),
            Some(_) => self.err("unexpected character"),
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Result<Json, String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            self.err("unexpected word")
        }
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        let mut float = false;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'0'..=b'9' => {}
                b'.' | b'e' | b'E' | b'+' | b'-' => float = true,
                _ => break,
            }
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if !float {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Json::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(f) => Ok(Json::Float(f)),
            Err(_) => Err(format!("bad number at column {}", start + 1)),
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let t = std::str::from_utf8(h).map_err(|_| "bad \\u escape")?;
        let v = u32::from_str_radix(t, 16).map_err(|_| "bad \\u escape")?;
        self.i += 4;
        Ok(v)
    }

    /// A string at `self.i` (on its opening quote), as bytes.
    fn string(&mut self) -> Result<Vec<u8>, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            // Copy the run up to the next quote or backslash in one go.
            let rest = &self.s[self.i..];
            let n = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\')
                .ok_or_else(|| "unterminated string".to_string())?;
            out.extend_from_slice(&rest[..n]);
            self.i += n;
            if self.s[self.i] == b'"' {
                self.i += 1;
                return Ok(out);
            }
            self.i += 1;
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                b'/' => out.push(b'/'),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'u' => {
                    let u = self.hex4()?;
                    let ch =
                        if (0xD800..0xDC00).contains(&u) && self.s[self.i..].starts_with(b"\\u") {
                            let save = self.i;
                            self.i += 2;
                            let lo = self.hex4()?;
                            if (0xDC00..0xE000).contains(&lo) {
                                char::from_u32(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00))
                            } else {
                                self.i = save;
                                None
                            }
                        } else if (0xDC80..0xDD00).contains(&u) {
                            // A raw byte, as `surrogateescape` writes it.
                            out.push((u - 0xDC00) as u8);
                            continue;
                        } else {
                            char::from_u32(u)
                        };
                    let ch = ch.unwrap_or('\u{FFFD}');
                    let mut b = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut b).as_bytes());
                }
                _ => return self.err("bad escape"),
            }
        }
    }
}

/// A member's value as [`members`] hands it out: strings borrowed when they hold no escape,
/// nested objects and arrays as their raw text (read them with [`members`] or [`items`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val<'a> {
    Str(std::borrow::Cow<'a, [u8]>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    Obj(&'a [u8]),
    Arr(&'a [u8]),
}

impl Json {
    fn into_val<'a>(self) -> Val<'a> {
        match self {
            Json::Int(i) => Val::Int(i),
            Json::Float(f) => Val::Float(f),
            Json::Bool(b) => Val::Bool(b),
            _ => Val::Null,
        }
    }
}

impl Val<'_> {
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Float(f) if f.is_finite() => Some(*f as i64),
            _ => None,
        }
    }

    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn bool(&self) -> Option<bool> {
        match self {
            Val::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl<'a> Parser<'a> {
    /// The value at `self.i`, without building a tree.
    fn val(&mut self, depth: usize) -> Result<Val<'a>, String> {
        self.ws();
        let start = self.i;
        match self.s.get(self.i) {
            Some(b'"') => {
                // No escape: borrow the bytes between the quotes.
                let rest = &self.s[self.i + 1..];
                if let Some(n) = rest.iter().position(|&c| c == b'"' || c == b'\\') {
                    if rest[n] == b'"' {
                        self.i += n + 2;
                        return Ok(Val::Str(std::borrow::Cow::Borrowed(&rest[..n])));
                    }
                }
                Ok(Val::Str(std::borrow::Cow::Owned(self.string()?)))
            }
            Some(b'{') | Some(b'[') => {
                let obj = self.s[self.i] == b'{';
                self.value(depth)?;
                let raw = &self.s[start..self.i];
                Ok(if obj { Val::Obj(raw) } else { Val::Arr(raw) })
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                // Integers without a fraction or exponent, the common case, read here.
                let neg = *c == b'-';
                let mut j = self.i + usize::from(neg);
                let mut v: i64 = 0;
                let digits = j;
                while let Some(&d) = self.s.get(j) {
                    if !d.is_ascii_digit() {
                        break;
                    }
                    match v
                        .checked_mul(10)
                        .and_then(|v| v.checked_add(i64::from(d - b'0')))
                    {
                        Some(n) => v = n,
                        None => return Ok(self.value(depth)?.into_val()),
                    }
                    j += 1;
                }
                if j > digits && !matches!(self.s.get(j), Some(b'.' | b'e' | b'E')) {
                    self.i = j;
                    return Ok(Val::Int(if neg { -v } else { v }));
                }
                Ok(self.value(depth)?.into_val())
            }
            _ => Ok(match self.value(depth)? {
                Json::Int(i) => Val::Int(i),
                Json::Float(f) => Val::Float(f),
                Json::Bool(b) => Val::Bool(b),
                _ => Val::Null,
            }),
        }
    }
}

/// Calls `f` with each member of the object `text` (a whole document), in order.
pub(crate) fn members<'a>(
    text: &'a [u8],
    mut f: impl FnMut(&[u8], Val<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.s.get(p.i) != Some(&b'{') {
        return p.err("expected an object");
    }
    p.i += 1;
    p.ws();
    if p.s.get(p.i) == Some(&b'}') {
        p.i += 1;
    } else {
        loop {
            p.ws();
            if p.s.get(p.i) != Some(&b'"') {
                return p.err("expected a member name");
            }
            let name = p.val(1)?;
            p.ws();
            if p.s.get(p.i) != Some(&b':') {
                return p.err("expected ':'");
            }
            p.i += 1;
            let v = p.val(1)?;
            f(name.bytes().unwrap_or_default(), v)?;
            p.ws();
            match p.s.get(p.i) {
                Some(b',') => p.i += 1,
                Some(b'}') => {
                    p.i += 1;
                    break;
                }
                _ => return p.err("expected ',' or '}'"),
            }
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return p.err("unexpected text");
    }
    Ok(())
}

/// Calls `f` with each item of the array `text`.
pub(crate) fn items<'a>(
    text: &'a [u8],
    mut f: impl FnMut(Val<'a>) -> Result<(), String>,
) -> Result<(), String> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    if p.s.get(p.i) != Some(&b'[') {
        return p.err("expected an array");
    }
    p.i += 1;
    p.ws();
    if p.s.get(p.i) == Some(&b']') {
        return Ok(());
    }
    loop {
        f(p.val(1)?)?;
        p.ws();
        match p.s.get(p.i) {
            Some(b',') => p.i += 1,
            Some(b']') => return Ok(()),
            _ => return p.err("expected ',' or ']'"),
        }
    }
}

/// Appends `s` as a JSON string (quotes included).
pub(crate) fn write_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let mut rest = s;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(v) => (v, None),
            Err(e) => {
                let v = std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or("");
                (v, Some(e.valid_up_to()))
            }
        };
        for ch in valid.chars() {
            match ch {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
                }
                c => {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        match bad {
            None => break,
            Some(at) => {
                out.extend_from_slice(format!("\\udc{:02x}", rest[at]).as_bytes());
                rest = &rest[at + 1..];
            }
        }
    }
    out.push(b'"');
}

/// Builds one JSON object a member at a time.
pub(crate) struct ObjWriter<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> ObjWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        ObjWriter { out, first: true }
    }

    fn name(&mut self, name: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    pub(crate) fn str(&mut self, name: &str, v: &[u8]) -> &mut Self {
        self.name(name);
        write_str(self.out, v);
        self
    }

    pub(crate) fn int(&mut self, name: &str, v: i64) -> &mut Self {
        self.name(name);
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self
    }

    pub(crate) fn bool(&mut self, name: &str, v: bool) -> &mut Self {
        self.name(name);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    pub(crate) fn null(&mut self, name: &str) -> &mut Self {
        self.name(name);
        self.out.extend_from_slice(b"null");
        self
    }

    /// An integer member whose name is any bytes (a hash field).
    pub(crate) fn int_named(&mut self, name: &[u8], v: i64) -> &mut Self {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(self.out, name);
        self.out.push(b':');
        self.out
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        self
    }

    /// A member whose value the caller writes itself (an array or an object).
    pub(crate) fn raw(&mut self, name: &str) -> &mut Vec<u8> {
        self.name(name);
        self.out
    }

    pub(crate) fn end(&mut self) {
        self.out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_any_bytes() {
        for s in [
            &b"lock:a"[..],
            b"quote\" back\\ nl\n tab\t",
            "caf\u{e9} \u{1F512}".as_bytes(),
            b"\xff\xfe raw \x80",
            b"\x01\x7f",
        ] {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert!(std::str::from_utf8(&out).is_ok(), "{out:?}");
            assert_eq!(parse(&out).unwrap(), Json::Str(s.to_vec()));
        }
    }

    #[test]
    fn objects_arrays_and_numbers_parse() {
        let v = parse(br#" {"a": [1, -2, 3.5e1, true, null], "b": {"c": "\u00e9\ud83d\udd12"}} "#)
            .unwrap();
        assert_eq!(
            v.get("a"),
            Some(&Json::Arr(vec![
                Json::Int(1),
                Json::Int(-2),
                Json::Float(35.0),
                Json::Bool(true),
                Json::Null
            ]))
        );
        assert_eq!(
            v.get("b").and_then(|b| b.get("c")),
            Some(&Json::Str("\u{e9}\u{1F512}".as_bytes().to_vec()))
        );
    }

    #[test]
    fn members_borrow_plain_strings_and_hand_out_nested_text() {
        let mut seen = Vec::new();
        members(
            br#"{"a":"plain","b":"esc\"aped","c":{"x":[1,2]},"d":[true],"e":-5,"f":null}"#,
            |k, v| {
                seen.push((k.to_vec(), v));
                Ok(())
            },
        )
        .unwrap();
        assert!(matches!(
            &seen[0].1,
            Val::Str(std::borrow::Cow::Borrowed(b"plain"))
        ));
        assert_eq!(seen[1].1.bytes(), Some(&b"esc\"aped"[..]));
        assert_eq!(seen[2].1, Val::Obj(br#"{"x":[1,2]}"#));
        assert_eq!(seen[3].1, Val::Arr(b"[true]"));
        assert_eq!(seen[4].1.int(), Some(-5));
        assert_eq!(seen[5].1, Val::Null);
        let mut n = 0;
        items(b"[1, \"two\", [3]]", |_| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 3);
        assert!(members(b"{\"a\":1} x", |_, _| Ok(())).is_err());
        assert!(members(b"[1]", |_, _| Ok(())).is_err());
    }

    #[test]
    fn malformed_lines_are_errors_not_panics() {
        for bad in [
            &b"{"[..],
            b"{\"a\":}",
            b"[1,]",
            b"\"abc",
            b"{\"a\":1} x",
            b"\"\\u12\"",
            b"",
            b"-",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(deep.as_bytes()).is_err());
    }
}
