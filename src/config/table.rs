//! The parameter table: every parameter `CONFIG GET *` of redis-server 7.0.15 returns (plus
//! Redis's hidden test-only ones), transcribed from the `static_configs` table of Redis's
//! config.c in the same order, with the same bounds, flags, defaults and validators.
//!
//! One row per primary name; an alias (`slaveof`, `lua-time-limit`, `hash-max-ziplist-*`,
//! ...) is a second name of its row, as in Redis. A row with `typed` accessors lives in a
//! field of [`Config`]; every other row keeps its formatted value in [`Config::others`].

use super::settings::{Config, LogLevel, ProtectedAction, Value};

/// Row flags, with Redis's meanings (server.h `*_CONFIG`).
pub mod flags {
    /// Settable at startup only: CONFIG SET answers `can't set immutable config`.
    pub const IMMUTABLE: u16 = 1 << 0;
    /// The value is a secret: CONFIG SET's arguments are redacted from logs and MONITOR.
    pub const SENSITIVE: u16 = 1 << 1;
    /// Redis prints it in debug reports (DEBUG CONFIG-*); no behaviour attached.
    pub const DEBUG: u16 = 1 << 2;
    /// Takes several arguments (`save 900 1 300 10`, `bind a b`).
    pub const MULTI_ARG: u16 = 1 << 3;
    /// Left out of `CONFIG GET <pattern>`; only an exact name returns it.
    pub const HIDDEN: u16 = 1 << 4;
    /// CONFIG SET refuses it unless `enable-protected-configs` allows the client.
    pub const PROTECTED: u16 = 1 << 5;
    /// Refused by CONFIG SET while a dataset loads (never the case in resplock).
    pub const DENY_LOADING: u16 = 1 << 6;
    /// Names a file whose content may change: setting the same value counts as a change.
    pub const VOLATILE: u16 = 1 << 9;
}
use flags::*;

/// How a numeric parameter is written and read, as Redis's `*_CONFIG` numeric flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumFmt {
    /// A plain integer (`string2ll`: no sign but `-`, no leading zeros, no spaces).
    Int,
    /// Bytes, with the units `k kb m mb g gb` (`memtoull`).
    Memory,
    /// Bytes or a percentage `N%` (kept as -N), as maxmemory-clients.
    MemoryPercent,
    /// An octal number, as unixsocketperm.
    Octal,
}

/// The parameters whose value has its own syntax (Redis's `createSpecialConfig` rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// The working directory: must exist; printed absolute.
    Dir,
    /// `seconds changes` pairs; several `save` lines in a file add up.
    Save,
    /// `class hard soft seconds` groups; classes not named keep their limits.
    ClientOutputBufferLimit,
    /// Three oom_score_adj values between -2000 and 2000.
    OomScoreAdjValues,
    /// The keyspace event classes `Ag$lshzxeKEtmdn`.
    NotifyKeyspaceEvents,
    /// Up to 16 addresses; `""` for none.
    Bind,
    /// `host port` or `no one`.
    ReplicaOf,
    /// Percentiles between 0 and 100 for INFO latencystats.
    LatencyTrackingInfoPercentiles,
}

/// Redis's `is_valid_fn` of a yes/no row: Err is the reason text.
pub type BoolCheck = fn(bool) -> Result<(), &'static str>;
/// Redis's `is_valid_fn` of an enum row (gets the OR of the names' values).
pub type EnumCheck = fn(u32) -> Result<(), &'static str>;
/// Redis's `is_valid_fn` of a text row.
pub type StrCheck = fn(&str) -> Result<(), &'static str>;

/// A row's type, with its default and Redis's checks.
#[derive(Clone, Copy)]
pub enum Kind {
    /// `yes` or `no`.
    Bool {
        /// Default value.
        default: bool,
        /// Extra check of the value.
        check: Option<BoolCheck>,
    },
    /// A number between `min` and `max`; `unsigned` rows compare as unsigned 64-bit (Redis's
    /// size_t, unsigned int and unsigned long long rows), so `-1` is out of range there.
    Num {
        /// Smallest value accepted.
        min: i128,
        /// Largest value accepted.
        max: i128,
        /// Compare as unsigned 64-bit.
        unsigned: bool,
        /// Syntax accepted and printed.
        fmt: NumFmt,
        /// Default, as Redis stores it.
        default: i64,
    },
    /// One of `names` (`(name, value)`; several names may share a value). A MULTI_ARG enum
    /// takes several names and ORs their values.
    Enum {
        /// (name, value) pairs, in Redis's order (error texts list them so).
        names: &'static [(&'static str, u32)],
        /// Default value.
        default: u32,
        /// Extra check of the value.
        check: Option<EnumCheck>,
    },
    /// Text; `null_if_empty` rows keep "" as "not set" (Redis's EMPTY_STRING_IS_NULL).
    Str {
        /// "" means not set.
        null_if_empty: bool,
        /// Default (None: not set).
        default: Option<&'static str>,
        /// Extra check of the value.
        check: Option<StrCheck>,
    },
    /// A parameter with its own syntax.
    Special(Special),
}

/// What resplock does with a parameter: decides the startup warnings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The server acts on it.
    Honoured,
    /// Kept for CONFIG GET/SET/REWRITE only; Redis tuning that has no counterpart here.
    Stored,
    /// Redis persistence (RDB/AOF), which `cmd::runtime::persist` acts on.
    Persistence,
    /// Replication: a master's or a replica's settings (acted on by the replication
    /// modules, as far as they go).
    Replication,
    /// Redis Cluster: a single server has none; the nodes of `--cluster N` honour some.
    Cluster,
    /// Process-level behaviour a field of [`Config`] carries but the server does not act on
    /// yet (TLS, ACL file).
    Pending,
}

/// Reads and writes a row that lives in a typed field of [`Config`].
#[derive(Clone, Copy)]
pub(crate) struct Typed {
    pub get: fn(&Config) -> Value,
    pub set: fn(&mut Config, Value),
}

/// One parameter.
#[derive(Clone, Copy)]
pub struct Param {
    /// Its primary name, lower case.
    pub name: &'static str,
    /// Its second name, if any (`slaveof` for `replicaof`).
    pub alias: Option<&'static str>,
    /// [`flags`] bits.
    pub flags: u16,
    /// Type, default and checks.
    pub kind: Kind,
    /// What resplock does with it.
    pub scope: Scope,
    pub(crate) typed: Option<Typed>,
}

impl Param {
    /// Whether a [`flags`] bit is set.
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// Whether it takes several arguments (a `save` line, `bind a b`).
    pub fn multi_arg(&self) -> bool {
        self.has(MULTI_ARG)
    }

    const fn new(name: &'static str, alias: Option<&'static str>, flags: u16, kind: Kind) -> Param {
        Param {
            name,
            alias,
            flags,
            kind,
            scope: Scope::Stored,
            typed: None,
        }
    }

    const fn scope(mut self, scope: Scope) -> Param {
        self.scope = scope;
        self
    }

    const fn typed(mut self, get: fn(&Config) -> Value, set: fn(&mut Config, Value)) -> Param {
        self.typed = Some(Typed { get, set });
        self
    }

    const fn check_bool(mut self, f: BoolCheck) -> Param {
        if let Kind::Bool { default, .. } = self.kind {
            self.kind = Kind::Bool {
                default,
                check: Some(f),
            };
        }
        self
    }

    const fn check_str(mut self, f: StrCheck) -> Param {
        if let Kind::Str {
            null_if_empty,
            default,
            ..
        } = self.kind
        {
            self.kind = Kind::Str {
                null_if_empty,
                default,
                check: Some(f),
            };
        }
        self
    }

    const fn check_enum(mut self, f: EnumCheck) -> Param {
        if let Kind::Enum { names, default, .. } = self.kind {
            self.kind = Kind::Enum {
                names,
                default,
                check: Some(f),
            };
        }
        self
    }
}

const fn boolean(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    default: bool,
) -> Param {
    Param::new(
        name,
        alias,
        flags,
        Kind::Bool {
            default,
            check: None,
        },
    )
}

const SIGNED: bool = false;
// Redis's bounds, by their C names (LP64).
const INT_MIN: i128 = i32::MIN as i128;
const INT_MAX: i128 = i32::MAX as i128;
const UINT_MAX: i128 = u32::MAX as i128;
const LONG_MAX: i128 = i64::MAX as i128;
const LLONG_MAX: i128 = i64::MAX as i128;
const SSIZE_MAX: i128 = i64::MAX as i128;
const ULLONG_MAX: i128 = u64::MAX as i128;
const UNSIGNED: bool = true;

#[allow(clippy::too_many_arguments)]
const fn number(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    min: i128,
    max: i128,
    unsigned: bool,
    fmt: NumFmt,
    default: i64,
) -> Param {
    Param::new(
        name,
        alias,
        flags,
        Kind::Num {
            min,
            max,
            unsigned,
            fmt,
            default,
        },
    )
}

const fn enumeration(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    names: &'static [(&'static str, u32)],
    default: u32,
) -> Param {
    Param::new(
        name,
        alias,
        flags,
        Kind::Enum {
            names,
            default,
            check: None,
        },
    )
}

const NULL_IF_EMPTY: bool = true;
const ALLOW_EMPTY: bool = false;

const fn string(
    name: &'static str,
    alias: Option<&'static str>,
    flags: u16,
    null_if_empty: bool,
    default: Option<&'static str>,
) -> Param {
    Param::new(
        name,
        alias,
        flags,
        Kind::Str {
            null_if_empty,
            default,
            check: None,
        },
    )
}

const fn special(name: &'static str, alias: Option<&'static str>, flags: u16, s: Special) -> Param {
    Param::new(name, alias, flags, Kind::Special(s))
}

/// maxmemory-policy names.
pub const MAXMEMORY_POLICY: &[(&str, u32)] = &[
    ("volatile-lru", 0),
    ("volatile-lfu", 1),
    ("volatile-random", 2),
    ("volatile-ttl", 3),
    ("allkeys-lru", 4),
    ("allkeys-lfu", 5),
    ("allkeys-random", 6),
    ("noeviction", 7),
];
const SYSLOG_FACILITY: &[(&str, u32)] = &[
    ("user", 0),
    ("local0", 1),
    ("local1", 2),
    ("local2", 3),
    ("local3", 4),
    ("local4", 5),
    ("local5", 6),
    ("local6", 7),
    ("local7", 8),
];
/// loglevel names, values as [`LogLevel`].
pub const LOGLEVEL: &[(&str, u32)] = &[("debug", 0), ("verbose", 1), ("notice", 2), ("warning", 3)];
const SUPERVISED_MODE: &[(&str, u32)] = &[("upstart", 0), ("systemd", 1), ("auto", 2), ("no", 3)];
/// appendfsync names.
pub const AOF_FSYNC: &[(&str, u32)] = &[("everysec", 0), ("always", 1), ("no", 2)];
/// shutdown-on-sigint/sigterm flags (Redis's SHUTDOWN_* bits).
pub const SHUTDOWN_ON_SIG: &[(&str, u32)] = &[
    ("default", 0),
    ("save", 1),
    ("nosave", 2),
    ("now", 4),
    ("force", 8),
];
const REPL_DISKLESS_LOAD: &[(&str, u32)] = &[("disabled", 0), ("on-empty-db", 1), ("swapdb", 2)];
const TLS_AUTH_CLIENTS: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("optional", 2)];
const OOM_SCORE_ADJ: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("relative", 1), ("absolute", 2)];
const ACL_PUBSUB_DEFAULT: &[(&str, u32)] = &[("allchannels", 8), ("resetchannels", 0)];
const SANITIZE_DUMP_PAYLOAD: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("clients", 2)];
/// enable-protected-configs / enable-debug-command / enable-module-command names, values as
/// [`ProtectedAction`].
pub const PROTECTED_ACTION: &[(&str, u32)] = &[("no", 0), ("yes", 1), ("local", 2)];
const CLUSTER_PREFERRED_ENDPOINT_TYPE: &[(&str, u32)] =
    &[("ip", 0), ("hostname", 1), ("unknown-endpoint", 2)];
const PROPAGATION_ERROR_BEHAVIOR: &[(&str, u32)] =
    &[("ignore", 0), ("panic", 1), ("panic-on-replicas", 2)];

/// The value of enum `name` (case-insensitive), `fallback` when unknown.
pub(crate) fn enum_value(names: &[(&str, u32)], name: &str, fallback: u32) -> u32 {
    names
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or(fallback, |(_, v)| *v)
}

/// The first name of enum value `v` ("" if none).
pub(crate) fn enum_name(names: &[(&'static str, u32)], v: u32) -> &'static str {
    names.iter().find(|(_, x)| *x == v).map_or("", |(n, _)| n)
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// resplock allocates with mimalloc, not Redis's patched jemalloc: Redis built without
/// jemalloc refuses active defragmentation with this text.
fn valid_active_defrag(v: bool) -> Result<(), &'static str> {
    if v {
        return Err("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution");
    }
    Ok(())
}

fn valid_dbfilename(v: &str) -> Result<(), &'static str> {
    if v.contains(['/', '\\']) {
        return Err("dbfilename can't be a path, just a filename");
    }
    Ok(())
}

fn valid_aof_filename(v: &str) -> Result<(), &'static str> {
    if v.is_empty() {
        return Err("appendfilename can't be empty");
    }
    if v.contains(['/', '\\']) {
        return Err("appendfilename can't be a path, just a filename");
    }
    Ok(())
}

fn valid_aof_dirname(v: &str) -> Result<(), &'static str> {
    if v.is_empty() {
        return Err("appenddirname can't be empty");
    }
    if v.contains(['/', '\\']) {
        return Err("appenddirname can't be a path, just a dirname");
    }
    Ok(())
}

fn valid_announced_hostname(v: &str) -> Result<(), &'static str> {
    if v.len() >= 256 {
        return Err("Hostnames must be less than 256 characters");
    }
    if !v
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots");
    }
    Ok(())
}

/// Redis expands the template (sdstemplate) and refuses unknown variables, a `{` without
/// its `}`, and a result that is empty once trimmed of spaces.
fn valid_proc_title_template(v: &str) -> Result<(), &'static str> {
    const BAD: &str = "template format is invalid or contains unknown variables";
    let mut out = String::new();
    let mut rest = v;
    while !rest.is_empty() {
        let Some(open) = rest.find('{') else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return Err(BAD);
        }
        if let Some(r) = after.strip_prefix('{') {
            out.push('{');
            rest = r;
            continue;
        }
        let close = after.find('}').ok_or(BAD)?;
        out.push_str(match &after[..close] {
            // Values as seen when validating: the title is empty, the address never is.
            "title" | "server-mode" | "unixsocket" => "",
            "listen-addr" => "*:6379",
            "config-file" => "-",
            "port" | "tls-port" => "0",
            _ => return Err(BAD),
        });
        rest = &after[close + 1..];
    }
    if out.trim_matches(' ').is_empty() {
        return Err(BAD);
    }
    Ok(())
}

fn valid_shutdown_flags(v: u32) -> Result<(), &'static str> {
    if v & 1 != 0 && v & 2 != 0 {
        return Err("shutdown options SAVE and NOSAVE can't be used simultaneously");
    }
    Ok(())
}

/// Every parameter, in the order of Redis's `static_configs`, one row per line as there.
#[rustfmt::skip]
pub static PARAMS: &[Param] = &[
    boolean("rdbchecksum", None, IMMUTABLE, true).scope(Scope::Persistence),
    boolean("daemonize", None, IMMUTABLE, false).scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.daemonize), |c, v| c.daemonize = v.boolean()),
    boolean("io-threads-do-reads", None, DEBUG | IMMUTABLE, false),
    boolean("always-show-logo", None, IMMUTABLE, false),
    boolean("protected-mode", None, 0, true)
        .scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.protected_mode), |c, v| c.protected_mode = v.boolean()),
    boolean("rdbcompression", None, 0, true).scope(Scope::Persistence),
    boolean("rdb-del-sync-files", None, 0, false).scope(Scope::Persistence),
    boolean("activerehashing", None, 0, true),
    boolean("stop-writes-on-bgsave-error", None, 0, true).scope(Scope::Persistence),
    boolean("set-proc-title", None, IMMUTABLE, true),
    boolean("dynamic-hz", None, 0, true),
    boolean("lazyfree-lazy-eviction", None, DEBUG, false),
    boolean("lazyfree-lazy-expire", None, DEBUG, false),
    boolean("lazyfree-lazy-server-del", None, DEBUG, false),
    boolean("lazyfree-lazy-user-del", None, DEBUG, false),
    boolean("lazyfree-lazy-user-flush", None, DEBUG, false),
    boolean("repl-disable-tcp-nodelay", None, 0, false).scope(Scope::Replication),
    boolean("repl-diskless-sync", None, DEBUG, true).scope(Scope::Replication),
    boolean("aof-rewrite-incremental-fsync", None, 0, true).scope(Scope::Persistence),
    boolean("no-appendfsync-on-rewrite", None, 0, false).scope(Scope::Persistence),
    boolean("cluster-require-full-coverage", None, 0, true).scope(Scope::Cluster),
    boolean("rdb-save-incremental-fsync", None, 0, true).scope(Scope::Persistence),
    boolean("aof-load-truncated", None, 0, true).scope(Scope::Persistence),
    boolean("aof-use-rdb-preamble", None, 0, true).scope(Scope::Persistence),
    boolean("aof-timestamp-enabled", None, 0, false).scope(Scope::Persistence),
    boolean("cluster-replica-no-failover", Some("cluster-slave-no-failover"), 0, false).scope(Scope::Cluster),
    boolean("replica-lazy-flush", Some("slave-lazy-flush"), 0, false).scope(Scope::Replication),
    boolean("replica-serve-stale-data", Some("slave-serve-stale-data"), 0, true).scope(Scope::Replication),
    boolean("replica-read-only", Some("slave-read-only"), DEBUG, true).scope(Scope::Replication),
    boolean("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), 0, true).scope(Scope::Replication),
    boolean("jemalloc-bg-thread", None, 0, true),
    boolean("activedefrag", None, DEBUG, false).check_bool(valid_active_defrag),
    boolean("syslog-enabled", None, IMMUTABLE, false),
    boolean("cluster-enabled", None, IMMUTABLE, false).scope(Scope::Cluster),
    boolean("appendonly", None, DENY_LOADING, false).scope(Scope::Persistence)
        .typed(|c| Value::Bool(c.appendonly.eq_ignore_ascii_case("yes")), |c, v| c.appendonly = yes_no(v.boolean()).into()),
    boolean("cluster-allow-reads-when-down", None, 0, false).scope(Scope::Cluster),
    boolean("cluster-allow-pubsubshard-when-down", None, 0, true).scope(Scope::Cluster),
    boolean("crash-log-enabled", None, 0, true),
    boolean("crash-memcheck-enabled", None, 0, true),
    boolean("use-exit-on-panic", None, HIDDEN, false),
    boolean("disable-thp", None, IMMUTABLE, true),
    boolean("cluster-allow-replica-migration", None, 0, true).scope(Scope::Cluster),
    boolean("replica-announced", None, 0, true).scope(Scope::Replication),
    boolean("latency-tracking", None, 0, true),
    boolean("aof-disable-auto-gc", None, 0, false).scope(Scope::Persistence),
    boolean("replica-ignore-disk-write-errors", None, 0, false).scope(Scope::Replication),
    string("aclfile", None, IMMUTABLE, ALLOW_EMPTY, Some("")).scope(Scope::Pending)
        .typed(|c| Value::Str(Some(c.aclfile.clone().unwrap_or_default())), |c, v| c.aclfile = v.into_opt().filter(|s| !s.is_empty())),
    string("unixsocket", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.unixsocket.clone()), |c, v| c.unixsocket = v.into_opt()),
    string("pidfile", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.pidfile.clone()), |c, v| c.pidfile = v.into_opt()),
    string("replica-announce-ip", Some("slave-announce-ip"), 0, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("masteruser", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("cluster-announce-ip", None, 0, NULL_IF_EMPTY, None).scope(Scope::Cluster),
    string("cluster-config-file", None, IMMUTABLE, ALLOW_EMPTY, Some("nodes.conf")).scope(Scope::Cluster),
    string("cluster-announce-hostname", None, 0, NULL_IF_EMPTY, None).check_str(valid_announced_hostname).scope(Scope::Cluster),
    string("syslog-ident", None, IMMUTABLE, ALLOW_EMPTY, Some("redis")),
    string("dbfilename", None, PROTECTED, ALLOW_EMPTY, Some("dump.rdb")).check_str(valid_dbfilename).scope(Scope::Persistence),
    string("appendfilename", None, IMMUTABLE, ALLOW_EMPTY, Some("appendonly.aof")).check_str(valid_aof_filename).scope(Scope::Persistence),
    string("appenddirname", None, IMMUTABLE, ALLOW_EMPTY, Some("appendonlydir")).check_str(valid_aof_dirname).scope(Scope::Persistence),
    string("server_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None),
    string("bio_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None),
    string("aof_rewrite_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Persistence),
    string("bgsave_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Persistence),
    string("ignore-warnings", None, 0, ALLOW_EMPTY, Some("")),
    string("proc-title-template", None, 0, ALLOW_EMPTY, Some("{title} {listen-addr} {server-mode}")).check_str(valid_proc_title_template),
    string("bind-source-addr", None, 0, NULL_IF_EMPTY, None),
    string("logfile", None, IMMUTABLE, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.logfile.clone())), |c, v| c.logfile = v.into_string()),
    string("masterauth", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("requirepass", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.requirepass.clone()), |c, v| c.requirepass = v.into_opt()),
    enumeration("supervised", None, IMMUTABLE, SUPERVISED_MODE, 3),
    enumeration("syslog-facility", None, IMMUTABLE, SYSLOG_FACILITY, 1),
    enumeration("repl-diskless-load", None, DEBUG | DENY_LOADING, REPL_DISKLESS_LOAD, 0).scope(Scope::Replication),
    enumeration("loglevel", None, 0, LOGLEVEL, 2).scope(Scope::Honoured)
        .typed(|c| Value::Enum(c.loglevel as u32), |c, v| c.loglevel = LogLevel::from_value(v.enumeration())),
    enumeration("maxmemory-policy", None, 0, MAXMEMORY_POLICY, 7)
        .typed(|c| Value::Enum(enum_value(MAXMEMORY_POLICY, &c.maxmemory_policy, 7)), |c, v| c.maxmemory_policy = enum_name(MAXMEMORY_POLICY, v.enumeration()).into()),
    enumeration("appendfsync", None, 0, AOF_FSYNC, 0).scope(Scope::Persistence)
        .typed(|c| Value::Enum(enum_value(AOF_FSYNC, &c.appendfsync, 0)), |c, v| c.appendfsync = enum_name(AOF_FSYNC, v.enumeration()).into()),
    enumeration("oom-score-adj", None, 0, OOM_SCORE_ADJ, 0),
    enumeration("acl-pubsub-default", None, 0, ACL_PUBSUB_DEFAULT, 0),
    enumeration("sanitize-dump-payload", None, DEBUG, SANITIZE_DUMP_PAYLOAD, 0),
    enumeration("enable-protected-configs", None, IMMUTABLE, PROTECTED_ACTION, 0),
    enumeration("enable-debug-command", None, IMMUTABLE, PROTECTED_ACTION, 0)
        .typed(|c| Value::Enum(c.enable_debug_command as u32), |c, v| c.enable_debug_command = ProtectedAction::from_value(v.enumeration())),
    enumeration("enable-module-command", None, IMMUTABLE, PROTECTED_ACTION, 0)
        .typed(|c| Value::Enum(c.enable_module_command as u32), |c, v| c.enable_module_command = ProtectedAction::from_value(v.enumeration())),
    enumeration("cluster-preferred-endpoint-type", None, 0, CLUSTER_PREFERRED_ENDPOINT_TYPE, 0).scope(Scope::Cluster),
    enumeration("propagation-error-behavior", None, 0, PROPAGATION_ERROR_BEHAVIOR, 0).scope(Scope::Replication),
    enumeration("shutdown-on-sigint", None, MULTI_ARG, SHUTDOWN_ON_SIG, 0).check_enum(valid_shutdown_flags),
    enumeration("shutdown-on-sigterm", None, MULTI_ARG, SHUTDOWN_ON_SIG, 0).check_enum(valid_shutdown_flags),
    number("databases", None, IMMUTABLE, 1, INT_MAX, SIGNED, NumFmt::Int, 16).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.databases as i64), |c, v| c.databases = v.int() as usize),
    number("port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 6379).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.port as i64), |c, v| c.port = v.int() as u16),
    number("io-threads", None, DEBUG | IMMUTABLE, 1, 128, SIGNED, NumFmt::Int, 1)
        .typed(|c| Value::Int(c.io_threads as i64), |c, v| c.io_threads = v.int() as u32),
    number("auto-aof-rewrite-percentage", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 100).scope(Scope::Persistence),
    number("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Cluster),
    number("list-max-listpack-size", Some("list-max-ziplist-size"), 0, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, -2)
        .typed(|c| Value::Int(c.list_max_listpack_size as i64), |c, v| c.list_max_listpack_size = v.int() as i32),
    number("tcp-keepalive", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 300).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.tcp_keepalive as i64), |c, v| c.tcp_keepalive = v.int() as u32),
    number("cluster-migration-barrier", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 1).scope(Scope::Cluster),
    number("active-defrag-cycle-min", None, 0, 1, 99, SIGNED, NumFmt::Int, 1),
    number("active-defrag-cycle-max", None, 0, 1, 99, SIGNED, NumFmt::Int, 25),
    number("active-defrag-threshold-lower", None, 0, 0, 1000, SIGNED, NumFmt::Int, 10),
    number("active-defrag-threshold-upper", None, 0, 0, 1000, SIGNED, NumFmt::Int, 100),
    number("lfu-log-factor", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10)
        .typed(|c| Value::Int(c.lfu_log_factor as i64), |c, v| c.lfu_log_factor = v.int() as u32),
    number("lfu-decay-time", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 1)
        .typed(|c| Value::Int(c.lfu_decay_time as i64), |c, v| c.lfu_decay_time = v.int() as u32),
    number("replica-priority", Some("slave-priority"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 100).scope(Scope::Replication),
    number("repl-diskless-sync-delay", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 5).scope(Scope::Replication),
    number("maxmemory-samples", None, 0, 1, INT_MAX, SIGNED, NumFmt::Int, 5)
        .typed(|c| Value::Int(c.maxmemory_samples as i64), |c, v| c.maxmemory_samples = v.int() as u32),
    number("maxmemory-eviction-tenacity", None, 0, 0, 100, SIGNED, NumFmt::Int, 10),
    number("timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.timeout as i64), |c, v| c.timeout = v.int() as u64),
    number("replica-announce-port", Some("slave-announce-port"), 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("tcp-backlog", None, IMMUTABLE, 0, INT_MAX, SIGNED, NumFmt::Int, 511),
    number("cluster-port", None, IMMUTABLE, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-bus-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-tls-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("repl-timeout", None, 0, 1, INT_MAX, SIGNED, NumFmt::Int, 60).scope(Scope::Replication),
    number("repl-ping-replica-period", Some("repl-ping-slave-period"), 0, 1, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Replication),
    number("list-compress-depth", None, DEBUG, 0, INT_MAX, SIGNED, NumFmt::Int, 0)
        .typed(|c| Value::Int(c.list_compress_depth as i64), |c, v| c.list_compress_depth = v.int() as u32),
    number("rdb-key-save-delay", None, HIDDEN, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Persistence),
    number("key-load-delay", None, HIDDEN, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Persistence),
    number("active-expire-effort", None, 0, 1, 10, SIGNED, NumFmt::Int, 1),
    number("hz", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10)
        .typed(|c| Value::Int(c.hz as i64), |c, v| c.hz = v.int() as u32),
    number("min-replicas-to-write", Some("min-slaves-to-write"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("min-replicas-max-lag", Some("min-slaves-max-lag"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Replication),
    number("watchdog-period", None, HIDDEN, 0, INT_MAX, SIGNED, NumFmt::Int, 0),
    number("shutdown-timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10),
    number("repl-diskless-sync-max-replicas", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("maxclients", None, 0, 1, UINT_MAX, UNSIGNED, NumFmt::Int, 10000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.maxclients as i64), |c, v| c.maxclients = v.int() as usize),
    number("unixsocketperm", None, IMMUTABLE, 0, 0o777, UNSIGNED, NumFmt::Octal, 0).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.unixsocketperm as i64), |c, v| c.unixsocketperm = v.int() as u32),
    number("socket-mark-id", None, IMMUTABLE, 0, UINT_MAX, UNSIGNED, NumFmt::Int, 0),
    number("active-defrag-max-scan-fields", None, 0, 1, LONG_MAX, SIGNED, NumFmt::Int, 1000),
    number("slowlog-max-len", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 128)
        .typed(|c| Value::Int(c.slowlog_max_len as i64), |c, v| c.slowlog_max_len = v.int() as u64),
    number("acllog-max-len", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 128),
    number("busy-reply-threshold", Some("lua-time-limit"), 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 5000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.busy_reply_threshold_ms as i64), |c, v| c.busy_reply_threshold_ms = v.int() as u64),
    number("cluster-node-timeout", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 15000).scope(Scope::Cluster),
    number("slowlog-log-slower-than", None, 0, -1, LLONG_MAX, SIGNED, NumFmt::Int, 10000)
        .typed(|c| Value::Int(c.slowlog_log_slower_than), |c, v| c.slowlog_log_slower_than = v.int()),
    number("latency-monitor-threshold", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 0)
        .typed(|c| Value::Int(c.latency_monitor_threshold as i64), |c, v| c.latency_monitor_threshold = v.int() as u64),
    number("proto-max-bulk-len", None, DEBUG, 1048576, LONG_MAX, SIGNED, NumFmt::Memory, 536870912).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.proto_max_bulk_len as i64), |c, v| c.proto_max_bulk_len = v.int() as u64),
    number("stream-node-max-entries", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 100)
        .typed(|c| Value::Int(c.stream_node_max_entries), |c, v| c.stream_node_max_entries = v.int()),
    number("repl-backlog-size", None, 0, 1, LLONG_MAX, SIGNED, NumFmt::Memory, 1048576).scope(Scope::Replication),
    number("maxmemory", None, 0, 0, ULLONG_MAX, UNSIGNED, NumFmt::Memory, 0)
        .typed(|c| Value::Int(c.maxmemory as i64), |c, v| c.maxmemory = v.int() as u64),
    number("cluster-link-sendbuf-limit", None, 0, 0, ULLONG_MAX, UNSIGNED, NumFmt::Memory, 0).scope(Scope::Cluster),
    number("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 512)
        .typed(|c| Value::Int(c.hash_max_listpack_entries as i64), |c, v| c.hash_max_listpack_entries = v.int() as u64),
    number("set-max-intset-entries", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 512)
        .typed(|c| Value::Int(c.set_max_intset_entries as i64), |c, v| c.set_max_intset_entries = v.int() as u64),
    number("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 128)
        .typed(|c| Value::Int(c.zset_max_listpack_entries as i64), |c, v| c.zset_max_listpack_entries = v.int() as u64),
    number("active-defrag-ignore-bytes", None, 0, 1, LLONG_MAX, UNSIGNED, NumFmt::Memory, 104857600),
    number("hash-max-listpack-value", Some("hash-max-ziplist-value"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 64)
        .typed(|c| Value::Int(c.hash_max_listpack_value as i64), |c, v| c.hash_max_listpack_value = v.int() as u64),
    number("stream-node-max-bytes", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 4096)
        .typed(|c| Value::Int(c.stream_node_max_bytes as i64), |c, v| c.stream_node_max_bytes = v.int() as u64),
    number("zset-max-listpack-value", Some("zset-max-ziplist-value"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 64)
        .typed(|c| Value::Int(c.zset_max_listpack_value as i64), |c, v| c.zset_max_listpack_value = v.int() as u64),
    number("hll-sparse-max-bytes", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 3000)
        .typed(|c| Value::Int(c.hll_sparse_max_bytes as i64), |c, v| c.hll_sparse_max_bytes = v.int() as u64),
    number("tracking-table-max-keys", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 1000000),
    number("client-query-buffer-limit", None, DEBUG, 1048576, LONG_MAX, UNSIGNED, NumFmt::Memory, 1073741824)
        .typed(|c| Value::Int(c.client_query_buffer_limit as i64), |c, v| c.client_query_buffer_limit = v.int() as u64),
    number("maxmemory-clients", None, 0, -100, SSIZE_MAX, SIGNED, NumFmt::MemoryPercent, 0),
    number("repl-backlog-ttl", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 3600).scope(Scope::Replication),
    number("auto-aof-rewrite-min-size", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Memory, 67108864).scope(Scope::Persistence),
    number("loading-process-events-interval-bytes", None, HIDDEN, 1024, INT_MAX, SIGNED, NumFmt::Int, 2097152).scope(Scope::Persistence),
    number("tls-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Pending)
        .typed(|c| Value::Int(c.tls_port as i64), |c, v| c.tls_port = v.int() as u16),
    number("tls-session-cache-size", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 20480),
    number("tls-session-cache-timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 300),
    boolean("tls-cluster", None, 0, false).scope(Scope::Cluster),
    boolean("tls-replication", None, 0, false).scope(Scope::Replication),
    enumeration("tls-auth-clients", None, 0, TLS_AUTH_CLIENTS, 1),
    boolean("tls-prefer-server-ciphers", None, 0, false),
    boolean("tls-session-caching", None, 0, true),
    string("tls-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_cert_file.clone()), |c, v| c.tls_cert_file = v.into_opt()),
    string("tls-key-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_key_file.clone()), |c, v| c.tls_key_file = v.into_opt()),
    string("tls-key-file-pass", None, 0, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_key_file_pass.clone()), |c, v| c.tls_key_file_pass = v.into_opt()),
    string("tls-client-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_cert_file.clone()), |c, v| c.tls_client_cert_file = v.into_opt()),
    string("tls-client-key-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_key_file.clone()), |c, v| c.tls_client_key_file = v.into_opt()),
    string("tls-client-key-file-pass", None, 0, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_key_file_pass.clone()), |c, v| c.tls_client_key_file_pass = v.into_opt()),
    string("tls-dh-params-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_dh_params_file.clone()), |c, v| c.tls_dh_params_file = v.into_opt()),
    string("tls-ca-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_ca_cert_file.clone()), |c, v| c.tls_ca_cert_file = v.into_opt()),
    string("tls-ca-cert-dir", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_ca_cert_dir.clone()), |c, v| c.tls_ca_cert_dir = v.into_opt()),
    string("tls-protocols", None, 0, NULL_IF_EMPTY, None),
    string("tls-ciphers", None, 0, NULL_IF_EMPTY, None),
    string("tls-ciphersuites", None, 0, NULL_IF_EMPTY, None),
    special("dir", None, PROTECTED | DENY_LOADING, Special::Dir).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.dir.as_ref().map(|d| d.display().to_string())), |c, v| c.dir = v.into_opt().map(Into::into)),
    special("save", None, MULTI_ARG, Special::Save).scope(Scope::Persistence)
        .typed(|c| Value::Str(Some(c.save.clone())), |c, v| c.save = v.into_string()),
    special("client-output-buffer-limit", None, MULTI_ARG, Special::ClientOutputBufferLimit).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.client_output_buffer_limit.clone())), |c, v| c.client_output_buffer_limit = v.into_string()),
    special("oom-score-adj-values", None, MULTI_ARG, Special::OomScoreAdjValues),
    special("notify-keyspace-events", None, 0, Special::NotifyKeyspaceEvents).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.notify_keyspace_events.clone())), |c, v| c.notify_keyspace_events = v.into_string()),
    special("bind", None, MULTI_ARG, Special::Bind).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.bind.clone())), |c, v| c.bind = v.into_string()),
    special("replicaof", Some("slaveof"), IMMUTABLE | MULTI_ARG, Special::ReplicaOf).scope(Scope::Replication),
    special("latency-tracking-info-percentiles", None, MULTI_ARG, Special::LatencyTrackingInfoPercentiles),
    // resplock's own, hidden from `CONFIG GET *` so the list stays redis-server's: the lock
    // history (src/history) and its bounds.
    boolean("lock-history", None, HIDDEN, false).scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.lock_history), |c, v| c.lock_history = v.boolean()),
    string("lock-history-keys", None, HIDDEN, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.lock_history_keys.clone())), |c, v| c.lock_history_keys = v.into_string()),
    number("lock-history-max-events", None, HIDDEN, 1, LLONG_MAX, SIGNED, NumFmt::Int, 1_000_000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.lock_history_max_events as i64), |c, v| c.lock_history_max_events = v.int() as u64),
    number("lock-history-max-per-key", None, HIDDEN, 1, LLONG_MAX, SIGNED, NumFmt::Int, 100_000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.lock_history_max_per_key as i64), |c, v| c.lock_history_max_per_key = v.int() as u64),
    string("lock-history-file", None, HIDDEN | VOLATILE, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.lock_history_file.clone())), |c, v| c.lock_history_file = v.into_string()),
];

/// The row and the entry name (primary or alias, lower case) `name` designates, ignoring
/// case, as Redis's `lookupConfig`.
pub fn lookup(name: &[u8]) -> Option<(&'static Param, &'static str)> {
    PARAMS.iter().find_map(|p| {
        if p.name.as_bytes().eq_ignore_ascii_case(name) {
            Some((p, p.name))
        } else {
            p.alias
                .filter(|a| a.as_bytes().eq_ignore_ascii_case(name))
                .map(|a| (p, a))
        }
    })
}

/// Every (entry name, row) pair: each primary name followed by its alias, as CONFIG GET *
/// lists them.
pub fn entries() -> impl Iterator<Item = (&'static str, &'static Param)> {
    PARAMS
        .iter()
        .flat_map(|p| std::iter::once((p.name, p)).chain(p.alias.map(|a| (a, p))))
}
