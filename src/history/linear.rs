//! Linearizability of the clients' lock operations against a lease model.
//!
//! The search is Porcupine's (Lowe's just-in-time linearizability with Wing & Gong's
//! backtracking): the operations of one lock (locks are independent, so each is its own
//! partition, P-compositionality) are a list of call and return entries in time order; a
//! depth-first search linearizes a call whose operation the model accepts next, and
//! backtracks when it reaches the return of an operation it has not placed. A cache of
//! (operations linearized, model state) visited prunes the search. A nondeterministic model is
//! run as its power set (Porcupine's `NondeterministicModel`): the state is the set of states
//! the model can be in.
//!
//! The lease model needs time: an acquire succeeds when the previous lease is free or its
//! TTL has passed *at the operation's linearization point*, which may lie anywhere in its
//! [invoke, complete] interval. A state therefore keeps, besides the holder and its hold
//! count, the set of times still possible for the current lease's end `E` and the last
//! linearization point `L` as a zone: a difference-bound matrix over {0, E, L}. Each operation
//! adds its point `P` with `L <= P`, `invoke <= P <= complete`, and its condition (`P <= E`
//! held, `P > E` expired, `E' = P + ttl ± slack` a new lease), then `E` and `L` are projected
//! away (Floyd-Warshall closure of a 5-variable matrix). The projection is exact for
//! difference constraints and later operations only constrain `E` and `L`, so a history is
//! accepted exactly when linearization points exist; equal (or included) zones make equal
//! cache entries. Times are µs integers, so `P > E` is `E - P <= -1`.

use super::event::OpKind;
use std::collections::HashMap;

const INF: i64 = i64::MAX / 4;

fn add(a: i64, b: i64) -> i64 {
    if a >= INF || b >= INF {
        INF
    } else {
        (a + b).min(INF)
    }
}

/// Bounds over {0, E, L}: `d[i][j]` bounds `x_i - x_j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Zone([[i64; 3]; 3]);

impl Zone {
    fn start() -> Zone {
        // E free, L anywhere.
        let mut d = [[INF; 3]; 3];
        for (i, row) in d.iter_mut().enumerate() {
            row[i] = 0;
        }
        Zone(d)
    }

    fn within(&self, other: &Zone) -> bool {
        (0..3).all(|i| (0..3).all(|j| self.0[i][j] <= other.0[i][j]))
    }
}

/// What an operation asks of the current lease.
#[derive(Clone, Copy)]
enum Cond {
    Any,
    Held,
    Expired,
}

/// The lease end after an operation.
#[derive(Clone, Copy)]
enum NewEnd {
    Keep,
    /// `E' - P` in [lo, hi].
    FromPoint(i64, i64),
    /// `E' - E` = add.
    Add(i64),
    Free,
}

/// The zone after an operation at a point in [a, b], or None if impossible.
#[allow(clippy::needless_range_loop)] // matrix indices read best as indices
fn apply(z: &Zone, a: i64, b: i64, cond: Cond, end: NewEnd) -> Option<Zone> {
    // Variables: 0 zero, 1 E, 2 L, 3 P, 4 E'.
    let mut d = [[INF; 5]; 5];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = 0;
    }
    for i in 0..3 {
        for j in 0..3 {
            d[i][j] = z.0[i][j];
        }
    }
    let tighten = |d: &mut [[i64; 5]; 5], i: usize, j: usize, v: i64| {
        if v < d[i][j] {
            d[i][j] = v;
        }
    };
    if b < INF {
        tighten(&mut d, 3, 0, b);
    }
    tighten(&mut d, 0, 3, -a);
    tighten(&mut d, 2, 3, 0);
    match cond {
        Cond::Any => {}
        Cond::Held => tighten(&mut d, 3, 1, 0),
        Cond::Expired => tighten(&mut d, 1, 3, -1),
    }
    match end {
        NewEnd::Keep => {
            tighten(&mut d, 4, 1, 0);
            tighten(&mut d, 1, 4, 0);
        }
        NewEnd::FromPoint(lo, hi) => {
            tighten(&mut d, 4, 3, hi);
            tighten(&mut d, 3, 4, -lo);
        }
        NewEnd::Add(x) => {
            tighten(&mut d, 4, 1, x);
            tighten(&mut d, 1, 4, -x);
        }
        NewEnd::Free => {}
    }
    for k in 0..5 {
        for i in 0..5 {
            let dik = d[i][k];
            if dik >= INF {
                continue;
            }
            for j in 0..5 {
                let v = add(dik, d[k][j]);
                if v < d[i][j] {
                    d[i][j] = v;
                }
            }
        }
    }
    if (0..5).any(|i| d[i][i] < 0) {
        return None;
    }
    let map = [0, 4, 3];
    let mut out = [[INF; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = d[map[i]][map[j]];
        }
    }
    if matches!(end, NewEnd::Free) {
        for k in [0, 2] {
            out[1][k] = INF;
            out[k][1] = INF;
        }
    }
    Some(Zone(out))
}

/// One state of the lease model.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct MState {
    /// The holder's token (NOBODY: nobody).
    holder: u32,
    count: u32,
    /// The lease has no TTL.
    forever: bool,
    zone: Zone,
}

pub(crate) const NOBODY: u32 = u32::MAX;

impl MState {
    fn within(&self, o: &MState) -> bool {
        self.holder == o.holder
            && self.count == o.count
            && self.forever == o.forever
            && self.zone.within(&o.zone)
    }
}

/// An operation for the model: reference-clock times, owner token, result.
#[derive(Clone, Debug)]
pub(crate) struct LinOp {
    pub(crate) kind: OpKind,
    pub(crate) token: u32,
    pub(crate) ok: Option<bool>,
    pub(crate) a: i64,
    /// i64::MAX: never returned.
    pub(crate) b: i64,
    pub(crate) ttl_us: Option<i64>,
    pub(crate) add_us: Option<i64>,
    /// A failure is not evidence the lock was held (Redlock: a minority of nodes answered).
    pub(crate) failure_says_nothing: bool,
    /// The index of the op in the history.
    pub(crate) id: usize,
}

fn push(out: &mut Vec<MState>, holder: u32, count: u32, forever: bool, z: Option<Zone>) {
    if let Some(zone) = z {
        out.push(MState {
            holder,
            count,
            forever,
            zone,
        });
    }
}

fn new_lease(ttl: Option<i64>, slack: i64) -> (NewEnd, bool) {
    match ttl {
        Some(t) => (NewEnd::FromPoint(t - slack, t + slack), false),
        None => (NewEnd::Free, true),
    }
}

/// The states after `op` succeeded from `s`.
fn succeed(s: &MState, op: &LinOp, a: i64, b: i64, slack: i64, out: &mut Vec<MState>) {
    let held = if s.forever { Cond::Any } else { Cond::Held };
    let mine = s.holder == op.token;
    match op.kind {
        OpKind::Acquire => {
            let (end, forever) = new_lease(op.ttl_us, slack);
            if s.holder == NOBODY {
                push(
                    out,
                    op.token,
                    1,
                    forever,
                    apply(&s.zone, a, b, Cond::Any, end),
                );
            } else {
                if !s.forever {
                    let z = apply(&s.zone, a, b, Cond::Expired, end);
                    push(out, op.token, 1, forever, z);
                }
                if mine {
                    let z = apply(&s.zone, a, b, held, end);
                    push(out, op.token, s.count + 1, forever, z);
                }
            }
        }
        OpKind::Release => {
            if !mine {
                return;
            }
            if s.count > 1 {
                let (end, forever) = match op.ttl_us {
                    Some(_) => new_lease(op.ttl_us, slack),
                    None => (NewEnd::Keep, s.forever),
                };
                let z = apply(&s.zone, a, b, held, end);
                push(out, op.token, s.count - 1, forever, z);
            } else {
                push(
                    out,
                    NOBODY,
                    0,
                    false,
                    apply(&s.zone, a, b, held, NewEnd::Free),
                );
            }
        }
        OpKind::Extend => {
            if !mine {
                return;
            }
            let (end, forever) = match (op.ttl_us, op.add_us) {
                (_, Some(x)) if !s.forever => (NewEnd::Add(x), false),
                (_, Some(_)) => (NewEnd::Keep, true),
                (t, None) => new_lease(t, slack),
            };
            push(
                out,
                op.token,
                s.count,
                forever,
                apply(&s.zone, a, b, held, end),
            );
        }
        OpKind::Use => {}
    }
}

/// The states after `op` failed from `s`.
fn fail(s: &MState, op: &LinOp, a: i64, b: i64, out: &mut Vec<MState>) {
    let held = if s.forever { Cond::Any } else { Cond::Held };
    match op.kind {
        OpKind::Acquire => {
            if s.holder != NOBODY {
                let z = apply(&s.zone, a, b, held, NewEnd::Keep);
                push(out, s.holder, s.count, s.forever, z);
            }
        }
        OpKind::Release | OpKind::Extend => {
            if s.holder == NOBODY {
                push(
                    out,
                    NOBODY,
                    0,
                    false,
                    apply(&s.zone, a, b, Cond::Any, NewEnd::Free),
                );
            } else if s.holder != op.token {
                let z = apply(&s.zone, a, b, Cond::Any, NewEnd::Keep);
                push(out, s.holder, s.count, s.forever, z);
            } else if !s.forever {
                let z = apply(&s.zone, a, b, Cond::Expired, NewEnd::Free);
                push(out, NOBODY, 0, false, z);
            }
        }
        OpKind::Use => {}
    }
}

fn step(s: &MState, op: &LinOp, slack: i64, out: &mut Vec<MState>) {
    let b = if op.b == i64::MAX { INF } else { op.b };
    match op.ok {
        Some(true) => succeed(s, op, op.a, b, slack, out),
        Some(false) if !op.failure_says_nothing => fail(s, op, op.a, b, out),
        // Unknown: it took effect, or it did not (then it constrains nothing).
        _ => {
            out.push(s.clone());
            succeed(s, op, op.a, b, slack, out);
        }
    }
}

/// The set of states, normalized: sorted, without states another includes.
fn normalize(mut v: Vec<MState>) -> Vec<MState> {
    v.sort_unstable();
    v.dedup();
    if v.len() == 1 {
        return v;
    }
    let mut keep = Vec::with_capacity(v.len());
    for (i, s) in v.iter().enumerate() {
        if !v.iter().enumerate().any(|(j, o)| j != i && s.within(o)) {
            keep.push(s.clone());
        }
    }
    keep
}

/// The operations placed so far: every op before `low` plus `extra` (sorted).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Placed {
    low: u32,
    extra: Vec<u32>,
}

impl Placed {
    fn insert(&mut self, i: u32) {
        if i == self.low {
            self.low += 1;
            while self.extra.first() == Some(&self.low) {
                self.extra.remove(0);
                self.low += 1;
            }
        } else {
            let at = self.extra.partition_point(|&x| x < i);
            self.extra.insert(at, i);
        }
    }
}

/// Why a partition is not linearizable: the furthest the search got.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    /// History op ids placed in order on the longest path found.
    pub(crate) placed: Vec<usize>,
    /// The op whose return came before it could be placed (history id).
    pub(crate) stuck: usize,
    /// The holders possible at that point (token or NOBODY), with the earliest and latest
    /// times their lease may end (reference clock, µs; INF-ish when unbounded).
    pub(crate) holders: Vec<(u32, i64, i64)>,
}

/// The outcome for one partition.
#[derive(Clone, Debug)]
pub(crate) enum Outcome {
    Ok,
    Fail(Failure),
    /// The search ran past its step budget.
    Unknown,
}

/// Checks the ops of one lock (in any order; they are sorted here). `budget` counts search
/// steps left.
pub(crate) fn check(ops: &[LinOp], slack: i64, budget: &mut u64) -> Outcome {
    let n = ops.len();
    if n == 0 {
        return Outcome::Ok;
    }
    // Ops are numbered by invocation; entries are calls and returns in time order (a call
    // before a return at the same time: they overlap).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (ops[i].a, ops[i].b));
    let ops: Vec<&LinOp> = order.iter().map(|&i| &ops[i]).collect();
    let mut entries: Vec<(i64, bool, u32)> = Vec::with_capacity(2 * n);
    for (i, o) in ops.iter().enumerate() {
        entries.push((o.a, false, i as u32));
        entries.push((o.b, true, i as u32));
    }
    entries.sort_unstable_by_key(|&(t, ret, i)| (t, ret, i));
    // A doubly-linked list over entries, with a head sentinel at index 2n.
    let head = 2 * n;
    let mut next = vec![usize::MAX; 2 * n + 1];
    let mut prev = vec![usize::MAX; 2 * n + 1];
    let mut call_of = vec![0usize; n];
    let mut ret_of = vec![0usize; n];
    let mut last = head;
    for (k, &(_, ret, i)) in entries.iter().enumerate() {
        next[last] = k;
        prev[k] = last;
        last = k;
        if ret {
            ret_of[i as usize] = k;
        } else {
            call_of[i as usize] = k;
        }
    }
    let lift = |next: &mut [usize], prev: &mut [usize], i: usize| {
        for e in [call_of[i], ret_of[i]] {
            let (p, nx) = (prev[e], next[e]);
            next[p] = nx;
            if nx != usize::MAX {
                prev[nx] = p;
            }
        }
    };
    let unlift = |next: &mut [usize], prev: &mut [usize], i: usize| {
        for e in [ret_of[i], call_of[i]] {
            let (p, nx) = (prev[e], next[e]);
            next[p] = e;
            if nx != usize::MAX {
                prev[nx] = e;
            }
        }
    };
    let mut state: Vec<MState> = vec![MState {
        holder: NOBODY,
        count: 0,
        forever: false,
        zone: Zone::start(),
    }];
    let mut placed = Placed::default();
    let mut cache: HashMap<Placed, Vec<Vec<MState>>, ahash::RandomState> = HashMap::default();
    // The stack: (op placed, the state and placed set before it).
    let mut stack: Vec<(usize, Vec<MState>, Placed)> = Vec::new();
    let mut best: Option<Failure> = None;
    let mut buf = Vec::new();
    let mut entry = next[head];
    while next[head] != usize::MAX {
        if *budget == 0 {
            return Outcome::Unknown;
        }
        *budget -= 1;
        let (_, is_ret, i) = entries[entry];
        let i = i as usize;
        if !is_ret {
            buf.clear();
            for s in &state {
                step(s, ops[i], slack, &mut buf);
            }
            if !buf.is_empty() {
                let new_state = normalize(std::mem::take(&mut buf));
                let mut new_placed = placed.clone();
                new_placed.insert(i as u32);
                let seen = cache.entry(new_placed.clone()).or_default();
                let covered = seen
                    .iter()
                    .any(|old| new_state.iter().all(|s| old.iter().any(|o| s.within(o))));
                if !covered {
                    seen.push(new_state.clone());
                    stack.push((i, std::mem::replace(&mut state, new_state), placed));
                    placed = new_placed;
                    lift(&mut next, &mut prev, i);
                    entry = next[head];
                    continue;
                }
            }
            entry = next[entry];
        } else {
            // The return of an op not placed yet: what was tried from here failed.
            if best.as_ref().is_none_or(|b| stack.len() >= b.placed.len()) {
                best = Some(Failure {
                    placed: stack.iter().map(|s| ops[s.0].id).collect(),
                    stuck: ops[i].id,
                    holders: state
                        .iter()
                        .map(|s| (s.holder, -s.zone.0[0][1], s.zone.0[1][0]))
                        .collect(),
                });
            }
            let Some((top, old_state, old_placed)) = stack.pop() else {
                return Outcome::Fail(best.expect("a failure was recorded"));
            };
            state = old_state;
            placed = old_placed;
            unlift(&mut next, &mut prev, top);
            entry = next[call_of[top]];
        }
    }
    Outcome::Ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use OpKind::*;

    fn op(kind: OpKind, token: u32, ok: Option<bool>, a: i64, b: i64, ttl: Option<i64>) -> LinOp {
        LinOp {
            kind,
            token,
            ok,
            a,
            b,
            ttl_us: ttl,
            add_us: None,
            failure_says_nothing: false,
            id: 0,
        }
    }

    fn run(mut ops: Vec<LinOp>) -> bool {
        for (i, o) in ops.iter_mut().enumerate() {
            o.id = i;
        }
        let mut budget = 1_000_000;
        matches!(check(&ops, 0, &mut budget), Outcome::Ok)
    }

    #[test]
    fn sequential_acquire_release_is_linearizable() {
        assert!(run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 2, Some(false), 20, 30, Some(100)),
            op(Release, 1, Some(true), 40, 50, None),
            op(Acquire, 2, Some(true), 60, 70, Some(100)),
        ]));
    }

    #[test]
    fn two_holders_within_the_lease_are_not() {
        assert!(!run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 2, Some(true), 50, 60, Some(100)),
        ]));
    }

    #[test]
    fn a_second_acquire_after_the_ttl_depends_on_the_points() {
        // Granted in [0, 10] with TTL 100: free after 100 at the earliest.
        assert!(run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 2, Some(true), 105, 106, Some(100)),
        ]));
        assert!(!run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 2, Some(true), 95, 100, Some(100)),
        ]));
        // 3 found it held in [103, 104]: 1 was granted at 3 or later; 2's grant then lies
        // in (103 + ..., 111]: still possible.
        assert!(run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 3, Some(false), 103, 104, Some(100)),
            op(Acquire, 2, Some(true), 100, 111, Some(100)),
        ]));
        // 3 found it held at [109, 110]: 1 granted at 9 or later, so 2's grant in [100, 109]
        // cannot come after 1's lease, nor can 3's failure precede 2 (it is after 109).
        assert!(!run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(100)),
            op(Acquire, 2, Some(true), 100, 109, Some(100)),
            op(Release, 2, Some(true), 109, 109, None),
            op(Acquire, 3, Some(false), 110, 111, Some(100)),
        ]));
    }

    #[test]
    fn a_failed_release_of_ones_own_lock_means_it_expired() {
        // Granted in [0, 50] with TTL 100: it cannot have expired by 70.
        assert!(!run(vec![
            op(Acquire, 1, Some(true), 0, 50, Some(100)),
            op(Release, 1, Some(false), 60, 70, None),
        ]));
        assert!(run(vec![
            op(Acquire, 1, Some(true), 0, 50, Some(100)),
            op(Release, 1, Some(false), 160, 170, None),
        ]));
    }

    #[test]
    fn release_by_a_non_holder_fails_and_reentry_counts() {
        assert!(!run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(1000)),
            op(Release, 2, Some(true), 20, 30, None),
        ]));
        assert!(run(vec![
            op(Acquire, 1, Some(true), 0, 10, Some(1000)),
            op(Acquire, 1, Some(true), 20, 30, Some(1000)),
            op(Release, 1, Some(true), 40, 50, None),
            op(Acquire, 2, Some(false), 60, 70, Some(1000)),
            op(Release, 1, Some(true), 80, 90, None),
            op(Acquire, 2, Some(true), 100, 110, Some(1000)),
        ]));
    }

    #[test]
    fn unknown_results_may_or_may_not_have_happened() {
        assert!(run(vec![
            op(Acquire, 1, None, 0, i64::MAX, Some(100)),
            op(Acquire, 2, Some(true), 20, 30, Some(100)),
        ]));
        assert!(run(vec![
            op(Acquire, 1, None, 0, i64::MAX, Some(100)),
            op(Acquire, 2, Some(false), 20, 30, Some(100)),
        ]));
    }

    #[test]
    fn concurrent_contenders_find_an_order() {
        // Ten clients call acquire at once; they are granted one after another.
        let mut ops = Vec::new();
        let mut t = 0;
        for c in 0..10u32 {
            ops.push(op(Acquire, c, Some(true), 0, t + 10, Some(10_000)));
            ops.push(op(Release, c, Some(true), t + 10, t + 20, None));
            t += 20;
        }
        assert!(run(ops));
    }
}
