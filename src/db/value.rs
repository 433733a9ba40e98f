use ahash::RandomState;
use bytes::Bytes;
use indexmap::IndexMap;

/// Redis's hash-max-listpack-entries and hash-max-listpack-value: below both, a hash keeps
/// insertion order (as Redis's listpack does) and HSCAN returns it whole.
pub const HASH_MAX_LISTPACK_ENTRIES: usize = 512;
pub const HASH_MAX_LISTPACK_VALUE: usize = 64;

#[derive(Clone, Debug)]
pub enum Value {
    Str(Bytes),
    Hash(Box<Hash>),
}

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

/// A hash. While `listpack` holds (small, short values, as Redis's listpack encoding) fields
/// keep insertion order and deletion preserves it; once it grows past Redis's limits it
/// behaves like Redis's hashtable encoding, and like Redis it never converts back.
#[derive(Clone, Debug, Default)]
pub struct Hash {
    pub map: IndexMap<Bytes, Bytes, RandomState>,
    pub listpack: bool,
}

impl Hash {
    pub fn new() -> Self {
        Hash {
            map: IndexMap::with_hasher(RandomState::new()),
            listpack: true,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn get(&self, field: &[u8]) -> Option<&Bytes> {
        self.map.get(field)
    }

    /// Set a field; true if it is new.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        if self.listpack
            && (field.len() > HASH_MAX_LISTPACK_VALUE || value.len() > HASH_MAX_LISTPACK_VALUE)
        {
            self.listpack = false;
        }
        let v = Bytes::copy_from_slice(value);
        let new = match self.map.get_mut(field) {
            Some(old) => {
                *old = v;
                false
            }
            None => {
                self.map.insert(Bytes::copy_from_slice(field), v);
                true
            }
        };
        if self.listpack && self.map.len() > HASH_MAX_LISTPACK_ENTRIES {
            self.listpack = false;
        }
        new
    }

    /// Remove a field; true if it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        if self.listpack {
            self.map.shift_remove(field).is_some()
        } else {
            self.map.swap_remove(field).is_some()
        }
    }
}
