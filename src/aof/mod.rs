//! Redis 7.0's multi-part append-only file: a manifest naming a base file (an RDB snapshot,
//! or commands) and incremental files of commands in `appenddirname`, written as
//! redis-server writes them so either server loads the other's directory.
//!
//! - [`manifest`]: the manifest's format and the naming rules of its files.
//! - [`encode`]: commands as the log records them, and a rewrite's commands for a key.
//! - [`append`]: the live log: records appended in execution order, written (and fsynced
//!   per `appendfsync`) before the replies of the writes they record.
//! - [`load`]: loading the log at start, with `aof-load-truncated`.

pub mod append;
pub mod encode;
pub mod load;
pub mod manifest;
