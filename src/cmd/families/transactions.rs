//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH (Redis's multi.c).
//!
//! While a client is in MULTI, the request path (`dispatch/`) checks each command as Redis's
//! processCommand does (unknown, arity, NOAUTH, commands refused in MULTI, BUSY) and queues it
//! (`dispatch/multi_queue.rs`) without taking the server lock; a failed check marks the
//! transaction, and EXEC then answers EXECABORT. EXEC runs like any other command, holding the
//! server lock once for the whole transaction: it checks WATCH, runs every queued command through
//! [`crate::cmd::runtime::call::call`] (the path of network clients and `redis.call`), and replies
//! with their replies; errors at run time are elements of that array. Blocked clients are served
//! after EXEC returns, still under the lock, exactly as after a script. WATCH's registry is
//! [`crate::cmd::runtime::watch`].

use crate::cmd::base::flags::*;
use crate::cmd::runtime::client::{MultiState, Queued};
use crate::cmd::runtime::script_runner::script_in_transaction;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{Row, Runs};
use crate::cmd::runtime::watch;
use crate::error::{self, RedisError};
use crate::outbox::{self, Taken};
use crate::reply::{CmdResult, Reply};
use bytes::{Bytes, BytesMut};
use std::sync::atomic::Ordering;

use crate::cmd::runtime::clients::discard_transaction;

pub const COMMANDS: &[Row] = &[
    Row::new("multi", multi).flags(NEEDS_CONNECTION),
    Row::new("exec", exec).flags(NEEDS_CONNECTION),
    Row::new("discard", discard).flags(NEEDS_CONNECTION),
    Row::new("watch", watch_cmd),
    Row::new("unwatch", unwatch),
];

fn multi(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if ctx.client.multi.is_some() {
        return Err(RedisError::new(error::MULTI_NESTED));
    }
    ctx.client.multi = Some(MultiState::default());
    ctx.client.info.multi.store(0, Ordering::Relaxed);
    Ok(Reply::ok())
}

fn discard(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if ctx.client.multi.is_none() {
        return Err(RedisError::new(error::DISCARD_WITHOUT_MULTI));
    }
    discard_transaction(ctx.state, ctx.client);
    Ok(Reply::ok())
}

fn watch_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if ctx.client.multi.is_some() {
        return Err(RedisError::new(error::WATCH_IN_MULTI));
    }
    let (state, id, db) = (ctx.state, ctx.client.id, ctx.client.db);
    // No point in watching once a watched key changed: EXEC will fail anyway.
    if state.watches.is_dirty(id) {
        return Ok(Reply::ok());
    }
    for key in &a[1..] {
        let stale = watch::key_state(state, db, key, ctx.now) == Some(true);
        state.watches.watch(id, db, key, stale);
    }
    Ok(Reply::ok())
}

fn unwatch(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.state.watches.forget(ctx.client.id);
    Ok(Reply::ok())
}

/// EXEC, holding the server lock (taken by the request path as for any command).
fn exec(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let Some(m) = ctx.client.multi.take() else {
        return Err(RedisError::new(error::EXEC_WITHOUT_MULTI));
    };
    let (state, id, now) = (ctx.state, ctx.client.id, ctx.now);
    // A key watched while alive that is now logically expired fails EXEC too.
    let dirty = state.watches.is_dirty(id)
        || state.watches.any_expired(id, |db, key| {
            watch::key_state(state, db, key, now) == Some(true)
        });
    if m.aborted || dirty {
        discard_transaction(state, ctx.client);
        return if m.aborted {
            Err(RedisError::new(error::EXECABORT))
        } else {
            Ok(Reply::NilArray)
        };
    }
    if crate::cmd::runtime::lock_history::on(state) {
        crate::cmd::runtime::lock_history::exec_watched(state, state.watches.keys_of(id));
    }
    // Unwatch at once; the client shows as in MULTI (CLIENT LIST) until its commands ran.
    state.watches.forget(id);
    let reply = run_queued(ctx, m.queued);
    discard_transaction(state, ctx.client);
    Ok(reply)
}

/// Run a transaction's commands in order and collect their replies. Frames a command pushes
/// to this client itself (SUBSCRIBE's confirmations, messages it publishes to itself,
/// keyspace events it raises for itself) are written in the middle of the reply, before that
/// command's reply, as Redis 7.0 does; then the whole reply is queued pre-encoded. Each reply
/// is encoded in the protocol of the moment it ran: a HELLO inside the transaction changes
/// the encoding of its own reply and of the ones after it only, as Redis writes each reply
/// into the output buffer as it goes.
fn run_queued(ctx: &mut Ctx, queued: Vec<Queued>) -> Reply {
    let state = ctx.state;
    // Frames queued before EXEC: written before its reply.
    let mut before = Taken::default();
    ctx.client.push.take(usize::MAX, &mut before);
    let mut frames: Vec<Taken> = Vec::new();
    let mut replies = Vec::with_capacity(queued.len());
    let mut protos = Vec::with_capacity(queued.len());
    // Each queued command is counted in INFO's total_commands_processed as it runs here.
    for (i, q) in queued.iter().enumerate() {
        let cmd = state.commands.every_row()[q.row].0;
        // Errors inside the transaction's reply are counted in INFO errorstats as each is
        // answered (the EXEC reply itself is an array), except a script's error that repeats
        // one its redis.call counted already.
        let mut counted = false;
        let reply = match cmd.runs {
            Runs::Script(call) => {
                let started = std::time::Instant::now();
                let (r, c) = script_in_transaction(state, ctx.client, call, &q.args);
                counted = c;
                // Its calls, failures, latency and slow log, as call() counts any command
                // EXEC runs.
                crate::cmd::runtime::observe::after_script(
                    state,
                    ctx.client,
                    cmd,
                    &q.args,
                    &r,
                    started.elapsed(),
                );
                r
            }
            // SCRIPT KILL and FUNCTION KILL find no script running: this transaction is
            // what runs.
            Runs::ScriptKill { .. } => {
                let r = Reply::error(RedisError::new(error::NOTBUSY));
                let none = std::time::Duration::ZERO;
                crate::cmd::runtime::observe::after_kill(state, ctx.client, cmd, &q.args, &r, none);
                r
            }
            Runs::Handler(_) => {
                let mut sub = Ctx {
                    state,
                    client: &mut *ctx.client,
                    now: ctx.now,
                    in_script: false,
                    in_exec: true,
                };
                crate::cmd::runtime::call::call(&mut sub, cmd, &q.args)
            }
        };
        if let Reply::Error(e) = &reply {
            if !counted {
                crate::cmd::runtime::observe::count_error(state, e);
            }
        }
        let mut t = Taken::default();
        ctx.client.push.take(usize::MAX, &mut t);
        if !t.is_empty() {
            frames.resize_with(i, Taken::default);
            frames.push(t);
        }
        // After the command: HELLO answers in the protocol it switched to.
        protos.push(ctx.client.resp);
        replies.push(reply);
    }
    let resp = ctx.client.resp;
    if before.is_empty() && frames.is_empty() && protos.iter().all(|&p| p == resp) {
        return Reply::Array(replies);
    }
    let mut out = BytesMut::new();
    before.write_to(&mut out);
    outbox::encode_array_header(replies.len(), &mut out);
    for (i, r) in replies.iter().enumerate() {
        if let Some(t) = frames.get_mut(i) {
            t.write_to(&mut out);
        }
        outbox::encode_reply(r, protos[i], &mut out);
    }
    ctx.client.push.push_own_encoded(out.freeze());
    Reply::NoReply
}
