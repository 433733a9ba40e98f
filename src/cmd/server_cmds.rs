//! Server commands without a family of their own: TIME, WAIT, SHUTDOWN, LASTSAVE.

use super::args::{self, is};
use super::flags::*;
use super::{Command, Ctx};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Command] = &[
    Command::new("time", 1, LOADING | STALE | FAST, time).doc(
        "server",
        "2.6.0",
        "Return the current server time",
    ),
    Command::new("wait", 3, NOSCRIPT, wait).doc(
        "generic",
        "3.0.0",
        "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
    ),
    Command::new(
        "shutdown",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
        shutdown,
    )
    .doc(
        "server",
        "1.0.0",
        "Synchronously save the dataset to disk and then shut down the server",
    ),
    Command::new("lastsave", 1, LOADING | STALE | FAST, lastsave).doc(
        "server",
        "1.0.0",
        "Get the UNIX time stamp of the last successful save to disk",
    ),
];

fn time(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let us = ctx.state.clock.now_us();
    Ok(Reply::Array(vec![
        Reply::bulk((us / 1_000_000).to_string()),
        Reply::bulk((us % 1_000_000).to_string()),
    ]))
}

/// WAIT: there are never replicas, so it answers 0 at once.
fn wait(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    args::int(&a[1])?;
    let t = args::parse_i64(&a[2])
        .ok_or_else(|| error::err("ERR timeout is not an integer or out of range"))?;
    if t < 0 {
        return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
    }
    Ok(Reply::Int(0))
}

/// SHUTDOWN: stop the server; the caller's connection closes without a reply, as in Redis.
fn shutdown(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (mut save, mut nosave, mut abort, mut other) = (false, false, false, false);
    for o in &a[1..] {
        if is(o, "nosave") {
            nosave = true;
        } else if is(o, "save") {
            save = true;
        } else if is(o, "now") || is(o, "force") {
            other = true;
        } else if is(o, "abort") {
            abort = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if (abort && (save || nosave || other)) || (save && nosave) {
        return Err(RedisError::new(error::SYNTAX));
    }
    if abort {
        return Err(error::err("ERR No shutdown in progress."));
    }
    // A busy script (even one that wrote, which KILL refuses) is stopped: the server is going
    // away, as Redis exits from inside the script's event processing.
    ctx.state.scripting.abort();
    ctx.state.shutdown.cancel();
    ctx.client.close_after_reply = true;
    Ok(Reply::NoReply)
}

fn lastsave(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(super::info_cmd::start_unix_secs(ctx.state)))
}
