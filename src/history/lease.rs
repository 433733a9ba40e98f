//! Leases rebuilt from the server's key changes: who held each lock on each node, from when,
//! until when and why it ended. A string lock's owner is its value; a hash lock's owners are
//! its fields (Redisson's `uuid:thread`). A key that a counter command wrote (INCR...) is not
//! a lock, nor a hash with a `mode` field (Redisson's read-write lock, many readers).
//!
//! Each lease has two ends: the *actual* one (the key lost that owner: released, expired,
//! overwritten, lost in a restart...) and the *nominal* one, where its holder may believe it
//! still holds the lock: its last grant or extension plus the TTL it asked for, on the lock's
//! reference clock, or its own release. A lease that ends early (a restart lost it, a
//! non-owner deleted it, one node's clock jumped) keeps its nominal end: another holder let in
//! before then is a second holder.

use super::event::{Cause, History, Proof, RecKind, State, Sym};
use super::timebase::{Clocks, NodeClock};

/// Why a lease ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// Still held when the history ends (its TTL may run out later).
    Open,
    /// Its owner released it.
    Released,
    /// Its TTL ran out.
    Expired,
    /// Its TTL ran out because the node's clock jumped.
    ClockJump,
    /// A request that did not act for the owner removed it (deleted or replaced it).
    NonOwner,
    /// A simulated restart lost it.
    Restart,
    /// A flush.
    Flushed,
    /// Evicted by maxmemory.
    Evicted,
    /// The recorder dropped events: what happened is unknown.
    Gap,
}

impl End {
    pub(crate) fn text(self) -> &'static str {
        match self {
            End::Open => "still held at the end of the history",
            End::Released => "released by its owner",
            End::Expired => "its TTL ran out",
            End::ClockJump => "its TTL ran out when the node's clock jumped",
            End::NonOwner => "removed by a request that did not act for its owner",
            End::Restart => "lost in a restart",
            End::Flushed => "flushed",
            End::Evicted => "evicted",
            End::Gap => "unknown (the recorder dropped events)",
        }
    }

    /// An end the holder did not ask for before its TTL was up. A flush is not one: a test
    /// wipes the data between its steps on purpose, and whoever held a lock then is gone.
    pub(crate) fn early(self) -> bool {
        matches!(
            self,
            End::ClockJump | End::NonOwner | End::Restart | End::Evicted
        )
    }
}

/// One owner's hold of a lock on one node.
#[derive(Clone, Debug)]
pub(crate) struct Lease {
    pub(crate) lock: u32,
    pub(crate) node: u16,
    pub(crate) owner: Sym,
    /// The connection that made it (a client index of the history).
    pub(crate) client: Option<u32>,
    /// A client request made it (not a restart bringing a key back, not an unknown start).
    pub(crate) granted: bool,
    /// The event that started it.
    pub(crate) start: usize,
    pub(crate) start_real: i64,
    /// The TTL it was granted with, ms (-1: none).
    pub(crate) ttl_ms: i64,
    /// The last grant or extension by its owner: event, real time, TTL.
    pub(crate) refresh: usize,
    pub(crate) refresh_real: i64,
    pub(crate) refresh_ttl_ms: i64,
    /// Server time its TTL runs out (i64::MAX: none).
    pub(crate) expire_t: i64,
    /// The actual end: the event (when one ended it), real time, and why.
    pub(crate) end: Option<usize>,
    pub(crate) end_real: i64,
    pub(crate) end_why: End,
    /// The nominal end, real time (set by [`nominal_ends`]).
    pub(crate) nominal_real: i64,
    /// Extensions by its owner.
    pub(crate) extensions: u32,
}

/// A change that broke a rule as it happened.
#[derive(Clone, Debug)]
pub(crate) enum Finding {
    /// A request that did not act for the owner removed (`replaced_by`: or replaced) a live
    /// lease.
    NonOwnerRemoved {
        rec: usize,
        lease: usize,
        replaced_by: Option<Sym>,
    },
    /// A request that did not act for the owner made a live lease longer.
    TtlGrown {
        rec: usize,
        lease: usize,
        before_t: i64,
        after_t: i64,
    },
}

/// Commands that make a string key a counter or a blob, not a lock.
const NOT_LOCK_COMMANDS: &[&[u8]] = &[
    b"incr",
    b"incrby",
    b"decr",
    b"decrby",
    b"incrbyfloat",
    b"append",
    b"setrange",
    b"setbit",
    b"bitfield",
    b"hincrbyfloat",
];

#[derive(Debug)]
pub(crate) struct Leases {
    pub(crate) leases: Vec<Lease>,
    pub(crate) findings: Vec<Finding>,
    /// Per lock, its leases (indices into `leases`, by start).
    pub(crate) by_lock: Vec<Vec<usize>>,
    /// Per lock, the nodes its key was seen on.
    pub(crate) lock_nodes: Vec<Vec<u16>>,
    /// Locks that are not locks (counters, read-write locks, other types only).
    pub(crate) not_lock: Vec<bool>,
}

/// Whether `client` (a change's connection) is the one that made `lease`: the same
/// connection, or one with the same non-empty name.
pub(crate) fn same_client(h: &History, a: Option<u32>, b: Option<u32>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        return false;
    };
    if a == b {
        return true;
    }
    let (na, ca) = &h.clients[a as usize];
    let (nb, cb) = &h.clients[b as usize];
    (na == nb && ca.id == cb.id && ca.id != 0) || (!ca.name.is_empty() && ca.name == cb.name)
}

struct Live {
    owner: Sym,
    lease: usize,
}

pub(crate) fn build(h: &History, clocks: &Clocks) -> Leases {
    let nlocks = h.locks.len();
    let mut out = Leases {
        leases: Vec::new(),
        findings: Vec::new(),
        by_lock: vec![Vec::new(); nlocks],
        lock_nodes: vec![Vec::new(); nlocks],
        not_lock: vec![false; nlocks],
    };
    let not_lock_cmds: Vec<Sym> = NOT_LOCK_COMMANDS
        .iter()
        .filter_map(|c| h.strings.lookup(c))
        .collect();
    let mode = h.strings.lookup(b"mode");
    // Per (node, lock): the live owners and the key's expiry.
    let mut live: std::collections::HashMap<(u16, u32), (Vec<Live>, i64), ahash::RandomState> =
        Default::default();
    for (i, r) in h.recs.iter().enumerate() {
        let RecKind::Key {
            lock,
            cause,
            client,
            command,
            state,
            ttl_ms,
            proof,
            gap,
            ..
        } = &r.kind
        else {
            continue;
        };
        let lock = *lock;
        let nodes = &mut out.lock_nodes[lock as usize];
        if !nodes.contains(&r.node) {
            nodes.push(r.node);
        }
        if not_lock_cmds.contains(command) {
            out.not_lock[lock as usize] = true;
        }
        let clock = &clocks.nodes[r.node as usize];
        let entry = live.entry((r.node, lock)).or_insert((Vec::new(), i64::MAX));
        // Owners the TTL already took before this change (an expiry the recorder did not
        // see as an event of its own).
        if !entry.0.is_empty()
            && entry.1 != i64::MAX
            && r.t > entry.1
            && !matches!(cause, Cause::Expired | Cause::ClockJump)
        {
            let (at, jumped) = clock
                .first_above(entry.1, out.leases[entry.0[0].lease].start_real)
                .unwrap_or((r.real, false));
            for l in entry.0.drain(..) {
                let lease = &mut out.leases[l.lease];
                lease.end_real = at.min(r.real);
                lease.end_why = if jumped { End::ClockJump } else { End::Expired };
            }
        }
        let owners: Vec<(Sym, i64)> = match state {
            State::Str(o) => vec![(*o, 1)],
            State::Hash(f) => {
                if mode.is_some_and(|m| f.iter().any(|(n, _)| *n == m)) {
                    out.not_lock[lock as usize] = true;
                }
                f.to_vec()
            }
            State::Gone | State::Other(_) => Vec::new(),
        };
        let expire_t = if matches!(state, State::Gone) || *ttl_ms < 0 {
            i64::MAX
        } else {
            r.t.saturating_add(ttl_ms.saturating_mul(1000))
        };
        let (ref mut cur, ref mut cur_expire) = *entry;
        if *gap {
            for l in cur.drain(..) {
                let lease = &mut out.leases[l.lease];
                lease.end = Some(i);
                lease.end_real = r.real;
                lease.end_why = End::Gap;
            }
        }
        // Acting for an owner: the request named it, or came from the connection that
        // made the lease.
        let for_owner =
            |lease: &Lease| *proof != Proof::None || same_client(h, *client, lease.client);
        // Owners that went.
        let mut k = 0;
        while k < cur.len() {
            if owners.iter().any(|(o, _)| *o == cur[k].owner) {
                k += 1;
                continue;
            }
            let l = cur.remove(k);
            let lease = &mut out.leases[l.lease];
            lease.end = Some(i);
            lease.end_real = r.real;
            lease.end_why = match cause {
                Cause::Client => {
                    if for_owner(lease) {
                        End::Released
                    } else {
                        out.findings.push(Finding::NonOwnerRemoved {
                            rec: i,
                            lease: l.lease,
                            replaced_by: owners.first().map(|o| o.0),
                        });
                        End::NonOwner
                    }
                }
                Cause::Expired => End::Expired,
                Cause::ClockJump => End::ClockJump,
                Cause::Evicted => End::Evicted,
                Cause::Flushed => End::Flushed,
                Cause::Restart => End::Restart,
            };
            if matches!(cause, Cause::Expired | Cause::ClockJump) && *cur_expire != i64::MAX {
                // The lease ended when the clock passed its expiry, which may be before the
                // key was found expired.
                if let Some((at, jumped)) = clock.first_above(*cur_expire, lease.start_real) {
                    lease.end_real = at.min(r.real);
                    if jumped {
                        lease.end_why = End::ClockJump;
                    }
                }
            }
        }
        // Owners that stay: a longer TTL must come from the owner.
        for l in cur.iter() {
            let lease = &mut out.leases[l.lease];
            if *cause != Cause::Client {
                lease.expire_t = expire_t;
                continue;
            }
            if for_owner(lease) {
                if expire_t != lease.expire_t || *ttl_ms >= 0 {
                    lease.refresh = i;
                    lease.refresh_real = r.real;
                    lease.refresh_ttl_ms = *ttl_ms;
                    lease.extensions += 1;
                }
            } else if expire_t > lease.expire_t {
                out.findings.push(Finding::TtlGrown {
                    rec: i,
                    lease: l.lease,
                    before_t: lease.expire_t,
                    after_t: expire_t,
                });
            }
            lease.expire_t = expire_t;
        }
        // New owners.
        for (o, _) in &owners {
            if cur.iter().any(|l| l.owner == *o) {
                continue;
            }
            let idx = out.leases.len();
            out.leases.push(Lease {
                lock,
                node: r.node,
                owner: *o,
                client: *client,
                granted: *cause == Cause::Client && !*gap,
                start: i,
                start_real: r.real,
                ttl_ms: *ttl_ms,
                refresh: i,
                refresh_real: r.real,
                refresh_ttl_ms: *ttl_ms,
                expire_t,
                end: None,
                end_real: i64::MAX,
                end_why: End::Open,
                nominal_real: i64::MAX,
                extensions: 0,
            });
            out.by_lock[lock as usize].push(idx);
            cur.push(Live {
                owner: *o,
                lease: idx,
            });
        }
        *cur_expire = expire_t;
    }
    // Leases still live at the end: their TTL may have run out since.
    for ((node, _), (cur, expire)) in live {
        let clock: &NodeClock = &clocks.nodes[node as usize];
        for l in cur {
            let lease = &mut out.leases[l.lease];
            if let Some((at, jumped)) = clock.first_above(expire, lease.start_real) {
                lease.end_real = at;
                lease.end_why = if jumped { End::ClockJump } else { End::Expired };
            }
        }
    }
    for (lock, nodes) in out.lock_nodes.iter_mut().enumerate() {
        nodes.sort_unstable();
        // A key that never had an owner is not a lock either.
        if out.by_lock[lock].is_empty() {
            out.not_lock[lock] = true;
        }
    }
    out
}

/// The nodes a lock is judged over: the node it lives on, or for a key seen on several
/// nodes (Redlock), every node of the run.
pub(crate) fn lock_scope(h: &History, leases: &Leases, lock: u32) -> Vec<u16> {
    let seen = &leases.lock_nodes[lock as usize];
    if seen.len() <= 1 {
        return seen.clone();
    }
    all_nodes(h)
}

/// Every node of the run: those a meta line named, and those that recorded anything.
pub(crate) fn all_nodes(h: &History) -> Vec<u16> {
    let mut v: Vec<u16> = h.meta_nodes.clone();
    for r in &h.recs {
        if !v.contains(&r.node) {
            v.push(r.node);
        }
    }
    v.sort_unstable();
    v
}

/// Sets every lease's nominal end: its last grant or extension plus that TTL on the lock's
/// reference clock, or its owner's release if sooner.
pub(crate) fn nominal_ends(h: &History, clocks: &Clocks, leases: &mut Leases) {
    for lock in 0..leases.by_lock.len() {
        if leases.by_lock[lock].is_empty() {
            continue;
        }
        let scope = lock_scope(h, leases, lock as u32);
        let reference = clocks.reference(&scope);
        for &li in &leases.by_lock[lock] {
            let l = &leases.leases[li];
            let nominal = if l.refresh_ttl_ms < 0 {
                i64::MAX
            } else {
                let until = reference
                    .at(l.refresh_real)
                    .saturating_add(l.refresh_ttl_ms.saturating_mul(1000));
                reference
                    .first_above(until, l.refresh_real)
                    .unwrap_or(i64::MAX)
            };
            let nominal = match l.end_why {
                End::Released | End::Gap | End::Flushed => l.end_real.min(nominal),
                // Its own TTL: the actual end is the nominal one on this node's clock.
                End::Expired if scope.len() <= 1 => l.end_real.min(nominal),
                _ => nominal,
            };
            leases.leases[li].nominal_real = nominal;
        }
    }
}
