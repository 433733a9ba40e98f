//! Strings: SET and its relatives, GET, ranges and counters on string values.

use super::args::{self, is};
use super::flags::*;
use super::{Command, Ctx};
use crate::db::{Entry, Value};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Command] = &[
    Command::new("get", 2, READONLY | FAST, get)
        .keys(1, 1, 1)
        .doc("string", "1.0.0", "Returns the string value of a key."),
    Command::new("set", -3, WRITE | DENYOOM, set)
        .keys(1, 1, 1)
        .doc("string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."),
];

/// The string at `key`: Ok(None) if missing, WRONGTYPE if it holds another type.
pub fn read_str(ctx: &Ctx, key: &[u8]) -> Result<Option<Bytes>, RedisError> {
    let mut shard = ctx.db().lock(key);
    match shard.get(key, ctx.now) {
        None => Ok(None),
        Some(Entry {
            value: Value::Str(s),
            ..
        }) => Ok(Some(s.clone())),
        Some(_) => Err(RedisError::new(error::WRONGTYPE)),
    }
}

fn get(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(match read_str(ctx, &a[1])? {
        Some(s) => Reply::Bulk(s),
        None => Reply::Nil,
    })
}

/// When the new value expires, as SET and GETEX options say.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Expiry {
    /// Remove any TTL (the default for SET).
    None,
    /// Keep the current TTL (KEEPTTL).
    Keep,
    /// Expire at this Unix time in ms.
    At(i64),
}

/// Turn an EX/PX/EXAT/PXAT argument into an absolute time, with Redis's checks: the number
/// must be a positive integer and the result must not overflow.
pub fn expire_arg(ctx: &Ctx, unit: &[u8], val: &[u8], cmd: &str) -> Result<i64, RedisError> {
    let n = args::int(val)?;
    if n <= 0 {
        return Err(error::invalid_expire(cmd));
    }
    let ms = if is(unit, "ex") || is(unit, "exat") {
        n.checked_mul(1000)
            .ok_or_else(|| error::invalid_expire(cmd))?
    } else {
        n
    };
    if is(unit, "ex") || is(unit, "px") {
        ms.checked_add(ctx.now)
            .ok_or_else(|| error::invalid_expire(cmd))
    } else {
        Ok(ms)
    }
}

struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    expiry: Expiry,
}

/// SET's options, in any order and any case; a repeated or conflicting one is a syntax error.
fn parse_set_options(ctx: &Ctx, a: &[Bytes]) -> Result<SetOptions, RedisError> {
    let mut o = SetOptions {
        nx: false,
        xx: false,
        get: false,
        expiry: Expiry::None,
    };
    let mut unit: Option<&Bytes> = None;
    let mut i = 3;
    let syntax = || RedisError::new(error::SYNTAX);
    while i < a.len() {
        let opt = &a[i];
        let next = a.get(i + 1);
        if is(opt, "nx") && !o.xx {
            o.nx = true;
        } else if is(opt, "xx") && !o.nx {
            o.xx = true;
        } else if is(opt, "get") {
            o.get = true;
        } else if is(opt, "keepttl") && unit.is_none() {
            o.expiry = Expiry::Keep;
        } else if (is(opt, "ex") || is(opt, "px") || is(opt, "exat") || is(opt, "pxat"))
            && o.expiry != Expiry::Keep
            && unit.is_none()
            && next.is_some()
        {
            unit = Some(opt);
            i += 1;
        } else {
            return Err(syntax());
        }
        i += 1;
    }
    if let Some(u) = unit {
        // Redis parses all options before validating the number.
        let pos = a
            .iter()
            .position(|x| std::ptr::eq(x, u))
            .expect("option present");
        o.expiry = Expiry::At(expire_arg(ctx, u, &a[pos + 1], "set")?);
    }
    Ok(o)
}

fn set(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let o = parse_set_options(ctx, a)?;
    let key = &a[1];
    let mut shard = ctx.db().lock(key);
    let (exists, old) = match shard.get(key, ctx.now) {
        None => (false, None),
        Some(e) => match &e.value {
            Value::Str(s) => (true, Some((s.clone(), e.expires_at))),
            _ if o.get => return Err(RedisError::new(error::WRONGTYPE)),
            _ => (true, None),
        },
    };
    let old_reply = |old: &Option<(Bytes, i64)>| match old {
        Some((s, _)) => Reply::Bulk(s.clone()),
        None => Reply::Nil,
    };
    if (o.nx && exists) || (o.xx && !exists) {
        return Ok(if o.get { old_reply(&old) } else { Reply::Nil });
    }
    let expires_at = match o.expiry {
        Expiry::None => 0,
        Expiry::At(t) => t,
        Expiry::Keep => shard.get(key, ctx.now).map(|e| e.expires_at).unwrap_or(0),
    };
    shard.insert(
        key,
        Entry::with_expiry(Value::Str(Bytes::copy_from_slice(&a[2])), expires_at),
    );
    drop(shard);
    ctx.notify(crate::cmd::notify::STRING, "set", key);
    if expires_at != 0 {
        ctx.notify(crate::cmd::notify::GENERIC, "expire", key);
    }
    Ok(if o.get { old_reply(&old) } else { Reply::ok() })
}
