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

pub mod client;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod connection;
pub mod db;
pub mod error;
pub mod glob;
pub mod protocol;
pub mod pubsub;
pub mod reply;
pub mod script;
pub mod server;
pub mod shared;
pub mod types;

pub use config::Config;
pub use server::{start, BlockingServer, ServerHandle};

/// The Redis version resplock reports (HELLO, INFO, redis.REDIS_VERSION).
pub const REDIS_VERSION: &str = "7.0.15";
