//! SLOWLOG GET/LEN/RESET/HELP (Redis's slowlog.c). The log is kept by the observation
//! subsystem (`runtime/observe/slowlog.rs`, hence the shared name).

use crate::cmd::base::args;
use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("slowlog", container).subs(SLOWLOG_SUBS)];

const SLOWLOG_SUBS: &[Row] = &[
    Row::new("get", slowlog_get),
    Row::new("len", slowlog_len),
    Row::new("reset", slowlog_reset),
    Row::new("help", slowlog_help),
];

fn slowlog_get(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut count: i64 = 10;
    if a.len() == 3 {
        // A count that is not a number gets the same error as one below -1, as in Redis.
        count = args::parse_i64(&a[2])
            .filter(|c| *c >= -1)
            .ok_or(crate::error::RedisError::new(error::SLOWLOG_COUNT))?;
    } else if a.len() > 3 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let log = ctx.state.observe.slowlog.lock();
    let n = if count == -1 {
        log.entries.len()
    } else {
        (count as usize).min(log.entries.len())
    };
    Ok(Reply::Array(
        log.entries
            .iter()
            .take(n)
            .map(|e| {
                Reply::Array(vec![
                    Reply::Int(e.id as i64),
                    Reply::Int(e.time_s),
                    Reply::Int(e.duration_us as i64),
                    Reply::Array(e.args.iter().cloned().map(Reply::Bulk).collect()),
                    Reply::Bulk(e.peer.clone()),
                    Reply::Bulk(e.name.clone()),
                ])
            })
            .collect(),
    ))
}

fn slowlog_len(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(
        ctx.state.observe.slowlog.lock().entries.len() as i64
    ))
}

fn slowlog_reset(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.state.observe.slowlog.lock().entries.clear();
    Ok(Reply::ok())
}

const SLOWLOG_HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

fn slowlog_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(SLOWLOG_HELP))
}
