//! Lists across keys and the blocking pops: LPOS, LMOVE, RPOPLPUSH, LMPOP, and BLPOP, BRPOP,
//! BLMOVE, BRPOPLPUSH, BLMPOP on [`crate::cmd::runtime::blocking`]. A blocking pop that finds data
//! answers exactly as its non-blocking twin; one that must wait registers a `serve` closure that
//! runs the same pop code when a key becomes ready.

use crate::cmd::base::args::{self, Args};
use crate::cmd::families::lists::{
    elements_removed, fill, modify, pop_n, push_to, read, wrongtype, End,
};
use crate::cmd::runtime::blocking::{self, Kind, Serve, Served, Wait};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, Value};
use crate::reply::{CmdResult, Reply};
use crate::types::list::List;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("lpos", lpos),
    Row::new("lmove", lmove),
    Row::new("rpoplpush", rpoplpush),
    Row::new("lmpop", lmpop),
    Row::new("blpop", blpop),
    Row::new("brpop", brpop),
    Row::new("blmove", blmove),
    Row::new("brpoplpush", brpoplpush),
    Row::new("blmpop", blmpop),
];

fn lpos(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut rank = 1i64;
    let mut count: Option<i64> = None;
    let mut maxlen = 0i64;
    let mut args = Args::new(a, 3);
    while let Some(opt) = args.next() {
        if let Some(v) = args.value_of(opt, "rank") {
            rank = args::int(v)?;
            if rank == 0 {
                return Err(RedisError::new(error::RANK_ZERO));
            }
        } else if let Some(v) = args.value_of(opt, "count") {
            count = Some(args::non_negative(v, Some(error::COUNT_NEGATIVE))?);
        } else if let Some(v) = args.value_of(opt, "maxlen") {
            maxlen = args::non_negative(v, Some(error::MAXLEN_NEGATIVE))?;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    // RANK i64::MIN: Redis negates it in C, where it stays i64::MIN, so every match from the
    // tail qualifies and COUNT never stops the scan.
    let (rank, count_cap) = match (rank, count) {
        (i64::MIN, Some(_)) => (-1, Some(0)),
        (i64::MIN, None) => (-1, None),
        (r, c) => (r, c),
    };
    let maxlen = maxlen as usize;
    let found = read(ctx, &a[1], |l| match count_cap {
        Some(c) => Reply::Array(
            l.positions(&a[2], rank, c as usize, maxlen)
                .into_iter()
                .map(|p| Reply::Int(p as i64))
                .collect(),
        ),
        None => l
            .position(&a[2], rank, maxlen)
            .map_or(Reply::Nil, |p| Reply::Int(p as i64)),
    })?;
    Ok(found.unwrap_or(if count.is_some() {
        Reply::Array(Vec::new())
    } else {
        Reply::Nil
    }))
}

/// Redis's lmoveGenericCommand (and the serving side of BLMOVE): pop from `from` of `src`,
/// push to `to` of `dst` (created if missing), with LMOVE's events. None if `src` is missing;
/// WRONGTYPE (and nothing moved) if either key holds another type. Returns the element and
/// whether `src` went. `signal_src`: the non-blocking command signals the source; a served
/// BLMOVE does not (the push that made it ready already did).
fn move_element(
    ctx: &Ctx,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
    signal_src: bool,
) -> Result<Option<(Bytes, bool)>, RedisError> {
    let fill = fill(ctx);
    let (value, src_deleted) = {
        let mut g = ctx.db().lock_keys([src, dst]);
        match g.shard(src).get(src, ctx.now).map(|e| &e.value) {
            None => return Ok(None),
            Some(Value::List(_)) => {}
            Some(_) => return Err(wrongtype()),
        }
        let same = src == dst;
        if !same {
            match g.shard(dst).get(dst, ctx.now).map(|e| &e.value) {
                None | Some(Value::List(_)) => {}
                Some(_) => return Err(wrongtype()),
            }
        }
        let Some(Entry {
            value: Value::List(sl),
            ..
        }) = g.shard(src).get_mut(src, ctx.now)
        else {
            unreachable!("checked above")
        };
        let value = match from {
            End::Left => sl.pop_front(),
            End::Right => sl.pop_back(),
        }
        .expect("a list is never empty");
        if same {
            push_to(sl, &value, to, fill);
            (value, false)
        } else {
            let src_empty = sl.is_empty();
            match g.shard(dst).get_mut(dst, ctx.now) {
                Some(Entry {
                    value: Value::List(dl),
                    ..
                }) => push_to(dl, &value, to, fill),
                _ => {
                    let mut dl = List::new();
                    push_to(&mut dl, &value, to, fill);
                    g.shard(dst).insert(dst, Entry::new(Value::List(dl)));
                }
            }
            if src_empty {
                g.shard(src).remove(src, ctx.now);
            }
            (value, src_empty)
        }
    };
    ctx.signal_modified(dst);
    ctx.notify(notify::LIST, to.push_event(), dst);
    ctx.notify(
        notify::LIST,
        if from == End::Left { "lpop" } else { "rpop" },
        src,
    );
    if src_deleted {
        ctx.notify(notify::GENERIC, "del", src);
    }
    if signal_src {
        ctx.signal_modified(src);
    }
    Ok(Some((value, src_deleted)))
}

fn lmove(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let from = End::parse(&a[3])?;
    let to = End::parse(&a[4])?;
    Ok(match move_element(ctx, &a[1], &a[2], from, to, true)? {
        Some((v, _)) => Reply::Bulk(v),
        None => Reply::Nil,
    })
}

fn rpoplpush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(
        match move_element(ctx, &a[1], &a[2], End::Right, End::Left, true)? {
            Some((v, _)) => Reply::Bulk(v),
            None => Reply::Nil,
        },
    )
}

/// `[key, [elements]]`, the reply of LMPOP and BLMPOP.
fn key_and_elements(key: &Bytes, items: Vec<Bytes>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(key.clone()),
        Reply::Array(items.into_iter().map(Reply::Bulk).collect()),
    ])
}

/// Pop from the first of `keys` that holds a list: up to `count` elements in a nested reply
/// (LMPOP, BLMPOP), or one element as `[key, element]` (BLPOP, BRPOP) when `count` is None.
/// Ok(None): every key is missing. WRONGTYPE stops at the first key of another type.
fn pop_first(
    ctx: &Ctx,
    keys: &[Bytes],
    end: End,
    count: Option<i64>,
) -> Result<Option<Reply>, RedisError> {
    let n = count.unwrap_or(1).max(1) as usize;
    for key in keys {
        let popped = modify(ctx, key, |l| match end {
            End::Left => l.pop_front_n(n),
            End::Right => l.pop_back_n(n),
        })?;
        let Some((mut items, deleted)) = popped else {
            continue;
        };
        ctx.propagate_as(pop_effect(key, end, count.map(|_| items.len() as i64)));
        elements_removed(ctx, key, end, deleted);
        return Ok(Some(match count {
            Some(_) => key_and_elements(key, items),
            None => Reply::Array(vec![
                Reply::Bulk(key.clone()),
                Reply::Bulk(items.pop().expect("a list is never empty")),
            ]),
        }));
    }
    Ok(None)
}

/// What a pop from `key` propagates as (Redis rewrites BLPOP/BRPOP to LPOP/RPOP key, and
/// LMPOP/BLMPOP to LPOP/RPOP key count, the count of elements it popped): replicas and the AOF pop from the list that was
/// chosen, never block.
fn pop_effect(key: &Bytes, end: End, count: Option<i64>) -> Vec<Bytes> {
    let name: &'static [u8] = if end == End::Left { b"LPOP" } else { b"RPOP" };
    let mut v = vec![Bytes::from_static(name), key.clone()];
    if let Some(c) = count {
        v.push(Bytes::from(c.to_string()));
    }
    v
}

fn lmpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (keys, end, count) = args::mpop(a, 1, End::parse)?;
    Ok(pop_first(ctx, keys, end, Some(count))?.unwrap_or(Reply::NilArray))
}

/// How a blocked BLPOP/BRPOP (`count` None) or BLMPOP is served from a ready list: the same
/// pop, reply and events as when the data was there at once, except that BLPOP and BRPOP do
/// not signal the key again (the push that made it ready did), as Redis's
/// serveClientBlockedOnList.
fn serve_pop(end: End, count: Option<i64>) -> Serve {
    Box::new(move |ctx: &mut Ctx, key: &Bytes| {
        let n = count.unwrap_or(1) as usize;
        let Some((mut items, deleted)) = pop_n(ctx, key, end, n) else {
            return Some(Served {
                reply: Reply::NilArray,
                deleted: true,
            });
        };
        ctx.also_propagate(pop_effect(key, end, count.map(|_| items.len() as i64)));
        let reply = match count {
            Some(_) => {
                elements_removed(ctx, key, end, deleted);
                key_and_elements(key, items)
            }
            None => {
                ctx.notify(
                    notify::LIST,
                    if end == End::Left { "lpop" } else { "rpop" },
                    key,
                );
                if deleted {
                    ctx.notify(notify::GENERIC, "del", key);
                }
                Reply::Array(vec![
                    Reply::Bulk(key.clone()),
                    Reply::Bulk(items.pop().expect("a list is never empty")),
                ])
            }
        };
        Some(Served { reply, deleted })
    })
}

/// Redis's blockingPopGenericCommand: BLPOP, BRPOP (`count` None) and BLMPOP.
fn blocking_pop(
    ctx: &mut Ctx,
    keys: &[Bytes],
    end: End,
    timeout: &[u8],
    count: Option<i64>,
) -> CmdResult {
    let deadline = blocking::deadline(ctx, timeout)?;
    if let Some(reply) = pop_first(ctx, keys, end, count)? {
        return Ok(reply);
    }
    if !blocking::may_block(ctx) {
        return Ok(Reply::NilArray);
    }
    Ok(blocking::block(
        ctx,
        Wait {
            kind: Kind::List,
            keys: keys.to_vec(),
            deadline,
            serve: serve_pop(end, count),
        },
    ))
}

fn blpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let last = a.len() - 1;
    blocking_pop(ctx, &a[1..last], End::Left, &a[last], None)
}

fn brpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let last = a.len() - 1;
    blocking_pop(ctx, &a[1..last], End::Right, &a[last], None)
}

fn blmpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (keys, end, count) = args::mpop(a, 2, End::parse)?;
    blocking_pop(ctx, keys, end, &a[1], Some(count))
}

/// Redis's blmoveGenericCommand: BLMOVE and BRPOPLPUSH.
fn blocking_move(ctx: &mut Ctx, a: &[Bytes], from: End, to: End, deadline: i64) -> CmdResult {
    let (src, dst) = (&a[1], &a[2]);
    let exists = {
        let mut shard = ctx.db().lock(src);
        match shard.get(src, ctx.now).map(|e| &e.value) {
            None => false,
            Some(Value::List(_)) => true,
            Some(_) => return Err(wrongtype()),
        }
    };
    if exists {
        return Ok(match move_element(ctx, src, dst, from, to, true)? {
            Some((v, _)) => Reply::Bulk(v),
            None => Reply::Nil,
        });
    }
    if !blocking::may_block(ctx) {
        return Ok(Reply::Nil);
    }
    // Copied: a slice of the request would pin its read buffer for as long as the client waits.
    let dst = Bytes::copy_from_slice(dst);
    let serve: Serve = Box::new(move |ctx: &mut Ctx, key: &Bytes| {
        Some(match move_element(ctx, key, &dst, from, to, false) {
            Ok(Some((v, deleted))) => Served {
                reply: Reply::Bulk(v),
                deleted,
            },
            Ok(None) => Served {
                reply: Reply::Nil,
                deleted: true,
            },
            // The destination holds another type: the client gets WRONGTYPE, the source
            // keeps its elements for the next waiter.
            Err(e) => Served {
                reply: Reply::error(e),
                deleted: false,
            },
        })
    });
    Ok(blocking::block(
        ctx,
        Wait {
            kind: Kind::List,
            keys: vec![src.clone()],
            deadline,
            serve,
        },
    ))
}

fn blmove(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let from = End::parse(&a[3])?;
    let to = End::parse(&a[4])?;
    let deadline = blocking::deadline(ctx, &a[5])?;
    blocking_move(ctx, a, from, to, deadline)
}

fn brpoplpush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let deadline = blocking::deadline(ctx, &a[3])?;
    blocking_move(ctx, a, End::Right, End::Left, deadline)
}
