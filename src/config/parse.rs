//! Redis's text parsers, byte for byte: `sdssplitargs`/`sdscatrepr` (sds.c), `string2ll`,
//! `memtoull` (util.c), C's `strtoll` as Redis uses it, and each parameter type's
//! set/get conversions (config.c), with Redis's error texts.

use super::table::{Kind, NumFmt, Param, Special};
use super::Value;

/// C's `isspace` in the C locale.
fn is_c_space(c: u8) -> bool {
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

/// Redis's `yesnotoi`.
fn yes_no(s: &str) -> Option<bool> {
    if s.eq_ignore_ascii_case("yes") {
        Some(true)
    } else if s.eq_ignore_ascii_case("no") {
        Some(false)
    } else {
        None
    }
}

/// Parse a numeric row's argument into the raw `long long` Redis stores (a percentage as
/// its negation, an unsigned value as its bit pattern), then check its bounds.
fn parse_number(
    arg: &str,
    min: i128,
    max: i128,
    unsigned: bool,
    fmt: NumFmt,
) -> Result<i64, String> {
    let b = arg.as_bytes();
    let mut parsed = None;
    if matches!(fmt, NumFmt::Memory | NumFmt::MemoryPercent) {
        parsed = memtoull(b).map(|v| v as i64);
    }
    if parsed.is_none() && fmt == NumFmt::MemoryPercent && b.len() > 1 && b.ends_with(b"%") {
        parsed = string2ll(&b[..b.len() - 1]).filter(|v| *v >= 0).map(|v| -v);
    }
    if parsed.is_none() && fmt == NumFmt::Octal {
        let (v, clean, overflow) = strtoll(b, 8);
        if clean && !overflow {
            parsed = Some(v);
        }
    }
    if parsed.is_none() && fmt == NumFmt::Int {
        parsed = string2ll(b);
    }
    let ll = parsed.ok_or(match fmt {
        NumFmt::MemoryPercent => "argument must be a memory or percent value",
        NumFmt::Memory => "argument must be a memory value",
        NumFmt::Octal => "argument couldn't be parsed as an octal number",
        NumFmt::Int => "argument couldn't be parsed into an integer",
    })?;
    if unsigned {
        let u = i128::from(ll as u64);
        if u > max || u < min {
            return Err(if fmt == NumFmt::Octal {
                format!("argument must be between {min:o} and {max:o} inclusive")
            } else {
                format!("argument must be between {min} and {max} inclusive")
            });
        }
    } else if fmt == NumFmt::MemoryPercent && ll < 0 {
        if i128::from(ll) < min {
            return Err(format!(
                "percentage argument must be less or equal to {}",
                -min
            ));
        }
    } else if i128::from(ll) > max || i128::from(ll) < min {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(ll)
}

/// A numeric value as CONFIG GET prints it.
pub(crate) fn format_number(v: i64, fmt: NumFmt) -> String {
    match fmt {
        NumFmt::MemoryPercent if v < 0 => format!("{}%", -(v as i128)),
        NumFmt::Memory | NumFmt::MemoryPercent => (v as u64).to_string(),
        NumFmt::Octal => format!("{:o}", v as u64),
        NumFmt::Int => v.to_string(),
    }
}

/// Redis's `configEnumGetValue`: OR of the values of every name (one name unless `multi`).
fn parse_enum(names: &[(&str, u32)], args: &[String], multi: bool) -> Result<u32, String> {
    let mut v = 0;
    let ok = !args.is_empty()
        && (multi || args.len() == 1)
        && args.iter().all(|a| {
            let hits: Vec<u32> = names
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(a))
                .map(|(_, x)| *x)
                .collect();
            hits.iter().for_each(|x| v |= x);
            !hits.is_empty()
        });
    if !ok {
        let list: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
        let mut msg = format!(
            "argument(s) must be one of the following: {}",
            list.join(", ")
        );
        // Redis copies the text into a 256-byte buffer.
        msg.truncate(255);
        return Err(msg);
    }
    Ok(v)
}

/// Redis's `configEnumGetName`: the name of a value; for a MULTI_ARG enum, the names of its
/// bits, or "unknown".
pub(crate) fn format_enum(names: &[(&str, u32)], v: u32, multi: bool) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut unmatched = v;
    for (n, x) in names {
        if *x == v {
            return (*n).to_string();
        }
        if multi && *x != 0 && *x == unmatched & x {
            out.push(n);
            unmatched &= !x;
        }
    }
    if out.is_empty() || unmatched != 0 {
        return "unknown".into();
    }
    out.join(" ")
}

/// What the loader knows while it reads a file: the first `save` line of a startup replaces
/// the default save points, later ones add to them (Redis's `reading_config_file` and
/// `save_loaded`).
#[derive(Default)]
pub(crate) struct LoadState {
    pub reading: bool,
    pub save_loaded: bool,
}

/// Parse the arguments of `p` (one argument unless it is MULTI_ARG) into its new value;
/// `current` is its value now (client-output-buffer-limit keeps the classes not named, `save`
/// adds lines while reading a file). Err is Redis's reason text.
pub(crate) fn parse_value(
    p: &Param,
    args: &[String],
    current: &Value,
    load: Option<&mut LoadState>,
    base_dir: Option<&std::path::Path>,
) -> Result<Value, String> {
    let one = || args.first().map_or("", String::as_str);
    match p.kind {
        Kind::Bool { check, .. } => {
            let b = yes_no(one()).ok_or("argument must be 'yes' or 'no'")?;
            if let Some(f) = check {
                f(b)?;
            }
            Ok(Value::Bool(b))
        }
        Kind::Num {
            min,
            max,
            unsigned,
            fmt,
            ..
        } => {
            let mut v = parse_number(one(), min, max, unsigned, fmt)?;
            if p.name == "hz" {
                // updateHZ and the loader cap hz to CONFIG_MIN_HZ..CONFIG_MAX_HZ.
                v = v.clamp(1, 500);
            }
            Ok(Value::Int(v))
        }
        Kind::Enum { names, check, .. } => {
            let v = parse_enum(names, args, p.multi_arg())?;
            if let Some(f) = check {
                f(v)?;
            }
            Ok(Value::Enum(v))
        }
        Kind::Str {
            null_if_empty,
            check,
            ..
        } => {
            let s = one();
            if let Some(f) = check {
                f(s)?;
            }
            Ok(Value::Str(if null_if_empty && s.is_empty() {
                None
            } else {
                Some(s.to_string())
            }))
        }
        Kind::Special(sp) => {
            parse_special(sp, args, current, load, base_dir).map(|s| Value::Str(Some(s)))
        }
    }
}

/// `strerror` text of an io::Error (without Rust's " (os error N)").
pub(crate) fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn parse_special(
    sp: Special,
    args: &[String],
    current: &Value,
    load: Option<&mut LoadState>,
    base_dir: Option<&std::path::Path>,
) -> Result<String, String> {
    let cur = match current {
        Value::Str(Some(s)) => s.as_str(),
        _ => "",
    };
    match sp {
        Special::Dir => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            let mut path = std::path::PathBuf::from(&args[0]);
            if path.is_relative() {
                if let Some(b) = base_dir {
                    path = b.join(path);
                }
            }
            let meta = std::fs::metadata(&path).map_err(|e| strerror(&e))?;
            if !meta.is_dir() {
                return Err("Not a directory".into());
            }
            let abs = std::fs::canonicalize(&path).map_err(|e| strerror(&e))?;
            Ok(abs.display().to_string())
        }
        Special::Save => {
            let mut args: &[String] = args;
            // A lone "" means no save points (and clears the list even while loading).
            let cleared = args.len() == 1 && args[0].is_empty();
            if cleared {
                args = &[];
            }
            if !args.len().is_multiple_of(2) {
                return Err("Invalid save parameters".into());
            }
            let mut pairs = Vec::new();
            for (j, a) in args.iter().enumerate() {
                let (v, clean, _) = strtoll(a.as_bytes(), 10);
                if !clean || (j % 2 == 0 && v < 1) || (j % 2 == 1 && v < 0) {
                    return Err("Invalid save parameters".into());
                }
                // seconds is a time_t, changes an int.
                pairs.push(if j % 2 == 0 {
                    v.to_string()
                } else {
                    (v as i32).to_string()
                });
            }
            let keep = match load {
                Some(st) if st.reading => {
                    let first = !st.save_loaded;
                    st.save_loaded = true;
                    !first && !cleared
                }
                _ => false,
            };
            let mut out: Vec<String> = if keep {
                cur.split(' ')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            } else {
                Vec::new()
            };
            out.extend(pairs);
            Ok(out.join(" "))
        }
        Special::ClientOutputBufferLimit => {
            if !args.len().is_multiple_of(4) {
                return Err("Wrong number of arguments in buffer limit configuration.".into());
            }
            let mut classes = parse_obuf(cur);
            for g in args.chunks_exact(4) {
                let class = match g[0].to_ascii_lowercase().as_str() {
                    "normal" => 0,
                    "slave" | "replica" => 1,
                    "pubsub" => 2,
                    _ => {
                        return Err(
                            "Invalid client class specified in buffer limit configuration.".into(),
                        )
                    }
                };
                let hard = memtoull(g[1].as_bytes());
                let soft = memtoull(g[2].as_bytes());
                let (secs, clean, _) = strtoll(g[3].as_bytes(), 10);
                // soft_seconds is an int.
                let secs = secs as i32;
                match (hard, soft) {
                    (Some(h), Some(s)) if clean && secs >= 0 => classes[class] = (h, s, secs as u64),
                    _ => {
                        return Err("Error in hard, soft or soft_seconds setting in buffer limit configuration.".into())
                    }
                }
            }
            Ok(format_obuf(&classes))
        }
        Special::OomScoreAdjValues => {
            if args.len() != 3 {
                return Err("wrong number of arguments".into());
            }
            let mut vals = Vec::new();
            for a in args {
                let (v, clean, _) = strtoll(a.as_bytes(), 10);
                if !clean || !(-2000..=2000).contains(&v) {
                    return Err(
                        "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
                            .into(),
                    );
                }
                vals.push(v.to_string());
            }
            Ok(vals.join(" "))
        }
        Special::NotifyKeyspaceEvents => {
            if args.len() != 1 {
                return Err("wrong number of arguments".into());
            }
            let flags = super::notify::parse_flags(&args[0])
                .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?;
            Ok(super::notify::format_flags(flags))
        }
        Special::Bind => {
            if args.len() > 16 {
                return Err("Too many bind addresses specified.".into());
            }
            if args.len() == 1 && args[0].is_empty() {
                return Ok(String::new());
            }
            Ok(args.join(" "))
        }
        Special::ReplicaOf => {
            if args.len() != 2 {
                return Err("wrong number of arguments".into());
            }
            if args[0].eq_ignore_ascii_case("no") && args[1].eq_ignore_ascii_case("one") {
                return Ok(String::new());
            }
            let (port, clean, overflow) = strtoll(args[1].as_bytes(), 10);
            if !clean || overflow || !(0..=65535).contains(&port) {
                return Err("Invalid master port".into());
            }
            Ok(format!("{} {port}", args[0]))
        }
        Special::LatencyTrackingInfoPercentiles => {
            if args.len() == 1 && args[0].is_empty() {
                return Ok(String::new());
            }
            let mut out = Vec::new();
            for a in args {
                let p =
                    string2d(a).ok_or("Invalid latency-tracking-info-percentiles parameters")?;
                if !(0.0..=100.0).contains(&p) {
                    return Err(
                        "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                            .into(),
                    );
                }
                out.push(format_percentile(p));
            }
            Ok(out.join(" "))
        }
    }
}

/// Redis's `string2d`: a whole-string double, no leading space, not NaN, not overflowing.
fn string2d(s: &str) -> Option<f64> {
    if s.is_empty() || is_c_space(s.as_bytes()[0]) {
        return None;
    }
    let v: f64 = s.parse().ok()?;
    let lower = s.to_ascii_lowercase();
    let literal_inf = lower.trim_start_matches(['+', '-']).starts_with("inf");
    if v.is_nan() || (v.is_infinite() && !literal_inf) {
        return None;
    }
    Some(v)
}

/// `%f` then `trimDoubleString`: 99.9 -> "99.9", 50 -> "50".
pub(crate) fn format_percentile(p: f64) -> String {
    let mut s = format!("{p:.6}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

/// (hard bytes, soft bytes, soft seconds) of normal, slave and pubsub in a
/// client-output-buffer-limit value as CONFIG GET prints it.
pub(crate) fn parse_obuf(s: &str) -> [(u64, u64, u64); 3] {
    let mut out = [
        (0, 0, 0),
        (268435456, 67108864, 60),
        (33554432, 8388608, 60),
    ];
    let words: Vec<&str> = s.split_whitespace().collect();
    for c in words.chunks_exact(4) {
        let i = match c[0] {
            "normal" => 0,
            "slave" | "replica" => 1,
            "pubsub" => 2,
            _ => continue,
        };
        let n = |s: &str| s.parse().unwrap_or(0);
        out[i] = (n(c[1]), n(c[2]), n(c[3]));
    }
    out
}

/// client-output-buffer-limit as CONFIG GET prints it.
pub(crate) fn format_obuf(c: &[(u64, u64, u64); 3]) -> String {
    ["normal", "slave", "pubsub"]
        .iter()
        .zip(c)
        .map(|(n, (h, s, t))| format!("{n} {h} {s} {t}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A value as CONFIG GET prints it.
pub(crate) fn format_value(p: &Param, v: &Value) -> String {
    match (&p.kind, v) {
        (Kind::Bool { .. }, Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        (Kind::Num { fmt, .. }, Value::Int(i)) => format_number(*i, *fmt),
        (Kind::Enum { names, .. }, Value::Enum(e)) => format_enum(names, *e, p.multi_arg()),
        (Kind::Special(Special::NotifyKeyspaceEvents), Value::Str(s)) => {
            super::notify::format_flags(
                super::notify::parse_flags(s.as_deref().unwrap_or("")).unwrap_or(0),
            )
        }
        (Kind::Special(Special::Dir), Value::Str(None)) => std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        (_, Value::Str(s)) => s.clone().unwrap_or_default(),
        (_, other) => format!("{other:?}"),
    }
}

/// The value a row's default formats to, as a [`Value`]; specials give their formatted
/// default (resplock's own for `bind` and `save`).
pub(crate) fn default_value(p: &Param) -> Value {
    match p.kind {
        Kind::Bool { default, .. } => Value::Bool(default),
        Kind::Num { default, .. } => Value::Int(default),
        Kind::Enum { default, .. } => Value::Enum(default),
        Kind::Str { default, .. } => Value::Str(default.map(String::from)),
        Kind::Special(sp) => Value::Str(match sp {
            Special::Dir => None,
            Special::Save => Some(String::new()),
            Special::ClientOutputBufferLimit => {
                Some(super::DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT.to_string())
            }
            Special::OomScoreAdjValues => Some("0 200 800".into()),
            Special::NotifyKeyspaceEvents => Some(String::new()),
            Special::Bind => Some(super::DEFAULT_BIND.into()),
            Special::ReplicaOf => Some(String::new()),
            Special::LatencyTrackingInfoPercentiles => Some("50 99 99.9".into()),
        }),
    }
}

/// Parse a formatted value (as kept in [`super::Config::others`]) back into a [`Value`].
pub(crate) fn unformat(p: &Param, s: &str) -> Value {
    let args = [s.to_string()];
    match p.kind {
        Kind::Bool { default, .. } => Value::Bool(yes_no(s).unwrap_or(default)),
        Kind::Num {
            min,
            max,
            unsigned,
            fmt,
            default,
        } => Value::Int(parse_number(s, min, max, unsigned, fmt).unwrap_or(default)),
        Kind::Enum { names, default, .. } => {
            let words: Vec<String> = s.split(' ').map(String::from).collect();
            Value::Enum(parse_enum(names, &words, p.multi_arg()).unwrap_or(default))
        }
        Kind::Str { null_if_empty, .. } => Value::Str(if null_if_empty && s.is_empty() {
            None
        } else {
            Some(args[0].clone())
        }),
        Kind::Special(_) => Value::Str(Some(args[0].clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Option<Vec<String>> {
        split_args_str(s)
    }

    #[test]
    fn split_args_follows_sdssplitargs_quoting() {
        assert_eq!(
            split("  a  b\tc "),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            split(r#"a "b c" 'd e'"#),
            Some(vec!["a".into(), "b c".into(), "d e".into()])
        );
        assert_eq!(
            split(r#""\x41\n" 'it\'s'"#),
            Some(vec!["A\n".into(), "it's".into()])
        );
        assert_eq!(split(r#"ab"cd""#), Some(vec!["abcd".into()]));
        assert_eq!(split(r#""""#), Some(vec![String::new()]));
        assert_eq!(split(r#""abc"def"#), None);
        assert_eq!(split(r#""abc"#), None);
        assert_eq!(split("'abc"), None);
        assert_eq!(split(""), Some(vec![]));
    }

    #[test]
    fn repr_round_trips_through_split_args() {
        let s = b"a \"b\"\\\n\x01\xff";
        let r = repr(s);
        assert_eq!(r, r#""a \"b\"\\\n\x01\xff""#);
        assert_eq!(split_args(r.as_bytes()).unwrap(), vec![s.to_vec()]);
    }

    #[test]
    fn string2ll_is_strict_like_redis() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"-12"), Some(-12));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            "",
            "-",
            "-0",
            "007",
            "+1",
            " 1",
            "1 ",
            "9223372036854775808",
            "1x",
        ] {
            assert_eq!(string2ll(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn memtoull_units_and_quirks_match_redis() {
        assert_eq!(memtoull(b"1k"), Some(1000));
        assert_eq!(memtoull(b"1KB"), Some(1024));
        assert_eq!(memtoull(b"2mb"), Some(2 << 20));
        assert_eq!(memtoull(b"1g"), Some(1_000_000_000));
        assert_eq!(memtoull(b"1gb"), Some(1 << 30));
        assert_eq!(memtoull(b"5b"), Some(5));
        assert_eq!(memtoull(b""), Some(0));
        assert_eq!(memtoull(b"99999999999999999999999"), Some(u64::MAX));
        assert_eq!(memtoull(b"-1"), None);
        assert_eq!(memtoull(b"+5"), None);
        assert_eq!(memtoull(b"1x"), None);
        assert_eq!(memtoull(b"1 kb"), None);
    }

    #[test]
    fn strtoll_reports_end_and_overflow() {
        assert_eq!(strtoll(b" 12", 10), (12, true, false));
        assert_eq!(strtoll(b"12x", 10), (12, false, false));
        assert_eq!(strtoll(b"", 10), (0, true, false));
        assert_eq!(strtoll(b"x", 10), (0, false, false));
        assert_eq!(strtoll(b"0755", 8), (0o755, true, false));
        assert!(strtoll(b"99999999999999999999", 10).2);
    }

    #[test]
    fn percentiles_print_like_trimmed_printf() {
        assert_eq!(format_percentile(50.0), "50");
        assert_eq!(format_percentile(99.9), "99.9");
        assert_eq!(format_percentile(99.99), "99.99");
    }

    #[test]
    fn proc_title_template_is_validated() {
        let p = super::super::table::lookup(b"proc-title-template")
            .unwrap()
            .0;
        let ok = |s: &str| parse_value(p, &[s.into()], &Value::Str(None), None, None);
        assert!(ok("{title} {listen-addr}").is_ok());
        assert!(ok("x {{").is_ok());
        for bad in ["{nope}", "{title", "{title}", "   ", "{"] {
            assert_eq!(
                ok(bad).unwrap_err(),
                "template format is invalid or contains unknown variables",
                "{bad:?}"
            );
        }
    }
}
