//! Redis's text primitives, byte for byte: `sdssplitargs`/`sdscatrepr` (sds.c), `string2ll`,
//! `memtoull` (util.c), C's `strtoll` as Redis uses it, and `strerror`'s text.

/// C's `isspace` in the C locale.
pub(super) fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Redis's `sdssplitargs`: split a config line into arguments with its quoting rules
/// ("..." with `\n \r \t \b \a \xHH` escapes, '...' with `\'`); None for unbalanced quotes
/// or a closing quote followed by something else than a space.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    // A NUL byte ends the string, as in C.
    let at = |k: usize| line.get(k).copied().unwrap_or(0);
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while at(i) != 0 && is_c_space(at(i)) {
            i += 1;
        }
        if at(i) == 0 {
            return Some(out);
        }
        let (mut inq, mut insq, mut done) = (false, false, false);
        let mut cur = Vec::new();
        while !done {
            let c = at(i);
            if inq {
                if c == b'\\'
                    && at(i + 1) == b'x'
                    && at(i + 2).is_ascii_hexdigit()
                    && at(i + 3).is_ascii_hexdigit()
                {
                    let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
                    cur.push(hex(at(i + 2)) * 16 + hex(at(i + 3)));
                    i += 3;
                } else if c == b'\\' && at(i + 1) != 0 {
                    i += 1;
                    cur.push(match at(i) {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        o => o,
                    });
                } else if c == b'"' {
                    if at(i + 1) != 0 && !is_c_space(at(i + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else if insq {
                if c == b'\\' && at(i + 1) == b'\'' {
                    i += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if at(i + 1) != 0 && !is_c_space(at(i + 1)) {
                        return None;
                    }
                    done = true;
                } else if c == 0 {
                    return None;
                } else {
                    cur.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => done = true,
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    _ => cur.push(c),
                }
            }
            if at(i) != 0 {
                i += 1;
            }
        }
        out.push(cur);
    }
}

/// [`split_args`] over text, arguments turned into text (invalid UTF-8 replaced).
pub fn split_args_str(line: &str) -> Option<Vec<String>> {
    split_args(line.as_bytes()).map(|v| {
        v.into_iter()
            .map(|a| String::from_utf8_lossy(&a).into_owned())
            .collect()
    })
}

/// Redis's `sdscatrepr`: `s` in double quotes with C escapes, readable back by
/// [`split_args`].
pub fn repr(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s {
        match c {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

/// Redis's `string2ll`: a strict decimal i64 (optional `-`, no `+`, no leading zeros, no
/// spaces, at most 20 characters).
pub fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, s),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// Redis's `memtoull`: digits then an optional unit `b k kb m mb g gb` (any case). As in
/// Redis, the empty string is 0, too many digits saturate and the multiplication wraps.
pub fn memtoull(s: &[u8]) -> Option<u64> {
    if s.first() == Some(&b'-') {
        return None;
    }
    let ndigits = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let unit = std::str::from_utf8(&s[ndigits..])
        .ok()?
        .to_ascii_lowercase();
    let mul: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if ndigits >= 128 {
        return None;
    }
    // strtoull: saturates at ULLONG_MAX (Redis does not look at ERANGE).
    let v = s[..ndigits].iter().fold(0u64, |v, d| {
        v.checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .unwrap_or(u64::MAX)
    });
    Some(v.wrapping_mul(mul))
}

/// C's `strtoll(s, &end, base)` as Redis calls it: (value, whether `*end == '\0'`, whether
/// it overflowed). Leading spaces and a sign are accepted; no digits gives 0 and an end at
/// the start of `s` (so only "" ends cleanly).
pub fn strtoll(s: &[u8], base: u32) -> (i64, bool, bool) {
    let mut i = 0;
    while i < s.len() && is_c_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let start = i;
    let mut v: i128 = 0;
    let mut overflow = false;
    while i < s.len() {
        let Some(d) = (s[i] as char).to_digit(base) else {
            break;
        };
        v = v * i128::from(base) + i128::from(d);
        if v > i128::from(i64::MAX) + 1 {
            overflow = true;
            v = i128::from(i64::MAX) + 1;
        }
        i += 1;
    }
    if i == start {
        return (0, s.is_empty(), false);
    }
    let v = if neg { -v } else { v };
    let clamped = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    (clamped as i64, i == s.len(), overflow || clamped != v)
}

/// `strerror` text of an io::Error (without Rust's " (os error N)").
pub(crate) fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
