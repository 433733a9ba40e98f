//! The SCAN family's arguments, read one way for SCAN, SSCAN, HSCAN and ZSCAN: the cursor
//! (Redis's parseScanCursorOrReply), the COUNT, MATCH and (SCAN only) TYPE options, and the
//! fixed hasher a value's cursor counts along, so a cursor stays valid across calls and
//! across a value's re-encodings.

use crate::cmd::base::args::{self, is, Args};
use crate::error::{self, RedisError};
use crate::glob::Glob;
use bytes::Bytes;
use std::sync::OnceLock;

/// A SCAN cursor, parsed as Redis does with strtoul: an optional sign (a minus wraps around),
/// digits, nothing else; the empty string is cursor 0.
pub fn cursor(s: &[u8]) -> Result<u64, RedisError> {
    let bad = || RedisError::new(error::INVALID_CURSOR);
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if s.is_empty() {
        return Ok(0);
    }
    if digits.is_empty() {
        return Err(bad());
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return Err(bad());
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add((c - b'0') as u64))
            .ok_or_else(bad)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// The options after the cursor.
pub struct ScanOptions {
    /// How many elements a page should hold, roughly (COUNT, default 10).
    pub count: usize,
    /// The MATCH pattern; None for none or `*`.
    pub pattern: Option<Glob>,
    /// SCAN's TYPE.
    pub type_name: Option<Bytes>,
}

/// The COUNT, MATCH and (with `with_type`, SCAN's) TYPE options in `a[from..]`, each with
/// its value: anything else, or an option without a value, is a syntax error, as is a COUNT
/// below 1. COUNT is held to `max_count` (the elements a page may gather at most).
pub fn options(
    a: &[Bytes],
    from: usize,
    with_type: bool,
    max_count: usize,
) -> Result<ScanOptions, RedisError> {
    let mut o = ScanOptions {
        count: 10,
        pattern: None,
        type_name: None,
    };
    let syntax = || RedisError::new(error::SYNTAX);
    let mut args = Args::new(a, from);
    while !args.is_empty() {
        let (opt, value) = args.pair().ok_or_else(syntax)?;
        if is(opt, "count") {
            let n = args::int(value)?;
            if n < 1 {
                return Err(syntax());
            }
            o.count = usize::try_from(n).unwrap_or(usize::MAX).min(max_count);
        } else if is(opt, "match") {
            o.pattern = (value.as_ref() != b"*").then(|| Glob::new(value, false));
        } else if with_type && is(opt, "type") {
            o.type_name = Some(value.clone());
        } else {
            return Err(syntax());
        }
    }
    Ok(o)
}

/// The hash a value's SCAN cursor counts along (SSCAN, HSCAN, ZSCAN over a hashtable): fixed
/// seeds, so a cursor means the same position on every call.
pub fn cursor_hash(member: &[u8]) -> u64 {
    static H: OnceLock<ahash::RandomState> = OnceLock::new();
    H.get_or_init(|| ahash::RandomState::with_seeds(0x5e7c0de, 0x2e75ca9, 0xfeedbeef, 0x1234567))
        .hash_one(member)
}
