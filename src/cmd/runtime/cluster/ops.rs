//! Operations across the nodes of one process: a failover, moving a slot's keys, making every
//! node replicate what the configuration says. They run as async tasks whose caller holds
//! [`Shared::ops`] (so two never wait for each other's server locks), never from a command
//! handler holding its own lock, and hold no lock across an await.

use crate::cluster::{key_slot, NodeIx};
use crate::cmd::runtime::cluster::feed;
use crate::cmd::runtime::cluster::follow::{self, lock_async};
use crate::cmd::runtime::cluster::registry::Shared;
use crate::cmd::runtime::lock::Held;
use crate::cmd::runtime::state::ServerState;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How a replica takes over (CLUSTER FAILOVER's options, and a failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Takeover {
    /// CLUSTER FAILOVER: the master stops taking writes until the replica has applied
    /// everything it sent, then the replica takes over; nothing acknowledged is lost.
    Manual,
    /// FORCE (or the master failed): no handshake with the master; needs a majority.
    Force,
    /// TAKEOVER: no handshake, no vote: a new epoch without consensus.
    Takeover,
}

/// How long a manual failover waits for the replica (Redis's CLUSTER_MF_TIMEOUT).
const MANUAL_TIMEOUT: Duration = Duration::from_secs(5);

/// The keys of `slot` in database 0 of `state`, at most `limit` (expired ones not yet
/// removed included, as Redis's slot index has them).
pub fn keys_in_slot(state: &ServerState, slot: u16, limit: usize) -> Vec<Bytes> {
    let mut out = Vec::new();
    if limit == 0 {
        return out;
    }
    let mut g = state.keyspace.db(0).lock_all();
    for s in g.shards() {
        for (k, _) in s.map.iter() {
            if key_slot(k.as_bytes()) == slot {
                out.push(Bytes::copy_from_slice(k.as_bytes()));
                if out.len() >= limit {
                    return out;
                }
            }
        }
    }
    out
}

/// How many keys of database 0 hash to `slot`.
pub fn count_in_slot(state: &ServerState, slot: u16) -> usize {
    let mut g = state.keyspace.db(0).lock_all();
    g.shards()
        .map(|s| {
            s.map
                .iter()
                .filter(|(k, _)| key_slot(k.as_bytes()) == slot)
                .count()
        })
        .sum()
}

/// Make every connected node replicate the master the configuration gives it (or none):
/// a node whose master changed starts again from a full copy of the new master's data.
/// `force`: these nodes (and their replicas) start again even if their master did not change
/// (they were cut off). The caller holds [`Shared::ops`].
pub async fn reconcile(shared: &Arc<Shared>, force: &[NodeIx]) {
    let truth = shared.membership.truth();
    for (i, state) in shared.servers() {
        if shared.membership.is_partitioned(i) {
            continue;
        }
        let Some(node) = state.cluster.as_deref() else {
            continue;
        };
        let want = truth.nodes[i]
            .master
            .filter(|m| !shared.membership.is_partitioned(*m));
        let have = *node.follow.master.read();
        if want == have && !force.contains(&i) && want.is_none_or(|m| !force.contains(&m)) {
            continue;
        }
        match want {
            None => {
                follow::stop(&state);
                if truth.nodes[i].master.is_some() {
                    // Its master is cut off: it keeps what it has and waits.
                    *node.follow.master.write() = truth.nodes[i].master;
                }
            }
            Some(m) => {
                if let Some(master) = shared.server(m) {
                    follow::attach(state.clone(), master, m).await;
                }
            }
        }
    }
}

/// Replica `replica` takes over its master as `how` says. False if it could not (it is no
/// replica, its master is reachable but did not let it catch up, or it has no majority).
/// The caller holds [`Shared::ops`].
pub async fn failover(shared: &Arc<Shared>, replica: NodeIx, how: Takeover) -> bool {
    let m = &shared.membership;
    let view = m.view(replica);
    let Some(master) = view.nodes[replica].master else {
        return false;
    };
    let cut_off = m.is_partitioned(replica);
    if cut_off && how != Takeover::Takeover {
        // No majority can vote for a node that reaches nobody.
        return false;
    }
    let master_state = shared.server(master).filter(|_| !m.is_partitioned(master));
    let promoted = match (how, master_state) {
        (Takeover::Manual, Some(ms)) => {
            let Some(rs) = shared.server(replica) else {
                return false;
            };
            manual(&ms, &rs, || {
                m.update(replica, |t| t.promote(replica).is_some())
            })
            .await
        }
        (Takeover::Manual, None) => return false,
        (Takeover::Takeover, _) => m.update(replica, |t| t.promote(replica).is_some()),
        (Takeover::Force, _) => {
            if !view.has_quorum && !m.truth().has_quorum {
                return false;
            }
            m.update(replica, |t| t.promote(replica).is_some())
        }
    };
    if promoted {
        if let Some(rs) = shared.server(replica) {
            follow::stop(&rs);
            // The new master's stream continues from what it had (PSYNC's replid2): its
            // replicas start at that offset, not at 0.
            if let Some(c) = rs.cluster.as_deref() {
                let applied = c.follow.applied.load(Ordering::Acquire);
                c.feed.offset.fetch_max(applied, Ordering::AcqRel);
            }
        }
        crate::log::notice(&format!(
            "Cluster node {replica} took over from node {master} ({how:?})"
        ));
        if !cut_off {
            reconcile(shared, &[]).await;
        }
        redirect_blocked(shared).await;
    }
    promoted
}

/// Run [`crate::cmd::runtime::cluster::hooks::redirect_blocked`] on every connected node,
/// after the configuration changed.
pub async fn redirect_blocked(shared: &Arc<Shared>) {
    for (i, state) in shared.servers() {
        if shared.membership.is_partitioned(i) || !state.blocking.any() {
            continue;
        }
        let held = lock_async(&state).await;
        crate::cmd::runtime::cluster::hooks::redirect_blocked(&state);
        drop(held);
    }
}

/// A manual failover's handshake (Redis's MFSTART): the master holds back writes (a
/// WRITE pause), the replica catches up with the master's offset, and `promote` runs holding
/// the master's lock once the replica has everything, so no acknowledged write is lost.
/// A command that was routed to the old master before and runs after is routed again (its
/// node's view changed) and redirected. False if the replica did not catch up in time.
async fn manual(ms: &ServerState, rs: &ServerState, promote: impl Fn() -> bool) -> bool {
    let paused_until = ms.clock.now_ms() + 2 * MANUAL_TIMEOUT.as_millis() as i64;
    ms.pause
        .pause(crate::cmd::runtime::pause::PauseKind::Write, paused_until);
    let deadline = tokio::time::Instant::now() + MANUAL_TIMEOUT;
    let done = loop {
        let target = {
            let held = lock_async(ms).await;
            let offset = ms
                .cluster
                .as_deref()
                .map_or(0, |n| n.feed.offset.load(Ordering::Acquire));
            let applied = rs.cluster.as_deref().is_some_and(|n| {
                n.follow.synced.load(Ordering::Acquire) == 1
                    && n.follow.applied.load(Ordering::Acquire) >= offset
            });
            if applied {
                let r = promote();
                drop(held);
                break r;
            }
            drop(held);
            offset
        };
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() || !follow::caught_up(rs, target, left).await {
            break false;
        }
    };
    ms.pause.unpause();
    done
}

/// Take the server locks of two nodes (one operation at a time holds two, under
/// [`Shared::ops`]): the first, then the second if it is free, else both are let go until
/// the second is released.
async fn lock_two<'a>(a: &'a ServerState, b: &'a ServerState) -> (Held<'a>, Held<'a>) {
    loop {
        let ha = lock_async(a).await;
        if let Some(hb) = b.lock.try_lock() {
            return (ha, hb);
        }
        drop(ha);
        b.lock.released().await;
    }
}

/// Move every key of `slots` from node `from` to node `to` (both masters), holding both
/// nodes' locks, so no client sees a key in neither place or in both. Replicas of both
/// follow. Returns how many keys. The caller holds [`Shared::ops`].
pub async fn move_keys(shared: &Arc<Shared>, slots: &[u16], from: NodeIx, to: NodeIx) -> usize {
    let wanted: std::collections::HashSet<u16> = slots.iter().copied().collect();
    move_matching(shared, from, to, |k| wanted.contains(&key_slot(k))).await
}

/// [`move_keys`] for the keys `pick` selects (MIGRATE's KEYS, moved in process).
pub async fn move_matching(
    shared: &Arc<Shared>,
    from: NodeIx,
    to: NodeIx,
    pick: impl Fn(&[u8]) -> bool,
) -> usize {
    let (Some(src), Some(dst)) = (shared.server(from), shared.server(to)) else {
        return 0;
    };
    let (held, dheld) = lock_two(&src, &dst).await;
    let now = src.clock.now_ms();
    let mut entries = Vec::new();
    {
        let mut g = src.keyspace.db(0).lock_all();
        for s in g.shards() {
            for (k, e) in s.map.iter() {
                if pick(k.as_bytes()) && !e.is_expired(now) {
                    entries.push((Bytes::copy_from_slice(k.as_bytes()), e.clone()));
                }
            }
        }
    }
    let moved = entries.len();
    if moved > 0 {
        for (k, e) in &entries {
            dst.keyspace.db(0).lock(k).insert(k, e.clone());
            dst.keyspace.report_pending();
            crate::cmd::runtime::watch::key_modified(&dst, 0, k);
            feed::touched(&dst, 0, k);
        }
        feed::commit(&dst);
        crate::cmd::runtime::blocking::serve_ready(&dst);
        for (k, _) in &entries {
            src.keyspace.db(0).lock(k).remove(k, now);
            src.keyspace.report_pending();
            crate::cmd::runtime::watch::key_modified(&src, 0, k);
            crate::cmd::runtime::tracking::key_modified(&src, 0, k);
            feed::touched(&src, 0, k);
        }
        feed::commit(&src);
    }
    drop(dheld);
    drop(held);
    moved
}
