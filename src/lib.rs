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
// re-exports below. The modules declared through `internal!` are a test surface, not API:
// public (and `#[doc(hidden)]`) only with the `internals` feature, which the integration
// tests, benches (through the crate's dev-dependency on itself) and fuzz targets enable to
// reach the command table, keyspace values and script helpers; they may change in any
// release. Without it they are the crate's own.

/// Declares modules that are public only with the `internals` feature (see above); without
/// it, items and re-exports only the tests reach are not reported as unused, nor the names
/// clippy leaves alone on a public API (as while these modules were always public).
macro_rules! internal {
    ($($name:ident;)*) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        #[allow(
            dead_code,
            unused_imports,
            clippy::enum_variant_names,
            clippy::wrong_self_convention
        )]
        pub(crate) mod $name;
    )*};
}

internal! {
    aof;
    cluster;
    cmd;
    keyspace;
    num;
    protocol;
    rdb;
    repl;
    script;
    testkit;
    types;
}

pub mod alloc;
pub(crate) mod clock;
pub mod config;
pub(crate) mod connection;
pub(crate) mod error;
pub(crate) mod glob;
pub mod history;
pub(crate) mod log;
pub(crate) mod outbox;
pub(crate) mod proctitle;
pub(crate) mod pubsub;
pub(crate) mod reply;
pub mod server;
pub(crate) mod tls;
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

/// The entry of a background job's writer child (the process that writes BGSAVE's and
/// BGREWRITEAOF's file, as redis-server's fork child does): `Some(exit code)` when the
/// command line is a writer child's, `None` for any other. A binary that serves with
/// [`enable_background_writers`] calls it first thing in `main`.
///
/// ```
/// let argv = vec!["resplock".to_string(), "--port".to_string(), "6379".to_string()];
/// assert_eq!(resplock::run_background_writer(&argv), None);
/// ```
pub fn run_background_writer(argv: &[String]) -> Option<i32> {
    cmd::runtime::persist::child::child_main(argv)
}

/// Let this process's servers write background jobs' files through a child process, this
/// same executable started as a writer (see [`run_background_writer`]). Without it (an
/// embedding test process), a job writes its file from a thread of the server.
///
/// ```no_run
/// // no_run: a test process enabled this way would start itself as a writer on BGSAVE.
/// // In a binary's main, after run_background_writer returned None:
/// resplock::enable_background_writers();
/// ```
pub fn enable_background_writers() {
    cmd::runtime::persist::child::enable()
}

/// Let the server show `proc-title-template` as this process's title (`ps`,
/// /proc/PID/cmdline), as redis-server does, by taking over the command line's memory. For
/// a binary that runs one server: call it first thing in `main`, before any thread starts.
///
/// ```no_run
/// // no_run: it rewrites the running process's command line, here the test's.
/// resplock::enable_process_title();
/// ```
pub fn enable_process_title() {
    proctitle::enable()
}
