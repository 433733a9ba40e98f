//! Value types as pure data structures, kept free of the keyspace and commands.
pub mod set;
pub mod zset;
