//! The lowest layer of `cmd/`: helpers that know nothing of a server, a client or the
//! keyspace. Argument parsing with Redis's rules and errors (`args`), the SCAN family's
//! arguments (`scan`), Redis's long double (`float80`), the flag bits of a row (`flags`) and
//! what redis-server 7.0.15 reported for COMMAND INFO/DOCS (`meta`).

pub mod args;
pub mod flags;
pub mod float80;
pub mod help;
pub mod meta;
pub mod scan;
