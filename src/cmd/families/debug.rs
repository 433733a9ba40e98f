//! DEBUG: the subcommands Redis's own tests use on a server without persistence (SLEEP,
//! SET-ACTIVE-EXPIRE, OBJECT, RELOAD, DIGEST, DIGEST-VALUE, LISTPACK, QUICKLIST,
//! QUICKLIST-PACKED-THRESHOLD, POPULATE, PROTOCOL...), and Redis's error for the rest (the
//! crash, AOF, cluster and allocator ones).
//!
//! The command is refused before it runs unless the server was started with
//! `enable-debug-command yes` (or `local`, for loopback clients): `exec` checks the
//! PROTECTED flag, as Redis's processCommand does.
//!
//! DEBUG SLEEP stops the whole server, as in Redis: it sleeps holding the server lock, so
//! other clients wait for it (they are not told BUSY); the worker's other tasks are handed off
//! first, so connections keep being read meanwhile.

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::base::help::help_reply;
use crate::cmd::families::debug_digest as digest;
use crate::cmd::families::object::{refcount_of, shares_integers};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind, Value};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub const COMMANDS: &[Row] = &[Row::new("debug", debug).flags(PROTECTED)];

/// Redis's DEBUG HELP, without the lines of subcommands a jemalloc build adds (resplock reports
/// `mem_allocator:libc`).
const DEBUG_HELP: &[&str] = &[
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "AOF-FLUSH-SLEEP <microsec>",
    "    Server will sleep before flushing the AOF, this is used for testing.",
    "ASSERT",
    "    Crash by assertion failed.",
    "CHANGE-REPL-ID",
    "    Change the replication IDs of the instance.",
    "    Dangerous: should be used only for testing the replication subsystem.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes all configuration options, including",
    "    keywords not listed in original configuration file or default values.",
    "CRASH-AND-RECOVER [<milliseconds>]",
    "    Hard crash and restart after a <milliseconds> delay (default 0).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LEAK <string>",
    "    Create a memory leak of the input string.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "HTSTATS <dbid>",
    "    Return hash table statistics of the specified Redis database.",
    "HTSTATS-KEY <key>",
    "    Like HTSTATS but for the hash table stored at <key>'s value.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "REPLICATE <string>",
    "    Replicates the provided string to replicas, allowing data divergence.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "DROP-CLUSTER-PACKET-FILTER <packet-type>",
    "    Drop all packets that match the filtered type. Set to -1 allow all packets.",
    "OOM",
    "    Crash the server simulating an out-of-memory error.",
    "PANIC",
    "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an exception and kill the server.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "    Examples:",
    "    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
    "      the database.",
    "    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
    "      existing RDB file.",
    "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
    "      file to the database.",
    "RESTART [<milliseconds>]",
    "    Graceful restart: save config, db, restart after a <milliseconds> delay (default 0).",
    "SDSLEN <key>",
    "    Show low level SDS string info representing `key` and value.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "SET-SKIP-CHECKSUM-VALIDATION <0|1>",
    "    Enables or disables checksum checks for RDB files and RESTORE's payload.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
    "STRUCTSIZE",
    "    Return the size of different Redis core C structures.",
    "LISTPACK <key>",
    "    Show low level info about the listpack encoding of <key>.",
    "QUICKLIST <key> [<0|1>]",
    "    Show low level info about the quicklist encoding of <key>.",
    "    The optional argument (0 by default) sets the level of detail",
    "CLIENT-EVICTION",
    "    Show low level client eviction pools info (maxmemory-clients).",
    "PAUSE-CRON <0|1>",
    "    Stop periodic cron job processing.",
    "REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
    "    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
    "    In case NEVER is provided the last observed peak will never be reset",
    "    In case RESET is provided the peak reset time will be restored to the default value",
    "REPLYBUFFER RESIZING <0|1>",
    "    Enable or disable the reply buffer resize cron job",
    "CLUSTERLINK KILL <to|from|all> <node-id>",
    "    Kills the link based on the direction to/from (both) with the provided node.",
    "HELP",
    "    Prints this help.",
];

/// C's atoi: optional spaces and sign, then digits up to the first other byte; 0 if none.
fn atoi(s: &[u8]) -> i64 {
    let s = s.trim_ascii_start();
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &c in digits.iter().take_while(|c| c.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add((c - b'0') as i64);
    }
    if neg {
        v.wrapping_neg()
    } else {
        v
    }
}

/// C's strtod on the longest prefix that reads as a number (0 if none).
fn strtod_prefix(s: &[u8]) -> f64 {
    let s = std::str::from_utf8(s)
        .unwrap_or("")
        .trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    (1..=s.len().min(64))
        .rev()
        .filter(|&n| s.is_char_boundary(n))
        .find_map(|n| s[..n].parse::<f64>().ok())
        .unwrap_or(0.0)
}

fn debug(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let sub = &a[1][..];
    let n = a.len();
    if n == 2 && is(sub, "help") {
        Ok(help_reply(DEBUG_HELP))
    } else if n == 3 && is(sub, "sleep") {
        sleep(strtod_prefix(&a[2]));
        Ok(Reply::ok())
    } else if n == 3 && is(sub, "set-active-expire") {
        let on = atoi(&a[2]) != 0;
        ctx.state.active_expire_enabled.store(on, Ordering::Relaxed);
        Ok(Reply::ok())
    } else if n == 3 && is(sub, "set-disable-deny-scripts") {
        let on = atoi(&a[2]) != 0;
        ctx.state.script_disable_deny.store(on, Ordering::Relaxed);
        Ok(Reply::ok())
    } else if n == 3 && is(sub, "pause-cron") {
        let paused = atoi(&a[2]) != 0;
        ctx.state.cron_paused.store(paused, Ordering::Relaxed);
        Ok(Reply::ok())
    } else if n == 3 && is(sub, "object") {
        object(ctx, &a[2])
    } else if is(sub, "reload") {
        reload(ctx, &a[2..])
    } else if is(sub, "loadaof") {
        loadaof(ctx)
    } else if n == 2 && is(sub, "digest") {
        Ok(Reply::Simple(Bytes::from(digest::hex(
            &digest::dataset_digest(&ctx.state.keyspace),
        ))))
    } else if is(sub, "digest-value") {
        let mut out = Vec::with_capacity(n - 2);
        for key in &a[2..] {
            // Like Redis, no lookup: a key past its TTL but not yet reclaimed still counts.
            let d = ctx
                .db()
                .lock(key)
                .map
                .get(key)
                .map_or([0u8; 20], digest::value_digest);
            out.push(Reply::Simple(Bytes::from(digest::hex(&d))));
        }
        Ok(Reply::Array(out))
    } else if n == 3 && is(sub, "listpack") {
        encoding_check(ctx, &a[2], "listpack", error::NOT_LISTPACK, "Listpack")
    } else if (n == 3 || n == 4) && is(sub, "quicklist") {
        encoding_check(ctx, &a[2], "quicklist", error::NOT_QUICKLIST, "Quicklist")
    } else if n == 3 && is(sub, "quicklist-packed-threshold") {
        let ok =
            crate::config::memtoull(&a[2]).is_some_and(crate::types::list::set_packed_threshold);
        if ok {
            Ok(Reply::ok())
        } else {
            Err(RedisError::new(error::PACKED_THRESHOLD_RANGE))
        }
    } else if (3..=5).contains(&n) && is(sub, "populate") {
        populate(ctx, a)
    } else if n == 3 && is(sub, "protocol") {
        protocol(ctx, &a[2])
    } else if n == 3 && is(sub, "error") {
        // The client's text is the whole error line, newlines made spaces.
        let text: Vec<u8> = a[2]
            .iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
            .collect();
        Err(RedisError::from_bytes(text))
    } else if n == 3 && is(sub, "log") {
        crate::log::warning(&format!("DEBUG LOG: {}", String::from_utf8_lossy(&a[2])));
        Ok(Reply::ok())
    } else if (n == 2 && is(sub, "change-repl-id"))
        || (n == 3
            && (is(sub, "leak")
                || is(sub, "set-skip-checksum-validation")
                || is(sub, "aof-flush-sleep")))
    {
        // Nothing to change here: no replication, no RDB/AOF.
        Ok(Reply::ok())
    } else if n == 2 && is(sub, "config-rewrite-force-all") {
        crate::cmd::families::config::rewrite_config(ctx, true).map_err(|e| {
            // Redis words it after strerror only; without a config file it opened a NULL path.
            let why = if ctx.state.config.read().config_file.is_none() {
                "Bad address"
            } else {
                e.rsplit(": ").next().unwrap_or(&e)
            };
            error::err(format!("ERR CONFIG-REWRITE-FORCE-ALL failed: {why}"))
        })?;
        Ok(Reply::ok())
    } else if n == 2 && is(sub, "structsize") {
        Ok(Reply::bulk_str(
            "bits:64 robj:16 dictentry:24 sdshdr5:1 sdshdr8:3 sdshdr16:5 sdshdr32:9 sdshdr64:17 ",
        ))
    } else if n == 3 && is(sub, "htstats") {
        crate::cmd::families::debug_htstats::htstats(ctx, &a[2])
    } else if n == 3 && is(sub, "htstats-key") {
        crate::cmd::families::debug_htstats::htstats_key(ctx, &a[2])
    } else if n == 4 && is(sub, "replybuffer") {
        replybuffer(a)
    } else {
        Err(error::subcommand_syntax(sub, &a[0]))
    }
}

/// Stop the server for `secs`: this thread sleeps holding the server lock (every other client
/// waits, as with Redis's nanosleep). On a multi-threaded runtime the worker's queued tasks
/// move to another thread first, so sockets are still read.
fn sleep(secs: f64) {
    let us = secs * 1_000_000.0;
    if us.is_nan() || us < 1.0 {
        return;
    }
    let d = Duration::from_micros(us.min(u64::MAX as f64) as u64);
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        tokio::task::block_in_place(|| std::thread::sleep(d));
    } else {
        std::thread::sleep(d);
    }
}

/// DEBUG OBJECT: Redis's one-line summary of a value (the key is read without an expiry check
/// or touch, as Redis's dictFind).
fn object(ctx: &Ctx, key: &[u8]) -> CmdResult {
    let shared = shares_integers(ctx);
    let now = ctx.now;
    let line = ctx.db().lock(key).map.get(key).map(|e| {
        format!(
            "Value at:{:p} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}{}",
            &e.value,
            refcount_of(shared, e),
            e.encoding(),
            serialized_len(e, shared_compress(ctx)),
            e.access().unwrap_or(0),
            e.idle_ms(now) / 1000,
            quicklist_extra(ctx, e)
        )
    });
    match line {
        None => Err(RedisError::new(error::NO_SUCH_KEY)),
        Some(l) => Ok(Reply::Simple(Bytes::from(l))),
    }
}

/// DEBUG OBJECT's serializedlength: the value's RDB object as SAVE would write it (after
/// its type byte), compressed when rdbcompression is on (rdbSavedObjectLen).
fn serialized_len(e: &Entry, compress: bool) -> usize {
    let mut out = Vec::new();
    crate::rdb::object::put_object(&mut out, &e.value, compress);
    out.len()
}

/// rdbcompression, as DEBUG OBJECT's serializedlength counts it.
fn shared_compress(ctx: &Ctx) -> bool {
    crate::cmd::runtime::persist::settings::compression(&ctx.state.config.read())
}

/// The nodes' sizes as Redis keeps them (node->sz): a listpack's bytes, header and end byte
/// included, or a plain node's element.
fn list_listpack_bytes(l: &crate::types::list::List) -> usize {
    use crate::types::list::NodeView;
    l.node_views()
        .map(|n| match n {
            NodeView::Packed { entries, .. } => {
                entries.len() + crate::types::alloc::LISTPACK_OVERHEAD
            }
            NodeView::Plain(e) => e.len(),
        })
        .sum()
}

/// DEBUG OBJECT's quicklist details: nodes, average elements per node, the fill and
/// compression settings, the listpacks' total size.
fn quicklist_extra(ctx: &Ctx, e: &Entry) -> String {
    let Value::List(l) = &e.value else {
        return String::new();
    };
    let (fill, depth) = {
        let c = ctx.state.config.read();
        (c.list_max_listpack_size, c.list_compress_depth)
    };
    let nodes = l.node_count();
    format!(
        " ql_nodes:{nodes} ql_avg_node:{:.2} ql_listpack_max:{fill} ql_compressed:{} ql_uncompressed_size:{}",
        l.len() as f64 / nodes as f64,
        (depth != 0) as u8,
        list_listpack_bytes(l)
    )
}

/// DEBUG LISTPACK and QUICKLIST: Redis prints the structure on its stdout and says so; here
/// only the encoding check and the answer remain.
fn encoding_check(ctx: &Ctx, key: &[u8], want: &str, wrong: &'static str, what: &str) -> CmdResult {
    let enc = ctx.db().lock(key).peek(key, ctx.now).map(|e| e.encoding());
    crate::cmd::families::keys::count_lookup(ctx, enc.is_some());
    match enc {
        None => Err(RedisError::new(error::NO_SUCH_KEY)),
        Some(e) if e != want => Err(RedisError::new(wrong)),
        Some(_) => Ok(Reply::Simple(Bytes::from(format!(
            "{what} structure printed on stdout"
        )))),
    }
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: the dataset saved to `dbfilename` and loaded
/// back from it (see `runtime::persist::load::debug_reload`).
fn reload(ctx: &Ctx, opts: &[Bytes]) -> CmdResult {
    let (mut merge, mut noflush, mut nosave) = (false, false, false);
    for o in opts {
        if is(o, "merge") {
            merge = true;
        } else if is(o, "noflush") {
            noflush = true;
        } else if is(o, "nosave") {
            nosave = true;
        } else {
            return Err(RedisError::new(error::DEBUG_RELOAD_OPTIONS));
        }
    }
    use crate::cmd::runtime::persist::load::{debug_reload, ReloadError};
    match debug_reload(ctx.state, merge, noflush, nosave) {
        Ok(()) => Ok(Reply::ok()),
        Err(ReloadError::Save) => Err(error::err("ERR")),
        Err(_) => Err(error::err("ERR Error trying to load the RDB dump")),
    }
}

/// DEBUG LOADAOF: the append-only log written out, the dataset emptied and the log loaded
/// back (see `runtime::persist::aof::load::debug_loadaof`).
fn loadaof(ctx: &Ctx) -> CmdResult {
    crate::cmd::runtime::persist::aof::load::debug_loadaof(ctx.state);
    Ok(Reply::ok())
}

/// DEBUG POPULATE count [prefix] [size]: `prefix:N` string keys (`key:N` by default) holding
/// `value:N`, or that text cut or zero-padded to `size` bytes; existing keys are left alone.
fn populate(ctx: &Ctx, a: &[Bytes]) -> CmdResult {
    // getPositiveLongFromObjectOrReply: one error for "not a number" and "negative".
    let positive = |b: &[u8]| -> Result<u64, RedisError> {
        crate::cmd::base::args::parse_i64(b)
            .and_then(|v| u64::try_from(v).ok())
            .ok_or(RedisError::new(error::VALUE_OUT_OF_RANGE_POSITIVE))
    };
    let count = positive(&a[2])?;
    let size = match a.get(4) {
        Some(s) => positive(s)? as usize,
        None => 0,
    };
    let prefix: &[u8] = a.get(3).map_or(b"key", |p| &p[..]);
    for j in 0..count {
        let mut key = prefix.to_vec();
        key.extend_from_slice(format!(":{j}").as_bytes());
        let mut shard = ctx.db().lock(&key);
        if shard.get(&key, ctx.now).is_some() {
            continue;
        }
        let text = format!("value:{j}");
        let value = if size == 0 {
            Bytes::from(text)
        } else {
            let mut v = vec![0u8; size];
            let n = size.min(text.len());
            v[..n].copy_from_slice(&text.as_bytes()[..n]);
            Bytes::from(v)
        };
        let mut e = Entry::new(Value::Str(value));
        e.set_str_kind(StrKind::Plain);
        shard.insert(&key, e);
        drop(shard);
        ctx.signal_modified(&key);
    }
    Ok(Reply::ok())
}

/// DEBUG PROTOCOL: one reply of each RESP type, for client tests.
fn protocol(ctx: &Ctx, name: &[u8]) -> CmdResult {
    let ints = || (0..3).map(Reply::Int).collect::<Vec<_>>();
    Ok(match name {
        n if is(n, "string") => Reply::bulk_str("Hello World"),
        n if is(n, "integer") => Reply::Int(12345),
        // Redis's test value, not an approximation of pi.
        #[allow(clippy::approx_constant)]
        n if is(n, "double") => Reply::Double(3.141),
        n if is(n, "bignum") => {
            Reply::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999"))
        }
        n if is(n, "null") => Reply::Nil,
        n if is(n, "array") => Reply::Array(ints()),
        n if is(n, "set") => Reply::Set(ints()),
        n if is(n, "map") => Reply::Map(
            (0..3)
                .map(|j| (Reply::Int(j), Reply::Bool(j == 1)))
                .collect(),
        ),
        n if is(n, "attrib") => Reply::Attributed(
            vec![(
                Reply::bulk_str("key-popularity"),
                Reply::Array(vec![Reply::bulk_str("key:123"), Reply::Int(90)]),
            )],
            Box::new(Reply::bulk_str("Some real reply following the attribute")),
        ),
        n if is(n, "push") => {
            if ctx.client.resp < 3 {
                return Err(RedisError::new(error::RESP2_NOT_SUPPORTED));
            }
            // Both through the client's queue, so the push goes out first, as in Redis.
            ctx.client.push.push_own(Reply::Push(vec![
                Reply::bulk_str("server-cpu-usage"),
                Reply::Int(42),
            ]));
            ctx.client
                .push
                .push_own(Reply::bulk_str("Some real reply following the push reply"));
            Reply::NoReply
        }
        n if is(n, "true") => Reply::Bool(true),
        n if is(n, "false") => Reply::Bool(false),
        n if is(n, "verbatim") => {
            Reply::Verbatim(Bytes::from_static(b"This is a verbatim\nstring"))
        }
        _ => return Err(RedisError::new(error::DEBUG_PROTOCOL_TYPE)),
    })
}

/// DEBUG REPLYBUFFER PEAK-RESET-TIME|RESIZING value: checked as Redis does; resplock's reply
/// buffers have no such tuning.
fn replybuffer(a: &[Bytes]) -> CmdResult {
    let what = &a[2][..];
    if is(what, "peak-reset-time") {
        let v = &a[3][..];
        if !(is(v, "never") || is(v, "reset")) {
            crate::cmd::base::args::int(v)?;
        }
        Ok(Reply::ok())
    } else if is(what, "resizing") {
        Ok(Reply::ok())
    } else {
        Err(error::subcommand_syntax(&a[1], &a[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoi_and_strtod_read_prefixes_like_c() {
        assert_eq!(atoi(b"1"), 1);
        assert_eq!(atoi(b" -12abc"), -12);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(strtod_prefix(b"0.5"), 0.5);
        assert_eq!(strtod_prefix(b"1.5s"), 1.5);
        assert_eq!(strtod_prefix(b"x"), 0.0);
    }
}
