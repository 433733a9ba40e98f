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
        let value = crate::num::strtod_whole(text)?;
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
