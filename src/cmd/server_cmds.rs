//! Server commands: INFO, COMMAND, CONFIG, TIME, WAIT, SHUTDOWN, LASTSAVE.
//!
//! COMMAND's replies are built from the command table rows (flags, arity, key positions,
//! docs), so they stay true as families are added. INFO's text is parsed by clients at connect
//! (ioredis), so its framing follows Redis exactly.

use super::args::{self, is};
use super::connection_cmds::help_reply;
use super::flags::*;
use super::{all_commands, container, lookup, lookup_sub, meta, notify, Command, Ctx};
use crate::cmd::ServerState;
use crate::config::Config;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

const SERVER_ADMIN: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

pub const COMMANDS: &[Command] = &[
    Command::new("info", -1, LOADING | STALE, info).doc(
        "server",
        "1.0.0",
        "Get information and statistics about the server",
    ),
    // A plain row, not a container: bare COMMAND is valid. Its subcommands are dispatched
    // below and described by COMMAND_SUBS.
    Command::new("command", -1, LOADING | STALE, command).doc(
        "server",
        "2.8.13",
        "Get array of Redis command details",
    ),
    Command::new("config", -2, 0, container)
        .subs(CONFIG_SUBS)
        .doc(
            "server",
            "2.0.0",
            "A container for server configuration commands",
        ),
    Command::new("time", 1, LOADING | STALE | FAST, time).doc(
        "server",
        "2.6.0",
        "Return the current server time",
    ),
    Command::new("wait", 3, NOSCRIPT, wait).doc(
        "generic",
        "3.0.0",
        "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
    ),
    Command::new(
        "shutdown",
        -1,
        ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY,
        shutdown,
    )
    .doc(
        "server",
        "1.0.0",
        "Synchronously save the dataset to disk and then shut down the server",
    ),
    Command::new("lastsave", 1, LOADING | STALE | FAST, lastsave).doc(
        "server",
        "1.0.0",
        "Get the UNIX time stamp of the last successful save to disk",
    ),
];

const CONFIG_SUBS: &[Command] = &[
    Command::new("get", -3, SERVER_ADMIN, config_get).doc(
        "server",
        "2.0.0",
        "Get the values of configuration parameters",
    ),
    Command::new("set", -4, SERVER_ADMIN, config_set).doc(
        "server",
        "2.0.0",
        "Set configuration parameters to the given values",
    ),
    Command::new("resetstat", 2, SERVER_ADMIN, config_resetstat).doc(
        "server",
        "2.0.0",
        "Reset the stats returned by INFO",
    ),
    Command::new("rewrite", 2, SERVER_ADMIN, config_rewrite).doc(
        "server",
        "2.8.0",
        "Rewrite the configuration file with the in memory configuration",
    ),
    Command::new("help", 2, LOADING | STALE, config_help).doc(
        "server",
        "5.0.0",
        "Show helpful text about the different subcommands",
    ),
];

/// COMMAND's subcommands: run by [`command`], listed here for COMMAND INFO/DOCS/LIST.
const COMMAND_SUBS: &[Command] = &[
    Command::new("count", 2, LOADING | STALE, command).doc(
        "server",
        "2.8.13",
        "Get total number of Redis commands",
    ),
    Command::new("docs", -2, LOADING | STALE, command).doc(
        "server",
        "7.0.0",
        "Get array of specific Redis command documentation",
    ),
    Command::new("getkeys", -4, LOADING | STALE, command).doc(
        "server",
        "2.8.13",
        "Extract keys given a full Redis command",
    ),
    Command::new("help", 2, LOADING | STALE, command).doc(
        "server",
        "5.0.0",
        "Show helpful text about the different subcommands",
    ),
    Command::new("info", -2, LOADING | STALE, command).doc(
        "server",
        "2.8.13",
        "Get array of specific Redis command details, or all when no argument is given.",
    ),
    Command::new("list", -2, LOADING | STALE, command).doc(
        "server",
        "7.0.0",
        "Get an array of Redis command names",
    ),
];

// ---------------------------------------------------------------------------------------
// COMMAND

fn subs_of(c: &'static Command) -> &'static [Command] {
    if c.name == "command" {
        COMMAND_SUBS
    } else {
        c.subcommands
    }
}

/// Redis's ACL categories of a row, in Redis's category order, derived from its flags and
/// group (explicit categories Redis adds by hand, like @dangerous on INFO, are not known).
fn acl_categories(c: &Command, container_row: bool) -> Vec<&'static str> {
    if container_row {
        return vec!["@slow"];
    }
    let g = c.group;
    let mut v = Vec::new();
    let mut add = |cond: bool, name: &'static str| {
        if cond {
            v.push(name);
        }
    };
    add(g == "generic", "@keyspace");
    add(c.has(READONLY), "@read");
    add(c.has(WRITE), "@write");
    add(g == "set", "@set");
    add(g == "sorted-set", "@sortedset");
    add(g == "list", "@list");
    add(g == "hash", "@hash");
    add(g == "string", "@string");
    add(g == "bitmap", "@bitmap");
    add(g == "hyperloglog", "@hyperloglog");
    add(g == "geo", "@geo");
    add(g == "stream", "@stream");
    add(c.has(PUBSUB) || g == "pubsub", "@pubsub");
    add(c.has(ADMIN), "@admin");
    add(c.has(FAST), "@fast");
    add(!c.has(FAST), "@slow");
    add(c.has(BLOCKING), "@blocking");
    add(c.has(ADMIN), "@dangerous");
    add(g == "connection", "@connection");
    add(g == "transactions", "@transaction");
    add(g == "scripting", "@scripting");
    v
}

fn key_specs(c: &Command) -> Vec<Reply> {
    if c.first_key <= 0 {
        return vec![];
    }
    let b = |s: &'static str| Reply::bulk_static(s);
    let flags = if c.has(READONLY) {
        vec![Reply::simple("RO"), Reply::simple("access")]
    } else {
        vec![Reply::simple("RW"), Reply::simple("update")]
    };
    let lastkey = if c.last_key < 0 {
        c.last_key
    } else {
        c.last_key - c.first_key
    };
    vec![Reply::Map(vec![
        (b("flags"), Reply::Set(flags)),
        (
            b("begin_search"),
            Reply::Map(vec![
                (b("type"), b("index")),
                (
                    b("spec"),
                    Reply::Map(vec![(b("index"), Reply::Int(c.first_key as i64))]),
                ),
            ]),
        ),
        (
            b("find_keys"),
            Reply::Map(vec![
                (b("type"), b("range")),
                (
                    b("spec"),
                    Reply::Map(vec![
                        (b("lastkey"), Reply::Int(lastkey as i64)),
                        (b("keystep"), Reply::Int(c.step as i64)),
                        (b("limit"), Reply::Int(0)),
                    ]),
                ),
            ]),
        ),
    ])]
}

/// ACL categories of a row: the recorded ones, else derived from flags and group.
fn categories(c: &Command, full: &str, container_row: bool) -> Vec<&'static str> {
    match meta::get(full) {
        Some(m) => m.acl_names(),
        None => acl_categories(c, container_row),
    }
}

/// One COMMAND INFO entry (Redis 7's ten fields): the row's fields, plus the recorded ACL
/// categories, tips and key specs (derived from the row for a command with no record).
fn command_info(c: &'static Command, parent: Option<&Command>) -> Reply {
    let subs = if parent.is_none() { subs_of(c) } else { &[] };
    let container_row = !subs.is_empty() && c.name != "command";
    let full = super::fullname(parent, c);
    let m = meta::get(&full);
    let flag_names = meta::flag_names(c.flags, m)
        .into_iter()
        .map(Reply::simple)
        .collect();
    let acl = match m {
        Some(m) => m.acl.reply(),
        None => Reply::Set(
            acl_categories(c, container_row)
                .into_iter()
                .map(Reply::simple)
                .collect(),
        ),
    };
    Reply::Array(vec![
        Reply::bulk_str(&full),
        Reply::Int(c.arity as i64),
        Reply::Set(flag_names),
        Reply::Int(c.first_key as i64),
        Reply::Int(c.last_key as i64),
        Reply::Int(c.step as i64),
        acl,
        m.map_or(Reply::Set(vec![]), |m| m.tips.reply()),
        m.map_or_else(|| Reply::Set(key_specs(c)), |m| m.key_specs.reply()),
        // As in Redis: an empty set when there are none, else an array (even in RESP3).
        if subs.is_empty() {
            Reply::Set(vec![])
        } else {
            Reply::Array(subs.iter().map(|s| command_info(s, Some(c))).collect())
        },
    ])
}

/// One COMMAND DOCS entry, in Redis's field order: summary, since, group (from the row), the
/// recorded fields (complexity ... arguments), then subcommands.
fn command_docs(c: &'static Command, parent: Option<&Command>) -> Reply {
    let b = |s: &'static str| Reply::bulk_static(s);
    let mut m = Vec::new();
    if !c.summary.is_empty() {
        m.push((b("summary"), b(c.summary)));
    }
    if !c.since.is_empty() {
        m.push((b("since"), b(c.since)));
    }
    m.push((b("group"), b(c.group)));
    if let Some(meta) = meta::get(&super::fullname(parent, c)) {
        m.extend(meta.docs.iter().map(|(k, v)| (b(k), v.reply())));
    }
    let subs = if parent.is_none() { subs_of(c) } else { &[] };
    if !subs.is_empty() {
        m.push((
            b("subcommands"),
            Reply::Map(
                subs.iter()
                    .map(|s| {
                        (
                            Reply::bulk_str(&super::fullname(Some(c), s)),
                            command_docs(s, Some(c)),
                        )
                    })
                    .collect(),
            ),
        ));
    }
    Reply::Map(m)
}

/// `get` or `client|list` to its row (and parent).
fn find_command(name: &[u8]) -> Option<(&'static Command, Option<&'static Command>)> {
    match name.iter().position(|&c| c == b'|') {
        None => lookup(name).map(|c| (c, None)),
        Some(p) => {
            let parent = lookup(&name[..p])?;
            let sub = subs_of(parent)
                .iter()
                .find(|s| s.name.as_bytes().eq_ignore_ascii_case(&name[p + 1..]))
                .or_else(|| lookup_sub(parent, &name[p + 1..]))?;
            Some((sub, Some(parent)))
        }
    }
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

fn command(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let _ = ctx;
    if a.len() == 1 {
        return Ok(Reply::Array(
            all_commands()
                .into_iter()
                .map(|c| command_info(c, None))
                .collect(),
        ));
    }
    let sub = COMMAND_SUBS
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(&a[1]))
        .ok_or_else(|| error::unknown_subcommand(&a[1], "command"))?;
    if !sub.arity_ok(a.len()) {
        return Err(error::wrong_arity(&format!("command|{}", sub.name)));
    }
    match sub.name {
        "count" => Ok(Reply::Int(all_commands().len() as i64)),
        "help" => Ok(help_reply(COMMAND_HELP)),
        "list" => command_list(a),
        "info" => Ok(Reply::Array(if a.len() == 2 {
            all_commands()
                .into_iter()
                .map(|c| command_info(c, None))
                .collect()
        } else {
            a[2..]
                .iter()
                .map(|n| match find_command(n) {
                    Some((c, p)) => command_info(c, p),
                    None => Reply::Nil,
                })
                .collect()
        })),
        "docs" => Ok(Reply::Map(if a.len() == 2 {
            all_commands()
                .into_iter()
                .map(|c| (Reply::bulk_static(c.name), command_docs(c, None)))
                .collect()
        } else {
            a[2..]
                .iter()
                .filter_map(|n| {
                    find_command(n)
                        .map(|(c, p)| (Reply::bulk_str(&super::fullname(p, c)), command_docs(c, p)))
                })
                .collect()
        })),
        _ => command_getkeys(&a[2..]),
    }
}

fn command_getkeys(cmd_args: &[Bytes]) -> CmdResult {
    let invalid = || error::err("ERR Invalid command specified");
    // As Redis's lookupCommand: a plain name (`config|get` is not one), then its subcommand.
    let base = lookup(&cmd_args[0]).ok_or_else(invalid)?;
    let (c, parent) = if !subs_of(base).is_empty() && cmd_args.len() >= 2 {
        let sub = subs_of(base)
            .iter()
            .find(|s| s.name.as_bytes().eq_ignore_ascii_case(&cmd_args[1]))
            .ok_or_else(invalid)?;
        (sub, Some(base))
    } else {
        (base, None)
    };
    let m = meta::get(&super::fullname(parent, c));
    // Redis's order: no keys at all, then arity, then the keys of this command line.
    let search = m.map(|m| meta::key_positions(m, cmd_args));
    if matches!(search, Some(meta::KeySearch::NoKeys)) || (m.is_none() && c.first_key <= 0) {
        return Err(error::err("ERR The command has no key arguments"));
    }
    if !c.arity_ok(cmd_args.len()) {
        return Err(error::err(
            "ERR Invalid number of arguments specified for command",
        ));
    }
    let positions: Vec<usize> = match search {
        Some(meta::KeySearch::Keys(p)) => p,
        _ => c.key_positions(cmd_args.len()).collect(),
    };
    if positions.is_empty() {
        if meta::flag_names(c.flags, m).contains(&"no_mandatory_keys") {
            return Ok(Reply::Array(vec![]));
        }
        return Err(error::err("ERR Invalid arguments specified for command"));
    }
    Ok(Reply::Array(
        positions
            .into_iter()
            .map(|i| Reply::Bulk(cmd_args[i].clone()))
            .collect(),
    ))
}

/// A COMMAND LIST candidate: full name, row, and whether it is a container.
type ListRow = (String, &'static Command, bool);

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT cat | PATTERN pattern]: names of commands and
/// subcommands.
fn command_list(a: &[Bytes]) -> CmdResult {
    let mut rows: Vec<ListRow> = Vec::new();
    for c in all_commands() {
        let subs = subs_of(c);
        rows.push((
            c.name.to_string(),
            c,
            !subs.is_empty() && c.name != "command",
        ));
        for s in subs {
            rows.push((super::fullname(Some(c), s), s, false));
        }
    }
    let keep: Box<dyn Fn(&ListRow) -> bool> = match a.len() {
        2 => Box::new(|_| true),
        5 if is(&a[2], "filterby") => {
            let v = a[4].clone();
            if is(&a[3], "module") {
                Box::new(|_| false)
            } else if is(&a[3], "aclcat") {
                let cat = format!("@{}", String::from_utf8_lossy(&v).to_ascii_lowercase());
                Box::new(move |(n, c, cont)| categories(c, n, *cont).contains(&cat.as_str()))
            } else if is(&a[3], "pattern") {
                Box::new(move |(n, _, _)| crate::glob::glob_match(&v, n.as_bytes(), true))
            } else {
                return Err(RedisError::new(error::SYNTAX));
            }
        }
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    Ok(Reply::Array(
        rows.iter()
            .filter(|r| keep(r))
            .map(|(n, _, _)| Reply::bulk_str(n))
            .collect(),
    ))
}

// ---------------------------------------------------------------------------------------
// INFO

/// Redis's bytesToHuman.
fn human_bytes(n: u64) -> String {
    let d = n as f64;
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n}B")
    } else if d < K * K {
        format!("{:.2}K", d / K)
    } else if d < K * K * K {
        format!("{:.2}M", d / (K * K))
    } else if d < K * K * K * K {
        format!("{:.2}G", d / (K * K * K))
    } else if d < K * K * K * K * K {
        format!("{:.2}T", d / (K * K * K * K))
    } else {
        format!("{:.2}P", d / (K * K * K * K * K))
    }
}

fn read_proc(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Resident set size in bytes (Linux /proc; 0 elsewhere).
fn rss_bytes() -> u64 {
    read_proc("/proc/self/statm")
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn total_system_memory() -> u64 {
    read_proc("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// (user, system) CPU seconds of this process, from /proc/self/stat (clock ticks of 1/100 s).
fn cpu_times() -> (f64, f64) {
    let stat = read_proc("/proc/self/stat");
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    (t(11), t(12))
}

fn os_name() -> String {
    let kind = read_proc("/proc/sys/kernel/ostype");
    let rel = read_proc("/proc/sys/kernel/osrelease");
    let kind = kind.trim();
    let kind = if kind.is_empty() {
        std::env::consts::OS
    } else {
        kind
    };
    format!("{} {} {}", kind, rel.trim(), std::env::consts::ARCH).replace("  ", " ")
}

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];

fn section_title(s: &str) -> &'static str {
    match s {
        "server" => "Server",
        "clients" => "Clients",
        "memory" => "Memory",
        "persistence" => "Persistence",
        "stats" => "Stats",
        "replication" => "Replication",
        "cpu" => "CPU",
        "modules" => "Modules",
        "commandstats" => "Commandstats",
        "errorstats" => "Errorstats",
        "latencystats" => "Latencystats",
        "cluster" => "Cluster",
        _ => "Keyspace",
    }
}

fn start_unix_secs(state: &ServerState) -> i64 {
    state.clock.now_ms() / 1000 - state.started.elapsed().as_secs() as i64
}

fn info_section(state: &ServerState, name: &str, out: &mut String) {
    let mut kv = |k: &str, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{k}:{v}\r\n");
    };
    let st = &state.stats;
    let cfg = state.config.read().clone();
    match name {
        "server" => {
            let now_us = state.clock.now_us();
            let up = state.started.elapsed().as_secs();
            let port = state.local_addr.get().map_or(cfg.port, |a| a.port());
            kv("redis_version", &crate::version::REDIS_VERSION);
            kv("redis_git_sha1", &"00000000");
            kv("redis_git_dirty", &0);
            kv("redis_build_id", &"0");
            kv("redis_mode", &"standalone");
            kv("os", &os_name());
            kv("arch_bits", &(usize::BITS));
            kv("monotonic_clock", &"POSIX clock_gettime");
            kv("multiplexing_api", &"epoll");
            kv("atomicvar_api", &"c11-builtin");
            kv("gcc_version", &"0.0.0");
            kv("process_id", &std::process::id());
            kv("process_supervised", &"no");
            kv("run_id", &state.run_id);
            kv("tcp_port", &port);
            kv("server_time_usec", &now_us);
            kv("uptime_in_seconds", &up);
            kv("uptime_in_days", &(up / 86400));
            kv("hz", &10);
            kv("configured_hz", &10);
            kv("lru_clock", &((now_us / 1_000_000) & ((1 << 24) - 1)));
            kv(
                "executable",
                &std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
            kv("config_file", &"");
            kv("io_threads_active", &0);
        }
        "clients" => {
            kv("connected_clients", &state.clients.lock().len());
            kv("cluster_connections", &0);
            kv("maxclients", &cfg.maxclients);
            kv("client_recent_max_input_buffer", &0);
            kv("client_recent_max_output_buffer", &0);
            kv("blocked_clients", &0);
            kv("tracking_clients", &0);
            kv("clients_in_timeout_table", &0);
        }
        "memory" => {
            let rss = rss_bytes();
            let total = total_system_memory();
            kv("used_memory", &rss);
            kv("used_memory_human", &human_bytes(rss));
            kv("used_memory_rss", &rss);
            kv("used_memory_rss_human", &human_bytes(rss));
            kv("used_memory_peak", &rss);
            kv("used_memory_peak_human", &human_bytes(rss));
            kv("used_memory_peak_perc", &"100.00%");
            kv("used_memory_overhead", &0);
            kv("used_memory_startup", &0);
            kv("used_memory_dataset", &rss);
            kv("used_memory_dataset_perc", &"100.00%");
            kv("total_system_memory", &total);
            kv("total_system_memory_human", &human_bytes(total));
            kv("used_memory_lua", &0);
            kv("used_memory_lua_human", &"0B");
            kv("used_memory_scripts", &0);
            kv("used_memory_scripts_human", &"0B");
            kv("maxmemory", &cfg.maxmemory);
            kv("maxmemory_human", &human_bytes(cfg.maxmemory));
            kv("maxmemory_policy", &cfg.maxmemory_policy);
            kv("mem_fragmentation_ratio", &"1.00");
            kv("mem_fragmentation_bytes", &0);
            kv("mem_not_counted_for_evict", &0);
            kv("mem_clients_slaves", &0);
            kv("mem_clients_normal", &0);
            kv("mem_aof_buffer", &0);
            kv("mem_allocator", &"libc");
            kv("active_defrag_running", &0);
            kv("lazyfree_pending_objects", &0);
            kv("lazyfreed_objects", &0);
        }
        "persistence" => {
            for k in [
                "loading",
                "async_loading",
                "current_cow_peak",
                "current_cow_size",
            ] {
                kv(k, &0);
            }
            kv("current_cow_size_age", &0);
            kv("current_fork_perc", &"0.00");
            kv("current_save_keys_processed", &0);
            kv("current_save_keys_total", &0);
            kv("rdb_changes_since_last_save", &0);
            kv("rdb_bgsave_in_progress", &0);
            kv("rdb_last_save_time", &start_unix_secs(state));
            kv("rdb_last_bgsave_status", &"ok");
            kv("rdb_last_bgsave_time_sec", &-1);
            kv("rdb_current_bgsave_time_sec", &-1);
            kv("rdb_saves", &0);
            kv("rdb_last_cow_size", &0);
            kv("rdb_last_load_keys_expired", &0);
            kv("rdb_last_load_keys_loaded", &0);
            kv("aof_enabled", &0);
            kv("aof_rewrite_in_progress", &0);
            kv("aof_rewrite_scheduled", &0);
            kv("aof_last_rewrite_time_sec", &-1);
            kv("aof_current_rewrite_time_sec", &-1);
            kv("aof_last_bgrewrite_status", &"ok");
            kv("aof_rewrites", &0);
            kv("aof_rewrites_consecutive_failures", &0);
            kv("aof_last_write_status", &"ok");
            kv("aof_last_cow_size", &0);
            kv("module_fork_in_progress", &0);
            kv("module_fork_last_cow_size", &0);
        }
        "stats" => {
            let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            kv("total_connections_received", &l(&st.total_connections));
            kv("total_commands_processed", &l(&st.total_commands));
            kv("instantaneous_ops_per_sec", &0);
            kv("total_net_input_bytes", &l(&st.net_input_bytes));
            kv("total_net_output_bytes", &l(&st.net_output_bytes));
            kv("total_net_repl_input_bytes", &0);
            kv("total_net_repl_output_bytes", &0);
            kv("instantaneous_input_kbps", &"0.00");
            kv("instantaneous_output_kbps", &"0.00");
            kv("instantaneous_input_repl_kbps", &"0.00");
            kv("instantaneous_output_repl_kbps", &"0.00");
            kv("rejected_connections", &l(&st.rejected_connections));
            kv("sync_full", &0);
            kv("sync_partial_ok", &0);
            kv("sync_partial_err", &0);
            kv("expired_keys", &l(&state.keyspace.expired_keys));
            kv("expired_stale_perc", &"0.00");
            kv("expired_time_cap_reached_count", &0);
            kv("expire_cycle_cpu_milliseconds", &0);
            kv("evicted_keys", &0);
            kv("evicted_clients", &0);
            kv("total_eviction_exceeded_time", &0);
            kv("current_eviction_exceeded_time", &0);
            kv("keyspace_hits", &l(&st.keyspace_hits));
            kv("keyspace_misses", &l(&st.keyspace_misses));
            kv(
                "pubsub_channels",
                &state
                    .pubsub
                    .channels(crate::pubsub::Kind::Channel, None)
                    .len(),
            );
            kv("pubsub_patterns", &state.pubsub.numpat());
            kv(
                "pubsubshard_channels",
                &state
                    .pubsub
                    .channels(crate::pubsub::Kind::Shard, None)
                    .len(),
            );
            kv("latest_fork_usec", &0);
            kv("total_forks", &0);
            kv("migrate_cached_sockets", &0);
            kv("slave_expires_tracked_keys", &0);
            kv("active_defrag_hits", &0);
            kv("active_defrag_misses", &0);
            kv("active_defrag_key_hits", &0);
            kv("active_defrag_key_misses", &0);
            kv("total_active_defrag_time", &0);
            kv("current_active_defrag_time", &0);
            kv("tracking_total_keys", &0);
            kv("tracking_total_items", &0);
            kv("tracking_total_prefixes", &0);
            kv("unexpected_error_replies", &0);
            kv("total_error_replies", &0);
            kv("dump_payload_sanitizations", &0);
            kv("total_reads_processed", &l(&st.total_commands));
            kv("total_writes_processed", &l(&st.total_commands));
            kv("io_threaded_reads_processed", &0);
            kv("io_threaded_writes_processed", &0);
        }
        "replication" => {
            kv("role", &"master");
            kv("connected_slaves", &0);
            kv("master_failover_state", &"no-failover");
            kv("master_replid", &state.run_id);
            kv(
                "master_replid2",
                &"0000000000000000000000000000000000000000",
            );
            kv("master_repl_offset", &0);
            kv("second_repl_offset", &-1);
            kv("repl_backlog_active", &0);
            kv("repl_backlog_size", &1048576);
            kv("repl_backlog_first_byte_offset", &0);
            kv("repl_backlog_histlen", &0);
        }
        "cpu" => {
            let (user, sys) = cpu_times();
            kv("used_cpu_sys", &format!("{sys:.6}"));
            kv("used_cpu_user", &format!("{user:.6}"));
            kv("used_cpu_sys_children", &"0.000000");
            kv("used_cpu_user_children", &"0.000000");
            kv("used_cpu_sys_main_thread", &format!("{sys:.6}"));
            kv("used_cpu_user_main_thread", &format!("{user:.6}"));
        }
        "cluster" => kv("cluster_enabled", &0),
        "keyspace" => {
            for i in 0..state.keyspace.databases() {
                let db = state.keyspace.db(i);
                let keys = db.len();
                if keys > 0 {
                    let _ = write!(
                        out,
                        "db{i}:keys={keys},expires={},avg_ttl={}\r\n",
                        db.volatile(),
                        avg_ttl(db, state.clock.now_ms())
                    );
                }
            }
        }
        _ => {}
    }
}

/// Average remaining TTL in ms of the volatile keys, estimated from a bounded sample of each
/// shard (Redis's figure is an estimate too).
fn avg_ttl(db: &crate::keyspace::Db, now: i64) -> i64 {
    let (mut sum, mut n) = (0i64, 0i64);
    for i in 0..crate::keyspace::SHARDS {
        let shard = db.lock_shard(i);
        if shard.volatile == 0 {
            continue;
        }
        for e in shard.map.values().take(256) {
            if e.expires_at != 0 && e.expires_at >= now {
                sum = sum.saturating_add(e.expires_at - now);
                n += 1;
            }
        }
    }
    if n == 0 {
        0
    } else {
        sum / n
    }
}

/// The INFO text for `sections` (already lowercase, in any order): sections in Redis's
/// order, a blank line between them.
pub fn info_text(state: &ServerState, requested: &[String]) -> String {
    let wanted: Vec<&str> = if requested.is_empty() {
        DEFAULT_SECTIONS.to_vec()
    } else if requested.iter().any(|s| s == "all" || s == "everything") {
        ALL_SECTIONS.to_vec()
    } else if requested.iter().any(|s| s == "default") {
        let mut v = DEFAULT_SECTIONS.to_vec();
        v.extend(
            ALL_SECTIONS
                .iter()
                .filter(|s| requested.iter().any(|r| r == *s)),
        );
        v
    } else {
        ALL_SECTIONS
            .iter()
            .copied()
            .filter(|s| requested.iter().any(|r| r == s))
            .collect()
    };
    let mut out = String::new();
    for s in ALL_SECTIONS.iter().filter(|s| wanted.contains(s)) {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let _ = write!(out, "# {}\r\n", section_title(s));
        info_section(state, s, &mut out);
    }
    out
}

fn info(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let requested: Vec<String> = a[1..]
        .iter()
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .collect();
    Ok(Reply::Verbatim(Bytes::from(info_text(
        ctx.state, &requested,
    ))))
}

// ---------------------------------------------------------------------------------------
// CONFIG

/// Redis's keyspaceEventsFlagsToString: the canonical form CONFIG GET shows.
fn notify_flags_to_string(f: u32) -> String {
    let mut s = String::new();
    if f & notify::ALL == notify::ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (notify::GENERIC, 'g'),
            (notify::STRING, '$'),
            (notify::LIST, 'l'),
            (notify::SET, 's'),
            (notify::HASH, 'h'),
            (notify::ZSET, 'z'),
            (notify::EXPIRED, 'x'),
            (notify::EVICTED, 'e'),
            (notify::STREAM, 't'),
            (notify::MODULE, 'd'),
            (notify::NEW, 'n'),
        ] {
            if f & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [
        (notify::KEYSPACE, 'K'),
        (notify::KEYEVENT, 'E'),
        (notify::KEY_MISS, 'm'),
    ] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// Redis's memtoull: digits with an optional unit (b, k, kb, m, mb, g, gb; any case).
fn parse_memory(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let (num, mul) = [
        ("gb", 1u64 << 30),
        ("mb", 1 << 20),
        ("kb", 1 << 10),
        ("g", 1_000_000_000),
        ("m", 1_000_000),
        ("k", 1000),
        ("b", 1),
    ]
    .iter()
    .find_map(|(u, m)| lower.strip_suffix(u).map(|n| (n.to_string(), *m)))
    .unwrap_or((lower.clone(), 1));
    if num.is_empty() || !num.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    num.parse::<u64>().ok()?.checked_mul(mul)
}

/// Names CONFIG GET/SET know, with aliases after their main names.
const CONFIG_NAMES: &[&str] = &[
    "bind",
    "port",
    "requirepass",
    "databases",
    "maxclients",
    "save",
    "appendonly",
    "appendfsync",
    "busy-reply-threshold",
    "lua-time-limit",
    "notify-keyspace-events",
    "client-output-buffer-limit",
    "proto-max-bulk-len",
    "timeout",
    "maxmemory",
    "maxmemory-policy",
    "hash-max-listpack-entries",
    "hash-max-ziplist-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-value",
];

fn config_value(state: &ServerState, cfg: &Config, name: &str) -> String {
    match name {
        "bind" => cfg.bind.clone(),
        "port" => state
            .local_addr
            .get()
            .map_or(cfg.port, |a| a.port())
            .to_string(),
        "requirepass" => cfg.requirepass.clone().unwrap_or_default(),
        "databases" => state.keyspace.databases().to_string(),
        "maxclients" => cfg.maxclients.to_string(),
        "save" => cfg.save.clone(),
        "appendonly" => cfg.appendonly.clone(),
        "appendfsync" => cfg.appendfsync.clone(),
        "busy-reply-threshold" | "lua-time-limit" => cfg.busy_reply_threshold_ms.to_string(),
        "notify-keyspace-events" => {
            notify_flags_to_string(notify::parse_flags(&cfg.notify_keyspace_events).unwrap_or(0))
        }
        "client-output-buffer-limit" => cfg.client_output_buffer_limit.clone(),
        "proto-max-bulk-len" => cfg.proto_max_bulk_len.to_string(),
        "timeout" => cfg.timeout.to_string(),
        "maxmemory" => cfg.maxmemory.to_string(),
        "maxmemory-policy" => cfg.maxmemory_policy.clone(),
        // The fixed limits of db::Hash.
        "hash-max-listpack-entries" | "hash-max-ziplist-entries" => {
            crate::types::hash::HASH_MAX_LISTPACK_ENTRIES.to_string()
        }
        _ => crate::types::hash::HASH_MAX_LISTPACK_VALUE.to_string(),
    }
}

fn config_get(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let cfg = ctx.state.config.read().clone();
    // (name as shown, config name): an exact name is echoed as the client spelled it.
    let mut seen: Vec<(Bytes, &str)> = Vec::new();
    for pat in &a[2..] {
        let lower = pat.to_ascii_lowercase();
        let is_glob = lower.iter().any(|c| matches!(c, b'*' | b'?' | b'['));
        for name in CONFIG_NAMES {
            let hit = if is_glob {
                crate::glob::glob_match(&lower, name.as_bytes(), true)
            } else {
                lower == name.as_bytes()
            };
            if hit && !seen.iter().any(|(_, n)| n == name) {
                let shown = if is_glob {
                    Bytes::from_static(name.as_bytes())
                } else {
                    pat.clone()
                };
                seen.push((shown, name));
            }
        }
    }
    Ok(Reply::Map(
        seen.into_iter()
            .map(|(shown, n)| {
                (
                    Reply::Bulk(shown),
                    Reply::bulk(config_value(ctx.state, &cfg, n)),
                )
            })
            .collect(),
    ))
}

fn set_failed(name: &str, why: &str) -> RedisError {
    error::err(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
    ))
}

fn int_in(v: &str, min: i64, max: i64) -> Result<i64, String> {
    let n = v
        .parse::<i64>()
        .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

fn one_of(v: &str, allowed: &[&str]) -> Result<String, String> {
    let l = v.to_ascii_lowercase();
    if allowed.contains(&l.as_str()) {
        Ok(l)
    } else {
        Err(format!(
            "argument(s) must be one of the following: {}",
            allowed.join(", ")
        ))
    }
}

/// Redis's client-output-buffer-limit parser: groups of `class hard soft seconds`; classes
/// not named keep their limits.
fn parse_output_limits(current: &str, v: &str) -> Result<String, String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut classes: Vec<(String, [u64; 3])> = ["normal", "slave", "pubsub"]
        .iter()
        .map(|c| {
            let cfg = Config {
                client_output_buffer_limit: current.to_string(),
                ..Config::default()
            };
            let (h, s, t) = cfg.output_buffer_limit(c);
            (c.to_string(), [h, s, t])
        })
        .collect();
    for g in words.chunks_exact(4) {
        let class = match g[0].to_ascii_lowercase().as_str() {
            "normal" => 0,
            "slave" | "replica" => 1,
            "pubsub" => 2,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let hard = parse_memory(g[1]);
        let soft = parse_memory(g[2]);
        let secs = g[3].parse::<i64>().ok().filter(|s| *s >= 0);
        match (hard, soft, secs) {
            (Some(h), Some(s), Some(t)) => classes[class].1 = [h, s, t as u64],
            _ => {
                return Err(
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                        .into(),
                )
            }
        }
    }
    Ok(classes
        .iter()
        .map(|(c, [h, s, t])| format!("{c} {h} {s} {t}"))
        .collect::<Vec<_>>()
        .join(" "))
}

/// Apply one CONFIG SET pair to `cfg`; Err(reason) in Redis's words.
fn apply(state: &ServerState, cfg: &mut Config, name: &str, v: &str) -> Result<(), String> {
    match name {
        "requirepass" => {
            cfg.requirepass = if v.is_empty() {
                None
            } else {
                Some(v.to_string())
            }
        }
        "maxclients" => cfg.maxclients = int_in(v, 1, u32::MAX as i64)? as usize,
        "save" => {
            let parts: Vec<&str> = v.split_whitespace().collect();
            if !parts.len().is_multiple_of(2) || parts.iter().any(|p| p.parse::<u64>().is_err()) {
                return Err("Invalid save parameters".into());
            }
            cfg.save = parts.join(" ");
        }
        "appendonly" => {
            cfg.appendonly = one_of(v, &["yes", "no"])
                .map_err(|_| "argument must be 'yes' or 'no'".to_string())?
        }
        "appendfsync" => cfg.appendfsync = one_of(v, &["everysec", "always", "no"])?,
        "busy-reply-threshold" | "lua-time-limit" => {
            cfg.busy_reply_threshold_ms = int_in(v, 0, i64::MAX)? as u64
        }
        "notify-keyspace-events" => {
            let f = notify::parse_flags(v).ok_or_else(|| {
                "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".to_string()
            })?;
            cfg.notify_keyspace_events = notify_flags_to_string(f);
        }
        "client-output-buffer-limit" => {
            cfg.client_output_buffer_limit =
                parse_output_limits(&cfg.client_output_buffer_limit, v)?
        }
        "proto-max-bulk-len" => {
            let n = parse_memory(v).ok_or("argument must be a memory value")?;
            if !(1 << 20..=i64::MAX as u64).contains(&n) {
                return Err(format!(
                    "argument must be between 1048576 and {} inclusive",
                    i64::MAX
                ));
            }
            cfg.proto_max_bulk_len = n;
        }
        "timeout" => cfg.timeout = int_in(v, 0, i32::MAX as i64)? as u64,
        "maxmemory" => cfg.maxmemory = parse_memory(v).ok_or("argument must be a memory value")?,
        "maxmemory-policy" => {
            cfg.maxmemory_policy = one_of(
                v,
                &[
                    "volatile-lru",
                    "volatile-lfu",
                    "volatile-random",
                    "volatile-ttl",
                    "allkeys-lru",
                    "allkeys-lfu",
                    "allkeys-random",
                    "noeviction",
                ],
            )?
        }
        "port" => {
            let p = int_in(v, 0, 65535)?;
            let cur = state.local_addr.get().map_or(cfg.port, |a| a.port());
            if p as u16 != cur {
                return Err("Unable to listen on this port".into());
            }
        }
        "bind" => {
            if v != cfg.bind {
                return Err("Failed to bind to specified addresses.".into());
            }
        }
        // hash-max-listpack-*: the limits are fixed in resplock; accepted and ignored.
        _ => {
            int_in(v, 0, i64::MAX)?;
        }
    }
    Ok(())
}

/// The main name of a config alias.
fn canon(n: &str) -> &str {
    match n {
        "lua-time-limit" => "busy-reply-threshold",
        "hash-max-ziplist-entries" => "hash-max-listpack-entries",
        "hash-max-ziplist-value" => "hash-max-listpack-value",
        n => n,
    }
}

fn config_set(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() % 2 == 1 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let pairs: Vec<(String, String)> = a[2..]
        .chunks_exact(2)
        .map(|p| {
            (
                String::from_utf8_lossy(&p[0]).to_ascii_lowercase(),
                String::from_utf8_lossy(&p[1]).into_owned(),
            )
        })
        .collect();
    for (i, (name, _)) in pairs.iter().enumerate() {
        if !CONFIG_NAMES.contains(&name.as_str()) {
            return Err(error::err(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        }
        if name == "databases" {
            return Err(set_failed(name, "can't set immutable config"));
        }
        if pairs[..i].iter().any(|(n, _)| canon(n) == canon(name)) {
            return Err(set_failed(name, "duplicate parameter"));
        }
    }
    // All or nothing, as Redis: apply to a copy, then publish it.
    let mut cfg = ctx.state.config.read().clone();
    for (name, v) in &pairs {
        apply(ctx.state, &mut cfg, name, v).map_err(|why| set_failed(name, &why))?;
    }
    *ctx.state.config.write() = cfg;
    ctx.state.config_changed();
    Ok(Reply::ok())
}

fn config_resetstat(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let st = &ctx.state.stats;
    for c in [
        &st.total_connections,
        &st.total_commands,
        &st.rejected_connections,
        &st.net_input_bytes,
        &st.net_output_bytes,
        &st.keyspace_hits,
        &st.keyspace_misses,
        &ctx.state.keyspace.expired_keys,
    ] {
        c.store(0, Ordering::Relaxed);
    }
    Ok(Reply::ok())
}

fn config_rewrite(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::NO_CONFIG_FILE))
}

const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
];

fn config_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(CONFIG_HELP))
}

// ---------------------------------------------------------------------------------------
// TIME, WAIT, SHUTDOWN, LASTSAVE

fn time(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let us = ctx.state.clock.now_us();
    Ok(Reply::Array(vec![
        Reply::bulk((us / 1_000_000).to_string()),
        Reply::bulk((us % 1_000_000).to_string()),
    ]))
}

/// WAIT: there are never replicas, so it answers 0 at once.
fn wait(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    args::int(&a[1])?;
    let t = args::parse_i64(&a[2])
        .ok_or_else(|| error::err("ERR timeout is not an integer or out of range"))?;
    if t < 0 {
        return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
    }
    Ok(Reply::Int(0))
}

/// SHUTDOWN: stop the server; the caller's connection closes without a reply, as in Redis.
fn shutdown(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (mut save, mut nosave, mut abort, mut other) = (false, false, false, false);
    for o in &a[1..] {
        if is(o, "nosave") {
            nosave = true;
        } else if is(o, "save") {
            save = true;
        } else if is(o, "now") || is(o, "force") {
            other = true;
        } else if is(o, "abort") {
            abort = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if (abort && (save || nosave || other)) || (save && nosave) {
        return Err(RedisError::new(error::SYNTAX));
    }
    if abort {
        return Err(error::err("ERR No shutdown in progress."));
    }
    ctx.state.shutdown.cancel();
    ctx.client.close_after_reply = true;
    Ok(Reply::NoReply)
}

fn lastsave(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(start_unix_secs(ctx.state)))
}
