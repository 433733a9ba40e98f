//! Script rows on the request path: a script holds the server lock for its whole run, on the
//! worker that received it (a long one hands the worker's other tasks off from the Lua hook,
//! `runtime/handoff.rs`), or on a blocking thread under a current-thread runtime; SCRIPT KILL
//! and FUNCTION KILL wait for a script past busy-reply-threshold without the lock.

use crate::cmd::dispatch::acquire::acquire;
use crate::cmd::runtime::client::{Client, LuaDebug};
use crate::cmd::runtime::evict::before_script;
use crate::cmd::runtime::handoff;
use crate::cmd::runtime::lock::script_busy;
use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::script_flags::ScriptFlags;
use crate::cmd::runtime::script_runner::run_script;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{Command, ScriptCall};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// A script row (EVAL, FCALL and their forms): the script runs holding the server lock for its
/// whole run. `script` holds its flags if the request already looked them up.
pub(super) async fn run_script_command(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    kind: ScriptCall,
    args: &mut Vec<Bytes>,
    script: ScriptFlags,
) -> Reply {
    // Scripts feed MONITOR before they run, so their own calls come after them.
    crate::cmd::runtime::observe::feed_before_script(state, client, args);
    let debug = match debug_session(state, client, kind, args) {
        Ok(d) => d,
        Err(e) => return Reply::error(e),
    };
    let debugging = debug.is_some();
    let reply = run_with(state, client, cmd, kind, args, script, debug).await;
    if debugging {
        // evalGenericCommandWithDebugging's end: the client is closed after this reply.
        crate::log::warning("Redis synchronous debugging eval session ended");
        client.close_after_reply = true;
    }
    reply
}

/// The Lua debugger's session for this EVAL if the client asked for one (SCRIPT DEBUG YES
/// or SYNC), over the client's own socket; EVALSHA is refused in that mode.
fn debug_session(
    state: &ServerState,
    client: &Client,
    kind: ScriptCall,
    args: &[Bytes],
) -> Result<Option<crate::script::DebugSession>, RedisError> {
    let ScriptCall::Eval(k) = kind else {
        return Ok(None);
    };
    let (LuaDebug::Yes | LuaDebug::Sync) = client.lua_debug else {
        return Ok(None);
    };
    let Some(fd) = client.socket_fd else {
        return Ok(None);
    };
    if k.by_sha {
        return Err(RedisError::new(if args[1].len() != 40 {
            error::NOSCRIPT
        } else {
            error::SCRIPT_DEBUG_EVALSHA
        }));
    }
    crate::log::warning("Redis synchronous debugging eval session started");
    Ok(Some(crate::script::DebugSession {
        conn: Box::new(crate::cmd::runtime::debug_conn::FdConn(fd)),
        timeout_ms: state.config.read().busy_reply_threshold_ms,
    }))
}

/// A script request served at once by `execute::execute_now`, the caller holding the server
/// lock: one that runs on this worker and has no debugging session (the caller checked).
pub(super) fn run_now(
    state: &ServerState,
    client: &mut Client,
    cmd: &'static Command,
    kind: ScriptCall,
    args: &[Bytes],
) -> Reply {
    debug_assert!(client.scripts_inline == Some(true) && matches!(client.lua_debug, LuaDebug::Off));
    crate::cmd::runtime::observe::feed_before_script(state, client, args);
    let mut script = ScriptFlags::of(cmd);
    run_inline(state, client, cmd, kind, args, &mut script, None, false)
}

/// A script run on this worker, the caller holding the server lock (taken for it, or kept by
/// a run of requests: `execute::Batch`); `waited`: the lock was not free at once, so the
/// request's clock reading is stale.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_inline(
    state: &ServerState,
    client: &mut Client,
    cmd: &'static Command,
    kind: ScriptCall,
    args: &[Bytes],
    script: &mut ScriptFlags,
    debug: Option<crate::script::DebugSession>,
    waited: bool,
) -> Reply {
    if let Err(e) = before_script(state, cmd, script.get(state, args)) {
        return Reply::error(e);
    }
    state.acl.script_user.set(&client.user);
    let started = crate::clock::mono_ns();
    handoff::set_inline_since(Some(started));
    crate::cmd::runtime::tracking::script_started(state, client.id);
    let history = lock_history::on(state);
    // The script's time is the request's (read by `execute`, or lent by the command
    // before it in a pipeline), unless it waited for the lock: a clock read is a few
    // percent of a pipelined lock script, and this path made three.
    let began = match std::mem::take(&mut client.started_us) {
        t if t != 0 && !waited => t,
        _ => crate::clock::system_us(),
    };
    if history {
        lock_history::before_script(state, args);
    }
    let (reply, counted) = run_script(
        state,
        client.db,
        client.cluster_flags,
        kind,
        args,
        began,
        debug,
    );
    client.error_counted = counted;
    if history {
        let (sha, function) = lock_history::script_origin(cmd, args);
        let who = lock_history::client_ref(client);
        lock_history::after_request(state, &who, &sha, &function, began);
    }
    crate::cmd::runtime::tracking::script_finished(state, client.id, args);
    handoff::set_inline_since(None);
    // Timed on the system clock as call() times it; the end is lent to the next request.
    let ended = crate::clock::system_us();
    client.recent_us = ended;
    crate::cmd::runtime::observe::after_script(
        state,
        client,
        cmd,
        args,
        &reply,
        Duration::from_micros(ended.saturating_sub(began).max(0) as u64),
    );
    crate::cmd::runtime::blocking::serve_ready(state);
    reply
}

/// The run itself, inline on this worker or on a blocking thread.
async fn run_with(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    kind: ScriptCall,
    args: &mut Vec<Bytes>,
    mut script: ScriptFlags,
    debug: Option<crate::script::DebugSession>,
) -> Reply {
    if *client.scripts_inline.get_or_insert_with(handoff::runs_inline) {
        // The script runs on this worker: a thread handoff per script costs more than a
        // typical script. A long one hands the worker's other tasks off from the hook
        // (see `hand_off_if_long`), so nothing waits behind it for more than about
        // INLINE_GRACE.
        let (held, waited) = match acquire(state, cmd).await {
            Ok((Some(held), waited)) => {
                if waited {
                    // Others ran meanwhile (a FUNCTION LOAD among them, perhaps).
                    script.forget();
                }
                (held, waited)
            }
            Ok((None, _)) => return Reply::error(state.scripting.busy_error()),
            Err(e) => return Reply::error(e),
        };
        let reply = run_inline(state, client, cmd, kind, args, &mut script, debug, waited);
        drop(held);
        return reply;
    }
    // A current-thread runtime (embedded use) has no other worker to serve BUSY meanwhile:
    // the script takes the lock on a blocking thread instead.
    if script_busy(state) {
        return Reply::error(state.scripting.busy_error());
    }
    let sh = state.clone();
    let db = client.db;
    let origin = client.cluster_flags;
    let user = client.user.clone();
    let who = lock_history::client_ref(client);
    let args = std::mem::take(args);
    let task = tokio::task::spawn_blocking(move || {
        let _held = sh.lock.lock_blocking();
        script.forget();
        if let Err(e) = before_script(&sh, cmd, script.get(&sh, &args)) {
            return (Reply::error(e), false);
        }
        sh.acl.script_user.set(&user);
        let history = lock_history::on(&sh);
        let began = crate::clock::system_us();
        if history {
            lock_history::before_script(&sh, &args);
        }
        let (reply, counted) = run_script(&sh, db, origin, kind, &args, began, debug);
        if history {
            let (sha, function) = lock_history::script_origin(cmd, &args);
            lock_history::after_request(&sh, &who, &sha, &function, began);
        }
        crate::cmd::runtime::blocking::serve_ready(&sh);
        (reply, counted)
    });
    match task.await {
        Ok((r, counted)) => {
            client.error_counted = counted;
            r
        }
        Err(_) => Reply::Error(Bytes::from_static(b"ERR script execution failed")),
    }
}

/// SCRIPT KILL (`eval`) or FUNCTION KILL, served without the lock. As in Redis, a kill sent
/// before the script passed busy-reply-threshold is only served once it has (or once the
/// script ended: NOTBUSY).
pub(super) async fn script_kill(state: &ServerState, eval: bool) -> Reply {
    match kill_when_busy(state, eval).await {
        Ok(()) => Reply::ok(),
        Err(e) => Reply::error(e),
    }
}

async fn kill_when_busy(state: &ServerState, eval: bool) -> Result<(), RedisError> {
    loop {
        let Some(ran) = state.scripting.running_for() else {
            return Err(RedisError::new(error::NOTBUSY));
        };
        let threshold = state.config.read().busy_reply_threshold_ms;
        if threshold > 0 && ran.as_millis() as u64 >= threshold {
            return state.scripting.kill(eval);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
