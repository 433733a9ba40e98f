//! The one-holder rule: at no instant do two owners hold a lock (for a key on several nodes,
//! two owners each a majority), swept over the leases on the lock's reference clock, and the
//! story of how the second one got in (which lease ended early, and why).

use super::story::{end_causes, events_block, quote};
use super::{Ctx, Mark, Violation, ViolationKind};
use crate::history::event::Sym;
use crate::history::lease::{End, Leases};
use std::collections::HashMap;
use std::fmt::Write;

impl Ctx<'_> {
    /// At most one owner holds a majority of nominal leases (one lease, on one node) at any
    /// moment of the lock's reference clock.
    pub(super) fn holders(&mut self) {
        let slack = self.opts.slack_us;
        for lock in 0..self.h.locks.len() as u32 {
            if self.leases.not_lock[lock as usize] {
                continue;
            }
            let (n, q) = self.quorum(lock);
            // Sweep events: (real, 0 = end / 1 = start, lease).
            let mut ev: Vec<(i64, u8, usize)> = Vec::new();
            for &li in &self.leases.by_lock[lock as usize] {
                let l = &self.leases.leases[li];
                if !l.granted {
                    continue;
                }
                // Shortened by the slack: an overlap within it is the TTL's rounding.
                let end = l.nominal_real.saturating_sub(slack);
                if end > l.start_real {
                    ev.push((l.start_real, 1, li));
                    ev.push((end, 0, li));
                }
            }
            if ev.is_empty() {
                continue;
            }
            ev.sort_unstable();
            // Per owner: its live leases by node.
            let mut live: HashMap<Sym, Vec<usize>, ahash::RandomState> = HashMap::default();
            let nodes_of = |v: &Vec<usize>, leases: &Leases| {
                let mut ns: Vec<u16> = v.iter().map(|&i| leases.leases[i].node).collect();
                ns.sort_unstable();
                ns.dedup();
                ns
            };
            for (real, kind, li) in ev {
                let owner = self.leases.leases[li].owner;
                let v = live.entry(owner).or_default();
                if kind == 0 {
                    if let Some(p) = v.iter().position(|&x| x == li) {
                        v.swap_remove(p);
                    }
                    continue;
                }
                v.push(li);
                let mine = nodes_of(v, &self.leases);
                if mine.len() < q {
                    continue;
                }
                let other = live
                    .iter()
                    .filter(|(o, _)| **o != owner)
                    .map(|(o, v)| (*o, nodes_of(v, &self.leases), v.clone()))
                    .find(|(_, ns, _)| ns.len() >= q);
                if let Some((first_owner, first_nodes, first_leases)) = other {
                    let second = live[&owner].clone();
                    self.two_holders(
                        lock,
                        (n, q),
                        real,
                        (first_owner, first_nodes, first_leases),
                        (owner, mine, second),
                    );
                    break;
                }
            }
        }
    }

    fn two_holders(
        &mut self,
        lock: u32,
        (n, q): (usize, usize),
        at: i64,
        first: (Sym, Vec<u16>, Vec<usize>),
        second: (Sym, Vec<u16>, Vec<usize>),
    ) {
        let w = &self.w;
        let h = self.h;
        let names = |ns: &[u16]| ns.iter().map(|&n| w.node(n)).collect::<Vec<_>>().join(", ");
        let l = |i: usize| &self.leases.leases[i];
        let first_client = first.2.first().and_then(|&i| l(i).client);
        let second_client = second
            .2
            .iter()
            .map(|&i| l(i))
            .max_by_key(|x| x.start_real)
            .and_then(|x| x.client);
        let redlock = n > 1;
        let summary = if redlock {
            format!(
                "two majorities of lock {} at {}: {} ({}) on {} and {} ({}) on {}",
                w.lock(lock),
                w.at(at),
                quote(h.strings.get(first.0)),
                w.client(first_client),
                names(&first.1),
                quote(h.strings.get(second.0)),
                w.client(second_client),
                names(&second.1)
            )
        } else {
            format!(
                "two holders of lock {} at {}: {} ({}) and {} ({})",
                w.lock(lock),
                w.at(at),
                quote(h.strings.get(first.0)),
                w.client(first_client),
                quote(h.strings.get(second.0)),
                w.client(second_client)
            )
        };
        let mut story = String::new();
        if redlock {
            let _ = writeln!(
                story,
                "Two clients held a majority ({q} of {n} nodes) of lock {} at {}.",
                w.lock(lock),
                w.at(at)
            );
        } else {
            let _ = writeln!(
                story,
                "Two clients held lock {} at {}.",
                w.lock(lock),
                w.at(at)
            );
        }
        let _ = writeln!(
            story,
            "\nThe first holder, {}:",
            quote(h.strings.get(first.0))
        );
        let mut recs = Vec::new();
        let mut early = Vec::new();
        for &li in &first.2 {
            let x = l(li);
            let _ = writeln!(story, "  - {}", w.lease_line(x));
            recs.push(x.start);
            if x.refresh != x.start {
                recs.push(x.refresh);
            }
            recs.extend(end_causes(h, x));
            if x.end_real < at && x.end_why.early() || x.end_why == End::ClockJump && redlock {
                early.push(li);
            }
        }
        let _ = writeln!(story, "The second, {}:", quote(h.strings.get(second.0)));
        for &li in &second.2 {
            let x = l(li);
            let _ = writeln!(story, "  - {}", w.lease_line(x));
            recs.push(x.start);
        }
        let mut from = at;
        for &li in first.2.iter().chain(&second.2) {
            from = from.min(l(li).start_real);
        }
        story.push('\n');
        if early.is_empty() {
            let _ = writeln!(
                story,
                "Why: the server let the second holder in while the first one's lease was live \
                 (the key held both owners, or was overwritten)."
            );
        } else {
            for &li in &early {
                let x = l(li);
                let cause = match x.end_why {
                    End::Restart => {
                        "a restart lost the key (a failover losing a write)".to_string()
                    }
                    End::ClockJump => "the node's clock jumped past the lease's end".to_string(),
                    End::NonOwner => "a request that was not the owner's removed it".to_string(),
                    End::Flushed => "the database was flushed".to_string(),
                    End::Evicted => "maxmemory evicted it".to_string(),
                    other => other.text().to_string(),
                };
                let _ = writeln!(
                    story,
                    "Why: on {} the first holder's lease ended at {}, before its time ({}): {}.",
                    w.node(x.node),
                    w.at(x.end_real),
                    w.at(x.nominal_real),
                    cause
                );
            }
        }
        story.push('\n');
        story.push_str(&events_block(w, recs.clone(), &[]));
        let mut nodes: Vec<u16> = first.1.iter().chain(&second.1).copied().collect();
        nodes.sort_unstable();
        nodes.dedup();
        self.out.push(Violation {
            kind: ViolationKind::TwoHolders,
            lock: String::from_utf8_lossy(h.lock_key(lock)).into_owned(),
            real_us: at,
            summary,
            story,
            mark: Mark {
                lock: Some(lock),
                nodes,
                from_real: from,
                to_real: at,
                recs,
                ..Mark::default()
            },
        });
    }
}
