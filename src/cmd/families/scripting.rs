//! Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT. The four EVAL rows say
//! which script they run and SCRIPT KILL is a kill row (`Runs`): the request path (`dispatch/`)
//! runs scripts holding the server lock and SCRIPT KILL without it.

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::{Row, ScriptCall};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::script::EvalKind;
use bytes::Bytes;

const SCRIPT_SUBS: &[Row] = &[
    Row::new("load", script_load),
    Row::new("exists", script_exists),
    Row::new("flush", script_flush),
    Row::script_kill("kill", true),
    Row::new("debug", script_debug),
    Row::new("help", script_help),
];

pub const COMMANDS: &[Row] = &[
    Row::script(
        "eval",
        ScriptCall::Eval(EvalKind {
            by_sha: false,
            readonly: false,
        }),
    )
    .flags(MAY_REPLICATE),
    Row::script(
        "evalsha",
        ScriptCall::Eval(EvalKind {
            by_sha: true,
            readonly: false,
        }),
    )
    .flags(MAY_REPLICATE),
    Row::script(
        "eval_ro",
        ScriptCall::Eval(EvalKind {
            by_sha: false,
            readonly: true,
        }),
    ),
    Row::script(
        "evalsha_ro",
        ScriptCall::Eval(EvalKind {
            by_sha: true,
            readonly: true,
        }),
    ),
    Row::new("script", container).subs(SCRIPT_SUBS),
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

/// SCRIPT DEBUG YES|SYNC|NO: the client's next EVAL runs under the Lua debugger
/// (`script/ldb.rs`), which talks to the client's socket itself, so a TLS connection cannot
/// debug. YES runs as SYNC (docs/differences.md).
fn script_debug(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    use crate::cmd::runtime::client::LuaDebug;
    use std::sync::atomic::Ordering;
    if ctx.client.info.extra.mem.obuf.load(Ordering::Relaxed) > 0 {
        return Err(RedisError::new(error::SCRIPT_DEBUG_PIPELINE));
    }
    let mode = if is(&a[2], "no") {
        LuaDebug::Off
    } else if is(&a[2], "yes") {
        LuaDebug::Yes
    } else if is(&a[2], "sync") {
        LuaDebug::Sync
    } else {
        return Err(RedisError::new(error::SCRIPT_DEBUG_OPTION));
    };
    if mode != LuaDebug::Off && ctx.client.socket_fd.is_none() {
        return Err(RedisError::new(error::SCRIPT_DEBUG_UNSUPPORTED));
    }
    ctx.client.lua_debug = mode;
    Ok(Reply::ok())
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
