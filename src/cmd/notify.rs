//! Keyspace notifications: event classes, as the flags of notify-keyspace-events.
//! Delivery publishes to `__keyspace@<db>__:<key>` (message: the event) and
//! `__keyevent@<db>__:<event>` (message: the key) like PUBLISH; commands only say what
//! happened through [`crate::cmd::Ctx::notify`].

use crate::cmd::ServerState;

pub const KEYSPACE: u32 = 1 << 0; // K
pub const KEYEVENT: u32 = 1 << 1; // E
pub const GENERIC: u32 = 1 << 2; // g
pub const STRING: u32 = 1 << 3; // $
pub const LIST: u32 = 1 << 4; // l
pub const SET: u32 = 1 << 5; // s
pub const HASH: u32 = 1 << 6; // h
pub const ZSET: u32 = 1 << 7; // z
pub const EXPIRED: u32 = 1 << 8; // x
pub const EVICTED: u32 = 1 << 9; // e
pub const STREAM: u32 = 1 << 10; // t
pub const KEY_MISS: u32 = 1 << 11; // m
pub const MODULE: u32 = 1 << 12; // d
pub const NEW: u32 = 1 << 13; // n

/// Redis's NOTIFY_ALL, the `A` alias: every class but key-miss and new.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// Redis's keyspaceEventsStringToFlags: None for a character it rejects.
pub fn parse_flags(s: &str) -> Option<u32> {
    let mut f = 0;
    for c in s.bytes() {
        f |= match c {
            b'A' => ALL,
            b'g' => GENERIC,
            b'$' => STRING,
            b'l' => LIST,
            b's' => SET,
            b'h' => HASH,
            b'z' => ZSET,
            b'x' => EXPIRED,
            b'e' => EVICTED,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b't' => STREAM,
            b'm' => KEY_MISS,
            b'd' => MODULE,
            b'n' => NEW,
            _ => return None,
        };
    }
    Some(f)
}

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
