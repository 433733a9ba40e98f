//! Every error text Redis 7.0 sends that resplock can send, spelled once.
//!
//! Handlers return [`RedisError`], whose text is the whole error line without the leading `-`
//! (so the code, `ERR`/`WRONGTYPE`/..., is part of it), exactly as Redis writes it.

use bytes::Bytes;
use std::borrow::Cow;
use std::fmt;

mod families;
pub use families::*;

/// An injected error line as clients can read it: clients take an error's first word as its
/// code (`ERR`, `READONLY`, `NOSCRIPT`...), so a line whose first word is not an upper-case
/// code gets Redis's generic `ERR ` in front (`"boom"` becomes `"ERR boom"`).
pub fn with_error_code(line: &[u8]) -> Bytes {
    let word = line.split(|&b| b == b' ').next().unwrap_or_default();
    let is_code = !word.is_empty()
        && word.iter().any(u8::is_ascii_uppercase)
        && word
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-');
    if is_code {
        Bytes::copy_from_slice(line)
    } else {
        let mut v = Vec::with_capacity(line.len() + 4);
        v.extend_from_slice(b"ERR ");
        v.extend_from_slice(line);
        Bytes::from(v)
    }
}

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const SYNTAX: &str = "ERR syntax error";
/// shared.loadingerr: refused while the dataset loads.
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const HASH_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const DECR_OVERFLOW: &str = "ERR decrement would overflow";
pub const INCR_NAN_OR_INF: &str = "ERR increment would produce NaN or Infinity";
pub const NO_SUCH_KEY: &str = "ERR no such key";
/// DEBUG HTSTATS with a database number outside 0..databases.
pub const OUT_OF_RANGE_DB: &str = "ERR Out of range database";
/// DEBUG HTSTATS-KEY on a value Redis does not keep in a dict.
pub const NOT_HASH_TABLE: &str =
    "ERR The value stored at the specified key is not represented using an hash table";
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const AUTH_NO_PASSWORD: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
pub const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
/// SORT BY with a pattern, for a user that may not read every key.
pub const SORT_BY_ACL: &str = "ERR BY option of SORT denied due to insufficient ACL permissions.";
/// SORT GET, for a user that may not read every key.
pub const SORT_GET_ACL: &str = "ERR GET option of SORT denied due to insufficient ACL permissions.";
pub const MAX_CLIENTS: &str = "ERR max number of clients reached";
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";
pub const NOPERM_KEY: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
pub const NOPERM_CHANNEL: &str =
    "NOPERM this user has no permissions to access one of the channels used as arguments";
pub const ACL_USERNAME_SPACES: &str = "ERR Usernames can't contain spaces or null characters";
pub const ACL_DEFAULT_UNDELETABLE: &str = "ERR The 'default' user cannot be removed";
pub const ACL_GENPASS_BITS: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
pub const ACL_NO_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";
pub const ACL_SAVE_FAILED: &str = "ERR There was an error trying to save the ACLs. Please check the server logs for more information";
/// Every CLUSTER subcommand, READONLY, READWRITE and ASKING: resplock is never a cluster node.
pub const CLUSTER_DISABLED: &str = "ERR This instance has cluster support disabled";
// Redis Cluster (a node of `--cluster N`): clusterRedirectClient's errors and the commands
// a cluster node refuses.
/// Keys of one request in different slots.
pub const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
/// Several keys of a slot being migrated, not all of them here.
pub const TRYAGAIN: &str = "TRYAGAIN Multiple keys request during rehashing of slot";
/// The cluster is down (a slot uncovered, or no majority reachable).
pub const CLUSTERDOWN: &str = "CLUSTERDOWN The cluster is down";
/// The cluster is down and cluster-allow-reads-when-down lets reads through.
pub const CLUSTERDOWN_RO: &str = "CLUSTERDOWN The cluster is down and only accepts read commands";
/// The key's slot has no master.
pub const CLUSTERDOWN_UNBOUND: &str = "CLUSTERDOWN Hash slot not served";
/// A write refused for lack of replicas (min-replicas-to-write, shared.noreplicaserr).
pub const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";
/// The same, as a script's `redis.call` raises it (with its code, as luaPushError takes it).
pub const NOREPLICAS_IN_SCRIPT: &str = "-NOREPLICAS Not enough good replicas to write.";
/// A write refused for a while after a start (stop-writes-after-restart, resplock's own: the
/// Redlock "delayed restart"): a lock client counts the instance as not acquired.
pub const RESTARTED: &str = "RESTARTED Writes are refused for a while after a restart, until the locks granted before it have expired (stop-writes-after-restart).";
/// The same, as a script's `redis.call` raises it (with its code).
pub const RESTARTED_IN_SCRIPT: &str = "-RESTARTED Writes are refused for a while after a restart, until the locks granted before it have expired (stop-writes-after-restart).";
/// A write sent to a replica (processCommand's check, and scripts').
pub const READONLY_REPLICA: &str = "READONLY You can't write against a read only replica.";
/// READONLY_REPLICA as a script's `redis.call` raises it: the leading `-` keeps its code.
pub const READONLY_REPLICA_IN_SCRIPT: &str =
    "-READONLY You can't write against a read only replica.";
/// A shebang script that may write, on a replica.
pub const READONLY_SCRIPT: &str = "READONLY Can not run script with write flag on readonly replica";
/// A script flagged `no-cluster` on a cluster node.
pub const SCRIPT_NO_CLUSTER: &str = "ERR Can not run script on cluster, 'no-cluster' flag is set.";
/// redis.call of a key another node serves.
pub const SCRIPT_NON_LOCAL_KEY: &str =
    "Script attempted to access a non local key in a cluster node";
/// redis.call of keys of another slot than the script's.
pub const SCRIPT_CROSS_SLOT: &str =
    "Script attempted to access keys that do not hash to the same slot";
/// redis.call while the cluster is down.
pub const SCRIPT_CLUSTER_DOWN: &str =
    "Script attempted to execute a command while the cluster is down";
/// redis.call of a write while the cluster is down and reads are allowed.
pub const SCRIPT_CLUSTER_DOWN_RO: &str =
    "Script attempted to execute a write command while the cluster is down and readonly";
pub const SELECT_IN_CLUSTER: &str = "ERR SELECT is not allowed in cluster mode";
pub const MOVE_IN_CLUSTER: &str = "ERR MOVE is not allowed in cluster mode";
pub const SWAPDB_IN_CLUSTER: &str = "ERR SWAPDB is not allowed in cluster mode";
pub const COPY_DB_IN_CLUSTER: &str =
    "ERR Copying to another database is not allowed in cluster mode";
pub const REPLICAOF_IN_CLUSTER: &str = "ERR REPLICAOF not allowed in cluster mode.";
pub const INVALID_SLOT: &str = "ERR Invalid or out of range slot";
/// What a client from outside loopback gets in protected mode (no password set).
pub const PROTECTED_MODE: &str = "DENIED Redis is running in protected mode because protected \
mode is enabled and no password is set for the default user. In this mode connections are only \
accepted from the loopback interface. If you want to connect from external computers to Redis you \
may adopt one of the following solutions: 1) Just disable protected mode sending the command \
'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same \
host the server is running, however MAKE SURE Redis is not publicly accessible from internet if \
you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just \
disable the protected mode by editing the Redis configuration file, and setting the protected \
mode option to 'no', and then restarting the server. 3) If you started the server manually just \
for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication \
password for the default user. NOTE: You only need to do one of the above things in order for \
the server to start accepting connections from the outside.";
pub const SAME_OBJECT: &str = "ERR source and destination objects are the same";
pub const VALUE_OUT_OF_RANGE_POSITIVE: &str = "ERR value is out of range, must be positive";
/// RESPLOCK.FAULT ERROR's text must be one line (it is sent as an error reply).
pub const TEST_FAULT_ERROR_TEXT: &str = "ERR the error text must be non-empty and on one line";
/// The embedding API's direct access runs commands without a connection: these need one.
pub const DIRECT_NEEDS_CLIENT: &str =
    "ERR this command needs a client connection (blocking, subscribing, MULTI or scripts)";
/// RESPLOCK.RESTART FROM a snapshot RESPLOCK.SNAPSHOT never took.
pub const TEST_NO_SUCH_SNAPSHOT: &str = "ERR no such snapshot";

/// RESPLOCK.FENCED.WRITE ... CHECK with a token the resource has already gone past
/// (Kleppmann's fencing: the storage refuses a stale token).
pub fn test_stale_fencing_token(token: i64, last: i64) -> RedisError {
    RedisError::from_bytes(
        format!("STALE fencing token {token} is not above {last}, the last this resource accepted")
            .into_bytes(),
    )
}
pub const BIT_OFFSET_NOT_INTEGER: &str = "ERR bit offset is not an integer or out of range";
pub const BIT_NOT_INTEGER: &str = "ERR bit is not an integer or out of range";
pub const BIT_ARG_ONE_OR_ZERO: &str = "ERR The bit argument must be 1 or 0.";
pub const BITOP_NOT_ONE_KEY: &str = "ERR BITOP NOT must be called with a single source key.";
pub const BITFIELD_BAD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const BITFIELD_BAD_OVERFLOW: &str = "ERR Invalid OVERFLOW type specified";
pub const BITFIELD_RO_GET_ONLY: &str = "ERR BITFIELD_RO only supports the GET subcommand";
pub const LCS_NOT_STRINGS: &str = "ERR The specified keys must contain string values";
pub const LCS_LEN_AND_IDX: &str =
    "ERR If you want both the length and indexes, please just use IDX.";
pub const LCS_TOO_LONG: &str = "ERR String too long for LCS";
pub const IDLETIME_UNDER_LFU: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const FREQ_WITHOUT_LFU: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";
pub const NOT_LISTPACK: &str = "ERR Not a listpack encoded object.";
pub const NOT_QUICKLIST: &str = "ERR Not a quicklist encoded object.";
pub const DEBUG_RELOAD_OPTIONS: &str =
    "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.";
pub const PACKED_THRESHOLD_RANGE: &str =
    "ERR argument must be a memory value bigger than 1 and smaller than 4gb";
pub const DEBUG_PROTOCOL_TYPE: &str = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
pub const RESP2_NOT_SUPPORTED: &str = "ERR RESP2 is not supported by this command";
pub const LCS_ALLOC_FAILED: &str =
    "ERR Insufficient memory, failed allocating transient memory for LCS";
pub const LCS_TABLE_TOO_BIG: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";

/// One Redis error reply: the text after `-`, e.g. `ERR syntax error`. Bytes, not a string:
/// Redis echoes a client's arguments in errors byte for byte, valid UTF-8 or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisError(pub Cow<'static, [u8]>);

impl RedisError {
    pub const fn new(text: &'static str) -> Self {
        RedisError(Cow::Borrowed(text.as_bytes()))
    }
    pub fn owned(text: String) -> Self {
        RedisError(Cow::Owned(text.into_bytes()))
    }
    pub fn from_bytes(text: Vec<u8>) -> Self {
        RedisError(Cow::Owned(text))
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The text for logs and messages (invalid UTF-8 shown as U+FFFD).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
    pub fn into_bytes(self) -> Bytes {
        match self.0 {
            Cow::Borrowed(s) => Bytes::from_static(s),
            Cow::Owned(s) => Bytes::from(s),
        }
    }
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl From<&'static str> for RedisError {
    fn from(s: &'static str) -> Self {
        RedisError::new(s)
    }
}

/// Redis's addReplyErrorFormat: CR and LF are trimmed from both ends, and any left inside
/// become spaces, so a client's argument can never break the reply line.
fn sanitize(mut v: Vec<u8>) -> RedisError {
    let start = v
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(start, |p| p + 1);
    v.truncate(end);
    v.drain(..start);
    for b in v.iter_mut() {
        if matches!(*b, b'\r' | b'\n') {
            *b = b' ';
        }
    }
    RedisError::from_bytes(v)
}

/// Concatenate the pieces of an error text.
fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// `ERR wrong number of arguments for 'get' command`; `fullname` is `get` or `client|setname`.
pub fn wrong_arity(fullname: &str) -> RedisError {
    RedisError::owned(format!(
        "ERR wrong number of arguments for '{fullname}' command"
    ))
}

/// C's `%s` stops at a NUL byte; Redis formats arguments with it.
fn until_nul(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// Redis formats the first arguments of an unknown command, each quoted and followed by a space,
/// stopping once the list reaches 128 bytes; names and arguments are cut at 128 bytes.
fn args_beginning(args: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in args {
        if out.len() >= 128 {
            break;
        }
        let room = 128 - out.len();
        let a = until_nul(a);
        out.push(b'\'');
        out.extend_from_slice(&a[..a.len().min(room)]);
        out.extend_from_slice(b"' ");
    }
    out
}

/// `%.128s`
fn cut128(b: &[u8]) -> &[u8] {
    let b = until_nul(b);
    &b[..b.len().min(128)]
}

/// `ERR unknown command 'foo', with args beginning with: 'a' 'b' `
pub fn unknown_command(name: &[u8], args: &[Bytes]) -> RedisError {
    sanitize(join(&[
        b"ERR unknown command '",
        cut128(name),
        b"', with args beginning with: ",
        &args_beginning(args),
    ]))
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.`
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> RedisError {
    sanitize(join(&[
        b"ERR unknown subcommand '",
        cut128(sub),
        b"'. Try ",
        cmd.to_ascii_uppercase().as_bytes(),
        b" HELP.",
    ]))
}

/// `ERR invalid expire time in 'set' command`
pub fn invalid_expire(cmd: &str) -> RedisError {
    RedisError::owned(format!("ERR invalid expire time in '{cmd}' command"))
}

/// Any error text built at run time (already carrying its code).
/// [`err`] for a text that holds a client's raw bytes (not necessarily UTF-8).
pub fn err_bytes(text: Vec<u8>) -> RedisError {
    sanitize(text)
}

pub fn err(text: impl Into<String>) -> RedisError {
    sanitize(text.into().into_bytes())
}

pub const EXPIRE_NX_CONFLICT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const EXPIRE_GT_LT_CONFLICT: &str = "ERR GT and LT options at the same time are not compatible";
pub const INVALID_FIRST_DB: &str = "ERR invalid first DB index";
pub const INVALID_SECOND_DB: &str = "ERR invalid second DB index";

/// `ERR Unsupported option x` (EXPIRE's flags); Redis prints the option with %s, so it stops
/// at a NUL byte.
pub fn unsupported_option(opt: &[u8]) -> RedisError {
    sanitize(join(&[b"ERR Unsupported option ", until_nul(opt)]))
}

// Hashes, connection and server commands.
pub const VALUE_NAN_OR_INF: &str = "ERR value is NaN or Infinity";
pub const VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
pub const NO_SUCH_CLIENT: &str = "ERR No such client";
pub const CLIENT_ID_INVALID: &str = "ERR client-id should be greater than 0";
pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
pub const CLIENT_NAME_INVALID: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
pub const HELLO_PROTO_NOT_INT: &str = "ERR Protocol version is not an integer or out of range";
pub const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
pub const NO_CONFIG_FILE: &str = "ERR The server is running without a config file";
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
pub const TIMEOUT_NOT_INTEGER: &str = "ERR timeout is not an integer or out of range";
pub const PAUSE_MODE: &str = "ERR CLIENT PAUSE mode must be WRITE or ALL";
pub const CACHING_WITHOUT_TRACKING: &str = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled";
pub const CACHING_YES_NOT_OPTIN: &str =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
pub const CACHING_NO_NOT_OPTOUT: &str =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
pub const TRACKING_ONE_REDIRECT: &str = "ERR A client can only redirect to a single other client";
pub const TRACKING_NO_REDIRECT_CLIENT: &str =
    "ERR The client ID you want redirect to does not exist";
pub const TRACKING_PREFIX_NEEDS_BCAST: &str = "ERR PREFIX option requires BCAST mode to be enabled";
pub const TRACKING_BCAST_SWITCH: &str = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const TRACKING_OPT_WITH_BCAST: &str = "ERR OPTIN and OPTOUT are not compatible with BCAST";
pub const TRACKING_OPTIN_AND_OPTOUT: &str = "ERR You can't specify both OPTIN mode and OPTOUT mode";
pub const TRACKING_OPT_SWITCH: &str = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const SLOWLOG_COUNT: &str = "ERR count should be greater than or equal to -1";
pub const INVALID_MASTER_PORT: &str = "ERR Invalid master port";
/// REPLICAOF host port from a client that is itself a replica of this server.
pub const REPLICAOF_FROM_REPLICA: &str = "ERR Command is not valid when client is a replica.";
/// A command that needs fresh data on a replica whose link is down, with
/// replica-serve-stale-data no.
pub const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
/// MASTERDOWN for a script that declares its flags without `allow-stale`.
pub const MASTERDOWN_SCRIPT: &str = "MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and 'allow-stale' flag is not set on the script.";
/// `redis.call` of a command without the `stale` flag on a stale replica.
pub const SCRIPT_STALE: &str = "Can not execute the command on a stale replica";
/// SYNC/PSYNC on a replica whose own master link is down.
pub const NOMASTERLINK: &str = "NOMASTERLINK Can't SYNC while not connected with my master";

/// `ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.`
/// (Redis's addReplySubcommandSyntaxError: the subcommand as typed, the command upper-cased.)
pub fn subcommand_syntax(sub: &[u8], cmd: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR unknown subcommand or wrong number of arguments for '",
        cut128(sub),
        b"'. Try ",
        &cmd.to_ascii_uppercase(),
        b" HELP.",
    ]))
}

/// `ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are
/// allowed in this context` (RESP2 subscribed mode).
pub fn pubsub_context(fullname: &str) -> RedisError {
    RedisError::owned(format!(
        "ERR Can't execute '{fullname}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    ))
}

/// `-MOVED slot ip:port` (`ask`: `-ASK ...`), clusterRedirectClient's redirection.
pub fn redirect(ask: bool, slot: u16, ip: &str, port: u16) -> RedisError {
    let kind = if ask { "ASK" } else { "MOVED" };
    RedisError::owned(format!("{kind} {slot} {ip}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_bytes_are_echoed_exactly_with_line_breaks_trimmed_then_mapped() {
        assert_eq!(
            unsupported_option(b"\r\n").as_bytes(),
            b"ERR Unsupported option "
        );
        assert_eq!(
            unsupported_option(b"\r\nfoo").as_bytes(),
            b"ERR Unsupported option   foo"
        );
        assert_eq!(
            unknown_command(b"\xff", &[Bytes::from_static(b"a")]).as_bytes(),
            b"ERR unknown command '\xff', with args beginning with: 'a' "
        );
    }
}
