//! The MONITOR clients' outboxes. `observe::feed` formats each command run as Redis's
//! replicationFeedMonitors does; the MONITOR command (`families/monitor.rs`) adds a client.

use crate::outbox::PushQueue;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The monitoring clients' outboxes; the count lets a command skip the feed with one load.
#[derive(Default)]
pub struct Monitors {
    pub queues: Mutex<Vec<(u64, Arc<PushQueue>)>>,
    /// How many: read by every command.
    pub count: AtomicUsize,
}

impl Monitors {
    /// Stop feeding a client (it disconnected, or RESET).
    pub fn forget(&self, id: u64) {
        if self.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut q = self.queues.lock();
        q.retain(|(c, _)| *c != id);
        self.count.store(q.len(), Ordering::Relaxed);
    }
}
