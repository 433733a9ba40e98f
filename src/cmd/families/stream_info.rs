//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP (t_stream.c's
//! xinfoCommand) with Redis 7.0's fields.

use crate::cmd::base::args;
use crate::cmd::base::help::help_reply;
use crate::cmd::families::streams::{entry_reply, id_reply, read_counted};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{container, Row};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::types::stream::{Group, Stream, StreamId, INVALID_ENTRIES_READ};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("xinfo", container).subs(XINFO_SUBS)];

const XINFO_SUBS: &[Row] = &[
    Row::new("consumers", xinfo),
    Row::new("groups", xinfo),
    Row::new("help", xinfo),
    Row::new("stream", xinfo),
];

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

fn field(name: &'static str, v: Reply) -> (Reply, Reply) {
    (Reply::Bulk(Bytes::from_static(name.as_bytes())), v)
}

fn opt_int(v: Option<i64>) -> Reply {
    v.map_or(Reply::Nil, Reply::Int)
}

fn entries_read(g: &Group) -> Reply {
    let n = g.entries_read();
    opt_int((n != INVALID_ENTRIES_READ).then_some(n))
}

fn xinfo(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let sub = a[1].to_ascii_lowercase();
    if sub == b"help" {
        return Ok(help_reply(XINFO_HELP));
    }
    let key = &a[2];
    let now = ctx.now;
    let r = read_counted(ctx, key, |s: Option<&Stream>| {
        let s = s.ok_or_else(|| RedisError::new(error::NO_SUCH_KEY))?;
        match sub.as_slice() {
            b"consumers" => consumers(s, key, &a[3], now),
            b"groups" => Ok(groups(s)),
            _ => stream_info(s, a),
        }
    })?;
    r
}

fn consumers(s: &Stream, key: &[u8], group: &[u8], now: i64) -> CmdResult {
    let g = s
        .group(group)
        .ok_or_else(|| error::nogroup_for_key(group, key))?;
    Ok(Reply::Array(
        g.consumers()
            .map(|(name, c)| {
                Reply::Map(vec![
                    field("name", Reply::Bulk(Bytes::copy_from_slice(name))),
                    field("pending", Reply::Int(c.pel_len() as i64)),
                    field("idle", Reply::Int(now.wrapping_sub(c.seen_time()).max(0))),
                ])
            })
            .collect(),
    ))
}

fn groups(s: &Stream) -> Reply {
    Reply::Array(
        s.groups()
            .map(|(name, g)| {
                Reply::Map(vec![
                    field("name", Reply::Bulk(Bytes::copy_from_slice(name))),
                    field("consumers", Reply::Int(g.consumer_count() as i64)),
                    field("pending", Reply::Int(g.pel_len() as i64)),
                    field("last-delivered-id", id_reply(g.last_id())),
                    field("entries-read", entries_read(g)),
                    field("lag", opt_int(s.group_lag(g))),
                ])
            })
            .collect(),
    )
}

/// XINFO STREAM: the summary, or with FULL the entries, groups, PELs and consumers (at most
/// COUNT of each list, 10 by default, 0 for all).
fn stream_info(s: &Stream, a: &[Bytes]) -> CmdResult {
    let opts = &a[3..];
    let syntax = || error::subcommand_syntax(&a[1], &a[0]);
    let full = !opts.is_empty();
    let mut count: i64 = 10;
    if full {
        if (opts.len() != 1 && opts.len() != 3) || !args::is(&opts[0], "full") {
            return Err(syntax());
        }
        if opts.len() == 3 {
            if !args::is(&opts[1], "count") {
                return Err(syntax());
            }
            count = args::int(&opts[2])?;
            if count < 0 {
                count = 10;
            }
        }
    }
    let m = s.meta();
    let mut out = vec![
        field("length", Reply::Int(m.length as i64)),
        field("radix-tree-keys", Reply::Int(s.node_count() as i64)),
        field("radix-tree-nodes", Reply::Int(s.rax_node_count() as i64)),
        field("last-generated-id", id_reply(m.last_id)),
        field("max-deleted-entry-id", id_reply(m.max_deleted)),
        field("entries-added", Reply::Int(m.entries_added as i64)),
        field("recorded-first-entry-id", id_reply(m.first_id)),
    ];
    if !full {
        let edge = |rev| {
            s.range(StreamId::MIN, StreamId::MAX, rev)
                .next()
                .map_or(Reply::Nil, entry_reply)
        };
        out.push(field("groups", Reply::Int(s.group_count() as i64)));
        out.push(field("first-entry", edge(false)));
        out.push(field("last-entry", edge(true)));
        return Ok(Reply::Map(out));
    }
    let limit = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    out.push(field(
        "entries",
        Reply::Array(
            s.range(StreamId::MIN, StreamId::MAX, false)
                .take(limit)
                .map(entry_reply)
                .collect(),
        ),
    ));
    let groups = s
        .groups()
        .map(|(name, g)| {
            let pending = g
                .pel()
                .take(limit)
                .map(|(id, n)| {
                    Reply::Array(vec![
                        id_reply(id),
                        Reply::Bulk(Bytes::copy_from_slice(n.consumer())),
                        Reply::Int(n.delivery_time),
                        Reply::Int(n.delivery_count as i64),
                    ])
                })
                .collect();
            let consumers = g
                .consumers()
                .map(|(cname, c)| {
                    let pel = g
                        .consumer_pel(c)
                        .take(limit)
                        .map(|(id, n)| {
                            Reply::Array(vec![
                                id_reply(id),
                                Reply::Int(n.delivery_time),
                                Reply::Int(n.delivery_count as i64),
                            ])
                        })
                        .collect();
                    Reply::Map(vec![
                        field("name", Reply::Bulk(Bytes::copy_from_slice(cname))),
                        field("seen-time", Reply::Int(c.seen_time())),
                        field("pel-count", Reply::Int(c.pel_len() as i64)),
                        field("pending", Reply::Array(pel)),
                    ])
                })
                .collect();
            Reply::Map(vec![
                field("name", Reply::Bulk(Bytes::copy_from_slice(name))),
                field("last-delivered-id", id_reply(g.last_id())),
                field("entries-read", entries_read(g)),
                field("lag", opt_int(s.group_lag(g))),
                field("pel-count", Reply::Int(g.pel_len() as i64)),
                field("pending", Reply::Array(pending)),
                field("consumers", Reply::Array(consumers)),
            ])
        })
        .collect();
    out.push(field("groups", Reply::Array(groups)));
    Ok(Reply::Map(out))
}
