//! Values as CONFIG GET prints them: each parameter type's formatting, and the defaults
//! the table's rows format to.

use crate::config::settings::Value;
use crate::config::table::{Kind, NumFmt, Param, Special};

/// A numeric value as CONFIG GET prints it.
pub(crate) fn format_number(v: i64, fmt: NumFmt) -> String {
    match fmt {
        NumFmt::MemoryPercent if v < 0 => format!("{}%", -(v as i128)),
        NumFmt::Memory | NumFmt::MemoryPercent => (v as u64).to_string(),
        NumFmt::Octal => format!("{:o}", v as u64),
        NumFmt::Int => v.to_string(),
    }
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
            crate::config::notify::format_flags(
                crate::config::notify::parse_flags(s.as_deref().unwrap_or("")).unwrap_or(0),
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
/// default.
pub(crate) fn default_value(p: &Param) -> Value {
    match p.kind {
        Kind::Bool { default, .. } => Value::Bool(default),
        Kind::Num { default, .. } => Value::Int(default),
        Kind::Enum { default, .. } => Value::Enum(default),
        Kind::Str { default, .. } => Value::Str(default.map(String::from)),
        Kind::Special(sp) => Value::Str(match sp {
            Special::Dir => None,
            Special::Save => Some(crate::config::settings::DEFAULT_SAVE.into()),
            Special::ClientOutputBufferLimit => {
                Some(crate::config::settings::DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT.to_string())
            }
            Special::OomScoreAdjValues => Some("0 200 800".into()),
            Special::NotifyKeyspaceEvents => Some(String::new()),
            Special::Bind => Some(crate::config::settings::DEFAULT_BIND.into()),
            Special::ReplicaOf => Some(String::new()),
            Special::LatencyTrackingInfoPercentiles => Some("50 99 99.9".into()),
        }),
    }
}
