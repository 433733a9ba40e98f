//! Reading entries in place: [`Entry`] and its [`Fields`], and [`Range`], the iteration over
//! the nodes in either direction that XRANGE, XREAD and the group reads share
//! (streamIteratorGetID / streamIteratorGetField).

use std::collections::btree_map;
use std::collections::BTreeMap;

use crate::types::list::Elem;

use super::id::StreamId;
use super::node::{self, Node, FLAG_DELETED, FLAG_SAMEFIELDS};

/// One entry as stored: its ID and its field/value pairs, read in place.
#[derive(Clone, Copy)]
pub struct Entry<'a> {
    /// The entry's ID.
    pub id: StreamId,
    lp: &'a [u8],
    numfields: usize,
    same: bool,
    master_fields: usize,
    body: usize,
}

impl<'a> Entry<'a> {
    /// The number of field/value pairs.
    pub fn num_fields(&self) -> usize {
        self.numfields
    }

    /// The field/value pairs in order.
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            lp: self.lp,
            left: self.numfields,
            same: self.same,
            master: self.master_fields,
            p: self.body,
        }
    }
}

impl std::fmt::Debug for Entry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} ", self.id)?;
        f.debug_list().entries(self.fields()).finish()
    }
}

/// An entry's field/value pairs (streamIteratorGetField).
pub struct Fields<'a> {
    lp: &'a [u8],
    left: usize,
    same: bool,
    master: usize,
    p: usize,
}

impl<'a> Iterator for Fields<'a> {
    type Item = (Elem<'a>, Elem<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let field = if self.same {
            let f = node::elem(self.lp, self.master);
            self.master += list_elem_len(self.lp, self.master);
            f
        } else {
            let f = node::elem(self.lp, self.p);
            self.p += list_elem_len(self.lp, self.p);
            f
        };
        let value = node::elem(self.lp, self.p);
        self.p += list_elem_len(self.lp, self.p);
        Some((field, value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

fn list_elem_len(lp: &[u8], p: usize) -> usize {
    crate::types::list::entry::decode(lp, p).1
}

/// Entries between two IDs in either direction (streamIteratorGetID), tombstones skipped.
pub struct Range<'a> {
    nodes: btree_map::Range<'a, u128, Node>,
    cur: Option<Cursor<'a>>,
    start: StreamId,
    end: StreamId,
    rev: bool,
    done: bool,
}

struct Cursor<'a> {
    node: &'a Node,
    master: StreamId,
    master_nf: usize,
    master_fields: usize,
    /// Forward: the next entry's flags position. Backward: the lp-count position of the next
    /// entry to visit (the master terminator when none is left).
    pos: Option<usize>,
}

impl<'a> Range<'a> {
    fn open(&mut self) -> bool {
        let next = if self.rev {
            self.nodes.next_back()
        } else {
            self.nodes.next()
        };
        let Some((&k, node)) = next else {
            return false;
        };
        let (master_nf, master_fields) = node.master_fields();
        let pos = if self.rev {
            Some(node.last_tail())
        } else {
            node.first_entry()
        };
        self.cur = Some(Cursor {
            node,
            master: StreamId::from_key(k),
            master_nf,
            master_fields,
            pos,
        });
        true
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        if self.done {
            return None;
        }
        loop {
            if self.cur.as_ref().is_none_or(|c| c.pos.is_none()) && !self.open() {
                self.done = true;
                return None;
            }
            let c = self.cur.as_mut().expect("opened");
            let lp = c.node.bytes();
            let p = c.pos.expect("positioned");
            let flags_pos = if self.rev {
                match c.node.entry_start(p) {
                    Some(s) => s,
                    None => {
                        c.pos = None;
                        continue;
                    }
                }
            } else {
                p
            };
            let e = node::entry_at(lp, c.master, c.master_nf, flags_pos);
            c.pos = if self.rev {
                node::prev(lp, flags_pos)
            } else {
                node::next(lp, e.tail)
            };
            if e.flags & FLAG_DELETED != 0 {
                continue;
            }
            let in_range = if self.rev {
                if e.id > self.end {
                    continue;
                }
                e.id >= self.start
            } else {
                if e.id < self.start {
                    continue;
                }
                e.id <= self.end
            };
            if !in_range {
                self.done = true;
                return None;
            }
            return Some(Entry {
                id: e.id,
                lp,
                numfields: e.numfields,
                same: e.flags & FLAG_SAMEFIELDS != 0,
                master_fields: c.master_fields,
                body: e.body,
            });
        }
    }
}

/// Entries of `nodes` from `start` to `end` inclusive, backward when `rev`.
pub(super) fn range_in(
    nodes: &BTreeMap<u128, Node>,
    start: StreamId,
    end: StreamId,
    rev: bool,
) -> Range<'_> {
    let mut done = false;
    let range = if !rev {
        match nodes.range(..=start.key()).next_back() {
            Some((&k, _)) if !start.is_zero() => nodes.range(k..),
            _ => nodes.range(..),
        }
    } else {
        match nodes.range(..=end.key()).next_back() {
            Some((&k, _)) => nodes.range(..=k),
            None => {
                // Every node starts after `end`: nothing can be in range.
                done = true;
                nodes.range(..)
            }
        }
    };
    Range {
        nodes: range,
        cur: None,
        start,
        end,
        rev,
        done,
    }
}
