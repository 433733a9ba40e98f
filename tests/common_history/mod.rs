//! A simulated lock server and its clients, for checker tests and the checker's benchmark:
//! a correct single-node lease server (SET NX PX, owner-checked release and extension, a
//! fenced resource per lock that rejects stale tokens), clients with random network delays
//! that acquire, use the resource inside their lease by their own clock, extend, release or
//! walk away, and a test that now and then moves the server clock while nobody is mid-use.
//! Server events and client ops are recorded as resplock's history formats.

#![allow(dead_code)]

use resplock::history::{
    Cause, ClientOp, ClientRef, ClockMove, Event, FencedWrite, History, KeyChange, KeyState,
    OpKind, Proof, What,
};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Sim {
    pub seed: u64,
    pub clients: usize,
    pub locks: usize,
    /// Client ops to record (about).
    pub ops: usize,
    /// Lease TTLs are drawn from this range, ms.
    pub ttl_ms: (i64, i64),
    /// Move the server clock now and then.
    pub clock_moves: bool,
    /// At this many ops the server grants a held lock to a second client.
    pub bug_at: Option<usize>,
}

impl Default for Sim {
    fn default() -> Self {
        Sim {
            seed: 1,
            clients: 10,
            locks: 4,
            ops: 1_000,
            ttl_ms: (50, 400),
            clock_moves: true,
            bug_at: None,
        }
    }
}

#[derive(Debug, Default)]
pub struct Stats {
    pub events: usize,
    pub ops: usize,
    pub grants: usize,
    pub clock_moves: usize,
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo).max(1) as u64)) as i64
    }
    fn chance(&mut self, pct: u64) -> bool {
        self.next() % 100 < pct
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Step {
    Idle,
    /// An op is at the server or on its way back.
    Waiting,
    Holding,
}

#[derive(Clone)]
struct Client {
    step: Step,
    lock: usize,
    token: String,
    /// Until when it may count on its lease, by its own clock.
    believe: i64,
    fence: i64,
    acquisitions: u64,
    using: bool,
    lost: bool,
}

#[derive(Clone, Default)]
struct Lock {
    owner: Option<(String, usize)>,
    /// Server time it expires, µs.
    expire: i64,
    grants: i64,
    best_fence: i64,
}

/// A pending step: at this real time, for this client, do this.
#[derive(PartialEq, Eq, PartialOrd, Ord, Clone, Copy, Debug)]
enum Act {
    /// The client decides what to do next.
    Think,
    /// The server runs the client's op.
    Serve(u8),
    /// The op's reply arrives.
    Return(u8),
}

const T0: i64 = 1_750_000_000_000_000;

/// An op in flight: kind, invoke time, result, TTL, fencing token.
type Flight = (OpKind, i64, Option<bool>, Option<i64>, Option<i64>);

pub fn simulate(s: &Sim) -> (History, Stats) {
    let mut rng = Rng(s.seed.wrapping_mul(0x9E3779B97F4A7C15) | 1);
    let mut h = History::new();
    let mut st = Stats::default();
    let mut clients = vec![
        Client {
            step: Step::Idle,
            lock: 0,
            token: String::new(),
            believe: 0,
            fence: 0,
            acquisitions: 0,
            using: false,
            lost: false,
        };
        s.clients
    ];
    let mut locks = vec![Lock::default(); s.locks];
    // Server clock = real + offset.
    let mut offset: i64 = 0;
    let mut queue: BinaryHeap<Reverse<(i64, usize, Act)>> = BinaryHeap::new();
    for c in 0..s.clients {
        queue.push(Reverse((T0 + rng.range(0, 1000), c, Act::Think)));
    }
    // Per client: the op in flight (kind, invoke, ok, ttl, fence).
    let mut flight: Vec<Flight> = vec![(OpKind::Acquire, 0, None, None, None); s.clients];
    let mut next_clock_move = T0 + 200_000;
    let mut flying = 0usize;
    let cref = |c: usize| {
        Some(ClientRef {
            id: c as u64 + 1,
            name: format!("c{c}"),
            addr: format!("127.0.0.1:{}", 40_000 + c),
            user: "default".into(),
        })
    };
    let key_of = |l: usize| format!("lock:{l}").into_bytes();
    let event = |h: &mut History, real: i64, offset: i64, what: What| {
        h.push(Event::new("", real + offset, real, what));
    };
    while let Some(Reverse((now, c, act))) = queue.pop() {
        // Past the target, no new op starts; those in flight finish.
        if st.ops + flying >= s.ops && act == Act::Think {
            continue;
        }
        // The test moves the clock when nobody is in the middle of using a resource.
        if s.clock_moves && now >= next_clock_move && clients.iter().all(|c| !c.using) {
            let by = rng.range(100_000, 3_000_000);
            let from = now + offset;
            offset += by;
            event(
                &mut h,
                now,
                offset - by,
                What::Clock(ClockMove {
                    from_us: from,
                    to_us: from + by,
                    frozen: false,
                    how: "advance".into(),
                }),
            );
            h.push(Event::new(
                "",
                now + offset,
                now,
                What::Fault {
                    text: "noop".into(),
                },
            ));
            for (l, lk) in locks.iter_mut().enumerate() {
                if lk.owner.is_some() && now + offset > lk.expire {
                    lk.owner = None;
                    event(
                        &mut h,
                        now,
                        offset,
                        What::Key(KeyChange {
                            key: key_of(l),
                            cause: Cause::ClockJump,
                            ..KeyChange::default()
                        }),
                    );
                }
            }
            for cl in clients.iter_mut() {
                if cl.step != Step::Idle {
                    cl.lost = true;
                }
            }
            st.clock_moves += 1;
            next_clock_move = now + rng.range(300_000, 1_500_000);
        }
        let srv = now + offset;
        match act {
            Act::Think => {
                let cl = &mut clients[c];
                let op = match cl.step {
                    Step::Idle => {
                        cl.lock = rng.range(0, s.locks as i64) as usize;
                        cl.acquisitions += 1;
                        cl.token = format!("c{c}-{}", cl.acquisitions);
                        cl.lost = false;
                        OpKind::Acquire
                    }
                    Step::Holding => {
                        let use_len = rng.range(1_000, 20_000);
                        let roll = rng.range(0, 100);
                        if cl.lost {
                            OpKind::Release
                        } else if roll < 3 {
                            // Walks away: the lease will run out.
                            cl.step = Step::Idle;
                            queue.push(Reverse((now + rng.range(1_000, 50_000), c, Act::Think)));
                            continue;
                        } else if roll < 60 && now + use_len + 3_000 < cl.believe {
                            OpKind::Use
                        } else if roll < 70 {
                            OpKind::Extend
                        } else {
                            OpKind::Release
                        }
                    }
                    Step::Waiting => unreachable!(),
                };
                cl.step = Step::Waiting;
                let ttl = matches!(op, OpKind::Acquire | OpKind::Extend)
                    .then(|| rng.range(s.ttl_ms.0, s.ttl_ms.1));
                let fence = (op == OpKind::Use).then_some(cl.fence);
                if op == OpKind::Use {
                    cl.using = true;
                }
                flight[c] = (op, now, None, ttl, fence);
                flying += 1;
                queue.push(Reverse((now + rng.range(50, 1_500), c, Act::Serve(0))));
            }
            Act::Serve(_) => {
                let (op, _, _, ttl, fence) = flight[c];
                let l = clients[c].lock;
                let token = clients[c].token.clone();
                let lk = &mut locks[l];
                if lk.owner.is_some() && srv > lk.expire {
                    lk.owner = None;
                    event(
                        &mut h,
                        now,
                        offset,
                        What::Key(KeyChange {
                            key: key_of(l),
                            cause: Cause::Expired,
                            ..KeyChange::default()
                        }),
                    );
                }
                let mine = lk.owner.as_ref().is_some_and(|o| o.0 == token);
                let ok = match op {
                    OpKind::Acquire => {
                        let bug = s.bug_at.is_some_and(|b| st.ops >= b) && lk.owner.is_some();
                        if lk.owner.is_none() || bug {
                            let ttl = ttl.unwrap();
                            lk.owner = Some((token.clone(), c));
                            lk.expire = srv + ttl * 1000;
                            lk.grants += 1;
                            clients[c].fence = lk.grants;
                            st.grants += 1;
                            event(
                                &mut h,
                                now,
                                offset,
                                What::Key(KeyChange {
                                    key: key_of(l),
                                    client: cref(c),
                                    command: "set".into(),
                                    state: KeyState::Str(token.into_bytes()),
                                    ttl_ms: ttl,
                                    ..KeyChange::default()
                                }),
                            );
                            if bug {
                                st.grants += 0;
                            }
                            true
                        } else {
                            false
                        }
                    }
                    OpKind::Extend => {
                        if mine {
                            let ttl = ttl.unwrap();
                            lk.expire = srv + ttl * 1000;
                            event(
                                &mut h,
                                now,
                                offset,
                                What::Key(KeyChange {
                                    key: key_of(l),
                                    client: cref(c),
                                    command: "pexpire".into(),
                                    script: "1f2e3d".into(),
                                    state: KeyState::Str(token.into_bytes()),
                                    ttl_ms: ttl,
                                    proof: Proof::Token,
                                    ..KeyChange::default()
                                }),
                            );
                        }
                        mine
                    }
                    OpKind::Release => {
                        if mine {
                            lk.owner = None;
                            event(
                                &mut h,
                                now,
                                offset,
                                What::Key(KeyChange {
                                    key: key_of(l),
                                    client: cref(c),
                                    command: "del".into(),
                                    script: "8a9b0c".into(),
                                    proof: Proof::Token,
                                    ..KeyChange::default()
                                }),
                            );
                        }
                        mine
                    }
                    OpKind::Use => {
                        let f = fence.unwrap();
                        let accepted = f > lk.best_fence;
                        if accepted {
                            lk.best_fence = f;
                        }
                        event(
                            &mut h,
                            now,
                            offset,
                            What::Fenced(FencedWrite {
                                resource: format!("res:{l}").into_bytes(),
                                token: f,
                                value: b"v".to_vec(),
                                accepted,
                                client: cref(c),
                            }),
                        );
                        accepted
                    }
                };
                flight[c].2 = Some(ok);
                let back = if op == OpKind::Use {
                    rng.range(1_000, 20_000)
                } else {
                    rng.range(50, 1_500)
                };
                queue.push(Reverse((now + back, c, Act::Return(0))));
            }
            Act::Return(_) => {
                let (op, invoke, ok, ttl, fence) = flight[c];
                let cl = &mut clients[c];
                let ok = ok.unwrap();
                h.push_op(ClientOp {
                    client: format!("c{c}"),
                    lock: key_of(cl.lock),
                    op,
                    invoke_us: invoke,
                    complete_us: Some(now),
                    ok: Some(ok),
                    token: cl.token.clone().into_bytes(),
                    ttl_ms: ttl,
                    resource: if op == OpKind::Use {
                        format!("res:{}", cl.lock).into_bytes()
                    } else {
                        Vec::new()
                    },
                    fence,
                    ..ClientOp::default()
                });
                st.ops += 1;
                flying -= 1;
                cl.using = false;
                cl.step = match (op, ok) {
                    (OpKind::Acquire, true) => {
                        cl.believe = invoke + ttl.unwrap() * 1000;
                        Step::Holding
                    }
                    (OpKind::Extend, true) => {
                        cl.believe = invoke + ttl.unwrap() * 1000;
                        Step::Holding
                    }
                    (OpKind::Use, _) | (OpKind::Extend, false) => {
                        if ok && !cl.lost {
                            Step::Holding
                        } else {
                            cl.lost = true;
                            Step::Holding
                        }
                    }
                    _ => Step::Idle,
                };
                queue.push(Reverse((now + rng.range(100, 5_000), c, Act::Think)));
            }
        }
    }
    st.events = h.len();
    (h, st)
}
