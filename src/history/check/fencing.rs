//! The fencing rule: the tokens a resource accepted strictly increase, and an accepted write
//! or a client's use of the resource lies within a lease its client held (by the server's
//! leases when it recorded the lock, else by the client's own view of its lease).

use super::story::{end_causes, events_block, quote};
use super::{Ctx, Mark, Violation, ViolationKind};
use crate::history::event::{OpKind, RecKind, Sym};
use crate::history::lease::{self, Lease};
use std::collections::HashMap;
use std::fmt::Write;

impl Ctx<'_> {
    /// The leases a client (a change's or a write's connection) held, by node+id or name.
    fn leases_of_client(&self, client: Option<u32>) -> Vec<usize> {
        (0..self.leases.leases.len())
            .filter(|&i| {
                let l = &self.leases.leases[i];
                l.granted
                    && !self.leases.not_lock[l.lock as usize]
                    && lease::same_client(self.h, l.client, client)
            })
            .collect()
    }

    /// Accepted fencing tokens increase per resource; an accepted write comes from a client
    /// inside a lease it holds. Returns the number of fenced writes.
    pub(super) fn fences(&mut self) -> usize {
        let h = self.h;
        let mut order: Vec<usize> = (0..h.recs.len())
            .filter(|&i| matches!(h.recs[i].kind, RecKind::Fenced { .. }))
            .collect();
        let count = order.len();
        order.sort_by_key(|&i| (h.recs[i].real, i));
        let mut best: HashMap<Sym, (i64, usize), ahash::RandomState> = HashMap::default();
        let mut client_leases: HashMap<u32, Vec<usize>, ahash::RandomState> = HashMap::default();
        for i in order {
            let r = &h.recs[i];
            let RecKind::Fenced {
                resource,
                token,
                accepted,
                client,
                ..
            } = r.kind
            else {
                continue;
            };
            if !accepted {
                continue;
            }
            // The writer's most recent lease that began before the write.
            let mine = match client {
                Some(c) => client_leases
                    .entry(c)
                    .or_insert_with(|| self.leases_of_client(Some(c)))
                    .clone(),
                None => Vec::new(),
            };
            let lease = mine
                .iter()
                .map(|&li| &self.leases.leases[li])
                .filter(|l| l.start_real <= r.real)
                .max_by_key(|l| l.start_real)
                .cloned();
            let w = &self.w;
            let lease_words =
                |l: &Lease| format!("\nThe writer's last lease: {}.\n", w.lease_line(l));
            let prev = best.get(&resource).copied();
            if let Some((ptoken, prec)) = prev.filter(|(t, _)| token <= *t) {
                let summary = format!(
                    "resource {} accepted fencing token {} at {} from {}, after token {}",
                    quote(h.strings.get(resource)),
                    token,
                    w.at(r.real),
                    w.client(client),
                    ptoken
                );
                let pr = &h.recs[prec];
                let RecKind::Fenced {
                    client: pclient, ..
                } = pr.kind
                else {
                    continue;
                };
                let mut story = format!(
                    "Resource {} accepted a write with fencing token {} at {} from {},\n\
                     after it had accepted token {} at {} from {}: the tokens of accepted \
                     writes must increase, or a client that lost its lock (a pause longer \
                     than its lease) overwrites the newer holder's work.\n",
                    quote(h.strings.get(resource)),
                    token,
                    w.at(r.real),
                    w.client(client),
                    ptoken,
                    w.at(pr.real),
                    w.client(pclient)
                );
                let mut recs = vec![prec, i];
                if let Some(l) = &lease {
                    story.push_str(&lease_words(l));
                    recs.push(l.start);
                    recs.extend(end_causes(h, l));
                    if l.end_real < r.real {
                        let _ = writeln!(story, "It wrote {} after that lease had ended.", {
                            let d = r.real - l.end_real;
                            format!("{}.{:03} s", d / 1_000_000, d % 1_000_000 / 1000)
                        });
                    }
                }
                story.push('\n');
                story.push_str(&events_block(w, recs.clone(), &[]));
                self.out.push(Violation {
                    kind: ViolationKind::StaleFence,
                    lock: String::from_utf8_lossy(h.strings.get(resource)).into_owned(),
                    real_us: r.real,
                    summary,
                    story,
                    mark: Mark {
                        lock: lease.as_ref().map(|l| l.lock),
                        resource: Some(resource),
                        nodes: vec![r.node],
                        from_real: pr.real,
                        to_real: r.real,
                        recs,
                        ..Mark::default()
                    },
                });
            } else if let Some(l) = lease
                .as_ref()
                .filter(|l| l.end_real.saturating_add(self.opts.slack_us) < r.real)
            {
                let summary = format!(
                    "{} wrote resource {} at {} after its lease on {} ended at {}",
                    w.client(client),
                    quote(h.strings.get(resource)),
                    w.at(r.real),
                    w.lock(l.lock),
                    w.at(l.end_real)
                );
                let mut story = format!(
                    "{} wrote resource {} (fencing token {}) at {}, outside any lease it held.\n{}",
                    w.client(client),
                    quote(h.strings.get(resource)),
                    token,
                    w.at(r.real),
                    lease_words(l)
                );
                let mut recs = vec![i, l.start];
                recs.extend(end_causes(h, l));
                story.push('\n');
                story.push_str(&events_block(w, recs.clone(), &[]));
                self.out.push(Violation {
                    kind: ViolationKind::UseOutsideLease,
                    lock: String::from_utf8_lossy(h.strings.get(resource)).into_owned(),
                    real_us: r.real,
                    summary,
                    story,
                    mark: Mark {
                        lock: Some(l.lock),
                        resource: Some(resource),
                        nodes: vec![r.node],
                        from_real: l.start_real,
                        to_real: r.real,
                        recs,
                        ..Mark::default()
                    },
                });
            }
            if prev.is_none_or(|(t, _)| token > t) {
                best.insert(resource, (token, i));
            }
        }
        count
    }

    /// The intervals when `owner` held a majority of lock `lock` (actual leases).
    fn held_intervals(&self, lock: u32, owner: Sym) -> Vec<(i64, i64, Vec<usize>)> {
        let (_, q) = self.quorum(lock);
        let mut ev: Vec<(i64, u8, usize)> = Vec::new();
        for &li in self
            .by_owner
            .get(&(lock, owner))
            .map_or(&[][..], |v| &v[..])
        {
            let l = &self.leases.leases[li];
            ev.push((l.start_real, 1, li));
            ev.push((l.end_real, 0, li));
        }
        ev.sort_unstable();
        let mut live: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        let mut since: Option<i64> = None;
        for (t, k, li) in ev {
            if k == 1 {
                live.push(li);
            } else if let Some(p) = live.iter().position(|&x| x == li) {
                live.swap_remove(p);
            }
            let mut ns: Vec<u16> = live.iter().map(|&i| self.leases.leases[i].node).collect();
            ns.sort_unstable();
            ns.dedup();
            match (ns.len() >= q, since) {
                (true, None) => since = Some(t),
                (false, Some(s)) => {
                    out.push((s, t, vec![li]));
                    since = None;
                }
                _ => {}
            }
        }
        if let Some(s) = since {
            out.push((s, i64::MAX, live));
        }
        out
    }

    /// A client's use of the resource lies inside a lease it held; and the fencing tokens of
    /// uses that surely followed one another increase.
    pub(super) fn uses(&mut self) {
        let h = self.h;
        let slack = self.opts.slack_us;
        // Per (client, lock): its ops in invocation order.
        let mut per: HashMap<(Sym, u32), Vec<usize>, ahash::RandomState> = HashMap::default();
        for (i, op) in h.ops.iter().enumerate() {
            per.entry((op.client, op.lock)).or_default().push(i);
        }
        let mut keys: Vec<_> = per.keys().copied().collect();
        keys.sort_unstable();
        for key in keys {
            let mut ids = per[&key].clone();
            ids.sort_by_key(|&i| (h.ops[i].invoke, i));
            if !ids.iter().any(|&i| h.ops[i].op == OpKind::Use) {
                continue;
            }
            let lock = key.1;
            let server_known = !self.leases.by_lock[lock as usize].is_empty();
            // The client's own view: the lease from its last successful acquire.
            let mut mine: Option<(Sym, i64, i64, usize)> = None; // token, from, until, op
            for &i in &ids {
                let op = &h.ops[i];
                match (op.op, op.ok) {
                    (OpKind::Acquire, Some(true)) => {
                        let until = op.ttl_ms.map_or(i64::MAX, |t| op.invoke + t * 1000);
                        mine = Some((op.token, op.complete, until, i));
                    }
                    (OpKind::Extend, Some(true)) => {
                        if let Some(m) = mine.as_mut() {
                            m.2 = match (op.ttl_ms, op.add_ms) {
                                (_, Some(a)) => m.2.saturating_add(a * 1000),
                                (Some(t), None) => op.invoke + t * 1000,
                                (None, None) => i64::MAX,
                            };
                        }
                    }
                    (OpKind::Release, _) => {
                        if let Some(m) = mine.as_mut() {
                            m.2 = m.2.min(op.invoke);
                        }
                    }
                    (OpKind::Use, ok) if ok != Some(false) => {
                        let token = if h.strings.get(op.token) != h.strings.get(op.client) {
                            op.token
                        } else {
                            mine.map_or(op.token, |m| m.0)
                        };
                        let inside = if server_known {
                            self.held_intervals(lock, token).iter().any(|&(a, b, _)| {
                                a <= op.invoke + slack && op.complete <= b.saturating_add(slack)
                            })
                        } else {
                            mine.is_some_and(|m| {
                                m.1 <= op.invoke + slack && op.complete <= m.2.saturating_add(slack)
                            })
                        };
                        if !inside {
                            self.use_outside(i, token, mine.map(|m| m.3), server_known);
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        // Fencing tokens of uses that surely came one after another.
        let mut by_res: HashMap<Sym, Vec<usize>, ahash::RandomState> = HashMap::default();
        for (i, op) in h.ops.iter().enumerate() {
            if op.op == OpKind::Use && op.ok == Some(true) && op.fence.is_some() {
                by_res.entry(op.resource).or_default().push(i);
            }
        }
        let mut res: Vec<_> = by_res.keys().copied().collect();
        res.sort_unstable();
        for r in res {
            let ids = &by_res[&r];
            let mut by_complete = ids.clone();
            by_complete.sort_by_key(|&i| h.ops[i].complete);
            let mut by_invoke = ids.clone();
            by_invoke.sort_by_key(|&i| h.ops[i].invoke);
            let mut k = 0;
            let mut max: Option<usize> = None;
            for &i in &by_invoke {
                while k < by_complete.len() && h.ops[by_complete[k]].complete < h.ops[i].invoke {
                    let c = by_complete[k];
                    if max.is_none_or(|m| h.ops[c].fence > h.ops[m].fence) {
                        max = Some(c);
                    }
                    k += 1;
                }
                if let Some(m) = max.filter(|&m| h.ops[m].fence >= h.ops[i].fence) {
                    let w = &self.w;
                    let (a, b) = (&h.ops[m], &h.ops[i]);
                    let summary = format!(
                        "client {} used resource {} with fencing token {} at {}, after {} used token {}",
                        w.str(b.client),
                        quote(h.strings.get(r)),
                        b.fence.unwrap_or(0),
                        w.at(b.invoke),
                        w.str(a.client),
                        a.fence.unwrap_or(0)
                    );
                    let story = format!(
                        "Client {} used resource {} with fencing token {} (from {} to {}), after client {} had \
                         used it with token {} (done at {}); the resource took both, so the stale token got \
                         through.\n\n{}",
                        w.str(b.client),
                        quote(h.strings.get(r)),
                        b.fence.unwrap_or(0),
                        w.at(b.invoke),
                        w.at(b.complete),
                        w.str(a.client),
                        a.fence.unwrap_or(0),
                        w.at(a.complete),
                        events_block(w, Vec::new(), &[m, i])
                    );
                    self.out.push(Violation {
                        kind: ViolationKind::StaleFence,
                        lock: String::from_utf8_lossy(h.strings.get(r)).into_owned(),
                        real_us: b.invoke,
                        summary,
                        story,
                        mark: Mark {
                            lock: Some(b.lock),
                            resource: Some(r),
                            from_real: a.invoke,
                            to_real: b.complete,
                            ops: vec![m, i],
                            ..Mark::default()
                        },
                    });
                    break;
                }
            }
        }
    }

    fn use_outside(&mut self, i: usize, token: Sym, acquire: Option<usize>, server_known: bool) {
        let h = self.h;
        let op = &h.ops[i];
        let w = &self.w;
        let summary = format!(
            "client {} used {} from {} to {} outside its lease on lock {}",
            w.str(op.client),
            if h.strings.get(op.resource).is_empty() {
                "the resource".to_string()
            } else {
                format!("resource {}", quote(h.strings.get(op.resource)))
            },
            w.at(op.invoke),
            w.at(op.complete),
            w.lock(op.lock)
        );
        let mut story = format!(
            "Client {} used the resource protected by lock {} from {} to {}, but did not hold \
             the lock all that time.\n",
            w.str(op.client),
            w.lock(op.lock),
            w.at(op.invoke),
            w.at(op.complete)
        );
        let mut recs = Vec::new();
        let mut ops = vec![i];
        if let Some(a) = acquire {
            ops.push(a);
        }
        if server_known {
            let held = self.held_intervals(op.lock, token);
            if held.is_empty() {
                let _ = writeln!(
                    story,
                    "The server never granted it the lock under token {}.",
                    quote(h.strings.get(token))
                );
            }
            for &li in &self.leases.by_lock[op.lock as usize] {
                let l = &self.leases.leases[li];
                if l.owner == token && l.start_real <= op.complete {
                    let _ = writeln!(story, "  - {}", w.lease_line(l));
                    recs.push(l.start);
                    recs.extend(end_causes(h, l));
                }
            }
            // Who held it meanwhile.
            for &li in &self.leases.by_lock[op.lock as usize] {
                let l = &self.leases.leases[li];
                if l.owner != token && l.start_real <= op.complete && l.end_real >= op.invoke {
                    let _ = writeln!(story, "Meanwhile: {}.", w.lease_line(l));
                    recs.push(l.start);
                }
            }
        } else if let Some(a) = acquire {
            let a = &h.ops[a];
            let _ = writeln!(
                story,
                "Its lease, as it knew it: granted at {} with TTL {}, so it lasted until {} at the latest.",
                w.at(a.complete),
                a.ttl_ms.map_or("none".to_string(), |t| format!("{t} ms")),
                w.at(a.ttl_ms.map_or(i64::MAX, |t| a.invoke + t * 1000))
            );
        }
        story.push('\n');
        story.push_str(&events_block(w, recs.clone(), &ops));
        self.out.push(Violation {
            kind: ViolationKind::UseOutsideLease,
            lock: String::from_utf8_lossy(h.lock_key(op.lock)).into_owned(),
            real_us: op.complete.min(op.invoke.saturating_add(1)).max(op.invoke),
            summary,
            story,
            mark: Mark {
                lock: Some(op.lock),
                from_real: op.invoke,
                to_real: op.complete,
                recs,
                ops,
                ..Mark::default()
            },
        });
    }
}
