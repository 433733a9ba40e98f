//! SLOWLOG GET/LEN/RESET/HELP and the log itself (Redis's slowlog.c): commands that ran at
//! least `slowlog-log-slower-than` microseconds, newest first, at most `slowlog-max-len`,
//! with long argument lists and long arguments trimmed and secrets redacted as Redis does.

use crate::cmd::base::args;
use crate::cmd::base::flags::*;
use crate::cmd::families::connection::help_reply;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Command;
use crate::error;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::collections::VecDeque;

pub const COMMANDS: &[Command] = &[Command::new("slowlog", -2, 0, container)
    .subs(SLOWLOG_SUBS)
    .doc("server", "2.2.12", "A container for slow log commands")];

const SLOWLOG_SUBS: &[Command] = &[
    Command::new("get", -2, ADMIN | LOADING | STALE, slowlog_get).doc(
        "server",
        "2.2.12",
        "Get the slow log's entries",
    ),
    Command::new("len", 2, ADMIN | LOADING | STALE, slowlog_len).doc(
        "server",
        "2.2.12",
        "Get the slow log's length",
    ),
    Command::new("reset", 2, ADMIN | LOADING | STALE, slowlog_reset).doc(
        "server",
        "2.2.12",
        "Clear all entries from the slow log",
    ),
    Command::new("help", 2, LOADING | STALE, slowlog_help).doc(
        "server",
        "6.2.0",
        "Show helpful text about the different subcommands",
    ),
];

/// Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING.
const MAX_ARGC: usize = 32;
const MAX_STRING: usize = 128;

/// One logged command.
pub struct Entry {
    id: u64,
    time_s: i64,
    duration_us: u64,
    args: Vec<Bytes>,
    peer: Bytes,
    name: Bytes,
}

/// The slow log, newest entry first.
#[derive(Default)]
pub struct SlowLog {
    entries: VecDeque<Entry>,
    next_id: u64,
}

/// Log the command a client ran if it took `us` microseconds or more than the threshold.
pub fn push_if_slow(state: &ServerState, client: &Client, argv: &[Bytes], us: u64) {
    let (threshold, max_len) = state.observe.slowlog_settings();
    if threshold < 0 || us < threshold as u64 {
        return;
    }
    let shown = trimmed(&redacted(argv));
    let entry = Entry {
        id: 0,
        time_s: state.clock.now_ms() / 1000,
        duration_us: us,
        args: shown,
        peer: Bytes::from(client.info.addr.clone()),
        name: client.info.name.lock().clone().unwrap_or_default(),
    };
    let mut log = state.observe.slowlog.lock();
    let id = log.next_id;
    log.next_id += 1;
    log.entries.push_front(Entry { id, ..entry });
    log.entries.truncate(max_len);
}

/// At most 32 arguments (the last saying how many more there were), each at most 128 bytes
/// (with how many more there were).
fn trimmed(argv: &[Bytes]) -> Vec<Bytes> {
    let argc = argv.len().min(MAX_ARGC);
    let mut out = Vec::with_capacity(argc);
    for (j, a) in argv.iter().take(argc).enumerate() {
        if argc != argv.len() && j == argc - 1 {
            out.push(Bytes::from(format!(
                "... ({} more arguments)",
                argv.len() - argc + 1
            )));
        } else if a.len() > MAX_STRING {
            let mut s = a[..MAX_STRING].to_vec();
            s.extend_from_slice(format!("... ({} more bytes)", a.len() - MAX_STRING).as_bytes());
            out.push(Bytes::from(s));
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// The arguments as the slow log and MONITOR show them: passwords and other secrets
/// replaced by `(redacted)`, as Redis's commands redact their own arguments.
pub fn redacted(argv: &[Bytes]) -> Vec<Bytes> {
    let red = || Bytes::from_static(b"(redacted)");
    let mut out = argv.to_vec();
    let is = |i: usize, s: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(s.as_bytes()))
    };
    if is(0, "auth") {
        for a in out.iter_mut().skip(1) {
            *a = red();
        }
    } else if is(0, "hello") {
        let mut i = 2;
        while i < argv.len() {
            if is(i, "auth") && i + 2 < argv.len() {
                out[i + 1] = red();
                out[i + 2] = red();
                i += 3;
            } else {
                i += 1;
            }
        }
    } else if is(0, "config") && is(1, "set") {
        let mut i = 2;
        while i + 1 < argv.len() {
            if crate::config::is_sensitive(&argv[i]) {
                out[i + 1] = red();
            }
            i += 2;
        }
    } else if is(0, "acl") && is(1, "setuser") {
        for a in out.iter_mut().skip(3) {
            *a = red();
        }
    } else if is(0, "migrate") {
        let mut i = 6;
        while i < argv.len() {
            if is(i, "auth") && i + 1 < argv.len() {
                out[i + 1] = red();
                i += 2;
            } else if is(i, "auth2") && i + 2 < argv.len() {
                out[i + 1] = red();
                out[i + 2] = red();
                i += 3;
            } else {
                i += 1;
            }
        }
    }
    out
}

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
