//! Bitmaps on string values: SETBIT, GETBIT, BITCOUNT, BITPOS and BITOP, as Redis's bitops.c
//! (BITFIELD is in [`crate::cmd::families::bitfield`]). Bit 0 is the most significant bit of byte
//! 0; a missing key reads as an endless run of zero bits; writes zero-pad the string up to the byte
//! they reach, within proto-max-bulk-len.

use crate::cmd::base::args::{self, is};
use crate::cmd::families::strings::{read_str, take_mut};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind, Value};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("setbit", setbit),
    Row::new("getbit", getbit),
    Row::new("bitcount", bitcount),
    Row::new("bitpos", bitpos),
    Row::new("bitop", bitop),
];

/// Redis's getBitOffsetFromArgument: a bit offset, in `#N` form (N times `bits`) when
/// `bits` is given (BITFIELD), below proto-max-bulk-len bytes.
pub fn bit_offset(ctx: &Ctx, arg: &[u8], bits: Option<u32>) -> Result<u64, RedisError> {
    let err = || RedisError::new(error::BIT_OFFSET_NOT_INTEGER);
    let (hash, digits) = match (arg.first(), bits) {
        (Some(b'#'), Some(b)) if b > 0 => (Some(b), &arg[1..]),
        _ => (None, arg),
    };
    let mut off = args::parse_i64(digits).ok_or_else(err)?;
    if let Some(b) = hash {
        // C multiplies without checking: an overflow wraps, and a negative result is refused.
        off = off.wrapping_mul(b as i64);
    }
    let max = ctx.state.config.read().proto_max_bulk_len;
    if off < 0 || (off as u64 >> 3) >= max {
        return Err(err());
    }
    Ok(off as u64)
}

/// Redis's lookupStringForBitCommand plus the write: the string at `key`, created or
/// zero-padded so that bit `maxbit` exists, is handed to `f` with whether it was created or
/// grew (Redis counts either as a change). The string becomes `raw`, as dbUnshareStringValue
/// makes it. WRONGTYPE for another type.
pub fn write_bits<R>(
    ctx: &Ctx,
    key: &[u8],
    maxbit: u64,
    f: impl FnOnce(&mut [u8], bool) -> R,
) -> Result<R, RedisError> {
    let need = (maxbit >> 3) as usize + 1;
    let mut shard = ctx.db().lock(key);
    match shard.get_mut(key, ctx.now) {
        None => {
            let mut buf = vec![0u8; need];
            let r = f(&mut buf, true);
            let mut e = Entry::new(Value::Str(Bytes::from(buf)));
            e.set_str_kind(StrKind::Raw);
            shard.insert(key, e);
            Ok(r)
        }
        Some(e) => {
            let Value::Str(s) = &mut e.value else {
                return Err(RedisError::new(error::WRONGTYPE));
            };
            let mut m = take_mut(s);
            let grew = m.len() < need;
            if grew {
                m.resize(need, 0);
            }
            let r = f(&mut m, grew);
            *s = m.freeze();
            e.set_str_kind(StrKind::Raw);
            Ok(r)
        }
    }
}

fn setbit(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let offset = bit_offset(ctx, &a[2], None)?;
    let on = args::parse_i64(&a[3])
        .filter(|v| v & !1 == 0)
        .ok_or(RedisError::new(error::BIT_NOT_INTEGER))?;
    let (old, changed) = write_bits(ctx, key, offset, |buf, grew| {
        let byte = (offset >> 3) as usize;
        let mask = 1u8 << (7 - (offset & 7));
        let old = buf[byte] & mask != 0;
        if on == 1 {
            buf[byte] |= mask;
        } else {
            buf[byte] &= !mask;
        }
        (old, grew || old != (on == 1))
    })?;
    if changed {
        ctx.signal_modified(key);
        ctx.notify(notify::STRING, "setbit", key);
    }
    Ok(Reply::Int(old as i64))
}

fn getbit(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let offset = bit_offset(ctx, &a[2], None)?;
    let Some(s) = read_str(ctx, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let byte = (offset >> 3) as usize;
    let bit = s
        .get(byte)
        .is_some_and(|b| b & (1 << (7 - (offset & 7))) != 0);
    Ok(Reply::Int(bit as i64))
}

/// Set bits in `s` (Redis's redisPopcount).
pub fn popcount(s: &[u8]) -> i64 {
    let mut chunks = s.chunks_exact(8);
    let mut n: u64 = 0;
    for c in &mut chunks {
        n += u64::from_ne_bytes(c.try_into().expect("8 bytes")).count_ones() as u64;
    }
    n += chunks
        .remainder()
        .iter()
        .map(|b| b.count_ones() as u64)
        .sum::<u64>();
    n as i64
}

/// The position of the first bit equal to `bit` in `s` (Redis's redisBitpos): for a clear
/// bit, `s` is taken as zero-padded on the right, so an all-ones `s` answers its bit length;
/// for a set bit, none found is -1.
pub fn first_bit(s: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0u8 } else { 0xff };
    let skip_word = u64::from_ne_bytes([skip; 8]);
    let mut i = 0;
    while i + 8 <= s.len()
        && u64::from_ne_bytes(s[i..i + 8].try_into().expect("8 bytes")) == skip_word
    {
        i += 8;
    }
    while i < s.len() && s[i] == skip {
        i += 1;
    }
    match s.get(i) {
        None if bit => -1,
        None => s.len() as i64 * 8,
        Some(&b) => {
            let x = if bit { b } else { !b };
            i as i64 * 8 + x.leading_zeros() as i64
        }
    }
}

/// A BITCOUNT/BITPOS range after Redis's conversions: whole bytes `start..=end`, and for a
/// BIT range the masks of the bits outside it in the first and last byte.
struct ByteRange {
    start: i64,
    end: i64,
    first_mask: u8,
    last_mask: u8,
}

/// Redis's range normalisation shared by BITCOUNT and BITPOS: negative indexes count from the
/// end, both ends are clamped, and a BIT range is turned into bytes plus edge masks.
fn byte_range(len: i64, mut start: i64, mut end: i64, isbit: bool) -> ByteRange {
    let total = if isbit { len << 3 } else { len };
    if start < 0 {
        start += total;
    }
    if end < 0 {
        end += total;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    let (mut first_mask, mut last_mask) = (0, 0);
    if isbit && start <= end {
        first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
        last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    ByteRange {
        start,
        end,
        first_mask,
        last_mask,
    }
}

/// BIT or BYTE (any case), else a syntax error.
fn bit_unit(arg: &[u8]) -> Result<bool, RedisError> {
    if is(arg, "bit") {
        Ok(true)
    } else if is(arg, "byte") {
        Ok(false)
    } else {
        Err(RedisError::new(error::SYNTAX))
    }
}

fn bitcount(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    // Redis looks the key up before it parses the range: a missing key answers 0 whatever
    // follows.
    let Some(s) = read_str(ctx, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let len = s.len() as i64;
    let r = match a.len() {
        2 => ByteRange {
            start: 0,
            end: len - 1,
            first_mask: 0,
            last_mask: 0,
        },
        4 | 5 => {
            let start = args::int(&a[2])?;
            let end = args::int(&a[3])?;
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Int(0));
            }
            let isbit = match a.get(4) {
                Some(u) => bit_unit(u)?,
                None => false,
            };
            byte_range(len, start, end, isbit)
        }
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    if r.start > r.end {
        return Ok(Reply::Int(0));
    }
    let (start, end) = (r.start as usize, r.end as usize);
    let mut count = popcount(&s[start..=end]);
    count -= (s[start] & r.first_mask).count_ones() as i64;
    count -= (s[end] & r.last_mask).count_ones() as i64;
    Ok(Reply::Int(count))
}

fn bitpos(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let bit = match args::int(&a[2])? {
        0 => false,
        1 => true,
        _ => return Err(RedisError::new(error::BIT_ARG_ONE_OR_ZERO)),
    };
    // A missing key is an endless run of zeros.
    let Some(s) = read_str(ctx, &a[1])? else {
        return Ok(Reply::Int(if bit { -1 } else { 0 }));
    };
    let len = s.len() as i64;
    let mut end_given = false;
    let r = match a.len() {
        3 => ByteRange {
            start: 0,
            end: len - 1,
            first_mask: 0,
            last_mask: 0,
        },
        4..=6 => {
            let start = args::int(&a[3])?;
            let isbit = match a.get(5) {
                Some(u) => bit_unit(u)?,
                None => false,
            };
            let end = match a.get(4) {
                Some(e) => {
                    end_given = true;
                    args::int(e)?
                }
                None if isbit => (len << 3) + 7,
                None => len - 1,
            };
            byte_range(len, start, end, isbit)
        }
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    // An empty range holds neither a 0 nor a 1.
    if r.start > r.end {
        return Ok(Reply::Int(-1));
    }
    let (start, pos, bytes) = bitpos_in(&s, &r, bit);
    // Looking for a clear bit in an explicit range: the bits right of it are not zeros.
    if end_given && !bit && pos == bytes << 3 {
        return Ok(Reply::Int(-1));
    }
    Ok(Reply::Int(if pos != -1 { pos + (start << 3) } else { pos }))
}

/// The search of Redis's bitposCommand over a normalised range, step by step as Redis does
/// it (edge bytes masked): (the byte the position counts from, the position or -1, the
/// bytes left in the last step).
fn bitpos_in(s: &[u8], r: &ByteRange, bit: bool) -> (i64, i64, i64) {
    let (mut start, end) = (r.start, r.end);
    let mut bytes = end - start + 1;
    let masked = |b: u8, mask: u8| if bit { b & !mask } else { b | mask };
    if r.first_mask != 0 {
        let mut c = masked(s[start as usize], r.first_mask);
        if r.last_mask != 0 && bytes == 1 {
            c = masked(c, r.last_mask);
        }
        let pos = first_bit(&[c], bit);
        if bytes == 1 || (pos != -1 && pos != 8) {
            return (start, pos, bytes);
        }
        start += 1;
        bytes -= 1;
    }
    let cur = bytes - (r.last_mask != 0) as i64;
    if cur > 0 {
        let pos = first_bit(&s[start as usize..(start + cur) as usize], bit);
        if bytes == cur || (pos != -1 && pos != cur << 3) {
            return (start, pos, bytes);
        }
        start += cur;
        bytes -= cur;
    }
    let c = masked(s[end as usize], r.last_mask);
    (start, first_bit(&[c], bit), bytes)
}

#[derive(Clone, Copy, PartialEq)]
enum BitOp {
    And,
    Or,
    Xor,
    Not,
}

fn bitop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let op = match &a[1][..] {
        o if is(o, "and") => BitOp::And,
        o if is(o, "or") => BitOp::Or,
        o if is(o, "xor") => BitOp::Xor,
        o if is(o, "not") => BitOp::Not,
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    if op == BitOp::Not && a.len() != 4 {
        return Err(RedisError::new(error::BITOP_NOT_ONE_KEY));
    }
    let dest = &a[2];
    let mut srcs: Vec<Bytes> = Vec::with_capacity(a.len() - 3);
    for key in &a[3..] {
        // Missing keys are empty strings.
        srcs.push(read_str(ctx, key)?.unwrap_or_default());
    }
    let maxlen = srcs.iter().map(|s| s.len()).max().unwrap_or(0);
    if maxlen == 0 {
        let existed = ctx.db().lock(dest).remove(dest, ctx.now).is_some();
        if existed {
            ctx.signal_modified(dest);
            ctx.notify(notify::GENERIC, "del", dest);
        }
        return Ok(Reply::Int(0));
    }
    let byte_at = |s: &Bytes, j: usize| s.get(j).copied().unwrap_or(0);
    let mut res = vec![0u8; maxlen];
    for (j, out) in res.iter_mut().enumerate() {
        let mut v = byte_at(&srcs[0], j);
        match op {
            BitOp::Not => v = !v,
            BitOp::And => srcs[1..].iter().for_each(|s| v &= byte_at(s, j)),
            BitOp::Or => srcs[1..].iter().for_each(|s| v |= byte_at(s, j)),
            BitOp::Xor => srcs[1..].iter().for_each(|s| v ^= byte_at(s, j)),
        }
        *out = v;
    }
    // Redis's setKey: the result replaces the key whole, TTL included.
    let mut e = Entry::new(Value::Str(Bytes::from(res)));
    e.set_str_kind(StrKind::Raw);
    ctx.db().lock(dest).insert(dest, e);
    ctx.signal_modified(dest);
    ctx.notify(notify::STRING, "set", dest);
    Ok(Reply::Int(maxlen as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bit_finds_set_and_clear_bits_like_redis_bitpos() {
        assert_eq!(first_bit(&[], true), -1);
        assert_eq!(first_bit(&[], false), 0);
        assert_eq!(first_bit(&[0xff, 0xff], false), 16);
        assert_eq!(first_bit(&[0, 0, 0x10], true), 19);
        let mut long = vec![0xffu8; 40];
        long[33] = 0xfe;
        assert_eq!(first_bit(&long, false), 33 * 8 + 7);
        assert_eq!(first_bit(&[0u8; 40], true), -1);
    }

    #[test]
    fn popcount_counts_every_byte() {
        let s: Vec<u8> = (0..=255u8).collect();
        assert_eq!(popcount(&s), 1024);
        assert_eq!(popcount(&s[1..4]), 4);
    }
}
