//! Argument parsing with Redis's exact rules and errors.

use crate::error::{self, RedisError};
use bytes::Bytes;

/// Redis's string2ll: an optional '-' then digits, no '+', spaces or leading zeros.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    crate::num::parse_ll(s)
}

/// An integer argument, or `ERR value is not an integer or out of range`.
pub fn int(s: &[u8]) -> Result<i64, RedisError> {
    parse_i64(s).ok_or(RedisError::new(error::NOT_INTEGER))
}

/// Redis's strtold-based float parsing: no leading space, whole string consumed, not NaN.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s.len() > 5000 || s[0].is_ascii_whitespace() {
        return None;
    }
    let st = std::str::from_utf8(s).ok()?;
    let lower = st.to_ascii_lowercase();
    let t = lower.trim_start_matches(['+', '-']);
    // Rust accepts "infinity"/"inf"/"nan" like strtold; reject the NaN forms.
    if t.starts_with("nan") {
        return None;
    }
    // Rust does not accept hex floats or a trailing '.', strtold does; and Rust accepts "1_0"? no.
    let v: f64 = st.parse().ok().or_else(|| {
        // "1." and ".5" are fine for both; "0x10" only for strtold.
        if let Some(h) = t.strip_prefix("0x") {
            let n = i64::from_str_radix(h, 16).ok()? as f64;
            Some(if st.starts_with('-') { -n } else { n })
        } else {
            None
        }
    })?;
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

pub fn float(s: &[u8]) -> Result<f64, RedisError> {
    parse_f64(s).ok_or(RedisError::new(error::NOT_FLOAT))
}

/// Redis's getRangeLongFromObjectOrReply: an integer within `min..=max`. `msg`, when given,
/// is the error for both a non-integer and an out-of-range value.
pub fn long_in(s: &[u8], min: i64, max: i64, msg: Option<&'static str>) -> Result<i64, RedisError> {
    match parse_i64(s) {
        None => Err(RedisError::new(msg.unwrap_or(error::NOT_INTEGER))),
        Some(v) if v < min || v > max => Err(match msg {
            Some(m) => RedisError::new(m),
            None => error::out_of_range_between(min, max),
        }),
        Some(v) => Ok(v),
    }
}

/// Redis's getPositiveLongFromObjectOrReply: an integer >= 0; `msg` replaces the default
/// `value is out of range, must be positive` for both errors.
pub fn non_negative(s: &[u8], msg: Option<&'static str>) -> Result<i64, RedisError> {
    long_in(
        s,
        0,
        i64::MAX,
        Some(msg.unwrap_or(error::VALUE_OUT_OF_RANGE_POSITIVE)),
    )
}

/// A blocking command's timeout in seconds (fractions allowed), as Redis's
/// getTimeoutFromObjectOrReply reads it: a long double, times 1000 rounded up, cast to a
/// 64-bit integer (so infinities and huge values come out negative). Milliseconds, 0 meaning
/// forever.
pub fn timeout_ms(s: &[u8]) -> Result<i64, RedisError> {
    use crate::cmd::base::float80::{parse, Parsed};
    let ms = match parse(s) {
        None => return Err(RedisError::new(error::TIMEOUT_NOT_FLOAT)),
        Some(Parsed::Infinite) => i64::MIN,
        Some(Parsed::Finite(v)) => crate::num::c_ll((v.to_f64() * 1000.0).ceil()),
    };
    if ms < 0 {
        return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
    }
    Ok(ms)
}

/// Case-insensitive comparison of an argument with a lowercase option name.
pub fn is(arg: &[u8], opt: &str) -> bool {
    arg.eq_ignore_ascii_case(opt.as_bytes())
}

/// A command's arguments read front to back (mini-redis's `Parse`): option loops take the
/// next argument, or an option and its value, instead of counting indexes.
pub struct Args<'a> {
    a: &'a [Bytes],
    at: usize,
}

impl<'a> Args<'a> {
    /// The arguments from `a[from]` on.
    pub fn new(a: &'a [Bytes], from: usize) -> Args<'a> {
        Args {
            a,
            at: from.min(a.len()),
        }
    }

    /// Nothing left.
    pub fn is_empty(&self) -> bool {
        self.at >= self.a.len()
    }

    /// How many arguments are left.
    pub fn remaining(&self) -> usize {
        self.a.len() - self.at
    }

    /// The next argument, taken. Not `Iterator::next`: an `Iterator` impl would make
    /// `args.take(n)` resolve to `Iterator::take` instead of [`Args::take`].
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&'a Bytes> {
        let v = self.a.get(self.at)?;
        self.at += 1;
        Some(v)
    }

    /// The next argument, left in place.
    pub fn peek(&self) -> Option<&'a Bytes> {
        self.a.get(self.at)
    }

    /// The next two arguments (an option and its value), taken only when both are there.
    pub fn pair(&mut self) -> Option<(&'a Bytes, &'a Bytes)> {
        let (k, v) = (self.a.get(self.at)?, self.a.get(self.at + 1)?);
        self.at += 2;
        Some((k, v))
    }

    /// When `opt` is the option `name` (case-insensitive) and a value follows, that value,
    /// taken; otherwise nothing is taken (an option without its value is another case).
    pub fn value_of(&mut self, opt: &[u8], name: &str) -> Option<&'a Bytes> {
        self.values_of(opt, name, 1).map(|v| &v[0])
    }

    /// [`Args::value_of`] for an option with `n` values.
    pub fn values_of(&mut self, opt: &[u8], name: &str, n: usize) -> Option<&'a [Bytes]> {
        if !is(opt, name) {
            return None;
        }
        self.take(n)
    }

    /// The next `n` arguments, taken only when all are there.
    pub fn take(&mut self, n: usize) -> Option<&'a [Bytes]> {
        if self.remaining() < n {
            return None;
        }
        let v = &self.a[self.at..self.at + n];
        self.at += n;
        Some(v)
    }

    /// The index in the arguments of the next one.
    pub fn position(&self) -> usize {
        self.at
    }

    /// What is left, taken.
    pub fn rest(&mut self) -> &'a [Bytes] {
        let r = &self.a[self.at..];
        self.at = self.a.len();
        r
    }
}

/// The `numkeys key... WHERE [COUNT n]` of LMPOP, ZMPOP and their blocking forms, from
/// `a[at..]` with Redis's errors in its order: numkeys, then the WHERE argument (read by
/// `side`: LEFT/RIGHT or MIN/MAX), then COUNT. The keys, the side and the count (1 when not
/// given).
pub fn mpop<W>(
    a: &[Bytes],
    at: usize,
    side: impl FnOnce(&[u8]) -> Result<W, RedisError>,
) -> Result<(&[Bytes], W, i64), RedisError> {
    let numkeys = long_in(&a[at], 1, i64::MAX, Some(error::NUMKEYS_NOT_POSITIVE))?;
    let where_at = match (at as i64)
        .checked_add(numkeys)
        .and_then(|w| w.checked_add(1))
    {
        Some(w) if w < a.len() as i64 => w as usize,
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    let side = side(&a[where_at])?;
    let mut count = None;
    let mut args = Args::new(a, where_at + 1);
    while let Some(opt) = args.next() {
        let value = if count.is_none() {
            args.value_of(opt, "count")
        } else {
            None
        };
        let Some(v) = value else {
            return Err(RedisError::new(error::SYNTAX));
        };
        count = Some(long_in(v, 1, i64::MAX, Some(error::COUNT_NOT_POSITIVE))?);
    }
    Ok((&a[at + 1..where_at], side, count.unwrap_or(1)))
}

/// A SCAN cursor as Redis reads one (strtoul): an optional sign then decimal digits, a
/// negative one wrapping around (`-1` is 2^64-1), the empty string 0; a leading space, a
/// trailing character or more than 64 bits give `ERR invalid cursor`.
pub fn cursor(s: &[u8]) -> Result<u64, RedisError> {
    let bad = || RedisError::new(error::INVALID_CURSOR);
    if s.is_empty() {
        return Ok(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let mut v: u64 = 0;
    for d in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(bad)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Lossy UTF-8 view of an argument, for error messages.
pub fn text(b: &Bytes) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_string2ll() {
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"+1"), None);
        assert_eq!(parse_i64(b"01"), None);
        assert_eq!(parse_i64(b" 1"), None);
        assert_eq!(parse_i64(b"-0"), None);
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn floats_follow_strtold() {
        assert_eq!(parse_f64(b"1.5"), Some(1.5));
        assert_eq!(parse_f64(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
    }
}
