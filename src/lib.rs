//! resplock: a Redis-compatible (RESP2/RESP3) lock server.
//!
//! Embed it in tests:
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let server = resplock::start(resplock::Config::ephemeral()).await?;
//! let url = format!("redis://{}", server.local_addr());
//! // ... point a client at `url` ...
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//! or from blocking code with [`BlockingServer::start`].

pub mod clock;
pub mod cmd;
pub mod config;
pub mod connection;
pub mod error;
pub mod glob;
pub mod keyspace;
pub mod log;
pub mod num;
pub mod outbox;
pub mod protocol;
pub mod pubsub;
pub mod reply;
pub mod script;
pub mod server;
pub mod types;
pub mod version;

pub use clock::Clock;
pub use config::Config;
pub use keyspace::Snapshot;
pub use reply::Reply;
pub use server::{start, start_many, Backend, BlockingServer, Db, Hit, Restart, ServerHandle};

pub use version::REDIS_VERSION;

/// Whether resplock implements a command of this name (any case): the command line's
/// `rename-command` checks names against it, as redis-server does against its table.
pub fn command_exists(name: &str) -> bool {
    cmd::lookup(name.as_bytes()).is_some()
}
