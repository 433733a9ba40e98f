//! Per-connection state. [`Client`] is owned by the connection task and handed to handlers;
//! [`ClientInfo`] is the part other clients may read (CLIENT LIST) or act on (CLIENT KILL);
//! [`ClientExtra`] the control flags of CLIENT REPLY, NO-EVICT, TRACKING and MONITOR;
//! [`MultiState`] a transaction being queued. Plain data that names nothing else of `cmd/`
//! (ServerState holds clients); what is done with clients is in `clients.rs`.

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
    /// null: the `name` fields of static rows, so recording them per command is two stores.
    last_cmd: AtomicPtr<&'static str>,
    last_parent: AtomicPtr<&'static str>,
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
    /// CLIENT REPLY, PAUSE, TRACKING, MONITOR and NO-EVICT state.
    pub extra: ClientExtra,
    /// Commands queued in MULTI, -1 outside MULTI (CLIENT LIST's `multi=` and `x` flag).
    pub multi: AtomicI64,
    /// Blocked in BLPOP and friends (CLIENT LIST's `b` flag); set and cleared under the
    /// server lock by the blocking subsystem.
    pub blocked: AtomicBool,
    /// Sent a `RESPLOCK.*` command: a test's control connection, which faults spare unless
    /// they name it (see `runtime/fault_table.rs`).
    pub control: AtomicBool,
    /// Accepted while the server refused connections: closed at its first ordinary request
    /// if the refusal still holds then.
    pub refused: AtomicBool,
}

impl ClientInfo {
    /// Channels, patterns and shard channels the client is subscribed to.
    pub fn subscription_count(&self) -> usize {
        self.subscriptions.load(Ordering::Relaxed)
            + self.pattern_subscriptions.load(Ordering::Relaxed)
            + self.shard_subscriptions.load(Ordering::Relaxed)
    }

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
            control: AtomicBool::new(false),
            refused: AtomicBool::new(false),
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

    /// A command starts: the time (idle) and the command's name and its container's (CLIENT
    /// LIST's cmd), given as the `name` fields of static rows so recording them is two stores.
    pub fn touch(
        &self,
        parent: Option<&'static &'static str>,
        cmd: &'static &'static str,
        now_ms: i64,
    ) {
        self.last_active_ms
            .store(now_ms.max(0) as u64, Ordering::Relaxed);
        let ptr = |n: &'static &'static str| n as *const &'static str as *mut &'static str;
        self.last_parent
            .store(parent.map_or(std::ptr::null_mut(), ptr), Ordering::Relaxed);
        self.last_cmd.store(ptr(cmd), Ordering::Relaxed);
    }

    /// Connected through the unix socket or from 127.0.0.1 or ::1 (Redis's islocalClient),
    /// which `enable-debug-command local` and `enable-protected-configs local` let in.
    pub fn is_local(&self) -> bool {
        self.is_unix_socket()
            || self.addr.parse::<std::net::SocketAddr>().is_ok_and(|a| {
                a.ip() == std::net::Ipv4Addr::LOCALHOST || a.ip() == std::net::Ipv6Addr::LOCALHOST
            })
    }

    /// CLIENT LIST's cmd field: `get`, `client|list`, or `NULL` before any command.
    pub fn last_cmd_name(&self) -> String {
        // SAFETY: both are null or point at `name` fields of the static command table.
        let (parent, cmd) = unsafe {
            (
                self.last_parent.load(Ordering::Relaxed).as_ref(),
                self.last_cmd.load(Ordering::Relaxed).as_ref(),
            )
        };
        match (parent, cmd) {
            (_, None) => "NULL".to_string(),
            (Some(p), Some(c)) => format!("{p}|{c}"),
            (None, Some(c)) => c.to_string(),
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
    /// The reply being sent is an error already counted in INFO errorstats where a command
    /// produced it (a script's error raised by its `redis.call`), so it is not counted again.
    pub error_counted: bool,
    /// Out-of-band frames (pub/sub deliveries, subscribe confirmations) for this connection,
    /// written in order with its replies; its accounting enforces the pubsub output-buffer
    /// limits.
    pub push: Arc<PushQueue>,
    /// Channels, patterns and shard channels this client subscribed to.
    pub pubsub: ClientSubs,
    /// The transaction being queued, between MULTI and EXEC/DISCARD.
    pub multi: Option<MultiState>,
    /// While blocked ([`Client::is_blocked`]): when the wait times out, on the server clock
    /// (ms), 0 for never.
    pub block_deadline: i64,
    /// System time (µs) at the end of this client's previous command, while the connection
    /// runs a batch of pipelined requests (0 otherwise): the next command's time and start,
    /// so a pipeline reads the clock once per command. Cleared after the batch.
    pub(crate) recent_us: i64,
    /// System time (µs) the current command started at (its duration's start).
    pub(crate) started_us: i64,
    /// On a cluster node: READONLY and ASKING (`cluster::registry::client_flags`).
    pub cluster_flags: u8,
    /// On a cluster node: the version of the node's view this client's command was routed
    /// with (routed again under the lock if the view changed meanwhile).
    pub cluster_seen: u64,
    /// What this client said as a would-be replica (REPLCONF), and its SYNC/PSYNC once sent:
    /// the connection then serves it as a replica.
    pub replica: Option<Box<crate::cmd::runtime::replication::registry::Handshake>>,
    /// SCRIPT DEBUG: the client's next EVAL runs under the Lua debugger.
    pub lua_debug: LuaDebug,
    /// The connection's socket descriptor, which a debugging session reads and writes
    /// itself (None over TLS, or without a connection).
    pub socket_fd: Option<i32>,
    /// Whether this client's scripts run on the worker that received them
    /// (`handoff::runs_inline`), decided at its first script: a connection stays on one
    /// runtime, and the answer costs a reference count on the runtime's handle.
    pub(crate) scripts_inline: Option<bool>,
}

/// SCRIPT DEBUG's mode for a client's next EVAL.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum LuaDebug {
    /// NO: scripts run as usual.
    #[default]
    Off,
    /// YES: Redis forks a session whose writes are discarded; resplock runs it as SYNC
    /// (docs/differences.md).
    Yes,
    /// SYNC: the session blocks the server and keeps the script's writes.
    Sync,
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
            error_counted: false,
            push,
            pubsub: ClientSubs::default(),
            multi: None,
            block_deadline: 0,
            recent_us: 0,
            started_us: 0,
            cluster_flags: 0,
            cluster_seen: 0,
            replica: None,
            lua_debug: LuaDebug::Off,
            socket_fd: None,
            scripts_inline: None,
        }
    }

    /// It sent SYNC or PSYNC: its connection is a replica's link from now on.
    pub fn syncing(&self) -> bool {
        self.replica.as_ref().is_some_and(|h| h.sync.is_some())
    }

    /// A client with no connection (the Lua caller's stand-in, embedded use).
    pub fn detached(id: u64, db: usize, resp: u8) -> Self {
        let info = Arc::new(ClientInfo::new(id, String::new(), String::new()));
        let mut c = Client::new(info, true);
        c.db = db;
        c.resp = resp;
        c.push.set_resp(resp);
        c
    }

    /// Channels, patterns and shard channels this client is subscribed to.
    pub fn subscription_count(&self) -> usize {
        self.info.subscription_count()
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

/// CLIENT REPLY flags (Redis's CLIENT_REPLY_OFF, _SKIP, _SKIP_NEXT).
pub mod reply_flags {
    /// No reply is sent until CLIENT REPLY ON.
    pub const OFF: u8 = 1;
    /// The reply of the command now running is dropped.
    pub const SKIP: u8 = 2;
    /// Set by CLIENT REPLY SKIP: the next command's reply is dropped.
    pub const SKIP_NEXT: u8 = 4;
}

/// The control flags of one client.
#[derive(Default)]
pub struct ClientExtra {
    /// CLIENT NO-EVICT on (CLIENT LIST's `e` flag).
    pub no_evict: AtomicBool,
    /// What the client's buffers hold (CLIENT LIST's memory fields, client eviction).
    pub mem: ClientMem,
    /// In MONITOR mode (CLIENT LIST's `O` flag).
    pub monitor: AtomicBool,
    /// A replica's link (CLIENT LIST's `S` flag, CLIENT KILL TYPE replica).
    pub replica: AtomicBool,
    /// This replica's link to its master (CLIENT LIST's `M` flag, CLIENT KILL TYPE master).
    pub master: AtomicBool,
    /// Unblocked with an error that closes the connection once written (a master that
    /// became a replica: Redis's CLIENT_CLOSE_AFTER_REPLY).
    pub close_after_unblock: AtomicBool,
    /// [`reply_flags`] bits.
    pub reply: AtomicU8,
    /// Bytes in the query buffer when the current command started (CLIENT LIST's qbuf).
    pub qbuf: std::sync::atomic::AtomicUsize,
    /// The client's outbox, for other clients' commands that push to it (tracking).
    pub push: std::sync::OnceLock<std::sync::Arc<crate::outbox::PushQueue>>,
    /// Frames for this client that go after the reply of the command it is running
    /// (invalidations of keys it changed itself).
    pub after_reply: parking_lot::Mutex<Vec<bytes::Bytes>>,
    /// Set when a frame is added to `after_reply`, so that the reply path, which looks after
    /// every command, takes the lock only when there is something to take.
    pub after_reply_pending: std::sync::atomic::AtomicBool,
}

impl ClientExtra {
    /// After a command ran: whether its reply is written, then Redis's resetClient step
    /// (SKIP lasts one command; SKIP_NEXT becomes SKIP for the next one).
    pub fn reply_allowed_then_advance(&self) -> bool {
        use reply_flags::*;
        let f = self.reply.load(Ordering::Relaxed);
        if f == 0 {
            return true;
        }
        let allowed = f & (OFF | SKIP) == 0;
        let mut next = f & !SKIP;
        if next & SKIP_NEXT != 0 {
            next = (next | SKIP) & !SKIP_NEXT;
        }
        self.reply.store(next, Ordering::Relaxed);
        allowed
    }
}

/// One command queued after MULTI, resolved when it was queued: its row by number in the
/// server's command table (`CommandTable::every_row`), so a client names no row type.
pub struct Queued {
    pub row: usize,
    pub args: Vec<Bytes>,
}

/// A client's transaction in progress (Redis's CLIENT_MULTI with its mstate).
#[derive(Default)]
pub struct MultiState {
    pub queued: Vec<Queued>,
    /// A command failed its checks while queuing (Redis's CLIENT_DIRTY_EXEC): EXEC aborts.
    pub aborted: bool,
}

/// The parts of a client's memory Redis's getClientMemoryUsage adds up that live in its
/// connection (the query buffer, the arguments of the request being read or run, the replies
/// not yet written) or its transaction; the connection task stores them as they change, and
/// `client_mem` adds what other subsystems hold (subscriptions, watched keys, prefixes).
#[derive(Default)]
pub struct ClientMem {
    /// Bytes allocated for the query buffer (Redis's sdsZmallocSize(querybuf)).
    pub qbuf_alloc: AtomicUsize,
    /// The arguments parsed and not yet freed: their lengths plus a pointer each (Redis's
    /// argv_len_sum + sizeof(robj*) * argc, CLIENT LIST's argv-mem is the first part).
    pub argv_len: AtomicUsize,
    /// How many arguments `argv_len` counts.
    pub argc: AtomicUsize,
    /// Reply bytes produced and not yet written to the socket (CLIENT LIST's omem).
    pub obuf: AtomicUsize,
    /// The queued commands' argument bytes in MULTI (CLIENT LIST's multi-mem, without the
    /// watched keys).
    pub multi_argv: AtomicUsize,
    /// Commands queued in MULTI (each costs Redis a multiCmd).
    pub multi_cmds: AtomicUsize,
    /// The total last counted towards maxmemory-clients (0 when the client is not evictable).
    pub counted: AtomicUsize,
}
