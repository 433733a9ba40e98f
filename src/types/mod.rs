//! The value types a key can hold, one module each, with their compact encodings and memory
//! accounting. They know nothing of keys, expiry, clients or the wire: the keyspace stores
//! them, commands use them.

pub mod alloc;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod list;
pub mod set;
pub mod stream;
pub mod zset;
