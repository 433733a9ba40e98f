//! The skiplist encoding: Redis's zskiplist with spans over a dense node arena, plus a
//! member -> node hash table.

use hashbrown::HashTable;

use super::order::cmp_entry;
use crate::types::set::{hash_bytes, DictModel};

pub(super) const NIL: u32 = u32::MAX;
const MAX_LEVEL: usize = 32;

#[derive(Clone, Copy)]
pub(super) struct Level {
    forward: u32,
    /// Ranks crossed by following `forward`, as Redis's span (wrapping arithmetic: a span
    /// into NIL is never read, as in Redis).
    span: u32,
}

/// A skiplist node. Level 0 is inline (its span is always 1), higher levels are boxed, so
/// three nodes in four (level 1) are one 48-byte slot plus the member.
#[derive(Clone)]
pub(super) struct Node {
    pub(super) ele: Box<[u8]>,
    pub(super) score: f64,
    /// The previous node, NIL for the first (Redis's NULL).
    pub(super) backward: u32,
    /// Level-0 forward.
    pub(super) next: u32,
    /// Levels 1 and up.
    pub(super) upper: Box<[Level]>,
}

/// The large encoding: Redis's zskiplist (zslInsert, zslDeleteNode, zslUpdateScore,
/// zslGetRank, zslGetElementByRank, zslDeleteRangeByRank) over nodes in a dense arena
/// addressed by u32 (slot 0 is the 32-level header; a freed slot is filled by moving the last
/// node into it), and a hash table from member to slot.
#[derive(Clone)]
pub struct SkipList {
    pub(super) nodes: Vec<Node>,
    pub(super) index: HashTable<u32>,
    pub(super) tail: u32,
    pub(super) level: usize,
    /// Linked nodes (zsl->length).
    pub(super) length: usize,
    /// What Redis's dict for the same operations would look like, for MEMORY USAGE.
    pub(super) dict: DictModel,
}

/// zslRandomLevel: each further level with probability 1/4, at most 32.
fn random_level() -> usize {
    let mut level = 1;
    while level < MAX_LEVEL && fastrand::u32(..) < u32::MAX / 4 {
        level += 1;
    }
    level
}

impl SkipList {
    pub(super) fn new() -> Self {
        let header = Node {
            ele: Box::default(),
            score: 0.0,
            backward: NIL,
            next: NIL,
            upper: vec![
                Level {
                    forward: NIL,
                    span: 0
                };
                MAX_LEVEL - 1
            ]
            .into(),
        };
        SkipList {
            nodes: vec![header],
            index: HashTable::new(),
            tail: NIL,
            level: 1,
            length: 0,
            dict: DictModel::default(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.nodes.len() - 1
    }

    #[inline]
    pub(super) fn fwd(&self, x: u32, i: usize) -> u32 {
        let n = &self.nodes[x as usize];
        if i == 0 {
            n.next
        } else {
            n.upper[i - 1].forward
        }
    }

    #[inline]
    pub(super) fn span(&self, x: u32, i: usize) -> u32 {
        if i == 0 {
            1
        } else {
            self.nodes[x as usize].upper[i - 1].span
        }
    }

    #[inline]
    fn set_fwd(&mut self, x: u32, i: usize, to: u32) {
        let n = &mut self.nodes[x as usize];
        if i == 0 {
            n.next = to;
        } else {
            n.upper[i - 1].forward = to;
        }
    }

    #[inline]
    fn set_span(&mut self, x: u32, i: usize, span: u32) {
        if i > 0 {
            self.nodes[x as usize].upper[i - 1].span = span;
        }
    }

    fn node_level(&self, x: u32) -> usize {
        1 + self.nodes[x as usize].upper.len()
    }

    pub(super) fn find(&self, member: &[u8]) -> Option<u32> {
        let nodes = &self.nodes;
        self.index
            .find(hash_bytes(member), |&j| *nodes[j as usize].ele == *member)
            .copied()
    }

    /// The last node before (score, ele) at every level (zslInsert/zslDelete's `update`).
    fn find_update(&self, score: f64, ele: &[u8]) -> [u32; MAX_LEVEL] {
        let mut update = [0u32; MAX_LEVEL];
        let mut h = 0u32;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(h, i);
                if f != NIL && {
                    let n = &self.nodes[f as usize];
                    cmp_entry(n.score, &n.ele, score, ele).is_lt()
                } {
                    h = f;
                } else {
                    break;
                }
            }
            update[i] = h;
        }
        update
    }

    /// zslInsert for node `x`, already in the arena with its score, member and level.
    fn link(&mut self, x: u32) {
        let mut update = [0u32; MAX_LEVEL];
        let mut rank = [0u32; MAX_LEVEL];
        {
            let node = &self.nodes[x as usize];
            let (score, ele) = (node.score, &node.ele[..]);
            let mut h = 0u32;
            for i in (0..self.level).rev() {
                rank[i] = if i == self.level - 1 { 0 } else { rank[i + 1] };
                loop {
                    let f = self.fwd(h, i);
                    if f != NIL && {
                        let n = &self.nodes[f as usize];
                        cmp_entry(n.score, &n.ele, score, ele).is_lt()
                    } {
                        rank[i] = rank[i].wrapping_add(self.span(h, i));
                        h = f;
                    } else {
                        break;
                    }
                }
                update[i] = h;
            }
        }
        let level = self.node_level(x);
        if level > self.level {
            for i in self.level..level {
                rank[i] = 0;
                update[i] = 0;
                self.set_span(0, i, self.length as u32);
            }
            self.level = level;
        }
        for i in 0..level {
            let u = update[i];
            let next = self.fwd(u, i);
            self.set_fwd(x, i, next);
            self.set_fwd(u, i, x);
            let d = rank[0].wrapping_sub(rank[i]);
            self.set_span(x, i, self.span(u, i).wrapping_sub(d));
            self.set_span(u, i, d.wrapping_add(1));
        }
        for (i, &u) in update.iter().enumerate().take(self.level).skip(level) {
            self.set_span(u, i, self.span(u, i).wrapping_add(1));
        }
        let back = if update[0] == 0 { NIL } else { update[0] };
        self.nodes[x as usize].backward = back;
        let next = self.nodes[x as usize].next;
        if next != NIL {
            self.nodes[next as usize].backward = x;
        } else {
            self.tail = x;
        }
        self.length += 1;
    }

    /// zslDeleteNode: unlink `x` given its `update` (it stays in the arena).
    fn unlink(&mut self, x: u32, update: &[u32; MAX_LEVEL]) {
        for (i, &u) in update.iter().enumerate().take(self.level) {
            if self.fwd(u, i) == x {
                let span = self
                    .span(u, i)
                    .wrapping_add(self.span(x, i))
                    .wrapping_sub(1);
                let next = self.fwd(x, i);
                self.set_span(u, i, span);
                self.set_fwd(u, i, next);
            } else {
                self.set_span(u, i, self.span(u, i).wrapping_sub(1));
            }
        }
        let (next, back) = {
            let n = &self.nodes[x as usize];
            (n.next, n.backward)
        };
        if next != NIL {
            self.nodes[next as usize].backward = back;
        } else {
            self.tail = back;
        }
        while self.level > 1 && self.fwd(0, self.level - 1) == NIL {
            self.level -= 1;
        }
        self.length -= 1;
    }

    /// A new node at the end of the arena with a random level, then linked (no hash entry).
    pub(super) fn push_and_link(&mut self, member: &[u8], score: f64) -> u32 {
        let x = self.nodes.len() as u32;
        assert!(x < NIL, "sorted set too large");
        self.nodes.push(Node {
            ele: member.into(),
            score,
            backward: NIL,
            next: NIL,
            upper: upper_levels(random_level()),
        });
        self.link(x);
        let nodes = &self.nodes;
        self.index.insert_unique(hash_bytes(member), x, |&j| {
            hash_bytes(&nodes[j as usize].ele)
        });
        x
    }

    /// zsetAdd's new-member path: dictAdd (a rehash step, maybe an expand) and zslInsert.
    pub(super) fn insert_new(&mut self, member: &[u8], score: f64) {
        self.dict.rehash_step();
        self.dict.expand_if_needed(self.len());
        self.push_and_link(member, score);
    }

    /// zslUpdateScore: in place when the node keeps its position, else unlinked and
    /// relinked (with a new random level, as Redis makes a new node).
    pub(super) fn update_score(&mut self, x: u32, score: f64) {
        let (back, next) = {
            let n = &self.nodes[x as usize];
            (n.backward, n.next)
        };
        if (back == NIL || self.nodes[back as usize].score < score)
            && (next == NIL || self.nodes[next as usize].score > score)
        {
            self.nodes[x as usize].score = score;
            return;
        }
        let update = {
            let n = &self.nodes[x as usize];
            self.find_update(n.score, &n.ele)
        };
        self.unlink(x, &update);
        let n = &mut self.nodes[x as usize];
        n.score = score;
        n.upper = upper_levels(random_level());
        self.link(x);
    }

    /// ZREM's path: dictUnlink (a rehash step), zslDelete, and the slot freed.
    pub(super) fn delete(&mut self, member: &[u8]) -> bool {
        self.dict.rehash_step();
        let nodes = &self.nodes;
        let Ok(entry) = self
            .index
            .find_entry(hash_bytes(member), |&j| *nodes[j as usize].ele == *member)
        else {
            return false;
        };
        let (x, _) = entry.remove();
        let update = {
            let n = &self.nodes[x as usize];
            self.find_update(n.score, &n.ele)
        };
        self.unlink(x, &update);
        self.free_slot(x);
        true
    }

    /// Drop the hash entry pointing at slot `x`.
    fn unindex(&mut self, x: u32) {
        let h = hash_bytes(&self.nodes[x as usize].ele);
        if let Ok(e) = self.index.find_entry(h, |&j| j == x) {
            e.remove();
        }
    }

    /// Free unlinked, unindexed slot `x` by moving the arena's last node into it; returns
    /// (old slot, new slot) of the node that moved, so callers holding slots can follow it.
    fn free_slot(&mut self, x: u32) -> Option<(u32, u32)> {
        let last = (self.nodes.len() - 1) as u32;
        if x == last {
            self.nodes.pop();
            return None;
        }
        let update = {
            let n = &self.nodes[last as usize];
            self.find_update(n.score, &n.ele)
        };
        for (i, &u) in update.iter().enumerate().take(self.node_level(last)) {
            debug_assert_eq!(self.fwd(u, i), last);
            self.set_fwd(u, i, x);
        }
        let next = self.nodes[last as usize].next;
        if next != NIL {
            self.nodes[next as usize].backward = x;
        } else {
            self.tail = x;
        }
        let h = hash_bytes(&self.nodes[last as usize].ele);
        if let Some(slot) = self.index.find_mut(h, |&j| j == last) {
            *slot = x;
        }
        self.nodes.swap_remove(x as usize);
        Some((last, x))
    }

    /// zslDeleteRangeByRank on 0-based ranks `start..end` (each a dictDelete too).
    pub(super) fn delete_ranks(&mut self, start: usize, end: usize) {
        let (start, end) = (start as u32 + 1, end as u32);
        let mut update = [0u32; MAX_LEVEL];
        let mut traversed = 0u32;
        let mut h = 0u32;
        for i in (0..self.level).rev() {
            while self.fwd(h, i) != NIL && traversed + self.span(h, i) < start {
                traversed += self.span(h, i);
                h = self.fwd(h, i);
            }
            update[i] = h;
        }
        traversed += 1;
        let mut x = self.fwd(update[0], 0);
        while x != NIL && traversed <= end {
            let mut next = self.nodes[x as usize].next;
            self.dict.rehash_step();
            self.unlink(x, &update);
            self.unindex(x);
            if let Some((from, to)) = self.free_slot(x) {
                for u in update.iter_mut() {
                    if *u == from {
                        *u = to;
                    }
                }
                if next == from {
                    next = to;
                }
            }
            traversed += 1;
            x = next;
        }
    }

    /// zslGetRank, 0-based, for linked node `x`.
    pub(super) fn rank_of(&self, x: u32) -> usize {
        let n = &self.nodes[x as usize];
        self.count_prefix(|m| cmp_entry(m.score, &m.ele, n.score, &n.ele).is_le()) - 1
    }

    /// zslGetElementByRank, 0-based; `r` must be below the length.
    pub(super) fn at_rank(&self, r: usize) -> u32 {
        let target = r as u32 + 1;
        let mut traversed = 0u32;
        let mut h = 0u32;
        for i in (0..self.level).rev() {
            while self.fwd(h, i) != NIL && traversed + self.span(h, i) <= target {
                traversed += self.span(h, i);
                h = self.fwd(h, i);
            }
            if traversed == target {
                return h;
            }
        }
        NIL
    }

    /// How many leading members satisfy `pred` (which must hold for a prefix of the order),
    /// by descending the levels as Redis's range searches do: O(log n).
    pub(super) fn count_prefix(&self, pred: impl Fn(&Node) -> bool) -> usize {
        let mut rank = 0usize;
        let mut h = 0u32;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(h, i);
                if f != NIL && pred(&self.nodes[f as usize]) {
                    rank += self.span(h, i) as usize;
                    h = f;
                } else {
                    break;
                }
            }
        }
        rank
    }

    /// Give memory back once the set has shrunk to a quarter of its capacity.
    pub(super) fn shrink(&mut self) {
        let n = self.nodes.len();
        if n > 16 && n * 4 < self.nodes.capacity() {
            self.nodes.shrink_to(n * 2);
            let nodes = &self.nodes;
            self.index
                .shrink_to(n * 2, |&j| hash_bytes(&nodes[j as usize].ele));
        }
    }
}

fn upper_levels(level: usize) -> Box<[Level]> {
    vec![
        Level {
            forward: NIL,
            span: 0
        };
        level - 1
    ]
    .into()
}
