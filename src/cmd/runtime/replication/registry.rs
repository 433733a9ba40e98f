//! What the server keeps as a replication master: its replication id and the stream's
//! history (the backlog), created when the first replica attaches.

use crate::repl::backlog::Backlog;
use parking_lot::Mutex;

/// Replication's state.
pub struct Replication {
    /// The master's replication id (master_replid).
    pub replid: String,
    /// The stream's history; None until a replica first attaches (Redis creates the
    /// backlog then too).
    pub backlog: Mutex<Option<Backlog>>,
    /// The database the stream last selected (a SELECT goes out on a change).
    pub stream_db: Mutex<Option<usize>>,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            replid: crate::repl::backlog::new_replid(),
            backlog: Mutex::new(None),
            stream_db: Mutex::new(None),
        }
    }
}
