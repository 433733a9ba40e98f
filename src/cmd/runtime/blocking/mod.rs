//! Blocking pops: clients waiting in BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP (and, on the
//! same machinery, BZPOPMIN, BZPOPMAX, BZMPOP), and how they are served (Redis's blocked.c).
//!
//! # How a client blocks and is served
//!
//! A blocking handler first tries to pop, exactly as its non-blocking twin. If every key is
//! missing it calls [`block`] (under the server lock, like every handler, so no push can slip
//! between its check and its registration) and returns `Reply::NoReply`; inside MULTI or a
//! script ([`may_block`] is false) it answers as if the timeout had passed instead.
//! [`block`] records a [`Wait`]: the keys, the value type that can serve it ([`Kind`]), the
//! deadline, and a `serve` closure holding the command's own parameters.
//!
//! A key becomes *ready* when the keyspace creates a key of a type that can serve waiters
//! (`Shard::insert` of a new list covers LPUSH, RPUSH, LMOVE's destination, RENAME, MOVE,
//! COPY...): the keyspace reports `KeyEvent::Ready` only while some client is blocked
//! ([`Blocking::any`] is checked per command by `runtime::call::call`), and
//! [`key_ready`] queues the key once if someone waits on it. After a command, and after a whole script or EXEC, still
//! holding the server lock, [`serve_ready`] drains the ready keys in the order they became
//! ready (Redis's handleClientsBlockedOnKeys): for each, the waiters on that key in the order
//! they blocked, each served by its own `serve` with the same pop code its non-blocking twin
//! runs, until the value is gone. Serving BLMOVE pushes to its destination, which can make
//! that key ready in turn: served in the same pass. A served client is removed from every key
//! it waited on before it is served, under the registry's lock, so nothing is served twice;
//! its reply is appended to its outbox and wakes its connection.
//!
//! The connection of a blocked client stops running requests (later input stays buffered)
//! but keeps reading, so a disconnect is seen and [`forget`] unregisters it. The deadline is
//! on the server clock: the connection sleeps with `Clock::sleep_until` and then calls
//! [`timed_out`], which takes the server lock (so a timeout never cuts into a script or
//! EXEC that is about to serve it) and answers the null array if the client is still blocked.
//! CLIENT UNBLOCK is [`unblock`]; SWAPDB calls [`swapped`].
//!
//! # Adding a blocking command (e.g. BZPOPMIN)
//!
//! ```text
//! fn bzpopmin(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
//!     let deadline = blocking::deadline(ctx, &a[a.len() - 1])?;   // parse the timeout
//!     // ... try each key as ZPOPMIN would; reply at once if one has data ...
//!     if !blocking::may_block(ctx) { return Ok(Reply::NilArray); }
//!     Ok(blocking::block(ctx, blocking::Wait {
//!         kind: blocking::Kind::ZSet,
//!         keys: a[1..a.len() - 1].to_vec(),
//!         deadline,
//!         serve: Box::new(|ctx, key| { /* pop from the non-empty zset at key */ Served { .. } }),
//!     }))
//! }
//! ```
//! and make `Value::serves_blocked_pops` and [`kind_of`] answer for sorted sets.

pub mod registry;

pub use registry::{kind_of, Blocking, Kind, Serve, Served, Wait};

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;

use crate::cmd::runtime::blocking::registry::Waiter;

/// Whether a blocking command may block here (not inside MULTI/EXEC or a script, where Redis
/// answers as if the timeout had already passed).
pub fn may_block(ctx: &Ctx) -> bool {
    !ctx.in_exec && !ctx.in_script
}

/// Parse a blocking command's timeout argument into an absolute deadline on the server clock
/// (0: forever), with Redis's errors.
pub fn deadline(ctx: &Ctx, arg: &[u8]) -> Result<i64, RedisError> {
    let ms = crate::cmd::base::args::timeout_ms(arg)?;
    // Redis adds with C's wrapping arithmetic: an enormous timeout may wrap into the past.
    Ok(if ms > 0 { ms.wrapping_add(ctx.now) } else { 0 })
}

/// Block the calling client (see the module documentation); the handler returns what this
/// returns.
pub fn block(ctx: &mut Ctx, wait: Wait) -> Reply {
    let state = ctx.state;
    let client = &mut *ctx.client;
    let mut keys: Vec<Bytes> = Vec::with_capacity(wait.keys.len());
    for k in wait.keys {
        if !keys.contains(&k) {
            keys.push(Bytes::copy_from_slice(&k));
        }
    }
    let mut r = state.blocking.inner.lock();
    let seq = r.next_seq;
    r.next_seq += 1;
    for k in &keys {
        r.keys
            .entry((client.db, k.clone()))
            .or_default()
            .insert(seq, client.id);
    }
    r.clients.insert(
        client.id,
        Waiter {
            db: client.db,
            kind: wait.kind,
            keys,
            seq,
            serve: wait.serve,
            info: client.info.clone(),
            push: client.push.clone(),
            call: None,
        },
    );
    drop(r);
    client.block_deadline = wait.deadline;
    client.info.blocked.store(true, Ordering::Release);
    state.blocking.blocked.fetch_add(1, Ordering::Relaxed);
    Reply::NoReply
}

/// The keyspace created `key` in `db` with a type that can serve waiters: queue it for the
/// next serving pass if someone waits on it (Redis's signalKeyAsReady).
pub fn key_ready(state: &ServerState, db: usize, key: &Bytes) {
    if !state.blocking.any() {
        return;
    }
    let mut r = state.blocking.inner.lock();
    let slot = (db, key.clone());
    if r.keys.contains_key(&slot) && r.ready_set.insert(slot.clone()) {
        r.ready.push(slot);
    }
}

/// Serve the clients blocked on keys that became ready (Redis's handleClientsBlockedOnKeys).
/// The caller holds the server lock; called after each command, script and EXEC.
pub fn serve_ready(state: &ServerState) {
    if !state.blocking.any() {
        return;
    }
    serve_ready_keys(state);
    // On a cluster node, what serving changed goes to the replicas as one unit.
    crate::cmd::runtime::cluster::feed::commit(state);
}

fn serve_ready_keys(state: &ServerState) {
    loop {
        let batch = {
            let mut r = state.blocking.inner.lock();
            if r.ready.is_empty() {
                return;
            }
            std::mem::take(&mut r.ready)
        };
        for (db, key) in batch {
            state
                .blocking
                .inner
                .lock()
                .ready_set
                .remove(&(db, key.clone()));
            serve_key(state, db, &key);
        }
    }
}

/// The kind of value at `key` now, expiring it first if its time ran out (no stats, no
/// `keymiss`, as Redis's lookupKeyReadWithFlags(LOOKUP_NONOTIFY | LOOKUP_NOSTATS)).
fn ready_kind(state: &ServerState, db: usize, key: &[u8], now: i64) -> Option<Kind> {
    let kind = {
        let mut shard = state.keyspace.db(db).lock(key);
        shard.get(key, now).and_then(|e| kind_of(&e.value))
    };
    state.keyspace.report_pending();
    kind
}

/// Serve the waiters of one ready key, first blocked first, until its value is gone. Pops
/// wait for a value of their kind; stream readers are asked whatever the key holds, and stay
/// registered (in their place) when their serve answers `None`.
fn serve_key(state: &ServerState, db: usize, key: &Bytes) {
    let now = state.clock.now_ms();
    let kind = ready_kind(state, db, key, now);
    let order: Vec<u64> = match state.blocking.inner.lock().keys.get(&(db, key.clone())) {
        Some(q) => q.values().copied().collect(),
        None => return,
    };
    for id in order {
        let (waiter_kind, serve) = {
            let mut r = state.blocking.inner.lock();
            let Some(w) = r.clients.get_mut(&id) else {
                continue;
            };
            let wk = w.kind;
            if wk != Kind::Stream && Some(wk) != kind {
                continue;
            }
            // The closure is taken out while it runs (it may queue keys, which takes this
            // lock) and put back if the waiter stays.
            let placeholder: Serve = Box::new(|_, _| None);
            (wk, std::mem::replace(&mut w.serve, placeholder))
        };
        let mut serve = serve;
        // A pop is unregistered before it runs, so nothing it triggers can serve it twice.
        let taken = if waiter_kind == Kind::Stream {
            None
        } else {
            match state.blocking.take(id) {
                Some(w) => Some(w),
                None => continue,
            }
        };
        let serve_started = crate::clock::system_us();
        let served = {
            let mut stand_in = state.serve_client.lock();
            stand_in.select(db);
            let mut ctx = Ctx {
                state,
                client: &mut stand_in,
                now,
                in_script: false,
                in_exec: false,
            };
            crate::cmd::runtime::keyspace_events::track_events(state, now);
            crate::cmd::runtime::tracking::serving(state, id);
            // Each served client is an execution unit of its own, propagated as the pop it
            // did (the serve code states it with `Ctx::propagate_as`).
            let entered = crate::cmd::runtime::propagate::enter(state);
            let served = serve(&mut ctx, key);
            state.keyspace.report_pending();
            crate::cmd::runtime::propagate::leave(state, entered, db, &[], true);
            served
        };
        let Some(served) = served else {
            if let Some(w) = state.blocking.inner.lock().clients.get_mut(&id) {
                w.serve = serve;
            }
            continue;
        };
        let w = match taken {
            Some(w) => w,
            None => match state.blocking.take(id) {
                Some(w) => w,
                None => continue,
            },
        };
        if let Reply::Error(e) = &served.reply {
            crate::cmd::runtime::observe::count_unblocked_error(state, &w.info.last_cmd_name(), e);
        }
        let serve_us = crate::clock::system_us().saturating_sub(serve_started).max(0) as u64;
        log_served(state, &w, serve_us);
        w.push.push_own(served.reply);
        crate::cmd::runtime::tracking::served(state, &w.info, &w.push);
        if served.deleted {
            break;
        }
    }
}

/// Slow-log a served waiter's command as Redis's updateStatsOnUnblock: its original
/// arguments, for the time it ran when it blocked plus `serve_us` spent serving it.
fn log_served(state: &ServerState, w: &Waiter, serve_us: u64) {
    if let Some((argv, us)) = &w.call {
        crate::cmd::runtime::observe::push_if_slow(state, &w.info, argv, us + serve_us);
    }
}

/// The connection's deadline passed: if the client is still blocked, unblock it and return
/// the null array it answers (Redis's replyToBlockedClientTimedOut). Waits for the server
/// lock, so a script or EXEC that serves the client first wins.
pub async fn timed_out(state: &ServerState, client: &mut Client) -> Option<Reply> {
    let id = client.id;
    let deadline = client.block_deadline;
    let never = std::future::pending::<()>();
    let expired = crate::cmd::runtime::lock::when_no_script(state, never, || {
        // Redis unblocks once the deadline is strictly in the past.
        if state.clock.now_ms() > deadline {
            state.blocking.take(id).map(|w| w.kind)
        } else {
            None
        }
    })
    .await
    .flatten();
    expired.map(|k| timeout_reply(state, id, k))
}

/// What a waiter answers when it stops waiting without being served: WAIT the replicas
/// that acknowledged by then, the others their kind's reply.
fn timeout_reply(state: &ServerState, id: u64, kind: Kind) -> Reply {
    match kind {
        Kind::Replicas => Reply::Int(state.replication.wait_ended(id)),
        k => k.timeout_reply(),
    }
}

/// processClientsWaitingReplicas: a replica acknowledged; answer every WAIT that now has
/// enough acknowledging replicas.
pub fn serve_replica_waits(state: &ServerState) {
    for (id, n) in state.replication.satisfied_waits() {
        if let Some(w) = state.blocking.take(id) {
            w.push.push_own(Reply::Int(n));
        }
    }
}

/// CLIENT UNBLOCK: true if `id` was blocked; it gets the null array (as a timeout) or the
/// UNBLOCKED error.
pub fn unblock(state: &ServerState, id: u64, with_error: bool) -> bool {
    let shutdown = state
        .blocking
        .inner
        .lock()
        .clients
        .get(&id)
        .is_some_and(|w| w.kind == Kind::Shutdown);
    if shutdown {
        return false;
    }
    let Some(w) = state.blocking.take(id) else {
        return false;
    };
    let reply = if with_error {
        if w.kind == Kind::Replicas {
            state.replication.wait_ended(id);
        }
        // Counted as an error and a failed call of the blocked command
        // (updateStatsOnUnblock).
        crate::cmd::runtime::observe::count_unblocked_error(
            state,
            &w.info.last_cmd_name(),
            error::UNBLOCKED_BY_CLIENT.as_bytes(),
        );
        // Redis logs it after unblockClient has already dropped the arguments: an entry
        // without arguments, for the time the command ran when it blocked.
        if let Some((_, us)) = &w.call {
            crate::cmd::runtime::observe::push_if_slow(state, &w.info, &[], *us);
        }
        Reply::error(RedisError::new(error::UNBLOCKED_BY_CLIENT))
    } else {
        timeout_reply(state, id, w.kind)
    };
    w.push.push_own(reply);
    true
}

/// Unblock every waiter `refuse` answers for (given its database and first key) with that
/// reply: a cluster node redirects the clients blocked on keys of a slot it no longer
/// serves (Redis's clusterRedirectBlockedClientIfNeeded). The caller holds the lock.
pub fn unblock_refused(state: &ServerState, refuse: impl Fn(usize, &[u8]) -> Option<Reply>) {
    if !state.blocking.any() {
        return;
    }
    let refused: Vec<(u64, Reply)> = state
        .blocking
        .inner
        .lock()
        .clients
        .iter()
        .filter_map(|(id, w)| Some((*id, refuse(w.db, w.keys.first()?)?)))
        .collect();
    for (id, reply) in refused {
        if let Some(w) = state.blocking.take(id) {
            w.push.push_own(reply);
        }
    }
}

/// replyToClientsBlockedOnShutdown: a cancelled shutdown answers the clients blocked in
/// SHUTDOWN with its error. The caller holds the server lock.
pub fn fail_shutdown_waiters(state: &ServerState) {
    for id in waiting(state, |k| k == Kind::Shutdown) {
        if let Some(w) = state.blocking.take(id) {
            w.push
                .push_own(Reply::error(RedisError::new(error::SHUTDOWN_FAILED)));
        }
    }
}

/// disconnectAllBlockedClients: a master that becomes a replica answers every blocked
/// client with -UNBLOCKED and closes its connection once that is written. The caller holds
/// the server lock.
pub fn disconnect_all(state: &ServerState) {
    for id in waiting(state, |_| true) {
        if let Some(w) = state.blocking.take(id) {
            if w.kind == Kind::Replicas {
                state.replication.wait_ended(id);
            }
            w.info
                .extra
                .close_after_unblock
                .store(true, Ordering::Release);
            w.push
                .push_own(Reply::error(RedisError::new(error::UNBLOCKED_ROLE_CHANGED)));
        }
    }
}

/// The blocked clients whose kind `pick` chooses, in the order they blocked.
fn waiting(state: &ServerState, pick: impl Fn(Kind) -> bool) -> Vec<u64> {
    if !state.blocking.any() {
        return Vec::new();
    }
    let r = state.blocking.inner.lock();
    let mut ids: Vec<(u64, u64)> = r
        .clients
        .iter()
        .filter(|(_, w)| pick(w.kind))
        .map(|(id, w)| (w.seq, *id))
        .collect();
    ids.sort_unstable();
    ids.into_iter().map(|(_, id)| id).collect()
}

/// A client went away (or RESET): forget its wait, if any.
pub fn forget(state: &ServerState, id: u64) {
    if state.blocking.any() {
        if let Some(w) = state.blocking.take(id) {
            if w.kind == Kind::Replicas {
                state.replication.wait_ended(id);
            }
        }
    }
}

/// SWAPDB `a` `b` happened: keys the waiters of either database wait on may exist now
/// (Redis's scanDatabaseForReadyKeys).
pub fn swapped(state: &ServerState, a: usize, b: usize) {
    if !state.blocking.any() {
        return;
    }
    let waited: Vec<(usize, Bytes)> = state
        .blocking
        .inner
        .lock()
        .keys
        .keys()
        .filter(|(db, _)| *db == a || *db == b)
        .cloned()
        .collect();
    for (db, key) in waited {
        // As scanDatabaseForReadyKeys, a key counts even if its time ran out: it is not
        // expired here (its DEL would be propagated before the SWAPDB), but when served.
        let serves = {
            let shard = state.keyspace.db(db).lock(&key);
            shard
                .map
                .get(&key[..])
                .is_some_and(|e| e.value.serves_blocked_pops())
        };
        // A stream reader is asked either way: its stream may have arrived or gone
        // (scanDatabaseForDeletedStreams).
        if serves || waited_by_stream_reader(state, db, &key) {
            key_ready(state, db, &key);
        }
    }
}

/// Whether a stream reader (XREAD/XREADGROUP) waits on `key`.
fn waited_by_stream_reader(state: &ServerState, db: usize, key: &Bytes) -> bool {
    let r = state.blocking.inner.lock();
    r.keys.get(&(db, key.clone())).is_some_and(|q| {
        q.values()
            .any(|id| r.clients.get(id).is_some_and(|w| w.kind == Kind::Stream))
    })
}

/// FLUSHDB (`Some(db)`) or FLUSHALL (`None`) is about to empty the keyspace: the keys stream
/// readers wait on are queued, so that group readers are failed once their streams are gone
/// (Redis's scanDatabaseForDeletedStreams).
pub fn flushing(state: &ServerState, db: Option<usize>) {
    if !state.blocking.any() {
        return;
    }
    let waited: Vec<(usize, Bytes)> = state
        .blocking
        .inner
        .lock()
        .keys
        .keys()
        .filter(|(d, _)| db.is_none_or(|x| x == *d))
        .cloned()
        .collect();
    for (d, key) in waited {
        if waited_by_stream_reader(state, d, &key) {
            key_ready(state, d, &key);
        }
    }
}
