//! Database-wide commands: DBSIZE, FLUSHDB, FLUSHALL, SWAPDB. Flushes and swaps are what touch
//! every watched key of a database at once ([`crate::cmd::runtime::watch`]), and a swap can make
//! keys that blocked clients wait on appear ([`crate::cmd::runtime::blocking`]).

use crate::cmd::base::args::{self, is};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::MultiGuard;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("dbsize", dbsize),
    Row::new("flushdb", flushdb),
    Row::new("flushall", flushall),
    Row::new("swapdb", swapdb),
];

/// Counts expired keys not yet reclaimed, as Redis's DBSIZE does.
fn dbsize(ctx: &mut Ctx, _a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(ctx.db().len() as i64))
}

/// FLUSHDB/FLUSHALL's optional ASYNC or SYNC (both free memory right away here).
fn check_flush_args(a: &[Bytes]) -> Result<(), RedisError> {
    match a.len() {
        1 => Ok(()),
        2 if is(&a[1], "sync") || is(&a[1], "async") => Ok(()),
        _ => Err(RedisError::new(error::SYNTAX)),
    }
}

fn flushdb(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    check_flush_args(a)?;
    crate::cmd::runtime::watch::flushed(ctx.state, Some(ctx.client.db), ctx.now);
    crate::cmd::runtime::blocking::flushing(ctx.state, Some(ctx.client.db));
    if crate::cmd::runtime::lock_history::on(ctx.state) {
        crate::cmd::runtime::lock_history::flushed(ctx.state, Some(ctx.client.db), ctx.client);
    }
    crate::cmd::runtime::cluster::feed::flushed(ctx.state, Some(ctx.client.db));
    crate::cmd::runtime::tracking::flushed(ctx.state, ctx.client.id);
    let mut removed = 0;
    {
        let mut g = ctx.db().lock_all();
        for s in g.shards() {
            removed += s.map.len() as u64;
            s.clear();
        }
    }
    ctx.state.add_dirty(removed);
    // Propagated even when there was nothing to remove.
    ctx.force_propagation();
    Ok(Reply::ok())
}

/// Every database is locked (in index order) before any is cleared, so FLUSHALL is atomic.
fn flushall(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    check_flush_args(a)?;
    crate::cmd::runtime::watch::flushed(ctx.state, None, ctx.now);
    crate::cmd::runtime::blocking::flushing(ctx.state, None);
    crate::cmd::runtime::cluster::feed::flushed(ctx.state, None);
    crate::cmd::runtime::tracking::flushed(ctx.state, ctx.client.id);
    if crate::cmd::runtime::lock_history::on(ctx.state) {
        crate::cmd::runtime::lock_history::flushed(ctx.state, None, ctx.client);
    }
    let ks = &ctx.state.keyspace;
    let mut removed = 0;
    {
        let mut guards: Vec<MultiGuard> =
            (0..ks.databases()).map(|i| ks.db(i).lock_all()).collect();
        for g in &mut guards {
            for s in g.shards() {
                removed += s.map.len() as u64;
                s.clear();
            }
        }
    }
    ctx.state.add_dirty(removed);
    // A BGSAVE of the data that is gone is stopped; with save points Redis saves the empty
    // dataset at once, which starts the change count again.
    use crate::cmd::runtime::persist::{registry::JobKind, save, settings};
    save::cancel(ctx.state, JobKind::Rdb);
    if !settings::save_points(&ctx.state.config.read()).is_empty() {
        let _ = save::save(ctx.state);
    }
    ctx.force_propagation();
    Ok(Reply::ok())
}

/// SWAPDB's index arguments: Redis answers a non-integer with its own message per argument.
fn swapdb_index(arg: &[u8], msg: &'static str) -> Result<i64, RedisError> {
    args::parse_i64(arg)
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or(RedisError::new(msg))
}

/// Every database shares one hasher, so keys sit in the same shard in each: swapping the
/// databases is swapping their shards pairwise, with both locked.
fn swapdb(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if ctx.state.cluster.is_some() {
        return Err(RedisError::new(error::SWAPDB_IN_CLUSTER));
    }
    let i1 = swapdb_index(&a[1], error::INVALID_FIRST_DB)?;
    let i2 = swapdb_index(&a[2], error::INVALID_SECOND_DB)?;
    let ks = &ctx.state.keyspace;
    let n = ks.databases() as i64;
    if !(0..n).contains(&i1) || !(0..n).contains(&i2) {
        return Err(RedisError::new(error::DB_INDEX_OUT_OF_RANGE));
    }
    if i1 == i2 {
        return Ok(Reply::ok());
    }
    let (lo, hi) = (i1.min(i2) as usize, i1.max(i2) as usize);
    crate::cmd::runtime::watch::swapped(ctx.state, i1 as usize, i2 as usize, ctx.now);
    {
        let mut g_lo = ks.db(lo).lock_all();
        let mut g_hi = ks.db(hi).lock_all();
        for (x, y) in g_lo.shards().zip(g_hi.shards()) {
            x.swap_contents(y);
        }
    }
    // Clients blocked in either database may find their keys there now.
    crate::cmd::runtime::blocking::swapped(ctx.state, lo, hi);
    ctx.state.add_dirty(1);
    Ok(Reply::ok())
}
