//! A key's stored value and expiry: the enum over the value types of `crate::types`.

use crate::types::hash::Hash;
use bytes::Bytes;

#[derive(Clone, Debug)]
pub enum Value {
    Str(Bytes),
    Hash(Hash),
}

// A shard entry is (Key 24, Entry 40): keep a value at 32 bytes.
const _: () = assert!(std::mem::size_of::<Value>() == 32);

impl Value {
    /// TYPE's answer.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub value: Value,
    /// Unix time in ms after which the key is gone; 0 means no expiry.
    pub expires_at: i64,
}

impl Entry {
    pub fn new(value: Value) -> Self {
        Entry {
            value,
            expires_at: 0,
        }
    }
    pub fn with_expiry(value: Value, expires_at: i64) -> Self {
        Entry { value, expires_at }
    }
    /// Redis: a key is expired once now > when.
    pub fn is_expired(&self, now: i64) -> bool {
        self.expires_at != 0 && now > self.expires_at
    }
}
