//! CONFIG GET, SET, RESETSTAT, REWRITE and HELP over the server's configuration.

use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::listeners::Change;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Row] = &[Row::new("config", container).subs(CONFIG_SUBS)];

const CONFIG_SUBS: &[Row] = &[
    Row::new("get", config_get),
    Row::new("set", config_set),
    Row::new("resetstat", config_resetstat),
    Row::new("rewrite", config_rewrite),
    Row::new("help", config_help),
];

fn config_get(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let patterns: Vec<&[u8]> = a[2..].iter().map(|p| &p[..]).collect();
    let pairs = ctx.state.config.read().get_matching(&patterns);
    // `port 0` picks a free port: CONFIG GET shows the one bound, as clients expect.
    let bound = ctx.state.local_addr.read().map(|a| a.port());
    Ok(Reply::Map(
        pairs
            .into_iter()
            .map(|(name, value)| {
                let value = match bound {
                    Some(p) if name.eq_ignore_ascii_case("port") => p.to_string(),
                    _ => value,
                };
                (
                    Reply::Bulk(Bytes::from(name)),
                    Reply::Bulk(Bytes::from(value)),
                )
            })
            .collect(),
    ))
}

fn config_set(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() % 2 == 1 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let pairs: Vec<(&[u8], &[u8])> = a[2..]
        .chunks_exact(2)
        .map(|p| (&p[0][..], &p[1][..]))
        .collect();
    let old = ctx.state.config.read().clone();
    let mut cfg = old.clone();
    let changed = cfg
        .set_many_while(
            &pairs,
            ctx.client.info.is_local(),
            ctx.state
                .persist
                .loading
                .load(std::sync::atomic::Ordering::Relaxed),
        )
        .map_err(error::err)?;
    // What resplock cannot apply at runtime fails as Redis's apply functions fail, and the
    // configuration stays as it was.
    for name in &changed {
        let why = match *name {
            "dir" => cfg
                .dir
                .as_ref()
                .and_then(|d| std::env::set_current_dir(d).err())
                .map(|_| "No such file or directory"),
            _ => None,
        };
        if let Some(why) = why {
            return Err(error::err(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
            )));
        }
    }
    let before = ctx.state.config.read().clone();
    // Then the listeners move, as Redis's apply functions run after every value is set; if one
    // cannot, those already moved go back to the old configuration and nothing changes.
    let mut moved: Vec<Change> = Vec::new();
    for name in &changed {
        let (change, why) = match *name {
            "port" => (
                Change::Port,
                "Unable to listen on this port. Check server logs.",
            ),
            "tls-port" => (
                Change::TlsPort,
                "Unable to listen on this port. Check server logs.",
            ),
            "bind" => (Change::Bind, "Failed to bind to specified addresses."),
            _ => continue,
        };
        let done = match ctx.state.listeners.get() {
            Some(l) => l.relisten(change, &cfg),
            None => Err(crate::cmd::runtime::listeners::CannotListen),
        };
        if done.is_err() {
            if let Some(l) = ctx.state.listeners.get() {
                let _ = l.relisten(change, &old);
                for c in moved.iter().rev() {
                    let _ = l.relisten(*c, &old);
                }
            }
            return Err(error::err(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
            )));
        }
        moved.push(change);
    }
    *ctx.state.config.write() = cfg;
    ctx.state.config_changed();
    // Persistence applies its settings (updateAppendonly and friends); a failure puts the
    // configuration back, as Redis's apply functions do.
    if let Err((name, why)) =
        crate::cmd::runtime::persist::config_changed(ctx.state, &changed, ctx.in_exec)
    {
        *ctx.state.config.write() = before;
        ctx.state.config_changed();
        return Err(error::err(format!(
            "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
        )));
    }
    // updateOOMScoreAdj, for either of its parameters.
    if let Some(name) = changed
        .iter()
        .find(|n| matches!(**n, "oom-score-adj" | "oom-score-adj-values"))
    {
        if let Err(why) = crate::cmd::runtime::oom::apply(&ctx.state.config.read()) {
            crate::log::warning(&why);
            *ctx.state.config.write() = before;
            ctx.state.config_changed();
            let _ = crate::cmd::runtime::oom::apply(&ctx.state.config.read());
            return Err(error::err(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - Failed to set current oom_score_adj. Check server logs."
            )));
        }
    }
    // applyClientMaxMemoryUsage: every client counted against the new limit, and evicted
    // at once if over it.
    if changed
        .iter()
        .any(|n| matches!(*n, "maxmemory-clients" | "maxmemory"))
    {
        crate::cmd::runtime::clients::evict_clients(ctx.state, true);
    }
    if changed.contains(&"maxmemory") {
        crate::cmd::runtime::evict::maxmemory_set(ctx.state);
    }
    // updateProcTitleTemplate.
    if changed.contains(&"proc-title-template") {
        crate::cmd::runtime::proc_title::refresh(ctx.state);
    }
    Ok(Reply::ok())
}

fn config_resetstat(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let st = &ctx.state.stats;
    for c in [
        &st.total_connections,
        &st.rejected_connections,
        &st.net_input_bytes,
        &st.net_output_bytes,
        &st.reads_processed,
        &st.writes_processed,
        &st.sync_full,
        &st.sync_partial_ok,
        &st.sync_partial_err,
        &ctx.state.keyspace.expired_keys,
        &ctx.state.client_limits.evicted,
        &ctx.state.eviction.evicted_keys,
    ] {
        c.store(0, Ordering::Relaxed);
    }
    for c in [&st.total_commands, &st.keyspace_hits, &st.keyspace_misses] {
        c.reset();
    }
    ctx.state.observe.reset_stats();
    ctx.state.lazyfree.reset_stats();
    Ok(Reply::ok())
}

fn config_rewrite(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    rewrite_config(ctx, false).map_err(error::err)?;
    Ok(Reply::ok())
}

/// CONFIG REWRITE, or with `force_all` DEBUG CONFIG-REWRITE-FORCE-ALL: the config file
/// rewritten with the live ACL users (rewriteConfigUserOption), unless an aclfile keeps them.
pub(crate) fn rewrite_config(ctx: &Ctx, force_all: bool) -> Result<(), String> {
    let cfg = ctx.state.config.read().clone();
    // rewriteConfigUserOption: the live users, unless an aclfile keeps them.
    let users: Vec<String> = if cfg.aclfile.is_some() {
        Vec::new()
    } else {
        let users = ctx.state.acl.users.read();
        users
            .iter()
            .map(|(n, u)| format!("user {n} {}", u.describe()))
            .collect()
    };
    if force_all {
        cfg.rewrite_all_with_users(Some(&users))
    } else {
        cfg.rewrite_with_users(Some(&users))
    }
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
