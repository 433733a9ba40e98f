//! A key's stored value and expiry: the enum over the value types of `crate::types`.

use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::zset::ZSet;
use bytes::Bytes;

#[derive(Clone, Debug)]
pub enum Value {
    Str(Bytes),
    Hash(Hash),
    List(List),
    Set(Set),
    ZSet(ZSet),
}

// A shard entry is (Key 24, Entry 48). Every type is at most 32 bytes, but `Bytes` has a
// single niche (its vtable pointer is never null), so an enum over more than two types needs
// a tag of its own: 40 bytes. Keep it there (boxing a type would not help: the tag is the cost).
const _: () = assert!(std::mem::size_of::<Value>() == 40);

impl Value {
    /// TYPE's answer.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
        }
    }

    /// Whether creating a key of this type can wake clients blocked in a pop (BLPOP and
    /// friends on lists; BZPOPMIN and friends on sorted sets): Redis's signalKeyAsReady
    /// types.
    pub fn serves_blocked_pops(&self) -> bool {
        matches!(self, Value::List(_) | Value::ZSet(_))
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
