//! Value types kept in the keyspace, as pure data structures with no server dependencies.
pub mod list;
