//! The lock history's state in one server: its recorder (`crate::history::record`), what
//! the running request has changed so far, the group of `--instances` it is exported with,
//! and the fenced resources of `RESPLOCK.FENCED.WRITE`. Operations are in `mod.rs`.

use crate::config::Config;
use crate::history::record::{Made, Recorder, Settings};
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

/// A key the running request changed, and how.
pub struct Touch {
    pub(crate) db: usize,
    pub(crate) key: Bytes,
    /// The command that changed it (for a script, the `redis.call` that did).
    pub(crate) cmd: &'static str,
    pub(crate) made: Made,
}

/// What the running request (a command, a script, a transaction) has done so far: recorded
/// as one change per key when it ends, so a script's steps show as its result.
#[derive(Default)]
pub struct Capture {
    /// The command running now, and how it writes.
    pub(crate) cmd: &'static str,
    pub(crate) made: Option<Made>,
    pub(crate) touched: Vec<Touch>,
    /// The arguments of every command of the request: naming the owner is acting for it.
    pub(crate) args: Vec<Bytes>,
    /// Keys a transaction's WATCH covered (a check-and-set).
    pub(crate) watched: Vec<(usize, Bytes)>,
}

/// The nodes of `--instances` (or `start_many`): exported as one history.
pub struct Group {
    /// (node name, its recorder), in start order.
    pub(crate) members: Vec<(String, Arc<Recorder>)>,
    /// Members still running: the last one to stop writes `lock-history-file`.
    pub(crate) running: AtomicUsize,
}

/// A fenced resource: the highest token it accepted and the last value written.
#[derive(Clone, Default)]
pub struct Fenced {
    pub(crate) token: Option<i64>,
    pub(crate) value: Bytes,
}

/// See the module documentation.
pub struct LockHistory {
    pub(crate) recorder: Arc<Recorder>,
    pub(crate) capture: Mutex<Capture>,
    pub(crate) group: Mutex<Option<Arc<Group>>>,
    /// The clock is being moved: keys expiring now expire by the jump.
    pub(crate) clock_moving: AtomicBool,
    pub(crate) fenced: Mutex<HashMap<Bytes, Fenced>>,
}

impl Default for LockHistory {
    fn default() -> Self {
        LockHistory {
            recorder: Arc::new(Recorder::default()),
            capture: Mutex::new(Capture::default()),
            group: Mutex::new(None),
            clock_moving: AtomicBool::new(false),
            fenced: Mutex::new(HashMap::new()),
        }
    }
}

impl LockHistory {
    /// Take `lock-history*` from the configuration (at start and after CONFIG SET).
    pub fn refresh(&self, config: &Config) {
        self.recorder.configure(Settings {
            patterns: config
                .lock_history_keys
                .split_ascii_whitespace()
                .map(|p| p.as_bytes().to_vec())
                .collect(),
            max_per_key: config.lock_history_max_per_key.min(usize::MAX as u64) as usize,
            max_events: config.lock_history_max_events.min(usize::MAX as u64) as usize,
        });
        self.recorder.set_on(config.lock_history);
    }
}
