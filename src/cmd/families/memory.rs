//! MEMORY USAGE, STATS, DOCTOR, PURGE, MALLOC-STATS and HELP. USAGE reports what redis-server
//! would allocate for the same key and value (jemalloc size classes, robj, sds, dict entry:
//! see `types::alloc`), so scripts that size keys see familiar numbers; the process-wide
//! figures (STATS, DOCTOR) come from the resident set size, as INFO's do, since resplock's
//! allocator keeps no statistics (INFO says `mem_allocator:libc`, and Redis built without
//! jemalloc answers MALLOC-STATS and PURGE as here).

use crate::cmd::base::args::{self, Args};
use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::types::alloc::{dict_slots, sds_alloc_size, DICT_ENTRY};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("memory", container).subs(MEMORY_SUBS)];

const MEMORY_SUBS: &[Row] = &[
    Row::new("usage", usage),
    Row::new("stats", stats),
    Row::new("doctor", doctor),
    Row::new("purge", purge),
    Row::new("malloc-stats", malloc_stats),
    Row::new("help", help),
];

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES.
const DEFAULT_SAMPLES: usize = 5;

fn usage(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut samples = DEFAULT_SAMPLES;
    let mut args = Args::new(a, 3);
    while let Some(opt) = args.next() {
        let Some(v) = args.value_of(opt, "samples") else {
            return Err(RedisError::new(error::SYNTAX));
        };
        let n = args::int(v)?;
        if n < 0 {
            return Err(RedisError::new(error::SYNTAX));
        }
        // 0 means every element (usize::MAX samples; the types read 0 the same way).
        samples = n.try_into().unwrap_or(usize::MAX);
    }
    let key = &a[2];
    // Redis reads the dict directly: a key past its TTL but not yet reclaimed still counts.
    let value = ctx
        .db()
        .lock(key)
        .map
        .get(key)
        .map(|e| e.mem_usage(samples));
    Ok(match value {
        None => Reply::Nil,
        Some(v) => Reply::Int((v + sds_alloc_size(key.len()) + DICT_ENTRY) as i64),
    })
}

/// The process's resident set size (what INFO reports as used_memory).
fn rss() -> u64 {
    crate::alloc::rss_bytes()
}

fn stats(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let total = rss();
    let startup = ctx.state.startup_rss;
    let mut pairs: Vec<(Reply, Reply)> = Vec::new();
    let mut int = |name: &'static str, v: u64| {
        pairs.push((Reply::bulk_str(name), Reply::Int(v as i64)));
    };
    int("peak.allocated", total);
    int("total.allocated", total);
    int("startup.allocated", startup);
    for name in [
        "replication.backlog",
        "clients.slaves",
        "clients.normal",
        "cluster.links",
        "aof.buffer",
        "lua.caches",
        "functions.caches",
    ] {
        int(name, 0);
    }
    let mut keys = 0u64;
    let mut overhead = startup;
    for i in 0..ctx.state.keyspace.databases() {
        let db = ctx.state.keyspace.db(i);
        let n = db.len();
        if n == 0 {
            continue;
        }
        keys += n as u64;
        // Redis's dict: an entry per key and a pointer per slot; the same for keys with a TTL.
        let main = (n * DICT_ENTRY + dict_slots(n) * 8) as u64;
        let v = db.volatile();
        let expires = if v == 0 {
            0
        } else {
            (v * DICT_ENTRY + dict_slots(v) * 8) as u64
        };
        overhead += main + expires;
        pairs.push((
            Reply::bulk(format!("db.{i}")),
            Reply::Map(vec![
                (
                    Reply::bulk_str("overhead.hashtable.main"),
                    Reply::Int(main as i64),
                ),
                (
                    Reply::bulk_str("overhead.hashtable.expires"),
                    Reply::Int(expires as i64),
                ),
                (
                    Reply::bulk_str("overhead.hashtable.slot-to-keys"),
                    Reply::Int(0),
                ),
            ]),
        ));
    }
    let dataset = total.saturating_sub(overhead);
    let net = total.saturating_sub(startup);
    let mut int = |name: &'static str, v: u64| {
        pairs.push((Reply::bulk_str(name), Reply::Int(v as i64)));
    };
    int("overhead.total", overhead);
    int("keys.count", keys);
    int("keys.bytes-per-key", net.checked_div(keys).unwrap_or(0));
    int("dataset.bytes", dataset);
    let pct = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 * 100.0 / whole as f64
        }
    };
    let mut double = |name: &'static str, v: f64| {
        pairs.push((Reply::bulk_str(name), Reply::Double(v)));
    };
    double("dataset.percentage", pct(dataset, net));
    double("peak.percentage", 100.0);
    let mut int = |name: &'static str, v: u64| {
        pairs.push((Reply::bulk_str(name), Reply::Int(v as i64)));
    };
    int("allocator.allocated", total);
    int("allocator.active", total);
    int("allocator.resident", total);
    // No allocator statistics: no fragmentation or overhead can be told apart from the RSS.
    for (ratio, bytes) in [
        (
            "allocator-fragmentation.ratio",
            "allocator-fragmentation.bytes",
        ),
        ("allocator-rss.ratio", "allocator-rss.bytes"),
        ("rss-overhead.ratio", "rss-overhead.bytes"),
        ("fragmentation", "fragmentation.bytes"),
    ] {
        pairs.push((Reply::bulk_str(ratio), Reply::Double(1.0)));
        pairs.push((Reply::bulk_str(bytes), Reply::Int(0)));
    }
    Ok(Reply::Map(pairs))
}

/// Redis's getMemoryDoctorReport, reduced to what resplock can measure: an instance whose
/// memory grew less than 5 MB since startup is "empty" (Redis: less than 5 MB allocated);
/// otherwise nothing resplock tracks (peak, fragmentation, replica buffers) can be flagged.
fn doctor(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let grown = rss().saturating_sub(ctx.state.startup_rss);
    let text = if grown < 5 * 1024 * 1024 {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
    } else {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
    };
    Ok(Reply::Verbatim(Bytes::from_static(text.as_bytes())))
}

/// Redis without jemalloc has nothing to purge and answers OK.
fn purge(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::ok())
}

/// Redis built without jemalloc answers this text.
fn malloc_stats(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::bulk_str(
        "Stats not supported for the current allocator",
    ))
}

fn help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(MEMORY_HELP))
}
