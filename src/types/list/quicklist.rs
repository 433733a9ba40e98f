//! The node table behind [`List`]: resolving indexes to (node, offset), and quicklist.c's
//! insert, split, merge and bulk-delete rules applied across nodes.

use std::collections::VecDeque;

use super::entry::{decode, Encoded};
use super::node::{allow_insert, allow_merge, clamp_fill, is_large, Node};
use super::List;

impl List {
    pub(super) fn note_fill(&mut self, fill: i32) -> i32 {
        let fill = clamp_fill(fill);
        self.inner.fill = fill;
        fill
    }

    /// Adds a node at `at`. The node table grows by a quarter at a time (one slot for a
    /// list's first node) rather than doubling, so it costs about what Redis's 40-byte
    /// quicklistNode structs do, still amortised O(1).
    pub(super) fn insert_node(&mut self, at: usize, node: Node) {
        let nodes = &mut self.inner.nodes;
        if nodes.len() == nodes.capacity() {
            nodes.reserve_exact((nodes.len() / 4).max(1));
        }
        nodes.insert(at, node);
    }

    /// Drops node `i`, giving back deque memory once it is mostly unused.
    pub(super) fn remove_node(&mut self, i: usize) {
        let nodes = &mut self.inner.nodes;
        nodes.remove(i);
        Self::shrink_nodes(nodes);
    }

    pub(super) fn shrink_nodes(nodes: &mut VecDeque<Node>) {
        if nodes.capacity() > 8 && nodes.len() * 4 < nodes.capacity() {
            nodes.shrink_to(nodes.len() * 2);
        }
    }

    /// Resolves a Redis index (negative from the tail) to an in-range position.
    pub(super) fn normalize(&self, index: i64) -> Option<usize> {
        let len = self.inner.len as i64;
        let i = if index < 0 { index + len } else { index };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// (node, offset in node) of position `i` (< len), walking node counts from the nearer end.
    pub(super) fn locate(&self, i: usize) -> (usize, usize) {
        let nodes = &self.inner.nodes;
        if i < self.inner.len / 2 {
            let mut acc = 0;
            for (ni, node) in nodes.iter().enumerate() {
                let c = node.count as usize;
                if i < acc + c {
                    return (ni, i - acc);
                }
                acc += c;
            }
        } else {
            let mut from_tail = self.inner.len - 1 - i;
            for (ni, node) in nodes.iter().enumerate().rev() {
                let c = node.count as usize;
                if from_tail < c {
                    return (ni, c - 1 - from_tail);
                }
                from_tail -= c;
            }
        }
        unreachable!("position {i} outside a list of {}", self.inner.len)
    }

    /// Removes entry `off` of node `ni`, and the node if that empties it.
    pub(super) fn delete_entry(&mut self, ni: usize, off: usize) {
        let node = &mut self.inner.nodes[ni];
        if node.count == 1 {
            self.remove_node(ni);
        } else {
            let pos = node.seek(off);
            let n = decode(&node.buf, pos).1;
            node.remove_bytes(pos..pos + n, 1);
        }
        self.inner.len -= 1;
    }

    /// quicklist.c `_quicklistInsert`: adds `value` next to entry `off` of node `ni`, into
    /// that node when it has room, else into a neighbour with room at the matching edge, else
    /// a new node at an edge, else by splitting the node and merging what fits.
    pub(super) fn insert_at_entry(
        &mut self,
        ni: usize,
        off: usize,
        after: bool,
        value: &[u8],
        fill: i32,
    ) {
        let sz = value.len();
        let enc = Encoded::new(value);
        let nodes = &self.inner.nodes;
        let count = nodes[ni].count as usize;
        let full = !allow_insert(&nodes[ni], fill, sz);
        let at_tail = after && off == count - 1;
        let at_head = !after && off == 0;
        let avail_next = at_tail && ni + 1 < nodes.len() && allow_insert(&nodes[ni + 1], fill, sz);
        let avail_prev = at_head && ni > 0 && allow_insert(&nodes[ni - 1], fill, sz);
        self.inner.len += 1;

        if is_large(sz) {
            let plain = Node::with_entry(&enc, true);
            if self.inner.nodes[ni].plain || at_tail || at_head {
                self.insert_node(if after { ni + 1 } else { ni }, plain);
            } else {
                let piece = self.inner.nodes[ni].split(off, after);
                if after {
                    self.insert_node(ni + 1, plain);
                    self.insert_node(ni + 2, piece);
                } else {
                    self.insert_node(ni, piece);
                    self.insert_node(ni + 1, plain);
                }
            }
            return;
        }

        let nodes = &mut self.inner.nodes;
        if !full {
            let node = &mut nodes[ni];
            let mut pos = node.seek(off);
            if after {
                pos += decode(&node.buf, pos).1;
            }
            node.insert_entry(pos, &enc);
        } else if avail_next {
            nodes[ni + 1].insert_entry(0, &enc);
        } else if avail_prev {
            nodes[ni - 1].push_entry(&enc);
        } else if at_tail || at_head {
            self.insert_node(
                if after { ni + 1 } else { ni },
                Node::with_entry(&enc, false),
            );
        } else {
            let mut piece = nodes[ni].split(off, after);
            if after {
                piece.insert_entry(0, &enc);
                self.insert_node(ni + 1, piece);
                self.merge_around(ni, fill);
            } else {
                piece.push_entry(&enc);
                self.insert_node(ni, piece);
                self.merge_around(ni + 1, fill);
            }
        }
    }

    /// Moves node `i + 1`'s entries into node `i`.
    fn merge_next_into(&mut self, i: usize) {
        let right = self
            .inner
            .nodes
            .remove(i + 1)
            .expect("merging with a neighbour");
        self.inner.nodes[i].absorb(right);
    }

    /// quicklist.c `_quicklistMergeNodes`: after a split, tries (prev-prev, prev),
    /// (next, next-next), (prev, center) and (center, next), in that order.
    fn merge_around(&mut self, mut c: usize, fill: i32) {
        let can = |s: &Self, i: usize, j: usize| {
            let nodes = &s.inner.nodes;
            j < nodes.len() && allow_merge(&nodes[i], &nodes[j], fill)
        };
        if c >= 2 && can(self, c - 1, c - 2) {
            self.merge_next_into(c - 2);
            c -= 1;
        }
        if can(self, c + 1, c + 2) {
            self.merge_next_into(c + 1);
        }
        if c >= 1 && can(self, c, c - 1) {
            self.merge_next_into(c - 1);
            c -= 1;
        }
        if can(self, c, c + 1) {
            self.merge_next_into(c);
        }
    }

    /// Drops emptied nodes in `lo..=hi` and merges every run of neighbours there (and one
    /// node either side) that fits the fill, in one pass.
    pub(super) fn compact(&mut self, lo: usize, hi: usize) {
        let fill = self.inner.fill;
        let nodes = &mut self.inner.nodes;
        if nodes.is_empty() {
            return;
        }
        let a = lo.saturating_sub(1);
        let b = (hi + 1).min(nodes.len() - 1);
        // Nodes a..=w are kept; the slots between w and r hold emptied leftovers.
        let mut w: Option<usize> = None;
        for r in a..=b {
            if nodes[r].count == 0 {
                continue;
            }
            match w {
                Some(wi) if allow_merge(&nodes[wi], &nodes[r], fill) => {
                    let right = std::mem::replace(
                        &mut nodes[r],
                        Node {
                            buf: Vec::new(),
                            count: 0,
                            plain: false,
                        },
                    );
                    nodes[wi].absorb(right);
                }
                _ => {
                    let wi = w.map_or(a, |x| x + 1);
                    nodes.swap(wi, r);
                    w = Some(wi);
                }
            }
        }
        let keep_end = w.map_or(a, |x| x + 1);
        nodes.drain(keep_end..=b);
        Self::shrink_nodes(nodes);
    }

    /// Removes the first `n` (≤ len) elements.
    pub(super) fn delete_front(&mut self, mut n: usize) {
        self.inner.len -= n;
        while n > 0 {
            let node = self.inner.nodes.front_mut().expect("len counts the nodes");
            let c = node.count as usize;
            if c <= n {
                self.inner.nodes.pop_front();
                n -= c;
            } else {
                let pos = node.seek(n);
                node.remove_bytes(0..pos, n);
                n = 0;
            }
        }
        Self::shrink_nodes(&mut self.inner.nodes);
    }

    /// Removes the last `n` (≤ len) elements.
    pub(super) fn delete_back(&mut self, mut n: usize) {
        self.inner.len -= n;
        while n > 0 {
            let node = self.inner.nodes.back_mut().expect("len counts the nodes");
            let c = node.count as usize;
            if c <= n {
                self.inner.nodes.pop_back();
                n -= c;
            } else {
                let pos = node.seek(c - n);
                let end = node.buf.len();
                node.remove_bytes(pos..end, n);
                n = 0;
            }
        }
        Self::shrink_nodes(&mut self.inner.nodes);
    }

    /// LRANGE/LTRIM index normalisation: the inclusive window, or `None` when it is empty.
    pub(super) fn window(len: i64, start: i64, stop: i64) -> Option<(i64, i64)> {
        let mut start = if start < 0 { start + len } else { start };
        let stop = if stop < 0 { stop + len } else { stop };
        if start < 0 {
            start = 0;
        }
        if start > stop || start >= len {
            None
        } else {
            Some((start, stop.min(len - 1)))
        }
    }
}
