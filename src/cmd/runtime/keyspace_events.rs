//! What a write signals: Redis's signalModifiedKey ([`Ctx::signal_modified`]: WATCH and
//! client tracking) and notifyKeyspaceEvent ([`Ctx::notify`]: keyspace notifications).
//!
//! Event classes are the flags of notify-keyspace-events. Delivery publishes to
//! `__keyspace@<db>__:<key>` (message: the event) and `__keyevent@<db>__:<event>` (message:
//! the key) like PUBLISH; commands only say what happened.

use crate::cmd::runtime::lock_history;
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::cmd::runtime::tracking;
use crate::cmd::runtime::watch;

pub use crate::config::notify::*;

/// Whether an event of `class` would reach anyone now (one or two atomic loads).
pub fn wants(state: &ServerState, class: u32) -> bool {
    state.pubsub.subscriptions() > 0
        && state
            .notify_flags
            .load(std::sync::atomic::Ordering::Relaxed)
            & class
            != 0
}

/// Raise an event; does nothing unless notify-keyspace-events enables its class.
///
/// On the hot path of every write: events only reach pub/sub subscribers, so with no channel
/// or pattern subscription anywhere this is one atomic load. Otherwise the flags are parsed
/// from the live configuration (a few characters), so CONFIG SET takes effect at once.
pub fn keyspace_event(state: &ServerState, class: u32, event: &str, key: &[u8], db: usize) {
    if state.cluster.is_some() {
        // A cluster master's replicas raise it too (they may have subscribers).
        crate::cmd::runtime::cluster::feed::event(state, class, event, key, db);
    }
    if state.pubsub.subscriptions() == 0 {
        return;
    }
    let flags = state
        .notify_flags
        .load(std::sync::atomic::Ordering::Relaxed);
    if flags & class == 0 || flags & (KEYSPACE | KEYEVENT) == 0 {
        return;
    }
    let mut db_buf = itoa::Buffer::new();
    let db = db_buf.format(db).as_bytes();
    if flags & KEYSPACE != 0 {
        let mut ch = Vec::with_capacity(16 + key.len());
        ch.extend_from_slice(b"__keyspace@");
        ch.extend_from_slice(db);
        ch.extend_from_slice(b"__:");
        ch.extend_from_slice(key);
        publish_from_server(state, &ch, event.as_bytes());
    }
    if flags & KEYEVENT != 0 {
        let mut ch = Vec::with_capacity(16 + event.len());
        ch.extend_from_slice(b"__keyevent@");
        ch.extend_from_slice(db);
        ch.extend_from_slice(b"__:");
        ch.extend_from_slice(event.as_bytes());
        publish_from_server(state, &ch, key);
    }
}

/// Publish a message as PUBLISH does, from the server itself.
fn publish_from_server(state: &ServerState, channel: &[u8], msg: &[u8]) -> usize {
    let now = state.clock.now_ms();
    let limits = state.pubsub.limits();
    state.pubsub.publish(channel, msg, limits, now)
}

impl Ctx<'_> {
    /// Redis's signalModifiedKey: `key` in the selected database was changed, so the clients
    /// that WATCH it must fail their EXEC. Handlers call it where Redis does (not when, say,
    /// SET NX wrote nothing), after releasing their shard locks.
    pub fn signal_modified(&self, key: &[u8]) {
        self.signal_modified_in(self.client.db, key);
    }

    /// [`Ctx::signal_modified`] for a key of another database (MOVE, COPY ... DB).
    pub fn signal_modified_in(&self, db: usize, key: &[u8]) {
        // Keys this command found expired were removed first: their signals come first, so a
        // watch of a key that was already stale is settled before this change is seen.
        self.state.keyspace.report_pending();
        // Each key changed is one change (Redis's server.dirty), which is also what makes
        // the command propagate to the AOF and replicas.
        self.state.add_dirty(1);
        watch::key_modified(self.state, db, key);
        if lock_history::on(self.state) {
            lock_history::touched(self.state, db, key);
        }
        crate::cmd::runtime::cluster::feed::touched(self.state, db, key);
        let by = tracking::modifier(self.state, self.client.id, self.in_script);
        tracking::key_modified(self.state, by, key);
    }

    /// Raise a keyspace event of `class` for `key` in the selected database.
    pub fn notify(&self, class: u32, event: &str, key: &[u8]) {
        // Keys this command found expired were removed first: their events come first.
        self.state.keyspace.report_pending();
        keyspace_event(self.state, class, event, key, self.client.db);
    }
}

/// Tell the keyspace which key events the next command must report: created keys only if
/// someone listens for `new` events, ready keys only while a client is blocked.
pub fn track_events(state: &ServerState, now: i64) {
    crate::keyspace::track_new_keys(wants(state, NEW));
    crate::keyspace::track_ready_keys(state.blocking.any());
    // Values the command creates are stamped with its time (their LRU clock or LFU start).
    crate::keyspace::set_command_context(now, state.access_policy());
    // The TTLs it gives are measured for stop-writes-after-restart's `auto` (`call`).
    crate::keyspace::watch_ttls(now);
    // A paused server keeps its dataset constant; a replica leaves expiry to its master
    // (keys past their time read as missing until the master's DEL arrives).
    crate::keyspace::keep_expired(
        crate::cmd::runtime::pause::is_paused(state) || state.replication.is_replica(),
    );
}
