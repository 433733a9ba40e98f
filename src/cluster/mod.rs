//! Redis Cluster's data model for an in-process cluster: hash slots (`slot`), a node's view
//! of the configuration (`topology`), and [`Membership`], how the views of the nodes of one
//! process relate. No commands, sockets or keyspace: the command layer
//! (`cmd/runtime/cluster/`) routes requests with it and the server starts the nodes.
//!
//! # One truth instead of gossip
//!
//! Real nodes converge on one configuration by gossip over the cluster bus. Nodes in one
//! process share it instead: a change made through any node (CLUSTER SETSLOT, a failover) is
//! the truth every connected node sees at once. A *partitioned* node keeps its own view,
//! frozen when it was cut off, with every other node flagged `fail?` and its state down (it
//! cannot reach a majority); the connected nodes flag it `fail`. When it comes back it takes
//! the truth again, as a real node adopts the configuration with the greater epochs.

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
    /// What each node sees now: the truth, or its own view while partitioned. Read by every
    /// request a node routes.
    views: Vec<RwLock<Arc<Topology>>>,
    /// Bumped whenever a node's view changes: a request checked against an older view is
    /// checked again.
    versions: Vec<AtomicU64>,
}

struct Inner {
    truth: Topology,
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

    /// The configuration of the connected majority.
    pub fn truth(&self) -> Topology {
        self.inner.lock().truth.clone()
    }

    /// Whether `node` is cut off from the others.
    pub fn is_partitioned(&self, node: NodeIx) -> bool {
        self.inner.lock().partitioned[node]
    }

    /// Change the configuration through `node`: the truth, seen by every connected node at
    /// once, or only `node`'s own view while it is partitioned. `f`'s result is returned.
    pub fn update<R>(&self, node: NodeIx, f: impl FnOnce(&mut Topology) -> R) -> R {
        let mut inner = self.inner.lock();
        if inner.partitioned[node] {
            let mut view = (*self.views[node].read().clone()).clone();
            let r = f(&mut view);
            view.refresh();
            self.set_view(node, Arc::new(view));
            return r;
        }
        let r = f(&mut inner.truth);
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
        let mut own = inner.truth.clone();
        for (i, n) in own.nodes.iter_mut().enumerate() {
            if i != node && !n.unreachable() {
                n.pfail = true;
                n.since_ms = now_ms;
            }
        }
        own.refresh();
        self.set_view(node, Arc::new(own));
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

    /// Bring `node` back at `now_ms`: it sees the truth again and the others stop flagging
    /// it. False if it was not partitioned.
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
        self.publish(&mut inner);
        true
    }

    /// Hand the truth to every connected node.
    fn publish(&self, inner: &mut Inner) {
        inner.truth.refresh();
        let shared = Arc::new(inner.truth.clone());
        for i in 0..self.views.len() {
            if !inner.partitioned[i] {
                self.set_view(i, shared.clone());
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
