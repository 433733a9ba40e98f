//! Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT. The four EVAL rows say
//! which script they run and SCRIPT KILL is a kill row (`Runs`): the request path (`dispatch/`)
//! runs scripts holding the server lock and SCRIPT KILL without it.

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::{Command, ScriptCall};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::script::EvalKind;
use bytes::Bytes;

const SCRIPT_SUBS: &[Command] = &[
    Command::new("load", 3, NOSCRIPT | STALE, script_load).doc(
        "scripting",
        "2.6.0",
        "Load the specified Lua script into the script cache.",
    ),
    Command::new("exists", -3, NOSCRIPT, script_exists).doc(
        "scripting",
        "2.6.0",
        "Check existence of scripts in the script cache.",
    ),
    Command::new("flush", -2, NOSCRIPT, script_flush).doc(
        "scripting",
        "2.6.0",
        "Remove all the scripts from the script cache.",
    ),
    Command::script_kill("kill", 2, NOSCRIPT | ALLOW_BUSY, true).doc(
        "scripting",
        "2.6.0",
        "Kill the script currently in execution.",
    ),
    Command::new("debug", 3, NOSCRIPT, script_debug).doc(
        "scripting",
        "3.2.0",
        "Set the debug mode for executed scripts.",
    ),
    Command::new("help", 2, LOADING | STALE, script_help).doc(
        "scripting",
        "5.0.0",
        "Show helpful text about the different subcommands",
    ),
];

pub const COMMANDS: &[Command] = &[
    Command::script(
        "eval",
        -3,
        NOSCRIPT | STALE | SKIP_MONITOR | MAY_REPLICATE,
        ScriptCall::Eval(EvalKind {
            by_sha: false,
            readonly: false,
        }),
    )
    .doc("scripting", "2.6.0", "Execute a Lua script server side"),
    Command::script(
        "evalsha",
        -3,
        NOSCRIPT | STALE | SKIP_MONITOR | MAY_REPLICATE,
        ScriptCall::Eval(EvalKind {
            by_sha: true,
            readonly: false,
        }),
    )
    .doc("scripting", "2.6.0", "Execute a Lua script server side"),
    Command::script(
        "eval_ro",
        -3,
        READONLY | NOSCRIPT | STALE | SKIP_MONITOR,
        ScriptCall::Eval(EvalKind {
            by_sha: false,
            readonly: true,
        }),
    )
    .doc(
        "scripting",
        "7.0.0",
        "Execute a read-only Lua script server side",
    ),
    Command::script(
        "evalsha_ro",
        -3,
        READONLY | NOSCRIPT | STALE | SKIP_MONITOR,
        ScriptCall::Eval(EvalKind {
            by_sha: true,
            readonly: true,
        }),
    )
    .doc(
        "scripting",
        "7.0.0",
        "Execute a read-only Lua script server side",
    ),
    Command::new("script", -2, 0, container)
        .doc(
            "scripting",
            "2.6.0",
            "A container for Lua scripts management commands",
        )
        .subs(SCRIPT_SUBS),
];

fn script_load(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let sha = ctx.state.scripting.load(&a[2])?;
    Ok(Reply::Bulk(Bytes::from(sha)))
}

fn script_exists(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let s = &ctx.state.scripting;
    Ok(Reply::Array(
        a[2..]
            .iter()
            .map(|sha| Reply::Int(s.exists(sha) as i64))
            .collect(),
    ))
}

fn script_flush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 || (a.len() == 3 && !is(&a[2], "sync") && !is(&a[2], "async")) {
        return Err(RedisError::new(error::SCRIPT_FLUSH_OPTION));
    }
    ctx.state.scripting.flush();
    Ok(Reply::ok())
}

/// SCRIPT DEBUG: resplock has no Lua debugger (redis-cli --ldb's protocol, forked sessions),
/// a deliberate difference listed in the README; NO, the state every client is in, is OK.
fn script_debug(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if is(&a[2], "no") {
        Ok(Reply::ok())
    } else if is(&a[2], "yes") || is(&a[2], "sync") {
        Err(RedisError::new(error::SCRIPT_DEBUG_UNSUPPORTED))
    } else {
        Err(RedisError::new(error::SCRIPT_DEBUG_OPTION))
    }
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

fn script_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(
        HELP.iter()
            .map(|l| Reply::Simple(Bytes::from_static(l.as_bytes())))
            .collect(),
    ))
}
