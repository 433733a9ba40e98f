//! Strings: SET and its relatives, GET, MGET/MSET, APPEND and ranges (counters are in
//! `counters.rs`, bitmaps in `bitops.rs`).

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind, Value};
use crate::reply::{CmdResult, Reply};
use bytes::{Bytes, BytesMut};

pub const COMMANDS: &[Row] = &[
    Row::new("get", get),
    Row::new("set", set),
    Row::new("setnx", setnx),
    Row::new("setex", setex),
    Row::new("psetex", psetex),
    Row::new("getset", getset),
    Row::new("getdel", getdel),
    Row::new("getex", getex),
    Row::new("mget", mget),
    Row::new("mset", mset),
    Row::new("msetnx", msetnx),
    Row::new("append", append),
    Row::new("strlen", strlen),
    Row::new("getrange", getrange),
    Row::new("substr", getrange),
    Row::new("setrange", setrange),
];

fn wrongtype() -> RedisError {
    RedisError::new(error::WRONGTYPE)
}

pub use crate::cmd::runtime::typed::{note_read, note_reads};

/// The string at `key`: Ok(None) if missing, WRONGTYPE if it holds another type. Counts as a
/// read lookup ([`note_read`]), as GET's does in Redis.
pub fn read_str(ctx: &Ctx, key: &[u8]) -> Result<Option<Bytes>, RedisError> {
    let found = {
        let mut shard = ctx.db().lock(key);
        shard.get(key, ctx.now).map(|e| match &e.value {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        })
    };
    note_read(ctx, key, found.is_some());
    match found {
        None => Ok(None),
        Some(Some(s)) => Ok(Some(s)),
        Some(None) => Err(wrongtype()),
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

/// Options of SET and GETEX, parsed as Redis's parseExtendedStringArgumentsOrReply does.
#[derive(Default)]
struct ExtOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    persist: bool,
    /// The last EX/PX/EXAT/PXAT and its argument (repeating the same one is allowed).
    unit: Option<(&'a [u8], &'a [u8])>,
}

/// Redis compares option names as C strings, so anything after a NUL byte is ignored.
fn cstr(b: &[u8]) -> &[u8] {
    match b.iter().position(|&c| c == 0) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// Parse SET's (`for_set`) or GETEX's options from `a[from..]`: any case and order; a
/// conflicting option is a syntax error, a repeated one is not.
fn parse_ext(a: &[Bytes], from: usize, for_set: bool) -> Result<ExtOptions<'_>, RedisError> {
    let mut o = ExtOptions::default();
    let mut args = Args::new(a, from);
    while let Some(arg) = args.next() {
        let opt = cstr(arg);
        let next = args.peek();
        let unit_is = |u: &str| o.unit.is_some_and(|(x, _)| is(x, u));
        let other_unit = |u: &str| o.unit.is_some() && !unit_is(u);
        if for_set && is(opt, "nx") && !o.xx {
            o.nx = true;
        } else if for_set && is(opt, "xx") && !o.nx {
            o.xx = true;
        } else if for_set && is(opt, "get") {
            o.get = true;
        } else if for_set && is(opt, "keepttl") && !o.persist && o.unit.is_none() {
            o.keepttl = true;
        } else if !for_set && is(opt, "persist") && o.unit.is_none() && !o.keepttl {
            o.persist = true;
        } else if let (Some(u), Some(val)) = (
            ["ex", "px", "exat", "pxat"]
                .into_iter()
                .find(|u| is(opt, u)),
            next,
        ) {
            if o.keepttl || o.persist || other_unit(u) {
                return Err(RedisError::new(error::SYNTAX));
            }
            o.unit = Some((opt, val));
            args.next();
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    Ok(o)
}

/// What SET-like commands do once their options are checked.
struct SetSpec<'a> {
    key: &'a [u8],
    val: &'a Bytes,
    nx: bool,
    xx: bool,
    /// Read the old value first (SET ... GET): WRONGTYPE if it is not a string.
    get: bool,
    expiry: Expiry,
}

/// The old value (for GET) and whether the key was written.
struct SetOutcome {
    old: Option<Bytes>,
    written: bool,
}

/// Values this long or longer may be kept as the request's own argument (see [`stored_value`]).
const KEEP_ARG_MIN: usize = 32 * 1024;

/// What SET stores for the argument `v`: a large argument that is alone in its buffer (the
/// connection reads a big argument into a buffer of its own, sized for it) is kept as it is,
/// as Redis keeps a big argument's query buffer as the value, so a 10 MB SET neither copies
/// 10 MB nor holds it twice; anything else is copied, so a stored value never pins the rest
/// of a request's buffer.
fn stored_value(v: &Bytes) -> Bytes {
    if v.len() >= KEEP_ARG_MIN && v.is_unique() {
        v.clone()
    } else {
        crate::keyspace::str_bytes(v)
    }
}

/// Redis's setGenericCommand after the expire time has been validated.
fn set_generic(ctx: &Ctx, s: &SetSpec) -> Result<SetOutcome, RedisError> {
    let mut shard = ctx.db().lock(s.key);
    let (found, old, ttl) = match shard.get(s.key, ctx.now) {
        None => (false, None, 0),
        Some(e) => match &e.value {
            // Cloned only for SET ... GET: a stored value's first clone allocates (it is
            // promoted to a shared buffer), which SET NX on a held lock must not pay.
            Value::Str(v) => (true, s.get.then(|| v.clone()), e.expires_at()),
            _ if s.get => {
                drop(shard);
                note_read(ctx, s.key, true);
                return Err(wrongtype());
            }
            _ => (true, None, e.expires_at()),
        },
    };
    let written = !((s.nx && found) || (s.xx && !found));
    let expires_at = match s.expiry {
        Expiry::None => 0,
        Expiry::Keep => ttl,
        Expiry::At(t) => t,
    };
    if written {
        let value = Value::Str(stored_value(s.val));
        shard.insert(s.key, Entry::with_expiry(value, expires_at));
    }
    drop(shard);
    if s.get {
        note_read(ctx, s.key, found);
    }
    if written {
        ctx.signal_modified(s.key);
        ctx.notify(notify::STRING, "set", s.key);
        if matches!(s.expiry, Expiry::At(_)) {
            ctx.notify(notify::GENERIC, "expire", s.key);
        }
        if let (Expiry::At(t), true) = (s.expiry, ctx.propagates()) {
            // With the absolute time, so the log and replicas expire it when this server
            // does, however late they replay it.
            ctx.propagate_as(vec![
                Bytes::from_static(b"SET"),
                Bytes::copy_from_slice(s.key),
                s.val.clone(),
                Bytes::from_static(b"PXAT"),
                Bytes::from(t.to_string()),
            ]);
        }
    }
    Ok(SetOutcome { old, written })
}

fn bulk_or_nil(v: Option<Bytes>) -> Reply {
    match v {
        Some(s) => Reply::Bulk(s),
        None => Reply::Nil,
    }
}

fn set(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let o = parse_ext(a, 3, true)?;
    // Redis validates the expire time before looking at the key.
    let expiry = match o.unit {
        Some((u, v)) => Expiry::At(expire_arg(ctx, u, v, "set")?),
        None if o.keepttl => Expiry::Keep,
        None => Expiry::None,
    };
    let r = set_generic(
        ctx,
        &SetSpec {
            key: &a[1],
            val: &a[2],
            nx: o.nx,
            xx: o.xx,
            get: o.get,
            expiry,
        },
    )?;
    Ok(match (o.get, r.written) {
        (true, _) => bulk_or_nil(r.old),
        (false, true) => Reply::ok(),
        (false, false) => Reply::Nil,
    })
}

fn setnx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let r = set_generic(
        ctx,
        &SetSpec {
            key: &a[1],
            val: &a[2],
            nx: true,
            xx: false,
            get: false,
            expiry: Expiry::None,
        },
    )?;
    Ok(Reply::Int(r.written as i64))
}

/// SETEX and PSETEX: SET with a mandatory EX/PX.
fn set_with_expire(ctx: &Ctx, a: &[Bytes], unit: &[u8], name: &str) -> CmdResult {
    let at = expire_arg(ctx, unit, &a[2], name)?;
    set_generic(
        ctx,
        &SetSpec {
            key: &a[1],
            val: &a[3],
            nx: false,
            xx: false,
            get: false,
            expiry: Expiry::At(at),
        },
    )?;
    Ok(Reply::ok())
}

fn setex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    set_with_expire(ctx, a, b"ex", "setex")
}

fn psetex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    set_with_expire(ctx, a, b"px", "psetex")
}

fn getset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let r = set_generic(
        ctx,
        &SetSpec {
            key: &a[1],
            val: &a[2],
            nx: false,
            xx: false,
            get: true,
            expiry: Expiry::None,
        },
    )?;
    let mut prop = a.to_vec();
    prop[0] = Bytes::from_static(b"SET");
    ctx.propagate_as(prop);
    Ok(bulk_or_nil(r.old))
}

fn getdel(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let found = {
        let mut shard = ctx.db().lock(key);
        match shard.get(key, ctx.now).map(|e| &e.value) {
            None => None,
            Some(Value::Str(s)) => {
                let s = s.clone();
                shard.remove(key, ctx.now);
                Some(Ok(s))
            }
            Some(_) => Some(Err(wrongtype())),
        }
    };
    note_read(ctx, key, found.is_some());
    match found {
        None => Ok(Reply::Nil),
        Some(Err(e)) => Err(e),
        Some(Ok(s)) => {
            ctx.propagate_as_del(key, "lazyfree-lazy-user-del");
            ctx.signal_modified(key);
            ctx.notify(notify::GENERIC, "del", key);
            Ok(Reply::Bulk(s))
        }
    }
}

fn getex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let o = parse_ext(a, 2, false)?;
    let key = &a[1];
    let mut shard = ctx.db().lock(key);
    let (value, ttl) = match shard.get(key, ctx.now) {
        None => {
            drop(shard);
            note_read(ctx, key, false);
            return Ok(Reply::Nil);
        }
        Some(e) => match &e.value {
            Value::Str(s) => (s.clone(), e.expires_at()),
            _ => {
                drop(shard);
                note_read(ctx, key, true);
                return Err(wrongtype());
            }
        },
    };
    // Redis checks the type before the expire time.
    let at = match o.unit {
        Some((u, v)) => match expire_arg(ctx, u, v, "getex") {
            Ok(t) => Some((u, t)),
            Err(e) => {
                drop(shard);
                note_read(ctx, key, true);
                return Err(e);
            }
        },
        None => None,
    };
    let event = match at {
        // An absolute time already past deletes the key.
        Some((u, t)) if (is(u, "exat") || is(u, "pxat")) && t <= ctx.now => {
            shard.remove(key, ctx.now);
            ctx.propagate_as_del(key, "lazyfree-lazy-expire");
            Some("del")
        }
        Some((_, t)) => {
            shard.set_expiry(key, t, ctx.now);
            ctx.propagate_as(vec![
                Bytes::from_static(b"PEXPIREAT"),
                key.clone(),
                Bytes::from(t.to_string()),
            ]);
            Some("expire")
        }
        None if o.persist && ttl != 0 => {
            shard.set_expiry(key, 0, ctx.now);
            ctx.propagate_as(vec![Bytes::from_static(b"PERSIST"), key.clone()]);
            Some("persist")
        }
        None => None,
    };
    drop(shard);
    note_read(ctx, key, true);
    if let Some(ev) = event {
        ctx.signal_modified(key);
        ctx.notify(notify::GENERIC, ev, key);
    }
    Ok(Reply::Bulk(value))
}

fn mget(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let keys = &a[1..];
    // The replies are built under the lock; only misses (rare, and each one a keymiss
    // event) are remembered for afterwards, so a batch of hits allocates nothing but its
    // reply. Each key is hashed once, for its shard and its slot.
    let db = ctx.db();
    let hashes: Vec<u64> = keys.iter().map(|k| db.hash_key(k)).collect();
    let mut out = Vec::with_capacity(keys.len());
    let mut misses = Vec::new();
    {
        let mut g = db.lock_hashes(&hashes);
        for (i, (k, &h)) in keys.iter().zip(&hashes).enumerate() {
            out.push(match g.shard_hashed(h).get_hashed(k, h, ctx.now) {
                Some(e) => match &e.value {
                    Value::Str(s) => Reply::Bulk(s.clone()),
                    _ => Reply::Nil,
                },
                None => {
                    misses.push(i);
                    Reply::Nil
                }
            });
        }
    }
    note_reads(ctx, keys, &misses);
    Ok(Reply::Array(out))
}

/// MSET and MSETNX: all pairs are written under one multi-shard lock, so no reader sees half.
fn mset_generic(ctx: &Ctx, a: &[Bytes], nx: bool) -> Result<bool, RedisError> {
    if a.len().is_multiple_of(2) {
        return Err(error::wrong_arity(if nx { "msetnx" } else { "mset" }));
    }
    let pairs = || a[1..].chunks_exact(2);
    {
        let mut g = ctx.db().lock_keys(pairs().map(|p| &p[0][..]));
        if nx && pairs().any(|p| g.shard(&p[0]).contains(&p[0], ctx.now)) {
            return Ok(false);
        }
        for p in pairs() {
            let value = Value::Str(crate::keyspace::str_bytes(&p[1]));
            g.shard(&p[0]).insert(&p[0], Entry::new(value));
        }
    }
    for p in pairs() {
        ctx.signal_modified(&p[0]);
        ctx.notify(notify::STRING, "set", &p[0]);
    }
    Ok(true)
}

fn mset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    mset_generic(ctx, a, false)?;
    Ok(Reply::ok())
}

fn msetnx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(mset_generic(ctx, a, true)? as i64))
}

/// Redis's checkStringLength: the grown string must fit proto-max-bulk-len (as configured).
fn check_string_length(ctx: &Ctx, size: u64, add: u64) -> Result<(), RedisError> {
    let max = ctx.state.client_limits.proto_max_bulk_len() as u64;
    match size.checked_add(add) {
        Some(t) if t <= max => Ok(()),
        _ => Err(RedisError::new(error::STRING_TOO_LONG)),
    }
}

/// The stored bytes as a mutable buffer, without copying when nothing else holds them (so
/// repeated APPENDs grow in place, amortized).
pub(super) fn take_mut(v: &mut Bytes) -> BytesMut {
    match std::mem::take(v).try_into_mut() {
        Ok(m) => m,
        Err(state) => BytesMut::from(&state[..]),
    }
}

fn append(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (key, add) = (&a[1], &a[2]);
    let len = {
        let mut shard = ctx.db().lock(key);
        match shard.get_mut(key, ctx.now) {
            None => {
                shard.insert(key, Entry::new(Value::Str(Bytes::copy_from_slice(add))));
                add.len()
            }
            Some(e) => {
                let Value::Str(s) = &mut e.value else {
                    return Err(wrongtype());
                };
                check_string_length(ctx, s.len() as u64, add.len() as u64)?;
                let mut m = take_mut(s);
                m.extend_from_slice(add);
                *s = m.freeze();
                let len = s.len();
                e.set_str_kind(StrKind::Raw);
                len
            }
        }
    };
    ctx.signal_modified(key);
    ctx.notify(notify::STRING, "append", key);
    Ok(Reply::Int(len as i64))
}

fn strlen(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(
        read_str(ctx, &a[1])?.map_or(0, |s| s.len() as i64),
    ))
}

fn getrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut start = args::int(&a[2])?;
    let mut end = args::int(&a[3])?;
    let s = match read_str(ctx, &a[1])? {
        None => return Ok(Reply::bulk_static("")),
        Some(s) => s,
    };
    let len = s.len() as i64;
    if start < 0 && end < 0 && start > end {
        return Ok(Reply::bulk_static(""));
    }
    if start < 0 {
        start = start.saturating_add(len).max(0);
    }
    if end < 0 {
        end = end.saturating_add(len).max(0);
    }
    end = end.min(len - 1);
    if start > end || len == 0 {
        return Ok(Reply::bulk_static(""));
    }
    Ok(Reply::Bulk(s.slice(start as usize..=end as usize)))
}

fn setrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (key, val) = (&a[1], &a[3]);
    let offset = args::int(&a[2])?;
    if offset < 0 {
        return Err(RedisError::new(error::OFFSET_OUT_OF_RANGE));
    }
    let offset = offset as u64;
    let len = {
        let mut shard = ctx.db().lock(key);
        match shard.get_mut(key, ctx.now) {
            None => {
                if val.is_empty() {
                    return Ok(Reply::Int(0));
                }
                check_string_length(ctx, offset, val.len() as u64)?;
                let mut m = BytesMut::zeroed(offset as usize + val.len());
                m[offset as usize..].copy_from_slice(val);
                let mut e = Entry::new(Value::Str(m.freeze()));
                e.set_str_kind(StrKind::Raw);
                shard.insert(key, e);
                offset as usize + val.len()
            }
            Some(e) => {
                let Value::Str(s) = &mut e.value else {
                    return Err(wrongtype());
                };
                if val.is_empty() {
                    return Ok(Reply::Int(s.len() as i64));
                }
                check_string_length(ctx, offset, val.len() as u64)?;
                let end = offset as usize + val.len();
                let mut m = take_mut(s);
                if m.len() < end {
                    m.resize(end, 0);
                }
                m[offset as usize..end].copy_from_slice(val);
                *s = m.freeze();
                let len = s.len();
                e.set_str_kind(StrKind::Raw);
                len
            }
        }
    };
    ctx.signal_modified(key);
    ctx.notify(notify::STRING, "setrange", key);
    Ok(Reply::Int(len as i64))
}
