//! XREAD and XREADGROUP (t_stream.c's xreadCommand), and their blocking form on the blocking
//! registry: a reader blocks with the ID it wants entries after (`$` resolved then, `>` the
//! group's last ID each time it is looked at), and is served when the stream's last ID passes
//! it (blocked.c's serveClientsBlockedOnStreamKey). A group reader whose key or group goes
//! away is failed instead.

use crate::cmd::base::args::{self, Args};
use crate::cmd::families::streams::{
    entry_reply, id_reply, read_counted, setid_effect, strict_id, xclaim_effect,
};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::blocking::{self, Kind, Served, Wait};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{modify, read};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::types::stream::{Stream, StreamId};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("xread", xread), Row::new("xreadgroup", xreadgroup)];

/// A blocked reader waits this many entries at most when it gave no COUNT
/// (XREAD_BLOCKED_DEFAULT_COUNT).
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// XREAD's ID for a key: entries after `id`, or a group's `>` (new entries).
#[derive(Clone, Copy, PartialEq, Eq)]
enum After {
    Id(StreamId),
    New,
}

struct GroupRead {
    group: Bytes,
    consumer: Bytes,
    noack: bool,
}

fn xread(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_generic(ctx, a, false)
}

fn xreadgroup(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_generic(ctx, a, true)
}

/// One stream's part of the reply: `[key, entries]` (a map entry in RESP3).
fn stream_part(key: &Bytes, entries: Vec<Reply>) -> (Reply, Reply) {
    (Reply::Bulk(key.clone()), Reply::Array(entries))
}

/// The whole reply: an array of `[key, entries]` pairs in RESP2, a map in RESP3.
fn streams_reply(resp: u8, parts: Vec<(Reply, Reply)>) -> Reply {
    if resp >= 3 {
        Reply::Map(parts)
    } else {
        Reply::Array(
            parts
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![k, v]))
                .collect(),
        )
    }
}

fn read_generic(ctx: &mut Ctx, a: &[Bytes], group_cmd: bool) -> CmdResult {
    // What a read changes propagates as its effects (XCLAIM, XGROUP SETID/CREATECONSUMER),
    // never as the read itself (xreadCommand's preventCommandPropagation).
    if group_cmd && ctx.state.propagation.is_active() {
        ctx.prevent_propagation();
    }
    let mut timeout: Option<i64> = None;
    let mut count: usize = 0;
    let mut streams_at = 0;
    let mut group: Option<GroupRead> = None;
    let mut noack = false;
    let mut opts = Args::new(a, 1);
    while let Some(o) = opts.next() {
        if let Some(v) = opts.value_of(o, "block") {
            if ctx.in_script {
                return Err(error::xread_block_in_script(&a[0]));
            }
            let ms = args::int(v).map_err(|_| RedisError::new(error::TIMEOUT_NOT_INTEGER))?;
            if ms < 0 {
                return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
            }
            timeout = Some(ms);
        } else if let Some(v) = opts.value_of(o, "count") {
            count = args::int(v)?.max(0) as usize;
        } else if args::is(o, "streams") && !opts.is_empty() {
            streams_at = opts.position();
            if !opts.remaining().is_multiple_of(2) {
                return Err(RedisError::new(error::XREAD_UNBALANCED));
            }
            break;
        } else if let Some(v) = opts.values_of(o, "group", 2) {
            if !group_cmd {
                return Err(RedisError::new(error::XREAD_GROUP_OPTION));
            }
            group = Some(GroupRead {
                group: v[0].clone(),
                consumer: v[1].clone(),
                noack: false,
            });
        } else if args::is(o, "noack") {
            if !group_cmd {
                return Err(RedisError::new(error::XREAD_NOACK_OPTION));
            }
            noack = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if streams_at == 0 {
        return Err(RedisError::new(error::SYNTAX));
    }
    if group_cmd && group.is_none() {
        return Err(RedisError::new(error::XREADGROUP_NO_GROUP));
    }
    if let Some(g) = group.as_mut() {
        g.noack = noack;
    }
    let n = (a.len() - streams_at) / 2;
    let keys = &a[streams_at..streams_at + n];
    let id_args = &a[streams_at + n..];
    let mut afters = Vec::with_capacity(n);
    for (key, arg) in keys.iter().zip(id_args) {
        // The key's type, and its group, are checked before its ID is parsed.
        let last = read_counted(ctx, key, |s: Option<&Stream>| {
            s.map(|s| {
                (
                    s.last_id(),
                    group.as_ref().is_some_and(|g| s.group(&g.group).is_some()),
                )
            })
        })?;
        if let Some(g) = &group {
            if !last.is_some_and(|(_, has)| has) {
                return Err(error::nogroup_xreadgroup(key, &g.group));
            }
        }
        let after = if arg.as_ref() == b"$" {
            if group_cmd {
                return Err(RedisError::new(error::XREADGROUP_DOLLAR));
            }
            After::Id(last.map_or(StreamId::MIN, |(l, _)| l))
        } else if arg.as_ref() == b">" {
            if !group_cmd {
                return Err(RedisError::new(error::XREAD_GREATER_ID));
            }
            After::New
        } else {
            match strict_id(arg)? {
                // Redis stores `>` as the largest ID, so that ID given outright means `>` too.
                StreamId::MAX if group_cmd => After::New,
                id => After::Id(id),
            }
        };
        afters.push(after);
    }

    let resp = ctx.client.resp;
    let mut parts = Vec::new();
    for (key, after) in keys.iter().zip(&afters) {
        if let Some(entries) = serve_now(ctx, key, *after, group.as_ref(), count)? {
            parts.push(stream_part(key, entries));
        }
    }
    if !parts.is_empty() {
        return Ok(streams_reply(resp, parts));
    }
    let Some(ms) = timeout else {
        return Ok(Reply::NilArray);
    };
    if !blocking::may_block(ctx) {
        return Ok(Reply::NilArray);
    }
    let deadline = if ms > 0 { ms.wrapping_add(ctx.now) } else { 0 };
    let waits: Vec<(Bytes, After)> = keys.iter().cloned().zip(afters).collect();
    let count = if count == 0 {
        BLOCKED_DEFAULT_COUNT
    } else {
        count
    };
    Ok(blocking::block(
        ctx,
        Wait {
            kind: Kind::Stream,
            keys: keys.to_vec(),
            deadline,
            serve: Box::new(move |ctx: &mut Ctx, key: &Bytes| {
                let after = waits
                    .iter()
                    .find(|(k, _)| k == key)
                    .map_or(After::New, |(_, a)| *a);
                serve_blocked(ctx, key, after, group.as_ref(), count, resp)
            }),
        },
    ))
}

/// Reads one stream at once if it has something for the reader (the synchronous part of
/// xreadCommand): `None` when it has nothing.
fn serve_now(
    ctx: &mut Ctx,
    key: &Bytes,
    after: After,
    group: Option<&GroupRead>,
    count: usize,
) -> Result<Option<Vec<Reply>>, RedisError> {
    let now = ctx.now;
    let propagating = ctx.state.propagation.is_active();
    let Some(g) = group else {
        let After::Id(gt) = after else {
            unreachable!("`>` is refused without a group")
        };
        return read_counted(ctx, key, |s: Option<&Stream>| {
            let s = s.filter(|s| s.last_valid_id().is_some_and(|max| max > gt))?;
            let start = gt.incr().unwrap_or(StreamId::MIN);
            let limit = if count == 0 { usize::MAX } else { count };
            Some(
                s.range(start, StreamId::MAX, false)
                    .take(limit)
                    .map(entry_reply)
                    .collect(),
            )
        });
    };
    let mut created = false;
    let mut hit = false;
    let mut effects = Vec::new();
    let out = modify(ctx, key, |s: &mut Stream| {
        hit = true;
        let last = s.group(&g.group)?.last_id();
        let (start, history) = match after {
            After::Id(id) => (id.incr().unwrap_or(StreamId::MIN), true),
            After::New => {
                if s.last_valid_id().is_none_or(|max| max <= last) {
                    return None;
                }
                (last.incr().unwrap_or(StreamId::MIN), false)
            }
        };
        created = s
            .group_mut(&g.group)
            .expect("checked")
            .touch_consumer(&g.consumer, now);
        let mut entries = Vec::new();
        if history {
            // A history read changes delivery counts only where it runs (Redis propagates
            // nothing for it, not even a consumer it creates).
            s.read_history(&g.group, &g.consumer, start, count, now, |id, e| {
                entries.push(match e {
                    Some(e) => entry_reply(e),
                    None => Reply::Array(vec![id_reply(id), Reply::NilArray]),
                });
            });
        } else {
            effects = read_new(s, key, g, start, count, now, created, propagating, |e| {
                entries.push(entry_reply(e))
            });
        }
        Some(entries)
    })?
    .and_then(|(r, _)| r);
    // This second lookup of the key is lookupKeyRead's too (xreadCommand looks every key up
    // again to serve it).
    note_read(ctx, key, hit);
    if created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
    if out.is_some() {
        ctx.state.add_dirty(1);
    }
    for e in effects {
        ctx.also_propagate(e);
    }
    Ok(out)
}

/// XREADGROUP `>` on one stream: delivers the new entries from `start` to the reader and
/// returns how that reaches replicas and the AOF when `propagating`, as streamReplyWithRange
/// propagates it: each entry made pending as an XCLAIM; with NOACK, a consumer it created as
/// XGROUP CREATECONSUMER, and the group's new last ID as XGROUP SETID.
#[allow(clippy::too_many_arguments)]
fn read_new(
    s: &mut Stream,
    key: &[u8],
    g: &GroupRead,
    start: StreamId,
    count: usize,
    now: i64,
    created: bool,
    propagating: bool,
    emit: impl FnMut(crate::types::stream::Entry<'_>),
) -> Vec<Vec<Bytes>> {
    let mut effects = Vec::new();
    let before = s.group(&g.group).map(|grp| grp.last_id());
    if propagating && created && g.noack {
        effects.push(vec![
            Bytes::from_static(b"XGROUP"),
            Bytes::from_static(b"CREATECONSUMER"),
            Bytes::copy_from_slice(key),
            g.group.clone(),
            g.consumer.clone(),
        ]);
    }
    s.read_group_noting(
        &g.group,
        &g.consumer,
        start,
        count,
        g.noack,
        now,
        emit,
        |c| {
            if propagating {
                effects.push(xclaim_effect(key, &g.group, Bytes::from(c.id.to_vec()), &c));
            }
        },
    );
    if propagating && g.noack {
        if let Some(grp) = s.group(&g.group) {
            if Some(grp.last_id()) != before {
                effects.push(setid_effect(
                    key,
                    &g.group,
                    grp.last_id(),
                    grp.entries_read(),
                ));
            }
        }
    }
    effects
}

/// Serves a blocked reader from the ready key (serveClientsBlockedOnStreamKey and, for a
/// group reader whose key is gone, unblockDeletedStreamReadgroupClients). `None` keeps it
/// waiting.
fn serve_blocked(
    ctx: &mut Ctx,
    key: &Bytes,
    after: After,
    group: Option<&GroupRead>,
    count: usize,
    resp: u8,
) -> Option<Served> {
    let fail = |text: &'static str| {
        Some(Served {
            reply: Reply::error(RedisError::new(text)),
            deleted: false,
        })
    };
    let state = match read(ctx, key, |s: Option<&Stream>| {
        s.map(|s| {
            (
                s.last_id(),
                group.map(|g| s.group(&g.group).map(|grp| grp.last_id())),
            )
        })
    }) {
        Ok(Some(x)) => x,
        // Gone, or another type: plain readers keep waiting, group readers are failed.
        _ => return group.and_then(|_| fail(error::UNBLOCKED_STREAM_GONE)),
    };
    let (last_id, group_last) = state;
    let gt = match (after, group_last) {
        (_, Some(None)) => return fail(error::NOGROUP_BLOCKED),
        (_, Some(Some(l))) => l,
        (After::Id(id), None) => id,
        (After::New, None) => return None,
    };
    if last_id <= gt {
        return None;
    }
    let start = gt.incr().unwrap_or(StreamId::MIN);
    let now = ctx.now;
    let entries = match group {
        None => read(ctx, key, |s: Option<&Stream>| {
            s.map_or_else(Vec::new, |s| {
                s.range(start, StreamId::MAX, false)
                    .take(count)
                    .map(entry_reply)
                    .collect()
            })
        })
        .unwrap_or_default(),
        Some(g) => {
            let mut created = false;
            let mut effects = Vec::new();
            let propagating = ctx.state.propagation.is_active();
            let entries = modify(ctx, key, |s: &mut Stream| {
                created = s
                    .group_mut(&g.group)
                    .expect("looked up")
                    .touch_consumer(&g.consumer, now);
                let mut entries = Vec::new();
                effects = read_new(s, key, g, start, count, now, created, propagating, |e| {
                    entries.push(entry_reply(e))
                });
                entries
            })
            .ok()
            .flatten()
            .map_or_else(Vec::new, |(e, _)| e);
            if created {
                ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
            }
            ctx.state.add_dirty(1);
            for e in effects {
                ctx.also_propagate(e);
            }
            entries
        }
    };
    Some(Served {
        reply: streams_reply(resp, vec![stream_part(key, entries)]),
        deleted: false,
    })
}
