//! The `RESPLOCK.*` family: the test control surface over the wire, so tests in any language
//! can move the server's clock, inject faults and simulate a restart that lost writes, from
//! their own client. The rows exist only for a server started with `enable_test_commands`
//! (`--enable-test-commands yes`); otherwise `CommandTable::resolve_for` answers exactly as for
//! an unknown command. They are not listed by COMMAND, cannot be called from scripts, and
//! are never held back by the faults they set.
//!
//! ```text
//! RESPLOCK.CLOCK GET | ADVANCE ms | SET unix-ms | FREEZE | RESUME | RESET
//! RESPLOCK.FAULT ERROR "ERR text" [target] [COUNT n]     -> rule id
//! RESPLOCK.FAULT DELAY ms [target] [COUNT n]             -> rule id
//! RESPLOCK.FAULT DROP | DROP-AFTER [target] [COUNT n]    -> rule id
//!    target: COMMAND name | MATCH pattern | CLIENT id (default: every command)
//! RESPLOCK.FAULT PAUSE ms | UNPAUSE
//! RESPLOCK.FAULT DISCONNECT [ALL | ID id | NAME name | ADDR ip:port | OTHERS]  -> count
//! RESPLOCK.FAULT REFUSE-CONNECTIONS yes|no
//! RESPLOCK.FAULT LIST | CLEAR [id]
//! RESPLOCK.SNAPSHOT [name]
//! RESPLOCK.RESTART [EMPTY | KEEP | FROM name]
//! RESPLOCK.CLUSTER MIGRATE | MOVEKEYS | FAIL | PARTITION | HEAL ...   (cluster nodes)
//! RESPLOCK.HISTORY [KEY] key [COUNT n]     -> this node's events of the key (JSON lines)
//! RESPLOCK.HISTORY EXPORT | STATS | RESET   -> every node's history as JSON lines, figures
//! RESPLOCK.FENCED.WRITE resource token value [CHECK]   -> OK, or STALE when CHECK refuses
//! RESPLOCK.FENCED.READ resource             -> [token, value] or nil
//! RESPLOCK.<any of them> HELP
//! ```
//!
//! None of them can lock a test out (see `runtime/fault_table.rs`): a bare DISCONNECT spares
//! control connections, connection-time commands pass catch-all faults, pauses and refusals.
//!
//! `RESPLOCK.CLUSTER` (see `testctl/cluster.rs`) is run by the request path of a cluster
//! node without the server lock, since it takes the locks of several nodes; its rows' handler
//! only answers on a server that is no cluster node.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::base::flags::*;
use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::fault_table::{Action, Target};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{container, Handler, Row};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::time::Duration;

use crate::cmd::testctl::dataset::{
    freeze_clock, move_clock, restart, resume_clock, take_snapshot, Restore, DEFAULT_SNAPSHOT,
};
use crate::cmd::testctl::faults::noted;
use crate::cmd::testctl::history;

/// Every test command: never from scripts or MULTI, always served (even past a busy script
/// or while the server is paused by a fault).
const TEST: u32 = TEST_ONLY | NOSCRIPT | NO_MULTI | ALLOW_BUSY | LOADING | STALE;

pub const COMMANDS: &[Row] = &[
    test_row(
        "resplock.clock",
        container,
        -2,
        "Move the server's clock (test servers only)",
    )
    .subs(CLOCK_SUBS),
    test_row(
        "resplock.fault",
        container,
        -2,
        "Inject faults (test servers only)",
    )
    .subs(FAULT_SUBS),
    test_row(
        "resplock.snapshot",
        snapshot_cmd,
        -1,
        "Keep a copy of the dataset for RESPLOCK.RESTART (test servers only)",
    ),
    test_row(
        "resplock.restart",
        restart_cmd,
        -1,
        "Simulate a restart without persistence (test servers only)",
    ),
    test_row(
        "resplock.history",
        history_cmd,
        -2,
        "Read the lock history (test servers only)",
    ),
    test_row(
        "resplock.fenced.write",
        fenced_write,
        -2,
        "Write a fenced resource with a fencing token (test servers only)",
    ),
    test_row(
        "resplock.fenced.read",
        fenced_read,
        2,
        "Read a fenced resource (test servers only)",
    ),
    test_row(
        "resplock.cluster",
        container,
        -2,
        "Move slots, fail and partition nodes of an in-process cluster (test servers only)",
    )
    .subs(CLUSTER_SUBS),
];

/// A `RESPLOCK.*` command or subcommand (none is in redis-server's recording, so each
/// describes itself): its arity and COMMAND DOCS's summary.
const fn test_row(name: &'static str, handler: Handler, arity: i32, summary: &'static str) -> Row {
    Row::new(name, handler).own(arity, TEST, (0, 0, 0), "server", "0.1.0", summary)
}

const CLUSTER_SUBS: &[Row] = &[
    test_row("migrate", not_a_cluster, 4, "Move slots"),
    test_row("movekeys", not_a_cluster, -4, "Move keys"),
    test_row("fail", not_a_cluster, 3, "Fail a master"),
    test_row("partition", not_a_cluster, -3, "Cut a node off"),
    test_row("heal", not_a_cluster, 3, "Bring a node back"),
    test_row("help", cluster_help, 2, "Show helpful text"),
];

fn cluster_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(CLUSTER_HELP))
}

/// RESPLOCK.CLUSTER on a server that is no cluster node (a node's request path runs these
/// itself, see `dispatch/cluster.rs`).
fn not_a_cluster(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::CLUSTER_DISABLED))
}

const CLOCK_SUBS: &[Row] = &[
    test_row("get", clock_get, 2, "The clock, Unix ms"),
    test_row("advance", clock_advance, 3, "Move it by ms"),
    test_row("set", clock_set, 3, "Set it to Unix ms"),
    test_row("freeze", clock_freeze, 2, "Stop it"),
    test_row("resume", clock_resume, 2, "Let it run"),
    test_row("reset", clock_reset, 2, "Back to system time"),
    test_row("help", clock_help, 2, "Show helpful text"),
];

/// The `HELP` replies, in Redis's HELP shape (addReplyHelp: the header, the lines, HELP).
const CLOCK_HELP: &[&str] = &[
    "RESPLOCK.CLOCK <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET",
    "    Return the server's clock, in Unix milliseconds.",
    "ADVANCE <milliseconds>",
    "    Move the clock forward: keys whose time to live ran out expire at once, blocked",
    "    commands time out. Returns the new time.",
    "SET <unix-time-milliseconds>",
    "    Set the clock. Returns it.",
    "FREEZE",
    "    Stop the clock: it moves only by ADVANCE and SET.",
    "RESUME",
    "    Let a frozen clock run again from where it stands.",
    "RESET",
    "    Back to the system time, running.",
    "HELP",
    "    Prints this help.",
];

const FAULT_HELP: &[&str] = &[
    "RESPLOCK.FAULT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ERROR <error-line> [<target>] [COUNT <n>]",
    "    Fail matching requests with <error-line> (ERR is put in front of a line that does",
    "    not start with an upper-case code). Returns the rule's id.",
    "DELAY <milliseconds> [<target>] [COUNT <n>]",
    "    Run matching requests, then hold their replies back.",
    "DROP [<target>] [COUNT <n>]",
    "    Close the connection of matching requests without running them.",
    "DROP-AFTER [<target>] [COUNT <n>]",
    "    Run matching requests, then close the connection before the reply.",
    "    <target> is COMMAND <name> | MATCH <pattern> | CLIENT <id> (default: every command).",
    "    HELLO, AUTH, SELECT and CLIENT (sent on connecting) are hit only when named.",
    "PAUSE <milliseconds>",
    "    Answer nothing for a while; connections are kept.",
    "UNPAUSE",
    "    End a pause.",
    "DISCONNECT [ALL|OTHERS|ID <id>|NAME <name>|ADDR <ip:port>]",
    "    Close client connections. ALL (the default) and OTHERS spare connections that",
    "    sent RESPLOCK commands; ID, NAME and ADDR close whichever they name.",
    "REFUSE-CONNECTIONS yes|no",
    "    Close new connections at their first request (RESPLOCK commands and connection",
    "    commands are still served).",
    "LIST",
    "    The rules set: id, action, target, matches left (-1: until cleared).",
    "CLEAR [<id>]",
    "    Remove one rule, or every rule, the pause and the refusal.",
    "HELP",
    "    Prints this help.",
];

const SNAPSHOT_HELP: &[&str] = &[
    "RESPLOCK.SNAPSHOT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "[<name>]",
    "    Keep a copy of the whole dataset under <name> (default: 'default') for",
    "    RESPLOCK.RESTART FROM <name>. Returns the number of keys copied.",
    "HELP",
    "    Prints this help.",
];

const CLUSTER_HELP: &[&str] = &[
    "RESPLOCK.CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "MIGRATE <slot>|<from>-<to> <node>",
    "    Move the slots and their keys to master <node> (a node ID or ip:port).",
    "MOVEKEYS <node> <key> [<key> ...]",
    "    Move these keys to <node>, as MIGRATE of a slot in progress would.",
    "FAIL <node>",
    "    Fail master <node>: its replica takes over. Replies with the new master's ID.",
    "PARTITION <node> [KEEP-CLIENTS]",
    "    Cut <node> off from the other nodes and its clients (KEEP-CLIENTS: only the nodes).",
    "HEAL <node>|ALL",
    "    Bring <node> (or every partitioned node) back after PARTITION or FAIL.",
    "HELP",
    "    Prints this help.",
];

const HISTORY_HELP: &[&str] = &[
    "RESPLOCK.HISTORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "[KEY] <key> [COUNT <n>]",
    "    This node's recorded events of <key>, oldest first, as JSON lines (default 100).",
    "EXPORT",
    "    Every node's history as JSON lines, for `resplock check`.",
    "STATS",
    "    Whether it records, and the events, bytes and dropped events it holds.",
    "RESET",
    "    Forget the recorded history.",
    "HELP",
    "    Prints this help.",
];

const FENCED_WRITE_HELP: &[&str] = &[
    "RESPLOCK.FENCED.WRITE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "<resource> <token> <value> [CHECK]",
    "    Write <value> to a fenced resource with a fencing token. With CHECK, a token",
    "    lower than the highest seen is refused (STALE). RESPLOCK.FENCED.READ reads it.",
    "HELP",
    "    Prints this help.",
];

const FENCED_READ_HELP: &[&str] = &[
    "RESPLOCK.FENCED.READ <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "<resource>",
    "    The [token, value] RESPLOCK.FENCED.WRITE last wrote, or nil.",
    "HELP",
    "    Prints this help.",
];

const RESTART_HELP: &[&str] = &[
    "RESPLOCK.RESTART <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "[EMPTY]",
    "    Simulate a restart without persistence: every connection closes, the script",
    "    cache and the data are gone.",
    "KEEP",
    "    The same, keeping the data.",
    "FROM <name>",
    "    The same, with the data of snapshot <name> (a failover that lost later writes).",
    "HELP",
    "    Prints this help.",
];

fn clock_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(CLOCK_HELP))
}

fn fault_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(FAULT_HELP))
}

const FAULT_SUBS: &[Row] = &[
    test_row("error", fault_error, -3, "Fail requests"),
    test_row("delay", fault_delay, -3, "Delay replies"),
    test_row("drop", fault_drop, -2, "Drop requests"),
    test_row("drop-after", fault_drop_after, -2, "Lose replies"),
    test_row("pause", fault_pause, 3, "Stop answering"),
    test_row("unpause", fault_unpause, 2, "End a pause"),
    test_row("disconnect", fault_disconnect, -2, "Close clients"),
    test_row("refuse-connections", fault_refuse, 3, "Refuse"),
    test_row("list", fault_list, 2, "The rules set"),
    test_row("clear", fault_clear, -2, "Remove rules"),
    test_row("help", fault_help, 2, "Show helpful text"),
];

fn clock_get(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

fn clock_advance(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let ms = args::int(&a[2])?;
    move_clock(ctx.state, "advance", |c| c.advance_ms(ms));
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

fn clock_set(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let ms = args::int(&a[2])?;
    move_clock(ctx.state, "set", |c| c.set_ms(ms));
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

fn clock_freeze(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    freeze_clock(ctx.state);
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

fn clock_resume(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    resume_clock(ctx.state);
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

fn clock_reset(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    move_clock(ctx.state, "reset", |c| c.reset());
    Ok(Reply::Int(ctx.state.clock.now_ms()))
}

// ---------------------------------------------------------------------------------- faults

/// Parse `[COMMAND name | MATCH pattern | CLIENT id] [COUNT n]` from `a`.
fn target_and_count(a: &[Bytes]) -> Result<(Target, Option<u64>), RedisError> {
    let mut target = Target::All;
    let mut count = None;
    let mut args = Args::new(a, 0);
    while !args.is_empty() {
        let Some((opt, val)) = args.pair() else {
            return Err(RedisError::new(error::SYNTAX));
        };
        if is(opt, "command") {
            target = Target::Command(String::from_utf8_lossy(val).to_ascii_lowercase());
        } else if is(opt, "match") {
            target = Target::Match(String::from_utf8_lossy(val).into_owned());
        } else if is(opt, "client") {
            let id = args::long_in(val, 1, i64::MAX, Some(error::INVALID_CLIENT_ID))?;
            target = Target::Client(id as u64);
        } else if is(opt, "count") {
            count = Some(
                args::long_in(val, 1, i64::MAX, Some(error::VALUE_OUT_OF_RANGE_POSITIVE))? as u64,
            );
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    Ok((target, count))
}

/// The request's words after `RESPLOCK.FAULT`, for the lock history.
fn words(a: &[Bytes]) -> String {
    a[1..]
        .iter()
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn add_rule(ctx: &Ctx, action: Action, opts: &[Bytes]) -> CmdResult {
    let (target, count) = target_and_count(opts)?;
    Ok(Reply::Int(
        ctx.state.faults.add(target, action, count) as i64
    ))
}

fn fault_error(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    let text = &a[2];
    if text.is_empty() || text.iter().any(|&b| b == b'\r' || b == b'\n') {
        return Err(RedisError::new(error::TEST_FAULT_ERROR_TEXT));
    }
    add_rule(ctx, Action::Error(error::with_error_code(text)), &a[3..])
}

fn fault_delay(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    let ms = args::non_negative(&a[2], None)?;
    add_rule(
        ctx,
        Action::Delay(Duration::from_millis(ms as u64)),
        &a[3..],
    )
}

fn fault_drop(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    add_rule(ctx, Action::Drop, &a[2..])
}

fn fault_drop_after(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    add_rule(ctx, Action::DropAfter, &a[2..])
}

fn fault_pause(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    let ms = args::non_negative(&a[2], None)?;
    ctx.state.faults.pause(Duration::from_millis(ms as u64));
    Ok(Reply::ok())
}

fn fault_unpause(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    ctx.state.faults.unpause();
    Ok(Reply::ok())
}

fn fault_disconnect(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    use std::sync::atomic::Ordering::Relaxed;
    noted(ctx.state, &words(a));
    // ALL and OTHERS spare control connections (the caller is one): a test that breaks the
    // network keeps its way back. A connection named by ID, NAME or ADDR goes, whatever it is.
    let n = match &a[2..] {
        [] => crate::cmd::testctl::faults::disconnect(ctx.state, |c| !c.control.load(Relaxed)),
        [w] if is(w, "all") || is(w, "others") => {
            crate::cmd::testctl::faults::disconnect(ctx.state, |c| !c.control.load(Relaxed))
        }
        [by, v] if is(by, "id") => {
            let id = args::long_in(v, 1, i64::MAX, Some(error::INVALID_CLIENT_ID))? as u64;
            crate::cmd::testctl::faults::disconnect(ctx.state, |c| c.id == id)
        }
        [by, v] if is(by, "addr") => {
            crate::cmd::testctl::faults::disconnect(ctx.state, |c| c.addr.as_bytes() == &v[..])
        }
        [by, v] if is(by, "name") => crate::cmd::testctl::faults::disconnect(ctx.state, |c| {
            c.name.lock().as_deref() == Some(&v[..])
        }),
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    Ok(Reply::Int(n as i64))
}

fn fault_refuse(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    let on = if is(&a[2], "yes") {
        true
    } else if is(&a[2], "no") {
        false
    } else {
        return Err(RedisError::new(error::SYNTAX));
    };
    ctx.state.faults.refuse_connections(on);
    Ok(Reply::ok())
}

fn fault_list(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let text = |s: String| Reply::Bulk(Bytes::from(s));
    let rules = ctx.state.faults.rules();
    Ok(Reply::Array(
        rules
            .into_iter()
            .map(|r| {
                let target = match r.target {
                    Target::All => "all".to_string(),
                    Target::Command(c) => format!("command {c}"),
                    Target::Match(p) => format!("match {p}"),
                    Target::Client(id) => format!("client {id}"),
                };
                let action = match r.action {
                    Action::Error(e) => format!("error {}", String::from_utf8_lossy(&e)),
                    Action::Delay(d) => format!("delay {}", d.as_millis()),
                    Action::Drop => "drop".to_string(),
                    Action::DropAfter => "drop-after".to_string(),
                };
                let left = r.remaining.map_or(-1, |n| n as i64);
                Reply::Array(vec![
                    Reply::Int(r.id as i64),
                    text(action),
                    text(target),
                    Reply::Int(left),
                ])
            })
            .collect(),
    ))
}

fn fault_clear(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    noted(ctx.state, &words(a));
    let id = match &a[2..] {
        [] => None,
        [id] => Some(args::long_in(id, 1, i64::MAX, None)? as u64),
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    Ok(Reply::Int(ctx.state.faults.clear(id) as i64))
}

fn snapshot_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let name = match &a[1..] {
        [] => DEFAULT_SNAPSHOT.to_string(),
        [w] if is(w, "help") => return Ok(help_reply(SNAPSHOT_HELP)),
        [n] => String::from_utf8_lossy(n).into_owned(),
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    let snap = take_snapshot(ctx.state, &name);
    Ok(Reply::Int(snap.len() as i64))
}

fn restart_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (restore, label) = match &a[1..] {
        [w] if is(w, "help") => return Ok(help_reply(RESTART_HELP)),
        [] => (Restore::Empty, "empty".to_string()),
        [w] if is(w, "empty") => (Restore::Empty, "empty".to_string()),
        [w] if is(w, "keep") => (Restore::Keep, "keep".to_string()),
        [w, name] if is(w, "from") => {
            let name = String::from_utf8_lossy(name);
            match ctx.state.snapshots.lock().get(name.as_ref()) {
                Some(s) => (Restore::From(s.clone()), format!("from {name}")),
                None => return Err(RedisError::new(error::TEST_NO_SUCH_SNAPSHOT)),
            }
        }
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    // The caller's connection goes too, once this reply is written.
    restart(ctx.state, &restore, Some(ctx.client.id), &label);
    ctx.client.close_after_reply = true;
    Ok(Reply::ok())
}

// ---------------------------------------------------------------------------- lock history

/// `RESPLOCK.HISTORY [KEY] key [COUNT n] | EXPORT | STATS | RESET`.
fn history_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let state = ctx.state;
    match &a[1..] {
        [w] if is(w, "help") => Ok(help_reply(HISTORY_HELP)),
        [w] if is(w, "export") => Ok(Reply::Bulk(Bytes::from(
            history::export(state).to_json_lines(),
        ))),
        [w] if is(w, "stats") => {
            let (events, bytes, dropped, on) = history::stats(state);
            let s = |t: &'static str| Reply::Bulk(Bytes::from_static(t.as_bytes()));
            Ok(Reply::Array(vec![
                s("recording"),
                Reply::Int(on as i64),
                s("events"),
                Reply::Int(events as i64),
                s("bytes"),
                Reply::Int(bytes as i64),
                s("dropped"),
                Reply::Int(dropped as i64),
            ]))
        }
        [w] if is(w, "reset") => {
            history::reset(state);
            Ok(Reply::ok())
        }
        _ => {
            let rest = match &a[1..] {
                [w, rest @ ..] if is(w, "key") && !rest.is_empty() => rest,
                rest => rest,
            };
            let (key, count) = match rest {
                [key] => (key, 100),
                [key, c, n] if is(c, "count") => (
                    key,
                    args::long_in(n, 1, i64::MAX, Some(error::VALUE_OUT_OF_RANGE_POSITIVE))?
                        as usize,
                ),
                _ => return Err(RedisError::new(error::SYNTAX)),
            };
            Ok(Reply::Array(
                history::key_lines(state, ctx.client.db, key, count)
                    .into_iter()
                    .map(Reply::Bulk)
                    .collect(),
            ))
        }
    }
}

/// `RESPLOCK.FENCED.WRITE resource token value [CHECK]`.
fn fenced_write(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    match a {
        [_, w] if is(w, "help") => return Ok(help_reply(FENCED_WRITE_HELP)),
        _ if a.len() < 4 => return Err(error::wrong_arity("resplock.fenced.write")),
        _ => {}
    }
    let token = args::int(&a[2])?;
    let check = match &a[4..] {
        [] => false,
        [w] if is(w, "check") => true,
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    history::fenced_write(ctx.state, ctx.client, &a[1], token, &a[3], check)?;
    Ok(Reply::ok())
}

/// `RESPLOCK.FENCED.READ resource` -> `[token, value]`, or nil before any write.
fn fenced_read(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if is(&a[1], "help") {
        return Ok(help_reply(FENCED_READ_HELP));
    }
    Ok(match history::fenced_read(ctx.state, &a[1]) {
        Some((token, value)) => Reply::Array(vec![Reply::Int(token), Reply::Bulk(value)]),
        None => Reply::Nil,
    })
}
