//! The lowest layer of `cmd/`: helpers that know nothing of a server, a client or the
//! keyspace. Argument parsing with Redis's rules and errors (`args`), the SCAN family's
//! arguments (`scan`), Redis's long double (`float80`), the flag bits of a command (`flags`)
//! and every command of redis-server 7.0.15 as COMMAND INFO/DOCS describe it
//! (`redis_commands`, generated; read through `meta`).

pub mod args;
pub mod flags;
pub mod float80;
pub mod help;
pub mod meta;
#[rustfmt::skip]
pub mod redis_commands;
pub mod scan;
