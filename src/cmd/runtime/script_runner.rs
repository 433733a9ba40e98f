//! Scripts run under the server lock: EVAL, EVALSHA and FCALL (and their `_RO` forms) once
//! the request path or EXEC holds the lock, with the server's script client and
//! `ScriptHost`, the `Host` through which Lua's `redis.call` reaches [`call`] (the one
//! re-entry from `script` into the commands, inverted through the trait).

use crate::cmd::base::flags;
use crate::cmd::runtime::call::call;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::cluster::hooks::ScriptSlot;
use crate::cmd::runtime::handoff;
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::cmd::runtime::table::{Command, Runs, ScriptCall};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use crate::script::Host;
use bytes::Bytes;
use std::sync::atomic::Ordering;

/// Run an EVAL/EVALSHA(_RO)/FCALL(_RO) row for a caller that already holds the server lock:
/// the path a client's script takes once it has the lock (benches/script_call.rs measures it).
pub fn run_script_row(state: &ServerState, db: usize, cmd: &Command, args: &[Bytes]) -> Reply {
    match cmd.runs {
        Runs::Script(call) => {
            run_script(
                state,
                db,
                0,
                call,
                args,
                crate::clock::system_us(),
                None,
            )
            .0
        }
        Runs::Handler(_) | Runs::ScriptKill { .. } => {
            Reply::error(error::unknown_command(&args[0], &args[1..]))
        }
    }
}

/// A script command queued in a transaction, run by EXEC, which already holds the server
/// lock: the script runs on this worker with the same hand-off as any inline script.
/// Returns what [`run_script`] does.
pub(crate) fn script_in_transaction(
    state: &ServerState,
    client: &Client,
    call: ScriptCall,
    args: &[Bytes],
) -> (Reply, bool) {
    // Its `redis.call`s are checked against the transaction's user.
    state.acl.script_user.set(&client.user);
    let inline = handoff::runs_inline();
    if inline {
        handoff::set_inline_since(Some(crate::clock::mono_ns()));
    }
    if crate::cmd::runtime::lock_history::on(state) {
        crate::cmd::runtime::lock_history::before_script(state, args);
    }
    let reply = run_script(
        state,
        client.db,
        client.cluster_flags,
        call,
        args,
        crate::clock::system_us(),
        None,
    );
    if inline {
        handoff::set_inline_since(None);
    }
    reply
}

/// Run a script command with the server lock held by the caller. The script's
/// `redis.call`s run as the server's script client (RESP2 until `redis.setresp`, as in
/// Redis) with the clock frozen at the script's start. `origin` is the calling client's
/// cluster flags (READONLY, ASKING), which its `redis.call`s are routed with on a cluster
/// node. `started_us` is the system time the script's clock is frozen at: the caller's
/// reading, so what the lock history records for the script is on the script's time.
/// Returns the reply, and whether it is an error already counted in INFO errorstats (see
/// `Client::error_counted`).
pub(crate) fn run_script(
    state: &ServerState,
    db: usize,
    origin: u8,
    kind: ScriptCall,
    args: &[Bytes],
    started_us: i64,
    debug: Option<crate::script::DebugSession>,
) -> (Reply, bool) {
    let mut client = state.script_client.lock();
    // What a fresh `Client::detached(0, db, 2)` would be.
    client.select(db);
    client.resp = 2;
    client.authenticated = true;
    client.close_after_reply = false;
    client.error_counted = false;
    let mut host = ScriptHost {
        state,
        client: &mut client,
        now: state.clock.at_us(started_us).div_euclid(1000),
        readonly: false,
        cluster: state
            .cluster
            .as_ref()
            .map(|_| ScriptSlot::for_call(state, args, origin)),
    };
    // A script is propagated as the commands it ran (effects), wrapped in MULTI/EXEC when
    // there are several, never as itself.
    // Its commands go to the AOF and replicas until redis.set_repl says otherwise.
    let targets = &state.propagation.script_targets;
    let outer = targets.load(Ordering::Relaxed);
    targets.store(crate::cmd::runtime::propagate::registry::TO_ALL, Ordering::Relaxed);
    let reply = crate::cmd::runtime::propagate::unit(state, || match kind {
        ScriptCall::Eval(kind) => match debug {
            Some(session) => state.scripting.eval_debug(&mut host, kind, args, session),
            None => state.scripting.eval(&mut host, kind, args),
        },
        ScriptCall::Fcall { readonly } => state.scripting.fcall(&mut host, readonly, args),
    });
    targets.store(outer, Ordering::Relaxed);
    // On a cluster node the script's effects go to the replicas as one unit.
    crate::cmd::runtime::cluster::feed::commit(state);
    (reply, client.error_counted)
}

/// A refusal's error in INFO errorstats: its own code after a leading `-`, else ERR (as
/// afterErrorReply reads scriptCall's texts).
fn count_refusal(state: &ServerState, msg: &str) {
    let e = msg.strip_prefix('-').unwrap_or("ERR");
    crate::cmd::runtime::observe::count_error(state, e.as_bytes());
}

/// The command layer seen from a running script.
struct ScriptHost<'a> {
    state: &'a ServerState,
    client: &'a mut Client,
    now: i64,
    readonly: bool,
    /// On a cluster node: the script's slot and what its calls may touch.
    cluster: Option<ScriptSlot>,
}

/// lookupCommand as scripts see it: a container with a subcommand argument resolves to the
/// subcommand (unknown subcommand: no command); alone, to the container itself.
fn script_lookup(
    state: &ServerState,
    args: &[Bytes],
) -> Option<(&'static Command, Option<&'static Command>)> {
    let c = state.commands.lookup(&args[0])?;
    if c.subcommands.is_empty() || args.len() < 2 {
        return Some((c, None));
    }
    crate::cmd::runtime::table::lookup_sub(c, &args[1]).map(|s| (s, Some(c)))
}

impl ScriptHost<'_> {
    /// What scriptCall refuses before running `c`, in its order (arity, NOSCRIPT, stale data,
    /// ACL, read-only script, read-only replica, OOM, cluster): a Lua error or an error reply.
    fn refusal(
        &mut self,
        c: &'static Command,
        parent: Option<&'static Command>,
        args: &[Bytes],
    ) -> Option<Result<Reply, &'static str>> {
        if !c.arity_ok(args.len()) {
            return Some(Err(
                "Wrong number of args calling Redis command from script",
            ));
        }
        let denied = c.has(flags::NOSCRIPT) || parent.is_some_and(|p| p.has(flags::NOSCRIPT));
        if denied
            && !self
                .state
                .script_disable_deny
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Some(Err("This Redis command is not allowed from script"));
        }
        if !c.has(flags::STALE)
            && self.state.replication.is_replica()
            && crate::cmd::runtime::replication::serves_no_stale_data(self.state)
        {
            return Some(Err(error::SCRIPT_STALE));
        }
        if let Some(denied) =
            crate::cmd::runtime::acl::check_script_call(self.state, self.client, c, parent, args)
        {
            return Some(Ok(denied));
        }
        if self.readonly && c.has(flags::WRITE | flags::MAY_REPLICATE) {
            return Some(Err(
                "Write commands are not allowed from read-only scripts.",
            ));
        }
        if c.has(flags::WRITE) && crate::cmd::runtime::replication::readonly_replica(self.state) {
            return Some(Err(error::READONLY_REPLICA_IN_SCRIPT));
        }
        // scriptVerifyWriteCommandAllow: only until the script's first write (a script that
        // changed the dataset is not failed halfway); reachable only by scripts without
        // flags, as flagged ones were refused before they ran.
        if c.has(flags::WRITE)
            && !self.state.scripting.has_written()
            && !self.state.replication.is_replica()
            && crate::cmd::runtime::replication::write_refused(self.state, true).is_some()
        {
            return Some(Err(error::NOREPLICAS_IN_SCRIPT));
        }
        // stop-writes-after-restart, checked as NOREPLICAS is: before the script's first write.
        if c.has(flags::WRITE)
            && !self.state.scripting.has_written()
            && !self.state.replication.is_replica()
            && self.state.restart_delay.refuses(&self.state.clock)
        {
            return Some(Err(error::RESTARTED_IN_SCRIPT));
        }
        if crate::cmd::runtime::evict::script_call_refused(
            self.state,
            c,
            self.state.scripting.has_written(),
        ) {
            return Some(Ok(Reply::Error(Bytes::from_static(error::OOM.as_bytes()))));
        }
        if let (Some(node), Some(slot)) = (&self.state.cluster, self.cluster.as_mut()) {
            if let Some(refused) = crate::cmd::runtime::cluster::hooks::script_call_refused(
                self.state, node, c, parent, args, slot,
            ) {
                return Some(Err(refused));
            }
            slot.wrote |= c.has(flags::WRITE);
        }
        None
    }
}

impl Host for ScriptHost<'_> {
    fn call(&mut self, args: &[Bytes]) -> Result<Reply, &'static str> {
        let Some((c, parent)) = script_lookup(self.state, args) else {
            count_refusal(self.state, "Unknown Redis command called from script");
            return Err("Unknown Redis command called from script");
        };
        if let Some(refused) = self.refusal(c, parent, args) {
            // scriptCall's error path: the command counts a rejected call, and the error is
            // counted (afterErrorReply) whether or not the script catches it.
            crate::cmd::runtime::observe::count_rejected(self.state, c, parent);
            match &refused {
                Ok(Reply::Error(e)) => crate::cmd::runtime::observe::count_error(self.state, e),
                Ok(_) => {}
                Err(msg) => count_refusal(self.state, msg),
            }
            return refused;
        }
        if c.has(flags::WRITE) {
            self.state.scripting.mark_wrote();
        }
        let mut ctx = Ctx {
            state: self.state,
            client: self.client,
            now: self.now,
            in_script: true,
            in_exec: false,
        };
        let reply = call(&mut ctx, c, args);
        // Counted as it is answered, as Redis's afterErrorReply on the script's client does:
        // also when the script catches it (redis.pcall).
        if let Reply::Error(e) = &reply {
            crate::cmd::runtime::observe::count_error(self.state, e);
        }
        Ok(reply)
    }

    fn acl_check(&mut self, args: &[Bytes]) -> Result<bool, &'static str> {
        match script_lookup(self.state, args) {
            Some((c, parent)) => Ok(crate::cmd::runtime::acl::script_user_may(
                self.state, c, parent, args,
            )),
            None => Err("Invalid command passed to redis.acl_check_cmd()"),
        }
    }

    fn resp(&self) -> u8 {
        self.client.resp
    }

    fn set_resp(&mut self, resp: u8) {
        self.client.resp = resp;
    }

    fn set_readonly(&mut self, readonly: bool) {
        self.readonly = readonly;
    }

    fn error_counted(&mut self) {
        self.client.error_counted = true;
    }

    fn set_repl(&mut self, flags: u8) {
        self.state
            .propagation
            .script_targets
            .store(flags, Ordering::Relaxed);
    }

    fn prepare(&mut self, script_flags: u32) -> Result<(), RedisError> {
        use crate::script::script_flags as sf;
        if script_flags & sf::EVAL_COMPAT != 0 {
            // scriptPrepareForRun's backwards-compatible mode: only the stale check.
            if crate::cmd::runtime::replication::serves_no_stale_data(self.state) {
                return Err(RedisError::new(error::MASTERDOWN));
            }
            return Ok(());
        }
        if script_flags & sf::ALLOW_STALE == 0
            && crate::cmd::runtime::replication::serves_no_stale_data(self.state)
        {
            return Err(RedisError::new(error::MASTERDOWN_SCRIPT));
        }
        if script_flags & sf::NO_WRITES == 0
            && crate::cmd::runtime::replication::readonly_replica(self.state)
        {
            return Err(RedisError::new(error::READONLY_SCRIPT));
        }
        // scriptPrepareForRun: a script that may write needs min-replicas-to-write's
        // replicas (a flagged script's check; one without flags is checked per write).
        if script_flags & sf::NO_WRITES == 0 && !self.state.replication.is_replica() {
            if let Some(e) = crate::cmd::runtime::replication::write_refused(self.state, true) {
                return Err(e);
            }
            if self.state.restart_delay.refuses(&self.state.clock) {
                return Err(RedisError::new(error::RESTARTED));
            }
        }
        let (Some(node), Some(slot)) = (&self.state.cluster, self.cluster.as_mut()) else {
            return Ok(());
        };
        if script_flags & sf::NO_CLUSTER != 0 {
            return Err(RedisError::new(error::SCRIPT_NO_CLUSTER));
        }
        let replica = node.shared.membership.view(node.me).nodes[node.me]
            .master
            .is_some();
        if replica && script_flags & sf::NO_WRITES == 0 {
            return Err(RedisError::new(error::READONLY_SCRIPT));
        }
        slot.cross_slot = crate::cmd::runtime::cluster::hooks::script_may_cross_slots(script_flags);
        Ok(())
    }
}
