//! Numbers as Redis reads and prints them: string2ll, `%.17g`, C's double-to-long-long cast.
//! Below both the wire and Lua, which both need them.

/// Redis's string2ll: optional '-', digits, no leading '+', no spaces, no leading zeros
/// except "0" itself.
pub fn parse_ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let (neg, digits) = if s[0] == b'-' {
        (true, &s[1..])
    } else {
        (false, s)
    };
    if digits.is_empty() || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?;
        v = if neg {
            v.checked_sub((c - b'0') as i64)?
        } else {
            v.checked_add((c - b'0') as i64)?
        };
    }
    if neg && v == 0 {
        return None;
    }
    Some(v)
}

/// C's `%.17g`, which Redis 7.0 uses for doubles in replies.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return if d.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    format_g(d, 17)
}

/// printf's `%.{p}g` (glibc's spelling of infinities and NaNs).
pub fn format_g(d: f64, p: usize) -> String {
    if !d.is_finite() {
        let s = if d.is_nan() { "nan" } else { "inf" };
        return if d.is_sign_negative() {
            format!("-{s}")
        } else {
            s.to_string()
        };
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let e = format!("{:.*e}", p - 1, d);
    let (mant, exp) = e.split_once('e').expect("exponent");
    let x: i32 = exp.parse().expect("exponent digits");
    if x < -4 || x >= p as i32 {
        let mant = trim_zeros(mant);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", x.abs())
    } else {
        let decimals = (p as i32 - 1 - x).max(0) as usize;
        trim_zeros(&format!("{d:.decimals$}")).to_string()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's `(long long)` cast on x86-64: out of range and NaN give i64::MIN.
pub fn c_ll(d: f64) -> i64 {
    // 2^63 as f64 is exact; anything at or past it (or NaN) overflows the cast.
    const LIM: f64 = 9_223_372_036_854_775_808.0;
    if !(-LIM..LIM).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_17g_matches_c() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(123456.0), "123456");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(f64::INFINITY), "inf");
    }
}
