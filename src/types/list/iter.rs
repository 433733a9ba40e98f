//! Walking a list: [`Iter`], which decodes entries in place from either end, and the
//! [`List`] methods that hand one out.

use std::collections::VecDeque;
use std::iter::Rev;

use super::entry::{decode, prev_start, Elem};
use super::node::Node;
use super::List;

impl List {
    /// An iterator over positions `s..=e` (both in range), each end found from the nearer
    /// end of the list.
    fn iter_between(&self, s: usize, e: usize) -> Iter<'_> {
        let nodes = &self.inner.nodes;
        let (fnode, foff) = self.locate(s);
        let (bnode, boff) = self.locate(e);
        let fpos = nodes[fnode].seek(foff);
        let bpos = nodes[bnode].seek(boff);
        Iter {
            nodes,
            fnode,
            fpos,
            bnode,
            bend: bpos + decode(&nodes[bnode].buf, bpos).1,
            remaining: e - s + 1,
        }
    }

    fn empty_iter(&self) -> Iter<'_> {
        Iter {
            nodes: &self.inner.nodes,
            fnode: 0,
            fpos: 0,
            bnode: 0,
            bend: 0,
            remaining: 0,
        }
    }

    /// LRANGE: the elements `start..=stop` with Redis's index rules (negative from the tail,
    /// clamped, empty when the window is). Double-ended: `.rev()` walks it from `stop` back,
    /// as LMPOP/RPOP-with-count replies need.
    pub fn range(&self, start: i64, stop: i64) -> Iter<'_> {
        match Self::window(self.inner.len as i64, start, stop) {
            Some((s, e)) => self.iter_between(s as usize, e as usize),
            None => self.empty_iter(),
        }
    }

    /// Every element from `index` (negative from the tail) to the tail; empty when `index`
    /// is out of range. Starts from whichever end of the list is nearer.
    pub fn iter_from(&self, index: i64) -> Iter<'_> {
        match self.normalize(index) {
            Some(i) => self.iter_between(i, self.inner.len - 1),
            None => self.empty_iter(),
        }
    }

    /// Every element from `index` (negative from the tail) back to the head; empty when
    /// `index` is out of range.
    pub fn iter_rev_from(&self, index: i64) -> Rev<Iter<'_>> {
        match self.normalize(index) {
            Some(i) => self.iter_between(0, i),
            None => self.empty_iter(),
        }
        .rev()
    }

    /// Every element, head to tail.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            nodes: &self.inner.nodes,
            fnode: 0,
            fpos: 0,
            bnode: self.inner.nodes.len().saturating_sub(1),
            bend: self.inner.nodes.back().map_or(0, |n| n.buf.len()),
            remaining: self.inner.len,
        }
    }

    /// Every element, tail to head.
    pub fn iter_rev(&self) -> Rev<Iter<'_>> {
        self.iter().rev()
    }
}

/// Iterates a list's elements (or a window of them) from either end; each step decodes one
/// entry in place.
#[derive(Clone)]
pub struct Iter<'a> {
    nodes: &'a VecDeque<Node>,
    /// Node and byte offset of the next element from the front.
    fnode: usize,
    fpos: usize,
    /// Node and end offset of the next element from the back.
    bnode: usize,
    bend: usize,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Elem<'a>;

    #[inline]
    fn next(&mut self) -> Option<Elem<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let nodes: &'a VecDeque<Node> = self.nodes;
        if self.fpos == nodes[self.fnode].buf.len() {
            self.fnode += 1;
            self.fpos = 0;
        }
        let (e, n) = decode(&nodes[self.fnode].buf, self.fpos);
        self.fpos += n;
        self.remaining -= 1;
        Some(e)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<'a> DoubleEndedIterator for Iter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<Elem<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let nodes: &'a VecDeque<Node> = self.nodes;
        if self.bend == 0 {
            self.bnode -= 1;
            self.bend = nodes[self.bnode].buf.len();
        }
        let buf = &nodes[self.bnode].buf;
        let start = prev_start(buf, self.bend);
        self.bend = start;
        self.remaining -= 1;
        Some(decode(buf, start).0)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::iter::FusedIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a List {
    type Item = Elem<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}
