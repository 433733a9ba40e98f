//! The server's side: a bounded recorder of lock-key changes, clock moves, restarts, faults
//! and fenced writes. The command layer calls it after a command changed keys (only while
//! recording is on: a check of one atomic), the keyspace's expiry events and the test
//! controls; it decides which keys are locks, keeps a ring of events per key under a global
//! cap (dropping the oldest, counted, and marking the gap), and exports JSON lines.
//!
//! Which keys: with no patterns, a key becomes a lock when SET NX (or SETNX) creates it, when
//! a script or function writes it as a string or a hash, or when a hash that looks like a
//! lock (a few fields with integer counts, Redisson's `uuid:thread -> count`) is written;
//! with patterns (globs), the keys that match. From then on every change of that key is
//! recorded, whoever makes it.

mod store;

use super::event::{Cause, ClientRef, ClockMove, Event, FencedWrite, History, Proof, What};
use crate::glob::Glob;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use store::{Inner, Ring, St, Stored, NODE_RING};

/// How a recorder is set up.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    /// Glob patterns of lock keys; empty: SET NX, scripts and hash locks decide.
    pub(crate) patterns: Vec<Vec<u8>>,
    /// Events kept per key (older ones are dropped first).
    pub(crate) max_per_key: usize,
    /// Events kept in all.
    pub(crate) max_events: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            patterns: Vec::new(),
            max_per_key: 100_000,
            max_events: 1_000_000,
        }
    }
}

/// How a change was made, for deciding whether its key is a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Made {
    /// SET NX / SETNX created the key.
    NxCreate,
    /// A script or function wrote it.
    Script,
    /// Anything else (a plain command, expiry, a flush...).
    Other,
}

/// A key's state after a change, as the command layer reads it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StateIn {
    Gone,
    Str(Bytes),
    Hash(Vec<(Bytes, i64)>),
    /// Another type: its TYPE name.
    Other(&'static str),
}

/// One key change, from the command layer.
pub(crate) struct ChangeIn<'a> {
    pub(crate) db: u32,
    pub(crate) key: &'a [u8],
    pub(crate) t_us: i64,
    pub(crate) real_us: i64,
    pub(crate) cause: Cause,
    pub(crate) client: Option<&'a ClientRef>,
    /// The command that wrote the key.
    pub(crate) command: &'a str,
    pub(crate) script: &'a str,
    pub(crate) function: &'a str,
    pub(crate) state: StateIn,
    pub(crate) ttl_ms: i64,
    pub(crate) made: Made,
    /// The request's arguments: naming the owner is acting for it.
    pub(crate) args: &'a [&'a [u8]],
    /// The change came from a transaction whose WATCH covered the key.
    pub(crate) watched: bool,
}

/// The recorder of one server node.
pub(crate) struct Recorder {
    on: AtomicBool,
    dropped: AtomicU64,
    inner: Mutex<Inner>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new(Settings::default())
    }
}

/// A hash a script wrote is taken for a lock when it looks like Redisson's: a few fields, each
/// an owner holding a positive count (its reentrancy), except the read-write lock's `mode`
/// (whose text reads as 0). A job or session hash (text, JSON, zero counters) is not a lock;
/// `--lock-history-keys` picks such keys when they are.
fn looks_like_lock_hash(fields: &[(Bytes, i64)]) -> bool {
    let owner = |(n, c): &(Bytes, i64)| *c >= 1 && &n[..] != b"mode";
    !fields.is_empty()
        && fields.len() <= 16
        && fields.iter().any(owner)
        && fields.iter().all(|f| owner(f) || &f.0[..] == b"mode")
}

impl Recorder {
    pub(crate) fn new(settings: Settings) -> Recorder {
        let r = Recorder {
            on: AtomicBool::new(false),
            dropped: AtomicU64::new(0),
            inner: Mutex::new(Inner::default()),
        };
        r.configure(settings);
        r
    }

    /// Whether recording is on: the one load the command path pays when it is off.
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    pub(crate) fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    pub(crate) fn configure(&self, settings: Settings) {
        let mut g = self.inner.lock();
        g.globs = settings
            .patterns
            .iter()
            .map(|p| Glob::new(p, false))
            .collect();
        g.settings = settings;
        g.settings.max_per_key = g.settings.max_per_key.max(1);
        g.settings.max_events = g.settings.max_events.max(1);
    }

    /// Whether a change of this key is recorded (the key is a lock, or becomes one now).
    pub(crate) fn is_tracked(&self, db: u32, key: &[u8]) -> bool {
        let g = self.inner.lock();
        g.index.contains_key(&(db, Bytes::copy_from_slice(key)))
            || g.globs.iter().any(|p| p.matches(key))
    }

    /// Records one key change if its key is (or now becomes) a lock.
    pub(crate) fn key_change(&self, c: ChangeIn<'_>) {
        let mut g = self.inner.lock();
        let lookup = (c.db, Bytes::copy_from_slice(c.key));
        let ring = match g.index.get(&lookup) {
            Some(&r) => r,
            None => {
                let lock = if g.globs.is_empty() {
                    match (&c.state, c.made) {
                        (StateIn::Str(_), Made::NxCreate | Made::Script) => true,
                        (StateIn::Hash(f), Made::Script) => looks_like_lock_hash(f),
                        (StateIn::Hash(f), Made::Other) => {
                            looks_like_lock_hash(f) && f.iter().all(|(n, _)| n.contains(&b':'))
                        }
                        _ => false,
                    }
                } else {
                    g.globs.iter().any(|p| p.matches(c.key))
                };
                if !lock {
                    return;
                }
                let r = g.rings.len() as u32;
                g.rings.push(Ring {
                    db: c.db,
                    key: lookup.1.clone(),
                    events: VecDeque::new(),
                    gap: false,
                });
                g.bytes += c.key.len() + 96;
                g.index.insert(lookup, r);
                r
            }
        };
        // Acting for the owner: the arguments name the owner the key had.
        let mut proof = Proof::None;
        if c.cause == Cause::Client {
            if let Some(last) = g.rings[ring as usize].events.back() {
                let named = match &last.state {
                    St::Str(o) => c.args.iter().any(|a| *a == &o[..]),
                    St::Hash(f) => f.iter().any(|(n, _)| c.args.iter().any(|a| *a == &n[..])),
                    St::Gone | St::Other(_) => false,
                };
                if named {
                    proof = Proof::Token;
                } else if c.watched {
                    proof = Proof::Watch;
                }
            }
        }
        let client = match c.client {
            Some(cr) => g.client(cr),
            None => u32::MAX,
        };
        let by = g.by(c.command, c.script, c.function);
        let (state, heap) = match c.state {
            StateIn::Gone => (St::Gone, 0),
            StateIn::Str(b) => {
                let n = b.len();
                (St::Str(b), n + 32)
            }
            StateIn::Hash(f) => {
                let n = f.iter().map(|(k, _)| k.len() + 40).sum::<usize>() + 16;
                (St::Hash(f.into_boxed_slice()), n)
            }
            StateIn::Other(t) => (St::Other(t), 0),
        };
        // A command's time is read when it starts, before it waits for its keys, so a change
        // may carry an earlier time than the change it followed on the same key (two clients'
        // SET and DEL racing: the DEL ran first but the SET read the clock first). The key's
        // own order is the truth, so its times never go back, except across a clock move.
        let (mut t, mut real) = (c.t_us, c.real_us);
        if let Some(last) = g.rings[ring as usize].events.back() {
            if last.seq > g.clock_moved_at {
                t = t.max(last.t);
                real = real.max(last.real);
            }
        }
        g.seq += 1;
        let seq = g.seq;
        let stored = Stored {
            seq,
            t,
            real,
            ttl_ms: if matches!(state, St::Gone) {
                -1
            } else {
                c.ttl_ms
            },
            client,
            by,
            cause: c.cause,
            proof,
            state,
        };
        g.bytes += std::mem::size_of::<Stored>() + 16 + heap;
        g.rings[ring as usize].events.push_back(stored);
        g.order.push_back((seq, ring));
        g.kept += 1;
        let per_key = g.settings.max_per_key;
        if g.rings[ring as usize].events.len() > per_key {
            g.drop_oldest_of(ring);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        self.enforce_cap(&mut g);
    }

    /// Records a clock move, restart, fault or fenced write of this node.
    pub(crate) fn node_event(&self, t_us: i64, real_us: i64, what: What) {
        let mut g = self.inner.lock();
        g.seq += 1;
        let seq = g.seq;
        g.bytes += 160;
        if matches!(what, What::Clock(_)) {
            g.clock_moved_at = seq;
        }
        g.node_events.push_back((seq, t_us, real_us, what));
        g.order.push_back((seq, NODE_RING));
        g.kept += 1;
        self.enforce_cap(&mut g);
    }

    /// A clock move.
    pub(crate) fn clock(&self, real_us: i64, from_us: i64, to_us: i64, frozen: bool, how: &str) {
        self.node_event(
            to_us,
            real_us,
            What::Clock(ClockMove {
                from_us,
                to_us,
                frozen,
                how: how.to_string(),
            }),
        );
    }

    /// A fenced write.
    pub(crate) fn fenced(&self, t_us: i64, real_us: i64, w: FencedWrite) {
        self.node_event(t_us, real_us, What::Fenced(w));
    }

    fn enforce_cap(&self, g: &mut Inner) {
        while g.kept > g.settings.max_events {
            let Some((seq, ring)) = g.order.pop_front() else {
                break;
            };
            if ring == NODE_RING {
                if g.node_events.front().is_some_and(|e| e.0 == seq) {
                    g.node_events.pop_front();
                    g.kept -= 1;
                    g.bytes = g.bytes.saturating_sub(160);
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
            } else if g.rings[ring as usize]
                .events
                .front()
                .is_some_and(|e| e.seq == seq)
            {
                g.drop_oldest_of(ring);
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Per-key drops leave stale entries in the order queue: rebuild it when they pile up.
        if g.order.len() > 2 * g.kept + 4096 {
            let mut order: Vec<(u64, u32)> = g
                .rings
                .iter()
                .enumerate()
                .flat_map(|(i, r)| r.events.iter().map(move |e| (e.seq, i as u32)))
                .chain(g.node_events.iter().map(|e| (e.0, NODE_RING)))
                .collect();
            order.sort_unstable();
            g.order = order.into();
        }
    }

    /// The lock keys whose last recorded state is not gone (in `db`, or in every database).
    pub(crate) fn live_keys(&self, db: Option<u32>) -> Vec<(u32, Bytes)> {
        let g = self.inner.lock();
        g.rings
            .iter()
            .filter(|r| db.is_none_or(|d| d == r.db))
            .filter(|r| {
                r.events
                    .back()
                    .is_some_and(|e| !matches!(e.state, St::Gone))
            })
            .map(|r| (r.db, r.key.clone()))
            .collect()
    }

    /// Every lock key with its last recorded state (gone when its events were all dropped).
    pub(crate) fn last_states(&self) -> Vec<(u32, Bytes, StateIn)> {
        let g = self.inner.lock();
        g.rings
            .iter()
            .map(|r| {
                let st = match r.events.back().map(|e| &e.state) {
                    None | Some(St::Gone) => StateIn::Gone,
                    Some(St::Str(b)) => StateIn::Str(b.clone()),
                    Some(St::Hash(f)) => StateIn::Hash(f.to_vec()),
                    Some(St::Other(t)) => StateIn::Other(t),
                };
                (r.db, r.key.clone(), st)
            })
            .collect()
    }

    /// Events dropped so far (bounded memory).
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// (events kept, bytes they take, about).
    pub(crate) fn size(&self) -> (usize, usize) {
        let g = self.inner.lock();
        (g.kept, g.bytes + g.order.len() * 16)
    }

    /// Forgets everything (the keys tracked too); the settings stay.
    pub(crate) fn clear(&self) {
        let mut g = self.inner.lock();
        let settings = g.settings.clone();
        let globs = std::mem::take(&mut g.globs);
        *g = Inner::default();
        g.settings = settings;
        g.globs = globs;
        self.dropped.store(0, Ordering::Relaxed);
    }

    /// The last `count` events of a key, newest last, as events of `node`.
    pub(crate) fn key_events(&self, node: &str, db: u32, key: &[u8], count: usize) -> Vec<Event> {
        let g = self.inner.lock();
        let Some(&r) = g.index.get(&(db, Bytes::copy_from_slice(key))) else {
            return Vec::new();
        };
        let ring = &g.rings[r as usize];
        let skip = ring.events.len().saturating_sub(count);
        ring.events
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, e)| g.event(node, ring, e, i == 0 && ring.gap))
            .collect()
    }

    /// Every kept event, in recording order, into `h` as events of `node`.
    pub(crate) fn export(&self, node: &str, h: &mut History) {
        let g = self.inner.lock();
        let mut all: Vec<(u64, Event)> = Vec::with_capacity(g.kept);
        for ring in &g.rings {
            for (i, e) in ring.events.iter().enumerate() {
                all.push((e.seq, g.event(node, ring, e, i == 0 && ring.gap)));
            }
        }
        for (seq, t, real, what) in &g.node_events {
            let mut e = Event::new(node, *t, *real, what.clone());
            e.seq = *seq;
            all.push((*seq, e));
        }
        drop(g);
        all.sort_unstable_by_key(|e| e.0);
        for (_, e) in all {
            h.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::event::KeyState;

    fn change<'a>(key: &'a [u8], state: StateIn, made: Made, args: &'a [&'a [u8]]) -> ChangeIn<'a> {
        ChangeIn {
            db: 0,
            key,
            t_us: 1,
            real_us: 1,
            cause: Cause::Client,
            client: None,
            command: "set",
            script: "",
            function: "",
            state,
            ttl_ms: 1000,
            made,
            args,
            watched: false,
        }
    }

    fn exported(r: &Recorder) -> History {
        let mut h = History::new();
        r.export("", &mut h);
        h
    }

    #[test]
    fn set_nx_and_scripts_make_locks_plain_writes_do_not() {
        let r = Recorder::default();
        r.key_change(change(b"plain", StateIn::Str("v".into()), Made::Other, &[]));
        r.key_change(change(
            b"lock",
            StateIn::Str("t1".into()),
            Made::NxCreate,
            &[],
        ));
        r.key_change(change(b"queue", StateIn::Other("list"), Made::Script, &[]));
        r.key_change(change(
            b"h",
            StateIn::Hash(vec![("u:1".into(), 1)]),
            Made::Script,
            &[],
        ));
        // Once a lock, every change counts, and naming the owner is proof.
        r.key_change(change(
            b"lock",
            StateIn::Gone,
            Made::Other,
            &[b"del", b"lock"],
        ));
        r.key_change(change(
            b"lock",
            StateIn::Str("t2".into()),
            Made::NxCreate,
            &[],
        ));
        r.key_change(change(
            b"lock",
            StateIn::Gone,
            Made::Script,
            &[b"lock", b"t2"],
        ));
        let text = String::from_utf8(exported(&r).to_json_lines()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert!(lines[0].contains("\"key\":\"lock\"") && lines[0].contains("\"owner\":\"t1\""));
        assert!(lines[1].contains("\"key\":\"h\""));
        assert!(!lines[2].contains("proof"), "{}", lines[2]);
        assert!(lines[4].contains("\"proof\":\"token\""), "{}", lines[4]);
    }

    #[test]
    fn a_keys_times_follow_its_order_except_across_a_clock_move() {
        let r = Recorder::default();
        let at = |t: i64, c: ChangeIn<'static>| ChangeIn {
            t_us: t,
            real_us: t,
            ..c
        };
        r.key_change(at(
            100,
            change(b"lock", StateIn::Str("a".into()), Made::NxCreate, &[]),
        ));
        r.key_change(at(300, change(b"lock", StateIn::Gone, Made::Other, &[])));
        // Its clock read before the DEL's, it ran after it: it happened at 300 at the earliest.
        r.key_change(at(
            200,
            change(b"lock", StateIn::Str("b".into()), Made::NxCreate, &[]),
        ));
        // The test clock moved back: times go back with it.
        r.clock(400, 300, 50, false, "set");
        r.key_change(at(60, change(b"lock", StateIn::Gone, Made::Other, &[])));
        let text = String::from_utf8(exported(&r).to_json_lines()).unwrap();
        let times: Vec<i64> = text
            .lines()
            .filter(|l| l.contains("\"ev\":\"key\""))
            .filter_map(|l| l.split("\"t\":").nth(1)?.split(',').next()?.parse().ok())
            .collect();
        assert_eq!(times, [100, 300, 300, 60]);
    }

    #[test]
    fn only_hashes_of_owner_counts_written_by_scripts_are_locks() {
        let r = Recorder::default();
        let hash = |f: &[(&str, i64)]| {
            StateIn::Hash(
                f.iter()
                    .map(|(n, c)| (Bytes::from(n.to_string()), *c))
                    .collect(),
            )
        };
        // Redisson's lock and read-write lock.
        r.key_change(change(b"lock", hash(&[("uuid:1", 2)]), Made::Script, &[]));
        r.key_change(change(
            b"rw",
            hash(&[("mode", 0), ("uuid:1", 1)]),
            Made::Script,
            &[],
        ));
        // A job hash: text and zero counters (parsed as 0), a mode alone.
        r.key_change(change(
            b"job",
            hash(&[("data", 0), ("attemptsMade", 0), ("timestamp", 1795743265)]),
            Made::Script,
            &[],
        ));
        r.key_change(change(b"cfg", hash(&[("mode", 0)]), Made::Script, &[]));
        let text = String::from_utf8(exported(&r).to_json_lines()).unwrap();
        let keys: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split("\"key\":\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(keys, ["lock", "rw"], "{text}");
    }

    #[test]
    fn patterns_choose_the_keys() {
        let r = Recorder::new(Settings {
            patterns: vec![b"res:*".to_vec()],
            ..Settings::default()
        });
        r.key_change(change(
            b"lock",
            StateIn::Str("t1".into()),
            Made::NxCreate,
            &[],
        ));
        r.key_change(change(
            b"res:1",
            StateIn::Str("t1".into()),
            Made::Other,
            &[],
        ));
        assert_eq!(exported(&r).len(), 1);
        assert!(r.is_tracked(0, b"res:2"));
        assert!(!r.is_tracked(0, b"lock"));
    }

    #[test]
    fn memory_is_bounded_per_key_and_in_all_and_drops_are_counted() {
        let r = Recorder::new(Settings {
            patterns: Vec::new(),
            max_per_key: 3,
            max_events: 10,
        });
        for i in 0..10 {
            r.key_change(change(
                b"a",
                StateIn::Str(format!("t{i}").into()),
                Made::NxCreate,
                &[],
            ));
        }
        assert_eq!(r.size().0, 3);
        assert_eq!(r.dropped(), 7);
        let events = r.key_events("", 0, b"a", 10);
        assert_eq!(events.len(), 3);
        assert!(
            matches!(&events[0].what, What::Key(k) if k.gap && k.state == KeyState::Str(b"t7".to_vec()))
        );
        for k in 0..20 {
            let key = format!("k{k}");
            r.key_change(change(
                key.as_bytes(),
                StateIn::Str("t".into()),
                Made::NxCreate,
                &[],
            ));
        }
        assert_eq!(r.size().0, 10);
        assert_eq!(r.dropped(), 7 + 13);
        let h = exported(&r);
        assert_eq!(h.len(), 10);
        // The queue of stale entries stays bounded too.
        for i in 0..10_000 {
            r.key_change(change(
                b"a",
                StateIn::Str(format!("t{i}").into()),
                Made::NxCreate,
                &[],
            ));
        }
        assert!(r.inner.lock().order.len() <= 2 * 10 + 4096 + 1);
    }

    #[test]
    fn node_events_interleave_in_recording_order() {
        let r = Recorder::default();
        r.key_change(change(
            b"lock",
            StateIn::Str("t1".into()),
            Made::NxCreate,
            &[],
        ));
        r.clock(5, 5, 10_000_005, false, "advance");
        r.key_change(change(b"lock", StateIn::Gone, Made::Other, &[]));
        let h = exported(&r);
        let text = String::from_utf8(h.to_json_lines()).unwrap();
        let kinds: Vec<&str> = text
            .lines()
            .map(|l| &l[7..l[7..].find('"').unwrap() + 7])
            .collect();
        assert_eq!(kinds, ["key", "clock", "key"]);
    }
}
