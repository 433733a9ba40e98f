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

/// Redis's string2ull (stream IDs): string2ll when it applies (a negative value is refused),
/// otherwise glibc's `strtoull` in base 10, which also takes leading white space, a sign
/// (a minus wraps), leading zeros and values above `i64::MAX`; the whole string must be
/// used. Redis reads a C string, so the bytes end at the first NUL.
pub fn string2ull(s: &[u8]) -> Option<u64> {
    let s = match s.iter().position(|&b| b == 0) {
        Some(n) => &s[..n],
        None => s,
    };
    if let Some(v) = parse_ll(s) {
        return u64::try_from(v).ok();
    }
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = &s[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(if neg { v.wrapping_neg() } else { v })
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

/// 10^i as f64, exact for these i.
const POW10: [f64; 19] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18,
];

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
    // An integer of at most `p` digits prints as itself (no exponent, nothing to round): the
    // common case (script arguments, counters) skips the exact decimal expansion below.
    if p <= 18 && d.fract() == 0.0 && d.abs() < POW10[p] {
        return (d as i64).to_string();
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

/// Redis's ld2string in LD_STR_HUMAN mode for a double (addReplyHumanLongDouble, GEOPOS's
/// coordinates): `%.17Lf`, trailing zeroes and a trailing dot removed, `-0` written `0`.
pub fn format_human(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if d.is_nan() {
        return if d.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    // The exact decimal expansion rounded to 17 decimals, ties to even, as glibc's printf.
    let s = format!("{d:.17}");
    let s = trim_zeros(&s);
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// C's strtod on `s` (cut at its first NUL, as C sees an sds), accepted only when it takes
/// the whole text, as zslParseRange requires (`eptr[0] == '\0'`).
pub fn strtod_whole(s: &[u8]) -> Option<f64> {
    let s = s.iter().position(|&b| b == 0).map_or(s, |p| &s[..p]);
    if s.is_empty() {
        // Nothing converted, and the end pointer sits on the terminator: 0.
        return Some(0.0);
    }
    let t = match s.iter().position(|b| !b" \t\n\x0b\x0c\r".contains(b)) {
        Some(p) => &s[p..],
        None => return None,
    };
    let (neg, body) = match t[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let v = if body.len() > 2 && body[0] == b'0' && body[1] | 0x20 == b'x' {
        parse_hex_float(&body[2..])?
    } else {
        // Rust's float grammar is C's decimal one (digits, '.', exponent, inf, infinity,
        // nan), less the sign already taken off.
        if matches!(body.first(), None | Some(b'+' | b'-')) {
            return None;
        }
        std::str::from_utf8(body).ok()?.parse::<f64>().ok()?
    };
    Some(if neg { -v } else { v })
}

/// The part of a C hex float after "0x": hex digits with an optional '.', then an optional
/// binary exponent `p[+-]digits`; at least one digit. Rounded to nearest.
fn parse_hex_float(s: &[u8]) -> Option<f64> {
    let mut mant: u64 = 0;
    let mut exp: i64 = 0;
    let mut sticky = false;
    let mut any = false;
    let mut seen_dot = false;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'.' && !seen_dot {
            seen_dot = true;
        } else if let Some(d) = (c as char).to_digit(16) {
            any = true;
            if mant >> 60 == 0 {
                mant = mant << 4 | d as u64;
                if seen_dot {
                    exp -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_dot {
                    exp += 4;
                }
            }
        } else {
            break;
        }
        i += 1;
    }
    if !any {
        return None;
    }
    if i < s.len() {
        if s[i] | 0x20 != b'p' {
            return None;
        }
        let rest = &s[i + 1..];
        let (eneg, digits) = match rest.first() {
            Some(b'-') => (true, &rest[1..]),
            Some(b'+') => (false, &rest[1..]),
            _ => (false, rest),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let e = digits
            .iter()
            .fold(0i64, |a, &d| (a * 10 + (d - b'0') as i64).min(100_000));
        exp += if eneg { -e } else { e };
    }
    if mant == 0 {
        return Some(0.0);
    }
    let mut v = (mant | sticky as u64) as f64;
    let mut e = exp;
    while e > 0 {
        let step = e.min(1000);
        v *= 2f64.powi(step as i32);
        e -= step;
    }
    while e < 0 {
        let step = (-e).min(1000);
        v /= 2f64.powi(step as i32);
        e += step;
    }
    Some(v)
}

/// Redis's getDoubleFromObject: C's strtod over the whole argument, refused when empty, with
/// leading space, with bytes left over (a NUL included), NaN, or out of a double's range
/// (ERANGE: an overflow to infinity or an underflow to zero); `inf` is a value.
pub fn get_double(s: &[u8]) -> Option<f64> {
    if s.is_empty() || b" \t\n\x0b\x0c\r".contains(&s[0]) || s.contains(&0) {
        return None;
    }
    let v = strtod_whole(s)?;
    if v.is_nan() {
        return None;
    }
    let body = s
        .strip_prefix(b"-")
        .or_else(|| s.strip_prefix(b"+"))
        .unwrap_or(s);
    let hex = body.len() > 1 && body[0] == b'0' && body[1] | 0x20 == b'x';
    if v.is_infinite() && !hex && matches!(body.first(), Some(b'i' | b'I')) {
        return Some(v);
    }
    if v.is_infinite() {
        return None;
    }
    if v == 0.0 {
        // An underflow: non-zero digits before the exponent that still gave zero.
        let mant = if hex { &body[2..] } else { body };
        let stop = if hex { b'p' } else { b'e' };
        let nonzero = mant
            .iter()
            .take_while(|&&c| c | 0x20 != stop)
            .any(|c| c.is_ascii_hexdigit() && *c != b'0' && (hex || c.is_ascii_digit()));
        if nonzero {
            return None;
        }
    }
    Some(v)
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
    fn get_double_follows_redis_getdoublefromobject() {
        for (s, want) in [
            ("1", Some(1.0)),
            ("-1.5", Some(-1.5)),
            ("1.", Some(1.0)),
            (".5", Some(0.5)),
            ("0x10", Some(16.0)),
            ("0x1p3", Some(8.0)),
            ("inf", Some(f64::INFINITY)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("1e-310", Some(1e-310)),
            ("0e400", Some(0.0)),
            ("1e400", None),
            ("-1e400", None),
            ("1e-400", None),
            ("nan", None),
            ("", None),
            (" 1", None),
            ("1 ", None),
            ("1e", None),
            ("abc", None),
        ] {
            assert_eq!(get_double(s.as_bytes()), want, "{s:?}");
        }
        assert_eq!(get_double(b"1\x002"), None);
    }

    #[test]
    fn percent_17g_matches_c() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(123456.0), "123456");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(f64::INFINITY), "inf");
    }

    /// `%.{p}g` through the C library, the reference.
    fn c_format(d: f64, p: usize) -> String {
        let mut buf = [0u8; 64];
        let fmt = format!("%.{p}g\0");
        // SAFETY: the buffer's size is passed, the format takes exactly one double.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
                fmt.as_ptr() as *const libc::c_char,
                d,
            )
        };
        String::from_utf8_lossy(&buf[..n as usize]).into_owned()
    }

    /// `%.17f` through the C library, trimmed as Redis trims it.
    fn c_human(d: f64) -> String {
        let mut buf = [0u8; 400];
        // SAFETY: the buffer's size is passed, the format takes exactly one double.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr() as *mut libc::c_char,
                buf.len(),
                c"%.17f".as_ptr(),
                d,
            )
        };
        let s = String::from_utf8_lossy(&buf[..n as usize]).into_owned();
        let t = trim_zeros(&s);
        if t == "-0" {
            "0".into()
        } else {
            t.into()
        }
    }

    #[test]
    fn human_doubles_print_as_c_prints_them() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut values = vec![
            0.0,
            -0.0,
            1.5,
            -2.0,
            1e-18,
            -1e-18,
            0.000003814697265625,
            1e22,
        ];
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push(f64::from_bits(x >> 2) % 1e6 - 5e5);
            values.push(((x % 360_000_000) as f64) / 1e6 - 180.0);
        }
        for d in values {
            assert_eq!(format_human(d), c_human(d), "{d:e}");
        }
        assert_eq!(format_human(-0.0), "0");
        assert_eq!(format_human(13.361389338970184), "13.36138933897018433");
    }

    #[test]
    fn integers_print_as_c_prints_them_around_every_digit_count() {
        let mut values = vec![1.0, -1.0, 9.0, 10.0, 2f64.powi(53), 2f64.powi(53) + 2.0];
        for e in 1..=19 {
            let p = 10f64.powi(e);
            values.extend([p, -p, p - 1.0, p + 1.0, p * 0.5, -(p - 1.0), p * 3.0 + 7.0]);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            values.push((x >> (x % 60)) as f64);
            values.push(-((x >> 11) as f64));
        }
        for d in values {
            for p in [14, 17] {
                assert_eq!(format_g(d, p), c_format(d, p), "{d} at %.{p}g");
            }
        }
    }

    #[test]
    fn string2ull_takes_what_strtoull_takes() {
        assert_eq!(string2ull(b"0"), Some(0));
        assert_eq!(string2ull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(string2ull(b"18446744073709551616"), None);
        assert_eq!(string2ull(b"-1"), None);
        assert_eq!(string2ull(b" -1"), Some(u64::MAX));
        assert_eq!(string2ull(b"-0"), Some(0));
        assert_eq!(string2ull(b"007"), Some(7));
        assert_eq!(string2ull(b"+5"), Some(5));
        assert_eq!(string2ull(b"\t 5"), Some(5));
        assert_eq!(string2ull(b"5 "), None);
        assert_eq!(string2ull(b""), None);
        assert_eq!(string2ull(b"+"), None);
        assert_eq!(string2ull(b"1x"), None);
        assert_eq!(string2ull(b"12\x0034"), Some(12));
    }
}
