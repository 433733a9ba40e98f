//! Running a resolved command: [`call`] is the one path of network clients, `redis.call`,
//! EXEC and blocked clients' service. Around the handler it tells the keyspace which events
//! to report, times the command and records it (`observe`).

use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::observe;
use crate::cmd::runtime::propagate;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{Command, Runs};
use crate::reply::Reply;
use bytes::Bytes;

/// True when the client is in RESP2 subscribed mode (only a few commands allowed, PING
/// answers as a message).
pub fn in_resp2_subscribed_mode(ctx: &Ctx) -> bool {
    ctx.client.resp == 2 && ctx.client.subscription_count() > 0
}

/// Run an already resolved command. The caller holds the server lock and has checked
/// authentication and the connection's mode.
pub fn call(ctx: &mut Ctx, cmd: &'static Command, args: &[Bytes]) -> Reply {
    // One test of a pointer outside cluster mode.
    let state = ctx.state;
    if let Some(node) = &state.cluster {
        return crate::cmd::runtime::cluster::hooks::call_in_cluster(
            ctx, node, cmd, args, call_here,
        );
    }
    call_here(ctx, cmd, args)
}

/// [`call`] itself: the handler between its events, timing and records.
fn call_here(ctx: &mut Ctx, cmd: &'static Command, args: &[Bytes]) -> Reply {
    // Timed on the system clock, as Redis's call() with ustime(). A client's own command
    // starts when `execute` read the clock; a script's or transaction's commands read it.
    let top = !ctx.in_script && !ctx.in_exec;
    // A script's calls run as the script client: its caller is `acting_for`'s.
    let _running = (!ctx.in_script).then(|| crate::cmd::runtime::tracking::running(ctx.client.id));
    let started = match std::mem::take(&mut ctx.client.started_us) {
        t if t != 0 && top => t,
        _ => crate::clock::system_us(),
    };
    notify::track_events(ctx.state, ctx.now);
    let propagating = propagate::enter(ctx.state);
    // The lock history: what runs, for the keys it changes (commands served without the
    // lock past a busy script, ALLOW_BUSY, change none and must not take its record).
    let history = lock_history::on(ctx.state) && !cmd.has(crate::cmd::base::flags::ALLOW_BUSY);
    if history {
        lock_history::before_call(ctx.state, cmd, args, ctx.in_script);
    }
    let result = match cmd.runs {
        Runs::Handler(handler) => handler(ctx, args),
        // A script row reaches `call` from nowhere that may run it (scripts and the embedding
        // API refuse it, EXEC runs it itself): refused as unknown, as Redis's lookup would.
        Runs::Script(_) | Runs::ScriptKill { .. } => {
            Err(crate::error::unknown_command(&args[0], &args[1..]))
        }
    };
    let reply = match result {
        Ok(r) => r,
        Err(e) => Reply::error(e),
    };
    ctx.state.keyspace.report_pending();
    // The longest TTL it gave (one compare when it gave none), recorded before the reply
    // leaves if it is longer than any before (stop-writes-after-restart auto).
    let longest = crate::keyspace::take_longest_ttl();
    if longest > 0 {
        ctx.state.restart_delay.ttl_given(longest);
    }
    if cmd.has(crate::cmd::base::flags::WRITE) && ctx.state.replication.is_replica() {
        crate::cmd::runtime::replication::remember_own_volatile(
            ctx.state,
            ctx.client.db,
            cmd,
            args,
        );
    }
    // EXEC is never propagated itself: its commands are, wrapped in MULTI/EXEC.
    let itself = cmd.name != "exec";
    propagate::leave(ctx.state, propagating, ctx.client.db, args, itself);
    if history && top {
        let who = lock_history::client_ref(ctx.client);
        lock_history::after_request(ctx.state, &who, "", "", started);
    }
    let ended = crate::clock::system_us();
    if top {
        ctx.client.recent_us = ended;
    }
    let took = std::time::Duration::from_micros(ended.saturating_sub(started).max(0) as u64);
    observe::after_call(ctx, cmd, args, &reply, took);
    ctx.state.stats.total_commands.add(1, ctx.state.lock.held_here());
    reply
}
