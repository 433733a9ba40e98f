//! Sorted sets on one key: ZADD (NX, XX, GT, LT, CH, INCR), ZINCRBY, ZREM, ZCARD, ZSCORE,
//! ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT, the pops (ZPOPMIN, ZPOPMAX, ZMPOP, and the pop
//! the blocking forms share), ZRANDMEMBER and ZSCAN, with t_zset.c's replies and errors.
//! Ranges are in `zset_range.rs`, the multi-key algebra in `zset_store.rs`.
//!
//! Scores go out as `Reply::Double`: a bulk string of `%.17g` in RESP2 (`inf`, `-inf`), a
//! RESP3 double otherwise, as Redis's addReplyDouble.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::base::scan::{self, cursor_hash};
use crate::cmd::families::sets::{empty_scan, random_count};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{self, modify, read, read_counted, upsert, zset_limits};
use crate::error::{self, RedisError};
use crate::keyspace::{scan_by_hash, Value};
use crate::reply::{CmdResult, Reply};
use crate::types::zset::{LexBound, ScoreBound, ZAddFlags, ZAddOutcome, ZSet};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("zadd", zadd),
    Row::new("zincrby", zincrby),
    Row::new("zrem", zrem),
    Row::new("zcard", zcard),
    Row::new("zcount", zcount),
    Row::new("zscore", zscore),
    Row::new("zmscore", zmscore),
    Row::new("zrank", zrank),
    Row::new("zrevrank", zrevrank),
    Row::new("zlexcount", zlexcount),
    Row::new("zpopmin", zpopmin),
    Row::new("zpopmax", zpopmax),
    Row::new("zmpop", zmpop),
    Row::new("zrandmember", zrandmember),
    Row::new("zscan", zscan),
];

/// A member as a bulk reply.
pub fn bulk(m: &[u8]) -> Reply {
    Reply::Bulk(Bytes::copy_from_slice(m))
}

/// Members with scores as Redis answers WITHSCORES: a flat array in RESP2, [member, score]
/// pairs in RESP3; without scores, just the members.
pub fn with_scores<'a>(
    items: impl Iterator<Item = (&'a [u8], f64)>,
    withscores: bool,
    resp3: bool,
) -> Vec<Reply> {
    let mut out = Vec::new();
    for (m, s) in items {
        if withscores && resp3 {
            out.push(Reply::Array(vec![bulk(m), Reply::Double(s)]));
        } else {
            out.push(bulk(m));
            if withscores {
                out.push(Reply::Double(s));
            }
        }
    }
    out
}

/// A score argument (getDoubleFromObjectOrReply): `ERR value is not a valid float`.
pub fn score_arg(arg: &[u8]) -> Result<f64, RedisError> {
    crate::num::get_double(arg).ok_or(RedisError::new(error::NOT_FLOAT))
}

/// A `min max` pair of score bounds, or `ERR min or max is not a float`.
pub fn score_range(min: &[u8], max: &[u8]) -> Result<(ScoreBound, ScoreBound), RedisError> {
    match (ScoreBound::parse(min), ScoreBound::parse(max)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(RedisError::new(error::MINMAX_NOT_FLOAT)),
    }
}

/// A `min max` pair of lex bounds, or `ERR min or max not valid string range item`.
pub fn lex_range(min: &[u8], max: &[u8]) -> Result<(LexBound, LexBound), RedisError> {
    match (LexBound::parse(min), LexBound::parse(max)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(RedisError::new(error::MINMAX_NOT_LEX)),
    }
}

/// ZADD and ZINCRBY (zaddGenericCommand): options, then score-member pairs; every score is
/// parsed before anything changes.
pub fn zadd_generic(ctx: &mut Ctx, a: &[Bytes], incr_cmd: bool) -> CmdResult {
    let key = &a[1];
    let mut flags = ZAddFlags {
        incr: incr_cmd,
        ..ZAddFlags::default()
    };
    let mut ch = false;
    let mut args = Args::new(a, 2);
    while let Some(o) = args.peek() {
        if is(o, "nx") {
            flags.nx = true;
        } else if is(o, "xx") {
            flags.xx = true;
        } else if is(o, "ch") {
            ch = true;
        } else if is(o, "incr") {
            flags.incr = true;
        } else if is(o, "gt") {
            flags.gt = true;
        } else if is(o, "lt") {
            flags.lt = true;
        } else {
            break;
        }
        args.next();
    }
    let pairs = args.rest();
    let elements = pairs.len();
    if elements % 2 == 1 || elements == 0 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let elements = elements / 2;
    if flags.nx && flags.xx {
        return Err(RedisError::new(error::ZADD_XX_NX));
    }
    if ((flags.gt || flags.lt) && flags.nx) || (flags.gt && flags.lt) {
        return Err(RedisError::new(error::ZADD_GT_LT_NX));
    }
    if flags.incr && elements > 1 {
        return Err(RedisError::new(error::ZADD_INCR_PAIRS));
    }
    let pairs: Vec<(f64, &Bytes)> = pairs
        .chunks_exact(2)
        .map(|p| Ok((score_arg(&p[0])?, &p[1])))
        .collect::<Result<_, RedisError>>()?;
    let exists = read(ctx, key, |z: Option<&ZSet>| z.is_some())?;
    let (mut added, mut updated, mut processed) = (0i64, 0i64, 0);
    let mut last = 0.0;
    let mut nan = false;
    if exists || !flags.xx {
        let limits = zset_limits(ctx);
        upsert(ctx, key, ZSet::new, |z: &mut ZSet| {
            for &(score, member) in &pairs {
                let out = z.add(member, score, flags, limits);
                match out {
                    ZAddOutcome::Added(s) => {
                        added += 1;
                        processed += 1;
                        last = s;
                    }
                    ZAddOutcome::Updated(s) => {
                        updated += 1;
                        processed += 1;
                        last = s;
                    }
                    ZAddOutcome::Unchanged(s) => {
                        processed += 1;
                        last = s;
                    }
                    ZAddOutcome::Skipped => {}
                    ZAddOutcome::Nan => {
                        nan = true;
                        break;
                    }
                }
            }
            Ok(())
        })?;
    }
    if added > 0 || updated > 0 {
        ctx.signal_modified(key);
        let event = if flags.incr { "zincr" } else { "zadd" };
        ctx.notify(notify::ZSET, event, key);
    }
    if nan {
        return Err(RedisError::new(error::SCORE_NAN));
    }
    Ok(if flags.incr {
        if processed > 0 {
            Reply::Double(last)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Int(if ch { added + updated } else { added })
    })
}

fn zadd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zadd_generic(ctx, a, false)
}

fn zincrby(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zadd_generic(ctx, a, true)
}

fn zrem(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let r = modify(ctx, key, |z: &mut ZSet| {
        let mut n = 0;
        for m in &a[2..] {
            if z.remove(m) {
                n += 1;
            }
            if z.is_empty() {
                break;
            }
        }
        n
    })?;
    let (n, deleted) = r.unwrap_or((0, false));
    if n > 0 {
        ctx.notify(notify::ZSET, "zrem", key);
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
        }
        ctx.signal_modified(key);
    }
    Ok(Reply::Int(n))
}

fn zcard(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Int(z.map_or(0, |z| z.len()) as i64)
    })
}

fn zscore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        z.and_then(|z| z.score(&a[2]))
            .map_or(Reply::Nil, Reply::Double)
    })
}

fn zmscore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Array(
            a[2..]
                .iter()
                .map(|m| z.and_then(|z| z.score(m)).map_or(Reply::Nil, Reply::Double))
                .collect(),
        )
    })
}

fn rank(ctx: &mut Ctx, a: &[Bytes], reverse: bool) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        z.and_then(|z| z.rank(&a[2], reverse))
            .map_or(Reply::Nil, |r| Reply::Int(r as i64))
    })
}

fn zrank(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    rank(ctx, a, false)
}

fn zrevrank(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    rank(ctx, a, true)
}

fn zcount(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (min, max) = score_range(&a[2], &a[3])?;
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Int(z.map_or(0, |z| z.count_in_score_range(&min, &max)) as i64)
    })
}

fn zlexcount(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (min, max) = lex_range(&a[2], &a[3])?;
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Int(z.map_or(0, |z| z.count_in_lex_range(&min, &max)) as i64)
    })
}

/// What a pop took: the key, and the members with their scores in pop order.
pub type Popped = (Bytes, Vec<(Bytes, f64)>);

/// genericZpopCommand's core: pop up to `count` members from the first of `keys` that
/// exists (WRONGTYPE if that key is not a sorted set; later keys are not looked at), raising
/// zpopmin/zpopmax (and del when emptied). None when no key exists or `count` is 0.
pub fn pop_first(
    ctx: &Ctx,
    keys: &[Bytes],
    max: bool,
    count: usize,
) -> Result<Option<Popped>, RedisError> {
    for key in keys {
        let exists = {
            let mut shard = ctx.db().lock(key);
            match shard.get(key, ctx.now) {
                None => false,
                Some(e) if matches!(e.value, Value::ZSet(_)) => true,
                Some(_) => return Err(typed::wrongtype()),
            }
        };
        if !exists {
            continue;
        }
        if count == 0 {
            return Ok(None);
        }
        let (popped, deleted) =
            modify(ctx, key, |z: &mut ZSet| z.pop(count, max))?.expect("checked above");
        ctx.notify(notify::ZSET, if max { "zpopmax" } else { "zpopmin" }, key);
        ctx.signal_modified(key);
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
        }
        return Ok(Some((key.clone(), popped)));
    }
    Ok(None)
}

/// Popped members as [member, score] pairs (ZMPOP, and ZPOPMIN with a count in RESP3).
pub fn nested_pairs(items: Vec<(Bytes, f64)>) -> Reply {
    Reply::Array(
        items
            .into_iter()
            .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]))
            .collect(),
    )
}

fn zpop(ctx: &mut Ctx, a: &[Bytes], max: bool) -> CmdResult {
    if a.len() > 3 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let count = match a.get(2) {
        None => None,
        Some(c) => match args::parse_i64(c) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return Err(RedisError::new(error::VALUE_OUT_OF_RANGE_POSITIVE)),
        },
    };
    let nested = ctx.client.resp > 2 && count.is_some();
    let Some((_, items)) = pop_first(ctx, &a[1..2], max, count.unwrap_or(1))? else {
        return Ok(Reply::Array(vec![]));
    };
    if nested {
        return Ok(nested_pairs(items));
    }
    let mut out = Vec::with_capacity(items.len() * 2);
    for (m, s) in items {
        out.push(Reply::Bulk(m));
        out.push(Reply::Double(s));
    }
    Ok(Reply::Array(out))
}

fn zpopmin(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zpop(ctx, a, false)
}

fn zpopmax(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zpop(ctx, a, true)
}

/// ZMPOP's and BZMPOP's `numkeys key... MIN|MAX [COUNT n]` from `a[at..]`:
/// (keys, max, count).
pub fn mpop_args(a: &[Bytes], at: usize) -> Result<(&[Bytes], bool, usize), RedisError> {
    let side = |w: &[u8]| {
        if is(w, "min") {
            Ok(false)
        } else if is(w, "max") {
            Ok(true)
        } else {
            Err(RedisError::new(error::SYNTAX))
        }
    };
    let (keys, max, count) = args::mpop(a, at, side)?;
    Ok((keys, max, count as usize))
}

/// ZMPOP's reply: `[key, [[member, score]...]]`.
pub fn mpop_reply(key: Bytes, items: Vec<(Bytes, f64)>) -> Reply {
    Reply::Array(vec![Reply::Bulk(key), nested_pairs(items)])
}

fn zmpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (keys, max, count) = mpop_args(a, 1)?;
    Ok(match pop_first(ctx, keys, max, count)? {
        Some((key, items)) => {
            ctx.propagate_as(pop_effect(&key, max, Some(items.len())));
            mpop_reply(key, items)
        }
        None => Reply::NilArray,
    })
}

/// What a pop by ZMPOP, BZMPOP, BZPOPMIN or BZPOPMAX propagates as (genericZpopCommand,
/// blockingGenericZpopCommand and serveClientBlockedOnSortedSet rewrite them): ZPOPMIN or
/// ZPOPMAX of the key it popped from, with the number of members popped for the M forms, so
/// that replicas and the AOF never block or choose a key themselves.
pub fn pop_effect(key: &Bytes, max: bool, popped: Option<usize>) -> Vec<Bytes> {
    let name: &'static [u8] = if max { b"ZPOPMAX" } else { b"ZPOPMIN" };
    let mut v = vec![Bytes::from_static(name), key.clone()];
    if let Some(n) = popped {
        v.push(Bytes::from(n.to_string()));
    }
    v
}

/// A reply longer than this from a negative count is refused rather than built in memory
/// (Redis would stream it); SRANDMEMBER and HRANDFIELD have the same cap.
const MAX_RANDOM_REPLY: u64 = 1 << 24;

fn zrandmember(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() == 2 {
        return read_counted(ctx, &a[1], |z: Option<&ZSet>| {
            z.and_then(|z| z.random_member())
                .map_or(Reply::Nil, |(m, _)| bulk(m))
        });
    }
    let (count, uniq) = random_count(&a[2])?;
    if a.len() > 4 || (a.len() == 4 && !is(&a[3], "withscores")) {
        return Err(RedisError::new(error::SYNTAX));
    }
    let withscores = a.len() == 4;
    if withscores && count > (i64::MAX / 2) as u64 {
        return Err(RedisError::new(error::VALUE_OUT_OF_RANGE));
    }
    let resp3 = ctx.client.resp > 2;
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        let z = match z {
            Some(z) if count > 0 => z,
            _ => return Ok(Reply::Array(vec![])),
        };
        if !uniq || count == 1 {
            if count > MAX_RANDOM_REPLY {
                return Err(RedisError::new(error::VALUE_OUT_OF_RANGE));
            }
            let picks = z.random_with_repetition(count as usize);
            return Ok(Reply::Array(with_scores(
                picks.into_iter(),
                withscores,
                resp3,
            )));
        }
        if count as usize >= z.len() {
            // zuiNext walks a sorted set from its tail: highest score first.
            let all = z.range(0..z.len(), true);
            return Ok(Reply::Array(with_scores(all, withscores, resp3)));
        }
        let mut picks = z.random_distinct(count as usize);
        if z.is_listpack() && (count as usize) * 3 <= z.len() {
            // lpRandomPairsUnique answers in listpack (rank) order.
            picks.sort_by(|x, y| x.1.total_cmp(&y.1).then_with(|| x.0.cmp(y.0)));
        }
        Ok(Reply::Array(with_scores(
            picks.into_iter(),
            withscores,
            resp3,
        )))
    })?
}

fn zscan(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let cursor = scan::cursor(&a[2])?;
    if !read_counted(ctx, &a[1], |z: Option<&ZSet>| z.is_some())? {
        return Ok(empty_scan());
    }
    let opts = scan::options(a, 3, false, 1 << 20)?;
    let (next, found) = read(ctx, &a[1], |z: Option<&ZSet>| {
        let Some(z) = z else {
            return (0, Vec::new());
        };
        let copy = |(m, s): (&[u8], f64)| (Bytes::copy_from_slice(m), s);
        if z.is_listpack() {
            return (0, z.iter().map(copy).collect::<Vec<_>>());
        }
        let page = scan_by_hash(
            z.iter().map(|(m, s)| (cursor_hash(m), (m, s))),
            cursor,
            opts.count,
        );
        (page.cursor, page.items.into_iter().map(copy).collect())
    })?;
    let mut items = Vec::with_capacity(found.len() * 2);
    for (m, s) in found {
        if opts.pattern.as_ref().is_some_and(|g| !g.matches(&m)) {
            continue;
        }
        items.push(Reply::Bulk(m));
        items.push(Reply::bulk(crate::num::format_double(s)));
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(items),
    ]))
}
