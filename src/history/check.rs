//! The safety rules, checked over a [`History`], and the stories that explain a violation.

use super::event::{History, OpKind, OpRec, Proof, RecKind, State, Sym};
use super::lease::{self, End, Finding, Lease, Leases};
use super::linear::{self, LinOp, Outcome, NOBODY};
use super::timebase::Clocks;
use std::collections::HashMap;
use std::fmt::{self, Write};
use std::time::{Duration, Instant};

/// How to check.
///
/// ```
/// let o = resplock::history::CheckOptions { quorum: Some(3), ..Default::default() };
/// assert!(o.linearizability);
/// ```
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Tolerance for comparing times, µs: TTLs are whole milliseconds, so a lease's end is
    /// known to about a millisecond. Default 1000.
    pub slack_us: i64,
    /// Check the client ops for linearizability against the lease model. Default on.
    pub linearizability: bool,
    /// The majority of a Redlock (a key seen on several nodes); default: more than half of
    /// the run's nodes.
    pub quorum: Option<usize>,
    /// The linearizability search's step budget over all locks; past it the result is
    /// "unknown", not a violation. Default 50,000,000.
    pub max_steps: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            slack_us: 1000,
            linearizability: true,
            quorum: None,
            max_steps: 50_000_000,
        }
    }
}

/// The rule a violation broke.
///
/// ```
/// assert_eq!(resplock::history::ViolationKind::TwoHolders.title(), "two holders at once");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    /// A request that did not act for the owner deleted or replaced a live lock.
    NonOwnerRelease,
    /// A request that did not act for the owner made the lease longer.
    TtlGrown,
    /// Two clients held (or could believe they held) the lock at once; for Redlock, two
    /// majorities.
    TwoHolders,
    /// A resource accepted a fencing token not greater than one it accepted before.
    StaleFence,
    /// A client used the resource outside any lease it held.
    UseOutsideLease,
    /// The clients' operations on a lock fit no single lease's behaviour.
    NotLinearizable,
}

impl ViolationKind {
    /// A short title.
    ///
    /// ```
    /// assert_eq!(resplock::history::ViolationKind::StaleFence.title(), "stale fencing token accepted");
    /// ```
    pub fn title(self) -> &'static str {
        match self {
            ViolationKind::NonOwnerRelease => "released or taken by a non-owner",
            ViolationKind::TtlGrown => "lease extended by a non-owner",
            ViolationKind::TwoHolders => "two holders at once",
            ViolationKind::StaleFence => "stale fencing token accepted",
            ViolationKind::UseOutsideLease => "resource used outside the lease",
            ViolationKind::NotLinearizable => "not linearizable",
        }
    }
}

/// One broken rule: what, where, when, and the story of how it came about.
///
/// ```
/// use resplock::history::{CheckOptions, History, ViolationKind};
/// let h = History::from_json_lines(br#"
/// {"ev":"key","t":0,"real":0,"key":"l","owner":"a","ttl":10000,"client":{"id":1}}
/// {"ev":"key","t":5000,"real":5000,"key":"l","state":"gone","client":{"id":2}}
/// "#).unwrap();
/// let v = &h.check(&CheckOptions::default()).violations[0];
/// assert_eq!(v.kind, ViolationKind::NonOwnerRelease);
/// assert!(v.story.contains("did not act for its owner"));
/// ```
#[derive(Clone, Debug)]
pub struct Violation {
    /// The rule.
    pub kind: ViolationKind,
    /// The lock (or resource) it concerns.
    pub lock: String,
    /// When it happened, real time µs.
    pub real_us: i64,
    /// One line.
    pub summary: String,
    /// The story: who, which nodes, the events in order, the fault that caused it.
    pub story: String,
    pub(crate) mark: Mark,
}

/// What the timeline highlights for a violation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mark {
    pub(crate) lock: Option<u32>,
    pub(crate) resource: Option<Sym>,
    pub(crate) nodes: Vec<u16>,
    pub(crate) from_real: i64,
    pub(crate) to_real: i64,
    pub(crate) recs: Vec<usize>,
    pub(crate) ops: Vec<usize>,
}

/// The outcome of [`History::check`].
///
/// ```
/// let r = resplock::history::History::new().check(&Default::default());
/// assert!(r.is_clean());
/// assert!(r.to_string().contains("no violation"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every violation found, earliest first.
    pub violations: Vec<Violation>,
    /// Server events read.
    pub events: usize,
    /// Client ops read.
    pub ops: usize,
    /// Locks seen (keys with an owner).
    pub locks: usize,
    /// Leases rebuilt from the events.
    pub leases: usize,
    /// Fenced writes.
    pub fenced_writes: usize,
    /// Nodes.
    pub nodes: usize,
    /// Lock operations checked for linearizability, and in how many locks.
    pub linearized_ops: usize,
    /// Locks whose linearizability search ran out of steps (inconclusive, not violations).
    pub inconclusive_locks: Vec<String>,
    /// Events the recorder dropped (bounded memory): checks near them are weaker.
    pub dropped: u64,
    /// Time spent checking.
    pub elapsed: Duration,
    /// Time spent in the linearizability search.
    pub linearizability_elapsed: Duration,
    pub(crate) leases_built: Option<std::sync::Arc<(Leases, i64)>>,
}

impl Report {
    /// No rule was broken.
    ///
    /// ```
    /// assert!(resplock::history::Report::default().is_clean());
    /// ```
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// The earliest violation.
    ///
    /// ```
    /// assert!(resplock::history::Report::default().first().is_none());
    /// ```
    pub fn first(&self) -> Option<&Violation> {
        self.violations.first()
    }

    /// The figures, one line.
    ///
    /// ```
    /// assert!(resplock::history::Report::default().summary().starts_with("checked 0 events"));
    /// ```
    pub fn summary(&self) -> String {
        let mut s = format!(
            "checked {} events ({} leases of {} locks on {} node{}), {} client ops ({} checked for linearizability), {} fenced writes in {:.3} s",
            self.events,
            self.leases,
            self.locks,
            self.nodes,
            if self.nodes == 1 { "" } else { "s" },
            self.ops,
            self.linearized_ops,
            self.fenced_writes,
            self.elapsed.as_secs_f64()
        );
        if self.linearized_ops > 0 {
            let _ = write!(
                s,
                " (linearizability {:.3} s)",
                self.linearizability_elapsed.as_secs_f64()
            );
        }
        if self.dropped > 0 {
            let _ = write!(s, "; the recorder dropped {} events", self.dropped);
        }
        if !self.inconclusive_locks.is_empty() {
            let _ = write!(
                s,
                "; linearizability inconclusive (search budget) for {}",
                self.inconclusive_locks.join(", ")
            );
        }
        s
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.first() {
            None => writeln!(f, "no violation: {}", self.summary()),
            Some(v) => {
                writeln!(f, "VIOLATION: {}", v.summary)?;
                writeln!(f)?;
                write!(f, "{}", v.story)?;
                if self.violations.len() > 1 {
                    writeln!(f)?;
                    writeln!(
                        f,
                        "{} violations in all; the others:",
                        self.violations.len()
                    )?;
                    for v in self.violations.iter().skip(1).take(20) {
                        writeln!(f, "  - {}", v.summary)?;
                    }
                    if self.violations.len() > 21 {
                        writeln!(f, "  ... and {} more", self.violations.len() - 21)?;
                    }
                }
                writeln!(f)?;
                writeln!(f, "{}", self.summary())
            }
        }
    }
}

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

    fn str(&self, s: Sym) -> String {
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
                    super::event::Cause::Client => {
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
fn end_causes(h: &History, l: &Lease) -> Vec<usize> {
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

fn events_block(w: &Words<'_>, mut recs: Vec<usize>, ops: &[usize]) -> String {
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

struct Ctx<'a> {
    h: &'a History,
    opts: &'a CheckOptions,
    clocks: Clocks,
    leases: Leases,
    w: Words<'a>,
    all_nodes: Vec<u16>,
    /// Leases by (lock, owner).
    by_owner: HashMap<(u32, Sym), Vec<usize>, ahash::RandomState>,
    out: Vec<Violation>,
}

/// Checks every rule (the module documentation of `history` lists them).
pub(crate) fn check(h: &History, opts: &CheckOptions) -> Report {
    let started = Instant::now();
    let clocks = Clocks::build(h);
    let mut leases = lease::build(h, &clocks);
    lease::nominal_ends(h, &clocks, &mut leases);
    let t0 = h
        .recs
        .iter()
        .map(|r| r.real)
        .chain(h.ops.iter().map(|o| o.invoke))
        .min()
        .unwrap_or(0);
    let mut cx = Ctx {
        h,
        opts,
        clocks,
        leases,
        w: Words { h, t0 },
        all_nodes: lease::all_nodes(h),
        by_owner: HashMap::default(),
        out: Vec::new(),
    };
    for (i, l) in cx.leases.leases.iter().enumerate() {
        cx.by_owner.entry((l.lock, l.owner)).or_default().push(i);
    }
    cx.findings();
    cx.holders();
    let fenced = cx.fences();
    cx.uses();
    let lin_started = Instant::now();
    let (linearized, inconclusive) = if opts.linearizability {
        cx.linearizability()
    } else {
        (0, Vec::new())
    };
    let lin_elapsed = lin_started.elapsed();
    let mut violations = std::mem::take(&mut cx.out);
    violations.sort_by_key(|v| (v.real_us, v.kind));
    let leases = cx.leases;
    Report {
        events: h.recs.len(),
        ops: h.ops.len(),
        locks: (0..h.locks.len()).filter(|&l| !leases.not_lock[l]).count(),
        leases: leases.leases.len(),
        fenced_writes: fenced,
        nodes: cx.all_nodes.len().max(usize::from(!h.recs.is_empty())),
        linearized_ops: linearized,
        inconclusive_locks: inconclusive,
        dropped: h.dropped,
        elapsed: started.elapsed(),
        linearizability_elapsed: lin_elapsed,
        violations,
        leases_built: Some(std::sync::Arc::new((leases, t0))),
    }
}

impl Ctx<'_> {
    fn quorum(&self, lock: u32) -> (usize, usize) {
        let scope = lease::lock_scope(self.h, &self.leases, lock);
        let n = scope.len().max(1);
        let q = if n > 1 {
            self.opts.quorum.unwrap_or(n / 2 + 1).clamp(1, n)
        } else {
            1
        };
        (n, q)
    }

    /// Rules broken at one change: a non-owner removing or extending a lease.
    fn findings(&mut self) {
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

    /// At most one owner holds a majority of nominal leases (one lease, on one node) at any
    /// moment of the lock's reference clock.
    fn holders(&mut self) {
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
    fn fences(&mut self) -> usize {
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
    fn uses(&mut self) {
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

    /// The client ops of each lock against the lease model.
    fn linearizability(&mut self) -> (usize, Vec<String>) {
        let h = self.h;
        let mut per: HashMap<u32, Vec<usize>, ahash::RandomState> = HashMap::default();
        for (i, op) in h.ops.iter().enumerate() {
            if op.op != OpKind::Use {
                per.entry(op.lock).or_default().push(i);
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

impl History {
    /// Checks the history: at most one holder per lock at a time (for a key on several
    /// nodes, at most one client with a majority), releases and extensions only by the
    /// owner, fencing tokens increasing, resource use inside a lease, and the client ops
    /// linearizable against a lease (the module documentation of `history` says how).
    ///
    /// ```
    /// use resplock::history::{CheckOptions, History, ViolationKind};
    /// // Client 2 takes the lock while client 1's lease has 9 s left: the key was overwritten.
    /// let h = History::from_json_lines(br#"
    /// {"ev":"key","t":0,"real":0,"key":"l","owner":"a","ttl":10000,"client":{"id":1}}
    /// {"ev":"key","t":1000000,"real":1000000,"key":"l","owner":"b","ttl":10000,"client":{"id":2}}
    /// "#).unwrap();
    /// let r = h.check(&CheckOptions::default());
    /// assert_eq!(r.first().unwrap().kind, ViolationKind::NonOwnerRelease);
    /// assert!(r.violations.iter().any(|v| v.kind == ViolationKind::TwoHolders));
    /// ```
    pub fn check(&self, opts: &CheckOptions) -> Report {
        check(self, opts)
    }
}
