//! Sorted-set ranges: ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGESTORE, the
//! older ZRANGEBYSCORE/ZREVRANGEBYSCORE/ZRANGEBYLEX/ZREVRANGEBYLEX/ZREVRANGE, and
//! ZREMRANGEBYRANK/BYSCORE/BYLEX. Every range becomes a range of ranks in O(log n) (see
//! `types::zset`), so LIMIT offsets and counts cost nothing beyond the members returned.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::families::zsets::{lex_range, score_range, with_scores};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{self, modify, read_counted, zset_limits};
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::reply::{CmdResult, Reply};
use crate::types::zset::ZSet;
use bytes::Bytes;
use std::ops::Range;

pub const COMMANDS: &[Row] = &[
    Row::new("zrange", zrange),
    Row::new("zrangestore", zrangestore),
    Row::new("zrangebyscore", zrangebyscore),
    Row::new("zrevrangebyscore", zrevrangebyscore),
    Row::new("zrangebylex", zrangebylex),
    Row::new("zrevrangebylex", zrevrangebylex),
    Row::new("zrevrange", zrevrange),
    Row::new("zremrangebyrank", zremrangebyrank),
    Row::new("zremrangebyscore", zremrangebyscore),
    Row::new("zremrangebylex", zremrangebylex),
];

/// How the range arguments are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// ZRANGE/ZRANGESTORE: decided by BYSCORE/BYLEX, ranks by default.
    Auto,
    Rank,
    Score,
    Lex,
}

/// ZRANGE's direction: `Auto` lets REV decide.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Auto,
    Forward,
    Reverse,
}

/// Redis's rank sanitizing (genericZrangebyrankCommand): negative indexes count from the
/// end; the ascending ranks `start..=end` as a half-open range, empty when out of bounds.
pub fn rank_range(start: i64, end: i64, len: usize) -> Range<usize> {
    let llen = len as i64;
    let mut start = if start < 0 { llen + start } else { start };
    let mut end = if end < 0 { llen + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= llen {
        return 0..0;
    }
    if end >= llen {
        end = llen - 1;
    }
    start as usize..end as usize + 1
}

/// Apply LIMIT to the ascending ranks `r` walked forward or in reverse, as Redis's range
/// loops do: a negative offset finds nothing, a negative count means all.
fn apply_limit(
    r: Range<usize>,
    offset: i64,
    limit: i64,
    reverse: bool,
    len: usize,
) -> Range<usize> {
    if offset < 0 || (offset > 0 && offset as u64 >= len as u64) {
        return 0..0;
    }
    let offset = offset as usize;
    if offset >= r.len() {
        return 0..0;
    }
    if reverse {
        let hi = r.end - offset;
        let lo = if limit < 0 {
            r.start
        } else {
            hi.saturating_sub(limit as usize).max(r.start)
        };
        lo..hi
    } else {
        let lo = r.start + offset;
        let hi = if limit < 0 {
            r.end
        } else {
            lo.saturating_add(limit as usize).min(r.end)
        };
        lo..hi
    }
}

/// zrangeGenericCommand: `a[at]` is the source key, then min, max and the options; with
/// `store` the result goes to that key.
fn zrange_generic(
    ctx: &mut Ctx,
    a: &[Bytes],
    at: usize,
    store: Option<&Bytes>,
    mut kind: Kind,
    mut dir: Dir,
) -> CmdResult {
    let key = &a[at];
    let (mut minidx, mut maxidx) = (at + 1, at + 2);
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut args = Args::new(a, at + 3);
    while let Some(opt) = args.next() {
        if store.is_none() && is(opt, "withscores") {
            withscores = true;
        } else if let Some(v) = args.values_of(opt, "limit", 2) {
            offset = args::int(&v[0])?;
            limit = args::int(&v[1])?;
        } else if dir == Dir::Auto && is(opt, "rev") {
            dir = Dir::Reverse;
        } else if kind == Kind::Auto && is(opt, "bylex") {
            kind = Kind::Lex;
        } else if kind == Kind::Auto && is(opt, "byscore") {
            kind = Kind::Score;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    let reverse = dir == Dir::Reverse;
    if kind == Kind::Auto {
        kind = Kind::Rank;
    }
    if limit != -1 && kind == Kind::Rank {
        return Err(RedisError::new(error::ZRANGE_LIMIT_BY_RANK));
    }
    if withscores && kind == Kind::Lex {
        return Err(RedisError::new(error::ZRANGE_WITHSCORES_BYLEX));
    }
    if reverse && kind != Kind::Rank {
        std::mem::swap(&mut minidx, &mut maxidx);
    }
    enum Spec {
        Rank(i64, i64),
        Score(
            crate::types::zset::ScoreBound,
            crate::types::zset::ScoreBound,
        ),
        Lex(crate::types::zset::LexBound, crate::types::zset::LexBound),
    }
    let spec = match kind {
        Kind::Rank | Kind::Auto => Spec::Rank(args::int(&a[minidx])?, args::int(&a[maxidx])?),
        Kind::Score => {
            let (min, max) = score_range(&a[minidx], &a[maxidx])?;
            Spec::Score(min, max)
        }
        Kind::Lex => {
            let (min, max) = lex_range(&a[minidx], &a[maxidx])?;
            Spec::Lex(min, max)
        }
    };
    let resp3 = ctx.client.resp > 2;
    let limits = zset_limits(ctx);
    // The result: the reply, or the sorted set to store.
    let result = read_counted(ctx, key, |z: Option<&ZSet>| {
        let z = z?;
        let (ranks, by_rank) = match &spec {
            Spec::Rank(s, e) => {
                let r = rank_range(*s, *e, z.len());
                let len = z.len();
                let r = if reverse {
                    len - r.end..len - r.start
                } else {
                    r
                };
                (r, true)
            }
            Spec::Score(min, max) => (
                apply_limit(z.score_ranks(min, max), offset, limit, reverse, z.len()),
                false,
            ),
            Spec::Lex(min, max) => (
                apply_limit(z.lex_ranks(min, max), offset, limit, reverse, z.len()),
                false,
            ),
        };
        let items = z.range(ranks.clone(), reverse);
        Some(match store {
            None => Err(Reply::Array(with_scores(items, withscores, resp3))),
            Some(_) => {
                let mut out = if by_rank && ranks.len() > limits.max_listpack_entries {
                    ZSet::new_skiplist()
                } else {
                    ZSet::new()
                };
                for (m, s) in items {
                    out.insert_or_update(m, s, limits);
                }
                Ok(out)
            }
        })
    })?;
    match (store, result) {
        (None, None) => Ok(Reply::Array(vec![])),
        (None, Some(Err(reply))) => Ok(reply),
        (Some(dst), r) => {
            let out = match r {
                Some(Ok(z)) => z,
                _ => ZSet::new(),
            };
            Ok(store_zset(ctx, dst, out, "zrangestore"))
        }
        (None, Some(Ok(_))) => unreachable!("only a store builds a set"),
    }
}

/// Replace `dst` with `result` (or delete it when empty) and raise `event`, as the STORE
/// forms do; the reply is the result's size.
pub fn store_zset(ctx: &Ctx, dst: &[u8], result: ZSet, event: &str) -> Reply {
    let n = result.len();
    if n > 0 {
        typed::store(ctx, dst, Value::ZSet(result));
        ctx.signal_modified(dst);
        ctx.notify(notify::ZSET, event, dst);
    } else if typed::delete(ctx, dst) {
        ctx.signal_modified(dst);
        ctx.notify(notify::GENERIC, "del", dst);
    }
    Reply::Int(n as i64)
}

fn zrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Auto, Dir::Auto)
}

fn zrangestore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 2, Some(&a[1]), Kind::Auto, Dir::Auto)
}

fn zrangebyscore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Score, Dir::Forward)
}

fn zrevrangebyscore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Score, Dir::Reverse)
}

fn zrangebylex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Lex, Dir::Forward)
}

fn zrevrangebylex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Lex, Dir::Reverse)
}

fn zrevrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zrange_generic(ctx, a, 1, None, Kind::Rank, Dir::Reverse)
}

/// zremrangeGenericCommand: parse the range, then delete it; `event` names it.
fn zremrange(ctx: &mut Ctx, a: &[Bytes], kind: Kind) -> CmdResult {
    let key = &a[1];
    enum Spec {
        Rank(i64, i64),
        Score(
            crate::types::zset::ScoreBound,
            crate::types::zset::ScoreBound,
        ),
        Lex(crate::types::zset::LexBound, crate::types::zset::LexBound),
    }
    let (spec, event) = match kind {
        Kind::Score => {
            let (min, max) = score_range(&a[2], &a[3])?;
            (Spec::Score(min, max), "zremrangebyscore")
        }
        Kind::Lex => {
            let (min, max) = lex_range(&a[2], &a[3])?;
            (Spec::Lex(min, max), "zremrangebylex")
        }
        _ => (
            Spec::Rank(args::int(&a[2])?, args::int(&a[3])?),
            "zremrangebyrank",
        ),
    };
    let r = modify(ctx, key, |z: &mut ZSet| match &spec {
        Spec::Rank(s, e) => {
            let r = rank_range(*s, *e, z.len());
            z.remove_range_by_rank(r)
        }
        Spec::Score(min, max) => z.remove_range_by_score(min, max),
        Spec::Lex(min, max) => z.remove_range_by_lex(min, max),
    })?;
    let (n, deleted) = r.unwrap_or((0, false));
    if n > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::ZSET, event, key);
        if deleted {
            ctx.notify(notify::GENERIC, "del", key);
        }
    }
    Ok(Reply::Int(n as i64))
}

fn zremrangebyrank(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zremrange(ctx, a, Kind::Rank)
}

fn zremrangebyscore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zremrange(ctx, a, Kind::Score)
}

fn zremrangebylex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    zremrange(ctx, a, Kind::Lex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_range_sanitizes_like_redis() {
        assert_eq!(rank_range(0, -1, 5), 0..5);
        assert_eq!(rank_range(-2, -1, 5), 3..5);
        assert_eq!(rank_range(3, 1, 5), 0..0);
        assert_eq!(rank_range(5, 9, 5), 0..0);
        assert_eq!(rank_range(-100, 100, 5), 0..5);
        assert_eq!(rank_range(0, -6, 5), 0..0);
    }

    #[test]
    fn limit_walks_from_either_end() {
        assert_eq!(apply_limit(2..8, 1, 2, false, 10), 3..5);
        assert_eq!(apply_limit(2..8, 1, 2, true, 10), 5..7);
        assert_eq!(apply_limit(2..8, 0, -1, true, 10), 2..8);
        assert_eq!(apply_limit(2..8, -1, 5, false, 10), 0..0);
        assert_eq!(apply_limit(2..8, 6, 5, false, 10), 0..0);
        assert_eq!(apply_limit(2..8, 5, 0, false, 10), 7..7);
    }
}
