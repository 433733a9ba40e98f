//! The flag bits of a command row (Redis's CMD_* flags, and resplock's own above bit 16).

pub const WRITE: u32 = 1 << 0;
pub const READONLY: u32 = 1 << 1;
pub const DENYOOM: u32 = 1 << 2;
pub const ADMIN: u32 = 1 << 3;
pub const PUBSUB: u32 = 1 << 4;
pub const NOSCRIPT: u32 = 1 << 5;
pub const BLOCKING: u32 = 1 << 6;
pub const LOADING: u32 = 1 << 7;
pub const STALE: u32 = 1 << 8;
pub const SKIP_MONITOR: u32 = 1 << 9;
pub const SKIP_SLOWLOG: u32 = 1 << 10;
pub const FAST: u32 = 1 << 11;
pub const NO_AUTH: u32 = 1 << 12;
pub const MAY_REPLICATE: u32 = 1 << 13;
pub const NO_MULTI: u32 = 1 << 14;
pub const ALLOW_BUSY: u32 = 1 << 15;
/// Allowed in RESP2 subscribed mode.
pub const SUBSCRIBED_OK: u32 = 1 << 16;
/// A `RESPLOCK.*` test command: resolvable only on a server started with
/// `enable_test_commands`, never listed by COMMAND, never affected by faults.
pub const TEST_ONLY: u32 = 1 << 24;
/// Refused unless the server was started to allow it (Redis's CMD_PROTECTED: DEBUG and
/// `enable-debug-command`); not shown by COMMAND INFO, as in Redis.
pub const PROTECTED: u32 = 1 << 19;
/// Needs a connection to act on (MULTI, EXEC, DISCARD, the SUBSCRIBE family, MONITOR): the
/// embedding API's direct calls, which run as a client with none, refuse it.
pub const NEEDS_CONNECTION: u32 = 1 << 20;
/// Waits on another server while holding the server lock (MIGRATE): on a current-thread
/// runtime the dispatcher runs it on a blocking thread, so the runtime's one thread stays free
/// for the target (which may be a server of this same process).
pub const NETWORK: u32 = 1 << 21;

/// (flag, name in COMMAND INFO's reply), in Redis's order.
pub const NAMES: &[(u32, &str)] = &[
    (WRITE, "write"),
    (READONLY, "readonly"),
    (DENYOOM, "denyoom"),
    (ADMIN, "admin"),
    (PUBSUB, "pubsub"),
    (NOSCRIPT, "noscript"),
    (BLOCKING, "blocking"),
    (LOADING, "loading"),
    (STALE, "stale"),
    (SKIP_MONITOR, "skip_monitor"),
    (SKIP_SLOWLOG, "skip_slowlog"),
    (FAST, "fast"),
    (NO_AUTH, "no_auth"),
    // MAY_REPLICATE is left out: Redis hides it from COMMAND INFO on purpose.
    (NO_MULTI, "no_multi"),
    (ALLOW_BUSY, "allow_busy"),
];

/// The bits of the flags named as COMMAND INFO prints them (a name with no bit, like
/// `movablekeys`, adds none).
pub fn from_names(names: &[&str]) -> u32 {
    names
        .iter()
        .filter_map(|n| NAMES.iter().find(|(_, x)| x == n).map(|(bit, _)| *bit))
        .fold(0, |acc, bit| acc | bit)
}
