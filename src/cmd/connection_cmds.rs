//! Connection commands: PING, ECHO, SELECT, QUIT, ...

use super::args;
use super::flags::*;
use super::{Command, Ctx};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Command] = &[
    Command::new("ping", -1, FAST | SUBSCRIBED_OK, ping).doc(
        "connection",
        "1.0.0",
        "Returns the server's liveliness response.",
    ),
    Command::new("echo", 2, FAST, echo).doc("connection", "1.0.0", "Returns the given string."),
    Command::new("select", 2, LOADING | STALE | FAST, select).doc(
        "connection",
        "1.0.0",
        "Changes the selected database.",
    ),
    Command::new(
        "quit",
        -1,
        ALLOW_BUSY | NO_AUTH | LOADING | STALE | FAST | SUBSCRIBED_OK,
        quit,
    )
    .doc("connection", "1.0.0", "Closes the connection."),
];

fn ping(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 2 {
        return Err(error::wrong_arity("ping"));
    }
    if super::in_resp2_subscribed_mode(ctx) {
        let msg = a.get(1).cloned().unwrap_or_default();
        return Ok(Reply::Array(vec![
            Reply::bulk_static("pong"),
            Reply::Bulk(msg),
        ]));
    }
    Ok(match a.get(1) {
        Some(m) => Reply::Bulk(m.clone()),
        None => Reply::simple("PONG"),
    })
}

fn echo(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Bulk(a[1].clone()))
}

fn select(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let n = args::parse_i64(&a[1]).ok_or(RedisError::new(error::NOT_INTEGER))?;
    if n < 0 || n as usize >= ctx.shared.keyspace.databases() {
        return Err(RedisError::new(error::DB_INDEX_OUT_OF_RANGE));
    }
    ctx.client.select(n as usize);
    Ok(Reply::ok())
}

fn quit(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.client.close_after_reply = true;
    Ok(Reply::ok())
}
