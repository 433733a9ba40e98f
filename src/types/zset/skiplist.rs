//! The skiplist encoding: Redis's zskiplist with spans over a dense node arena, plus a
//! member -> node hash table.

use std::ops::{Index, IndexMut};

use hashbrown::HashTable;

use super::member::Member;
use super::order::cmp_entry;
use crate::types::set::{hash_bytes, DictModel};

pub(super) const NIL: u32 = u32::MAX;
/// An inline level slot the node does not have (its level is lower).
const ABSENT: u32 = u32::MAX - 1;
/// The `backward` of a freed arena slot, waiting on the free list.
const FREE: u32 = u32::MAX - 1;
/// A node id is its level class in the top two bits and its slot in that class's arena.
const CLASS_SHIFT: u32 = 30;
const SLOT_MASK: u32 = (1 << CLASS_SHIFT) - 1;
const CLASSES: usize = 4;
const MAX_LEVEL: usize = 32;
/// Levels above 0 stored inside the node: with level 0 that covers every node but one in 64,
/// so a descent reads each node it visits from one cache line.
const INLINE: usize = 2;

#[derive(Clone, Copy)]
pub(super) struct Level {
    forward: u32,
    /// Ranks crossed by following `forward`, as Redis's span (wrapping arithmetic: a span
    /// into NIL is never read, as in Redis).
    span: u32,
}

const ABSENT_LEVEL: Level = Level {
    forward: ABSENT,
    span: 0,
};

/// A skiplist node: one 64-byte, cache-line-aligned slot holding the score, the links of
/// levels 0 to 2 (level 0's span is always 1), the member (inline up to 15 bytes, else
/// boxed) and any higher levels' box, so a descent, which compares scores, and a lookup,
/// which compares members, touch one line per node as Redis's
/// zskiplistNode with its inline level array does (a node apart from its levels costs a
/// second cache miss at every step, which showed as 30-50% of ZADD, ZREM and ZRANK time on
/// a 1,000,000-member set).
#[derive(Clone)]
#[repr(C, align(64))]
pub(super) struct Node {
    pub(super) score: f64,
    /// The previous node, NIL for the first (Redis's NULL); FREE on a freed slot.
    pub(super) backward: u32,
    /// Level-0 forward.
    pub(super) next: u32,
    /// Levels 1 and 2; `forward` is ABSENT above the node's level.
    inline: [Level; INLINE],
    /// Levels 3 and up (empty, so not allocated, for 63 nodes in 64).
    overflow: Box<[Level]>,
    /// Inline when it fits (see [`Member`]).
    pub(super) ele: Member,
}

const _: () = assert!(std::mem::size_of::<Node>() == 64);

impl Node {
    /// A node of `level` levels, not linked.
    fn new(ele: Member, score: f64, level: usize) -> Node {
        let mut n = Node {
            score,
            backward: NIL,
            next: NIL,
            inline: [ABSENT_LEVEL; INLINE],
            overflow: Box::default(),
            ele,
        };
        n.set_level(level);
        n
    }

    /// Give the node `level` unlinked levels (zslCreateNode's level array).
    fn set_level(&mut self, level: usize) {
        for (j, l) in self.inline.iter_mut().enumerate() {
            l.forward = if j + 1 < level { NIL } else { ABSENT };
            l.span = 0;
        }
        self.overflow = if level > 1 + INLINE {
            vec![
                Level {
                    forward: NIL,
                    span: 0
                };
                level - 1 - INLINE
            ]
            .into()
        } else {
            Box::default()
        };
    }

    /// The node's level count (zslRandomLevel's draw).
    pub(super) fn level(&self) -> usize {
        if !self.overflow.is_empty() {
            return 1 + INLINE + self.overflow.len();
        }
        1 + self.inline.iter().filter(|l| l.forward != ABSENT).count()
    }

    /// Level `i` (1 and up) of a node that has it.
    #[inline]
    fn upper(&self, i: usize) -> &Level {
        if i <= INLINE {
            &self.inline[i - 1]
        } else {
            &self.overflow[i - 1 - INLINE]
        }
    }

    #[inline]
    fn upper_mut(&mut self, i: usize) -> &mut Level {
        if i <= INLINE {
            &mut self.inline[i - 1]
        } else {
            &mut self.overflow[i - 1 - INLINE]
        }
    }
}

/// The nodes, in one dense arena per level class (levels 4 and up with the header, 3, 2, 1),
/// as jemalloc's size classes keep Redis's nodes of each level together: a descent's upper
/// levels visit only higher nodes, which then share few cache lines and pages (1 MB for the
/// 1 in 64 nodes of level 4 and up in a 1,000,000-member set) instead of one page each.
#[derive(Clone, Default)]
pub(super) struct Arena {
    class: [Vec<Node>; CLASSES],
    /// Freed slots per class (node ids), reused before the class's arena grows.
    free: [Vec<u32>; CLASSES],
}

/// The class of a node of `level` levels; class 0 holds the header, so its id is 0.
fn class_of(level: usize) -> usize {
    CLASSES - level.min(CLASSES)
}

fn id(class: usize, slot: usize) -> u32 {
    ((class as u32) << CLASS_SHIFT) | slot as u32
}

impl Index<usize> for Arena {
    type Output = Node;
    #[inline]
    fn index(&self, x: usize) -> &Node {
        let x = x as u32;
        &self.class[(x >> CLASS_SHIFT) as usize][(x & SLOT_MASK) as usize]
    }
}

impl IndexMut<usize> for Arena {
    #[inline]
    fn index_mut(&mut self, x: usize) -> &mut Node {
        let x = x as u32;
        &mut self.class[(x >> CLASS_SHIFT) as usize][(x & SLOT_MASK) as usize]
    }
}

impl Arena {
    /// Store `node` in a free slot of its class, or a new one; its id.
    fn alloc(&mut self, node: Node) -> u32 {
        let c = class_of(node.level());
        if let Some(x) = self.free[c].pop() {
            self[x as usize] = node;
            return x;
        }
        let slot = self.class[c].len();
        assert!(slot < (FREE & SLOT_MASK) as usize, "sorted set too large");
        self.class[c].push(node);
        id(c, slot)
    }

    /// Put unlinked node `x`'s slot on its class's free list.
    fn release(&mut self, x: u32) {
        self.free[(x >> CLASS_SHIFT) as usize].push(x);
    }

    /// Slots in use or free, the header's included.
    #[cfg(test)]
    pub(super) fn slots(&self) -> usize {
        self.class.iter().map(Vec::len).sum()
    }

    /// Freed slots waiting for reuse.
    pub(super) fn holes(&self) -> usize {
        self.free.iter().map(Vec::len).sum()
    }

    /// The freed slots' ids.
    #[cfg(test)]
    pub(super) fn free_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.free.iter().flatten().copied()
    }

    /// Every slot's node: the header, members and freed slots (empty members).
    pub(super) fn iter(&self) -> impl Iterator<Item = &Node> {
        self.class.iter().flatten()
    }

    /// The node in the i-th slot after the header, counting across classes (a freed slot if
    /// there are holes): with none, a uniform i is a uniform member.
    pub(super) fn nth(&self, mut i: usize) -> Option<&Node> {
        for (c, v) in self.class.iter().enumerate() {
            let first = usize::from(c == 0);
            let n = v.len() - first.min(v.len());
            if i < n {
                return Some(&v[first + i]);
            }
            i -= n;
        }
        None
    }
}

/// The large encoding: Redis's zskiplist (zslInsert, zslDeleteNode, zslUpdateScore,
/// zslGetRank, zslGetElementByRank, zslDeleteRangeByRank) over nodes in dense arenas
/// addressed by u32 ids (id 0 is the 32-level header), and a hash table from member to id.
/// A freed slot goes on a free list for the next insert (moving the arena's last node into it
/// instead would cost a second descent per delete to find that node's predecessors); once
/// holes outnumber members the arena is rebuilt in rank order.
#[derive(Clone)]
pub struct SkipList {
    pub(super) nodes: Arena,
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
        let header = Node::new(Member::default(), 0.0, MAX_LEVEL);
        SkipList {
            nodes: {
                let mut a = Arena::default();
                a.alloc(header);
                a
            },
            index: HashTable::new(),
            tail: NIL,
            level: 1,
            length: 0,
            dict: DictModel::default(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.length
    }

    #[inline]
    pub(super) fn fwd(&self, x: u32, i: usize) -> u32 {
        let n = &self.nodes[x as usize];
        if i == 0 {
            n.next
        } else {
            n.upper(i).forward
        }
    }

    #[inline]
    pub(super) fn span(&self, x: u32, i: usize) -> u32 {
        if i == 0 {
            1
        } else {
            self.nodes[x as usize].upper(i).span
        }
    }

    #[inline]
    fn set_fwd(&mut self, x: u32, i: usize, to: u32) {
        let n = &mut self.nodes[x as usize];
        if i == 0 {
            n.next = to;
        } else {
            n.upper_mut(i).forward = to;
        }
    }

    #[inline]
    fn set_span(&mut self, x: u32, i: usize, span: u32) {
        if i > 0 {
            self.nodes[x as usize].upper_mut(i).span = span;
        }
    }

    fn node_level(&self, x: u32) -> usize {
        self.nodes[x as usize].level()
    }

    /// Start loading the node a descent at `h` on level `i` reads next if its comparison
    /// there fails (`h`'s forward one level down), while it waits for the node it compares
    /// against: two cache misses in flight instead of one after the other.
    #[inline(always)]
    fn prefetch_below(&self, h: u32, i: usize) {
        #[cfg(target_arch = "x86_64")]
        if i > 0 {
            let f = self.fwd(h, i - 1);
            if f < ABSENT {
                let p: *const Node = &self.nodes[f as usize];
                // SAFETY: a prefetch is a hint; it reads nothing and cannot fault.
                #[allow(unused_unsafe)]
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                        p.cast(),
                    )
                };
            }
        }
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
                self.prefetch_below(h, i);
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
                    self.prefetch_below(h, i);
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
        let node = Node::new(member.into(), score, random_level());
        let x = self.nodes.alloc(node);
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
    /// relinked. Redis relinks a new node with a fresh random level; this one keeps its level
    /// (drawn the same way, independent of scores, so the distribution is the same), and so
    /// its slot in its level class.
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

    /// Free unlinked, unindexed slot `x`: its boxes dropped, the slot on the free list.
    fn free_slot(&mut self, x: u32) {
        let n = &mut self.nodes[x as usize];
        n.ele = Member::default();
        n.overflow = Box::default();
        n.backward = FREE;
        self.nodes.release(x);
    }

    /// True if slot `x` holds a member (not the header, not freed).
    #[cfg(test)]
    pub(super) fn is_member_slot(&self, x: usize) -> bool {
        x != 0 && self.nodes[x].backward != FREE
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
            let next = self.nodes[x as usize].next;
            self.dict.rehash_step();
            self.unlink(x, &update);
            self.unindex(x);
            self.free_slot(x);
            traversed += 1;
            x = next;
        }
    }

    /// zslGetRank, 0-based, for linked node `x`.
    /// Like Redis's, it stops on reaching `x`, skipping the levels below.
    pub(super) fn rank_of(&self, x: u32) -> usize {
        let n = &self.nodes[x as usize];
        let mut rank = 0usize;
        let mut h = 0u32;
        for i in (0..self.level).rev() {
            loop {
                let f = self.fwd(h, i);
                self.prefetch_below(h, i);
                if f != NIL && {
                    // Reaching `x` itself needs no comparison of its member with itself.
                    f == x || {
                        let m = &self.nodes[f as usize];
                        cmp_entry(m.score, &m.ele, n.score, &n.ele).is_le()
                    }
                } {
                    rank += self.span(h, i) as usize;
                    h = f;
                } else {
                    break;
                }
            }
            if h == x {
                break;
            }
        }
        rank - 1
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
                self.prefetch_below(h, i);
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

    /// Give memory back: rebuild the arenas once holes outnumber members (so a delete's
    /// share of the rebuild is O(1)), then shrink each once it is under a quarter full.
    pub(super) fn shrink(&mut self) {
        let holes = self.nodes.holes();
        if holes > 16 && holes > self.length {
            self.compact();
        }
        for v in &mut self.nodes.class {
            let n = v.len();
            if n > 16 && n * 4 < v.capacity() {
                v.shrink_to(n * 2);
            }
        }
        let n = self.length;
        if n > 16 && n * 4 < self.index.capacity() {
            let nodes = &self.nodes;
            self.index
                .shrink_to(n * 2, |&j| hash_bytes(&nodes[j as usize].ele));
        }
    }

    /// Move every member into fresh arenas in rank order (no holes, neighbours adjacent),
    /// renumbering the links and the hash table; spans are unchanged.
    fn compact(&mut self) {
        let mut map: [Vec<u32>; CLASSES] = Default::default();
        for (m, v) in map.iter_mut().zip(&self.nodes.class) {
            *m = vec![NIL; v.len()];
        }
        let mut fresh = Arena::default();
        let mut x = 0u32;
        while x != NIL {
            let n = std::mem::replace(
                &mut self.nodes[x as usize],
                Node::new(Member::default(), 0.0, 1),
            );
            let next = n.next;
            map[(x >> CLASS_SHIFT) as usize][(x & SLOT_MASK) as usize] = fresh.alloc(n);
            x = next;
        }
        let remap = |f: u32| {
            if f == NIL || f == ABSENT {
                f
            } else {
                map[(f >> CLASS_SHIFT) as usize][(f & SLOT_MASK) as usize]
            }
        };
        for n in fresh.class.iter_mut().flatten() {
            n.backward = remap(n.backward);
            n.next = remap(n.next);
            for l in n.inline.iter_mut().chain(n.overflow.iter_mut()) {
                l.forward = remap(l.forward);
            }
        }
        for slot in self.index.iter_mut() {
            *slot = remap(*slot);
        }
        self.tail = remap(self.tail);
        self.nodes = fresh;
    }
}
