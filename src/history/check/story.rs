//! The words of the checker's stories: times relative to the start of the history, nodes,
//! clients, locks, one line per event, client op and lease, and the block of events a story
//! ends with. Separate from the rules because the HTML timeline (`html.rs`) prints the same
//! words, and a rule's file then reads as the rule, not as its formatting.

use crate::history::event::{Cause, History, OpRec, Proof, RecKind, State, Sym};
use crate::history::lease::{End, Lease};
use std::fmt::Write;

/// Words for times and records, relative to the start of the history.
pub(crate) struct Words<'a> {
    pub(crate) h: &'a History,
    pub(crate) t0: i64,
}

/// `HH:MM:SS.mmm` (UTC) of a µs time since the epoch.
pub(crate) fn clock_text(us: i64) -> String {
    let ms = us.div_euclid(1000);
    let day_ms = ms.rem_euclid(86_400_000);
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        day_ms / 3_600_000,
        day_ms / 60_000 % 60,
        day_ms / 1000 % 60,
        day_ms % 1000
    )
}

pub(crate) fn quote(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let s: String = if s.chars().count() > 48 {
        s.chars().take(45).collect::<String>() + "..."
    } else {
        s.into_owned()
    };
    format!("{s:?}")
}

impl Words<'_> {
    pub(crate) fn at(&self, real: i64) -> String {
        if real == i64::MAX {
            return "(never)".into();
        }
        let d = real - self.t0;
        format!(
            "+{}.{:03}s",
            d.div_euclid(1_000_000),
            d.rem_euclid(1_000_000) / 1000
        )
    }

    pub(crate) fn node(&self, n: u16) -> String {
        let name = self.h.node_name(n);
        if name.is_empty() {
            "server".into()
        } else {
            name.to_string()
        }
    }

    pub(crate) fn lock(&self, lock: u32) -> String {
        let (db, _) = self.h.locks[lock as usize];
        let k = quote(self.h.lock_key(lock));
        if db == 0 {
            k
        } else {
            format!("{k} (db {db})")
        }
    }

    pub(crate) fn client(&self, c: Option<u32>) -> String {
        let Some(c) = c else {
            return "an unknown client".into();
        };
        let (node, r) = &self.h.clients[c as usize];
        let mut s = format!("client {}", r.id);
        if !r.name.is_empty() {
            let _ = write!(s, " {:?}", r.name);
        }
        if !r.addr.is_empty() {
            let _ = write!(s, " {}", r.addr);
        }
        if !r.user.is_empty() && r.user != "default" {
            let _ = write!(s, " user {}", r.user);
        }
        if self.h.nodes.len() > 1 {
            let _ = write!(s, " on {}", self.node(*node));
        }
        s
    }

    pub(super) fn str(&self, s: Sym) -> String {
        String::from_utf8_lossy(self.h.strings.get(s)).into_owned()
    }

    /// One line for an event.
    pub(crate) fn rec(&self, i: usize) -> String {
        let r = &self.h.recs[i];
        let mut s = format!("{:>10}  {:<6} ", self.at(r.real), self.node(r.node));
        match &r.kind {
            RecKind::Key {
                lock,
                cause,
                client,
                command,
                script,
                function,
                state,
                ttl_ms,
                proof,
                ..
            } => {
                let _ = write!(s, "{} ", self.lock(*lock));
                match state {
                    State::Gone => s.push_str("removed"),
                    State::Str(o) => {
                        let _ = write!(s, "= {}", quote(self.h.strings.get(*o)));
                    }
                    State::Hash(f) => {
                        s.push_str("= {");
                        for (k, (n, c)) in f.iter().enumerate() {
                            if k > 0 {
                                s.push_str(", ");
                            }
                            let _ = write!(s, "{}: {}", quote(self.h.strings.get(*n)), c);
                        }
                        s.push('}');
                    }
                    State::Other(t) => {
                        let _ = write!(s, "(a {})", self.str(*t));
                    }
                }
                if !matches!(state, State::Gone) {
                    if *ttl_ms >= 0 {
                        let _ = write!(s, " ttl {ttl_ms} ms");
                    } else {
                        s.push_str(" no ttl");
                    }
                }
                match cause {
                    Cause::Client => {
                        let _ = write!(s, ", by {}", self.client(*client));
                        let how = if !self.str(*function).is_empty() {
                            format!("FCALL {}", self.str(*function))
                        } else if !self.str(*script).is_empty() {
                            let sha = self.str(*script);
                            format!("script {}", &sha[..sha.len().min(12)])
                        } else {
                            String::new()
                        };
                        let cmd = self.str(*command).to_uppercase();
                        match (how.is_empty(), cmd.is_empty()) {
                            (false, false) => {
                                let _ = write!(s, " ({how}: {cmd})");
                            }
                            (false, true) => {
                                let _ = write!(s, " ({how})");
                            }
                            (true, false) => {
                                let _ = write!(s, " ({cmd})");
                            }
                            (true, true) => {}
                        }
                        match proof {
                            Proof::Token => s.push_str(" naming the owner"),
                            Proof::Watch => s.push_str(" under WATCH"),
                            Proof::None => {}
                        }
                    }
                    c => {
                        let _ = write!(s, " [{}]", c.as_str());
                    }
                }
            }
            RecKind::Clock {
                from,
                to,
                frozen,
                how,
            } => {
                let d = to - from;
                let _ = write!(
                    s,
                    "CLOCK {} {}{}.{:03} s (server time {} -> {}){}",
                    self.str(*how),
                    if d >= 0 { "+" } else { "-" },
                    d.abs() / 1_000_000,
                    d.abs() % 1_000_000 / 1000,
                    clock_text(*from),
                    clock_text(*to),
                    if *frozen { ", frozen" } else { "" }
                );
            }
            RecKind::Restart { mode } => {
                let _ = write!(s, "RESTART {}", self.str(*mode));
            }
            RecKind::Fault { text } => {
                let _ = write!(s, "FAULT {}", self.str(*text));
            }
            RecKind::Fenced {
                resource,
                token,
                value,
                accepted,
                client,
            } => {
                let _ = write!(
                    s,
                    "resource {} written {} with fencing token {}, {} (by {})",
                    quote(self.h.strings.get(*resource)),
                    quote(self.h.strings.get(*value)),
                    token,
                    if *accepted { "accepted" } else { "rejected" },
                    self.client(*client)
                );
            }
        }
        s
    }

    /// One line for a client op.
    pub(crate) fn op(&self, op: &OpRec) -> String {
        let mut s = format!(
            "{:>10}  {:<6} {} {} {}",
            self.at(op.invoke),
            "client",
            self.str(op.client),
            op.op.as_str(),
            self.lock(op.lock)
        );
        if self.h.strings.get(op.token) != self.h.strings.get(op.client) {
            let _ = write!(s, " token {}", quote(self.h.strings.get(op.token)));
        }
        if let Some(t) = op.ttl_ms {
            let _ = write!(s, " ttl {t} ms");
        }
        if !self.h.strings.get(op.resource).is_empty() {
            let _ = write!(s, " resource {}", quote(self.h.strings.get(op.resource)));
        }
        if let Some(f) = op.fence {
            let _ = write!(s, " fence {f}");
        }
        let _ = write!(
            s,
            " -> {} at {}",
            match op.ok {
                Some(true) => "ok",
                Some(false) => "refused",
                None => "unknown",
            },
            self.at(op.complete)
        );
        s
    }

    pub(crate) fn lease_line(&self, l: &Lease) -> String {
        let ttl = if l.ttl_ms >= 0 {
            format!("TTL {} ms", l.ttl_ms)
        } else {
            "no TTL".into()
        };
        format!(
            "{} on {} held by {} from {} ({ttl}{}); it could count on it until {}; it ended at {}: {}",
            quote(self.h.strings.get(l.owner)),
            self.node(l.node),
            self.client(l.client),
            self.at(l.start_real),
            if l.extensions > 0 {
                format!(", extended {} time{}", l.extensions, if l.extensions == 1 { "" } else { "s" })
            } else {
                String::new()
            },
            self.at(l.nominal_real),
            self.at(l.end_real),
            l.end_why.text()
        )
    }
}

/// The events that explain why a lease ended: its end, and the fault or clock move of that
/// node just before it.
pub(super) fn end_causes(h: &History, l: &Lease) -> Vec<usize> {
    let mut v = Vec::new();
    if let Some(e) = l.end {
        v.push(e);
    }
    let want = match l.end_why {
        End::Restart => |k: &RecKind| matches!(k, RecKind::Restart { .. }),
        End::ClockJump => |k: &RecKind| matches!(k, RecKind::Clock { .. }),
        _ => return v,
    };
    // The nearest such event of that node at or before the end.
    let limit = l.end.unwrap_or(h.recs.len());
    if let Some(i) = (l.start..limit.min(h.recs.len())).rev().find(|&i| {
        h.recs[i].node == l.node && want(&h.recs[i].kind) && h.recs[i].real <= l.end_real
    }) {
        v.push(i);
    } else if let Some(i) = (l.start..h.recs.len()).find(|&i| {
        h.recs[i].node == l.node && want(&h.recs[i].kind) && h.recs[i].real >= l.end_real
    }) {
        v.push(i);
    }
    v
}

pub(super) fn events_block(w: &Words<'_>, mut recs: Vec<usize>, ops: &[usize]) -> String {
    recs.sort_unstable_by_key(|&i| (w.h.recs[i].real, i));
    recs.dedup();
    let mut lines: Vec<(i64, String)> =
        recs.iter().map(|&i| (w.h.recs[i].real, w.rec(i))).collect();
    for &o in ops {
        lines.push((w.h.ops[o].invoke, w.op(&w.h.ops[o])));
    }
    lines.sort_by_key(|l| l.0);
    let mut s = String::from("The events, in order (real time since the history began):\n");
    for (_, l) in lines {
        let _ = writeln!(s, "  {l}");
    }
    s
}
