//! Blocking sorted-set pops: BZPOPMIN, BZPOPMAX and BZMPOP on the blocking registry
//! (`blocking.rs`), with the pop code ZPOPMIN/ZMPOP run (t_zset.c's blockingGenericZpopCommand
//! and blocked.c's serveClientBlockedOnKey for sorted sets).

use crate::cmd::families::zsets::{mpop_args, mpop_reply, pop_effect, pop_first, Popped};
use crate::cmd::runtime::blocking::{self, Kind, Serve, Served, Wait};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::read;
use crate::reply::{CmdResult, Reply};
use crate::types::zset::ZSet;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("bzpopmin", bzpopmin),
    Row::new("bzpopmax", bzpopmax),
    Row::new("bzmpop", bzmpop),
];

/// How a served pop answers: BZPOPMIN/BZPOPMAX's flat `[key, member, score]`, or BZMPOP's
/// `[key, [[member, score]...]]`.
#[derive(Clone, Copy)]
enum Shape {
    Flat,
    Nested,
}

impl Shape {
    /// The pop's effect: BZMPOP's carries the count of members popped.
    fn effect(self, (key, items): &Popped, max: bool) -> Vec<Bytes> {
        let n = match self {
            Shape::Flat => None,
            Shape::Nested => Some(items.len()),
        };
        pop_effect(key, max, n)
    }
}

fn reply((key, items): Popped, shape: Shape) -> Reply {
    match shape {
        Shape::Nested => mpop_reply(key, items),
        Shape::Flat => {
            let mut out = vec![Reply::Bulk(key)];
            for (m, s) in items {
                out.push(Reply::Bulk(m));
                out.push(Reply::Double(s));
            }
            Reply::Array(out)
        }
    }
}

/// Serve a waiter from the ready sorted set at `key` with ZPOPMIN/ZPOPMAX's pop and events.
fn serve(max: bool, count: usize, shape: Shape) -> Serve {
    Box::new(move |ctx: &mut Ctx, key: &Bytes| {
        let popped = pop_first(ctx, std::slice::from_ref(key), max, count);
        let deleted = read(ctx, key, |z: Option<&ZSet>| z.is_none()).unwrap_or(true);
        Some(match popped {
            Ok(Some(p)) => {
                ctx.also_propagate(shape.effect(&p, max));
                Served {
                    reply: reply(p, shape),
                    deleted,
                }
            }
            Ok(None) => Served {
                reply: Reply::NilArray,
                deleted: true,
            },
            Err(e) => Served {
                reply: Reply::error(e),
                deleted,
            },
        })
    })
}

/// blockingGenericZpopCommand: pop from the first of `keys` holding a sorted set, or block.
fn blocking_zpop(
    ctx: &mut Ctx,
    keys: &[Bytes],
    timeout: &[u8],
    max: bool,
    count: usize,
    shape: Shape,
) -> CmdResult {
    let deadline = blocking::deadline(ctx, timeout)?;
    if let Some(p) = pop_first(ctx, keys, max, count)? {
        ctx.propagate_as(shape.effect(&p, max));
        return Ok(reply(p, shape));
    }
    if !blocking::may_block(ctx) {
        return Ok(Reply::NilArray);
    }
    Ok(blocking::block(
        ctx,
        Wait {
            kind: Kind::ZSet,
            keys: keys.to_vec(),
            deadline,
            serve: serve(max, count, shape),
        },
    ))
}

fn bzpopmin(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let last = a.len() - 1;
    blocking_zpop(ctx, &a[1..last], &a[last], false, 1, Shape::Flat)
}

fn bzpopmax(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let last = a.len() - 1;
    blocking_zpop(ctx, &a[1..last], &a[last], true, 1, Shape::Flat)
}

fn bzmpop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (keys, max, count) = mpop_args(a, 2)?;
    blocking_zpop(ctx, keys, &a[1], max, count, Shape::Nested)
}
