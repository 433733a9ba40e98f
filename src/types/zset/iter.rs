//! Walking rank ranges: [`ZRangeIter`] over either encoding, and the [`ZSet`] methods that
//! hand one out.

use std::ops::Range;

use super::listpack::lp_entry;
use super::skiplist::SkipList;
use super::ZSet;

impl ZSet {
    /// All members, ascending.
    pub fn iter(&self) -> ZRangeIter<'_> {
        self.range(0..self.len(), false)
    }

    /// The members at ascending ranks `ranks` (clamped to the set), from the lowest rank
    /// up, or with `reverse` from the highest down (ZREVRANGE's order). For ZREVRANGE's
    /// reversed ranks `start..=stop`, pass `len-1-stop .. len-start`.
    pub fn range(&self, ranks: Range<usize>, reverse: bool) -> ZRangeIter<'_> {
        let end = ranks.end.min(self.len());
        let start = ranks.start.min(end);
        let left = end - start;
        let inner = if left == 0 {
            RangeInner::Empty
        } else {
            match self {
                ZSet::Listpack(lp) if reverse => {
                    let mut offs = Vec::with_capacity(left);
                    let mut at = lp.offset_of(start);
                    for _ in 0..left {
                        offs.push(at as u32);
                        at = lp_entry(&lp.buf, at).end;
                    }
                    RangeInner::ListpackRev { buf: &lp.buf, offs }
                }
                ZSet::Listpack(lp) => RangeInner::Listpack {
                    buf: &lp.buf,
                    at: lp.offset_of(start),
                },
                ZSet::Skiplist(sl) => RangeInner::Skiplist {
                    sl,
                    x: sl.at_rank(if reverse { end - 1 } else { start }),
                    reverse,
                },
            }
        };
        ZRangeIter { inner, left }
    }
}

/// Walks a rank range of a sorted set, yielding (member, score); see [`ZSet::range`].
pub struct ZRangeIter<'a> {
    inner: RangeInner<'a>,
    left: usize,
}

enum RangeInner<'a> {
    Empty,
    Listpack {
        buf: &'a [u8],
        at: usize,
    },
    ListpackRev {
        buf: &'a [u8],
        offs: Vec<u32>,
    },
    Skiplist {
        sl: &'a SkipList,
        x: u32,
        reverse: bool,
    },
}

impl<'a> Iterator for ZRangeIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<(&'a [u8], f64)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        match &mut self.inner {
            RangeInner::Empty => None,
            RangeInner::Listpack { buf, at } => {
                let buf: &'a [u8] = buf;
                let e = lp_entry(buf, *at);
                *at = e.end;
                Some((&buf[e.member.clone()], e.score))
            }
            RangeInner::ListpackRev { buf, offs } => {
                let buf: &'a [u8] = buf;
                let e = lp_entry(buf, offs.pop()? as usize);
                Some((&buf[e.member.clone()], e.score))
            }
            RangeInner::Skiplist { sl, x, reverse } => {
                let sl: &'a SkipList = sl;
                let node = &sl.nodes[*x as usize];
                *x = if *reverse { node.backward } else { node.next };
                Some((&node.ele[..], node.score))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for ZRangeIter<'_> {}
