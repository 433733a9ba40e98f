//! Counters on string values: INCR, INCRBY, DECR, DECRBY (64-bit integers) and INCRBYFLOAT
//! (Redis's 80-bit long double arithmetic); the TTL is kept.

use crate::cmd::base::args;
use crate::cmd::base::float80::{self, Parsed, F80};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind, Value};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("incr", incr),
    Row::new("incrby", incrby),
    Row::new("decr", decr),
    Row::new("decrby", decrby),
    Row::new("incrbyfloat", incrbyfloat),
];

fn wrongtype() -> RedisError {
    RedisError::new(error::WRONGTYPE)
}

/// Redis's incrDecrCommand: the stored value must be a 64-bit integer string; the TTL is kept.
fn incr_by(ctx: &Ctx, key: &[u8], incr: i64) -> CmdResult {
    let v = {
        let mut shard = ctx.db().lock(key);
        let old = match shard.get_mut(key, ctx.now) {
            None => None,
            Some(e) if matches!(e.value, Value::Str(_)) => Some(e),
            Some(_) => return Err(wrongtype()),
        };
        let cur = match &old {
            Some(Entry {
                value: Value::Str(s),
                ..
            }) => args::int(s)?,
            _ => 0,
        };
        let v = cur
            .checked_add(incr)
            .ok_or(RedisError::new(error::OVERFLOW))?;
        let text = crate::keyspace::str_bytes(itoa::Buffer::new().format(v).as_bytes());
        match old {
            Some(e) => {
                // A new integer object in Redis, whatever the old one was.
                e.value = Value::Str(text);
                e.set_str_kind(StrKind::Encoded);
            }
            None => shard.insert(key, Entry::new(Value::Str(text))),
        }
        v
    };
    ctx.signal_modified(key);
    ctx.notify(notify::STRING, "incrby", key);
    Ok(Reply::Int(v))
}

fn incr(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    incr_by(ctx, &a[1], 1)
}

fn decr(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    incr_by(ctx, &a[1], -1)
}

fn incrby(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let n = args::int(&a[2])?;
    incr_by(ctx, &a[1], n)
}

fn decrby(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let n = args::int(&a[2])?;
    if n == i64::MIN {
        return Err(RedisError::new(error::DECR_OVERFLOW));
    }
    incr_by(ctx, &a[1], -n)
}

/// A `long double` as Redis's getLongDoubleFromObject reads it (None: not a valid float).
pub fn parse_long_double(s: &[u8]) -> Option<Parsed> {
    float80::parse(s)
}

/// `value + incr` in Redis's long double arithmetic, formatted as Redis stores and replies
/// it; errors as INCRBYFLOAT/HINCRBYFLOAT report them (`not_float` for unparsable input).
pub fn add_long_double(
    value: Option<&[u8]>,
    incr: &[u8],
    not_float: &'static str,
) -> Result<String, RedisError> {
    let cur = match value {
        None => Parsed::Finite(F80::ZERO),
        Some(v) => float80::parse(v).ok_or(RedisError::new(not_float))?,
    };
    let inc = float80::parse(incr).ok_or(RedisError::new(error::NOT_FLOAT))?;
    let nan_or_inf = || RedisError::new(error::INCR_NAN_OR_INF);
    match (cur, inc) {
        (Parsed::Finite(a), Parsed::Finite(b)) => Ok(a.add(b).ok_or_else(nan_or_inf)?.to_human()),
        _ => Err(nan_or_inf()),
    }
}

fn incrbyfloat(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let text = {
        let mut shard = ctx.db().lock(key);
        match shard.get_mut(key, ctx.now) {
            None => {
                let t = Bytes::from(add_long_double(None, &a[2], error::NOT_FLOAT)?);
                let mut e = Entry::new(Value::Str(t.clone()));
                e.set_str_kind(StrKind::Plain);
                shard.insert(key, e);
                t
            }
            Some(e) => {
                let Value::Str(s) = &mut e.value else {
                    return Err(wrongtype());
                };
                let t = Bytes::from(add_long_double(Some(&s[..]), &a[2], error::NOT_FLOAT)?);
                *s = t.clone();
                // createStringObject's result: embstr or raw by length, never int.
                e.set_str_kind(StrKind::Plain);
                t
            }
        }
    };
    ctx.signal_modified(key);
    ctx.notify(notify::STRING, "incrbyfloat", key);
    // As the value it produced, so float formatting never makes a copy differ.
    ctx.propagate_as(vec![
        Bytes::from_static(b"SET"),
        key.clone(),
        text.clone(),
        Bytes::from_static(b"KEEPTTL"),
    ]);
    Ok(Reply::Bulk(text))
}
