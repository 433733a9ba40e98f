//! What the command path calls on a cluster node: [`call_in_cluster`] around every
//! command, the checks of a script's `redis.call`s ([`script_call_refused`]), and PUBLISH to
//! the other nodes ([`publish_to_others`]).

use crate::cluster::{key_slot, Topology};
use crate::cmd::base::flags;
use crate::cmd::runtime::cluster::registry::{client_flags, ClusterNode};
use crate::cmd::runtime::cluster::route::Redirect;
use crate::cmd::runtime::cluster::{feed, keys, route};
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;

/// [`crate::cmd::runtime::call::call`] on a cluster node: a client's own command checked
/// against a view that changed since the request path routed it (a failover or migration
/// happened while it waited for the lock) is routed again, so a write never lands on a
/// node that stopped serving its slot; FUNCTION changes go to the replicas as they are, and
/// the effects of a top-level command are sent to them when it ends.
pub fn call_in_cluster(
    ctx: &mut Ctx,
    node: &ClusterNode,
    cmd: &'static Command,
    args: &[Bytes],
    plain: fn(&mut Ctx, &'static Command, &[Bytes]) -> Reply,
) -> Reply {
    let top = !ctx.in_script && !ctx.in_exec;
    if top && ctx.client.id != 0 {
        let version = node.shared.membership.version(node.me);
        if ctx.client.cluster_seen != version {
            ctx.client.cluster_seen = version;
            if let Some(e) = recheck(ctx, node, cmd, args) {
                return Reply::error(e);
            }
        }
    }
    let reply = plain(ctx, cmd, args);
    if is_function_write(cmd, args, &reply) {
        feed::replay(ctx.state, ctx.client.db, args);
    }
    if top {
        feed::commit(ctx.state);
    }
    reply
}

/// A FUNCTION subcommand that changed the libraries (LOAD, DELETE, FLUSH, RESTORE).
fn is_function_write(cmd: &Command, args: &[Bytes], reply: &Reply) -> bool {
    cmd.has(flags::WRITE)
        && !matches!(reply, Reply::Error(_))
        && args[0].eq_ignore_ascii_case(b"function")
}

/// Route a client's command again under the lock (see [`call_in_cluster`]).
fn recheck(
    ctx: &mut Ctx,
    node: &ClusterNode,
    cmd: &'static Command,
    args: &[Bytes],
) -> Option<RedisError> {
    let state = ctx.state;
    let parent = state
        .commands
        .lookup(&args[0])
        .filter(|p| !std::ptr::eq(*p, cmd));
    let is_exec = parent.is_none() && cmd.name == "exec";
    let view = node.shared.membership.view(node.me);
    let parts = route::parts(state, ctx.client, cmd, parent, args, is_exec)?;
    match route::node_by_query(
        state,
        node,
        &view,
        ctx.client.cluster_flags,
        &parts,
        is_exec,
    ) {
        Ok(_) => None,
        Err((r, slot)) => {
            if is_exec {
                // discardTransaction: EXEC redirected drops the transaction.
                ctx.client.multi = None;
                ctx.client
                    .info
                    .multi
                    .store(-1, std::sync::atomic::Ordering::Relaxed);
                state.watches.forget(ctx.client.id);
            }
            Some(route::error(&view, r, slot))
        }
    }
}

/// What a script's `redis.call` of `cmd` needs on a cluster node (scriptVerifyClusterState,
/// and scriptVerifyWriteCommandAllow's replica check): the keys served here, in the
/// script's one slot unless it may cross slots. `slot` is the script's slot so far (-1:
/// none yet), `origin` the calling client's cluster flags, `wrote` whether the script
/// already wrote.
pub fn script_call_refused(
    state: &ServerState,
    node: &ClusterNode,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &[Bytes],
    script: &mut ScriptSlot,
) -> Option<&'static str> {
    let view = node.shared.membership.view(node.me);
    if cmd.has(flags::WRITE) && !script.wrote && view.nodes[node.me].master.is_some() {
        return Some(error::READONLY_REPLICA);
    }
    let parts = [(cmd, parent, args)];
    match route::node_by_query(state, node, &view, script.origin_flags, &parts, false) {
        Err((Redirect::DownReadOnly, _)) => Some(error::SCRIPT_CLUSTER_DOWN_RO),
        Err((Redirect::Down, _)) => Some(error::SCRIPT_CLUSTER_DOWN),
        Err(_) => Some(error::SCRIPT_NON_LOCAL_KEY),
        Ok(Some(slot)) if !script.cross_slot => {
            if script.slot < 0 {
                script.slot = slot as i32;
                None
            } else if script.slot != slot as i32 {
                Some(error::SCRIPT_CROSS_SLOT)
            } else {
                None
            }
        }
        Ok(_) => None,
    }
}

/// What a running script's cluster checks remember (Redis keeps them on the calling client
/// and the run context).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScriptSlot {
    /// The slot of the keys it declared or first touched, -1 for none yet.
    pub slot: i32,
    /// The calling client's READONLY and ASKING flags.
    pub origin_flags: u8,
    /// It may touch keys of several slots (no shebang, or `allow-cross-slot-keys`).
    pub cross_slot: bool,
    /// It already wrote (a replica check is then moot).
    pub wrote: bool,
}

impl ScriptSlot {
    /// A script called with `args` (EVAL/FCALL: name, script, numkeys, keys...) by a
    /// client with `origin_flags`.
    pub fn for_call(state: &ServerState, args: &[Bytes], origin_flags: u8) -> ScriptSlot {
        let declared = match state.commands.lookup(b"eval") {
            Some(eval) => keys::positions(keys::Rule::Movable, eval, args),
            None => Vec::new(),
        };
        ScriptSlot {
            slot: declared
                .first()
                .and_then(|&i| args.get(i))
                .map_or(-1, |k| key_slot(k) as i32),
            origin_flags,
            cross_slot: false,
            wrote: false,
        }
    }
}

/// The script's flags allow touching keys of several slots (Redis: no shebang, or the
/// `allow-cross-slot-keys` flag).
pub fn script_may_cross_slots(script_flags: u32) -> bool {
    script_flags
        & (crate::script::script_flags::EVAL_COMPAT | crate::script::script_flags::ALLOW_CROSS_SLOT)
        != 0
}

/// PUBLISH on a cluster node: every other node this one reaches delivers the message to its
/// own subscribers (clusterPropagatePublish); SPUBLISH (`sharded`): only the other nodes of
/// this node's shard (its master and the master's replicas). The count Redis replies is the
/// local one, which the caller has.
pub fn publish_to_others(state: &ServerState, channel: &[u8], message: &[u8], sharded: bool) {
    let Some(node) = state.cluster.as_deref() else {
        return;
    };
    let m = &node.shared.membership;
    if m.is_partitioned(node.me) {
        return;
    }
    let view = m.view(node.me);
    let shard_master = view.nodes[node.me].master.unwrap_or(node.me);
    for (i, other) in node.shared.servers() {
        if i == node.me || m.is_partitioned(i) {
            continue;
        }
        if sharded && i != shard_master && view.nodes[i].master != Some(shard_master) {
            continue;
        }
        let now = other.clock.now_ms();
        let limits = other.pubsub.limits();
        if sharded {
            other.pubsub.spublish(channel, message, limits, now);
        } else {
            other.pubsub.publish(channel, message, limits, now);
        }
    }
}

/// Whether a command line asks for a database other than 0 (SELECT, MOVE, COPY ... DB,
/// SWAPDB are refused on a cluster node).
pub fn is_node(state: &ServerState) -> bool {
    state.cluster.is_some()
}

/// The cluster state as this node sees it: `ok` or `fail` (CLUSTER INFO's cluster_state).
pub fn state_ok(state: &ServerState, view: &Topology) -> bool {
    route::cluster_ok(state, view)
}

/// This client's READONLY flag is on (CLIENT LIST's `r`).
pub fn is_readonly_client(flags: u8) -> bool {
    flags & client_flags::READONLY != 0
}

/// A node's replication as INFO, ROLE and HELLO report it.
#[derive(Clone, Debug)]
pub struct Replication {
    /// The master this node replicates: its address and whether the link is up (None: it is
    /// a master).
    pub master: Option<(String, u16, bool)>,
    /// The master's replication offset this node has (its own, on a master).
    pub offset: u64,
    /// The replicas following this node: address, applied offset, online.
    pub replicas: Vec<(String, u16, u64, bool)>,
    /// The shard's replication id: its master's run id.
    pub replid: String,
}

/// This node's replication, from the configuration and the feed.
pub fn replication(state: &ServerState) -> Option<Replication> {
    let node = state.cluster.as_deref()?;
    let m = &node.shared.membership;
    let view = m.view(node.me);
    let me = &view.nodes[node.me];
    let master_ix = me.master.unwrap_or(node.me);
    let replid = node
        .shared
        .server(master_ix)
        .map_or_else(|| state.run_id.clone(), |s| s.run_id.clone());
    let applied = node
        .follow
        .applied
        .load(std::sync::atomic::Ordering::Acquire);
    let synced = node
        .follow
        .synced
        .load(std::sync::atomic::Ordering::Acquire)
        == 1;
    let master = me.master.map(|mi| {
        let mn = &view.nodes[mi];
        let up = synced
            && *node.follow.master.read() == Some(mi)
            && !m.is_partitioned(node.me)
            && !m.is_partitioned(mi);
        (mn.ip.clone(), mn.port, up)
    });
    let offset = match me.master {
        Some(_) => applied,
        None => node.feed.offset.load(std::sync::atomic::Ordering::Acquire),
    };
    let mut replicas = Vec::new();
    if me.master.is_none() {
        for r in view.replicas_of(node.me) {
            let rn = &view.nodes[r];
            let (off, online) = match node.shared.server(r) {
                Some(rs) => {
                    let f = &rs.cluster.as_deref().expect("a cluster node").follow;
                    let on = *f.master.read() == Some(node.me)
                        && f.synced.load(std::sync::atomic::Ordering::Acquire) == 1
                        && !m.is_partitioned(r);
                    (f.applied.load(std::sync::atomic::Ordering::Acquire), on)
                }
                None => (0, false),
            };
            if online {
                replicas.push((rn.ip.clone(), rn.port, off, online));
            }
        }
    }
    Some(Replication {
        master,
        offset,
        replicas,
        replid,
    })
}

/// WAIT on a cluster node counts the replicas following its feed: those online (following
/// this node, synced, not cut off) that applied up to `offset` of the feed.
pub fn count_feed_acks(state: &ServerState, node: std::sync::Arc<ClusterNode>) {
    let count = move |offset: i64| -> i64 {
        let m = &node.shared.membership;
        m.view(node.me)
            .replicas_of(node.me)
            .into_iter()
            .filter(|&r| {
                !m.is_partitioned(r)
                    && node.shared.server(r).is_some_and(|rs| {
                        let f = &rs.cluster.as_deref().expect("a cluster node").follow;
                        *f.master.read() == Some(node.me)
                            && f.synced.load(std::sync::atomic::Ordering::Acquire) == 1
                            && f.applied.load(std::sync::atomic::Ordering::Acquire) as i64 >= offset
                    })
            })
            .count() as i64
    };
    let _ = state.replication.in_process.set(Box::new(count));
}

/// The offset a WAIT on this node waits for its replicas to reach: the end of its feed
/// (None outside cluster mode: the replication stream's offset applies).
pub fn wait_offset(state: &ServerState) -> Option<i64> {
    let node = state.cluster.as_deref()?;
    Some(node.feed.offset.load(std::sync::atomic::Ordering::Acquire) as i64)
}

/// Redis's clusterRedirectBlockedClientIfNeeded for every client blocked on this node: one
/// blocked on a key of a slot the node no longer serves (nor imports) gets `-MOVED` (or
/// `-CLUSTERDOWN`) instead of waiting forever. The caller holds the server lock; the cron
/// runs it every second and the cluster operations after each change.
pub fn redirect_blocked(state: &ServerState) {
    let Some(node) = state.cluster.as_deref() else {
        return;
    };
    if !state.blocking.any() {
        return;
    }
    let view = node.shared.membership.view(node.me);
    let down = !route::cluster_ok(state, &view);
    crate::cmd::runtime::blocking::unblock_refused(state, |_, key| {
        if down {
            return Some(Reply::error(RedisError::new(error::CLUSTERDOWN)));
        }
        let slot = key_slot(key);
        if view.nodes[node.me].importing.contains_key(&slot) {
            return None;
        }
        match view.owner(slot) {
            Some(o) if o == node.me => None,
            Some(o) => Some(Reply::error(route::error(&view, Redirect::Moved(o), slot))),
            None => Some(Reply::error(RedisError::new(error::CLUSTERDOWN_UNBOUND))),
        }
    });
}
