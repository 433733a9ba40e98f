//! Stream consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
//! XACK, XPENDING, XCLAIM and XAUTOCLAIM (t_stream.c), over the groups of `types::stream`.

use crate::cmd::base::args::{self, Args};
use crate::cmd::base::help::help_reply;
use crate::cmd::families::streams::{
    entry_reply, id_reply, read_counted, setid_effect, stream_error, strict_id, xclaim_effect,
};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::blocking;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{container, Row};
use crate::cmd::runtime::typed::{modify, read, upsert};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::types::stream::{
    parse_id, parse_range_end, parse_range_start, ClaimOptions, Stream, StreamId,
    INVALID_ENTRIES_READ,
};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("xgroup", container).subs(XGROUP_SUBS),
    Row::new("xack", xack),
    Row::new("xpending", xpending),
    Row::new("xclaim", xclaim),
    Row::new("xautoclaim", xautoclaim),
];

const XGROUP_SUBS: &[Row] = &[
    Row::new("create", xgroup),
    Row::new("createconsumer", xgroup),
    Row::new("delconsumer", xgroup),
    Row::new("destroy", xgroup),
    Row::new("help", xgroup),
    Row::new("setid", xgroup),
];

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

/// The group's read counter argument (ENTRIESREAD): a number >= 0 or -1.
fn entries_read_arg(arg: &[u8]) -> Result<i64, RedisError> {
    let n = args::int(arg)?;
    if n < 0 && n != INVALID_ENTRIES_READ {
        return Err(RedisError::new(error::XGROUP_ENTRIES_READ));
    }
    Ok(n)
}

/// XGROUP's subcommands, in xgroupCommand's order of checks.
fn xgroup(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let sub = a[1].to_ascii_lowercase();
    let sub = sub.as_slice();
    let syntax = || error::subcommand_syntax(&a[1], &a[0]);
    if sub == b"help" {
        return Ok(help_reply(XGROUP_HELP));
    }
    let key = &a[2];
    let group = &a[3];
    let mut mkstream = false;
    let mut entries_read = INVALID_ENTRIES_READ;
    let mut opts = Args::new(a, 5);
    while let Some(opt) = opts.next() {
        if sub == b"create" && args::is(opt, "mkstream") {
            mkstream = true;
        } else if let Some(v) = matches!(sub, b"create" | b"setid")
            .then(|| opts.value_of(opt, "entriesread"))
            .flatten()
        {
            entries_read = entries_read_arg(v)?;
        } else {
            return Err(syntax());
        }
    }
    // The key's type, then whether it and the group exist.
    let found = read(ctx, key, |s: Option<&Stream>| {
        s.map(|s| (s.last_id(), s.group(group).is_some()))
    })?;
    if !mkstream {
        let Some((_, has_group)) = found else {
            return Err(RedisError::new(error::XGROUP_KEY_MISSING));
        };
        if !has_group && matches!(sub, b"setid" | b"createconsumer" | b"delconsumer") {
            return Err(error::nogroup_for_key(group, key));
        }
    }
    let now = ctx.now;
    match sub {
        b"create" if a.len() <= 8 => {
            let id = if a[4].as_ref() == b"$" {
                found.map_or(StreamId::MIN, |(l, _)| l)
            } else {
                strict_id(&a[4])?
            };
            let ((made, _), outcome) = upsert(ctx, key, Stream::new, |s: &mut Stream| {
                Ok((s.create_group(group, id, entries_read), ()))
            })?;
            if outcome.created {
                ctx.signal_modified(key);
                blocking::key_ready(ctx.state, ctx.client.db, key);
            }
            if !made {
                return Err(RedisError::new(error::BUSYGROUP));
            }
            ctx.state.add_dirty(1);
            ctx.notify(notify::STREAM, "xgroup-create", key);
            Ok(Reply::ok())
        }
        b"setid" if a.len() == 5 || a.len() == 7 => {
            let id = if a[4].as_ref() == b"$" {
                found.map_or(StreamId::MIN, |(l, _)| l)
            } else {
                parse_id(&a[4], 0).map_err(stream_error)?
            };
            modify(ctx, key, |s: &mut Stream| {
                s.group_mut(group)
                    .expect("checked")
                    .set_id(id, entries_read)
            })?;
            ctx.state.add_dirty(1);
            ctx.notify(notify::STREAM, "xgroup-setid", key);
            Ok(Reply::ok())
        }
        b"destroy" if a.len() == 4 => {
            let gone =
                modify(ctx, key, |s: &mut Stream| s.destroy_group(group))?.is_some_and(|(g, _)| g);
            if !gone {
                return Ok(Reply::Int(0));
            }
            ctx.state.add_dirty(1);
            ctx.notify(notify::STREAM, "xgroup-destroy", key);
            // Readers blocked on this group are failed with NOGROUP.
            blocking::key_ready(ctx.state, ctx.client.db, key);
            Ok(Reply::Int(1))
        }
        b"createconsumer" if a.len() == 5 => {
            let made = modify(ctx, key, |s: &mut Stream| {
                s.group_mut(group)
                    .expect("checked")
                    .create_consumer(&a[4], now)
            })?
            .is_some_and(|(m, _)| m);
            if made {
                ctx.state.add_dirty(1);
                ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
            }
            Ok(Reply::Int(made as i64))
        }
        b"delconsumer" if a.len() == 5 => {
            let pending = modify(ctx, key, |s: &mut Stream| {
                s.group_mut(group).expect("checked").delete_consumer(&a[4])
            })?
            .and_then(|(p, _)| p);
            if pending.is_some() {
                ctx.state.add_dirty(1);
                ctx.notify(notify::STREAM, "xgroup-delconsumer", key);
            }
            Ok(Reply::Int(pending.unwrap_or(0) as i64))
        }
        _ => Err(syntax()),
    }
}

fn xack(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let has = read_counted(ctx, key, |s: Option<&Stream>| {
        s.is_some_and(|s| s.group(&a[2]).is_some())
    })?;
    if !has {
        return Ok(Reply::Int(0));
    }
    let ids = a[3..]
        .iter()
        .map(|x| strict_id(x))
        .collect::<Result<Vec<_>, _>>()?;
    let n = modify(ctx, key, |s: &mut Stream| {
        s.group_mut(&a[2]).expect("checked").ack(&ids)
    })?
    .map_or(0, |(n, _)| n);
    ctx.state.add_dirty(n as u64);
    Ok(Reply::Int(n as i64))
}

fn xpending(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (key, group) = (&a[1], &a[2]);
    if a.len() != 3 && (a.len() < 6 || a.len() > 9) {
        return Err(RedisError::new(error::SYNTAX));
    }
    let mut range = None;
    if a.len() >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if args::is(&a[3], "idle") {
            min_idle = args::int(&a[4])?;
            if a.len() < 8 {
                return Err(RedisError::new(error::SYNTAX));
            }
            at += 2;
        }
        let count = args::int(&a[at + 2])?.max(0) as usize;
        let start = parse_range_start(&a[at]).map_err(stream_error)?;
        let end = parse_range_end(&a[at + 1]).map_err(stream_error)?;
        let consumer = a.get(at + 3).cloned();
        range = Some((start, end, count, consumer, min_idle));
    }
    let now = ctx.now;
    let r = read_counted(ctx, key, |s: Option<&Stream>| {
        let g = s.and_then(|s| s.group(group))?;
        Some(match &range {
            None => {
                let sum = g.pending_summary();
                match sum.bounds {
                    None => {
                        Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray])
                    }
                    Some((lo, hi)) => Reply::Array(vec![
                        Reply::Int(sum.count as i64),
                        id_reply(lo),
                        id_reply(hi),
                        Reply::Array(
                            sum.consumers
                                .into_iter()
                                .map(|(name, n)| {
                                    Reply::Array(vec![
                                        Reply::Bulk(Bytes::copy_from_slice(&name)),
                                        Reply::Bulk(Bytes::from(n.to_string())),
                                    ])
                                })
                                .collect(),
                        ),
                    ]),
                }
            }
            Some((start, end, count, consumer, min_idle)) => Reply::Array(
                g.pending_range(*start, *end, *count, consumer.as_deref(), *min_idle, now)
                    .into_iter()
                    .map(|p| {
                        Reply::Array(vec![
                            id_reply(p.id),
                            Reply::Bulk(Bytes::copy_from_slice(&p.consumer)),
                            Reply::Int(p.idle),
                            Reply::Int(p.delivery_count as i64),
                        ])
                    })
                    .collect(),
            ),
        })
    })?;
    r.ok_or_else(|| error::nogroup(key, group))
}

/// Whether the group exists at the key (WRONGTYPE for another type); NOGROUP otherwise. With
/// `counted`, the lookup is lookupKeyRead's (a keyspace hit or miss).
fn need_group(ctx: &Ctx, key: &[u8], group: &[u8], counted: bool) -> Result<(), RedisError> {
    let has_group = |s: Option<&Stream>| s.is_some_and(|s| s.group(group).is_some());
    let has = if counted {
        read_counted(ctx, key, has_group)?
    } else {
        read(ctx, key, has_group)?
    };
    if has {
        Ok(())
    } else {
        Err(error::nogroup(key, group))
    }
}

fn xclaim(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (key, group, consumer) = (&a[1], &a[2], &a[3]);
    need_group(ctx, key, group, true)?;
    let min_idle = args::int(&a[4])
        .map_err(|_| RedisError::new(error::XCLAIM_MIN_IDLE))?
        .max(0);
    // The IDs, up to the first argument that is not one; the options after them.
    let mut rest = Args::new(a, 5);
    let mut ids = Vec::new();
    while let Some(id) = rest.peek().and_then(|v| strict_id(v).ok()) {
        ids.push(id);
        rest.next();
    }
    let now = ctx.now;
    let mut opts = ClaimOptions {
        min_idle,
        ..Default::default()
    };
    while let Some(o) = rest.next() {
        if args::is(o, "force") {
            opts.force = true;
        } else if args::is(o, "justid") {
            opts.justid = true;
        } else if let Some(v) = rest.value_of(o, "idle") {
            let idle = args::int(v).map_err(|_| RedisError::new(error::XCLAIM_IDLE))?;
            opts.delivery_time = Some(now.wrapping_sub(idle));
        } else if let Some(v) = rest.value_of(o, "time") {
            opts.delivery_time =
                Some(args::int(v).map_err(|_| RedisError::new(error::XCLAIM_TIME))?);
        } else if let Some(v) = rest.value_of(o, "retrycount") {
            let n = args::int(v).map_err(|_| RedisError::new(error::XCLAIM_RETRYCOUNT))?;
            opts.retry_count = (n >= 0).then_some(n as u64);
        } else if let Some(v) = rest.value_of(o, "lastid") {
            opts.last_id = Some(strict_id(v)?);
        } else {
            return Err(error::xclaim_option(o));
        }
    }
    let justid = opts.justid;
    let mut out = Vec::new();
    let propagating = ctx.state.propagation.is_active();
    let mut effects = Vec::new();
    let (claim, setid) = modify(ctx, key, |s: &mut Stream| {
        let ids_at = &a[5..];
        let claim = s.claim_noting(
            group,
            consumer,
            &ids,
            &opts,
            now,
            |e| {
                out.push(if justid {
                    id_reply(e.id)
                } else {
                    entry_reply(e)
                })
            },
            // Each entry claimed or dropped as an XCLAIM, its ID as it was typed.
            |c| {
                if propagating {
                    effects.push(xclaim_effect(key, group, ids_at[c.arg].clone(), &c));
                }
            },
        );
        // A LASTID no XCLAIM carried goes as XGROUP SETID.
        let setid = (claim.last_id_moved && claim.claimed + claim.dropped == 0)
            .then(|| s.group(group).map(|g| (g.last_id(), g.entries_read())))
            .flatten();
        (claim, setid)
    })?
    .map(|(c, _)| c)
    .unwrap_or_default();
    if claim.consumer_created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
    ctx.state
        .add_dirty((claim.claimed + claim.dropped + usize::from(setid.is_some())) as u64);
    if propagating {
        ctx.prevent_propagation();
        for e in effects {
            ctx.also_propagate(e);
        }
        if let Some((last, read)) = setid {
            ctx.also_propagate(setid_effect(key, group, last, read));
        }
    }
    Ok(Reply::Array(out))
}

fn xautoclaim(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (key, group, consumer) = (&a[1], &a[2], &a[3]);
    // Redis looks the key up before it parses the arguments (and checks its type after): a
    // syntax error still counts the lookup.
    let exists = ctx.db().lock(key).get(key, ctx.now).is_some();
    note_read(ctx, key, exists);
    let min_idle = args::int(&a[4])
        .map_err(|_| RedisError::new(error::XAUTOCLAIM_MIN_IDLE))?
        .max(0);
    let start = parse_range_start(&a[5]).map_err(stream_error)?;
    let mut count: usize = 100;
    let mut justid = false;
    let mut rest = Args::new(a, 6);
    while let Some(o) = rest.next() {
        if let Some(v) = rest.value_of(o, "count") {
            // LONG_MAX / max(sizeof(streamID), attempts factor 10).
            let max = i64::MAX / 16;
            count = args::long_in(v, 1, max, Some(error::XAUTOCLAIM_COUNT))? as usize;
        } else if args::is(o, "justid") {
            justid = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    need_group(ctx, key, group, false)?;
    let now = ctx.now;
    let mut claimed = Vec::new();
    let propagating = ctx.state.propagation.is_active();
    let mut effects = Vec::new();
    let r = modify(ctx, key, |s: &mut Stream| {
        s.autoclaim_noting(
            group,
            consumer,
            min_idle,
            start,
            count,
            justid,
            now,
            |e| {
                claimed.push(if justid {
                    id_reply(e.id)
                } else {
                    entry_reply(e)
                })
            },
            |c| {
                if propagating {
                    effects.push(xclaim_effect(key, group, Bytes::from(c.id.to_vec()), &c));
                }
            },
        )
    })?
    .map(|(r, _)| r)
    .unwrap_or_default();
    if r.consumer_created {
        ctx.notify(notify::STREAM, "xgroup-createconsumer", key);
    }
    ctx.state.add_dirty((r.claimed + r.deleted.len()) as u64);
    if propagating {
        // Each entry claimed or dropped goes as an XCLAIM, never the XAUTOCLAIM itself.
        ctx.prevent_propagation();
        for e in effects {
            ctx.also_propagate(e);
        }
    }
    Ok(Reply::Array(vec![
        id_reply(r.next),
        Reply::Array(claimed),
        Reply::Array(r.deleted.into_iter().map(id_reply).collect()),
    ]))
}
