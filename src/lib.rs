#![warn(missing_docs)]
//! resplock: a Redis-compatible (RESP2/RESP3) lock server.
//!
//! Embed it in tests:
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
//! let server = resplock::start(resplock::Config::ephemeral()).await?;
//! let url = format!("redis://{}", server.local_addr());
//! // ... point a client at `url` ...
//! # assert!(url.starts_with("redis://127.0.0.1:"));
//! server.db(0).set("lock:a", "owner-1"); // or reach the data directly
//! server.db(0).assert_value("lock:a", "owner-1");
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//! or from blocking code with [`BlockingServer::start`].

// The public surface: `config` (what a server is started with, and the command line),
// `server` (starting servers, their handles and test controls), `version`, and the
// re-exports below. The `#[doc(hidden)]` modules are a test surface, not API: the
// integration tests, benches and fuzz targets reach the command table, keyspace values and
// script helpers through them, and they may change in any release.
pub mod alloc;
#[doc(hidden)]
pub mod aof;
pub(crate) mod clock;
#[doc(hidden)]
pub mod cluster;
#[doc(hidden)]
pub mod cmd;
pub mod config;
pub(crate) mod connection;
pub(crate) mod error;
pub(crate) mod glob;
pub mod history;
#[doc(hidden)]
pub mod keyspace;
pub(crate) mod log;
#[doc(hidden)]
pub mod num;
pub(crate) mod outbox;
#[doc(hidden)]
pub mod protocol;
pub(crate) mod pubsub;
#[doc(hidden)]
pub mod rdb;
#[doc(hidden)]
pub mod repl;
pub(crate) mod reply;
#[doc(hidden)]
pub mod script;
pub mod server;
#[doc(hidden)]
pub mod testkit;
pub(crate) mod tls;
#[doc(hidden)]
pub mod types;
pub mod version;
pub(crate) mod wake;

pub use clock::Clock;
pub use config::Config;
pub use keyspace::Snapshot;
pub use reply::Reply;
pub use server::{
    start, start_cluster, start_many, Backend, BlockingCluster, BlockingServer, Cluster, Db, Hit,
    Restart, ServerHandle,
};

pub use cmd::WORKER_STACK_BYTES;
pub use version::REDIS_VERSION;

/// Whether resplock implements a command of this name (any case): the command line's
/// `rename-command` checks names against it, as redis-server does against its table.
///
/// ```
/// assert!(resplock::command_exists("SET"));
/// assert!(resplock::command_exists("xadd"));
/// assert!(!resplock::command_exists("nosuchcommand"));
/// ```
pub fn command_exists(name: &str) -> bool {
    cmd::lookup(name.as_bytes()).is_some()
}
