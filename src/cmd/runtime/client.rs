//! Per-connection state. [`Client`] is owned by the connection task and handed to handlers;
//! [`ClientInfo`] is the part other clients may read (CLIENT LIST) or act on (CLIENT KILL).

use crate::cmd::runtime::state::ServerState;
use crate::outbox::PushQueue;
use crate::pubsub::ClientSubs;
use crate::wake::Cancel;
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{
    AtomicBool, AtomicI64, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::Arc;

pub struct ClientInfo {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    /// Server clock (Unix ms) at connection (CLIENT LIST's age, as Redis's ctime).
    pub created_ms: AtomicI64,
    pub name: Mutex<Option<Bytes>>,
    pub lib_name: Mutex<Option<Bytes>>,
    pub lib_ver: Mutex<Option<Bytes>>,
    pub db: AtomicUsize,
    pub resp: AtomicU8,
    /// Server clock (Unix ms) at the last command (CLIENT LIST's idle).
    pub last_active_ms: AtomicU64,
    /// The last command and its container, e.g. `list` in `client` (CLIENT LIST's cmd), or
    /// null. Rows of the static command table, so recording them per command is two stores.
    last_cmd: AtomicPtr<crate::cmd::runtime::table::Command>,
    last_parent: AtomicPtr<crate::cmd::runtime::table::Command>,
    pub subscriptions: AtomicUsize,
    pub pattern_subscriptions: AtomicUsize,
    pub shard_subscriptions: AtomicUsize,
    /// Cancelled by CLIENT KILL: the connection closes. Its doorbell also wakes the
    /// connection for pushes (see `crate::wake`).
    pub kill: Cancel,
    /// The ACL user the client is authenticated as (CLIENT LIST's user).
    pub user: Mutex<String>,
    /// Connected over the unix socket (CLIENT LIST's `U` flag; local for protected mode).
    unix_socket: std::sync::atomic::AtomicBool,
    /// CLIENT REPLY, PAUSE, TRACKING, MONITOR and NO-EVICT state ([`crate::cmd::runtime::client_state`]).
    pub extra: crate::cmd::runtime::client_state::ClientExtra,
    /// Commands queued in MULTI, -1 outside MULTI (CLIENT LIST's `multi=` and `x` flag).
    pub multi: AtomicI64,
    /// Blocked in BLPOP and friends (CLIENT LIST's `b` flag); set and cleared under the
    /// server lock by [`crate::cmd::runtime::blocking`].
    pub blocked: AtomicBool,
}

impl ClientInfo {
    pub fn new(id: u64, addr: String, laddr: String) -> Self {
        ClientInfo {
            id,
            addr,
            laddr,
            created_ms: AtomicI64::new(0),
            name: Mutex::new(None),
            lib_name: Mutex::new(None),
            lib_ver: Mutex::new(None),
            db: AtomicUsize::new(0),
            resp: AtomicU8::new(2),
            last_active_ms: AtomicU64::new(0),
            last_cmd: AtomicPtr::new(std::ptr::null_mut()),
            last_parent: AtomicPtr::new(std::ptr::null_mut()),
            subscriptions: AtomicUsize::new(0),
            pattern_subscriptions: AtomicUsize::new(0),
            shard_subscriptions: AtomicUsize::new(0),
            kill: Cancel::new(),
            user: Mutex::new("default".into()),
            unix_socket: Default::default(),
            extra: Default::default(),
            multi: AtomicI64::new(-1),
            blocked: AtomicBool::new(false),
        }
    }

    /// Record that this client came in over the unix socket.
    pub fn set_unix_socket(&self, unix: bool) {
        self.unix_socket.store(unix, Ordering::Relaxed);
    }

    /// Whether this client came in over the unix socket.
    pub fn is_unix_socket(&self) -> bool {
        self.unix_socket.load(Ordering::Relaxed)
    }

    pub fn touch(
        &self,
        parent: Option<&'static crate::cmd::runtime::table::Command>,
        cmd: &'static crate::cmd::runtime::table::Command,
        now_ms: i64,
    ) {
        self.last_active_ms
            .store(now_ms.max(0) as u64, Ordering::Relaxed);
        let ptr = |c: &'static crate::cmd::runtime::table::Command| {
            c as *const crate::cmd::runtime::table::Command
                as *mut crate::cmd::runtime::table::Command
        };
        self.last_parent
            .store(parent.map_or(std::ptr::null_mut(), ptr), Ordering::Relaxed);
        self.last_cmd.store(ptr(cmd), Ordering::Relaxed);
    }

    /// Connected from 127.0.0.1 or ::1 (Redis's islocalClient), which
    /// `enable-debug-command local` lets use DEBUG.
    pub fn is_local(&self) -> bool {
        self.addr.parse::<std::net::SocketAddr>().is_ok_and(|a| {
            a.ip() == std::net::Ipv4Addr::LOCALHOST || a.ip() == std::net::Ipv6Addr::LOCALHOST
        })
    }

    /// CLIENT LIST's cmd field: `get`, `client|list`, or `NULL` before any command.
    pub fn last_cmd_name(&self) -> String {
        // SAFETY: both are null or point into the static command table.
        let (parent, cmd) = unsafe {
            (
                self.last_parent.load(Ordering::Relaxed).as_ref(),
                self.last_cmd.load(Ordering::Relaxed).as_ref(),
            )
        };
        match (parent, cmd) {
            (_, None) => "NULL".to_string(),
            (Some(p), Some(c)) => format!("{}|{}", p.name, c.name),
            (None, Some(c)) => c.name.to_string(),
        }
    }
}

pub struct Client {
    pub info: Arc<ClientInfo>,
    pub id: u64,
    pub db: usize,
    /// RESP protocol version: 2 or 3.
    pub resp: u8,
    pub authenticated: bool,
    /// The ACL user the client runs as ("default" until AUTH).
    pub user: String,
    /// Close the connection once the pending replies are written (QUIT, protocol errors).
    pub close_after_reply: bool,
    /// Out-of-band frames (pub/sub deliveries, subscribe confirmations) for this connection,
    /// written in order with its replies; its accounting enforces the pubsub output-buffer
    /// limits.
    pub push: Arc<PushQueue>,
    /// Channels, patterns and shard channels this client subscribed to.
    pub pubsub: ClientSubs,
    /// The transaction being queued, between MULTI and EXEC/DISCARD.
    pub multi: Option<crate::cmd::families::transactions::MultiState>,
    /// While blocked ([`Client::is_blocked`]): when the wait times out, on the server clock
    /// (ms), 0 for never.
    pub block_deadline: i64,
    /// System time (µs) at the end of this client's previous command, while the connection
    /// runs a batch of pipelined requests (0 otherwise): the next command's time and start,
    /// so a pipeline reads the clock once per command. Cleared after the batch.
    pub(crate) recent_us: i64,
    /// System time (µs) the current command started at (its duration's start).
    pub(crate) started_us: i64,
}

impl Client {
    pub fn new(info: Arc<ClientInfo>, authenticated: bool) -> Self {
        let push = PushQueue::new(info.id, info.kill.clone());
        Client {
            id: info.id,
            info,
            db: 0,
            resp: 2,
            authenticated,
            user: "default".into(),
            close_after_reply: false,
            push,
            pubsub: ClientSubs::default(),
            multi: None,
            block_deadline: 0,
            recent_us: 0,
            started_us: 0,
        }
    }

    /// A client with no connection (the Lua caller's stand-in, embedded use).
    pub fn detached(id: u64, db: usize, resp: u8) -> Self {
        let info = Arc::new(ClientInfo::new(id, String::new(), String::new()));
        let push = PushQueue::new(id, info.kill.clone());
        push.set_resp(resp);
        Client {
            id,
            info,
            db,
            resp,
            authenticated: true,
            user: "default".into(),
            close_after_reply: false,
            push,
            pubsub: ClientSubs::default(),
            multi: None,
            block_deadline: 0,
            recent_us: 0,
            started_us: 0,
        }
    }

    /// Channels, patterns and shard channels this client is subscribed to.
    pub fn subscription_count(&self) -> usize {
        self.info.subscriptions.load(Ordering::Relaxed)
            + self.info.pattern_subscriptions.load(Ordering::Relaxed)
            + self.info.shard_subscriptions.load(Ordering::Relaxed)
    }

    /// Blocked in BLPOP and friends: the connection runs no request until it is served,
    /// times out or is unblocked.
    pub fn is_blocked(&self) -> bool {
        self.info.blocked.load(Ordering::Acquire)
    }

    pub fn select(&mut self, db: usize) {
        self.db = db;
        self.info.db.store(db, Ordering::Relaxed);
    }

    /// Switch protocol: replies and pushes queued from now on use it (frames already queued
    /// keep theirs, as in Redis, which encodes into the client's buffer at publish time).
    pub fn set_resp(&mut self, resp: u8) {
        self.resp = resp;
        self.info.resp.store(resp, Ordering::Relaxed);
        self.push.set_resp(resp);
    }
}

/// Register a new network client (CLIENT LIST sees it from now on).
pub fn connect(state: &ServerState, id: u64, addr: String, laddr: String) -> Client {
    let info = Arc::new(ClientInfo::new(id, addr, laddr));
    // Idle time counts from the connection until the first command (Redis's lastinteraction).
    let now = state.clock.now_ms();
    info.last_active_ms
        .store(now.max(0) as u64, Ordering::Relaxed);
    info.created_ms.store(now, Ordering::Relaxed);
    state.clients.lock().insert(id, info.clone());
    let client = Client::new(info, !state.requires_pass());
    let _ = client.info.extra.push.set(client.push.clone());
    client
}

/// Forget a closed connection everywhere it left state: the client registry and every layer
/// that keeps per-client state (its subscriptions, watched keys, blocked keys).
pub fn disconnect(state: &ServerState, client: &Client) {
    state.clients.lock().remove(&client.id);
    crate::cmd::families::pubsub::client_gone(state, client);
    state.observe.monitors.forget(client.id);
    state.tracking.disable(client.id);
    state.watches.forget(client.id);
    crate::cmd::runtime::blocking::forget(state, client.id);
}
