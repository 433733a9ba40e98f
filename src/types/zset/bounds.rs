//! Range bounds as Redis parses them: [`ScoreBound`] (zslParseRange, with C's strtod) and
//! [`LexBound`] (zslParseLexRangeItem).

/// One end of a score range (ZRANGEBYSCORE, ZCOUNT, ZREMRANGEBYSCORE...): `(1.5` is
/// exclusive, `1.5` inclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreBound {
    /// The bound's score; never NaN.
    pub value: f64,
    /// True for a `(`-prefixed bound.
    pub exclusive: bool,
}

impl ScoreBound {
    /// An inclusive bound.
    pub fn inclusive(value: f64) -> Self {
        ScoreBound {
            value,
            exclusive: false,
        }
    }

    /// An exclusive bound.
    pub fn exclusive(value: f64) -> Self {
        ScoreBound {
            value,
            exclusive: true,
        }
    }

    /// One bound as Redis's zslParseRange reads it: an optional `(`, then what C's strtod
    /// takes whole: leading whitespace, a sign, decimal or hex floats, `inf`/`infinity`; the
    /// text ends at the first NUL byte, and an empty text is 0. None where Redis replies
    /// "min or max is not a float" (NaN, trailing bytes, nothing to convert).
    pub fn parse(arg: &[u8]) -> Option<ScoreBound> {
        let (exclusive, text) = match arg.first() {
            Some(b'(') => (true, &arg[1..]),
            _ => (false, arg),
        };
        let value = strtod_whole(text)?;
        (!value.is_nan()).then_some(ScoreBound { value, exclusive })
    }

    /// zslValueGteMin: `v` is not below this bound taken as a minimum.
    pub fn admits_above(&self, v: f64) -> bool {
        if self.exclusive {
            v > self.value
        } else {
            v >= self.value
        }
    }

    /// zslValueLteMax: `v` is not above this bound taken as a maximum.
    pub fn admits_below(&self, v: f64) -> bool {
        if self.exclusive {
            v < self.value
        } else {
            v <= self.value
        }
    }
}

/// One end of a lex range (ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: below every member.
    Min,
    /// `+`: above every member.
    Max,
    /// `[x`: x included.
    Inclusive(Vec<u8>),
    /// `(x`: x excluded.
    Exclusive(Vec<u8>),
}

impl LexBound {
    /// One bound as Redis's zslParseLexRangeItem reads it; None where Redis replies "min or
    /// max not valid string range item". As in C, `+` and `-` are judged up to a NUL byte,
    /// so `+\0anything` is still `+`.
    pub fn parse(arg: &[u8]) -> Option<LexBound> {
        let lone = arg.len() == 1 || arg.get(1) == Some(&0);
        match *arg.first()? {
            b'+' => lone.then_some(LexBound::Max),
            b'-' => lone.then_some(LexBound::Min),
            b'(' => Some(LexBound::Exclusive(arg[1..].to_vec())),
            b'[' => Some(LexBound::Inclusive(arg[1..].to_vec())),
            _ => None,
        }
    }

    /// zslLexValueGteMin.
    pub fn admits_above(&self, m: &[u8]) -> bool {
        match self {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Inclusive(x) => m >= &x[..],
            LexBound::Exclusive(x) => m > &x[..],
        }
    }

    /// zslLexValueLteMax.
    pub fn admits_below(&self, m: &[u8]) -> bool {
        match self {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(x) => m <= &x[..],
            LexBound::Exclusive(x) => m < &x[..],
        }
    }
}

/// C's strtod on `s` (cut at its first NUL, as C sees an sds), accepted only when it takes
/// the whole text, as zslParseRange requires (`eptr[0] == '\0'`).
fn strtod_whole(s: &[u8]) -> Option<f64> {
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
