//! How a request runs: Redis's processCommand checks in its order (unknown command, arity,
//! protected commands, authentication, MULTI, RESP2 subscribed mode, ACL, OOM while queuing),
//! then faults (`fault_injection.rs`), CLIENT PAUSE, MULTI queuing (`multi_queue.rs`), and the
//! command holding the server lock (`acquire.rs`; scripts in `scripts.rs`): ordinary commands,
//! scripts and transactions alike, so each is atomic and isolated as in Redis. The connection
//! hands every request here and knows nothing of locks or scripts.

use crate::cmd::base::flags;
use crate::cmd::dispatch::acquire::acquire;
use crate::cmd::dispatch::multi_queue as multi;
use crate::cmd::dispatch::{fault_injection, network, scripts};
use crate::cmd::runtime::client::{Client, LuaDebug};
use crate::cmd::runtime::handoff;
use crate::cmd::runtime::lock::{script_busy, Held};
use crate::cmd::runtime::pause;
use crate::cmd::runtime::script_flags::ScriptFlags;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{Command, Runs};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Check and run one request from a network client. The checks are Redis's processCommand's,
/// in its order; inside MULTI a command that passes them is queued instead of run
/// ([`crate::cmd::families::transactions`]), and one that fails them makes EXEC abort.
/// The arguments are lent: what is left in `lent` afterwards (most requests leave all of it) is the
/// caller's, so a connection reuses the vector for its next request.
pub async fn execute(
    state: &Arc<ServerState>,
    client: &mut Client,
    lent: &mut Vec<Bytes>,
) -> Reply {
    let args: &[Bytes] = lent;
    if state.test_commands && crate::cmd::testctl::faults::is_test_request(args) {
        // A control connection: faults spare it unless they name it.
        client.info.control.store(true, Ordering::Relaxed);
    }
    if state.faults.armed()
        && !crate::cmd::testctl::faults::is_test_request(args)
        && !crate::cmd::testctl::faults::is_handshake(args)
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
    let (cmd, parent) = match state.commands.resolve_for(state.test_commands, args) {
        Ok(c) => c,
        Err(e) => {
            crate::cmd::runtime::observe::count_refused_lookup(state, args);
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
    let now = start(state, client, cmd, parent);
    let refusal = refusal(state, client, cmd, parent, args);
    if let Some((cmd, parent, e)) = refusal {
        return reject(state, client, Some((cmd, parent)), e);
    }
    // A cluster node routes the request here, after ACL as Redis does (one test outside
    // cluster mode).
    if let Some(node) = &state.cluster {
        match super::cluster::step(state, node, client, cmd, parent, args).await {
            super::cluster::Step::Continue => {}
            super::cluster::Step::Answer(reply) => return reply,
            super::cluster::Step::Refuse(e) => {
                return reject(state, client, Some((cmd, parent)), e)
            }
        }
    }
    // processCommand keeps the tracking table within its limit before every command, queued
    // ones included (the invalidations go out before the reply).
    crate::cmd::runtime::tracking::limit_table(state);
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
        return fault_injection::run_with_fault(state, client, cmd, parent, lent).await;
    }
    run_checked(state, client, cmd, parent, lent, now).await
}

/// The request's time: one read of the clock gives the command's time (returned, in ms) and
/// the start of its duration (for commandstats and the slow log); the previous command of a
/// pipeline lends its end. The client's last command and interaction are noted.
fn start(
    state: &ServerState,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
) -> i64 {
    let system = match std::mem::take(&mut client.recent_us) {
        0 => crate::clock::system_us(),
        t => t,
    };
    client.started_us = system;
    let now = state.clock.at_us(system).div_euclid(1000);
    client.info.touch(parent.map(|p| &p.name), &cmd.name, now);
    now
}

/// processCommand's refusals after the lookup, in its order: authentication, MULTI,
/// RESP2 subscribed mode, ACL, the write refusals, stale data, loading.
fn refusal(
    state: &ServerState,
    client: &Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &[Bytes],
) -> Option<(&'static Command, Option<&'static Command>, RedisError)> {
    let rejected = |e| Some((cmd, parent, RedisError::new(e)));
    if !client.authenticated
        && !cmd.has(flags::NO_AUTH)
        && !parent.is_some_and(|p| p.has(flags::NO_AUTH))
    {
        rejected(error::NOAUTH)
    } else if client.multi.is_some() && cmd.has(flags::NO_MULTI) {
        rejected(error::NOT_ALLOWED_IN_MULTI)
    } else if let Some(e) = pubsub_context_error(client, cmd, parent) {
        Some((cmd, parent, e))
    } else if let Err(e) =
        crate::cmd::runtime::acl::check_command(state, client, cmd, parent, args)
    {
        Some((cmd, parent, e))
    } else if let Some(e) = write_refusal(state, client, cmd, parent, args) {
        Some((cmd, parent, e))
    } else if crate::cmd::runtime::replication::serves_no_stale_data(state)
        && denies_stale(state, client, cmd, parent, args)
    {
        rejected(error::MASTERDOWN)
    } else {
        crate::cmd::runtime::persist::loading_error(state, cmd, parent).map(|e| (cmd, parent, e))
    }
}

/// What a run of requests served at once by [`execute_now`] holds between them: the server
/// lock, taken by the first and kept for the next ones already parsed, as Redis serves a
/// client's whole query buffer before anyone else's (a lock's take and release were two
/// locked instructions and a fence per request). Released when dropped, which a connection
/// does before it waits for anything (the lock is never held across an `.await`: the batch
/// cannot be sent between threads, so the compiler refuses a future that keeps it there).
#[derive(Default)]
pub struct Batch<'s> {
    held: Option<Held<'s>>,
    /// Wait for a short holder of the lock instead of giving up at once (see [`Batch::patient`]).
    patient: bool,
}

impl Batch<'_> {
    /// A batch whose first request blocks its thread for a short holder of the server lock
    /// (`ServerLock::lock_briefly`) rather than returning None at once: for the event loop,
    /// whose only other way to wait is to hand the client over to a task for good. A long
    /// holder (a script past its first 200 µs) still makes it return None, so the client
    /// gets BUSY from its task.
    pub fn patient() -> Self {
        Batch {
            held: None,
            patient: true,
        }
    }
}

/// Run one request at once on this thread if it is the common case: an ordinary command or
/// a script run on this worker (not a transaction's, a network wait, a debugging session or a
/// refused lookup) on a server without
/// faults armed, a pause, a dataset still loading or a cluster, with the server lock free or
/// already held by `batch`. Otherwise None, having changed nothing: the request then goes
/// through [`execute`], which can wait. The checks and their order are [`execute`]'s.
pub fn execute_now<'s>(
    state: &'s ServerState,
    client: &mut Client,
    args: &[Bytes],
    batch: &mut Batch<'s>,
) -> Option<Reply> {
    if state.faults.armed()
        || (state.test_commands && crate::cmd::testctl::faults::is_test_request(args))
        || state.cluster.is_some()
        || client.multi.is_some()
        || crate::cmd::runtime::persist::starting(state)
    {
        return None;
    }
    let (cmd, parent) = state.commands.resolve_for(state.test_commands, args).ok()?;
    let script = match cmd.runs {
        Runs::Handler(_) => None,
        // A script that runs on this worker without a debugging session (`scripts::run_now`).
        Runs::Script(kind)
            if *client.scripts_inline.get_or_insert_with(handoff::runs_inline)
                && matches!(client.lua_debug, LuaDebug::Off) =>
        {
            Some(kind)
        }
        _ => return None,
    };
    if cmd.has(flags::PROTECTED) || cmd.has(flags::NETWORK) {
        return None;
    }
    if batch.held.is_none() {
        batch.held = Some(if batch.patient {
            state.lock.lock_briefly()?
        } else {
            state.lock.try_lock()?
        });
    }
    // Under the lock, as CLIENT PAUSE changes it.
    if pause::is_paused(state) {
        return None;
    }
    let now = start(state, client, cmd, parent);
    if let Some((cmd, parent, e)) = refusal(state, client, cmd, parent, args) {
        return Some(reject(state, client, Some((cmd, parent)), e));
    }
    crate::cmd::runtime::tracking::limit_table(state);
    match script {
        Some(kind) => Some(scripts::run_now(state, client, cmd, kind, args)),
        None => Some(run_locked(state, client, cmd, parent, args, now, true)),
    }
}

/// Redis's is_denystale_command: a command without the `stale` flag, or EXEC of a
/// transaction that queued one.
fn denies_stale(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> bool {
    let denies = |c: &Command, args: &[Bytes]| {
        // A script that declares its flags is stale-safe only with `allow-stale`
        // (scriptFlagsToCmdFlags).
        use crate::script::script_flags as sf;
        match ScriptFlags::of(c).now(state, args) {
            Some(f) if f & sf::EVAL_COMPAT == 0 => f & sf::ALLOW_STALE == 0,
            _ => !c.has(flags::STALE),
        }
    };
    if multi::is_exec(cmd, parent) {
        return client.multi.as_ref().is_some_and(|m| {
            m.queued
                .iter()
                .any(|q| denies(state.commands.every_row()[q.row].0, &q.args))
        });
    }
    denies(cmd, args)
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

/// processCommand's refusals of a write: a disk error, too few good replicas, a read-only
/// replica; then resplock's own, a write in the delay after a restart
/// (stop-writes-after-restart).
fn write_refusal(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> Option<RedisError> {
    let writes = writes(state, client, cmd, parent);
    crate::cmd::runtime::persist::disk_error(state, writes, cmd)
        .or_else(|| crate::cmd::runtime::replication::write_refused(state, writes))
        .or_else(|| {
            // A script that declares its flags writes unless `no-writes`
            // (evalGetCommandFlags).
            crate::cmd::runtime::replication::readonly_refused(state, || {
                if multi::is_exec(cmd, parent) {
                    return client.multi.as_ref().is_some_and(|m| {
                        m.queued.iter().any(|q| {
                            let c = state.commands.every_row()[q.row].0;
                            let mut script = ScriptFlags::of(c);
                            pause::script_writes(state, c, &q.args, &mut script)
                                .unwrap_or(c.has(flags::WRITE))
                        })
                    });
                }
                let mut script = ScriptFlags::of(cmd);
                pause::script_writes(state, cmd, args, &mut script).unwrap_or(writes)
            })
        })
        .or_else(|| {
            (writes && state.restart_delay.refuses(&state.clock))
                .then(|| RedisError::new(error::RESTARTED))
        })
}

/// A request that passed the checks: queued inside MULTI, or run holding the server lock.
pub(super) async fn run_checked(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &mut Vec<Bytes>,
    mut now: i64,
) -> Reply {
    // A pause holds the command back here, before queuing, as Redis's processCommand: EXEC
    // of a transaction with a write waits for a WRITE pause to end.
    let exec_writes = multi::is_exec(cmd, parent)
        && client.multi.as_ref().is_some_and(|m| {
            m.queued.iter().any(|q| {
                let cmd = state.commands.every_row()[q.row].0;
                pause::may_replicate(state, cmd, &q.args, false, &mut ScriptFlags::of(cmd))
            })
        });
    // A script's flags are looked up once for the checks below (pause, maxmemory).
    let mut script = ScriptFlags::of(cmd);
    match pause::wait_if_paused(state, client, cmd, args, exec_writes, &mut script).await {
        pause::Waited::Gone => return Reply::NoReply,
        pause::Waited::NotHeld => {}
        // Redis processes a request the pause held back again: meanwhile this server may
        // have become a replica (FAILOVER pauses writes until it is one), and its writes are
        // refused now.
        pause::Waited::Released => {
            if let Some(e) = write_refusal(state, client, cmd, parent, args) {
                return reject(state, client, Some((cmd, parent)), e);
            }
        }
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
        return multi::queue(state, client, cmd, std::mem::take(args));
    }
    match cmd.runs {
        Runs::Handler(_) => {}
        Runs::Script(kind) => {
            return scripts::run_script_command(state, client, cmd, kind, args, script).await
        }
        Runs::ScriptKill { eval } => {
            // Served without the lock (it waits for the script), and accounted as call()
            // accounts every command: commandstats, the slow log, MONITOR.
            let started = crate::clock::mono_ns();
            let reply = scripts::script_kill(state, eval).await;
            let took = crate::clock::mono_since(started);
            crate::cmd::runtime::observe::after_kill(state, client, cmd, args, &reply, took);
            return reply;
        }
    }
    if network::waits_on_network(state, client, cmd, parent) && !handoff::runs_inline() {
        return network::run_on_blocking_thread(state, client, cmd, parent, std::mem::take(args))
            .await;
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
    let reply = run_locked(state, client, cmd, parent, args, now, held.is_some());
    drop(held);
    reply
}

/// Run a request whose caller holds the server lock (`held`; false: a command allowed to run
/// past a busy script without it): maxmemory's check, the command, then the blocked clients
/// it made ready.
pub(super) fn run_locked(
    state: &ServerState,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &[Bytes],
    now: i64,
    held: bool,
) -> Reply {
    if held {
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
    let reply = crate::cmd::runtime::call::call(&mut ctx, cmd, args);
    if held {
        // What this command (or the transaction it ran) pushed wakes blocked clients now,
        // before anyone else runs.
        crate::cmd::runtime::blocking::serve_ready(state);
    }
    reply
}

/// Redis's rejectCommand: the error, and a transaction in progress is marked failed; EXEC
/// itself rejected discards the transaction with EXECABORT and the reason.
pub(super) fn reject(
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
