//! The registry of blocked clients ServerState keeps: waiters by key in arrival order, each
//! client's keys, and the keys that became ready (see `blocking/mod.rs` for how a client
//! blocks and is served).

use crate::cmd::runtime::client::ClientInfo;
use crate::cmd::runtime::state::Ctx;
use crate::keyspace::Value;
use crate::outbox::PushQueue;
use crate::reply::Reply;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The value type a blocked client pops from (Redis's btype). A waiter is only served from a
/// ready key holding this type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    List,
    ZSet,
    /// XREAD/XREADGROUP: asked whatever the key holds now (a group reader is failed when
    /// its stream is gone), and served only once the stream has entries after its ID.
    Stream,
    /// WAIT for replica acknowledgements: no key serves it, only its timeout (or CLIENT
    /// UNBLOCK) ends it, answering the number of replicas that acknowledged: none.
    Replicas,
    /// SHUTDOWN waiting for lagging replicas: the server stops, or the shutdown is cancelled
    /// and the client gets the error; neither a timeout nor CLIENT UNBLOCK ends it.
    Shutdown,
}

impl Kind {
    /// What a waiter of this kind answers when its timeout passes (Redis's
    /// replyToBlockedClientTimedOut): the null array for pops, WAIT's acknowledged count.
    pub fn timeout_reply(self) -> Reply {
        match self {
            Kind::Replicas => Reply::Int(0),
            _ => Reply::NilArray,
        }
    }
}

/// The kind of value that can serve waiters, if `v` is one.
pub fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::List(_) => Some(Kind::List),
        Value::ZSet(_) => Some(Kind::ZSet),
        Value::Stream(_) => Some(Kind::Stream),
        _ => None,
    }
}

/// What serving a waiter produced: its reply, and whether the value at the ready key is now
/// gone (then nobody else is served from it).
pub struct Served {
    pub reply: Reply,
    pub deleted: bool,
}

/// Serves one waiter from a ready key: runs under the server lock with a [`Ctx`] in the
/// waiter's database, only when the key holds a non-empty value of the waiter's [`Kind`]
/// (a [`Kind::Stream`] waiter whatever the key holds). `None` leaves it waiting.
pub type Serve = Box<dyn FnMut(&mut Ctx, &Bytes) -> Option<Served> + Send>;

/// A client about to block: see the module documentation.
pub struct Wait {
    pub kind: Kind,
    /// The keys, in the client's database, in argument order (repeats are one key).
    pub keys: Vec<Bytes>,
    /// Absolute deadline on the server clock in ms; 0 waits forever.
    pub deadline: i64,
    pub serve: Serve,
}

/// A registered waiter.
pub(super) struct Waiter {
    pub(super) db: usize,
    pub(super) kind: Kind,
    pub(super) keys: Vec<Bytes>,
    /// Position in every key's queue (one number for all its keys: the order it blocked in).
    pub(super) seq: u64,
    pub(super) serve: Serve,
    pub(super) info: Arc<ClientInfo>,
    pub(super) push: Arc<PushQueue>,
    /// The blocking command's arguments and how long it ran before it blocked, for the slow
    /// log when it is served (`None` for commands the slow log skips).
    pub(super) call: Option<(Vec<Bytes>, u64)>,
}

#[derive(Default)]
pub(super) struct Registry {
    /// (db, key) -> waiters by the order they blocked.
    pub(super) keys: HashMap<(usize, Bytes), BTreeMap<u64, u64>>,
    pub(super) clients: HashMap<u64, Waiter>,
    pub(super) next_seq: u64,
    /// Keys that became ready since the last serving pass, in that order, and as a set.
    pub(super) ready: Vec<(usize, Bytes)>,
    pub(super) ready_set: HashSet<(usize, Bytes)>,
}

impl Registry {
    /// Unregister `id` from every key; its record is returned.
    pub(super) fn remove(&mut self, id: u64) -> Option<Waiter> {
        let w = self.clients.remove(&id)?;
        for k in &w.keys {
            let slot = (w.db, k.clone());
            if let Some(q) = self.keys.get_mut(&slot) {
                q.remove(&w.seq);
                if q.is_empty() {
                    self.keys.remove(&slot);
                }
            }
        }
        Some(w)
    }
}

/// The registry of blocked clients (see the module documentation).
#[derive(Default)]
pub struct Blocking {
    /// Blocked clients: INFO's blocked_clients, and whether the keyspace reports ready keys.
    pub(super) blocked: AtomicUsize,
    pub(super) inner: Mutex<Registry>,
}

impl Blocking {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether any client is blocked (one atomic load).
    pub fn any(&self) -> bool {
        self.blocked.load(Ordering::Relaxed) > 0
    }

    /// How many clients are blocked.
    pub fn count(&self) -> usize {
        self.blocked.load(Ordering::Relaxed)
    }

    /// The command that blocked client `id` ran as `argv` for `us` microseconds: kept for the
    /// slow log, which logs it when it is served.
    pub fn remember_call(&self, id: u64, argv: &[Bytes], us: u64) {
        if let Some(w) = self.inner.lock().clients.get_mut(&id) {
            w.call = Some((argv.to_vec(), us));
        }
    }

    /// Remove `id` and mark it unblocked; returns its record if it was blocked.
    pub(super) fn take(&self, id: u64) -> Option<Waiter> {
        let w = self.inner.lock().remove(id)?;
        self.blocked.fetch_sub(1, Ordering::Relaxed);
        w.info.blocked.store(false, Ordering::Release);
        Some(w)
    }
}
