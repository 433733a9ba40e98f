//! What happens to clients: registered at connection and forgotten everywhere at
//! disconnection, their subscriptions dropped, a request's start and end (CLIENT REPLY,
//! error statistics, tracking broadcasts), idle timeouts, RESET, and CLIENT LIST's lines.

use crate::cmd::runtime::client::{reply_flags, Client, ClientInfo};
use crate::cmd::runtime::state::ServerState;
use crate::reply::Reply;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Whether `timeout` may close this client: not subscribers, monitors or blocked clients, as
/// Redis's clientsCronHandleTimeout.
pub fn timeout_applies(c: &ClientInfo) -> bool {
    let subscribed = c.subscriptions.load(Ordering::Relaxed)
        + c.pattern_subscriptions.load(Ordering::Relaxed)
        + c.shard_subscriptions.load(Ordering::Relaxed)
        > 0;
    !subscribed && !c.extra.monitor.load(Ordering::Relaxed) && !c.blocked.load(Ordering::Relaxed)
}

/// A request begins: `buffered` bytes were in the query buffer, itself included.
pub fn request_started(client: &Client, buffered: usize) {
    client.info.extra.qbuf.store(buffered, Ordering::Relaxed);
}

/// After a network client's request: count an error reply (INFO errorstats) and say whether
/// the reply is written (CLIENT REPLY OFF/SKIP drop it).
pub fn reply_goes_out(state: &ServerState, client: &mut Client, reply: &Reply) -> bool {
    if let Reply::Error(e) = reply {
        if !std::mem::take(&mut client.error_counted) {
            crate::cmd::runtime::observe::count_error(state, e);
        }
    }
    // Broadcast invalidations go out once per request, as Redis sends them before sleeping
    // (a transaction's keys in one message per prefix).
    crate::cmd::runtime::tracking::broadcast(state, client.id);
    client.info.extra.qbuf.store(0, Ordering::Relaxed);
    client.info.extra.reply_allowed_then_advance()
}

/// CLIENT LIST's flags in Redis 7.0's order, for the states resplock has: S (replica), O (monitor),
/// M (the link to this replica's master),
/// P (subscribed), x (in MULTI), b (blocked), t R B (tracking, broken redirect, broadcast),
/// d (a watched key changed), U (unix socket), e (no-evict); N when none applies.
pub fn flags_string(state: &ServerState, c: &ClientInfo) -> String {
    let tracking = state.tracking.mode(c.id);
    let mut f = String::new();
    if c.extra.monitor.load(Ordering::Relaxed) {
        f.push('O');
    } else if c.extra.replica.load(Ordering::Relaxed) {
        f.push('S');
    }
    if c.extra.master.load(Ordering::Relaxed) {
        f.push('M');
    }
    if c.subscriptions.load(Ordering::Relaxed)
        + c.pattern_subscriptions.load(Ordering::Relaxed)
        + c.shard_subscriptions.load(Ordering::Relaxed)
        > 0
    {
        f.push('P');
    }
    if c.multi.load(Ordering::Relaxed) >= 0 {
        f.push('x');
    }
    if c.blocked.load(Ordering::Relaxed) {
        f.push('b');
    }
    if let Some(m) = &tracking {
        f.push('t');
        if m.broken_redirect {
            f.push('R');
        }
        if m.bcast {
            f.push('B');
        }
    }
    if state.watches.any() && state.watches.is_dirty(c.id) {
        f.push('d');
    }
    if c.is_unix_socket() {
        f.push('U');
    }
    if c.extra.no_evict.load(Ordering::Relaxed) {
        f.push('e');
    }
    if f.is_empty() {
        f.push('N');
    }
    f
}

/// After a reply is encoded: the frames that must follow it (see
/// [`crate::cmd::runtime::client::ClientExtra::after_reply`]).
pub fn write_after_reply(client: &Client, out: &mut bytes::BytesMut) {
    let extra = &client.info.extra;
    if !extra.after_reply_pending.load(Ordering::Acquire) {
        return;
    }
    extra.after_reply_pending.store(false, Ordering::Relaxed);
    let mut q = extra.after_reply.lock();
    for f in q.drain(..) {
        out.extend_from_slice(&f);
    }
}

/// RESET: no MONITOR, no tracking, replies on (Redis's clearClientConnectionState).
pub fn reset(state: &ServerState, client: &Client) {
    let extra = &client.info.extra;
    if extra.monitor.swap(false, Ordering::Relaxed) {
        state.observe.monitors.forget(client.id);
    }
    state.tracking.disable(client.id);
    let f = extra.reply.load(Ordering::Relaxed);
    extra.reply.store(
        f & !(reply_flags::OFF | reply_flags::SKIP_NEXT),
        Ordering::Relaxed,
    );
}

/// Register a new network client (CLIENT LIST sees it from now on).
pub fn connect(state: &ServerState, id: u64, addr: String, laddr: String) -> Client {
    let info = Arc::new(ClientInfo::new(id, addr, laddr));
    // Idle time counts from the connection until the first command (Redis's lastinteraction).
    let now = state.clock.now_ms();
    info.last_active_ms
        .store(now.max(0) as u64, Ordering::Relaxed);
    info.created_ms.store(now, Ordering::Relaxed);
    if state.faults.refusing() {
        info.refused.store(true, Ordering::Relaxed);
    }
    state.clients.lock().insert(id, info.clone());
    let client = Client::new(info, !state.requires_pass());
    let _ = client.info.extra.push.set(client.push.clone());
    client
}

/// Forget a closed connection everywhere it left state: the client registry and every layer
/// that keeps per-client state (its subscriptions, watched keys, blocked keys).
pub fn disconnect(state: &ServerState, client: &Client) {
    state.clients.lock().remove(&client.id);
    crate::cmd::runtime::client_mem::forget(state, &client.info);
    client_gone(state, client);
    state.observe.monitors.forget(client.id);
    state.tracking.disable(client.id);
    state.watches.forget(client.id);
    crate::cmd::runtime::blocking::forget(state, client.id);
}

/// Drop every subscription of a client without replying (RESET): in the registry, in the
/// client's own sets and in its counters (CLIENT LIST).
pub fn forget_client(state: &ServerState, client: &mut Client) {
    let subs = std::mem::take(&mut client.pubsub);
    state.pubsub.forget(client.id, &subs);
    zero_counts(client);
}

/// Remove a closed connection from every channel and pattern at once.
pub fn client_gone(state: &ServerState, client: &Client) {
    state.pubsub.forget(client.id, &client.pubsub);
    zero_counts(client);
}

fn zero_counts(client: &Client) {
    client.info.subscriptions.store(0, Ordering::Relaxed);
    client
        .info
        .pattern_subscriptions
        .store(0, Ordering::Relaxed);
    client.info.shard_subscriptions.store(0, Ordering::Relaxed);
}

/// One CLIENT LIST line in Redis 7.0's field order; the memory fields count what the client
/// holds as Redis's getClientMemoryUsage does (see `client_mem`).
pub fn client_line(state: &ServerState, c: &ClientInfo, now_ms: i64) -> String {
    use crate::cmd::runtime::client_mem;
    // Whole seconds of the server clock, as Redis's `server.unixtime - c->ctime`.
    let age_s = (now_ms / 1000 - c.created_ms.load(Ordering::Relaxed) / 1000).max(0);
    let last = c.last_active_ms.load(Ordering::Relaxed);
    let idle = (now_ms.max(0) as u64).saturating_sub(last) / 1000;
    let name = c
        .name
        .lock()
        .as_ref()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_default();
    let cmd = c.last_cmd_name();
    let mem = &c.extra.mem;
    let qbuf = c.extra.qbuf.load(Ordering::Relaxed);
    let qbuf_free = mem.qbuf_alloc.load(Ordering::Relaxed).saturating_sub(qbuf);
    let omem = client_mem::output_bytes(c);
    format!(
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} \
         multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp=0 obl=0 oll={} \
         omem={} tot-mem={} events=r cmd={} user={} redir={} resp={}\n",
        c.id,
        c.addr,
        c.laddr,
        c.id + 7,
        name,
        age_s,
        idle,
        flags_string(state, c),
        c.db.load(Ordering::Relaxed),
        c.subscriptions.load(Ordering::Relaxed),
        c.pattern_subscriptions.load(Ordering::Relaxed),
        c.shard_subscriptions.load(Ordering::Relaxed),
        c.multi.load(Ordering::Relaxed),
        qbuf,
        qbuf_free,
        mem.argv_len.load(Ordering::Relaxed),
        client_mem::multi_mem(c),
        client_mem::REPLY_BUFFER,
        usize::from(omem > 0),
        omem,
        client_mem::total(state, c),
        cmd,
        c.user.lock(),
        ctx_redir(state, c),
        c.resp.load(Ordering::Relaxed),
    )
}

/// CLIENT LIST's redir: the tracking redirect (0: none), -1 when tracking is off.
fn ctx_redir(state: &crate::cmd::runtime::state::ServerState, c: &ClientInfo) -> i64 {
    state.tracking.mode(c.id).map_or(-1, |m| m.redirect as i64)
}

/// Redis's discardTransaction: leave MULTI and forget every watched key.
pub fn discard_transaction(state: &ServerState, client: &mut Client) {
    client.multi = None;
    client.info.multi.store(-1, Ordering::Relaxed);
    state.watches.forget(client.id);
}

/// Count a client's memory towards maxmemory-clients and evict the biggest clients if the
/// total is over it; true if this client itself was evicted (see `client_mem`).
pub fn account_and_evict(state: &ServerState, c: &ClientInfo) -> bool {
    for id in state.client_limits.take_grown() {
        let grown = state.clients.lock().get(&id).cloned();
        if let Some(g) = grown {
            crate::cmd::runtime::client_mem::account(state, &g);
        }
    }
    crate::cmd::runtime::client_mem::account_and_evict(state, c, &|c| {
        client_line(state, c, state.clock.now_ms())
    })
}

/// Evict clients while the evictable ones are over maxmemory-clients; with `recount`, count
/// every client afresh first (the limit changed).
pub fn evict_clients(state: &ServerState, recount: bool) {
    let line = |c: &ClientInfo| client_line(state, c, state.clock.now_ms());
    if recount {
        crate::cmd::runtime::client_mem::recount_all(state, &line);
    } else {
        crate::cmd::runtime::client_mem::evict(state, &line);
    }
}
