//! Hashes: HSET and friends, counters on fields (Redisson's lock counts live here), HSCAN and
//! HRANDFIELD, with Redis 7.0's replies and errors.

use crate::cmd::base::args::{self, is};
use crate::cmd::base::float80::{self, Parsed, F80};
use crate::cmd::base::scan::{self, cursor_hash};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::scan_by_hash;
use crate::reply::{CmdResult, Reply};
use crate::types::hash::Hash;
use bytes::Bytes;

use crate::cmd::runtime::typed;

/// Run `f` on the hash at `key`, creating an empty one first if the key is missing (as
/// Redis's hashTypeLookupWriteOrCreate). A hash left empty by `f` is removed; the flag in
/// the result says so.
fn write<T>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(&mut Hash) -> Result<T, RedisError>,
) -> Result<(T, bool), RedisError> {
    typed::upsert(ctx, key, Hash::new, f).map(|(r, o)| (r, o.deleted))
}

/// Run `f` on the hash at `key` (None if the key is missing); WRONGTYPE for other types. Every
/// hash command that reads looks its key up as Redis's lookupKeyRead (hit/miss, keymiss).
fn read<T>(ctx: &Ctx, key: &[u8], f: impl FnOnce(Option<&Hash>) -> T) -> Result<T, RedisError> {
    typed::read_counted(ctx, key, f)
}

/// Modify an existing hash (HDEL): Ok(None) if the key is missing; a hash left empty goes.
fn modify<T>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(&mut Hash) -> T,
) -> Result<Option<(T, bool)>, RedisError> {
    typed::modify(ctx, key, f)
}

pub const COMMANDS: &[Row] = &[
    Row::new("hset", hset),
    Row::new("hsetnx", hsetnx),
    Row::new("hmset", hset),
    Row::new("hget", hget),
    Row::new("hmget", hmget),
    Row::new("hdel", hdel),
    Row::new("hexists", hexists),
    Row::new("hlen", hlen),
    Row::new("hstrlen", hstrlen),
    Row::new("hincrby", hincrby),
    Row::new("hincrbyfloat", hincrbyfloat),
    Row::new("hgetall", hgetall),
    Row::new("hkeys", hkeys),
    Row::new("hvals", hvals),
    Row::new("hscan", hscan),
    Row::new("hrandfield", hrandfield),
];

/// HSET and HMSET: HSET answers the number of new fields, HMSET +OK.
fn hset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() % 2 == 1 {
        return Err(error::wrong_arity(if is(&a[0], "hmset") {
            "hmset"
        } else {
            "hset"
        }));
    }
    let key = &a[1];
    let limits = typed::hash_limits(ctx);
    let (created, _) = write(ctx, key, |h| {
        Ok(a[2..]
            .chunks_exact(2)
            .filter(|p| h.set_within(&p[0], &p[1], limits))
            .count())
    })?;
    ctx.signal_modified(key);
    ctx.notify(notify::HASH, "hset", key);
    Ok(if is(&a[0], "hmset") {
        Reply::ok()
    } else {
        Reply::Int(created as i64)
    })
}

fn hsetnx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let limits = typed::hash_limits(ctx);
    let (set, _) = write(ctx, key, |h| {
        Ok(if h.get(&a[2]).is_some() {
            false
        } else {
            h.set_within(&a[2], &a[3], limits)
        })
    })?;
    if set {
        ctx.signal_modified(key);
        ctx.notify(notify::HASH, "hset", key);
    }
    Ok(Reply::Int(set as i64))
}

fn hget(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| match h.and_then(|h| h.get_bytes(&a[2])) {
        Some(v) => Reply::Bulk(v),
        None => Reply::Nil,
    })
}

fn hmget(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Array(
            a[2..]
                .iter()
                .map(|f| match h.and_then(|h| h.get_bytes(f)) {
                    Some(v) => Reply::Bulk(v),
                    None => Reply::Nil,
                })
                .collect(),
        )
    })
}

fn hdel(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let r = modify(ctx, key, |h| {
        let mut n = 0;
        for f in &a[2..] {
            if h.remove(f) {
                n += 1;
                if h.is_empty() {
                    break;
                }
            }
        }
        n
    })?;
    let (n, emptied) = r.unwrap_or((0, false));
    if n > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::HASH, "hdel", key);
        if emptied {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    Ok(Reply::Int(n))
}

fn hexists(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Int(h.is_some_and(|h| h.get(&a[2]).is_some()) as i64)
    })
}

fn hlen(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| Reply::Int(h.map_or(0, |h| h.len()) as i64))
}

fn hstrlen(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Int(h.and_then(|h| h.get(&a[2])).map_or(0, |v| v.len()) as i64)
    })
}

fn hincrby(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let incr = args::int(&a[3])?;
    let key = &a[1];
    let limits = typed::hash_limits(ctx);
    let (n, _) = write(ctx, key, |h| {
        let cur = match h.get(&a[2]) {
            None => 0,
            Some(v) => args::parse_i64(v).ok_or(RedisError::new(error::HASH_NOT_INTEGER))?,
        };
        let n = cur
            .checked_add(incr)
            .ok_or(RedisError::new(error::OVERFLOW))?;
        let mut buf = itoa::Buffer::new();
        h.set_within(&a[2], buf.format(n).as_bytes(), limits);
        Ok(n)
    })?;
    ctx.signal_modified(key);
    ctx.notify(notify::HASH, "hincrby", key);
    Ok(Reply::Int(n))
}

fn hincrbyfloat(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let incr = match float80::parse(&a[3]) {
        None => return Err(RedisError::new(error::NOT_FLOAT)),
        Some(Parsed::Infinite) => return Err(RedisError::new(error::VALUE_NAN_OR_INF)),
        Some(Parsed::Finite(v)) => v,
    };
    let key = &a[1];
    let limits = typed::hash_limits(ctx);
    let (s, _) = write(ctx, key, |h| {
        let cur = match h.get(&a[2]) {
            None => Parsed::Finite(F80::ZERO),
            Some(v) => float80::parse(v).ok_or(RedisError::new(error::HASH_NOT_FLOAT))?,
        };
        let sum = match cur {
            Parsed::Finite(c) => c.add(incr),
            Parsed::Infinite => None,
        }
        .ok_or(RedisError::new(error::INCR_NAN_OR_INF))?;
        let s = sum.to_human();
        h.set_within(&a[2], s.as_bytes(), limits);
        Ok(s)
    })?;
    ctx.signal_modified(key);
    ctx.notify(notify::HASH, "hincrbyfloat", key);
    // As the value it produced (an HSET), so float formatting never makes a copy differ.
    let s = Bytes::from(s);
    ctx.propagate_as(vec![
        Bytes::from_static(b"HSET"),
        key.clone(),
        a[2].clone(),
        s.clone(),
    ]);
    Ok(Reply::Bulk(s))
}

fn hgetall(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Map(h.map_or_else(Vec::new, |h| {
            h.iter_bytes()
                .map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v)))
                .collect()
        }))
    })
}

fn hkeys(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Array(h.map_or_else(Vec::new, |h| {
            h.iter_bytes().map(|(f, _)| Reply::Bulk(f)).collect()
        }))
    })
}

fn hvals(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read(ctx, &a[1], |h| {
        Reply::Array(h.map_or_else(Vec::new, |h| {
            h.iter_bytes().map(|(_, v)| Reply::Bulk(v)).collect()
        }))
    })
}

fn hscan(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let cursor = scan::cursor(&a[2])?;
    // Redis looks the key up before parsing the options; a missing key answers at once.
    let exists = read(ctx, &a[1], |h| h.is_some())?;
    if !exists {
        return Ok(Reply::Array(vec![
            Reply::bulk_static("0"),
            Reply::Array(vec![]),
        ]));
    }
    let opts = scan::options(a, 3, false, 1 << 20)?;
    let (count, glob) = (opts.count, opts.pattern);
    // Counted once above.
    let (next, pairs) = typed::read(ctx, &a[1], |h: Option<&Hash>| {
        let h = match h {
            None => return (0, Vec::new()),
            Some(h) => h,
        };
        if h.is_listpack() {
            (0, h.iter_bytes().collect::<Vec<_>>())
        } else {
            let page = scan_by_hash(
                h.iter().map(|(f, v)| (cursor_hash(f), (f, v))),
                cursor,
                count,
            );
            let copy =
                |(f, v): (&[u8], &[u8])| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v));
            (page.cursor, page.items.into_iter().map(copy).collect())
        }
    })?;
    let mut items = Vec::with_capacity(pairs.len() * 2);
    for (f, v) in pairs {
        if glob.as_ref().is_some_and(|g| !g.matches(&f)) {
            continue;
        }
        items.push(Reply::Bulk(f));
        items.push(Reply::Bulk(v));
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(items),
    ]))
}

/// A reply longer than this from HRANDFIELD with a negative count is refused rather than
/// built in memory (Redis would stream it).
const MAX_RANDOM_REPLY: u64 = 1 << 24;

fn hrandfield(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() == 2 {
        return read(ctx, &a[1], |h| match h {
            Some(h) if !h.is_empty() => {
                let i = fastrand::usize(..h.len());
                let (f, _) = h.get_index(i).expect("index in range");
                Reply::Bulk(Bytes::copy_from_slice(f))
            }
            _ => Reply::Nil,
        });
    }
    let l = args::int(&a[2])?;
    if l == i64::MIN {
        return Err(error::err(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    if a.len() > 4 || (a.len() == 4 && !is(&a[3], "withvalues")) {
        return Err(RedisError::new(error::SYNTAX));
    }
    let withvalues = a.len() == 4;
    if withvalues && !(-i64::MAX / 2..=i64::MAX / 2).contains(&l) {
        return Err(RedisError::new(error::VALUE_OUT_OF_RANGE));
    }
    let resp3 = ctx.client.resp >= 3;
    let uniq = l >= 0;
    let count = l.unsigned_abs();
    read(ctx, &a[1], |h| {
        let h = match h {
            Some(h) if count > 0 => h,
            _ => return Ok(Reply::Array(vec![])),
        };
        let size = h.len();
        // A listpack is walked once here rather than once per pick.
        let lp: Vec<(&[u8], &[u8])> = if h.is_listpack() {
            h.iter().collect()
        } else {
            Vec::new()
        };
        let pair = |i: usize, out: &mut Vec<Reply>| {
            let (f, v) = match lp.get(i) {
                Some(&(f, v)) => (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)),
                None => h.get_index_bytes(i).expect("index in range"),
            };
            if withvalues && resp3 {
                out.push(Reply::Array(vec![Reply::Bulk(f), Reply::Bulk(v)]));
            } else {
                out.push(Reply::Bulk(f));
                if withvalues {
                    out.push(Reply::Bulk(v));
                }
            }
        };
        let mut out = Vec::new();
        if !uniq || count == 1 {
            if count > MAX_RANDOM_REPLY {
                return Err(RedisError::new(error::VALUE_OUT_OF_RANGE));
            }
            for _ in 0..count {
                pair(fastrand::usize(..size), &mut out);
            }
        } else if count as usize >= size {
            for i in 0..size {
                pair(i, &mut out);
            }
        } else {
            // Distinct random indexes, returned in hash order as Redis's listpack sampling.
            let mut idx: Vec<usize> = (0..size).collect();
            fastrand::shuffle(&mut idx);
            idx.truncate(count as usize);
            idx.sort_unstable();
            for i in idx {
                pair(i, &mut out);
            }
        }
        Ok(Reply::Array(out))
    })?
}
