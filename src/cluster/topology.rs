//! A cluster's configuration as one node sees it: the nodes (id, address, role, config
//! epoch, failure flags, the slots a node is migrating or importing) and which master serves
//! each of the 16,384 slots. Plain data: no sockets, no keyspace, no commands.

use super::slot::SLOTS;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A node's position in [`Topology::nodes`]; it never changes while the cluster runs.
pub type NodeIx = usize;

/// No owner, in the slot table.
const UNASSIGNED: u16 = u16::MAX;

/// One node of the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// 40 lowercase hex characters, random at start (Redis's node name).
    pub id: String,
    /// The address clients reach it at.
    pub ip: String,
    /// Its client port.
    pub port: u16,
    /// The cluster bus port it would have (port + 10000); nothing listens there.
    pub cport: u16,
    /// The master it replicates, or None for a master.
    pub master: Option<NodeIx>,
    /// Its config epoch.
    pub config_epoch: u64,
    /// Flagged `fail` (the majority agreed it is unreachable).
    pub fail: bool,
    /// Flagged `fail?` (unreachable from this view, not agreed).
    pub pfail: bool,
    /// Slots this node is migrating, to whom (CLUSTER SETSLOT MIGRATING; local to the node).
    pub migrating: BTreeMap<u16, NodeIx>,
    /// Slots this node is importing, from whom (CLUSTER SETSLOT IMPORTING).
    pub importing: BTreeMap<u16, NodeIx>,
    /// Server time (ms) its links were made, or it was last seen failing.
    pub since_ms: i64,
    /// A failed master whose replica took over: it follows that node once it is back.
    pub replaced_by: Option<NodeIx>,
    /// The masters that saw it fail (CLUSTER COUNT-FAILURE-REPORTS: each node counts the
    /// others' reports).
    pub reported_by: Vec<NodeIx>,
}

impl Node {
    /// A master with no slots, no flags and epoch 0.
    pub fn new(id: String, ip: String, port: u16) -> Node {
        Node {
            id,
            ip,
            port,
            cport: port.checked_add(10000).unwrap_or(0),
            master: None,
            config_epoch: 0,
            fail: false,
            pfail: false,
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
            since_ms: 0,
            replaced_by: None,
            reported_by: Vec::new(),
        }
    }

    /// A master (not a replica).
    pub fn is_master(&self) -> bool {
        self.master.is_none()
    }

    /// Flagged `fail` or `fail?`.
    pub fn unreachable(&self) -> bool {
        self.fail || self.pfail
    }
}

/// The nodes and the slot table (see the module documentation).
#[derive(Clone, Debug)]
pub struct Topology {
    /// Every node, by [`NodeIx`].
    pub nodes: Vec<Node>,
    /// Owner of each slot, `UNASSIGNED` for none.
    slots: Box<[u16]>,
    /// The cluster's current epoch.
    pub current_epoch: u64,
    /// [`Topology::covered`] as of the last [`Topology::refresh`] (read per request).
    pub is_covered: bool,
    /// [`Topology::quorum`] as of the last [`Topology::refresh`].
    pub has_quorum: bool,
}

impl Topology {
    /// Nodes at `addrs` with these `ids`, laid out as `redis-cli --cluster create` lays out
    /// `masters` masters with `replicas` replicas each on one host: the first `masters`
    /// addresses are masters, the slots split between them in order (slots_per_node =
    /// 16384 / masters, rounded as redis-cli rounds); the other nodes, rotated by one,
    /// become replicas of master 0, 1, ... in turn, extra ones one per master from the
    /// start. Config epochs are 1, 2, ... in address order, as redis-cli assigns them.
    pub fn create(
        addrs: &[(String, u16)],
        ids: Vec<String>,
        masters: usize,
        replicas: usize,
    ) -> Topology {
        assert!(masters >= 1 && masters <= addrs.len() && ids.len() == addrs.len());
        let mut nodes: Vec<Node> = addrs
            .iter()
            .zip(ids)
            .enumerate()
            .map(|(i, ((ip, port), id))| {
                let mut n = Node::new(id, ip.clone(), *port);
                n.config_epoch = i as u64 + 1;
                n
            })
            .collect();
        let mut slots = vec![UNASSIGNED; SLOTS].into_boxed_slice();
        let per_node = SLOTS as f32 / masters as f32;
        let (mut first, mut cursor) = (0i64, 0f32);
        for m in 0..masters {
            let mut last = (cursor + per_node - 1.0).round() as i64;
            if last > SLOTS as i64 || m == masters - 1 {
                last = SLOTS as i64 - 1;
            }
            last = last.max(first);
            for s in first..=last {
                slots[s as usize] = m as u16;
            }
            first = last + 1;
            cursor += per_node;
        }
        let mut spare: Vec<NodeIx> = (masters..addrs.len()).collect();
        if !spare.is_empty() {
            spare.rotate_left(1);
        }
        let mut spare = spare.into_iter();
        'wanted: for m in 0..masters {
            for _ in 0..replicas {
                let Some(r) = spare.next() else {
                    break 'wanted;
                };
                nodes[r].master = Some(m);
            }
        }
        for (m, r) in (0..masters).cycle().zip(spare) {
            nodes[r].master = Some(m);
        }
        let current_epoch = nodes.len() as u64;
        let mut t = Topology {
            nodes,
            slots,
            current_epoch,
            is_covered: false,
            has_quorum: false,
        };
        t.refresh();
        t
    }

    /// Recompute the cluster state a request reads ([`Topology::is_covered`],
    /// [`Topology::has_quorum`]) after a change.
    pub fn refresh(&mut self) {
        self.is_covered = self.covered();
        self.has_quorum = self.quorum();
    }

    /// The master serving `slot`, if any.
    pub fn owner(&self, slot: u16) -> Option<NodeIx> {
        match self.slots[slot as usize] {
            UNASSIGNED => None,
            n => Some(n as NodeIx),
        }
    }

    /// Make `owner` serve `slot` (None: unassigned).
    pub fn assign(&mut self, slot: u16, owner: Option<NodeIx>) {
        self.slots[slot as usize] = owner.map_or(UNASSIGNED, |n| n as u16);
    }

    /// Runs of consecutive slots with the same owner, in slot order: (first, last, owner).
    pub fn runs(&self) -> Vec<(u16, u16, NodeIx)> {
        let mut out: Vec<(u16, u16, NodeIx)> = Vec::new();
        for s in 0..SLOTS as u16 {
            let Some(n) = self.owner(s) else { continue };
            match out.last_mut() {
                Some(last) if last.2 == n && last.1 + 1 == s => last.1 = s,
                _ => out.push((s, s, n)),
            }
        }
        out
    }

    /// The slot ranges `node` serves, in order.
    pub fn ranges_of(&self, node: NodeIx) -> Vec<(u16, u16)> {
        self.runs()
            .into_iter()
            .filter(|r| r.2 == node)
            .map(|r| (r.0, r.1))
            .collect()
    }

    /// How many slots `node` serves.
    pub fn slot_count(&self, node: NodeIx) -> usize {
        self.slots.iter().filter(|&&n| n as usize == node).count()
    }

    /// The replicas of `master`, in node order.
    pub fn replicas_of(&self, master: NodeIx) -> Vec<NodeIx> {
        (0..self.nodes.len())
            .filter(|&i| self.nodes[i].master == Some(master))
            .collect()
    }

    /// Masters serving at least one slot (cluster_size).
    pub fn size(&self) -> usize {
        let mut serving = vec![false; self.nodes.len()];
        for &n in self.slots.iter() {
            if n != UNASSIGNED {
                serving[n as usize] = true;
            }
        }
        serving.iter().filter(|&&s| s).count()
    }

    /// The node whose id is exactly `id`.
    pub fn find(&self, id: &[u8]) -> Option<NodeIx> {
        self.nodes.iter().position(|n| n.id.as_bytes() == id)
    }

    /// The node serving clients at `ip:port`.
    pub fn find_addr(&self, ip: &str, port: u16) -> Option<NodeIx> {
        self.nodes.iter().position(|n| n.ip == ip && n.port == port)
    }

    /// The epoch a node shows: a replica shows its master's (CLUSTER NODES, cluster_my_epoch).
    pub fn shown_epoch(&self, node: NodeIx) -> u64 {
        let n = &self.nodes[node];
        match n.master {
            Some(m) => self.nodes[m].config_epoch,
            None => n.config_epoch,
        }
    }

    /// Redis's clusterBumpConfigEpochWithoutConsensus: give `node` a new, greatest config
    /// epoch unless it already has the greatest one alone. True if it bumped.
    pub fn bump_epoch(&mut self, node: NodeIx) -> bool {
        let max = self
            .nodes
            .iter()
            .map(|n| n.config_epoch)
            .max()
            .unwrap_or(0)
            .max(self.current_epoch);
        let mine = self.nodes[node].config_epoch;
        if mine == 0 || mine != max {
            self.current_epoch += 1;
            self.nodes[node].config_epoch = self.current_epoch;
            true
        } else {
            false
        }
    }

    /// A replica takes over its master (a failover, manual or after a failure): it gets a
    /// new epoch, becomes a master serving every slot its master served, and the other
    /// replicas replicate it; so does the old master, at once if it is reachable, or when it
    /// comes back ([`Node::replaced_by`]: until then it shows as a failed master without
    /// slots). Returns the old master.
    pub fn promote(&mut self, replica: NodeIx) -> Option<NodeIx> {
        let old = self.nodes[replica].master?;
        self.current_epoch += 1;
        self.nodes[replica].config_epoch = self.current_epoch;
        self.nodes[replica].master = None;
        for s in 0..SLOTS as u16 {
            if self.owner(s) == Some(old) {
                self.assign(s, Some(replica));
            }
        }
        self.nodes[old].migrating.clear();
        self.nodes[old].importing.clear();
        for n in 0..self.nodes.len() {
            if self.nodes[n].master == Some(old) {
                self.nodes[n].master = Some(replica);
            }
        }
        if self.nodes[old].unreachable() {
            self.nodes[old].replaced_by = Some(replica);
        } else {
            self.nodes[old].master = Some(replica);
        }
        Some(old)
    }

    /// Every slot has a master that is not flagged `fail` (the full-coverage half of
    /// Redis's clusterUpdateState).
    pub fn covered(&self) -> bool {
        self.slots
            .iter()
            .all(|&n| n != UNASSIGNED && !self.nodes[n as usize].fail)
    }

    /// A majority of the masters serving slots is reachable (the other half of
    /// clusterUpdateState: a minority partition goes down).
    pub fn quorum(&self) -> bool {
        let mut serving = vec![false; self.nodes.len()];
        for &n in self.slots.iter() {
            if n != UNASSIGNED {
                serving[n as usize] = true;
            }
        }
        let size = serving.iter().filter(|&&s| s).count();
        let reachable = serving
            .iter()
            .enumerate()
            .filter(|(i, &s)| s && !self.nodes[*i].unreachable())
            .count();
        reachable > size / 2
    }

    /// The node's line of CLUSTER NODES as seen from `myself` (without the newline):
    /// `<id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv> <epoch> <link> <slots>`,
    /// plus, for `myself`, its open slots as `[slot->-id]` / `[slot-<-id]`.
    pub fn describe(&self, node: NodeIx, myself: NodeIx, now_ms: i64) -> String {
        let n = &self.nodes[node];
        let mut s = String::with_capacity(128);
        let _ = write!(s, "{} {}:{}@{} ", n.id, n.ip, n.port, n.cport);
        let mut flags: Vec<&str> = Vec::new();
        if node == myself {
            flags.push("myself");
        }
        flags.push(if n.is_master() { "master" } else { "slave" });
        if n.pfail {
            flags.push("fail?");
        }
        if n.fail {
            flags.push("fail");
        }
        s.push_str(&flags.join(","));
        s.push(' ');
        match n.master {
            Some(m) => s.push_str(&self.nodes[m].id),
            None => s.push('-'),
        }
        let (ping, pong) = if node == myself {
            (0, 0)
        } else if n.unreachable() {
            (n.since_ms, n.since_ms)
        } else {
            (0, now_ms)
        };
        let link = if node == myself || !n.unreachable() {
            "connected"
        } else {
            "disconnected"
        };
        let _ = write!(s, " {ping} {pong} {} {link}", self.shown_epoch(node));
        for (a, b) in self.ranges_of(node) {
            if a == b {
                let _ = write!(s, " {a}");
            } else {
                let _ = write!(s, " {a}-{b}");
            }
        }
        if node == myself {
            for s2 in 0..SLOTS as u16 {
                if let Some(&to) = n.migrating.get(&s2) {
                    let _ = write!(s, " [{s2}->-{}]", self.nodes[to].id);
                } else if let Some(&from) = n.importing.get(&s2) {
                    let _ = write!(s, " [{s2}-<-{}]", self.nodes[from].id);
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(masters: usize, replicas: usize) -> Topology {
        let n = masters * (1 + replicas);
        let addrs: Vec<(String, u16)> = (0..n)
            .map(|i| ("127.0.0.1".into(), 7000 + i as u16))
            .collect();
        let ids = (0..n).map(|i| format!("{i:040x}")).collect();
        Topology::create(&addrs, ids, masters, replicas)
    }

    #[test]
    fn slots_split_as_redis_cli_splits_them() {
        let t = layout(3, 1);
        assert_eq!(
            t.runs(),
            vec![(0, 5460, 0), (5461, 10922, 1), (10923, 16383, 2)]
        );
        // redis-cli --cluster create with 5 masters: 0-3276 3277-6553 6554-9829 9830-13106 13107-16383
        let t = layout(5, 0);
        let ends: Vec<u16> = t.runs().iter().map(|r| r.1).collect();
        assert_eq!(ends, vec![3276, 6553, 9829, 13106, 16383]);
        assert_eq!(layout(1, 0).runs(), vec![(0, 16383, 0)]);
    }

    #[test]
    fn replicas_are_assigned_as_redis_cli_assigns_them_on_one_host() {
        // 3 masters, 1 replica each: the spare nodes 3,4,5 rotated to 4,5,3.
        let t = layout(3, 1);
        let masters: Vec<Option<NodeIx>> = t.nodes.iter().map(|n| n.master).collect();
        assert_eq!(masters, vec![None, None, None, Some(2), Some(0), Some(1)]);
        let t = layout(3, 2);
        let masters: Vec<Option<NodeIx>> = t.nodes.iter().map(|n| n.master).collect();
        // spares 3..9 rotated: 4,5,6,7,8,3 -> m0: 4,5  m1: 6,7  m2: 8,3
        assert_eq!(
            masters,
            vec![
                None,
                None,
                None,
                Some(2),
                Some(0),
                Some(0),
                Some(1),
                Some(1),
                Some(2)
            ]
        );
        assert_eq!(t.current_epoch, 9);
        assert_eq!(t.shown_epoch(4), 1);
    }

    #[test]
    fn promotion_moves_slots_and_replicas_to_the_new_master() {
        let mut t = layout(3, 1);
        assert_eq!(t.promote(4), Some(0));
        assert_eq!(t.owner(0), Some(4));
        assert_eq!(t.nodes[0].master, Some(4));
        assert_eq!(t.nodes[4].config_epoch, 7);
        assert_eq!(t.current_epoch, 7);
        assert_eq!(t.replicas_of(4), vec![0]);
        assert!(!t.bump_epoch(4), "the only greatest epoch is not bumped");
        assert!(t.bump_epoch(1));
        assert_eq!(t.nodes[1].config_epoch, 8);
    }

    #[test]
    fn a_failed_master_uncovers_its_slots_and_a_minority_loses_quorum() {
        let mut t = layout(3, 1);
        assert!(t.covered() && t.quorum());
        t.nodes[0].fail = true;
        assert!(!t.covered());
        assert!(t.quorum());
        t.nodes[1].pfail = true;
        assert!(!t.quorum());
    }

    #[test]
    fn a_node_line_has_redis_fields() {
        let mut t = layout(3, 1);
        t.nodes[0].migrating.insert(7, 1);
        let line = t.describe(0, 0, 5);
        assert_eq!(
            line,
            format!(
                "{:040x} 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [7->-{:040x}]",
                0, 1
            )
        );
        let line = t.describe(4, 0, 5);
        assert_eq!(
            line,
            format!(
                "{:040x} 127.0.0.1:7004@17004 slave {:040x} 0 5 1 connected",
                4, 0
            )
        );
    }
}
