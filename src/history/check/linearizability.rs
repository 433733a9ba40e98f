//! The linearizability rule: the client ops of each lock, each taking effect somewhere
//! between its call and its return, fit one lease. The search is `linear.rs`'s; this file
//! puts each lock's ops on the lock's clock and tells the story of an op that fits nowhere.

use super::story::{events_block, quote};
use super::{Ctx, Mark, Violation, ViolationKind};
use crate::history::event::{OpKind, Sym};
use crate::history::lease;
use crate::history::linear::{self, LinOp, Outcome, NOBODY};
use std::collections::HashMap;
use std::fmt::Write;

impl Ctx<'_> {
    /// The client ops of each lock against the lease model.
    pub(super) fn linearizability(&mut self) -> (usize, Vec<String>) {
        let h = self.h;
        let mut per: HashMap<u32, Vec<usize>, ahash::RandomState> = HashMap::default();
        for (i, op) in h.ops.iter().enumerate() {
            if op.op != OpKind::Use {
                per.entry(op.lock).or_default().push(i);
            }
        }
        // An acquire whose outcome the client never learnt (it gave up, the run stopped) and
        // whose token never owned the lock on any node had no effect: with every change of
        // the lock recorded, it is left out of the search, where an op open until the end of
        // the run can go anywhere (a fair lock's waiters queued at the end made one lock's
        // search run past its budget). Kept when the recorder dropped events.
        if h.dropped() == 0 {
            for (lock, ids) in per.iter_mut() {
                let owners: std::collections::HashSet<Sym> = self
                    .leases
                    .by_lock
                    .get(*lock as usize)
                    .into_iter()
                    .flatten()
                    .map(|&li| self.leases.leases[li].owner)
                    .collect();
                ids.retain(|&i| {
                    let op = &h.ops[i];
                    !(op.op == OpKind::Acquire && op.ok.is_none() && !owners.contains(&op.token))
                });
            }
        }
        let mut locks: Vec<u32> = per.keys().copied().collect();
        locks.sort_unstable();
        let mut budget = self.opts.max_steps;
        let mut checked = 0;
        let mut inconclusive = Vec::new();
        for lock in locks {
            let ids = &per[&lock];
            // The clock the lock's leases run on: its nodes' reference, or real time.
            let mut scope: Vec<u16> = ids.iter().flat_map(|&i| h.ops[i].nodes.clone()).collect();
            scope.sort_unstable();
            scope.dedup();
            if scope.is_empty() {
                scope = lease::lock_scope(h, &self.leases, lock);
                if scope.is_empty() && self.all_nodes.len() == 1 {
                    scope = self.all_nodes.clone();
                }
            }
            let multi = scope.len() > 1;
            let reference = self.clocks.reference(&scope);
            let mut tokens: HashMap<Sym, u32, ahash::RandomState> = HashMap::default();
            let lin: Vec<LinOp> = ids
                .iter()
                .map(|&i| {
                    let op = &h.ops[i];
                    let n = tokens.len() as u32;
                    let token = *tokens.entry(op.token).or_insert(n);
                    LinOp {
                        kind: op.op,
                        token,
                        ok: op.ok,
                        a: reference.at(op.invoke),
                        b: if op.complete == i64::MAX {
                            i64::MAX
                        } else {
                            reference.at(op.complete).max(reference.at(op.invoke))
                        },
                        ttl_us: op.ttl_ms.map(|t| t * 1000),
                        add_us: op.add_ms.map(|t| t * 1000),
                        failure_says_nothing: multi || op.nodes.len() > 1,
                        id: i,
                    }
                })
                .collect();
            checked += lin.len();
            match linear::check(&lin, self.opts.slack_us, &mut budget) {
                Outcome::Ok => {}
                Outcome::Unknown => {
                    inconclusive.push(String::from_utf8_lossy(h.lock_key(lock)).into_owned());
                    budget = self.opts.max_steps / 4;
                }
                Outcome::Fail(f) => {
                    let token_name: HashMap<u32, Sym> =
                        tokens.iter().map(|(s, t)| (*t, *s)).collect();
                    self.not_linearizable(lock, f, &token_name);
                }
            }
        }
        (checked, inconclusive)
    }

    fn not_linearizable(&mut self, lock: u32, f: linear::Failure, names: &HashMap<u32, Sym>) {
        let h = self.h;
        let w = &self.w;
        let stuck = &h.ops[f.stuck];
        let summary = format!(
            "the operations on lock {} fit no single lease: {} {} {} at {}..{} cannot be placed",
            w.lock(lock),
            w.str(stuck.client),
            stuck.op.as_str(),
            match stuck.ok {
                Some(true) => "succeeding",
                Some(false) => "failing",
                None => "(unknown result)",
            },
            w.at(stuck.invoke),
            w.at(stuck.complete)
        );
        let mut story = format!(
            "The clients' operations on lock {} cannot be explained by one lease that at most one \
             client holds at a time (each operation taking effect at some instant between its call \
             and its return, a lease lasting its TTL).\n\
             The search placed {} operations in a consistent order at best; then this one could not \
             come next, nor could any other before it returned:\n  {}\n",
            w.lock(lock),
            f.placed.len(),
            w.op(stuck)
        );
        let holders: Vec<String> = f
            .holders
            .iter()
            .map(|&(t, lo, hi)| {
                if t == NOBODY {
                    "nobody held it".to_string()
                } else {
                    let tok = names
                        .get(&t)
                        .map_or("?".into(), |s| quote(h.strings.get(*s)));
                    let end = |x: i64| {
                        if x.abs() >= i64::MAX / 8 {
                            "(no end)".to_string()
                        } else {
                            w.at(x)
                        }
                    };
                    format!(
                        "{tok} held it, its lease ending between {} and {}",
                        end(lo),
                        end(hi)
                    )
                }
            })
            .collect();
        let _ = writeln!(
            story,
            "At that point (on the lock's clock): {}.",
            holders.join("; or ")
        );
        let mut ops: Vec<usize> = f.placed.iter().rev().take(8).copied().collect();
        ops.push(f.stuck);
        story.push('\n');
        story.push_str("The last operations placed, and the one that could not be:\n");
        story.push_str(&events_block(w, Vec::new(), &ops).replacen(
            "The events, in order (real time since the history began):\n",
            "",
            1,
        ));
        self.out.push(Violation {
            kind: ViolationKind::NotLinearizable,
            lock: String::from_utf8_lossy(h.lock_key(lock)).into_owned(),
            real_us: stuck.invoke,
            summary,
            story,
            mark: Mark {
                lock: Some(lock),
                from_real: ops
                    .iter()
                    .map(|&o| h.ops[o].invoke)
                    .min()
                    .unwrap_or(stuck.invoke),
                to_real: stuck.complete,
                ops,
                ..Mark::default()
            },
        });
    }
}
