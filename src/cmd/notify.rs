//! Keyspace notifications: event classes, as the flags of notify-keyspace-events.
//! Delivery (publishing to `__keyspace@db__:key` / `__keyevent@db__:event`) belongs to the
//! pub/sub family; commands only say what happened through [`crate::cmd::Ctx::notify`].

use crate::shared::Shared;

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

/// Raise an event; does nothing unless notify-keyspace-events enables its class.
pub fn keyspace_event(shared: &Shared, class: u32, event: &str, key: &[u8], db: usize) {
    let _ = (shared, class, event, key, db);
}
