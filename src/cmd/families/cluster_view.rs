//! The CLUSTER subcommands that describe the cluster as this node sees it, in redis-server
//! 7.0.15's formats: NODES, SLOTS, SHARDS, INFO, REPLICAS (SLAVES), LINKS and
//! COUNT-FAILURE-REPORTS. Addresses are the nodes' real, reachable ones; what a node learns
//! from the cluster bus in Redis (ping and pong times, message counts) is what an
//! in-process cluster has: no bus messages, links made when the cluster started.

use crate::cluster::{NodeIx, Topology};
use crate::cmd::families::cluster::node;
use crate::cmd::runtime::cluster::hooks;
use crate::cmd::runtime::cluster::registry::ClusterNode;
use crate::cmd::runtime::state::Ctx;
use crate::error;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

/// A node's replication offset and whether it is available (Redis's isReplicaAvailable: a
/// replica is once its offset is not 0, i.e. its master sent it something, a write or the
/// periodic PING): what its master and the gossip would report.
fn offset_of(node: &ClusterNode, view: &Topology, n: NodeIx) -> (u64, bool) {
    let Some(s) = node.shared.server(n) else {
        return (0, false);
    };
    let Some(c) = s.cluster.as_deref() else {
        return (0, false);
    };
    if view.nodes[n].master.is_some() {
        let offset = c.follow.applied.load(Ordering::Acquire);
        let synced = c.follow.synced.load(Ordering::Acquire) == 1;
        (offset, synced && offset != 0)
    } else {
        (c.feed.offset.load(Ordering::Acquire), true)
    }
}

/// The node lines of CLUSTER NODES for `nodes`.
fn lines(
    ctx: &Ctx,
    node: &ClusterNode,
    view: &Topology,
    nodes: impl Iterator<Item = NodeIx>,
) -> String {
    let now = ctx.state.clock.now_ms();
    let mut out = String::new();
    for n in nodes {
        out.push_str(&view.describe(n, node.me, now));
        out.push('\n');
    }
    out
}

/// CLUSTER NODES.
pub fn nodes(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let text = lines(ctx, node, &view, 0..view.nodes.len());
    Ok(Reply::Verbatim(Bytes::from(text)))
}

/// `CLUSTER REPLICAS / SLAVES <node-id>`.
pub fn replicas(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let Some(n) = view.find(&a[2]) else {
        return Err(error::err(format!(
            "ERR Unknown node {}",
            String::from_utf8_lossy(&a[2])
        )));
    };
    if view.nodes[n].master.is_some() {
        return Err(error::err("ERR The specified node is not a master"));
    }
    let now = ctx.state.clock.now_ms();
    Ok(Reply::Array(
        view.replicas_of(n)
            .into_iter()
            .map(|r| Reply::bulk_str(&view.describe(r, node.me, now)))
            .collect(),
    ))
}

/// A node as CLUSTER SLOTS lists it: ip, port, id, and no other endpoints.
fn slot_node(view: &Topology, n: NodeIx) -> Reply {
    let x = &view.nodes[n];
    Reply::Array(vec![
        Reply::bulk_str(&x.ip),
        Reply::Int(x.port as i64),
        Reply::bulk_str(&x.id),
        Reply::Map(vec![]),
    ])
}

/// CLUSTER SLOTS: each run of slots with its master, then its replicas that are available
/// (not failed, and done with their first copy).
pub fn slots(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let mut out = Vec::new();
    for (a, b, owner) in view.runs() {
        let mut e = vec![
            Reply::Int(a as i64),
            Reply::Int(b as i64),
            slot_node(&view, owner),
        ];
        for r in view.replicas_of(owner) {
            if !view.nodes[r].fail && offset_of(node, &view, r).1 {
                e.push(slot_node(&view, r));
            }
        }
        out.push(Reply::Array(e));
    }
    Ok(Reply::Array(out))
}

/// CLUSTER SHARDS: for every master (with slots or not), its slot ranges and the details of
/// it and its replicas.
pub fn shards(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let s = |v: &'static str| Reply::bulk_static(v);
    let mut out = Vec::new();
    for m in 0..view.nodes.len() {
        if view.nodes[m].master.is_some() {
            continue;
        }
        let mut slots = Vec::new();
        for (a, b) in view.ranges_of(m) {
            slots.push(Reply::Int(a as i64));
            slots.push(Reply::Int(b as i64));
        }
        let members = std::iter::once(m).chain(view.replicas_of(m));
        let details = members
            .map(|n| {
                let x = &view.nodes[n];
                let (offset, synced) = offset_of(node, &view, n);
                let health = if x.fail {
                    "fail"
                } else if x.master.is_some() && !synced {
                    "loading"
                } else {
                    "online"
                };
                Reply::Map(vec![
                    (s("id"), Reply::bulk_str(&x.id)),
                    (s("port"), Reply::Int(x.port as i64)),
                    (s("ip"), Reply::bulk_str(&x.ip)),
                    (s("endpoint"), Reply::bulk_str(&x.ip)),
                    (
                        s("role"),
                        s(if x.master.is_some() {
                            "replica"
                        } else {
                            "master"
                        }),
                    ),
                    (s("replication-offset"), Reply::Int(offset as i64)),
                    (s("health"), s(health)),
                ])
            })
            .collect();
        out.push(Reply::Map(vec![
            (s("slots"), Reply::Array(slots)),
            (s("nodes"), Reply::Array(details)),
        ]));
    }
    Ok(Reply::Array(out))
}

/// CLUSTER INFO.
pub fn info(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let (mut assigned, mut ok, mut pfail, mut fail) = (0, 0, 0, 0);
    for slot in 0..crate::cluster::SLOTS as u16 {
        let Some(n) = view.owner(slot) else { continue };
        assigned += 1;
        if view.nodes[n].fail {
            fail += 1;
        } else if view.nodes[n].pfail {
            pfail += 1;
        } else {
            ok += 1;
        }
    }
    let state = if hooks::state_ok(ctx.state, &view) {
        "ok"
    } else {
        "fail"
    };
    let mut t = String::new();
    let _ = write!(
        t,
        "cluster_state:{state}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{ok}\r\n\
         cluster_slots_pfail:{pfail}\r\ncluster_slots_fail:{fail}\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
        view.nodes.len(),
        view.size(),
        view.current_epoch,
        view.shown_epoch(node.me)
    );
    // No cluster bus, so no messages by type; the totals are Redis's lines for that.
    t.push_str("cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n");
    t.push_str("total_cluster_links_buffer_limit_exceeded:0\r\n");
    Ok(Reply::Verbatim(Bytes::from(t)))
}

/// CLUSTER LINKS: a link to and one from every node this node reaches, made when the
/// cluster started (or the node was last reached again).
pub fn links(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let s = |v: &'static str| Reply::bulk_static(v);
    let mut out = Vec::new();
    for (i, n) in view.nodes.iter().enumerate() {
        if i == node.me || n.unreachable() {
            continue;
        }
        let made = n.since_ms.max(node.shared.started_ms);
        for dir in ["to", "from"] {
            out.push(Reply::Map(vec![
                (s("direction"), s(dir)),
                (s("node"), Reply::bulk_str(&n.id)),
                (s("create-time"), Reply::Int(made)),
                (s("events"), s("r")),
                (s("send-buffer-allocated"), Reply::Int(0)),
                (s("send-buffer-used"), Reply::Int(0)),
            ]));
        }
    }
    Ok(Reply::Array(out))
}

/// `CLUSTER COUNT-FAILURE-REPORTS <node-id>`: the other masters that saw the node fail (the
/// masters reachable when it was cut off, this node aside).
pub fn count_failure_reports(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let Some(n) = view.find(&a[2]) else {
        return Err(error::err(format!(
            "ERR Unknown node {}",
            String::from_utf8_lossy(&a[2])
        )));
    };
    let reports = view.nodes[n]
        .reported_by
        .iter()
        .filter(|&&m| m != node.me)
        .count();
    Ok(Reply::Int(reports as i64))
}
