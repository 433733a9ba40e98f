//! Redis Cluster's data model for an in-process cluster: hash slots (`slot`), a node's view
//! of the configuration (`topology`), how the nodes' slot tables converge (`gossip`), and
//! [`Membership`], how the views of the nodes of one process relate. No commands, sockets or
//! keyspace: the command layer (`cmd/runtime/cluster/`) routes requests with it and the
//! server starts the nodes.
//!
//! # Shared roles, a slot table per node, gossip at once
//!
//! Real nodes converge on one configuration by gossip over the cluster bus. Nodes in one
//! process share the node-level part of it instead (roles, config epochs, failure flags, the
//! slots each is migrating or importing): a change made through any node (a failover, a
//! bumped epoch) is seen by every connected node at once. Each node keeps its own slot
//! table, as a real node does: CLUSTER ADDSLOTS, DELSLOTS, FLUSHSLOTS and SETSLOT change the
//! table of the node that ran them, and the others learn from it by Redis's rules
//! (`gossip`), at once rather than after a ping: a slot a node claims with a greater config
//! epoch is rebound everywhere, a slot its owner stopped claiming (DELSLOTS) stays bound to
//! it in the others' tables.
//!
//! A *partitioned* node keeps its own view, frozen when it was cut off, with every other
//! node flagged `fail?` and its state down (it cannot reach a majority); the connected nodes
//! flag it `fail`. When it comes back it takes the shared roles again and the slots the
//! connected masters claim, as a real node adopts the configuration with the greater epochs.

pub mod gossip;
pub mod slot;
pub mod topology;

pub use slot::{key_slot, SLOTS};
pub use topology::{Node, NodeIx, Topology};

use parking_lot::{Mutex, RwLock};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The configuration of the nodes of one process (see the module documentation).
pub struct Membership {
    inner: Mutex<Inner>,
    /// What each node sees now. Read by every request a node routes.
    views: Vec<RwLock<Arc<Topology>>>,
    /// Bumped whenever a node's view changes: a request checked against an older view is
    /// checked again.
    versions: Vec<AtomicU64>,
}

struct Inner {
    /// The roles, epochs and flags the connected nodes share, with the slot table of who
    /// serves what: each slot's claimer with the greatest epoch.
    truth: Topology,
    /// Each node's own view: the shared roles and its own slot table, or, while it is
    /// partitioned, everything frozen.
    own: Vec<Topology>,
    partitioned: Vec<bool>,
}

impl Membership {
    /// Every node sees `truth`.
    pub fn new(truth: Topology) -> Membership {
        let n = truth.nodes.len();
        let shared = Arc::new(truth.clone());
        Membership {
            views: (0..n).map(|_| RwLock::new(shared.clone())).collect(),
            versions: (0..n).map(|_| AtomicU64::new(1)).collect(),
            inner: Mutex::new(Inner {
                own: vec![truth.clone(); n],
                truth,
                partitioned: vec![false; n],
            }),
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.views.len()
    }

    /// No nodes (never, for a started cluster).
    pub fn is_empty(&self) -> bool {
        self.views.is_empty()
    }

    /// What `node` sees now.
    pub fn view(&self, node: NodeIx) -> Arc<Topology> {
        self.views[node].read().clone()
    }

    /// The version of `node`'s view: it changes whenever the view does.
    pub fn version(&self, node: NodeIx) -> u64 {
        self.versions[node].load(Ordering::Acquire)
    }

    /// Replace `node`'s view.
    fn set_view(&self, node: NodeIx, view: Arc<Topology>) {
        *self.views[node].write() = view;
        self.versions[node].fetch_add(1, Ordering::AcqRel);
    }

    /// The configuration of the connected majority: the shared roles, and each slot served
    /// by the master claiming it with the greatest epoch (None: no master claims it).
    pub fn truth(&self) -> Topology {
        self.inner.lock().truth.clone()
    }

    /// Whether `node` is cut off from the others.
    pub fn is_partitioned(&self, node: NodeIx) -> bool {
        self.inner.lock().partitioned[node]
    }

    /// Change the configuration through `node`: `f` changes `node`'s own view; its roles,
    /// epochs and flags are shared with every connected node at once and its slot table is
    /// learnt from by Redis's rules; while `node` is partitioned only its own view changes.
    /// `f`'s result is returned.
    pub fn update<R>(&self, node: NodeIx, f: impl FnOnce(&mut Topology) -> R) -> R {
        let mut inner = self.inner.lock();
        let mut view = inner.own[node].clone();
        let r = f(&mut view);
        if inner.partitioned[node] {
            view.refresh();
            inner.own[node] = view.clone();
            self.set_view(node, Arc::new(view));
            return r;
        }
        inner.truth.nodes = view.nodes.clone();
        inner.truth.current_epoch = view.current_epoch;
        inner.own[node] = view;
        self.publish(&mut inner);
        r
    }

    /// Cut `node` off at server time `now_ms`: the others flag it `fail`; it keeps its view
    /// with every other node `fail?`. False if it already was.
    pub fn partition(&self, node: NodeIx, now_ms: i64) -> bool {
        let mut inner = self.inner.lock();
        if inner.partitioned[node] {
            return false;
        }
        inner.partitioned[node] = true;
        let own = &mut inner.own[node];
        for (i, n) in own.nodes.iter_mut().enumerate() {
            if i != node && !n.unreachable() {
                n.pfail = true;
                n.since_ms = now_ms;
            }
        }
        own.refresh();
        let own = Arc::new(own.clone());
        self.set_view(node, own);
        let reporters: Vec<NodeIx> = (0..inner.truth.nodes.len())
            .filter(|&i| {
                let x = &inner.truth.nodes[i];
                i != node && x.is_master() && !x.unreachable()
            })
            .collect();
        let n = &mut inner.truth.nodes[node];
        n.fail = true;
        n.since_ms = now_ms;
        n.reported_by = reporters;
        self.publish(&mut inner);
        true
    }

    /// Bring `node` back at `now_ms`: it takes the shared roles again, and the slots the
    /// connected masters claim; the others stop flagging it. False if it was not
    /// partitioned.
    pub fn heal(&self, node: NodeIx, now_ms: i64) -> bool {
        let mut inner = self.inner.lock();
        if !inner.partitioned[node] {
            return false;
        }
        inner.partitioned[node] = false;
        let n = &mut inner.truth.nodes[node];
        n.fail = false;
        n.pfail = false;
        n.since_ms = now_ms;
        n.reported_by.clear();
        // A master replaced while it was away learns it lost its slots and follows the
        // node that took them (or that node's master, if it was replaced in turn).
        if let Some(mut by) = n.replaced_by.take() {
            while let Some(m) = inner.truth.nodes[by].master {
                by = m;
            }
            if by != node {
                let n = &mut inner.truth.nodes[node];
                n.master = Some(by);
                n.migrating.clear();
                n.importing.clear();
            }
        }
        // Its table: what the connected masters claim; a slot none claims stays as it had
        // it if bound to a master.
        let inner = &mut *inner;
        inner.own[node].nodes = inner.truth.nodes.clone();
        let connected: Vec<bool> = inner.partitioned.iter().map(|p| !p).collect();
        let best = gossip::best_claims(&inner.own, &inner.truth, &connected);
        for s in 0..SLOTS as u16 {
            let keep = inner.own[node]
                .owner(s)
                .filter(|&o| inner.truth.nodes[o].is_master());
            let to = best[s as usize].or(keep);
            inner.own[node].assign(s, to);
        }
        self.publish(inner);
        true
    }

    /// Give every connected node the shared roles, let their slot tables converge, and
    /// show each its view.
    fn publish(&self, inner: &mut Inner) {
        let connected: Vec<bool> = inner.partitioned.iter().map(|p| !p).collect();
        for (i, own) in inner.own.iter_mut().enumerate() {
            if connected[i] {
                own.nodes = inner.truth.nodes.clone();
                own.current_epoch = inner.truth.current_epoch;
            }
        }
        gossip::converge(&mut inner.own, &inner.truth, &connected);
        // Who serves what: every master's claim, cut off or not, the greatest epoch's.
        let everyone = vec![true; connected.len()];
        let best = gossip::best_claims(&inner.own, &inner.truth, &everyone);
        for (s, o) in best.into_iter().enumerate() {
            inner.truth.assign(s as u16, o);
        }
        inner.truth.refresh();
        for (i, own) in inner.own.iter_mut().enumerate() {
            if connected[i] {
                own.refresh();
                self.set_view(i, Arc::new(own.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn six() -> Membership {
        let addrs: Vec<(String, u16)> = (0..6).map(|i| ("127.0.0.1".into(), 7000 + i)).collect();
        let ids = (0..6).map(|i| format!("{i:040x}")).collect();
        Membership::new(Topology::create(&addrs, ids, 3, 1))
    }

    #[test]
    fn a_change_through_one_node_is_seen_by_every_connected_node() {
        let m = six();
        m.update(1, |t| t.assign(0, Some(1)));
        assert!((0..6).all(|i| m.view(i).owner(0) == Some(1)));
    }

    #[test]
    fn a_partitioned_node_keeps_its_own_view_until_it_heals() {
        let m = six();
        assert!(m.partition(0, 100));
        assert!(m.view(1).nodes[0].fail);
        let own = m.view(0);
        assert!(own.nodes[1].pfail && !own.quorum());
        m.update(4, |t| {
            t.promote(4);
        });
        assert_eq!(m.view(1).owner(0), Some(4));
        assert_eq!(
            m.view(0).owner(0),
            Some(0),
            "the cut-off node did not learn it"
        );
        m.update(0, |t| t.assign(1, None));
        assert_eq!(
            m.view(1).owner(1),
            Some(4),
            "nor did the others learn its change"
        );
        assert!(m.heal(0, 200));
        assert_eq!(m.view(0).owner(0), Some(4));
        assert_eq!(m.view(0).nodes[0].master, Some(4));
        assert!(!m.view(0).nodes[0].fail);
    }
}
