//! BITFIELD and BITFIELD_RO: signed and unsigned integers of 1 to 64 bits (unsigned up to 63,
//! as RESP integers are signed) at any bit offset of a string, with Redis's OVERFLOW WRAP,
//! SAT and FAIL, exactly as bitops.c computes them.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::families::bitmaps::{bit_offset, write_bits};
use crate::cmd::families::strings::read_str;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("bitfield", bitfield),
    Row::new("bitfield_ro", bitfield_ro),
];

#[derive(Clone, Copy, PartialEq, Debug)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum OpCode {
    Get,
    Set,
    IncrBy,
}

/// One GET, SET or INCRBY, with the OVERFLOW in force where it appeared.
#[derive(Clone, Copy, Debug)]
struct Op {
    code: OpCode,
    offset: u64,
    /// SET's value or INCRBY's increment.
    value: i64,
    overflow: Overflow,
    bits: u32,
    signed: bool,
}

/// Redis's getBitfieldTypeFromArgument: `i1`..`i64` or `u1`..`u63` (lowercase only; C reads
/// the width up to a NUL byte).
fn bitfield_type(arg: &[u8]) -> Result<(bool, u32), RedisError> {
    let err = || RedisError::new(error::BITFIELD_BAD_TYPE);
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(err()),
    };
    let width = &arg[1..];
    let width = &width[..width.iter().position(|&b| b == 0).unwrap_or(width.len())];
    let bits = args::parse_i64(width).ok_or_else(err)?;
    if bits < 1 || (signed && bits > 64) || (!signed && bits > 63) {
        return Err(err());
    }
    Ok((signed, bits as u32))
}

/// Parse the subcommands as Redis does, left to right, stopping at the first error.
fn parse_ops(ctx: &Ctx, a: &[Bytes]) -> Result<Vec<Op>, RedisError> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut args = Args::new(a, 2);
    while let Some(sub) = args.next() {
        let rem = args.remaining();
        let code = if is(sub, "get") && rem >= 2 {
            OpCode::Get
        } else if is(sub, "set") && rem >= 3 {
            OpCode::Set
        } else if is(sub, "incrby") && rem >= 3 {
            OpCode::IncrBy
        } else if let Some(t) = args.value_of(sub, "overflow") {
            overflow = if is(t, "wrap") {
                Overflow::Wrap
            } else if is(t, "sat") {
                Overflow::Sat
            } else if is(t, "fail") {
                Overflow::Fail
            } else {
                return Err(RedisError::new(error::BITFIELD_BAD_OVERFLOW));
            };
            continue;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        };
        let Some(v) = args.take(if code == OpCode::Get { 2 } else { 3 }) else {
            return Err(RedisError::new(error::SYNTAX));
        };
        let (signed, bits) = bitfield_type(&v[0])?;
        let offset = bit_offset(ctx, &v[1], Some(bits))?;
        let value = if code == OpCode::Get {
            0
        } else {
            args::int(&v[2])?
        };
        ops.push(Op {
            code,
            offset,
            value,
            overflow,
            bits,
            signed,
        });
    }
    Ok(ops)
}

fn bitfield(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    bitfield_generic(ctx, a, false)
}

fn bitfield_ro(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    bitfield_generic(ctx, a, true)
}

fn bitfield_generic(ctx: &Ctx, a: &[Bytes], ro_command: bool) -> CmdResult {
    let ops = parse_ops(ctx, a)?;
    let key = &a[1];
    let highest = ops
        .iter()
        .filter(|op| op.code != OpCode::Get)
        .map(|op| op.offset + op.bits as u64 - 1)
        .max();
    let Some(highest) = highest else {
        // Only GETs: a read lookup, a missing key reads as zeros.
        let s = read_str(ctx, key)?.unwrap_or_default();
        return Ok(Reply::Array(ops.iter().map(|op| get_op(&s, op)).collect()));
    };
    if ro_command {
        return Err(RedisError::new(error::BITFIELD_RO_GET_ONLY));
    }
    let (replies, changes) = write_bits(ctx, key, highest, |buf, grew| {
        let mut changes = 0u64;
        let replies = ops
            .iter()
            .map(|op| match op.code {
                OpCode::Get => get_op(buf, op),
                _ => match write_op(buf, op) {
                    None => Reply::Nil,
                    Some((reply, changed)) => {
                        changes += (grew || changed) as u64;
                        Reply::Int(reply)
                    }
                },
            })
            .collect::<Vec<_>>();
        (replies, changes)
    })?;
    if changes > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::STRING, "setbit", key);
        // The signal counted one change; BITFIELD counts each write that changed bits.
        ctx.state.add_dirty(changes - 1);
    }
    Ok(Reply::Array(replies))
}

/// GET: read through a zero-padded copy of the (up to) 9 bytes the field spans, as Redis does,
/// so fields past the end of the string read as zeros.
fn get_op(s: &[u8], op: &Op) -> Reply {
    let byte = (op.offset >> 3) as usize;
    let mut buf = [0u8; 9];
    for (i, b) in buf.iter_mut().enumerate() {
        match byte.checked_add(i).and_then(|at| s.get(at)) {
            Some(v) => *b = *v,
            None => break,
        }
    }
    let off = op.offset & 7;
    Reply::Int(if op.signed {
        get_signed(&buf, off, op.bits)
    } else {
        get_unsigned(&buf, off, op.bits) as i64
    })
}

/// SET or INCRBY on a buffer long enough for the field: (the reply, whether the stored value
/// changed), or None when OVERFLOW FAIL refused the write.
fn write_op(buf: &mut [u8], op: &Op) -> Option<(i64, bool)> {
    if op.signed {
        let old = get_signed(buf, op.offset, op.bits);
        let (new, reply, overflow) = if op.code == OpCode::IncrBy {
            let (o, wrapped) = signed_overflow(old, op.value, op.bits, op.overflow);
            let new = if o != 0 {
                wrapped
            } else {
                old.wrapping_add(op.value)
            };
            (new, new, o)
        } else {
            let (o, wrapped) = signed_overflow(op.value, 0, op.bits, op.overflow);
            (if o != 0 { wrapped } else { op.value }, old, o)
        };
        if overflow != 0 && op.overflow == Overflow::Fail {
            return None;
        }
        set_unsigned(buf, op.offset, op.bits, new as u64);
        Some((reply, old != new))
    } else {
        let old = get_unsigned(buf, op.offset, op.bits);
        let (new, reply, overflow) = if op.code == OpCode::IncrBy {
            let (o, wrapped) = unsigned_overflow(old, op.value, op.bits, op.overflow);
            let new = if o != 0 {
                wrapped
            } else {
                old.wrapping_add(op.value as u64)
            };
            (new, new, o)
        } else {
            let v = op.value as u64;
            let (o, wrapped) = unsigned_overflow(v, 0, op.bits, op.overflow);
            (if o != 0 { wrapped } else { v }, old, o)
        };
        if overflow != 0 && op.overflow == Overflow::Fail {
            return None;
        }
        set_unsigned(buf, op.offset, op.bits, new);
        Some((reply as i64, old != new))
    }
}

fn get_unsigned(p: &[u8], offset: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for j in 0..bits as u64 {
        let at = offset + j;
        let bit = (p[(at >> 3) as usize] >> (7 - (at & 7))) & 1;
        v = (v << 1) | bit as u64;
    }
    v
}

fn get_signed(p: &[u8], offset: u64, bits: u32) -> i64 {
    let mut v = get_unsigned(p, offset, bits);
    // Sign-extend from the field's top bit.
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        v |= u64::MAX << bits;
    }
    v as i64
}

fn set_unsigned(p: &mut [u8], offset: u64, bits: u32, value: u64) {
    for j in 0..bits as u64 {
        let bit = (value >> (bits as u64 - 1 - j)) & 1;
        let at = offset + j;
        let byte = &mut p[(at >> 3) as usize];
        let shift = 7 - (at & 7);
        *byte = (*byte & !(1 << shift)) | ((bit as u8) << shift);
    }
}

/// Redis's checkUnsignedBitfieldOverflow: (0, 1 overflow or -1 underflow; the value WRAP or
/// SAT stores instead, 0 for FAIL).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, ow: Overflow) -> (i32, u64) {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let maxincr = max.wrapping_sub(value) as i64;
    let minincr = value.wrapping_neg() as i64;
    let wrap = || {
        let mask = if bits == 64 { 0 } else { u64::MAX << bits };
        value.wrapping_add(incr as u64) & !mask
    };
    if value > max || (incr > 0 && incr > maxincr) {
        match ow {
            Overflow::Wrap => (1, wrap()),
            Overflow::Sat => (1, max),
            Overflow::Fail => (1, 0),
        }
    } else if incr < 0 && incr < minincr {
        match ow {
            Overflow::Wrap => (-1, wrap()),
            Overflow::Sat => (-1, 0),
            Overflow::Fail => (-1, 0),
        }
    } else {
        (0, 0)
    }
}

/// Redis's checkSignedBitfieldOverflow, same contract as [`unsigned_overflow`].
fn signed_overflow(value: i64, incr: i64, bits: u32, ow: Overflow) -> (i32, i64) {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    // These may overflow; as in C, they are only used once `value` is known in range.
    let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
    let minincr = min.wrapping_sub(value);
    let wrap = || {
        let msb = 1u64 << (bits - 1);
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & msb != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
        match ow {
            Overflow::Wrap => (1, wrap()),
            Overflow::Sat => (1, max),
            Overflow::Fail => (1, 0),
        }
    } else if value < min
        || (bits != 64 && incr < minincr)
        || (value < 0 && incr < 0 && incr < minincr)
    {
        match ow {
            Overflow::Wrap => (-1, wrap()),
            Overflow::Sat => (-1, min),
            Overflow::Fail => (-1, 0),
        }
    } else {
        (0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_at_unaligned_offsets() {
        let mut buf = [0u8; 10];
        set_unsigned(&mut buf, 3, 13, 0x1abc);
        assert_eq!(get_unsigned(&buf, 3, 13), 0x1abc);
        set_unsigned(&mut buf, 5, 64, (-2i64) as u64);
        assert_eq!(get_signed(&buf, 5, 64), -2);
        set_unsigned(&mut buf, 0, 8, 0xff);
        assert_eq!(get_signed(&buf, 0, 8), -1);
    }

    #[test]
    fn overflow_checks_follow_redis() {
        // u8: 250 + 10 wraps to 4, saturates at 255.
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Wrap), (1, 4));
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Sat), (1, 255));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Sat), (-1, 0));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Wrap), (-1, 251));
        // i8: 120 + 10 wraps to -126, saturates at 127.
        assert_eq!(signed_overflow(120, 10, 8, Overflow::Wrap), (1, -126));
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Sat), (-1, -128));
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            (1, i64::MIN)
        );
        assert_eq!(signed_overflow(3, 4, 8, Overflow::Fail), (0, 0));
    }
}
