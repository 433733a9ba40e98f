//! Where a request runs in a cluster: Redis's getNodeByQuery (every key of the command, or
//! of every command a transaction queued, must be in one slot; that slot's master serves
//! it, a replica serves its master's reads to READONLY clients, a slot being migrated or
//! imported answers ASK or TRYAGAIN) and clusterRedirectClient's errors.

use crate::cluster::{key_slot, NodeIx, Topology};
use crate::cmd::base::flags;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::cluster::keys::{self, Rule};
use crate::cmd::runtime::cluster::registry::{client_flags, ClusterNode};
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use bytes::Bytes;
use std::sync::OnceLock;

/// Why a request is not served here (Redis's CLUSTER_REDIR_* codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// `-MOVED`: that master serves the slot.
    Moved(NodeIx),
    /// `-ASK`: the slot is being migrated there and the keys are not here.
    Ask(NodeIx),
    /// `-CROSSSLOT`.
    CrossSlot,
    /// `-TRYAGAIN`: several keys of a slot in migration, only some here.
    TryAgain,
    /// `-CLUSTERDOWN The cluster is down`.
    Down,
    /// `-CLUSTERDOWN ... only accepts read commands`.
    DownReadOnly,
    /// `-CLUSTERDOWN Hash slot not served`.
    Unbound,
}

/// The error a client gets for `r` on `slot`, addresses from `view`.
pub fn error(view: &Topology, r: Redirect, slot: u16) -> RedisError {
    match r {
        Redirect::Moved(n) | Redirect::Ask(n) => {
            let node = &view.nodes[n];
            error::redirect(matches!(r, Redirect::Ask(_)), slot, &node.ip, node.port)
        }
        Redirect::CrossSlot => RedisError::new(error::CROSSSLOT),
        Redirect::TryAgain => RedisError::new(error::TRYAGAIN),
        Redirect::Down => RedisError::new(error::CLUSTERDOWN),
        Redirect::DownReadOnly => RedisError::new(error::CLUSTERDOWN_RO),
        Redirect::Unbound => RedisError::new(error::CLUSTERDOWN_UNBOUND),
    }
}

/// The routing rule of every row of the process's command table, by row number (computed
/// once, for the first table a cluster node serves: the process has one).
fn rules(state: &ServerState) -> Option<&'static [Rule]> {
    static RULES: OnceLock<(usize, Vec<Rule>)> = OnceLock::new();
    let table = state.commands as *const _ as usize;
    let (of, rules) = RULES.get_or_init(|| {
        let rules = state
            .commands
            .every_row()
            .iter()
            .map(|(c, _)| keys::rule(c))
            .collect();
        (table, rules)
    });
    (*of == table).then_some(rules.as_slice())
}

/// The routing rule of `cmd`.
pub fn rule_of(state: &ServerState, cmd: &Command) -> Rule {
    match (state.commands.row_number(cmd), rules(state)) {
        (Some(i), Some(rules)) => rules[i],
        _ => keys::rule(cmd),
    }
}

/// Whether the node's view says the cluster is up (cluster_state:ok).
pub fn cluster_ok(state: &ServerState, view: &Topology) -> bool {
    view.has_quorum && (view.is_covered || !config_yes(state, "cluster-require-full-coverage"))
}

/// A yes/no cluster parameter (read only when the cluster is down).
fn config_yes(state: &ServerState, name: &str) -> bool {
    state.config.read().get(name).as_deref() == Some("yes")
}

/// A key of database 0 that is here and not expired (lookupKeyReadWithFlags with
/// NOTOUCH, NOSTATS, NONOTIFY, NOEXPIRE).
fn present(state: &ServerState, key: &[u8]) -> bool {
    let now = state.clock.now_ms();
    let shard = state.keyspace.db(0).lock(key);
    shard.map.get(key).is_some_and(|e| !e.is_expired(now))
}

/// One command of a request: the row, its container, its arguments.
pub type Part<'a> = (&'static Command, Option<&'static Command>, &'a [Bytes]);

/// getNodeByQuery for `parts` (one command, or a transaction's queued commands for EXEC)
/// sent by a client with `cflags` ([`client_flags`]); `is_exec`: the request is EXEC.
/// Ok(slot): served here (the slot of its keys, None without keys); Err: the redirection
/// and its slot.
pub fn node_by_query(
    state: &ServerState,
    node: &ClusterNode,
    view: &Topology,
    cflags: u8,
    parts: &[Part],
    is_exec: bool,
) -> Result<Option<u16>, (Redirect, u16)> {
    let me = node.me;
    let Some(&(cmd, parent, _)) = parts.first() else {
        return Ok(None);
    };
    let pubsubshard = !is_exec
        && parent.is_none()
        && matches!(cmd.name, "ssubscribe" | "sunsubscribe" | "spublish");
    let mine = &view.nodes[me];
    let mut first: Option<&Bytes> = None;
    let (mut slot, mut owner) = (0u16, None);
    let (mut migrating, mut importing, mut multiple) = (false, false, false);
    let (mut missing, mut existing) = (0usize, 0usize);
    for &(c, _, args) in parts {
        let rule = rule_of(state, c);
        for pos in keys::positions(rule, c, args) {
            let Some(key) = args.get(pos) else { continue };
            let this = key_slot(key);
            match first {
                None => {
                    first = Some(key);
                    slot = this;
                    owner = view.owner(this);
                    let Some(o) = owner else {
                        return Err((Redirect::Unbound, this));
                    };
                    if o == me && mine.migrating.contains_key(&this) {
                        migrating = true;
                    } else if mine.importing.contains_key(&this) {
                        importing = true;
                    }
                }
                Some(f) if f != key => {
                    if this != slot {
                        return Err((Redirect::CrossSlot, slot));
                    }
                    multiple = true;
                }
                Some(_) => {}
            }
            if (migrating || importing) && !pubsubshard {
                if present(state, key) {
                    existing += 1;
                } else {
                    missing += 1;
                }
            }
        }
    }
    let Some(owner) = owner else {
        return Ok(None);
    };
    let is_write = parts.iter().any(|(c, _, _)| c.has(flags::WRITE));
    if !cluster_ok(state, view) {
        if pubsubshard {
            if !config_yes(state, "cluster-allow-pubsubshard-when-down") {
                return Err((Redirect::Down, slot));
            }
        } else if !config_yes(state, "cluster-allow-reads-when-down") {
            return Err((Redirect::Down, slot));
        } else if is_write {
            return Err((Redirect::DownReadOnly, slot));
        }
    }
    if (migrating || importing) && !is_exec && parent.is_none() && cmd.name == "migrate" {
        return Ok(Some(slot));
    }
    if migrating && missing > 0 {
        if existing > 0 {
            return Err((Redirect::TryAgain, slot));
        }
        return Err((Redirect::Ask(mine.migrating[&slot]), slot));
    }
    let asking_cmd = !is_exec
        && crate::cmd::base::meta::get(&crate::cmd::runtime::table::fullname(parent, cmd))
            .is_some_and(|m| m.flags.contains(&"asking"));
    if importing && (cflags & client_flags::ASKING != 0 || asking_cmd) {
        if multiple && missing > 0 {
            return Err((Redirect::TryAgain, slot));
        }
        return Ok(Some(slot));
    }
    if (cflags & client_flags::READONLY != 0 || pubsubshard)
        && !is_write
        && mine.master == Some(owner)
    {
        return Ok(Some(slot));
    }
    if owner != me {
        return Err((Redirect::Moved(owner), slot));
    }
    Ok(Some(slot))
}

/// The commands of a request as [`node_by_query`] reads them: EXEC's queued commands, or the
/// command itself. None for EXEC outside MULTI (it fails by itself).
pub fn parts<'a>(
    state: &ServerState,
    client: &'a Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &'a [Bytes],
    is_exec: bool,
) -> Option<Vec<Part<'a>>> {
    if !is_exec {
        return Some(vec![(cmd, parent, args)]);
    }
    let m = client.multi.as_ref()?;
    let rows = state.commands.every_row();
    Some(
        m.queued
            .iter()
            .map(|q| {
                let (c, p) = rows[q.row];
                (c, p, &q.args[..])
            })
            .collect(),
    )
}
