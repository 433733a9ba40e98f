//! Set algebra: SINTER, SUNION, SDIFF, their STORE forms and SINTERCARD, as t_set.c's
//! sinterGenericCommand and sunionDiffGenericCommand compute them. Results are built as a new
//! set (an intset while every member is an integer, as Redis's createIntsetObject), so an
//! all-integer result answers in ascending order exactly as Redis does.

use crate::cmd::base::args::{self, Args};
use crate::cmd::families::sets::members;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{self, intset_limit, read_many, wrongtype};
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::reply::{CmdResult, Reply};
use crate::types::set::Set;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("sinter", sinter),
    Row::new("sinterstore", sinterstore),
    Row::new("sintercard", sintercard),
    Row::new("sunion", sunion),
    Row::new("sunionstore", sunionstore),
    Row::new("sdiff", sdiff),
    Row::new("sdiffstore", sdiffstore),
];

/// The sets at `keys` (None for missing keys); WRONGTYPE if any key holds another type.
fn with_sets<R>(
    ctx: &Ctx,
    keys: &[Bytes],
    f: impl FnOnce(&[Option<&Set>]) -> R,
) -> Result<R, RedisError> {
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    // Which keys were looked up (Redis stops at the first of another type) and found.
    let mut looked: Vec<bool> = Vec::with_capacity(keys.len());
    let out = read_many(ctx, &refs, |vals| {
        let mut sets = Vec::with_capacity(vals.len());
        for v in vals {
            looked.push(v.is_some());
            match v {
                None => sets.push(None),
                Some(Value::Set(s)) => sets.push(Some(s)),
                Some(_) => return Err(wrongtype()),
            }
        }
        Ok(f(&sets))
    });
    // Each lookup counts as a hit or a miss (with its keymiss event), as lookupKeyRead does.
    for (k, hit) in keys.iter().zip(looked) {
        crate::cmd::families::strings::note_read(ctx, k, hit);
    }
    out
}

/// What an intersection is asked for.
enum InterOut {
    /// SINTER and SINTERSTORE: the members.
    Members,
    /// SINTERCARD: the count, stopping at `limit` (0: no limit).
    Card(usize),
}

/// The members of the intersection of `sets`, walking the smallest as Redis does (so an
/// intset answers in ascending order), or just their count.
fn intersect(sets: &[Option<&Set>], out: &InterOut) -> (Vec<Bytes>, usize) {
    if sets.iter().any(|s| s.is_none()) {
        return (Vec::new(), 0);
    }
    let mut sets: Vec<&Set> = sets.iter().map(|s| s.expect("checked")).collect();
    sets.sort_by_key(|s| s.len());
    let mut found = Vec::new();
    let mut n = 0;
    for m in sets[0].iter() {
        if sets[1..]
            .iter()
            .all(|s| std::ptr::eq(*s, sets[0]) || s.contains(&m))
        {
            n += 1;
            match out {
                InterOut::Card(limit) => {
                    if *limit > 0 && n >= *limit {
                        break;
                    }
                }
                _ => found.push(m.to_bytes()),
            }
        }
    }
    (found, n)
}

/// Replace `dst` with `result` (or delete it when empty) and raise `event`, as the STORE
/// forms do; the reply is the result's size.
fn store_set(ctx: &Ctx, dst: &[u8], result: Set, event: &str) -> Reply {
    let n = result.len();
    if n > 0 {
        typed::store(ctx, dst, Value::Set(result));
        ctx.signal_modified(dst);
        ctx.notify(notify::SET, event, dst);
    } else if typed::delete(ctx, dst) {
        ctx.signal_modified(dst);
        ctx.notify(notify::GENERIC, "del", dst);
    }
    Reply::Int(n as i64)
}

fn sinter(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (found, _) = with_sets(ctx, &a[1..], |sets| intersect(sets, &InterOut::Members))?;
    Ok(Reply::Set(found.into_iter().map(Reply::Bulk).collect()))
}

fn sinterstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let limit = intset_limit(ctx);
    let (found, _) = with_sets(ctx, &a[2..], |sets| intersect(sets, &InterOut::Members))?;
    let mut result = Set::new();
    for m in &found {
        result.add(m, limit);
    }
    Ok(store_set(ctx, &a[1], result, "sinterstore"))
}

/// Parse `numkeys key... [LIMIT n]` (SINTERCARD's rules and texts): (keys, limit).
fn parse_intercard(a: &[Bytes]) -> Result<(&[Bytes], usize), RedisError> {
    let numkeys = match args::parse_i64(&a[1]) {
        Some(n) if n >= 1 => n as usize,
        _ => return Err(RedisError::new(error::NUMKEYS_NOT_POSITIVE)),
    };
    if numkeys > a.len() - 2 {
        return Err(RedisError::new(error::NUMKEYS_TOO_MANY));
    }
    let mut limit = 0usize;
    let mut args = Args::new(a, 2 + numkeys);
    while let Some(opt) = args.next() {
        let Some(v) = args.value_of(opt, "limit") else {
            return Err(RedisError::new(error::SYNTAX));
        };
        limit = match args::parse_i64(v) {
            Some(n) if n >= 0 => n as usize,
            _ => return Err(RedisError::new(error::LIMIT_NEGATIVE)),
        };
    }
    Ok((&a[2..2 + numkeys], limit))
}

fn sintercard(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (keys, limit) = parse_intercard(a)?;
    let (_, n) = with_sets(ctx, keys, |sets| intersect(sets, &InterOut::Card(limit)))?;
    Ok(Reply::Int(n as i64))
}

/// SUNION or SDIFF of `sets` as a new set (sunionDiffGenericCommand).
fn union_or_diff(sets: &[Option<&Set>], diff: bool, limit: usize) -> Set {
    let mut out = Set::new();
    if !diff {
        for s in sets.iter().flatten() {
            for m in s.iter() {
                out.add(&m, limit);
            }
        }
        return out;
    }
    let Some(first) = sets[0] else {
        return out;
    };
    // The first key named again: the result is empty.
    if sets[1..].iter().flatten().any(|s| std::ptr::eq(*s, first)) {
        return out;
    }
    // Redis picks one of two algorithms by their estimated work: the first looks each
    // member of the first set up in the others, largest first (each lookup a step of a
    // rehashing table, which MEMORY USAGE sees); the second adds the first set and removes
    // the others' members, looking nothing up in them. The result is the same.
    let present: Vec<&Set> = sets.iter().flatten().copied().collect();
    let algo_one = first.len() * present.len() / 2;
    let algo_two: usize = present.iter().map(|s| s.len()).sum();
    if algo_one <= algo_two {
        let mut others: Vec<&Set> = present[1..].to_vec();
        others.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for m in first.iter() {
            if !others.iter().any(|s| s.contains(&m)) {
                out.add(&m, limit);
            }
        }
    } else {
        for m in first.iter() {
            if !present[1..].iter().any(|s| s.has(&m)) {
                out.add(&m, limit);
            }
        }
    }
    out
}

fn sunion_diff(ctx: &mut Ctx, a: &[Bytes], store: bool, diff: bool) -> CmdResult {
    let limit = intset_limit(ctx);
    let keys = if store { &a[2..] } else { &a[1..] };
    let result = with_sets(ctx, keys, |sets| union_or_diff(sets, diff, limit))?;
    if !store {
        return Ok(Reply::Set(members(&result)));
    }
    let event = if diff { "sdiffstore" } else { "sunionstore" };
    Ok(store_set(ctx, &a[1], result, event))
}

fn sunion(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sunion_diff(ctx, a, false, false)
}

fn sunionstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sunion_diff(ctx, a, true, false)
}

fn sdiff(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sunion_diff(ctx, a, false, true)
}

fn sdiffstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sunion_diff(ctx, a, true, true)
}
