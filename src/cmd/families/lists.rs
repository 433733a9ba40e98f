//! Lists: pushes, pops, ranges, indexes and edits on `Value::List` (Redis 7.0's t_list.c).
//! LPOS, LMOVE, LMPOP and the blocking pops are in [`crate::cmd::families::list_moves`].
//!
//! Every list is a [`List`] (Redis 7.0's quicklist of listpack nodes) built with the current
//! `list-max-listpack-size` as its fill. A list left empty is deleted, as Redis does. Lookups
//! follow Redis's read/write distinction: LLEN, LRANGE, LINDEX and LPOS count keyspace hits
//! and misses (and raise `keymiss`), writes do not.

use crate::cmd::base::args::{self, is};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, Value};
use crate::reply::{CmdResult, Reply};
use crate::types::list::List;
use bytes::Bytes;

use crate::cmd::runtime::typed;

pub const COMMANDS: &[Row] = &[
    Row::new("lpush", lpush),
    Row::new("rpush", rpush),
    Row::new("lpushx", lpushx),
    Row::new("rpushx", rpushx),
    Row::new("lpop", lpop),
    Row::new("rpop", rpop),
    Row::new("llen", llen),
    Row::new("lrange", lrange),
    Row::new("lindex", lindex),
    Row::new("lset", lset),
    Row::new("linsert", linsert),
    Row::new("lrem", lrem),
    Row::new("ltrim", ltrim),
];

/// Which end of a list (Redis's LIST_HEAD and LIST_TAIL; LEFT and RIGHT in arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Left,
    Right,
}

impl End {
    /// LEFT or RIGHT in any case, else a syntax error.
    pub fn parse(arg: &[u8]) -> Result<End, RedisError> {
        if is(arg, "left") {
            Ok(End::Left)
        } else if is(arg, "right") {
            Ok(End::Right)
        } else {
            Err(RedisError::new(error::SYNTAX))
        }
    }

    fn pop_event(self) -> &'static str {
        match self {
            End::Left => "lpop",
            End::Right => "rpop",
        }
    }

    pub(super) fn push_event(self) -> &'static str {
        match self {
            End::Left => "lpush",
            End::Right => "rpush",
        }
    }
}

pub(super) fn wrongtype() -> RedisError {
    RedisError::new(error::WRONGTYPE)
}

/// `list-max-listpack-size`, the fill every push passes to the list.
pub(super) fn fill(ctx: &Ctx) -> i32 {
    ctx.state.config.read().list_max_listpack_size
}

pub(super) fn push_to(l: &mut List, v: &[u8], end: End, fill: i32) {
    match end {
        End::Left => l.push_front(v, fill),
        End::Right => l.push_back(v, fill),
    }
}

/// The list at `key` for reading (Redis's lookupKeyRead then checkType): `f` runs on it,
/// None if the key is missing, WRONGTYPE for other types.
pub(super) fn read<T>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(&List) -> T,
) -> Result<Option<T>, RedisError> {
    let found = typed::read(ctx, key, |l: Option<&List>| l.map(f));
    note_read(ctx, key, !matches!(found, Ok(None)));
    found
}

/// The list at `key` for writing (lookupKeyWrite then checkType): `f` runs on it, None if
/// the key is missing, WRONGTYPE for other types. A list `f` leaves empty is deleted; the
/// flag says so.
pub(super) fn modify<T>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(&mut List) -> T,
) -> Result<Option<(T, bool)>, RedisError> {
    typed::modify(ctx, key, f)
}

/// Redis's listElementsRemoved: the pop event, `del` if the list went, and the signal.
pub(super) fn elements_removed(ctx: &Ctx, key: &[u8], end: End, deleted: bool) {
    ctx.notify(notify::LIST, end.pop_event(), key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    ctx.signal_modified(key);
}

/// Pop up to `count` elements from `end` of the list at `key` (which exists, is a list and
/// is not empty), in the order popped. Returns them and whether the list went.
pub(super) fn pop_n(ctx: &Ctx, key: &[u8], end: End, count: usize) -> Option<(Vec<Bytes>, bool)> {
    modify(ctx, key, |l| match end {
        End::Left => l.pop_front_n(count),
        End::Right => l.pop_back_n(count),
    })
    .ok()
    .flatten()
}

fn bulks(v: Vec<Bytes>) -> Reply {
    Reply::Array(v.into_iter().map(Reply::Bulk).collect())
}

/// LPUSH, RPUSH, LPUSHX, RPUSHX (Redis's pushGenericCommand); `xx`: only onto an existing
/// list.
fn push(ctx: &Ctx, a: &[Bytes], end: End, xx: bool) -> CmdResult {
    let key = &a[1];
    let fill = fill(ctx);
    let len = {
        let mut shard = ctx.db().lock(key);
        match shard.get_mut(key, ctx.now) {
            None if xx => return Ok(Reply::Int(0)),
            None => {
                let mut l = List::new();
                for v in &a[2..] {
                    push_to(&mut l, v, end, fill);
                }
                let n = l.len();
                shard.insert(key, Entry::new(Value::List(l)));
                n
            }
            Some(Entry {
                value: Value::List(l),
                ..
            }) => {
                for v in &a[2..] {
                    push_to(l, v, end, fill);
                }
                l.len()
            }
            Some(_) => return Err(wrongtype()),
        }
    };
    ctx.signal_modified(key);
    ctx.notify(notify::LIST, end.push_event(), key);
    Ok(Reply::Int(len as i64))
}

fn lpush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    push(ctx, a, End::Left, false)
}

fn rpush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    push(ctx, a, End::Right, false)
}

fn lpushx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    push(ctx, a, End::Left, true)
}

fn rpushx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    push(ctx, a, End::Right, true)
}

/// LPOP and RPOP, with an optional count (Redis's popGenericCommand).
fn pop(ctx: &Ctx, a: &[Bytes], end: End) -> CmdResult {
    if a.len() > 3 {
        return Err(error::wrong_arity(match end {
            End::Left => "lpop",
            End::Right => "rpop",
        }));
    }
    let count = match a.get(2) {
        Some(c) => Some(args::non_negative(c, None)?),
        None => None,
    };
    let key = &a[1];
    let popped = modify(ctx, key, |l| match (count, end) {
        (None, End::Left) => l.pop_front().into_iter().collect(),
        (None, End::Right) => l.pop_back().into_iter().collect(),
        (Some(n), End::Left) => l.pop_front_n(n as usize),
        (Some(n), End::Right) => l.pop_back_n(n as usize),
    })?;
    let Some((mut items, deleted)) = popped else {
        return Ok(if count.is_some() {
            Reply::NilArray
        } else {
            Reply::Nil
        });
    };
    if count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    elements_removed(ctx, key, end, deleted);
    Ok(match count {
        None => Reply::Bulk(items.pop().expect("a list is never empty")),
        Some(_) => bulks(items),
    })
}

fn lpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    pop(ctx, a, End::Left)
}

fn rpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    pop(ctx, a, End::Right)
}

fn llen(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(
        read(ctx, &a[1], |l| l.len())?.unwrap_or(0) as i64
    ))
}

fn lrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let start = args::int(&a[2])?;
    let stop = args::int(&a[3])?;
    let items = read(ctx, &a[1], |l| {
        l.range(start, stop)
            .map(|e| Reply::Bulk(e.to_bytes()))
            .collect()
    })?;
    Ok(Reply::Array(items.unwrap_or_default()))
}

fn lindex(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    // Redis looks the key up before it reads the index.
    let r = read(ctx, &a[1], |l| {
        let i = args::int(&a[2])?;
        Ok(l.get_bytes(i).map_or(Reply::Nil, Reply::Bulk))
    })?;
    r.unwrap_or(Ok(Reply::Nil))
}

fn lset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let r = modify(ctx, key, |l| {
        let i = args::int(&a[2])?;
        if l.set(i, &a[3]) {
            Ok(())
        } else {
            Err(RedisError::new(error::INDEX_OUT_OF_RANGE))
        }
    })?;
    match r {
        None => Err(RedisError::new(error::NO_SUCH_KEY)),
        Some((Err(e), _)) => Err(e),
        Some((Ok(()), _)) => {
            ctx.signal_modified(key);
            ctx.notify(notify::LIST, "lset", key);
            Ok(Reply::ok())
        }
    }
}

fn linsert(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let before = if is(&a[2], "after") {
        false
    } else if is(&a[2], "before") {
        true
    } else {
        return Err(RedisError::new(error::SYNTAX));
    };
    let key = &a[1];
    let fill = fill(ctx);
    match modify(ctx, key, |l| l.insert(before, &a[3], &a[4], fill))? {
        None => Ok(Reply::Int(0)),
        Some((None, _)) => Ok(Reply::Int(-1)),
        Some((Some(len), _)) => {
            ctx.signal_modified(key);
            ctx.notify(notify::LIST, "linsert", key);
            Ok(Reply::Int(len as i64))
        }
    }
}

fn lrem(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let count = args::int(&a[2])?;
    let key = &a[1];
    let Some((removed, deleted)) = modify(ctx, key, |l| l.remove(count, &a[3]))? else {
        return Ok(Reply::Int(0));
    };
    if removed > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::LIST, "lrem", key);
    }
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    Ok(Reply::Int(removed as i64))
}

fn ltrim(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let start = args::int(&a[2])?;
    let stop = args::int(&a[3])?;
    let key = &a[1];
    let Some((_, deleted)) = modify(ctx, key, |l| l.trim(start, stop))? else {
        return Ok(Reply::ok());
    };
    ctx.notify(notify::LIST, "ltrim", key);
    if deleted {
        ctx.notify(notify::GENERIC, "del", key);
    }
    ctx.signal_modified(key);
    Ok(Reply::ok())
}
