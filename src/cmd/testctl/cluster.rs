//! Test controls of an in-process cluster, for the embedding API (`server/cluster.rs`) and
//! the `RESPLOCK.CLUSTER` commands ([`wire`]): move slots with their keys in one call, fail
//! a master (its replica takes over, as after cluster-node-timeout), cut a node off from
//! the others and from its clients, bring it back. Each holds the cluster's operation lock
//! and no server lock across an await.
//!
//! ```text
//! RESPLOCK.CLUSTER MIGRATE <slot>|<first>-<last> <node>   -> keys moved
//! RESPLOCK.CLUSTER MOVEKEYS <node> <key> [<key> ...]       -> OK | NOKEY (MIGRATE ... KEYS)
//! RESPLOCK.CLUSTER FAIL <node>                             -> id of the master now serving
//! RESPLOCK.CLUSTER PARTITION <node> [KEEP-CLIENTS]
//! RESPLOCK.CLUSTER HEAL <node> | ALL
//!    <node>: a node id or ip:port
//! ```

use crate::cluster::{NodeIx, SLOTS};
use crate::cmd::base::args::is;
use crate::cmd::runtime::cluster::follow;
use crate::cmd::runtime::cluster::ops::{self, Takeover};
use crate::cmd::runtime::cluster::registry::{ClusterNode, Shared};
use crate::cmd::runtime::listeners::Change;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How long cutting a master off waits for its replicas to have what it acknowledged.
const DRAIN: Duration = Duration::from_secs(2);

/// Why a control could not run.
pub type Refusal = RedisError;

/// Move `slots` (with their keys) to master `to`, as `redis-cli --cluster reshard` does it:
/// each source marks them MIGRATING and `to` IMPORTING, the keys move, then `to` serves
/// them with a new epoch. Returns how many keys moved.
pub async fn migrate(shared: &Arc<Shared>, slots: &[u16], to: NodeIx) -> Result<usize, Refusal> {
    let _ops = shared.ops.lock().await;
    let m = &shared.membership;
    let truth = m.truth();
    if truth.nodes[to].master.is_some() {
        return Err(error::err("ERR the target node is not a master"));
    }
    if m.is_partitioned(to) {
        return Err(error::err("ERR the target node is partitioned"));
    }
    let mut by_source: std::collections::BTreeMap<NodeIx, Vec<u16>> = Default::default();
    for &s in slots {
        match truth.owner(s) {
            Some(o) if o != to => by_source.entry(o).or_default().push(s),
            _ => {}
        }
    }
    let mut moved = 0;
    for (from, group) in &by_source {
        m.update(to, |t| {
            for &s in group {
                t.nodes[to].importing.insert(s, *from);
                t.nodes[*from].migrating.insert(s, to);
            }
        });
        moved += ops::move_keys(shared, group, *from, to).await;
        // SETSLOT NODE on the target, which imported them: a new epoch without consensus,
        // with which every connected node (the source too) learns the new owner.
        m.update(to, |t| {
            for &s in group {
                t.assign(s, Some(to));
                t.nodes[to].importing.remove(&s);
                t.nodes[*from].migrating.remove(&s);
            }
            t.bump_epoch(to);
        });
    }
    // Slots no master claimed (or that the target's table did not have): claimed with a
    // new epoch too, as ADDSLOTS then BUMPEPOCH.
    m.update(to, |t| {
        let mut claimed = false;
        for &s in slots {
            if t.owner(s) != Some(to) {
                t.assign(s, Some(to));
                claimed = true;
            }
        }
        if claimed {
            t.bump_epoch(to);
        }
    });
    ops::redirect_blocked(shared).await;
    Ok(moved)
}

/// Move `keys` from node `from` to node `to` (MIGRATE ... KEYS, in process): true if any
/// was there.
pub async fn move_keys(shared: &Arc<Shared>, from: NodeIx, to: NodeIx, keys: &[Bytes]) -> bool {
    let _ops = shared.ops.lock().await;
    let wanted: std::collections::HashSet<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    ops::move_matching(shared, from, to, |k| wanted.contains(k)).await > 0
}

/// Cut `node` off from the other nodes (they flag it `fail`, it sees them `fail?` and its
/// cluster down) and, with `clients`, from its clients (connections closed, new ones
/// refused). Replication to and from it stops; its replicas first get what it acknowledged.
/// A master's first replica still connected takes over, as the majority side of a real
/// cluster elects it after cluster-node-timeout; with none, its slots stay down.
pub async fn partition(shared: &Arc<Shared>, node: NodeIx, clients: bool) -> Result<(), Refusal> {
    let _ops = shared.ops.lock().await;
    let candidates = successors(shared, node);
    cut(shared, node, clients).await?;
    for r in candidates {
        if ops::failover(shared, r, Takeover::Force).await {
            break;
        }
    }
    Ok(())
}

/// The replicas of master `node` that could take over from it (none for a replica).
fn successors(shared: &Shared, node: NodeIx) -> Vec<NodeIx> {
    let truth = shared.membership.truth();
    if truth.nodes[node].master.is_some() {
        return Vec::new();
    }
    truth
        .replicas_of(node)
        .into_iter()
        .filter(|&r| !shared.membership.is_partitioned(r))
        .collect()
}

async fn cut(shared: &Arc<Shared>, node: NodeIx, clients: bool) -> Result<(), Refusal> {
    let state = shared
        .server(node)
        .ok_or_else(|| error::err("ERR the node is not running"))?;
    let cnode = state.cluster.clone().expect("a cluster node");
    if clients {
        cnode.cut_from_clients.store(true, Ordering::Release);
        state.faults.refuse_connections(true);
        // Its port refuses connections, as a dead or unreachable node's does (ECONNREFUSED):
        // a client that got a connection accepted and closed at once (node-redis) kept
        // retrying the node instead of refreshing its slot map.
        if let Some(l) = state.listeners.get() {
            l.close_all();
        }
        super::faults::disconnect(&state, |_| true);
    }
    // What it acknowledged reaches its replicas before the link goes (loopback is fast).
    let offset = cnode.feed.offset.load(Ordering::Acquire);
    for r in shared.membership.truth().replicas_of(node) {
        if let Some(rs) = shared.server(r) {
            follow::caught_up(&rs, offset, DRAIN).await;
        }
    }
    let now = state.clock.now_ms();
    if !shared.membership.partition(node, now) {
        return Ok(());
    }
    let following = *cnode.follow.master.read();
    follow::stop(&state);
    *cnode.follow.master.write() = following;
    cnode.feed.subscribers.lock().clear();
    cnode.feed.active.store(false, Ordering::Release);
    ops::reconcile(shared, &[]).await;
    Ok(())
}

/// Fail master `node` as after cluster-node-timeout: it is cut off (from clients too) and
/// its first replica that has its data takes over. Returns the node now serving its slots.
pub async fn fail_master(shared: &Arc<Shared>, node: NodeIx) -> Result<NodeIx, Refusal> {
    let _ops = shared.ops.lock().await;
    if shared.membership.truth().nodes[node].master.is_some() {
        return Err(error::err("ERR the node is not a master"));
    }
    let candidates = successors(shared, node);
    cut(shared, node, true).await?;
    for r in candidates {
        if ops::failover(shared, r, Takeover::Force).await {
            return Ok(r);
        }
    }
    Err(error::err(
        "ERR no replica could take over: the cluster is down",
    ))
}

/// Bring `node` back: it takes the cluster's configuration again (a master that was
/// replaced comes back as a replica of its successor, with a fresh copy of its data), and
/// its clients may connect again.
pub async fn heal(shared: &Arc<Shared>, node: NodeIx) -> Result<(), Refusal> {
    let _ops = shared.ops.lock().await;
    let state = shared
        .server(node)
        .ok_or_else(|| error::err("ERR the node is not running"))?;
    let cnode = state.cluster.clone().expect("a cluster node");
    let now = state.clock.now_ms();
    let was = shared.membership.heal(node, now);
    if cnode.cut_from_clients.swap(false, Ordering::AcqRel) {
        // Listen again on the port it had (the configuration may say 0: a free port).
        let mut config = state.config.read().clone();
        if config.port == 0 {
            config.port = shared.membership.truth().nodes[node].port;
        }
        if let Some(l) = state.listeners.get() {
            if l.relisten(Change::Bind, &config).is_err() {
                crate::log::warning(&format!(
                    "Could not listen again on port {} after the partition healed",
                    config.port
                ));
            }
        }
        state.faults.refuse_connections(false);
    }
    if was {
        ops::reconcile(shared, &[node]).await;
    }
    Ok(())
}

/// Every node, by index, that is partitioned.
pub fn partitioned(shared: &Shared) -> Vec<NodeIx> {
    (0..shared.membership.len())
        .filter(|&i| shared.membership.is_partitioned(i))
        .collect()
}

/// A node named by id or `ip:port`.
pub fn find_node(shared: &Shared, name: &[u8]) -> Option<NodeIx> {
    let t = shared.membership.truth();
    if let Some(n) = t.find(name) {
        return Some(n);
    }
    let s = std::str::from_utf8(name).ok()?;
    let (ip, port) = s.rsplit_once(':')?;
    t.find_addr(ip, port.parse().ok()?)
}

/// `first-last` or one slot.
fn slot_range(arg: &[u8]) -> Option<Vec<u16>> {
    let s = std::str::from_utf8(arg).ok()?;
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.parse::<u16>().ok()?, b.parse::<u16>().ok()?),
        None => {
            let a = s.parse::<u16>().ok()?;
            (a, a)
        }
    };
    (a <= b && (b as usize) < SLOTS).then(|| (a..=b).collect())
}

/// A `RESPLOCK.CLUSTER` subcommand sent to `node` (see the module documentation).
pub async fn wire(node: &ClusterNode, cmd: &Command, args: &[Bytes]) -> Reply {
    let shared = node.shared.clone();
    let named = |i: usize| -> Result<NodeIx, RedisError> {
        let a = args
            .get(i)
            .ok_or_else(|| error::wrong_arity(&format!("resplock.cluster|{}", cmd.name)))?;
        find_node(&shared, a)
            .ok_or_else(|| error::err(format!("ERR Unknown node {}", String::from_utf8_lossy(a))))
    };
    let r: Result<Reply, RedisError> = async {
        match cmd.name {
            "migrate" => {
                let slots = slot_range(&args[2]).ok_or(RedisError::new(error::INVALID_SLOT))?;
                let to = named(3)?;
                Ok(Reply::Int(migrate(&shared, &slots, to).await? as i64))
            }
            "movekeys" => {
                let to = named(2)?;
                let moved = move_keys(&shared, node.me, to, &args[3..]).await;
                Ok(Reply::simple(if moved { "OK" } else { "NOKEY" }))
            }
            "fail" => {
                let n = named(2)?;
                let by = fail_master(&shared, n).await?;
                Ok(Reply::bulk_str(&shared.membership.truth().nodes[by].id))
            }
            "partition" => {
                let n = named(2)?;
                let clients = match args.get(3) {
                    None => true,
                    Some(o) if is(o, "keep-clients") => false,
                    Some(_) => return Err(RedisError::new(error::SYNTAX)),
                };
                partition(&shared, n, clients).await?;
                Ok(Reply::ok())
            }
            "heal" => {
                let targets = if is(&args[2], "all") {
                    partitioned(&shared)
                } else {
                    vec![named(2)?]
                };
                for n in targets {
                    heal(&shared, n).await?;
                }
                Ok(Reply::ok())
            }
            _ => Err(error::unknown_subcommand(
                cmd.name.as_bytes(),
                "resplock.cluster",
            )),
        }
    }
    .await;
    r.unwrap_or_else(Reply::error)
}
