//! The parameter table: every parameter `CONFIG GET *` of redis-server 7.0.15 returns (plus
//! Redis's hidden test-only ones), transcribed from the `static_configs` table of Redis's
//! config.c in the same order, with the same bounds, flags, defaults and validators.
//!
//! One row per primary name; an alias (`slaveof`, `lua-time-limit`, `hash-max-ziplist-*`,
//! ...) is a second name of its row, as in Redis. A row with `typed` accessors lives in a
//! field of [`Config`]; every other row keeps its formatted value in [`Config::others`].

use super::settings::{Config, LogLevel, ProtectedAction, Value};

mod params;
pub use params::PARAMS;

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

/// stop-writes-after-restart: `no`, `auto` or a number of milliseconds (the server's reading
/// of it is `cmd::runtime::restart_delay::Setting::parse`).
fn valid_restart_delay(v: &str) -> Result<(), &'static str> {
    let ms = !v.is_empty() && v.len() <= 15 && v.bytes().all(|b| b.is_ascii_digit());
    if ms || v.eq_ignore_ascii_case("no") || v.eq_ignore_ascii_case("auto") {
        return Ok(());
    }
    Err("argument must be 'no', 'auto' or a number of milliseconds")
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

/// sdstemplate then sdstrim(" "): `template` with each `{name}` replaced by `var(name)`
/// (`{{` is a brace), trimmed of spaces; None for an unknown variable or a `{` without its
/// `}`.
pub(crate) fn expand_template(
    template: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    while !rest.is_empty() {
        let Some(open) = rest.find('{') else {
            out.push_str(rest);
            break;
        };
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        if after.is_empty() {
            return None;
        }
        if let Some(r) = after.strip_prefix('{') {
            out.push('{');
            rest = r;
            continue;
        }
        let close = after.find('}')?;
        out.push_str(&var(&after[..close])?);
        rest = &after[close + 1..];
    }
    Some(out.trim_matches(' ').to_string())
}

/// Redis expands the template and refuses unknown variables, a `{` without its `}`, and a
/// result that is empty once trimmed of spaces.
fn valid_proc_title_template(v: &str) -> Result<(), &'static str> {
    const BAD: &str = "template format is invalid or contains unknown variables";
    let out = expand_template(v, &|name| {
        // Values as seen when validating: the title is empty, the address never is.
        Some(
            match name {
                "title" | "server-mode" | "unixsocket" => "",
                "listen-addr" => "*:6379",
                "config-file" => "-",
                "port" | "tls-port" => "0",
                _ => return None,
            }
            .to_string(),
        )
    })
    .ok_or(BAD)?;
    if out.is_empty() {
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
