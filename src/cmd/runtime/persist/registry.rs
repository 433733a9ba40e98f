//! What the server keeps for persistence: the live append-only log when `appendonly` is on.

use crate::aof::append::Appender;
use parking_lot::RwLock;
use std::sync::Arc;

/// Persistence's state.
#[derive(Default)]
pub struct Persist {
    /// The append-only log being written, while `appendonly` is on.
    pub aof: RwLock<Option<Arc<Appender>>>,
}
