//! Stream IDs: the 128-bit `<ms>-<seq>` pair, its order, successor and predecessor, and
//! parsing with Redis's rules (streamGenericParseIDOrReply and its wrappers).

use std::fmt;

/// What a stream operation can refuse; the command layer spells each one as Redis does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum StreamError {
    /// "Invalid stream ID specified as stream command argument".
    InvalidId,
    /// "invalid start ID for the interval" (an exclusive start at the largest ID).
    InvalidStartInterval,
    /// "invalid end ID for the interval" (an exclusive end at 0-0).
    InvalidEndInterval,
    /// XADD: "The ID specified in XADD is equal or smaller than the target stream top item".
    IdNotGreater,
    /// XADD `<ms>-*` whose milliseconds are the last ID's and whose sequence is exhausted.
    /// Redis fails here without setting errno and reports whatever errno held, normally
    /// "Elements are too large to be stored".
    SeqExhausted,
    /// XADD: "Elements are too large to be stored" (over 1 GB of fields and values).
    TooLarge,
    /// XSETID: "The ID specified in XSETID is smaller than the target stream top item".
    SetIdTooSmall,
    /// XSETID: "The entries_added specified in XSETID is smaller than the target stream
    /// length".
    EntriesAddedTooSmall,
}

/// A stream entry ID: milliseconds and a sequence number, ordered as the pair (Redis
/// compares them as one 128-bit big-endian number).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    /// The millisecond part.
    pub ms: u64,
    /// The sequence part.
    pub seq: u64,
}

impl StreamId {
    /// 0-0, the smallest ID (and what `-` means).
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest ID (what `+` means).
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// The ID `ms-seq`.
    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// True for 0-0.
    pub fn is_zero(self) -> bool {
        self == StreamId::MIN
    }

    /// The next ID (streamIncrID); `None` past the largest one.
    pub fn incr(self) -> Option<StreamId> {
        if self.seq == u64::MAX {
            if self.ms == u64::MAX {
                None
            } else {
                Some(StreamId::new(self.ms + 1, 0))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq + 1))
        }
    }

    /// The previous ID (streamDecrID); `None` before 0-0.
    pub fn decr(self) -> Option<StreamId> {
        if self.seq == 0 {
            if self.ms == 0 {
                None
            } else {
                Some(StreamId::new(self.ms - 1, u64::MAX))
            }
        } else {
            Some(StreamId::new(self.ms, self.seq - 1))
        }
    }

    /// The ID as one number in the same order.
    pub(crate) fn key(self) -> u128 {
        (u128::from(self.ms) << 64) | u128::from(self.seq)
    }

    /// The ID a [`StreamId::key`] was made from.
    pub(crate) fn from_key(k: u128) -> StreamId {
        StreamId::new((k >> 64) as u64, k as u64)
    }

    /// The 16 bytes Redis keys its radix trees with (both halves big-endian).
    pub(crate) fn be_bytes(self) -> [u8; 16] {
        self.key().to_be_bytes()
    }

    /// Writes `ms-seq` into `buf` and returns it: a reply needs the text without allocating.
    pub fn format(self, buf: &mut IdBuf) -> &[u8] {
        let mut n = 0;
        for part in [self.ms, self.seq] {
            if n > 0 {
                buf.0[n] = b'-';
                n += 1;
            }
            let mut itoa = itoa::Buffer::new();
            let s = itoa.format(part).as_bytes();
            buf.0[n..n + s.len()].copy_from_slice(s);
            n += s.len();
        }
        &buf.0[..n]
    }

    /// `ms-seq` as owned bytes.
    pub fn to_vec(self) -> Vec<u8> {
        self.format(&mut IdBuf::default()).to_vec()
    }
}

/// Room for the longest `ms-seq` text (two 20-digit numbers and the dash).
pub struct IdBuf([u8; 41]);

impl Default for IdBuf {
    fn default() -> Self {
        IdBuf([0; 41])
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

impl fmt::Debug for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// The ID XADD was given: `*`, `<ms>-*` or a whole ID.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AddId {
    /// `*`: generated from the server clock.
    Auto,
    /// `<ms>-*`: the milliseconds given, the sequence generated.
    Ms(u64),
    /// A full ID (an incomplete `<ms>` means `<ms>-0`).
    Exact(StreamId),
}

/// How special forms are treated (streamGenericParseIDOrReply's `strict` and `seq_given`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `-` and `+` are the smallest and largest IDs.
    Lax,
    /// `-` and `+` are invalid.
    Strict,
    /// Strict, and `<ms>-*` is accepted (XADD).
    Add,
}

/// The parser every form goes through: Redis copies the argument into a 128-byte C string,
/// so longer ones are invalid and a NUL ends it.
fn parse_generic(arg: &[u8], missing_seq: u64, mode: Mode) -> Result<AddId, StreamError> {
    if arg.len() > 127 {
        return Err(StreamError::InvalidId);
    }
    let buf = match arg.iter().position(|&b| b == 0) {
        Some(n) => &arg[..n],
        None => arg,
    };
    if buf == b"-" || buf == b"+" {
        if mode != Mode::Lax {
            return Err(StreamError::InvalidId);
        }
        return Ok(AddId::Exact(if buf == b"-" {
            StreamId::MIN
        } else {
            StreamId::MAX
        }));
    }
    let (ms_part, seq_part) = match buf.iter().position(|&b| b == b'-') {
        Some(d) => (&buf[..d], Some(&buf[d + 1..])),
        None => (buf, None),
    };
    let ms = crate::num::string2ull(ms_part).ok_or(StreamError::InvalidId)?;
    let seq = match seq_part {
        Some(b"*") if mode == Mode::Add => return Ok(AddId::Ms(ms)),
        Some(s) => crate::num::string2ull(s).ok_or(StreamError::InvalidId)?,
        None => missing_seq,
    };
    Ok(AddId::Exact(StreamId::new(ms, seq)))
}

fn exact(r: Result<AddId, StreamError>) -> Result<StreamId, StreamError> {
    match r? {
        AddId::Exact(id) => Ok(id),
        _ => unreachable!("only the XADD form yields a partial ID"),
    }
}

/// An ID where `-` and `+` are allowed (streamParseIDOrReply); a missing sequence is
/// `missing_seq`. The only error is [`StreamError::InvalidId`].
pub fn parse_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, StreamError> {
    exact(parse_generic(arg, missing_seq, Mode::Lax))
}

/// An ID where `-` and `+` are invalid (streamParseStrictIDOrReply); a missing sequence is
/// `missing_seq`.
pub fn parse_strict_id(arg: &[u8], missing_seq: u64) -> Result<StreamId, StreamError> {
    exact(parse_generic(arg, missing_seq, Mode::Strict))
}

/// XADD's ID argument other than `*`: a strict ID or `<ms>-*`. (`*` itself is recognised by
/// the option parser, as Redis does, and never reaches here; here it is invalid.)
pub fn parse_add_id(arg: &[u8]) -> Result<AddId, StreamError> {
    parse_generic(arg, 0, Mode::Add)
}

/// A range bound (streamParseIntervalIDOrReply): `(` before an ID (longer than the `(`
/// alone) makes it exclusive and strict; otherwise `-` and `+` are allowed. Returns the ID
/// and whether it was exclusive.
pub fn parse_interval(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), StreamError> {
    if arg.len() > 1 && arg[0] == b'(' {
        Ok((parse_strict_id(&arg[1..], missing_seq)?, true))
    } else {
        Ok((parse_id(arg, missing_seq)?, false))
    }
}

/// The start of a range (XRANGE's start, XREVRANGE's second bound, XPENDING, XAUTOCLAIM): a
/// missing sequence is 0, an exclusive bound moves to the next ID.
pub fn parse_range_start(arg: &[u8]) -> Result<StreamId, StreamError> {
    let (id, ex) = parse_interval(arg, 0)?;
    if ex {
        id.incr().ok_or(StreamError::InvalidStartInterval)
    } else {
        Ok(id)
    }
}

/// The end of a range: a missing sequence is the largest, an exclusive bound moves to the
/// previous ID.
pub fn parse_range_end(arg: &[u8]) -> Result<StreamId, StreamError> {
    let (id, ex) = parse_interval(arg, u64::MAX)?;
    if ex {
        id.decr().ok_or(StreamError::InvalidEndInterval)
    } else {
        Ok(id)
    }
}
