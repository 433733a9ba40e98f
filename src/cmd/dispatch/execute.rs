//! How a request runs: checks (authentication, subscribed mode), then the command holding the
//! server lock ([`crate::cmd::runtime::lock`]): ordinary commands, scripts and (next) transactions
//! alike, so each is atomic and isolated as in Redis. The connection hands every request here and
//! knows nothing of locks or scripts.
//!
//! A script runs on the worker that received it, so a short script costs no thread hand-off; a long
//! one hands the worker's other tasks to another thread from the Lua hook (`hand_off_if_long`) so
//! BUSY, SCRIPT KILL and SHUTDOWN stay served.

use crate::cmd::base::flags;
use crate::cmd::families::transactions as multi;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::handoff;
use crate::cmd::runtime::lock::script_busy;
use crate::cmd::runtime::lock::Held;
use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::script_runner::{before_script, run_script, script_call};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Check and run one request from a network client. The checks are Redis's processCommand's,
/// in its order; inside MULTI a command that passes them is queued instead of run
/// ([`crate::cmd::families::transactions`]), and one that fails them makes EXEC abort.
pub async fn execute(state: &Arc<ServerState>, client: &mut Client, args: Vec<Bytes>) -> Reply {
    state.stats.total_commands.fetch_add(1, Ordering::Relaxed);
    if state.test_commands && crate::cmd::testctl::faults::is_test_request(&args) {
        // A control connection: faults spare it unless they name it.
        client.info.control.store(true, Ordering::Relaxed);
    }
    if state.faults.armed()
        && !crate::cmd::testctl::faults::is_test_request(&args)
        && !crate::cmd::testctl::faults::is_handshake(&args)
    {
        if client.info.refused.load(Ordering::Relaxed) {
            if state.faults.refusing() && !client.info.control.load(Ordering::Relaxed) {
                // Accepted while the node was unreachable: closed before its first request.
                client.close_after_reply = true;
                return Reply::NoReply;
            }
            client.info.refused.store(false, Ordering::Relaxed);
        }
        // A paused server answers nothing, not even errors, until the pause ends.
        if !crate::cmd::testctl::faults::wait_while_paused(state, client).await {
            client.close_after_reply = true;
            return Reply::NoReply;
        }
    }
    let (cmd, parent) = match state.commands.resolve_for(state.test_commands, &args) {
        Ok(c) => c,
        Err(e) => {
            crate::cmd::runtime::observe::count_refused_lookup(state, &args);
            // EXEC with arguments aborts the transaction like any other refused EXEC.
            let exec = state
                .commands
                .lookup(&args[0])
                .filter(|c| multi::is_exec(c, None));
            return reject(state, client, exec.map(|c| (c, None)), e);
        }
    };
    // Redis refuses a protected command (DEBUG; MODULE LOAD, LOADEX, UNLOAD) right after the
    // arity check, before authentication, unless enable-debug-command (enable-module-command)
    // allows this client; in MULTI the refusal makes EXEC abort, like any other.
    if cmd.has(flags::PROTECTED) {
        let module = parent.is_some_and(|p| p.name == "module");
        let (allowed, text) = {
            let config = state.config.read();
            if module {
                (config.enable_module_command, error::MODULE_NOT_ALLOWED)
            } else {
                (config.enable_debug_command, error::DEBUG_NOT_ALLOWED)
            }
        };
        if !allowed.allows(client.info.is_local()) {
            return reject(state, client, Some((cmd, parent)), RedisError::new(text));
        }
    }
    crate::cmd::runtime::persist::wait_for_start(state).await;
    // One read of the clock gives the command's time and the start of its duration (for
    // commandstats and the slow log); the previous command of a pipeline lends its end.
    let system = match std::mem::take(&mut client.recent_us) {
        0 => crate::clock::system_us(),
        t => t,
    };
    client.started_us = system;
    let now = state.clock.at_us(system).div_euclid(1000);
    client.info.touch(parent.map(|p| &p.name), &cmd.name, now);
    let rejected = |e| Some((cmd, parent, RedisError::new(e)));
    let refusal = if !client.authenticated
        && !cmd.has(flags::NO_AUTH)
        && !parent.is_some_and(|p| p.has(flags::NO_AUTH))
    {
        rejected(error::NOAUTH)
    } else if client.multi.is_some() && cmd.has(flags::NO_MULTI) {
        rejected(error::NOT_ALLOWED_IN_MULTI)
    } else if let Some(e) = pubsub_context_error(client, cmd, parent) {
        Some((cmd, parent, e))
    } else if let Err(e) =
        crate::cmd::runtime::acl::check_command(state, client, cmd, parent, &args)
    {
        Some((cmd, parent, e))
    } else if let Some(e) =
        crate::cmd::runtime::persist::disk_error(state, writes(state, client, cmd, parent), cmd)
    {
        Some((cmd, parent, e))
    } else {
        crate::cmd::runtime::persist::loading_error(state, cmd, parent).map(|e| (cmd, parent, e))
    };
    if let Some((cmd, parent, e)) = refusal {
        return reject(state, client, Some((cmd, parent)), e);
    }
    // A cluster node routes the request here, after ACL as Redis does (one test outside
    // cluster mode).
    if let Some(node) = &state.cluster {
        match super::cluster::step(state, node, client, cmd, parent, &args).await {
            super::cluster::Step::Continue => {}
            super::cluster::Step::Answer(reply) => return reply,
            super::cluster::Step::Refuse(e) => {
                return reject(state, client, Some((cmd, parent)), e)
            }
        }
    }
    if client.multi.is_some()
        && !multi::runs_in_multi(cmd, parent)
        && crate::cmd::runtime::evict::queuing_refused(state)
    {
        // Queuing in MULTI may consume memory without bound: refused when out of memory.
        return reject(
            state,
            client,
            Some((cmd, parent)),
            RedisError::new(error::OOM),
        );
    }
    if crate::cmd::testctl::faults::applies(state, cmd, parent) {
        return run_with_fault(state, client, cmd, parent, args).await;
    }
    run_checked(state, client, cmd, parent, args, now).await
}

/// Redis's is_write_command: a write row, or EXEC of a transaction that queued one.
fn writes(state: &ServerState, client: &Client, cmd: &Command, parent: Option<&Command>) -> bool {
    cmd.has(flags::WRITE)
        || (multi::is_exec(cmd, parent)
            && client.multi.as_ref().is_some_and(|m| {
                m.queued
                    .iter()
                    .any(|q| state.commands.every_row()[q.row].0.has(flags::WRITE))
            }))
}

/// A request under an injected fault ([`crate::cmd::runtime::fault_table`]): held while the server
/// is paused, then failed, dropped, run and delayed, or run and its reply lost, as the first
/// matching rule says.
async fn run_with_fault(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: Vec<Bytes>,
) -> Reply {
    use crate::cmd::runtime::fault_table::Verdict;
    let verdict = state.faults.check(
        client.id,
        cmd.name,
        parent.map(|p| p.name),
        crate::cmd::testctl::faults::is_handshake(&args),
    );
    let now = state.clock.now_ms();
    match verdict {
        None => run_checked(state, client, cmd, parent, args, now).await,
        Some(Verdict::Error(e)) => reject(
            state,
            client,
            Some((cmd, parent)),
            RedisError::from_bytes(e.to_vec()),
        ),
        Some(Verdict::Drop) => {
            client.close_after_reply = true;
            Reply::NoReply
        }
        Some(Verdict::DropAfter) => {
            let _ = run_checked(state, client, cmd, parent, args, now).await;
            client.close_after_reply = true;
            Reply::NoReply
        }
        Some(Verdict::Delay(d)) => {
            let reply = run_checked(state, client, cmd, parent, args, now).await;
            tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = client.info.kill.cancelled() => {}
                _ = state.shutdown.cancelled() => {}
            }
            reply
        }
    }
}

/// A request that passed the checks: queued inside MULTI, or run holding the server lock.
async fn run_checked(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: Vec<Bytes>,
    mut now: i64,
) -> Reply {
    // A pause holds the command back here, before queuing, as Redis's processCommand: EXEC
    // of a transaction with a write waits for a WRITE pause to end.
    let exec_writes = multi::is_exec(cmd, parent)
        && client.multi.as_ref().is_some_and(|m| {
            m.queued.iter().any(|q| {
                let cmd = state.commands.every_row()[q.row].0;
                crate::cmd::runtime::pause::may_replicate(state, cmd, &q.args, false)
            })
        });
    if !crate::cmd::runtime::pause::wait_if_paused(state, client, cmd, &args, exec_writes).await {
        return Reply::NoReply;
    }
    if client.multi.is_some() && !multi::runs_in_multi(cmd, parent) {
        // Queuing touches nothing shared, so it takes no lock; a busy script still refuses
        // it, as Redis checks BUSY before queuing.
        if script_busy(state) && !cmd.has(flags::ALLOW_BUSY) {
            return reject(
                state,
                client,
                Some((cmd, parent)),
                RedisError::new(error::BUSY),
            );
        }
        return multi::queue(state, client, cmd, args);
    }
    if cmd.has(flags::SCRIPT_RUNNER) {
        return run_script_command(state, client, cmd, parent, args).await;
    }
    let (held, waited) = match acquire(state, cmd).await {
        Ok(held) => held,
        Err(e) => return reject(state, client, Some((cmd, parent)), e),
    };
    if waited {
        // Time passed while waiting for the lock: the command sees the clock as it runs.
        let system = crate::clock::system_us();
        client.started_us = system;
        now = state.clock.at_us(system).div_euclid(1000);
    }
    if held.is_some() {
        // EXEC counts as denyoom when a queued command is (Redis's mstate.cmd_flags).
        let queued_denyoom = multi::is_exec(cmd, parent)
            && client.multi.as_ref().is_some_and(|m| {
                m.queued
                    .iter()
                    .any(|q| state.commands.every_row()[q.row].0.has(flags::DENYOOM))
            });
        if let Err(e) =
            crate::cmd::runtime::evict::before_command(state, cmd, parent, queued_denyoom)
        {
            drop(held);
            return reject(state, client, Some((cmd, parent)), e);
        }
    }
    let mut ctx = Ctx {
        state,
        client,
        now,
        in_script: false,
        in_exec: false,
    };
    let reply = crate::cmd::runtime::call::call(&mut ctx, cmd, &args);
    if held.is_some() {
        // What this command (or the transaction it ran) pushed wakes blocked clients now,
        // before anyone else runs.
        crate::cmd::runtime::blocking::serve_ready(state);
    }
    drop(held);
    reply
}

/// Redis's rejectCommand: the error, and a transaction in progress is marked failed; EXEC
/// itself rejected discards the transaction with EXECABORT and the reason.
fn reject(
    state: &ServerState,
    client: &mut Client,
    cmd: Option<(&Command, Option<&Command>)>,
    e: RedisError,
) -> Reply {
    if let Some((c, p)) = cmd {
        crate::cmd::runtime::observe::count_rejected(state, c, p);
    }
    if cmd.is_some_and(|(c, p)| multi::is_exec(c, p)) {
        return multi::abort(state, client, &e);
    }
    multi::flag(client);
    Reply::error(e)
}

/// Take the server lock for `cmd`: at once, or after a short holder, or asynchronously
/// behind a script. `Ok(None)`: a script is past busy-reply-threshold and `cmd` may run
/// meanwhile without the lock (ALLOW_BUSY: handshake, SCRIPT KILL, SHUTDOWN). `Err`: BUSY.
/// The flag says whether it had to wait (then the caller's reading of the clock is stale).
async fn acquire<'a>(
    state: &'a ServerState,
    cmd: &Command,
) -> Result<(Option<Held<'a>>, bool), RedisError> {
    if let Some(h) = state.lock.try_lock() {
        return Ok((Some(h), false));
    }
    loop {
        if let Some(h) = state.lock.lock_briefly() {
            return Ok((Some(h), true));
        }
        if script_busy(state) {
            if cmd.has(flags::ALLOW_BUSY) {
                return Ok((None, true));
            }
            return Err(state.scripting.busy_error());
        }
        state.lock.released().await;
    }
}

/// RESP2 subscribed mode allows only a few commands.
fn pubsub_context_error(
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
) -> Option<RedisError> {
    if client.resp != 2 || client.subscription_count() == 0 {
        return None;
    }
    if cmd.has(flags::SUBSCRIBED_OK) || parent.is_some_and(|p| p.has(flags::SUBSCRIBED_OK)) {
        return None;
    }
    Some(error::pubsub_context(
        &crate::cmd::runtime::table::fullname(parent, cmd),
    ))
}

/// Rows flagged SCRIPT_RUNNER: EVAL, FCALL and friends run holding the server lock for the
/// whole script; SCRIPT KILL and FUNCTION KILL run without it.
async fn run_script_command(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: Vec<Bytes>,
) -> Reply {
    if cmd.name == "kill" {
        let eval = parent.is_some_and(|p| p.name == "script");
        return match script_kill(state, eval).await {
            Ok(()) => Reply::ok(),
            Err(e) => Reply::error(e),
        };
    }
    // Scripts feed MONITOR before they run, so their own calls come after them.
    crate::cmd::runtime::observe::feed_before_script(state, client, &args);
    let Some(kind) = script_call(cmd) else {
        return Reply::error(error::unknown_command(&args[0], &args[1..]));
    };
    if handoff::runs_inline() {
        // The script runs on this worker: a thread handoff per script costs more than a
        // typical script. A long one hands the worker's other tasks off from the hook
        // (see `hand_off_if_long`), so nothing waits behind it for more than about
        // INLINE_GRACE.
        let held = match acquire(state, cmd).await {
            Ok((Some(held), _)) => held,
            Ok((None, _)) => return Reply::error(state.scripting.busy_error()),
            Err(e) => return Reply::error(e),
        };
        if let Err(e) = before_script(state, cmd, kind, &args) {
            return Reply::error(e);
        }
        state.acl.script_user.lock().clone_from(&client.user);
        let started = Instant::now();
        handoff::set_inline_since(Some(started));
        crate::cmd::runtime::tracking::script_started(state, client.id);
        let history = lock_history::on(state);
        let began = crate::clock::system_us();
        if history {
            lock_history::before_script(state, &args);
        }
        let reply = run_script(state, client.db, client.cluster_flags, kind, &args);
        if history {
            let (sha, function) = lock_history::script_origin(cmd, &args);
            let who = lock_history::client_ref(client);
            lock_history::after_request(state, &who, &sha, &function, began);
        }
        crate::cmd::runtime::tracking::script_finished(state, client.id, &args);
        handoff::set_inline_since(None);
        crate::cmd::runtime::observe::after_script(
            state,
            client,
            cmd,
            &args,
            &reply,
            started.elapsed(),
        );
        crate::cmd::runtime::blocking::serve_ready(state);
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
    let task = tokio::task::spawn_blocking(move || {
        let _held = sh.lock.lock_blocking();
        if let Err(e) = before_script(&sh, cmd, kind, &args) {
            return Reply::error(e);
        }
        *sh.acl.script_user.lock() = user;
        let history = lock_history::on(&sh);
        let began = crate::clock::system_us();
        if history {
            lock_history::before_script(&sh, &args);
        }
        let reply = run_script(&sh, db, origin, kind, &args);
        if history {
            let (sha, function) = lock_history::script_origin(cmd, &args);
            lock_history::after_request(&sh, &who, &sha, &function, began);
        }
        crate::cmd::runtime::blocking::serve_ready(&sh);
        reply
    });
    match task.await {
        Ok(r) => r,
        Err(_) => Reply::Error(Bytes::from_static(b"ERR script execution failed")),
    }
}

/// SCRIPT KILL (`eval`) or FUNCTION KILL. As in Redis, a kill sent before the script passed
/// busy-reply-threshold is only served once it has (or once the script ended: NOTBUSY).
async fn script_kill(state: &ServerState, eval: bool) -> Result<(), RedisError> {
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
