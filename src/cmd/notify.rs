//! Keyspace notifications: event classes, as the flags of notify-keyspace-events.
//! Delivery publishes to `__keyspace@<db>__:<key>` (message: the event) and
//! `__keyevent@<db>__:<event>` (message: the key) like PUBLISH; commands only say what
//! happened through [`crate::cmd::Ctx::notify`].

use crate::cmd::ServerState;

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
        super::pubsub::publish_from_server(state, &ch, event.as_bytes());
    }
    if flags & KEYEVENT != 0 {
        let mut ch = Vec::with_capacity(16 + event.len());
        ch.extend_from_slice(b"__keyevent@");
        ch.extend_from_slice(db);
        ch.extend_from_slice(b"__:");
        ch.extend_from_slice(event.as_bytes());
        super::pubsub::publish_from_server(state, &ch, key);
    }
}
