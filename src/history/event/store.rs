//! [`History`]'s compact form: every byte string interned once ([`Interner`]), events and
//! client ops stored as small records naming locks, clients and nodes by number. Separate
//! from the owned records (`mod.rs`) because this is what the checker and the timeline read,
//! and what `push` turns an owned record into.

use super::{Cause, ClientOp, ClientRef, Event, KeyState, OpKind, Proof, What};
use std::collections::HashMap;
use std::fmt;

/// An interned byte string.
pub(crate) type Sym = u32;

/// Every distinct byte string of a history, once, in one arena (a history of a million
/// acquisitions has a million distinct tokens: one allocation each cost more than parsing).
#[derive(Default, Clone)]
pub(crate) struct Interner {
    arena: Vec<u8>,
    /// (start, end) in `arena` per symbol.
    spans: Vec<(usize, usize)>,
    index: hashbrown::HashTable<Sym>,
    hasher: ahash::RandomState,
}

impl Interner {
    pub(crate) fn intern(&mut self, s: &[u8]) -> Sym {
        let hash = self.hasher.hash_one(s);
        let (arena, spans) = (&self.arena, &self.spans);
        if let Some(&i) = self.index.find(hash, |&i| {
            let (a, b) = spans[i as usize];
            &arena[a..b] == s
        }) {
            return i;
        }
        let i = self.spans.len() as Sym;
        let start = self.arena.len();
        self.arena.extend_from_slice(s);
        self.spans.push((start, self.arena.len()));
        let (arena, spans, hasher) = (&self.arena, &self.spans, &self.hasher);
        self.index.insert_unique(hash, i, |&j| {
            let (a, b) = spans[j as usize];
            hasher.hash_one(&arena[a..b])
        });
        i
    }

    pub(crate) fn get(&self, s: Sym) -> &[u8] {
        let (a, b) = self.spans[s as usize];
        &self.arena[a..b]
    }

    pub(crate) fn lookup(&self, s: &[u8]) -> Option<Sym> {
        let hash = self.hasher.hash_one(s);
        self.index.find(hash, |&i| self.get(i) == s).copied()
    }

    fn bytes(&self) -> usize {
        self.arena.capacity() + self.spans.capacity() * 16 + self.index.capacity() * 5
    }
}

/// A key's state, interned.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum State {
    Gone,
    Str(Sym),
    Hash(Box<[(Sym, i64)]>),
    Other(Sym),
}

/// A stored event.
#[derive(Clone, Debug)]
pub(crate) struct Rec {
    pub(crate) node: u16,
    pub(crate) seq: u64,
    pub(crate) t: i64,
    pub(crate) real: i64,
    pub(crate) kind: RecKind,
}

#[derive(Clone, Debug)]
pub(crate) enum RecKind {
    Key {
        lock: u32,
        cause: Cause,
        client: Option<u32>,
        command: Sym,
        script: Sym,
        function: Sym,
        state: State,
        ttl_ms: i64,
        proof: Proof,
        gap: bool,
    },
    Clock {
        from: i64,
        to: i64,
        frozen: bool,
        how: Sym,
    },
    Restart {
        mode: Sym,
    },
    Fault {
        text: Sym,
    },
    Fenced {
        resource: Sym,
        token: i64,
        value: Sym,
        accepted: bool,
        client: Option<u32>,
    },
}

/// A stored client op.
#[derive(Clone, Debug)]
pub(crate) struct OpRec {
    pub(crate) client: Sym,
    pub(crate) lock: u32,
    pub(crate) op: OpKind,
    pub(crate) invoke: i64,
    /// `i64::MAX`: never returned.
    pub(crate) complete: i64,
    pub(crate) ok: Option<bool>,
    pub(crate) token: Sym,
    pub(crate) ttl_ms: Option<i64>,
    pub(crate) add_ms: Option<i64>,
    pub(crate) nodes: Vec<u16>,
    pub(crate) resource: Sym,
    pub(crate) fence: Option<i64>,
}

/// A recorded run: the server's events (every node's) and the clients' operations, as read
/// from JSON lines or pushed by a test. [`History::check`] checks it; `history::html::render`
/// draws it.
///
/// ```
/// use resplock::history::{History, CheckOptions};
/// let h = History::from_json_lines(br#"
/// {"ev":"key","seq":1,"t":1000000,"real":1000000,"key":"lock:a","state":"string","owner":"t1","ttl":100,"client":{"id":1}}
/// {"ev":"key","seq":2,"t":1050000,"real":1050000,"key":"lock:a","state":"gone","proof":"token","client":{"id":1}}
/// "#).unwrap();
/// assert_eq!(h.len(), 2);
/// assert!(h.check(&CheckOptions::default()).is_clean());
/// ```
#[derive(Clone, Default)]
pub struct History {
    pub(crate) strings: Interner,
    pub(crate) nodes: Vec<Sym>,
    /// Nodes named by a meta line (the run's node count, for Redlock's majority).
    pub(crate) meta_nodes: Vec<u16>,
    pub(crate) dropped: u64,
    /// Locks: (db, key).
    pub(crate) locks: Vec<(u32, Sym)>,
    lock_index: HashMap<(u32, Sym), u32, ahash::RandomState>,
    pub(crate) clients: Vec<(u16, ClientRef)>,
    client_index: HashMap<(u16, ClientRef), u32, ahash::RandomState>,
    /// A client object's text as read (interned) -> its client.
    pub(super) raw_clients: HashMap<(u16, Sym), u32, ahash::RandomState>,
    pub(crate) recs: Vec<Rec>,
    pub(crate) ops: Vec<OpRec>,
    next_seq: HashMap<u16, u64>,
}

impl fmt::Debug for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("History")
            .field("events", &self.recs.len())
            .field("ops", &self.ops.len())
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl History {
    /// An empty history.
    ///
    /// ```
    /// assert!(resplock::history::History::new().is_empty());
    /// ```
    pub fn new() -> History {
        History::default()
    }

    /// How many server events it holds.
    ///
    /// ```
    /// assert_eq!(resplock::history::History::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether it holds nothing at all.
    ///
    /// ```
    /// assert!(resplock::history::History::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty() && self.ops.is_empty()
    }

    /// How many client operations it holds.
    ///
    /// ```
    /// assert_eq!(resplock::history::History::new().op_count(), 0);
    /// ```
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// The events the recorder said it dropped (bounded memory).
    ///
    /// ```
    /// let h = resplock::history::History::from_json_lines(b"{\"ev\":\"meta\",\"nodes\":[\"n0\"],\"dropped\":3}").unwrap();
    /// assert_eq!(h.dropped(), 3);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// About how many bytes it takes in memory.
    ///
    /// ```
    /// assert!(resplock::history::History::new().memory_bytes() < 4096);
    /// ```
    pub fn memory_bytes(&self) -> usize {
        self.strings.bytes()
            + self.recs.capacity() * std::mem::size_of::<Rec>()
            + self.ops.capacity() * std::mem::size_of::<OpRec>()
            + self.locks.capacity() * 24
            + self.clients.len() * 128
    }

    pub(crate) fn node_index(&mut self, name: &[u8]) -> u16 {
        let s = self.strings.intern(name);
        if let Some(i) = self.nodes.iter().position(|&n| n == s) {
            return i as u16;
        }
        self.nodes.push(s);
        (self.nodes.len() - 1) as u16
    }

    pub(crate) fn node_name(&self, node: u16) -> &str {
        std::str::from_utf8(self.strings.get(self.nodes[node as usize])).unwrap_or("?")
    }

    pub(super) fn lock_id(&mut self, db: u32, key: &[u8]) -> u32 {
        let k = self.strings.intern(key);
        if let Some(&i) = self.lock_index.get(&(db, k)) {
            return i;
        }
        let i = self.locks.len() as u32;
        self.locks.push((db, k));
        self.lock_index.insert((db, k), i);
        i
    }

    pub(crate) fn lock_key(&self, lock: u32) -> &[u8] {
        self.strings.get(self.locks[lock as usize].1)
    }

    pub(super) fn client_id(&mut self, node: u16, c: ClientRef) -> u32 {
        let key = (node, c);
        if let Some(&i) = self.client_index.get(&key) {
            return i;
        }
        let i = self.clients.len() as u32;
        self.clients.push(key.clone());
        self.client_index.insert(key, i);
        i
    }

    pub(super) fn seq_for(&mut self, node: u16, seq: u64) -> u64 {
        let next = self.next_seq.entry(node).or_insert(1);
        let s = if seq == 0 { *next } else { seq };
        *next = (*next).max(s + 1);
        s
    }

    /// Adds a server event. Events of one node must come in their recording order (a seq
    /// of 0 takes the next one).
    ///
    /// ```
    /// use resplock::history::{Event, History, What};
    /// let mut h = History::new();
    /// h.push(Event::new("n0", 1, 1, What::Restart { mode: "empty".into() }));
    /// assert_eq!(h.len(), 1);
    /// ```
    pub fn push(&mut self, e: Event) {
        let node = self.node_index(e.node.as_bytes());
        let seq = self.seq_for(node, e.seq);
        let kind = match e.what {
            What::Key(k) => {
                let lock = self.lock_id(k.db, &k.key);
                let client = k.client.map(|c| self.client_id(node, c));
                let state = match k.state {
                    KeyState::Gone => State::Gone,
                    KeyState::Str(v) => State::Str(self.strings.intern(&v)),
                    KeyState::Hash(f) => State::Hash(
                        f.iter()
                            .map(|(n, c)| (self.strings.intern(n), *c))
                            .collect(),
                    ),
                    KeyState::Other(t) => State::Other(self.strings.intern(t.as_bytes())),
                };
                RecKind::Key {
                    lock,
                    cause: k.cause,
                    client,
                    command: self.strings.intern(k.command.as_bytes()),
                    script: self.strings.intern(k.script.as_bytes()),
                    function: self.strings.intern(k.function.as_bytes()),
                    state,
                    ttl_ms: k.ttl_ms,
                    proof: k.proof,
                    gap: k.gap,
                }
            }
            What::Clock(c) => RecKind::Clock {
                from: c.from_us,
                to: c.to_us,
                frozen: c.frozen,
                how: self.strings.intern(c.how.as_bytes()),
            },
            What::Restart { mode } => RecKind::Restart {
                mode: self.strings.intern(mode.as_bytes()),
            },
            What::Fault { text } => RecKind::Fault {
                text: self.strings.intern(text.as_bytes()),
            },
            What::Fenced(w) => RecKind::Fenced {
                resource: self.strings.intern(&w.resource),
                token: w.token,
                value: self.strings.intern(&w.value),
                accepted: w.accepted,
                client: w.client.map(|c| self.client_id(node, c)),
            },
            What::Meta { nodes, dropped } => {
                for n in nodes {
                    let i = self.node_index(n.as_bytes());
                    if !self.meta_nodes.contains(&i) {
                        self.meta_nodes.push(i);
                    }
                }
                self.dropped += dropped;
                return;
            }
        };
        self.recs.push(Rec {
            node,
            seq,
            t: e.at_us,
            real: e.real_us,
            kind,
        });
    }

    /// Adds a client operation.
    ///
    /// ```
    /// use resplock::history::{ClientOp, History};
    /// let mut h = History::new();
    /// h.push_op(ClientOp { client: "w1".into(), lock: b"l".to_vec(), invoke_us: 1, complete_us: Some(2), ok: Some(true), ..Default::default() });
    /// assert_eq!(h.op_count(), 1);
    /// ```
    pub fn push_op(&mut self, op: ClientOp) {
        let token = self.strings.intern(op.token());
        let nodes = op
            .nodes
            .iter()
            .map(|n| self.node_index(n.as_bytes()))
            .collect();
        let rec = OpRec {
            client: self.strings.intern(op.client.as_bytes()),
            lock: self.lock_id(op.db, &op.lock),
            op: op.op,
            invoke: op.invoke_us,
            complete: op.complete_us.unwrap_or(i64::MAX),
            ok: op.ok,
            token,
            ttl_ms: op.ttl_ms,
            add_ms: op.add_ms,
            nodes,
            resource: self.strings.intern(&op.resource),
            fence: op.fence,
        };
        self.ops.push(rec);
    }
}
