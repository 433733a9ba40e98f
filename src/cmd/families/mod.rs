//! The command families, one file each: a family's `COMMANDS` rows and their handlers.
//! A new family is a file here listed once in [`ALL`]; it uses `runtime` (the state, `Ctx`,
//! typed access, signals), `base` (argument parsing) and nothing above.

use crate::cmd::runtime::table::Row;

pub mod acl;
pub mod bitfield;
pub mod bitmaps;
pub mod client;
pub mod client_settings;
pub mod cluster;
pub mod cluster_view;
pub mod command;
pub mod config;
pub mod connection;
pub mod counters;
pub mod databases;
pub mod debug;
pub mod debug_digest;
pub mod debug_htstats;
pub mod dump;
pub mod functions;
pub mod geo;
pub mod hashes;
pub mod hyperloglog;
pub mod info;
pub mod keys;
pub mod latency;
pub mod lcs;
pub mod list_moves;
pub mod lists;
pub mod lolwut;
pub mod memory;
pub mod migrate;
pub mod modules;
pub mod monitor;
pub mod object;
pub mod pubsub;
pub mod replication;
pub mod resplock;
pub mod scripting;
pub mod server;
pub mod set_ops;
pub mod sets;
pub mod slowlog;
pub mod sort;
pub mod stream_groups;
pub mod stream_info;
pub mod stream_read;
pub mod streams;
pub mod strings;
pub mod transactions;
pub mod zset_blocking;
pub mod zset_range;
pub mod zset_store;
pub mod zsets;

/// Every family's rows; a new family is added here once.
pub static ALL: &[&[Row]] = &[
    connection::COMMANDS,
    client::COMMANDS,
    strings::COMMANDS,
    counters::COMMANDS,
    lcs::COMMANDS,
    bitmaps::COMMANDS,
    bitfield::COMMANDS,
    keys::COMMANDS,
    dump::COMMANDS,
    migrate::COMMANDS,
    databases::COMMANDS,
    hashes::COMMANDS,
    sets::COMMANDS,
    set_ops::COMMANDS,
    zsets::COMMANDS,
    zset_range::COMMANDS,
    zset_store::COMMANDS,
    zset_blocking::COMMANDS,
    streams::COMMANDS,
    stream_read::COMMANDS,
    stream_groups::COMMANDS,
    stream_info::COMMANDS,
    sort::COMMANDS,
    hyperloglog::COMMANDS,
    geo::COMMANDS,
    object::COMMANDS,
    memory::COMMANDS,
    debug::COMMANDS,
    lists::COMMANDS,
    list_moves::COMMANDS,
    server::COMMANDS,
    replication::COMMANDS,
    modules::COMMANDS,
    lolwut::COMMANDS,
    cluster::COMMANDS,
    info::COMMANDS,
    command::COMMANDS,
    config::COMMANDS,
    pubsub::COMMANDS,
    scripting::COMMANDS,
    functions::COMMANDS,
    slowlog::COMMANDS,
    latency::COMMANDS,
    monitor::COMMANDS,
    acl::COMMANDS,
    transactions::COMMANDS,
    resplock::COMMANDS,
];
