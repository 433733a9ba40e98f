//! Sets: SADD and friends on one key, SPOP/SRANDMEMBER with t_set.c's count cases, SMOVE and
//! SSCAN. The multi-key algebra (SINTER, SUNION, SDIFF, their STORE forms, SINTERCARD) is in
//! `set_ops.rs`.
//!
//! Reply order: an intset answers in ascending numeric order, exactly as Redis; a hash-table
//! set answers in its own storage order, which differs from Redis's dict order (Redis's is
//! not something a client can rely on either: see the tests' `~unordered` matchers).

use crate::cmd::base::args;
use crate::cmd::base::scan::{self, cursor_hash};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{intset_limit, modify, read, read_counted, upsert};
use crate::error::{self, RedisError};
use crate::keyspace::scan_by_hash;
use crate::reply::{CmdResult, Reply};
use crate::types::set::Set;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("sadd", sadd),
    Row::new("srem", srem),
    Row::new("sismember", sismember),
    Row::new("smismember", smismember),
    Row::new("smembers", smembers),
    Row::new("scard", scard),
    Row::new("spop", spop),
    Row::new("srandmember", srandmember),
    Row::new("smove", smove),
    Row::new("sscan", sscan),
];

/// An empty set, for SADD and SMOVE to create.
fn new_set() -> Set {
    Set::new()
}

fn sadd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let limit = intset_limit(ctx);
    let (added, _) = upsert(ctx, key, new_set, |s: &mut Set| {
        Ok(a[2..].iter().filter(|m| s.add(m, limit)).count())
    })?;
    if added > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::SET, "sadd", key);
    }
    Ok(Reply::Int(added as i64))
}

fn srem(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let r = modify(ctx, key, |s: &mut Set| {
        let mut n = 0;
        for m in &a[2..] {
            if s.remove(m) {
                n += 1;
                if s.is_empty() {
                    break;
                }
            }
        }
        n
    })?;
    let (n, deleted) = r.unwrap_or((0, false));
    if n > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::SET, "srem", key);
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    Ok(Reply::Int(n))
}

fn sismember(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |s: Option<&Set>| {
        Reply::Int(s.is_some_and(|s| s.contains(&a[2])) as i64)
    })
}

fn smismember(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |s: Option<&Set>| {
        Reply::Array(
            a[2..]
                .iter()
                .map(|m| Reply::Int(s.is_some_and(|s| s.contains(m)) as i64))
                .collect(),
        )
    })
}

/// Every member, in the set's iteration order.
pub fn members(s: &Set) -> Vec<Reply> {
    s.iter().map(|m| Reply::Bulk(m.to_bytes())).collect()
}

fn smembers(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |s: Option<&Set>| {
        Reply::Set(s.map_or_else(Vec::new, members))
    })
}

fn scard(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |s: Option<&Set>| {
        Reply::Int(s.map_or(0, |s| s.len()) as i64)
    })
}

/// SPOP with a count: t_set.c's three cases. Asked for at least the whole set, it answers
/// every member (in order for an intset) and deletes the key; asked for few, it pops random
/// members; asked for most, it keeps a random remainder and answers the rest in set order.
fn spop_count(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    // getPositiveLongFromObjectOrReply: one text for a non-integer and a negative count.
    let count = match args::parse_i64(&a[2]) {
        Some(l) if l >= 0 => l as usize,
        _ => return Err(RedisError::new(error::VALUE_OUT_OF_RANGE_POSITIVE)),
    };
    let key = &a[1];
    let limit = intset_limit(ctx);
    let exists = read(ctx, key, |s: Option<&Set>| s.is_some())?;
    if !exists || count == 0 {
        return Ok(Reply::Set(vec![]));
    }
    let r = modify(ctx, key, |s: &mut Set| {
        let size = s.len();
        if count >= size {
            let out = members(s);
            *s = Set::new();
            return (out, true);
        }
        let remaining = size - count;
        if remaining * 5 > count {
            let out = s.pop_random_n(count).into_iter().map(Reply::Bulk).collect();
            return (out, false);
        }
        // Keep `remaining` random members in a new set; answer the others in set order.
        let mut kept = Set::new();
        for m in s.random_distinct(remaining) {
            kept.add(&m, limit);
        }
        let out = s
            .iter()
            .filter(|m| !kept.contains(m))
            .map(|m| Reply::Bulk(m.to_bytes()))
            .collect();
        *s = kept;
        (out, false)
    })?;
    let ((out, whole), deleted) = r.unwrap_or_default();
    // Replicas and the AOF get what was removed, not a random pop of their own: the whole
    // set as DEL, some members as one SREM each.
    if whole {
        ctx.propagate_as(vec![Bytes::from_static(b"DEL"), key.clone()]);
    } else {
        for m in &out {
            if let Reply::Bulk(m) = m {
                ctx.also_propagate(vec![Bytes::from_static(b"SREM"), key.clone(), m.clone()]);
            }
        }
        ctx.prevent_propagation();
    }
    ctx.notify(notify::SET, "spop", key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    ctx.signal_modified(key);
    Ok(Reply::Set(out))
}

fn spop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    match a.len() {
        3 => return spop_count(ctx, a),
        n if n > 3 => return Err(RedisError::new(error::SYNTAX)),
        _ => {}
    }
    let key = &a[1];
    let r = modify(ctx, key, |s: &mut Set| s.pop_random())?;
    let Some((Some(m), deleted)) = r else {
        return Ok(Reply::Nil);
    };
    ctx.propagate_as(vec![Bytes::from_static(b"SREM"), key.clone(), m.clone()]);
    ctx.notify(notify::SET, "spop", key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    ctx.signal_modified(key);
    Ok(Reply::Bulk(m))
}

/// A reply longer than this from a negative count is refused rather than built in memory
/// (Redis would stream it); HRANDFIELD has the same cap.
const MAX_RANDOM_REPLY: u64 = 1 << 24;

/// Parse SRANDMEMBER/ZRANDMEMBER's count (getRangeLongFromObjectOrReply over
/// -LONG_MAX..LONG_MAX): (count, distinct).
pub fn random_count(arg: &[u8]) -> Result<(u64, bool), RedisError> {
    let l = args::int(arg)?;
    if l == i64::MIN {
        return Err(error::out_of_range_between(-i64::MAX, i64::MAX));
    }
    Ok((l.unsigned_abs(), l >= 0))
}

fn srandmember(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        return Err(RedisError::new(error::SYNTAX));
    }
    if a.len() == 2 {
        return read_counted(ctx, &a[1], |s: Option<&Set>| {
            match s.and_then(|s| s.random_member()) {
                Some(m) => Reply::Bulk(m.to_bytes()),
                None => Reply::Nil,
            }
        });
    }
    let (count, uniq) = random_count(&a[2])?;
    read_counted(ctx, &a[1], |s: Option<&Set>| {
        let s = match s {
            Some(s) if count > 0 => s,
            _ => return Ok(Reply::Array(vec![])),
        };
        let bulk = |m: crate::types::set::Member| Reply::Bulk(m.to_bytes());
        if !uniq || count == 1 {
            if count > MAX_RANDOM_REPLY {
                return Err(RedisError::new(error::VALUE_OUT_OF_RANGE));
            }
            return Ok(Reply::Array(
                s.random_with_repetition(count as usize)
                    .into_iter()
                    .map(bulk)
                    .collect(),
            ));
        }
        if count as usize >= s.len() {
            return Ok(Reply::Array(members(s)));
        }
        Ok(Reply::Array(
            s.random_distinct(count as usize)
                .into_iter()
                .map(bulk)
                .collect(),
        ))
    })?
}

fn smove(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (src, dst, member) = (&a[1], &a[2], &a[3]);
    let src_exists = read(ctx, src, |s: Option<&Set>| s.is_some())?;
    if !src_exists {
        // Redis answers 0 before looking at the destination's type.
        return Ok(Reply::Int(0));
    }
    read(ctx, dst, |_: Option<&Set>| ())?;
    if src == dst {
        return read(ctx, src, |s: Option<&Set>| {
            Reply::Int(s.is_some_and(|s| s.contains(member)) as i64)
        });
    }
    let removed = modify(ctx, src, |s: &mut Set| s.remove(member))?;
    let Some((true, deleted)) = removed else {
        return Ok(Reply::Int(0));
    };
    ctx.notify(notify::SET, "srem", src);
    if deleted {
        ctx.notify(notify::GENERIC, "del", src);
    }
    let limit = intset_limit(ctx);
    let (added, _) = upsert(ctx, dst, new_set, |s: &mut Set| Ok(s.add(member, limit)))?;
    ctx.signal_modified(src);
    if added {
        ctx.signal_modified(dst);
        ctx.notify(notify::SET, "sadd", dst);
    }
    Ok(Reply::Int(1))
}

/// `["0", []]`: SSCAN/ZSCAN of a missing key.
pub fn empty_scan() -> Reply {
    Reply::Array(vec![Reply::bulk_static("0"), Reply::Array(vec![])])
}

fn sscan(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let cursor = scan::cursor(&a[2])?;
    // Redis looks the key up before parsing the options; a missing key answers at once.
    if !read_counted(ctx, &a[1], |s: Option<&Set>| s.is_some())? {
        return Ok(empty_scan());
    }
    let opts = scan::options(a, 3, false, 1 << 20)?;
    let (next, found) = read(ctx, &a[1], |s: Option<&Set>| {
        let Some(s) = s else {
            return (0, Vec::new());
        };
        if s.is_intset() {
            // Redis returns a compact encoding whole, with cursor 0.
            return (0, s.iter().map(|m| m.to_bytes()).collect());
        }
        let page = scan_by_hash(s.iter().map(|m| (cursor_hash(&m), m)), cursor, opts.count);
        (
            page.cursor,
            page.items.into_iter().map(|m| m.to_bytes()).collect(),
        )
    })?;
    let items = found
        .into_iter()
        .filter(|m| opts.pattern.as_ref().is_none_or(|g| g.matches(m)))
        .map(Reply::Bulk)
        .collect();
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(items),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_count_refuses_long_min_with_redis_range_text() {
        let e = random_count(b"-9223372036854775808").unwrap_err();
        assert_eq!(
            e.as_bytes(),
            b"ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
        );
        assert_eq!(random_count(b"-3").unwrap(), (3, false));
        assert_eq!(random_count(b"3").unwrap(), (3, true));
    }
}
