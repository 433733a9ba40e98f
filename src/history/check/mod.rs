//! The safety rules, checked over a [`History`], and the stories that explain a violation.
//!
//! This file holds what the checker answers ([`Report`], [`Violation`], [`CheckOptions`]) and
//! the driver that rebuilds the leases and runs each rule; the rules themselves live one per
//! file, in the order the module documentation of `history` lists them: `owner.rs` (owner
//! only), `holders.rs` (one holder), `fencing.rs` (fencing tokens and resource use) and
//! `linearizability.rs`; `story.rs` words the times, events and leases their stories (and the
//! timeline) print.

mod fencing;
mod holders;
mod linearizability;
mod owner;
pub(crate) mod story;

use super::event::{History, Sym};
use super::lease::{self, Leases};
use super::timebase::Clocks;
use std::collections::HashMap;
use std::fmt::{self, Write};
use std::time::{Duration, Instant};
use story::Words;

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
