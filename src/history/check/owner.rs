//! The owner-only rule: a client's change that removes, replaces or lengthens a live lease
//! must act for its owner. The lease builder (`lease.rs`) notes such changes as it meets them;
//! this file turns each into a violation with its story.

use super::story::{end_causes, events_block, quote};
use super::{Ctx, Mark, Violation, ViolationKind};
use crate::history::event::RecKind;
use crate::history::lease::{self, Finding};
use std::fmt::Write;

impl Ctx<'_> {
    /// Rules broken at one change: a non-owner removing or extending a lease.
    pub(super) fn findings(&mut self) {
        let findings = std::mem::take(&mut self.leases.findings);
        for f in &findings {
            match *f {
                Finding::NonOwnerRemoved {
                    rec,
                    lease,
                    replaced_by,
                } => {
                    let l = &self.leases.leases[lease];
                    if self.leases.not_lock[l.lock as usize] {
                        continue;
                    }
                    let r = &self.h.recs[rec];
                    let RecKind::Key { client, .. } = r.kind else {
                        continue;
                    };
                    let w = &self.w;
                    let what = match replaced_by {
                        Some(o) => format!("taken over by {}", quote(self.h.strings.get(o))),
                        None => "deleted".to_string(),
                    };
                    let summary = format!(
                        "lock {} on {} {} at {} by {}, while {} held it",
                        w.lock(l.lock),
                        w.node(l.node),
                        what,
                        w.at(r.real),
                        w.client(client),
                        quote(self.h.strings.get(l.owner)),
                    );
                    let mut story = format!(
                        "Lock {} on {} was {} at {} by {}, which did not act for its owner:\n\
                         the request did not name the owner's token {} and came from another \
                         connection than the one that took the lock ({}, at {}).\n\
                         The owner's lease had until {} to run.\n\n",
                        w.lock(l.lock),
                        w.node(l.node),
                        what,
                        w.at(r.real),
                        w.client(client),
                        quote(self.h.strings.get(l.owner)),
                        w.client(l.client),
                        w.at(l.start_real),
                        w.at(l.nominal_real),
                    );
                    let mut recs = vec![l.start, rec];
                    if l.refresh != l.start {
                        recs.push(l.refresh);
                    }
                    // How the deleting client came to think it could: its own earlier lease.
                    if let Some(prev) = self.leases.by_lock[l.lock as usize]
                        .iter()
                        .map(|&i| &self.leases.leases[i])
                        .filter(|p| p.node == l.node && p.start < l.start)
                        .rfind(|p| lease::same_client(self.h, p.client, client))
                    {
                        let _ = writeln!(
                            story,
                            "That client had held the lock before: {}.\n",
                            w.lease_line(prev)
                        );
                        recs.push(prev.start);
                        recs.extend(end_causes(self.h, prev));
                    }
                    story.push_str(&events_block(w, recs.clone(), &[]));
                    self.out.push(Violation {
                        kind: ViolationKind::NonOwnerRelease,
                        lock: String::from_utf8_lossy(self.h.lock_key(l.lock)).into_owned(),
                        real_us: r.real,
                        summary,
                        story,
                        mark: Mark {
                            lock: Some(l.lock),
                            nodes: vec![l.node],
                            from_real: l.start_real,
                            to_real: r.real,
                            recs,
                            ..Mark::default()
                        },
                    });
                }
                Finding::TtlGrown {
                    rec,
                    lease,
                    before_t,
                    after_t,
                } => {
                    let l = &self.leases.leases[lease];
                    if self.leases.not_lock[l.lock as usize] {
                        continue;
                    }
                    let r = &self.h.recs[rec];
                    let RecKind::Key { client, .. } = r.kind else {
                        continue;
                    };
                    let w = &self.w;
                    let left = |t: i64| {
                        if t == i64::MAX {
                            "no expiry".to_string()
                        } else {
                            format!("{} ms left", (t - r.t) / 1000)
                        }
                    };
                    let summary = format!(
                        "the lease of {} on lock {} ({}) was extended at {} by {}, which is not its owner",
                        quote(self.h.strings.get(l.owner)),
                        w.lock(l.lock),
                        w.node(l.node),
                        w.at(r.real),
                        w.client(client)
                    );
                    let mut story = format!(
                        "The TTL of lock {} on {} grew from {} to {} at {}, by {}.\n\
                         The lock belonged to {} (taken by {} at {}); the request did not \
                         name that token and came from another connection, so the owner did \
                         not ask for it (a watchdog renewing a lease that is no longer its own?).\n\n",
                        w.lock(l.lock),
                        w.node(l.node),
                        left(before_t),
                        left(after_t),
                        w.at(r.real),
                        w.client(client),
                        quote(self.h.strings.get(l.owner)),
                        w.client(l.client),
                        w.at(l.start_real),
                    );
                    let mut recs = vec![l.start, rec];
                    if let Some(prev) = self.leases.by_lock[l.lock as usize]
                        .iter()
                        .map(|&i| &self.leases.leases[i])
                        .filter(|p| p.node == l.node && p.start < l.start)
                        .rfind(|p| lease::same_client(self.h, p.client, client))
                    {
                        let _ = writeln!(
                            story,
                            "The extending client had held the lock before: {}.\n",
                            w.lease_line(prev)
                        );
                        recs.push(prev.start);
                        recs.extend(end_causes(self.h, prev));
                    }
                    story.push_str(&events_block(w, recs.clone(), &[]));
                    self.out.push(Violation {
                        kind: ViolationKind::TtlGrown,
                        lock: String::from_utf8_lossy(self.h.lock_key(l.lock)).into_owned(),
                        real_us: r.real,
                        summary,
                        story,
                        mark: Mark {
                            lock: Some(l.lock),
                            nodes: vec![l.node],
                            from_real: l.start_real,
                            to_real: r.real,
                            recs,
                            ..Mark::default()
                        },
                    });
                }
            }
        }
    }
}
