//! Per-client state of the introspection and control commands (CLIENT REPLY, NO-EVICT,
//! TRACKING, MONITOR), kept apart from [`crate::cmd::runtime::client::ClientInfo`]'s identity fields so each
//! feature owns its part.

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::ServerState;
use crate::reply::Reply;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// CLIENT REPLY flags (Redis's CLIENT_REPLY_OFF, _SKIP, _SKIP_NEXT).
pub mod reply_flags {
    /// No reply is sent until CLIENT REPLY ON.
    pub const OFF: u8 = 1;
    /// The reply of the command now running is dropped.
    pub const SKIP: u8 = 2;
    /// Set by CLIENT REPLY SKIP: the next command's reply is dropped.
    pub const SKIP_NEXT: u8 = 4;
}

/// The control flags of one client.
#[derive(Default)]
pub struct ClientExtra {
    /// CLIENT NO-EVICT on (CLIENT LIST's `e` flag).
    pub no_evict: AtomicBool,
    /// In MONITOR mode (CLIENT LIST's `O` flag).
    pub monitor: AtomicBool,
    /// [`reply_flags`] bits.
    pub reply: AtomicU8,
    /// Bytes in the query buffer when the current command started (CLIENT LIST's qbuf).
    pub qbuf: std::sync::atomic::AtomicUsize,
    /// The client's outbox, for other clients' commands that push to it (tracking).
    pub push: std::sync::OnceLock<std::sync::Arc<crate::outbox::PushQueue>>,
    /// Frames for this client that go after the reply of the command it is running
    /// (invalidations of keys it changed itself).
    pub after_reply: parking_lot::Mutex<Vec<bytes::Bytes>>,
}

impl ClientExtra {
    /// After a command ran: whether its reply is written, then Redis's resetClient step
    /// (SKIP lasts one command; SKIP_NEXT becomes SKIP for the next one).
    pub fn reply_allowed_then_advance(&self) -> bool {
        use reply_flags::*;
        let f = self.reply.load(Ordering::Relaxed);
        if f == 0 {
            return true;
        }
        let allowed = f & (OFF | SKIP) == 0;
        let mut next = f & !SKIP;
        if next & SKIP_NEXT != 0 {
            next = (next | SKIP) & !SKIP_NEXT;
        }
        self.reply.store(next, Ordering::Relaxed);
        allowed
    }
}

/// Whether `timeout` may close this client: not subscribers, monitors or blocked clients, as
/// Redis's clientsCronHandleTimeout.
pub fn timeout_applies(c: &crate::cmd::runtime::client::ClientInfo) -> bool {
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
pub fn reply_goes_out(state: &ServerState, client: &Client, reply: &Reply) -> bool {
    if let Reply::Error(e) = reply {
        crate::cmd::runtime::observe::count_error(state, e);
    }
    // Broadcast invalidations go out once per request, as Redis sends them before sleeping
    // (a transaction's keys in one message per prefix).
    crate::cmd::runtime::tracking::broadcast(state, client.id);
    client.info.extra.qbuf.store(0, Ordering::Relaxed);
    client.info.extra.reply_allowed_then_advance()
}

/// CLIENT LIST's flags in Redis 7.0's order, for the states resplock has: O (monitor),
/// P (subscribed), x (in MULTI), b (blocked), t R B (tracking, broken redirect, broadcast),
/// d (a watched key changed), U (unix socket), e (no-evict); N when none applies.
pub fn flags_string(state: &ServerState, c: &crate::cmd::runtime::client::ClientInfo) -> String {
    let tracking = state.tracking.mode(c.id);
    let mut f = String::new();
    if c.extra.monitor.load(Ordering::Relaxed) {
        f.push('O');
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

/// After a reply is encoded: the frames that must follow it (see [`ClientExtra::after_reply`]).
pub fn write_after_reply(client: &Client, out: &mut bytes::BytesMut) {
    let mut q = client.info.extra.after_reply.lock();
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
