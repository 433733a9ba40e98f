//! CONFIG GET, SET, RESETSTAT, REWRITE and HELP over the server's configuration.

use super::connection_cmds::help_reply;
use super::flags::*;
use super::{container, notify, Command, Ctx};
use crate::cmd::ServerState;
use crate::config::Config;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Command] = &[Command::new("config", -2, 0, container)
    .subs(CONFIG_SUBS)
    .doc(
        "server",
        "2.0.0",
        "A container for server configuration commands",
    )];

const SERVER_ADMIN: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

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
