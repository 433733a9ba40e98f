//! The typed settings: [`Config`] (the parameters the server reads as fields, the rest as
//! text), the levels and modes some of them take, and [`Value`], a parameter's value as
//! Redis stores it. Plain data: the parameter table, parsing and loading (the other files of
//! `config/`) build it; `config/mod.rs` holds what is done with it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::table;

/// Redis's default client-output-buffer-limit.
pub const DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT: &str =
    "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";

/// Redis's default: every IPv4 interface, and IPv6 ones where there are (`-` makes the
/// address optional). Protected mode (on by default) refuses clients from outside loopback
/// while the default user has no password, as in Redis; test servers
/// ([`Config::ephemeral`]) listen on loopback only.
pub const DEFAULT_BIND: &str = "* -::*";

/// Redis's default `save` points: after an hour with a change, five minutes with 100, a
/// minute with 10,000. Test servers ([`Config::ephemeral`]) have none.
pub const DEFAULT_SAVE: &str = "3600 1 300 100 60 10000";

/// A parameter's value in the form Redis stores it (config.c's typed slots): what the
/// parsers produce and the formatters print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// yes/no.
    Bool(bool),
    /// Redis's `long long`: a percentage is kept negated, an unsigned value as its bits.
    Int(i64),
    /// An enum's value (OR of flags for multi-name enums).
    Enum(u32),
    /// Text; None is Redis's NULL ("not set"), printed as "".
    Str(Option<String>),
}

impl Value {
    pub(super) fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            _ => 0,
        }
    }
    pub(super) fn boolean(&self) -> bool {
        matches!(self, Value::Bool(true))
    }
    pub(super) fn enumeration(&self) -> u32 {
        match self {
            Value::Enum(e) => *e,
            _ => 0,
        }
    }
    pub(super) fn into_opt(self) -> Option<String> {
        match self {
            Value::Str(s) => s,
            _ => None,
        }
    }
    pub(super) fn into_string(self) -> String {
        self.into_opt().unwrap_or_default()
    }
}

/// `loglevel`, most to least verbose.
///
/// ```
/// let config = resplock::Config::default();
/// assert_eq!(config.loglevel, resplock::config::LogLevel::Notice);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Everything, for development.
    Debug = 0,
    /// Rarely useful details.
    Verbose = 1,
    /// Moderately verbose: what production wants (the default).
    Notice = 2,
    /// Only very important or critical messages.
    Warning = 3,
}

impl LogLevel {
    pub(super) fn from_value(v: u32) -> LogLevel {
        match v {
            0 => LogLevel::Debug,
            1 => LogLevel::Verbose,
            3 => LogLevel::Warning,
            _ => LogLevel::Notice,
        }
    }

    /// The name CONFIG GET prints.
    ///
    /// ```
    /// use resplock::config::LogLevel;
    /// assert_eq!(LogLevel::Warning.name(), "warning");
    /// ```
    pub fn name(self) -> &'static str {
        table::enum_name(table::LOGLEVEL, self as u32)
    }
}

/// `enable-debug-command` (and Redis's other enable-* switches): who may use the feature.
///
/// ```
/// use resplock::config::ProtectedAction;
/// assert!(ProtectedAction::Local.allows(true) && !ProtectedAction::No.allows(true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectedAction {
    /// Nobody.
    No = 0,
    /// Every client.
    Yes = 1,
    /// Clients connected over loopback or the unix socket.
    Local = 2,
}

impl ProtectedAction {
    pub(super) fn from_value(v: u32) -> ProtectedAction {
        match v {
            1 => ProtectedAction::Yes,
            2 => ProtectedAction::Local,
            _ => ProtectedAction::No,
        }
    }

    /// Redis's `allowProtectedAction`.
    ///
    /// ```
    /// use resplock::config::ProtectedAction;
    /// assert!(ProtectedAction::Local.allows(true));
    /// assert!(!ProtectedAction::Local.allows(false));
    /// assert!(ProtectedAction::Yes.allows(false));
    /// ```
    pub fn allows(self, client_is_local: bool) -> bool {
        self == ProtectedAction::Yes || (self == ProtectedAction::Local && client_is_local)
    }
}

/// The server's settings. Fields are the parameters resplock reads; [`Config::others`] holds
/// the rest. Build one with [`Config::default`] (redis-server's defaults, loopback bind, no
/// save points), [`Config::ephemeral`] or `parse_command_line`; read or change any
/// parameter by name with [`Config::get_matching`] and [`Config::set_many`].
///
/// ```
/// let config = resplock::Config {
///     enable_test_commands: true, // RESPLOCK.CLOCK and friends over the wire
///     busy_reply_threshold_ms: 100,
///     ..resplock::Config::ephemeral()
/// };
/// assert_eq!(config.port, 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Addresses to listen on, space separated as CONFIG GET prints them.
    pub bind: String,
    /// 0 picks a free port.
    pub port: u16,
    /// Password AUTH must present (None: no password).
    pub requirepass: Option<String>,
    /// Number of databases (SELECT 0..N-1).
    pub databases: usize,
    /// Most simultaneous clients.
    pub maxclients: usize,
    /// The `save` points (`seconds changes` pairs; empty: no automatic saves).
    pub save: String,
    /// `yes`/`no`: whether writes go to the append-only log (and it is loaded at start).
    pub appendonly: String,
    /// busy-reply-threshold (alias lua-time-limit), milliseconds.
    pub busy_reply_threshold_ms: u64,
    /// notify-keyspace-events, as the flags string Redis accepts.
    pub notify_keyspace_events: String,
    /// client-output-buffer-limit as Redis prints it: `class hard soft seconds` for the
    /// classes normal, slave and pubsub, in bytes (see [`Config::output_buffer_limit`]).
    pub client_output_buffer_limit: String,
    /// Largest bulk string a request may carry.
    pub proto_max_bulk_len: u64,
    /// Idle client timeout in seconds (0: never). Stored for CONFIG GET/SET only.
    pub timeout: u64,
    /// Stored for CONFIG GET/SET only: resplock never evicts.
    pub maxmemory: u64,
    /// Eviction policy name (stored only: resplock never evicts).
    pub maxmemory_policy: String,
    /// `everysec`/`always`/`no`: accepted for compatibility; nothing is written.
    pub appendfsync: String,
    /// Path of a unix socket to listen on as well.
    pub unixsocket: Option<String>,
    /// Permissions of the unix socket (0: left to the umask).
    pub unixsocketperm: u32,
    /// Detach from the terminal at start.
    pub daemonize: bool,
    /// File to write the pid into.
    pub pidfile: Option<String>,
    /// Log file; "" logs to standard output.
    pub logfile: String,
    /// Log verbosity.
    pub loglevel: LogLevel,
    /// The working directory set by `dir`; None keeps the process's.
    pub dir: Option<PathBuf>,
    /// Refuse non-loopback clients when no password is set and bind is the default.
    pub protected_mode: bool,
    /// Who may run DEBUG.
    pub enable_debug_command: ProtectedAction,
    /// Who may run MODULE LOAD/UNLOAD/LOADEX (resplock loads no modules either way).
    pub enable_module_command: ProtectedAction,
    /// Background task frequency, 1..=500 (Redis caps what it is given).
    pub hz: u32,
    /// TCP keepalive interval in seconds (0: off).
    pub tcp_keepalive: u32,
    /// I/O threads Redis would use (1..=128); a sizing hint for resplock.
    pub io_threads: u32,
    /// Keys sampled per eviction (LRU/LFU/TTL approximation).
    pub maxmemory_samples: u32,
    /// LFU counter logarithm factor (OBJECT FREQ).
    pub lfu_log_factor: u32,
    /// LFU counter decay period, minutes.
    pub lfu_decay_time: u32,
    /// List node size: negative is a byte class (-2: 8 KB), positive an entry count.
    pub list_max_listpack_size: i32,
    /// List nodes kept uncompressed at each end (0: no compression).
    pub list_compress_depth: u32,
    /// Largest integer set kept compact (OBJECT ENCODING intset).
    pub set_max_intset_entries: u64,
    /// Largest sorted set kept as a listpack, in entries.
    pub zset_max_listpack_entries: u64,
    /// Largest sparse HyperLogLog, header included, before it turns dense.
    pub hll_sparse_max_bytes: u64,
    /// Largest sorted set member kept in a listpack, bytes.
    pub zset_max_listpack_value: u64,
    /// Largest hash kept as a listpack, in fields (OBJECT ENCODING).
    pub hash_max_listpack_entries: u64,
    /// Largest stream node in entries (0: no limit).
    pub stream_node_max_entries: i64,
    /// Largest stream node in bytes (0: no limit but Redis's 1 GB).
    pub stream_node_max_bytes: u64,
    /// Largest hash field or value kept in a listpack, bytes.
    pub hash_max_listpack_value: u64,
    /// Microseconds; -1 disables the slow log, 0 logs every command.
    pub slowlog_log_slower_than: i64,
    /// Entries the slow log keeps.
    pub slowlog_max_len: u64,
    /// Milliseconds (0: latency monitor off).
    pub latency_monitor_threshold: u64,
    /// Largest query buffer a client may accumulate, bytes.
    pub client_query_buffer_limit: u64,
    /// TLS port (0: no TLS listener).
    pub tls_port: u16,
    /// Server certificate (PEM).
    pub tls_cert_file: Option<String>,
    /// Private key of the server certificate (PEM).
    pub tls_key_file: Option<String>,
    /// Pass phrase of `tls_key_file`.
    pub tls_key_file_pass: Option<String>,
    /// Certificate for outgoing connections (replication, cluster).
    pub tls_client_cert_file: Option<String>,
    /// Private key of `tls_client_cert_file`.
    pub tls_client_key_file: Option<String>,
    /// Pass phrase of `tls_client_key_file`.
    pub tls_client_key_file_pass: Option<String>,
    /// DH parameters file.
    pub tls_dh_params_file: Option<String>,
    /// CA bundle to verify clients with.
    pub tls_ca_cert_file: Option<String>,
    /// Directory of CA certificates to verify clients with.
    pub tls_ca_cert_dir: Option<String>,
    /// ACL file path (None: no ACL file).
    pub aclfile: Option<String>,
    /// Absolute path of the config file the server was started with: CONFIG REWRITE
    /// writes it back.
    pub config_file: Option<PathBuf>,
    /// Serve the `RESPLOCK.*` test commands (clock, faults, snapshots, restarts): resplock's
    /// own switch, `--enable-test-commands yes`, never on by default since it lets any client
    /// move time and break the server.
    pub enable_test_commands: bool,
    /// Start with the clock frozen (see [`Config::frozen`]): resplock's own, for embedding.
    pub start_frozen: bool,
    /// `lock-history yes`: record every change of the lock keys (who, when, owner, TTL) for
    /// `resplock check` (resplock's own, hidden from `CONFIG GET *`; settable at run time).
    pub lock_history: bool,
    /// `lock-history-keys`: glob patterns of the keys to record, space separated; empty: keys
    /// SET NX creates, keys scripts write as strings or hashes, and hash locks.
    pub lock_history_keys: String,
    /// `lock-history-max-events`: events kept in all (the oldest go first, counted).
    pub lock_history_max_events: u64,
    /// `lock-history-max-per-key`: events kept per key.
    pub lock_history_max_per_key: u64,
    /// `lock-history-file`: where the history is written as JSON lines when the server (or
    /// the last of `--instances`) stops; empty: nowhere.
    pub lock_history_file: String,
    /// `rename-command old new` directives in file order (new "" disables the command),
    /// for the command table to apply.
    pub rename_commands: Vec<(String, String)>,
    /// `user <name> <rule>...` lines of the configuration (each: the name, then its rules),
    /// loaded at start as redis-server's ACLLoadConfiguredUsers does.
    pub users: Vec<Vec<String>>,
    /// Every parameter without a field above, by primary name, formatted as CONFIG GET
    /// prints it. Read and write them through [`Config::get`] and [`Config::set_many`].
    pub others: BTreeMap<&'static str, String>,
}
