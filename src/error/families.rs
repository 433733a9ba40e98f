//! The error texts of the command families (scripting and functions, Lua, sets and sorted
//! sets, transactions, lists, HyperLogLog, geo, replication, streams), re-exported by
//! [`crate::error`]: one module of texts, in two files.

use super::*;

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
pub const SCRIPT_DEBUG_UNSUPPORTED: &str =
    "ERR SCRIPT DEBUG YES/SYNC is not supported over TLS by resplock: debug over a plain TCP or unix socket connection";
/// SCRIPT DEBUG with replies still pending (clientHasPendingReplies).
pub const SCRIPT_DEBUG_PIPELINE: &str = "ERR SCRIPT DEBUG must be called outside a pipeline";
/// EVALSHA by a client in a debugging mode.
pub const SCRIPT_DEBUG_EVALSHA: &str = "ERR Please use EVAL instead of EVALSHA for debugging";
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
/// disconnectAllBlockedClients: a blocked client of a master that became a replica.
pub const UNBLOCKED_ROLE_CHANGED: &str =
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)";
/// A SHUTDOWN whose final save failed, or that was aborted while it waited.
pub const SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";
/// SHUTDOWN ABORT with no shutdown in progress.
pub const NO_SHUTDOWN: &str = "ERR No shutdown in progress.";

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
/// PSYNC ... FAILOVER naming a history that is not this replica's.
pub const PSYNC_FAILOVER_REPLID: &str = "ERR PSYNC FAILOVER replid must match my replid.";
/// FAILOVER on a node of a cluster.
pub const FAILOVER_IN_CLUSTER: &str =
    "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.";
/// FAILOVER while one runs.
pub const FAILOVER_IN_PROGRESS: &str = "ERR FAILOVER already in progress.";
/// FAILOVER on a replica.
pub const FAILOVER_ON_REPLICA: &str = "ERR FAILOVER is not valid when server is a replica.";
/// FAILOVER ... FORCE without both TIMEOUT and TO.
pub const FAILOVER_FORCE_ARGS: &str =
    "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
/// FAILOVER TO an address no attached replica has.
pub const FAILOVER_NOT_A_REPLICA: &str = "ERR FAILOVER target HOST and PORT is not a replica.";
/// FAILOVER TO a replica still synchronizing.
pub const FAILOVER_NOT_ONLINE: &str = "ERR FAILOVER target replica is not online.";
/// REPLICAOF while a FAILOVER runs.
pub const REPLICAOF_FAILING_OVER: &str = "ERR REPLICAOF not allowed while failing over.";
/// SYNC/PSYNC while this master fails over.
pub const NOMASTERLINK_FAILING_OVER: &str = "NOMASTERLINK Can't SYNC while failing over";
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
