//! Every error text Redis 7.0 sends that resplock can send, spelled once.
//!
//! Handlers return [`RedisError`], whose text is the whole error line without the leading `-`
//! (so the code, `ERR`/`WRONGTYPE`/..., is part of it), exactly as Redis writes it.

use bytes::Bytes;
use std::borrow::Cow;
use std::fmt;

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

// ---- scripting ----
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
pub const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
/// The error a killed script raises (its hook's luaPushError; the error handler adds where).
pub const SCRIPT_KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";
/// The error FUNCTION LOAD's hook raises once the library's code ran 500 ms.
pub const FUNCTION_LOAD_TIMEOUT: &str = "ERR FUNCTION LOAD timeout";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const SCRIPT_TOO_MANY_KEYS: &str = "ERR Number of keys can't be greater than number of args";
pub const SCRIPT_NEGATIVE_KEYS: &str = "ERR Number of keys can't be negative";
pub const SCRIPT_INVALID_SHEBANG: &str = "ERR Invalid script shebang";
pub const SCRIPT_INVALID_ENGINE: &str = "ERR Invalid engine in script shebang";
pub const SCRIPT_RO_WITH_WRITE_FLAG: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
pub const SCRIPT_FLUSH_OPTION: &str = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
pub const SCRIPT_DEBUG_OPTION: &str = "ERR Use SCRIPT DEBUG YES/SYNC/NO";
/// resplock has no Lua debugger (a deliberate difference, see the README).
pub const SCRIPT_DEBUG_UNSUPPORTED: &str = "ERR SCRIPT DEBUG YES/SYNC is not supported by resplock: debug scripts against redis-server (redis-cli --ldb)";
/// BUSY while a function (not an EVAL script) runs.
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

// ---- functions ----
pub const FUNCTION_NOT_FOUND: &str = "ERR Function not found";
pub const FUNCTION_BAD_NUMKEYS: &str = "ERR Bad number of keys provided";
pub const FUNCTION_LIBRARY_NOT_FOUND: &str = "ERR Library not found";
pub const FUNCTION_BAD_NAME: &str = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
pub const FUNCTION_FLUSH_OPTION: &str = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
pub const FUNCTION_RESTORE_POLICY: &str =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";
pub const FUNCTION_RESTORE_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
/// RESTORE and FUNCTION RESTORE: a payload whose footer is wrong.
pub const DUMP_PAYLOAD: &str = FUNCTION_RESTORE_PAYLOAD;
/// RESTORE: a payload whose footer checks out but whose value does not decode.
pub const BAD_DATA_FORMAT: &str = "ERR Bad data format";
/// MIGRATE ... KEYS with a key argument that is not the empty string.
pub const MIGRATE_KEYS_WITH_KEY: &str =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";
/// MIGRATE could not connect to the target within its timeout (Redis's own wording).
pub const MIGRATE_CONNECT: &str = "IOERR error or timeout connecting to the client";
/// MIGRATE could not send its request within its timeout.
pub const MIGRATE_WRITING: &str = "IOERR error or timeout writing to target instance";
/// MIGRATE did not get the target's replies within its timeout.
pub const MIGRATE_READING: &str = "IOERR error or timeout reading to target instance";

/// A command moved to a blocking thread (MIGRATE on a current-thread runtime) panicked there.
pub const COMMAND_FAILED: &str = "ERR command execution failed";

/// MIGRATE relays the first error line of the target (`line` without its `-`).
pub fn migrate_target_error(line: &[u8]) -> RedisError {
    let mut text = b"ERR Target instance replied with error: ".to_vec();
    text.extend_from_slice(line);
    err_bytes(text)
}

/// RESTORE without REPLACE onto an existing key.
pub const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
pub const INVALID_TTL: &str = "ERR Invalid TTL value, must be >= 0";
pub const INVALID_IDLETIME: &str = "ERR Invalid IDLETIME value, must be >= 0";
pub const INVALID_FREQ: &str = "ERR Invalid FREQ value, must be >= 0 and <= 255";
pub const FUNCTION_LIST_NO_LIBRARY_NAME: &str = "ERR library name argument was not given";

/// `ERR Unknown option given: x` (FUNCTION LOAD).
pub fn function_load_option(opt: &[u8]) -> RedisError {
    sanitize(join(&[b"ERR Unknown option given: ", until_nul(opt)]))
}

/// `ERR Unknown argument x` (FUNCTION LIST).
pub fn function_list_argument(arg: &[u8]) -> RedisError {
    sanitize(join(&[b"ERR Unknown argument ", until_nul(arg)]))
}

// ---- raised inside Lua: luaPushError adds the `ERR ` code ----
pub const LUA_LOG_ARGS: &str = "redis.log() requires two arguments or more.";
pub const LUA_LOG_LEVEL_NOT_NUMBER: &str = "First argument must be a number (log level).";
pub const LUA_LOG_LEVEL_INVALID: &str = "Invalid debug level.";
pub const LUA_SETRESP_ARGS: &str = "redis.setresp() requires one argument.";
pub const LUA_SETRESP_VERSION: &str = "RESP version must be 2 or 3.";
pub const LUA_SET_REPL_ARGS: &str = "redis.set_repl() requires two arguments.";
pub const LUA_SET_REPL_FLAGS: &str =
    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.";
pub const LUA_ACL_CHECK_OUTSIDE: &str =
    "redis.acl_check_cmd can only be called inside a script invocation";
pub const LUA_CALL_NO_ARGS: &str = "Please specify at least one argument for this redis lib call";
pub const LUA_CALL_BAD_ARG: &str = "Lua redis lib command arguments must be strings or integers";
pub const LUA_CALL_OUTSIDE: &str = "redis.call/pcall can only be called inside a script invocation";
pub const LUA_REGISTER_OUTSIDE_LOAD: &str =
    "redis.register_function can only be called on FUNCTION LOAD command";
pub const LUA_REGISTER_ARGS: &str = "wrong number of arguments to redis.register_function";
pub const LUA_REGISTER_SINGLE_ARG: &str = "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).";
pub const LUA_REGISTER_NAME_NOT_STRING: &str =
    "first argument to redis.register_function must be a string";
pub const LUA_REGISTER_CALLBACK_NOT_FUNCTION: &str =
    "second argument to redis.register_function must be a function";
pub const LUA_REGISTER_KEY_NOT_STRING: &str =
    "named argument key given to redis.register_function is not a string";
pub const LUA_REGISTER_FUNCTION_NAME_NOT_STRING: &str =
    "function_name argument given to redis.register_function must be a string";
pub const LUA_REGISTER_DESCRIPTION_NOT_STRING: &str =
    "description argument given to redis.register_function must be a string";
pub const LUA_REGISTER_CALLBACK_ARG_NOT_FUNCTION: &str =
    "callback argument given to redis.register_function must be a function";
pub const LUA_REGISTER_FLAGS_NOT_TABLE: &str =
    "flags argument to redis.register_function must be a table representing function flags";
pub const LUA_REGISTER_UNKNOWN_FLAG: &str = "unknown flag given";
pub const LUA_REGISTER_UNKNOWN_ARG: &str = "unknown argument given to redis.register_function";
pub const LUA_REGISTER_NO_NAME: &str = "redis.register_function must get a function name argument";
pub const LUA_REGISTER_NO_CALLBACK: &str = "redis.register_function must get a callback argument";
pub const LUA_REGISTER_BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";
pub const LUA_REGISTER_DUPLICATE: &str = "Function already exists in the library";

// ---- sets, sorted sets, SORT ----
pub const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
pub const NUMKEYS_TOO_MANY: &str = "ERR Number of keys can't be greater than number of args";
pub const LIMIT_NEGATIVE: &str = "ERR LIMIT can't be negative";
pub const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";
pub const MINMAX_NOT_FLOAT: &str = "ERR min or max is not a float";
pub const MINMAX_NOT_LEX: &str = "ERR min or max not valid string range item";
pub const ZADD_XX_NX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ZADD_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ZADD_INCR_PAIRS: &str = "ERR INCR option supports a single increment-element pair";
pub const SCORE_NAN: &str = "ERR resulting score is not a number (NaN)";
pub const ZRANGE_LIMIT_BY_RANK: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ZRANGE_WITHSCORES_BYLEX: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
pub const WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";
pub const SORT_NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// `ERR at least 1 input key is needed for 'zunion' command`
pub fn needs_one_key(fullname: &str) -> RedisError {
    RedisError::owned(format!(
        "ERR at least 1 input key is needed for '{fullname}' command"
    ))
}

// ---- transactions ----
pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const NOT_ALLOWED_IN_MULTI: &str = "ERR Command not allowed inside a transaction";

/// `EXECABORT Transaction discarded because of: <error>` (EXEC itself was rejected). Redis
/// quotes the error as it was built, before addReplyError put `ERR ` in front of plain
/// messages, so a leading `ERR ` is left out while other codes (BUSY, NOAUTH) stay.
pub fn execabort_because(why: &RedisError) -> RedisError {
    let text = why.as_bytes();
    let text = text.strip_prefix(b"ERR ").unwrap_or(text);
    sanitize(join(&[
        b"EXECABORT Transaction discarded because of: ",
        text,
    ]))
}

// ---- lists and blocking pops ----
pub const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
pub const UNBLOCKED_BY_CLIENT: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

/// `ERR value is out of range, value must between MIN and MAX` (getRangeLongFromObject
/// without a message of its own).
pub fn out_of_range_between(min: i64, max: i64) -> RedisError {
    RedisError::owned(format!(
        "ERR value is out of range, value must between {min} and {max}"
    ))
}

// HyperLogLog (hyperloglog.c).
/// isHLLObjectOrReply's answer for a string that is not an HLL.
pub const HLL_NOT_VALID: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
/// An HLL whose sparse opcodes do not cover the registers.
pub const HLL_CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";
pub const PFDEBUG_NO_KEY: &str = "ERR The specified key does not exist";
pub const HLL_NOT_SPARSE: &str = "ERR HLL encoding is not sparse";

/// `ERR Unknown PFDEBUG subcommand 'x'`.
pub fn pfdebug_unknown(sub: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR Unknown PFDEBUG subcommand '",
        until_nul(sub),
        b"'",
    ]))
}

// Geo (geo.c).
pub const GEO_BAD_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";
pub const GEO_NEED_RADIUS: &str = "ERR need numeric radius";
pub const GEO_NEED_WIDTH: &str = "ERR need numeric width";
pub const GEO_NEED_HEIGHT: &str = "ERR need numeric height";
pub const GEO_RADIUS_NEGATIVE: &str = "ERR radius cannot be negative";
pub const GEO_BOX_NEGATIVE: &str = "ERR height or width cannot be negative";
pub const GEO_NO_MEMBER: &str = "ERR could not decode requested zset member";
pub const GEO_COUNT_POSITIVE: &str = "ERR COUNT must be > 0";
pub const GEO_ANY_NEEDS_COUNT: &str = "ERR the ANY argument requires COUNT argument";
pub const GEORADIUS_STORE_WITH: &str =
    "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options";
pub const GEOSEARCHSTORE_WITH: &str =
    "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options";

/// `ERR invalid longitude,latitude pair 200.000000,100.000000` (C's `%f`).
pub fn geo_invalid_pair(lon: f64, lat: f64) -> RedisError {
    RedisError::owned(format!(
        "ERR invalid longitude,latitude pair {},{}",
        c_percent_f(lon),
        c_percent_f(lat)
    ))
}

fn c_percent_f(d: f64) -> String {
    if d.is_nan() {
        if d.is_sign_negative() { "-nan" } else { "nan" }.to_string()
    } else if d.is_infinite() {
        if d > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{d:.6}")
    }
}

/// `ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch`: the
/// command's name as the client typed it.
pub fn geo_need_from(cmd: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ",
        until_nul(cmd),
    ]))
}

/// `ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch`.
pub fn geo_need_by(cmd: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR exactly one of BYRADIUS and BYBOX can be specified for ",
        until_nul(cmd),
    ]))
}

// MODULE and replication (module.c, replication.c), as a server without modules or replicas.
pub const MODULE_LOAD_FAILED: &str =
    "ERR Error loading the extension. Please check the server logs.";
pub const MODULE_NO_SUCH: &str = "ERR Error unloading module: no such module with that name";
/// processCommand's refusal of MODULE LOAD/UNLOAD/LOADEX under `enable-module-command no`.
pub const MODULE_NOT_ALLOWED: &str = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";
pub const FAILOVER_NOT_IN_PROGRESS: &str = "ERR No failover in progress.";
pub const FAILOVER_TIMEOUT: &str = "ERR FAILOVER timeout must be greater than 0";
pub const FAILOVER_NO_REPLICAS: &str = "ERR FAILOVER requires connected replicas.";
pub const PSYNC_FAILOVER_MASTER: &str = "ERR PSYNC FAILOVER can't be sent to a master.";
/// What a would-be replica is told when the master cannot produce its RDB.
pub const REPLICATION_BGSAVE_FAILED: &str = "ERR BGSAVE failed, replication can't continue";
pub const REPLCONF_FILTER_MISSING: &str = "ERR Missing rdb-filter-only values";

/// `ERR Unrecognized REPLCONF option: x`.
pub fn replconf_unknown(opt: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR Unrecognized REPLCONF option: ",
        until_nul(opt),
    ]))
}

/// `ERR Unsupported rdb-filter-only option: x`.
pub fn replconf_filter_unsupported(opt: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR Unsupported rdb-filter-only option: ",
        until_nul(opt),
    ]))
}

/// `ERR REPLCONF ip-address provided by replica instance is too long: N bytes`.
pub fn replconf_ip_too_long(len: usize) -> RedisError {
    RedisError::owned(format!(
        "ERR REPLCONF ip-address provided by replica instance is too long: {len} bytes"
    ))
}

// ---- streams (t_stream.c) ----
pub const STREAM_INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";
pub const STREAM_INVALID_START: &str = "ERR invalid start ID for the interval";
pub const STREAM_INVALID_END: &str = "ERR invalid end ID for the interval";
pub const XADD_ID_ZERO: &str = "ERR The ID specified in XADD must be greater than 0-0";
pub const XADD_ID_NOT_GREATER: &str =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
/// Also what Redis answers when `<ms>-*` exhausts the sequence: that path fails without
/// setting errno, and errno normally holds something other than the EDOM the other text needs.
pub const XADD_TOO_LARGE: &str = "ERR Elements are too large to be stored";
pub const XADD_EXHAUSTED: &str =
    "ERR The stream has exhausted the last possible ID, unable to add more items";
pub const XTRIM_MAXLEN_NEGATIVE: &str = "ERR The MAXLEN argument must be >= 0.";
pub const XTRIM_LIMIT_NEGATIVE: &str = "ERR The LIMIT argument must be >= 0.";
pub const XTRIM_BOTH_STRATEGIES: &str =
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
pub const XTRIM_LIMIT_WITHOUT_STRATEGY: &str =
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
pub const XTRIM_NO_STRATEGY: &str =
    "ERR syntax error, XTRIM must be called with a trimming strategy";
pub const XTRIM_LIMIT_WITHOUT_APPROX: &str =
    "ERR syntax error, LIMIT cannot be used without the special ~ option";
pub const XSETID_TOO_SMALL: &str =
    "ERR The ID specified in XSETID is smaller than the target stream top item";
pub const XSETID_ENTRIES_ADDED_TOO_SMALL: &str =
    "ERR The entries_added specified in XSETID is smaller than the target stream length";
pub const XSETID_ENTRIES_ADDED_NEGATIVE: &str = "ERR entries_added must be positive";
pub const XSETID_BELOW_MAX_DELETED: &str =
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id";
pub const XREAD_UNBALANCED: &str =
    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.";
pub const XREAD_GROUP_OPTION: &str =
    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.";
pub const XREAD_NOACK_OPTION: &str =
    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.";
pub const XREADGROUP_NO_GROUP: &str = "ERR Missing GROUP option for XREADGROUP";
pub const XREADGROUP_DOLLAR: &str = "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.";
pub const XREAD_GREATER_ID: &str = "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.";
pub const NOGROUP_BLOCKED: &str =
    "NOGROUP the consumer group this client was blocked on no longer exists";
pub const UNBLOCKED_STREAM_GONE: &str = "UNBLOCKED the stream key no longer exists";
pub const XGROUP_KEY_MISSING: &str = "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.";
pub const BUSYGROUP: &str = "BUSYGROUP Consumer Group name already exists";
pub const XGROUP_ENTRIES_READ: &str = "ERR value for ENTRIESREAD must be positive or -1";
pub const XCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XCLAIM";
pub const XCLAIM_IDLE: &str = "ERR Invalid IDLE option argument for XCLAIM";
pub const XCLAIM_TIME: &str = "ERR Invalid TIME option argument for XCLAIM";
pub const XCLAIM_RETRYCOUNT: &str = "ERR Invalid RETRYCOUNT option argument for XCLAIM";
pub const XAUTOCLAIM_MIN_IDLE: &str = "ERR Invalid min-idle-time argument for XAUTOCLAIM";
pub const XAUTOCLAIM_COUNT: &str = "ERR COUNT must be > 0";

/// `ERR xread command is not allowed with BLOCK option from scripts` (the command name as
/// the script spelled it).
pub fn xread_block_in_script(name: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR ",
        until_nul(name),
        b" command is not allowed with BLOCK option from scripts",
    ]))
}

/// `NOGROUP No such key 'k' or consumer group 'g' in XREADGROUP with GROUP option`
pub fn nogroup_xreadgroup(key: &[u8], group: &[u8]) -> RedisError {
    sanitize(join(&[
        b"NOGROUP No such key '",
        until_nul(key),
        b"' or consumer group '",
        until_nul(group),
        b"' in XREADGROUP with GROUP option",
    ]))
}

/// `NOGROUP No such consumer group 'g' for key name 'k'` (XGROUP, XINFO CONSUMERS)
pub fn nogroup_for_key(group: &[u8], key: &[u8]) -> RedisError {
    sanitize(join(&[
        b"NOGROUP No such consumer group '",
        until_nul(group),
        b"' for key name '",
        until_nul(key),
        b"'",
    ]))
}

/// `NOGROUP No such key 'k' or consumer group 'g'` (XPENDING, XCLAIM, XAUTOCLAIM)
pub fn nogroup(key: &[u8], group: &[u8]) -> RedisError {
    sanitize(join(&[
        b"NOGROUP No such key '",
        until_nul(key),
        b"' or consumer group '",
        until_nul(group),
        b"'",
    ]))
}

/// `ERR Unrecognized XCLAIM option 'x'`
pub fn xclaim_option(opt: &[u8]) -> RedisError {
    sanitize(join(&[
        b"ERR Unrecognized XCLAIM option '",
        until_nul(opt),
        b"'",
    ]))
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
