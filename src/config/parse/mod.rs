//! Redis's text parsers, byte for byte: `sdssplitargs`/`sdscatrepr` (sds.c), `string2ll`,
//! `memtoull` (util.c), C's `strtoll` as Redis uses it, and each parameter type's
//! set/get conversions (config.c), with Redis's error texts.
//!
//! This file turns a parameter's arguments into its value (CONFIG SET, the config file, the
//! command line); `text.rs` has the C primitives and `format.rs` the CONFIG GET side.

mod format;
#[cfg(test)]
mod tests;
mod text;

use super::settings::Value;
use super::table::{Kind, NumFmt, Param, Special};

pub(crate) use format::{default_value, format_number, format_value, parse_obuf};
pub(crate) use text::strerror;
pub use text::{memtoull, repr, split_args, split_args_str};

use format::{format_obuf, format_percentile};
use text::{is_c_space, string2ll, strtoll};

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
            super::notify::parse_flags(&args[0])
                .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?;
            // Kept as given: Redis keeps the parsed flags and only CONFIG GET formats them,
            // and the formatted form loses `n` next to `A` (keyspaceEventsFlagsToString).
            Ok(args[0].clone())
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

/// Parse a formatted value (as kept in [`super::settings::Config::others`]) back into a [`Value`].
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
