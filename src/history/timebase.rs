//! Server clocks against real time. Every event carries both its node's server time and real
//! time; the clock moves a test makes are events too. From them each node's clock is a
//! function of real time (running with an offset, or frozen), and a lock held over several
//! nodes is judged on a reference clock: the median of its nodes' clocks. When every node's
//! clock jumps together (a test making leases run out) the reference jumps with them; when one
//! node's clock jumps alone (the Redlock critique's clock drift) the reference does not, and a
//! lease that node ended early shows as ended early.

use super::event::{History, RecKind};

/// One stretch of a node's clock, from `real` on.
#[derive(Clone, Copy, Debug)]
struct Seg {
    real: i64,
    /// Server time = real + offset while running; the constant while frozen.
    run: bool,
    value: i64,
}

/// A node's server clock as a function of real time.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeClock {
    segs: Vec<Seg>,
    /// For each segment, whether it began with a jump (a move, not a freeze or resume).
    jump: Vec<Option<(i64, i64)>>,
}

impl NodeClock {
    /// The clock of `node` from its events (in seq order, as `recs` holds them).
    pub(crate) fn build(h: &History, node: u16) -> NodeClock {
        let mut c = NodeClock::default();
        for r in h.recs.iter().filter(|r| r.node == node) {
            if let RecKind::Clock {
                from, to, frozen, ..
            } = r.kind
            {
                if c.segs.is_empty() {
                    c.segs.push(Seg {
                        real: i64::MIN,
                        run: true,
                        value: from - r.real,
                    });
                    c.jump.push(None);
                }
                c.segs.push(Seg {
                    real: r.real,
                    run: !frozen,
                    value: if frozen { to } else { to - r.real },
                });
                c.jump.push((from != to).then_some((from, to)));
            } else if c.segs.is_empty() {
                c.segs.push(Seg {
                    real: i64::MIN,
                    run: true,
                    value: r.t - r.real,
                });
                c.jump.push(None);
            }
        }
        if c.segs.is_empty() {
            c.segs.push(Seg {
                real: i64::MIN,
                run: true,
                value: 0,
            });
            c.jump.push(None);
        }
        c
    }

    fn seg_at(&self, real: i64) -> usize {
        self.segs
            .partition_point(|s| s.real <= real)
            .saturating_sub(1)
    }

    /// The server time at real time `real`.
    pub(crate) fn at(&self, real: i64) -> i64 {
        let s = self.segs[self.seg_at(real)];
        if s.run {
            real.saturating_add(s.value)
        } else {
            s.value
        }
    }

    /// The first real time at or after `after` when the server clock is past `t`, and whether
    /// a clock jump got it there.
    pub(crate) fn first_above(&self, t: i64, after: i64) -> Option<(i64, bool)> {
        if t == i64::MAX {
            return None;
        }
        let mut i = self.seg_at(after);
        loop {
            let s = self.segs[i];
            let start = s.real.max(after);
            let end = self.segs.get(i + 1).map(|n| n.real);
            let hit = if s.run {
                let r = (t + 1 - s.value).max(start);
                (end.is_none_or(|e| r < e)).then_some(r)
            } else {
                (s.value > t).then_some(start)
            };
            if let Some(r) = hit {
                let jumped = r == s.real && self.jump[i].is_some_and(|(from, _)| from <= t);
                return Some((r, jumped));
            }
            i += 1;
            if i >= self.segs.len() {
                return None;
            }
        }
    }

    /// The real times where segments start (after the first).
    fn breaks(&self) -> impl Iterator<Item = i64> + '_ {
        self.segs.iter().skip(1).map(|s| s.real)
    }

    fn running_at(&self, real: i64) -> bool {
        self.segs[self.seg_at(real)].run
    }

    /// Whether the clock never moves but with real time (one running stretch).
    fn plain(&self) -> Option<i64> {
        (self.segs.len() == 1).then_some(self.segs[0].value)
    }
}

/// The clocks of a history's nodes.
pub(crate) struct Clocks {
    pub(crate) nodes: Vec<NodeClock>,
}

impl Clocks {
    pub(crate) fn build(h: &History) -> Clocks {
        Clocks {
            nodes: (0..h.nodes.len() as u16)
                .map(|n| NodeClock::build(h, n))
                .collect(),
        }
    }

    /// The reference clock of a set of nodes.
    pub(crate) fn reference<'a>(&'a self, nodes: &'a [u16]) -> Reference<'a> {
        let plain = nodes
            .iter()
            .map(|&n| self.nodes[n as usize].plain())
            .collect::<Option<Vec<i64>>>()
            .filter(|offs| !offs.is_empty())
            .map(|mut offs| {
                offs.sort_unstable();
                offs[(offs.len() - 1) / 2]
            });
        Reference {
            clocks: self,
            nodes,
            plain: if nodes.is_empty() { Some(0) } else { plain },
        }
    }
}

/// The median clock of some nodes (real time itself for none).
pub(crate) struct Reference<'a> {
    clocks: &'a Clocks,
    nodes: &'a [u16],
    /// Every node runs with real time: the reference is real time plus this.
    plain: Option<i64>,
}

impl Reference<'_> {
    pub(crate) fn at(&self, real: i64) -> i64 {
        if real == i64::MAX {
            return i64::MAX;
        }
        if let Some(off) = self.plain {
            return real.saturating_add(off);
        }
        if self.nodes.len() == 1 {
            return self.clocks.nodes[self.nodes[0] as usize].at(real);
        }
        let mut v: Vec<i64> = self
            .nodes
            .iter()
            .map(|&n| self.clocks.nodes[n as usize].at(real))
            .collect();
        v.sort_unstable();
        v[(v.len() - 1) / 2]
    }

    /// The first real time at or after `after` when the reference clock is past `t`.
    pub(crate) fn first_above(&self, t: i64, after: i64) -> Option<i64> {
        if t == i64::MAX {
            return None;
        }
        if let Some(off) = self.plain {
            return Some((t + 1 - off).max(after));
        }
        if self.nodes.len() == 1 {
            return self.clocks.nodes[self.nodes[0] as usize]
                .first_above(t, after)
                .map(|x| x.0);
        }
        if self.at(after) > t {
            return Some(after);
        }
        // Between two breaks every node's clock is affine, so the median is monotone there:
        // find the stretch where it passes t, then bisect.
        let mut breaks: Vec<i64> = self
            .nodes
            .iter()
            .flat_map(|&n| self.clocks.nodes[n as usize].breaks())
            .filter(|&b| b > after)
            .collect();
        breaks.sort_unstable();
        breaks.dedup();
        let mut lo = after;
        for &b in breaks.iter().chain(std::iter::once(&i64::MAX)) {
            let hi = if b == i64::MAX {
                // Past the last break: running nodes all pass t by this much later.
                let slowest = self
                    .nodes
                    .iter()
                    .filter(|&&n| self.clocks.nodes[n as usize].running_at(lo))
                    .map(|&n| self.clocks.nodes[n as usize].at(lo))
                    .min();
                match slowest {
                    Some(s) => lo.saturating_add(t.saturating_sub(s).max(0) + 1),
                    None => return None,
                }
            } else {
                b - 1
            };
            if hi >= lo && self.at(hi) > t {
                let (mut a, mut z) = (lo, hi);
                while a < z {
                    let m = a + (z - a) / 2;
                    if self.at(m) > t {
                        z = m;
                    } else {
                        a = m + 1;
                    }
                }
                return Some(a);
            }
            if b == i64::MAX {
                return None;
            }
            if self.at(b) > t {
                return Some(b);
            }
            lo = b;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::event::{ClockMove, Event, History, What};
    use super::*;

    fn clock_event(h: &mut History, node: &str, real: i64, from: i64, to: i64, frozen: bool) {
        h.push(Event::new(
            node,
            to,
            real,
            What::Clock(ClockMove {
                from_us: from,
                to_us: to,
                frozen,
                how: "advance".into(),
            }),
        ));
    }

    #[test]
    fn a_node_clock_follows_jumps_and_freezes() {
        let mut h = History::new();
        h.push(Event::new(
            "a",
            1_000,
            1_000,
            What::Fault { text: "x".into() },
        ));
        clock_event(&mut h, "a", 2_000, 2_000, 12_000, false); // +10 ms
        clock_event(&mut h, "a", 3_000, 13_000, 13_000, true); // frozen
        clock_event(&mut h, "a", 5_000, 13_000, 13_000, false); // resumed
        let c = NodeClock::build(&h, 0);
        assert_eq!(c.at(1_500), 1_500);
        assert_eq!(c.at(2_500), 12_500);
        assert_eq!(c.at(4_000), 13_000);
        assert_eq!(c.at(6_000), 14_000);
        // Past 5_000 (server): the jump at real 2_000 got it there.
        assert_eq!(c.first_above(5_000, 1_000), Some((2_000, true)));
        assert_eq!(c.first_above(1_999, 1_000), Some((2_000, false)));
        assert_eq!(c.first_above(1_200, 1_000), Some((1_201, false)));
        // While frozen at 13_000 the clock never passes 13_000: it does after the resume.
        assert_eq!(c.first_above(13_000, 3_000), Some((5_001, false)));
    }

    #[test]
    fn the_reference_ignores_one_node_jumping_but_follows_all() {
        let mut h = History::new();
        for n in ["a", "b", "c"] {
            h.push(Event::new(n, 0, 0, What::Fault { text: "x".into() }));
        }
        clock_event(&mut h, "c", 100, 100, 10_100, false);
        let clocks = Clocks::build(&h);
        let nodes = [0u16, 1, 2];
        let r = clocks.reference(&nodes);
        assert_eq!(r.at(200), 200);
        assert_eq!(r.first_above(5_000, 0), Some(5_001));
        for n in ["a", "b"] {
            clock_event(&mut h, n, 300, 300, 10_300, false);
        }
        let clocks = Clocks::build(&h);
        let r = clocks.reference(&nodes);
        assert_eq!(r.at(400), 10_400);
        assert_eq!(r.first_above(5_000, 0), Some(300));
    }
}
