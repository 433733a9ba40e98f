//! The state of propagation (Redis's `server.also_propagate` and the client flags that steer
//! it): the commands' effects gathered for the execution unit that is running, and the frame
//! of each (possibly nested) command call.

use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// One effect to propagate: a command to run in a database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// The database it runs in.
    pub db: usize,
    /// The command and its arguments.
    pub args: Vec<Bytes>,
}

/// What one running command asked of propagation (the CLIENT_PREVENT_PROP/FORCE_* flags
/// and a rewritten argv).
#[derive(Default)]
pub struct Frame {
    /// The server's change count when the command started (its changes are the difference).
    pub dirty: u64,
    /// Propagate these arguments instead of the command's (rewriteClientCommandVector).
    pub argv: Option<Vec<Bytes>>,
    /// Do not propagate the command itself (its effects were propagated one by one).
    pub prevent: bool,
    /// Propagate the command even though it changed nothing (FLUSHALL on an empty server).
    pub force: bool,
    /// Propagate to replicas only (PUBLISH).
    pub repl_only: bool,
}

/// Propagation targets: the append-only log.
pub const TO_AOF: u8 = 1;
/// Propagation targets: the replicas.
pub const TO_REPLICAS: u8 = 2;
/// Propagation targets: both.
pub const TO_ALL: u8 = TO_AOF | TO_REPLICAS;

/// Gathered effects and open frames; only touched under the server lock.
#[derive(Default)]
pub struct Inner {
    /// Frames of the calls running now, outermost first.
    pub frames: Vec<Frame>,
    /// Effects of the running execution unit, in order, each with its targets ([`TO_AOF`],
    /// [`TO_REPLICAS`]).
    pub ops: Vec<(Op, u8)>,
}


/// Propagation's state.
pub struct Propagation {
    /// Something consumes effects (the AOF is on, or replicas are attached): otherwise
    /// commands skip propagation after one atomic load.
    active: AtomicBool,
    /// The frames and gathered effects.
    pub inner: Mutex<Inner>,
    /// Where the commands a running script calls propagate (redis.set_repl; [`TO_ALL`]
    /// outside scripts). Only written under the server lock, so plain loads and stores do:
    /// apart from `inner` because every script sets and restores it (two lock round trips
    /// a run, where this costs none).
    pub script_targets: AtomicU8,
}

impl Default for Propagation {
    fn default() -> Self {
        Propagation {
            active: AtomicBool::new(false),
            inner: Mutex::default(),
            script_targets: AtomicU8::new(TO_ALL),
        }
    }
}

impl Propagation {
    /// Whether effects are gathered at all.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Turn gathering on or off (the AOF switched, a replica attached or left). Called under
    /// the server lock, between commands.
    pub fn set_active(&self, on: bool) {
        self.active.store(on, Ordering::Release);
    }
}
