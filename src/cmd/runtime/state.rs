//! State shared by every connection of one server ([`ServerState`]), and a command's view
//! of it ([`Ctx`]).

use crate::clock::Clock;
use crate::cmd::runtime::client::{Client, ClientInfo};
use crate::cmd::runtime::table::CommandTable;
use crate::config::Config;
use crate::keyspace::{AccessPolicy, Db, Keyspace};
use crate::wake::Cancel;
use parking_lot::{Mutex, RwLock};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

#[derive(Default)]
pub struct Stats {
    pub total_connections: AtomicU64,
    /// Commands run: Redis's stat_numcommands, counted once per `call` (a command refused
    /// before it runs is not, a queued one is when EXEC runs it, a script's calls are).
    pub total_commands: LockCounter,
    pub rejected_connections: AtomicU64,
    pub net_input_bytes: AtomicU64,
    pub net_output_bytes: AtomicU64,
    /// Reads of a client's socket, as Redis counts calls of readQueryFromClient
    /// (total_reads_processed): one per read, whatever it returned.
    pub reads_processed: AtomicU64,
    /// Flushes of a client's replies, as Redis counts calls of writeToClient
    /// (total_writes_processed): one per batch written and one per later write of a
    /// reply that did not fit the socket at once.
    pub writes_processed: AtomicU64,
    pub keyspace_hits: LockCounter,
    pub keyspace_misses: LockCounter,
    /// Full resynchronizations served (INFO's sync_full).
    pub sync_full: AtomicU64,
    /// PSYNCs answered with +CONTINUE (sync_partial_ok).
    pub sync_partial_ok: AtomicU64,
    /// PSYNCs that named a history (not `?`) and got a full resynchronization instead
    /// (sync_partial_err).
    pub sync_partial_err: AtomicU64,
}

/// A statistic many commands add to (commands run, keyspace hits and misses). The holder of
/// the server lock adds with a plain load and store (no other thread writes that part
/// meanwhile: a locked add per command was a few percent of a pipelined GET); anyone else,
/// a command served past a busy script, with an atomic add on a part of its own, so neither
/// loses the other's counts. Readers add the parts.
#[derive(Default)]
pub struct LockCounter {
    locked: AtomicU64,
    unlocked: AtomicU64,
}

impl LockCounter {
    /// Add `n`; `locked`: the caller holds the server lock (`ServerLock::held_here`).
    #[inline]
    pub fn add(&self, n: u64, locked: bool) {
        let part = if locked { &self.locked } else { &self.unlocked };
        crate::cmd::runtime::lock::add_to(part, n, locked);
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.locked
            .load(Ordering::Relaxed)
            .wrapping_add(self.unlocked.load(Ordering::Relaxed))
    }

    /// Start again from zero (CONFIG RESETSTAT).
    pub fn reset(&self) {
        self.locked.store(0, Ordering::Relaxed);
        self.unlocked.store(0, Ordering::Relaxed);
    }
}

pub struct ServerState {
    /// The command table this server serves (the process's one table, `cmd::commands()`).
    pub commands: &'static CommandTable,
    /// Held by every command, script and transaction while it runs (see
    /// [`crate::cmd::runtime::lock`]).
    pub lock: crate::cmd::runtime::lock::ServerLock,
    pub keyspace: Keyspace,
    pub clock: Clock,
    pub config: RwLock<Config>,
    pub clients: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    next_client_id: AtomicU64,
    pub stats: Stats,
    /// Cancelled to stop the server (SHUTDOWN, ServerHandle::shutdown).
    pub shutdown: Cancel,
    pub started: Instant,
    /// The server clock at the start, Unix seconds (INFO's uptime, as Redis's stat_starttime:
    /// a test that moves the clock moves the uptime with it).
    pub started_s: std::sync::atomic::AtomicI64,
    /// 40 hex characters, as Redis's run_id.
    pub run_id: String,
    /// The first TCP listener's address (None: no TCP listener); CONFIG SET port moves it.
    pub local_addr: RwLock<Option<SocketAddr>>,
    /// The listening sockets, for CONFIG SET port/tls-port/bind (installed by the server).
    pub listeners: OnceLock<Box<dyn crate::cmd::runtime::listeners::Listeners>>,
    /// Lua scripting: the interpreter, the script cache, the running script's state.
    pub scripting: crate::script::Scripting,
    /// The client scripts run their `redis.call`s as: one, reused, since one script runs at
    /// a time.
    pub script_client: Mutex<crate::cmd::runtime::client::Client>,
    /// Channel and pattern subscriptions (PUBLISH, keyspace notifications).
    pub pubsub: crate::pubsub::PubSub,
    /// notify-keyspace-events, parsed: read by every write, so kept apart from `config`.
    pub notify_flags: std::sync::atomic::AtomicU32,
    /// maxmemory-policy's LRU/LFU choice and the lfu-* settings, packed (see
    /// [`ServerState::access_policy`]): read by every command, so kept apart from `config`.
    access_policy: AtomicU64,
    /// Changes to the dataset since the last SAVE (Redis's server.dirty: INFO's
    /// rdb_changes_since_last_save).
    pub dirty: AtomicU64,
    /// The process's resident set size when the server was created (MEMORY STATS'
    /// startup.allocated; MEMORY DOCTOR measures growth from it).
    pub startup_rss: u64,
    /// DEBUG PAUSE-CRON: true stops the background cycles.
    pub cron_paused: std::sync::atomic::AtomicBool,
    /// DEBUG SET-ACTIVE-EXPIRE: false stops the background expiry cycle.
    pub active_expire_enabled: std::sync::atomic::AtomicBool,
    /// DEBUG SET-DISABLE-DENY-SCRIPTS: true lets scripts call commands flagged `noscript`
    /// (DEBUG among them), as Redis's server.script_disable_deny_script.
    pub script_disable_deny: std::sync::atomic::AtomicBool,
    /// Command and error statistics, slow log, latency events, monitors.
    pub observe: crate::cmd::runtime::observe::registry::Observe,
    /// A shutdown asked for by a signal or waiting for the replicas.
    pub stopping: crate::cmd::runtime::shutdown::registry::Stopping,
    /// CLIENT PAUSE.
    pub pause: crate::cmd::runtime::pause::registry::Pause,
    /// CLIENT TRACKING.
    pub tracking: crate::cmd::runtime::tracking::Tracking,
    /// Unix time (s) of the last SAVE/BGSAVE (LASTSAVE); the start time until one runs.
    pub lastsave: std::sync::atomic::AtomicI64,
    /// Request, output-buffer and idle limits, copied from `config` on every change.
    pub client_limits: crate::cmd::runtime::client_limits::ClientLimits,
    /// maxmemory's settings and eviction state.
    pub eviction: crate::cmd::runtime::evict::registry::Eviction,
    /// ACL users, the permission check's state and the ACL log.
    pub acl: crate::cmd::runtime::acl::registry::Acl,
    /// WATCHed keys and the clients whose EXEC a change makes fail.
    pub watches: crate::cmd::runtime::watch::Watches,
    /// Clients blocked in BLPOP and friends, and the keys that became ready for them.
    pub blocking: crate::cmd::runtime::blocking::registry::Blocking,
    /// The client blocked clients are served as (their database, no connection): one,
    /// reused, since serving runs under the server lock.
    pub serve_client: Mutex<crate::cmd::runtime::client::Client>,
    /// Injected faults (tests): consulted by the request path behind one atomic load.
    pub faults: crate::cmd::runtime::fault_table::Faults,
    /// Copies of the dataset kept by RESPLOCK.SNAPSHOT / `take_snapshot`, by name.
    pub snapshots: Mutex<std::collections::HashMap<String, Arc<crate::keyspace::Snapshot>>>,
    /// The `RESPLOCK.*` commands resolve (started with `enable_test_commands`).
    pub test_commands: bool,
    /// Effects gathered for the AOF and replicas (see `propagate`).
    pub propagation: crate::cmd::runtime::propagate::registry::Propagation,
    /// The append-only log and the saves.
    pub persist: crate::cmd::runtime::persist::registry::Persist,
    /// The master side of replication.
    pub replication: crate::cmd::runtime::replication::registry::Replication,
    /// `lock-history`: the recorder of lock-key changes and the fenced resources.
    pub lock_history: crate::cmd::runtime::lock_history::registry::LockHistory,
    /// This server is a node of an in-process cluster (`--cluster N`); None otherwise, and
    /// then nothing of cluster mode runs (the request path and `call` test this once).
    pub cluster: Option<Arc<crate::cmd::runtime::cluster::registry::ClusterNode>>,
    /// MIGRATE's cached connections to its targets.
    pub migrate_sockets: crate::cmd::runtime::migrate::Cache,
    /// The lazy-free thread that frees what UNLINK deleted.
    pub lazyfree: crate::cmd::runtime::lazyfree::LazyFree,
    /// stop-writes-after-restart: writes refused for a while after the start.
    pub restart_delay: crate::cmd::runtime::restart_delay::RestartDelay,
}

impl ServerState {
    /// A server's state for `config`, serving `commands` (normally `cmd::commands()`).
    pub fn new(config: Config, commands: &'static CommandTable) -> Arc<ServerState> {
        Self::new_node(config, commands, None)
    }

    /// [`ServerState::new`] for a node of an in-process cluster (`cluster` Some).
    pub fn new_node(
        config: Config,
        commands: &'static CommandTable,
        cluster: Option<Arc<crate::cmd::runtime::cluster::registry::ClusterNode>>,
    ) -> Arc<ServerState> {
        let run_id = (0..40)
            .map(|_| char::from_digit(fastrand::u32(0..16), 16).expect("hex digit"))
            .collect();
        let state = Arc::new(ServerState {
            commands,
            notify_flags: 0.into(),
            access_policy: AtomicU64::new(0),
            dirty: AtomicU64::new(0),
            active_expire_enabled: true.into(),
            script_disable_deny: false.into(),
            cron_paused: false.into(),
            startup_rss: crate::alloc::rss_bytes(),
            lock: crate::cmd::runtime::lock::ServerLock::new(),
            keyspace: Keyspace::new(config.databases),
            test_commands: config.enable_test_commands,
            clock: Clock::new(),
            config: RwLock::new(config),
            clients: Mutex::new(BTreeMap::new()),
            next_client_id: AtomicU64::new(1),
            stats: Stats::default(),
            shutdown: Cancel::new(),
            started: Instant::now(),
            started_s: Default::default(),
            run_id,
            local_addr: RwLock::new(None),
            listeners: OnceLock::new(),
            scripting: crate::script::Scripting::new(
                crate::cmd::runtime::handoff::hand_off_if_long,
            ),
            script_client: Mutex::new(crate::cmd::runtime::client::Client::detached(0, 0, 2)),
            pubsub: crate::pubsub::PubSub::new(),
            observe: crate::cmd::runtime::observe::registry::Observe::new(
                commands.every_row().len(),
            ),
            pause: Default::default(),
            stopping: Default::default(),
            tracking: Default::default(),
            lastsave: std::sync::atomic::AtomicI64::new(0),
            client_limits: Default::default(),
            eviction: Default::default(),
            acl: Default::default(),
            watches: crate::cmd::runtime::watch::Watches::new(),
            blocking: crate::cmd::runtime::blocking::registry::Blocking::new(),
            serve_client: Mutex::new(crate::cmd::runtime::client::Client::detached(0, 0, 2)),
            faults: crate::cmd::runtime::fault_table::Faults::new(),
            snapshots: Mutex::new(std::collections::HashMap::new()),
            propagation: Default::default(),
            persist: Default::default(),
            replication: Default::default(),
            lock_history: Default::default(),
            cluster,
            migrate_sockets: Default::default(),
            lazyfree: Default::default(),
            restart_delay: Default::default(),
        });
        // LASTSAVE reads the start time until a save runs, on the server's clock.
        let start_s = state.clock.now_ms() / 1000;
        state.lastsave.store(start_s, Ordering::Relaxed);
        state.started_s.store(start_s, Ordering::Relaxed);
        // Derive the cached settings from the configuration the server starts with.
        state.config_changed();
        state
    }

    /// Recompute what is derived from `config` after CONFIG SET.
    pub fn config_changed(&self) {
        let config = self.config.read();
        crate::log::set_level(crate::log::Level::from_u8(config.loglevel as u8));
        let flags = crate::config::notify::parse_flags(&config.notify_keyspace_events);
        self.notify_flags
            .store(flags.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
        self.pubsub.refresh_limits(&config);
        self.client_limits.refresh(&config);
        self.observe.refresh(&config);
        self.eviction.refresh(&config);
        self.acl.sync_requirepass(&config.requirepass);
        self.lock_history.refresh(&config);
        self.tracking.refresh(&config);
        self.replication.refresh(&config);
        self.restart_delay.refresh(&config);
        let lfu = config.maxmemory_policy.ends_with("-lfu");
        let packed = (lfu as u64) << 63
            | (config.lfu_log_factor as u64 & 0x7fff_ffff) << 32
            | config.lfu_decay_time as u64;
        self.access_policy.store(packed, Ordering::Relaxed);
    }

    /// How key accesses are recorded (LRU or LFU), from maxmemory-policy and the lfu-*
    /// settings.
    pub fn access_policy(&self) -> AccessPolicy {
        let p = self.access_policy.load(Ordering::Relaxed);
        AccessPolicy {
            lfu: p >> 63 != 0,
            log_factor: ((p >> 32) & 0x7fff_ffff) as u32,
            decay_minutes: p as u32,
        }
    }

    /// Count `n` changes to the dataset (Redis's `server.dirty += n`).
    pub fn add_dirty(&self, n: u64) {
        self.dirty.fetch_add(n, Ordering::Relaxed);
    }

    pub fn next_client_id(&self) -> u64 {
        self.next_client_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Redis's authRequired for a fresh connection: the default user has a password or is
    /// disabled (requirepass sets its password).
    pub fn requires_pass(&self) -> bool {
        self.acl.auth_required()
    }
}

/// Everything a handler may touch. A write's signals (`Ctx::signal_modified`,
/// `Ctx::notify`) are defined with the events they raise, in `keyspace_events.rs`.
pub struct Ctx<'a> {
    pub state: &'a ServerState,
    pub client: &'a mut Client,
    /// Milliseconds since the epoch, read once per command (and frozen for a whole script).
    pub now: i64,
    pub in_script: bool,
    /// Running inside EXEC: blocking commands answer as if their timeout had passed.
    pub in_exec: bool,
}

impl<'a> Ctx<'a> {
    /// The client's selected database.
    pub fn db(&self) -> &'a Db {
        self.state.keyspace.db(self.client.db)
    }
}
