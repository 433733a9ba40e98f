//! What a cluster node keeps: [`ClusterNode`], held by its `ServerState` (None outside cluster
//! mode), and [`Shared`], what the nodes of one process share: the configuration
//! ([`crate::cluster::Membership`]), the servers themselves, and the lock that serialises
//! operations across nodes. Also the replication feed's state ([`Feed`] on a master,
//! [`Follow`] on a replica) and what travels on it ([`Effect`], [`Msg`]).
//!
//! # The replication feed (the seam replicas follow their master through)
//!
//! A replica follows its master through one in-process feed of the master's write effects:
//! a full copy of the master's dataset when it attaches ([`Msg::Sync`]), then one
//! [`Msg::Unit`] per command, script or transaction the master ran, in the order it ran them.
//! A unit carries the final state of every key the command signalled as modified (Redis's
//! signalModifiedKey: exact for scripts, random commands such as SPOP and blocked clients
//! served later), the databases it flushed, and the commands replayed as they are (FUNCTION).
//! The master side only calls `touched`, `flushed`, `replay` and `commit`
//! (`cluster/replication.rs`); a replication stream of RESP commands (the master side of
//! Redis replication) can feed the same follower by sending its commands as
//! [`Effect::Command`].

use crate::cluster::{Membership, NodeIx};
use crate::cmd::runtime::state::ServerState;
use crate::keyspace::{Entry, Snapshot};
use bytes::Bytes;
use indexmap::IndexSet;
use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
use std::sync::{Arc, OnceLock, Weak};
use tokio::sync::mpsc::UnboundedSender;

/// A client's cluster flags (Redis's CLIENT_READONLY and CLIENT_ASKING), kept in
/// `Client::cluster_flags`.
pub mod client_flags {
    /// READONLY: a replica serves this client's reads of its master's slots.
    pub const READONLY: u8 = 1;
    /// ASKING: the next command may use a slot this node is importing.
    pub const ASKING: u8 = 2;
}

/// What the nodes of one process share.
pub struct Shared {
    /// The configuration every node routes with.
    pub membership: Membership,
    /// Each node's server, by node index (set once every server exists).
    servers: OnceLock<Vec<Weak<ServerState>>>,
    /// Held by an operation that takes the server locks of several nodes (a migration, a
    /// failover, a resync), so two of them never wait for each other's locks.
    pub ops: tokio::sync::Mutex<()>,
    /// Unix ms the cluster started at (CLUSTER LINKS' create-time).
    pub started_ms: i64,
    /// The runtime the nodes run on: operations a command starts (CLUSTER FAILOVER) run on
    /// it after the command returns.
    pub rt: tokio::runtime::Handle,
}

impl Shared {
    /// The nodes' configuration; servers are registered with [`Shared::set_servers`].
    pub fn new(membership: Membership, started_ms: i64, rt: tokio::runtime::Handle) -> Arc<Shared> {
        Arc::new(Shared {
            membership,
            servers: OnceLock::new(),
            ops: tokio::sync::Mutex::new(()),
            started_ms,
            rt,
        })
    }

    /// Register the servers, by node index (once).
    pub fn set_servers(&self, servers: Vec<Weak<ServerState>>) {
        let _ = self.servers.set(servers);
    }

    /// The server of `node`, while it runs.
    pub fn server(&self, node: NodeIx) -> Option<Arc<ServerState>> {
        self.servers.get()?.get(node)?.upgrade()
    }

    /// Every running server with its node index.
    pub fn servers(&self) -> Vec<(NodeIx, Arc<ServerState>)> {
        self.servers
            .get()
            .map(|v| {
                v.iter()
                    .enumerate()
                    .filter_map(|(i, w)| w.upgrade().map(|s| (i, s)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One node's cluster state.
pub struct ClusterNode {
    /// This node's index in the configuration.
    pub me: NodeIx,
    /// What the nodes share.
    pub shared: Arc<Shared>,
    /// The master side of replication: the replicas following this node.
    pub feed: Feed,
    /// The replica side: whom this node follows and how far it got.
    pub follow: Follow,
    /// Cut off from clients too (a partition): connections are refused.
    pub cut_from_clients: AtomicBool,
}

impl ClusterNode {
    /// Node `me` of `shared`.
    pub fn new(me: NodeIx, shared: Arc<Shared>) -> Arc<ClusterNode> {
        Arc::new(ClusterNode {
            me,
            shared,
            feed: Feed::default(),
            follow: Follow::default(),
            cut_from_clients: AtomicBool::new(false),
        })
    }
}

/// One write effect (see the module documentation).
#[derive(Clone, Debug)]
pub enum Effect {
    /// A key's state after the unit: its entry, or None when it is gone.
    Key {
        /// Database.
        db: usize,
        /// The key.
        key: Bytes,
        /// Its entry (value, expiry), or None.
        entry: Option<Entry>,
    },
    /// A database emptied (None: every database), before the unit's keys.
    Flush(Option<usize>),
    /// A keyspace notification the master raised (class, event, database, key): the replica
    /// raises it too, as a replica executing the command would.
    Event {
        /// notify-keyspace-events class bit.
        class: u32,
        /// The event's name (`set`, `expire`, ...).
        event: String,
        /// Database.
        db: usize,
        /// The key.
        key: Bytes,
    },
    /// A command replayed as it is, in database `db`.
    Command {
        /// Database.
        db: usize,
        /// The command line.
        args: Vec<Bytes>,
    },
}

/// What a follower receives.
#[derive(Debug)]
pub enum Msg {
    /// Start from a copy of the master's dataset and functions, taken at `offset`.
    Sync {
        /// The dataset.
        snapshot: Arc<Snapshot>,
        /// FUNCTION DUMP's payload, if any library is loaded.
        functions: Option<Bytes>,
        /// The master's replication offset the copy was taken at.
        offset: u64,
    },
    /// The effects of one command, script or transaction, ending at `offset`.
    Unit {
        /// The effects, flushes first.
        effects: Arc<Vec<Effect>>,
        /// The master's replication offset after them.
        offset: u64,
    },
}

/// Effects of the command running now, gathered until it ends.
#[derive(Default)]
pub struct Pending {
    /// Databases flushed, in order (None: all).
    pub flushes: Vec<Option<usize>>,
    /// Keys signalled as modified, once each, in order.
    pub keys: IndexSet<(usize, Bytes)>,
    /// Commands to replay.
    pub commands: Vec<(usize, Vec<Bytes>)>,
    /// Keyspace notifications raised, in order: (class, event, db, key).
    pub events: Vec<(u32, String, usize, Bytes)>,
}

impl Pending {
    /// Nothing gathered.
    pub fn is_empty(&self) -> bool {
        self.flushes.is_empty()
            && self.keys.is_empty()
            && self.commands.is_empty()
            && self.events.is_empty()
    }
}

/// A replica following this node.
pub struct Subscriber {
    /// Its node index.
    pub node: NodeIx,
    /// Where its messages go.
    pub tx: UnboundedSender<Msg>,
}

/// The master side of replication.
#[derive(Default)]
pub struct Feed {
    /// Some replica follows this node: writes gather effects (one atomic load otherwise).
    pub active: AtomicBool,
    /// Effects of the command running now.
    pub pending: Mutex<Pending>,
    /// The replicas following.
    pub subscribers: Mutex<Vec<Subscriber>>,
    /// Replication offset: grows with every unit sent (by the unit's size in bytes as
    /// effects: keys, values and arguments).
    pub offset: AtomicU64,
}

/// The replica side of replication.
#[derive(Default)]
pub struct Follow {
    /// The master this node follows now (None: it is a master).
    pub master: RwLock<Option<NodeIx>>,
    /// The master's offset this node has applied up to.
    pub applied: AtomicU64,
    /// Bumped each time the node starts following anew: an older follower task stops.
    pub generation: AtomicU64,
    /// 1 once the first copy of the master's data is loaded (link up).
    pub synced: AtomicU8,
}
