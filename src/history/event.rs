//! The records a history is made of, in their owned form ([`Event`], [`ClientOp`]), their
//! JSON lines, and [`History`], which keeps them compactly (every byte string interned) so a
//! history of millions of events fits in memory and checks in seconds.

use super::json::{self, ObjWriter, Val};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// One change the server recorded: a key's new state, a clock move, a restart, a fault, a
/// fenced write. `at_us` is the server's clock (what TTLs run on, moved by tests), `real_us`
/// the machine's real time: both µs since the Unix epoch, read at the same instant.
///
/// ```
/// use resplock::history::{Event, KeyChange, KeyState, What};
/// let e = Event::new("", 1_000_000, 1_000_000, What::Key(KeyChange {
///     key: b"lock:a".to_vec(),
///     state: KeyState::Str(b"token-1".to_vec()),
///     ttl_ms: 30_000,
///     ..KeyChange::default()
/// }));
/// assert_eq!(e.node, "");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The server node that recorded it (`--instances`: `n0`, `n1`...); empty for one server.
    pub node: String,
    /// The node's recording order (events of one node are checked in this order).
    pub seq: u64,
    /// The server clock, µs since the epoch.
    pub at_us: i64,
    /// Real time, µs since the epoch.
    pub real_us: i64,
    /// What happened.
    pub what: What,
}

impl Event {
    /// An event of `node` at server time `at_us` and real time `real_us` (seq 0: the order
    /// of pushing decides).
    ///
    /// ```
    /// use resplock::history::{Event, What};
    /// let e = Event::new("n1", 5, 7, What::Fault { text: "PAUSE 500".into() });
    /// assert_eq!((e.at_us, e.real_us), (5, 7));
    /// ```
    pub fn new(node: &str, at_us: i64, real_us: i64, what: What) -> Event {
        Event {
            node: node.to_string(),
            seq: 0,
            at_us,
            real_us,
            what,
        }
    }
}

/// The kinds of [`Event`].
///
/// ```
/// use resplock::history::{ClockMove, What};
/// let w = What::Clock(ClockMove { from_us: 0, to_us: 20_000_000, frozen: false, how: "advance".into() });
/// assert!(matches!(w, What::Clock(_)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum What {
    /// A key changed (or vanished).
    Key(KeyChange),
    /// The node's clock was moved (set, advanced, frozen, resumed).
    Clock(ClockMove),
    /// The node restarted (`RESPLOCK.RESTART`): the keys it lost or got back follow as key
    /// changes with [`Cause::Restart`].
    Restart {
        /// `keep`, `empty` or `from NAME`.
        mode: String,
    },
    /// A fault was set or cleared (pause, drop, delay, error...), as text.
    Fault {
        /// The fault as given, e.g. `PAUSE 500`.
        text: String,
    },
    /// A write to a fenced resource.
    Fenced(FencedWrite),
    /// The header of an export: the nodes of the run and how many events were dropped.
    Meta {
        /// Every node of the run, recorded or not.
        nodes: Vec<String>,
        /// Events the bounded recorder had to drop.
        dropped: u64,
    },
}

/// Why a key changed.
///
/// ```
/// assert_eq!(resplock::history::Cause::ClockJump.as_str(), "clock");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cause {
    /// A client's command or script.
    #[default]
    Client,
    /// Its TTL ran out.
    Expired,
    /// maxmemory evicted it.
    Evicted,
    /// FLUSHDB, FLUSHALL or a test's flush.
    Flushed,
    /// A simulated restart lost it or brought it back.
    Restart,
    /// Its TTL ran out because the clock jumped.
    ClockJump,
}

impl Cause {
    /// The name in the JSON lines.
    ///
    /// ```
    /// assert_eq!(resplock::history::Cause::Expired.as_str(), "expired");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Client => "client",
            Cause::Expired => "expired",
            Cause::Evicted => "evicted",
            Cause::Flushed => "flushed",
            Cause::Restart => "restart",
            Cause::ClockJump => "clock",
        }
    }

    fn parse(s: &[u8]) -> Option<Cause> {
        Some(match s {
            b"client" => Cause::Client,
            b"expired" => Cause::Expired,
            b"evicted" => Cause::Evicted,
            b"flushed" => Cause::Flushed,
            b"restart" => Cause::Restart,
            b"clock" => Cause::ClockJump,
            _ => return None,
        })
    }
}

/// The client connection that made a change.
///
/// ```
/// let c = resplock::history::ClientRef { id: 7, name: "worker-1".into(), ..Default::default() };
/// assert_eq!(c.id, 7);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClientRef {
    /// CLIENT ID on its node.
    pub id: u64,
    /// CLIENT SETNAME's name (empty if none).
    pub name: String,
    /// The peer address, `ip:port`.
    pub addr: String,
    /// The ACL user.
    pub user: String,
}

/// A key's state after a change.
///
/// ```
/// use resplock::history::KeyState;
/// let s = KeyState::Hash(vec![(b"uuid:1".to_vec(), 2)]);
/// assert!(matches!(s, KeyState::Hash(ref f) if f[0].1 == 2));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub enum KeyState {
    /// The key is gone.
    #[default]
    Gone,
    /// A string: the lock's owner token.
    Str(Vec<u8>),
    /// A hash (Redisson's lock): field names are the owners, values their hold counts.
    Hash(Vec<(Vec<u8>, i64)>),
    /// Another type (a queue, a counter...): not a lock.
    Other(String),
}

/// How a request proved it acted for the key's owner before the change.
///
/// ```
/// assert_eq!(resplock::history::Proof::default(), resplock::history::Proof::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Proof {
    /// Nothing: the checker then accepts only the connection that set the owner.
    #[default]
    None,
    /// The request's arguments held the owner's token (or hash field).
    Token,
    /// A transaction whose WATCH covered the key (check-and-set).
    Watch,
}

/// A key change.
///
/// ```
/// use resplock::history::{Cause, KeyChange, KeyState};
/// let k = KeyChange { key: b"lock:a".to_vec(), cause: Cause::Expired, ..KeyChange::default() };
/// assert_eq!(k.state, KeyState::Gone);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyChange {
    /// The database.
    pub db: u32,
    /// The key.
    pub key: Vec<u8>,
    /// Why it changed.
    pub cause: Cause,
    /// The connection whose request changed it, if one did.
    pub client: Option<ClientRef>,
    /// The command that wrote it (lower case; for a script, the last write of the key).
    pub command: String,
    /// The script's SHA-1, when a script made the change.
    pub script: String,
    /// The function's name, when FCALL made the change.
    pub function: String,
    /// The key's state after the change.
    pub state: KeyState,
    /// Its TTL after the change in ms; -1: none.
    pub ttl_ms: i64,
    /// How the request showed it acted for the owner.
    pub proof: Proof,
    /// Events of this key were dropped before this one (the bounded recorder's ring was
    /// full): what the key held before is unknown.
    pub gap: bool,
}

/// A clock move of one node.
///
/// ```
/// let m = resplock::history::ClockMove { from_us: 0, to_us: 5, frozen: true, how: "set".into() };
/// assert!(m.frozen);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClockMove {
    /// The server clock before, µs.
    pub from_us: i64,
    /// The server clock after, µs.
    pub to_us: i64,
    /// Whether the clock is frozen after the move.
    pub frozen: bool,
    /// `advance`, `set`, `freeze`, `resume`, `reset` or `start`.
    pub how: String,
}

/// A write to a fenced resource (`RESPLOCK.FENCED.WRITE resource token value`).
///
/// ```
/// let w = resplock::history::FencedWrite { resource: b"file".to_vec(), token: 34, accepted: true, ..Default::default() };
/// assert!(w.accepted);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FencedWrite {
    /// The resource's name.
    pub resource: Vec<u8>,
    /// The fencing token the writer presented.
    pub token: i64,
    /// The value written.
    pub value: Vec<u8>,
    /// Whether the resource took it (a resource that rejects stale tokens refuses some).
    pub accepted: bool,
    /// The writer.
    pub client: Option<ClientRef>,
}

/// What a client did to a lock, as a lock library's caller saw it.
///
/// ```
/// assert_eq!(resplock::history::OpKind::Use.as_str(), "use");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// Take the lock.
    #[default]
    Acquire,
    /// Give it back.
    Release,
    /// Make the lease longer.
    Extend,
    /// Use the resource the lock protects.
    Use,
}

impl OpKind {
    /// The name in the JSON lines.
    ///
    /// ```
    /// assert_eq!(resplock::history::OpKind::Extend.as_str(), "extend");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Acquire => "acquire",
            OpKind::Release => "release",
            OpKind::Extend => "extend",
            OpKind::Use => "use",
        }
    }
}

/// One client operation, recorded by the client (the JSON lines of its recorder): when it
/// was invoked and when it completed (real time, µs), and its result.
///
/// ```
/// use resplock::history::{ClientOp, OpKind};
/// let op = ClientOp { client: "w1".into(), lock: b"lock:a".to_vec(), op: OpKind::Acquire,
///     invoke_us: 10, complete_us: Some(20), ok: Some(true), ttl_ms: Some(30_000), ..Default::default() };
/// assert_eq!(op.token(), b"w1");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientOp {
    /// Who: a name the test gives each client.
    pub client: String,
    /// The lock's key.
    pub lock: Vec<u8>,
    /// The lock's database.
    pub db: u32,
    /// The operation.
    pub op: OpKind,
    /// When the client started it (real time, µs).
    pub invoke_us: i64,
    /// When it returned; `None`: it never did (the client crashed, the test stopped).
    pub complete_us: Option<i64>,
    /// Its result; `None`: unknown (a timeout: it may or may not have taken effect).
    pub ok: Option<bool>,
    /// The client's owner token for this lock (empty: the client's name is the token).
    pub token: Vec<u8>,
    /// The lease asked for (acquire, extend), ms; `None`: no expiry.
    pub ttl_ms: Option<i64>,
    /// An extension that adds to the remaining lease instead of setting it, ms.
    pub add_ms: Option<i64>,
    /// The nodes the lock lives on (Redlock); empty: the only node, or every node.
    pub nodes: Vec<String>,
    /// Use: the resource.
    pub resource: Vec<u8>,
    /// Use: the fencing token presented, if any.
    pub fence: Option<i64>,
}

impl ClientOp {
    /// The owner token: `token`, or the client's name when the op has none.
    ///
    /// ```
    /// let op = resplock::history::ClientOp { client: "w1".into(), token: b"t".to_vec(), ..Default::default() };
    /// assert_eq!(op.token(), b"t");
    /// ```
    pub fn token(&self) -> &[u8] {
        if self.token.is_empty() {
            self.client.as_bytes()
        } else {
            &self.token
        }
    }
}

/// A history file that could not be read: which line, and what was wrong.
///
/// ```
/// let e = resplock::history::History::from_json_lines(b"{\"ev\":\"key\"").unwrap_err();
/// assert_eq!(e.line, 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryError {
    /// The file, when read from one.
    pub file: String,
    /// 1-based line number (0: the file itself).
    pub line: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for HistoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "line {}: {}", self.line, self.message)
        } else if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

impl std::error::Error for HistoryError {}

// ---------------------------------------------------------------------------------------
// Compact storage.

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
    raw_clients: HashMap<(u16, Sym), u32, ahash::RandomState>,
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

    /// Reads JSON lines: server events (lines with `"ev"`) and client ops (lines with
    /// `"op"`), in any mix; blank lines are skipped.
    ///
    /// ```
    /// let h = resplock::history::History::from_json_lines(
    ///     b"{\"op\":\"acquire\",\"client\":\"w1\",\"lock\":\"l\",\"invoke\":1,\"complete\":2,\"ok\":true}\n").unwrap();
    /// assert_eq!(h.op_count(), 1);
    /// ```
    pub fn from_json_lines(text: &[u8]) -> Result<History, HistoryError> {
        let mut h = History::new();
        h.add_json_lines(text)?;
        Ok(h)
    }

    /// Reads the files (JSON lines each) into one history.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("resplock-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let f = dir.join("h.jsonl");
    /// std::fs::write(&f, "{\"ev\":\"fault\",\"t\":1,\"real\":1,\"text\":\"PAUSE 5\"}\n").unwrap();
    /// let h = resplock::history::History::load(&[&f]).unwrap();
    /// assert_eq!(h.len(), 1);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<History, HistoryError> {
        let mut h = History::new();
        for p in paths {
            let p = p.as_ref();
            let text = std::fs::read(p).map_err(|e| HistoryError {
                file: p.display().to_string(),
                line: 0,
                message: e.to_string(),
            })?;
            h.add_json_lines(&text).map_err(|mut e| {
                e.file = p.display().to_string();
                e
            })?;
        }
        Ok(h)
    }

    /// Adds the JSON lines of `text` (see [`History::from_json_lines`]).
    ///
    /// ```
    /// let mut h = resplock::history::History::new();
    /// h.add_json_lines(b"{\"ev\":\"fault\",\"t\":1,\"real\":1,\"text\":\"CLEAR\"}").unwrap();
    /// assert_eq!(h.len(), 1);
    /// ```
    pub fn add_json_lines(&mut self, text: &[u8]) -> Result<(), HistoryError> {
        for (n, line) in text.split(|&c| c == b'\n').enumerate() {
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            let fail = |message: String| HistoryError {
                file: String::new(),
                line: n + 1,
                message,
            };
            self.add_json(trimmed).map_err(fail)?;
        }
        Ok(())
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

    fn lock_id(&mut self, db: u32, key: &[u8]) -> u32 {
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

    fn client_id(&mut self, node: u16, c: ClientRef) -> u32 {
        let key = (node, c);
        if let Some(&i) = self.client_index.get(&key) {
            return i;
        }
        let i = self.clients.len() as u32;
        self.clients.push(key.clone());
        self.client_index.insert(key, i);
        i
    }

    fn seq_for(&mut self, node: u16, seq: u64) -> u64 {
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

    fn add_json(&mut self, text: &[u8]) -> Result<(), String> {
        let mut l = Line::default();
        json::members(text, |name, v| {
            l.set(name, v);
            Ok(())
        })?;
        if l.op.is_some() {
            return self.add_op_line(&l);
        }
        let ev =
            l.ev.take()
                .ok_or("neither \"ev\" (a server event) nor \"op\" (a client op)")?;
        let node = self.node_index(l.node.as_deref().unwrap_or_default());
        if &*ev == b"meta" {
            if let Some(raw) = l.nodes {
                let mut names = Vec::new();
                json::items(raw, |v| {
                    if let Some(b) = v.bytes() {
                        names.push(b.to_vec());
                    }
                    Ok(())
                })?;
                for n in names {
                    let i = self.node_index(&n);
                    if !self.meta_nodes.contains(&i) {
                        self.meta_nodes.push(i);
                    }
                }
            }
            self.dropped += l.dropped.unwrap_or(0).max(0) as u64;
            return Ok(());
        }
        let t = l.t.ok_or("an event without \"t\" (server time, µs)")?;
        let real = l.real.ok_or("an event without \"real\" (real time, µs)")?;
        let kind = match &*ev {
            b"key" => {
                let state = match (l.state.as_deref(), &l.owner) {
                    (Some(b"gone"), _) | (None, None) if l.fields.is_none() => State::Gone,
                    (Some(b"string") | None, Some(_)) => {
                        State::Str(sym(&mut self.strings, &l.owner))
                    }
                    (Some(b"string"), None) => {
                        return Err("a string state without \"owner\"".into())
                    }
                    (Some(b"hash") | None, _) => {
                        let mut f = Vec::new();
                        if let Some(raw) = l.fields {
                            let strings = &mut self.strings;
                            json::members(raw, |k, v| {
                                f.push((strings.intern(k), v.int().unwrap_or(0)));
                                Ok(())
                            })?;
                        }
                        State::Hash(f.into_boxed_slice())
                    }
                    (Some(b"other"), _) => State::Other(sym(&mut self.strings, &l.type_)),
                    (Some(x), _) => {
                        return Err(format!("unknown state \"{}\"", String::from_utf8_lossy(x)))
                    }
                };
                let cause = match l.cause.as_deref() {
                    None => Cause::Client,
                    Some(c) => Cause::parse(c).ok_or_else(|| {
                        format!("unknown cause \"{}\"", String::from_utf8_lossy(c))
                    })?,
                };
                let proof = match l.proof.as_deref() {
                    None => Proof::None,
                    Some(b"token") => Proof::Token,
                    Some(b"watch") => Proof::Watch,
                    Some(p) => {
                        return Err(format!("unknown proof \"{}\"", String::from_utf8_lossy(p)))
                    }
                };
                let key = l.key.as_deref().ok_or("a key event without \"key\"")?;
                let (command, script, function) = (
                    sym(&mut self.strings, &l.cmd),
                    sym(&mut self.strings, &l.sha),
                    sym(&mut self.strings, &l.fn_),
                );
                let lock = self.lock_id(l.db.unwrap_or(0).max(0) as u32, key);
                let client = self.client_val(node, l.client.as_ref())?;
                RecKind::Key {
                    lock,
                    cause,
                    client,
                    command,
                    script,
                    function,
                    state,
                    ttl_ms: l.ttl.unwrap_or(-1),
                    proof,
                    gap: l.gap.unwrap_or(false),
                }
            }
            b"clock" => RecKind::Clock {
                from: l.from.ok_or("a clock event without \"from\"")?,
                to: l.to.ok_or("a clock event without \"to\"")?,
                frozen: l.frozen.unwrap_or(false),
                how: sym(&mut self.strings, &l.how),
            },
            b"restart" => RecKind::Restart {
                mode: sym(&mut self.strings, &l.mode),
            },
            b"fault" => RecKind::Fault {
                text: sym(&mut self.strings, &l.text),
            },
            b"fenced" => {
                if l.resource.is_none() {
                    return Err("a fenced write without \"resource\"".into());
                }
                let (resource, value) = (
                    sym(&mut self.strings, &l.resource),
                    sym(&mut self.strings, &l.value),
                );
                RecKind::Fenced {
                    resource,
                    token: l
                        .token
                        .as_ref()
                        .and_then(Val::int)
                        .ok_or("a fenced write without \"token\"")?,
                    value,
                    accepted: l.accepted.unwrap_or(true),
                    client: self.client_val(node, l.client.as_ref())?,
                }
            }
            other => {
                return Err(format!(
                    "unknown event \"{}\"",
                    String::from_utf8_lossy(other)
                ))
            }
        };
        let seq = self.seq_for(node, l.seq.unwrap_or(0).max(0) as u64);
        self.recs.push(Rec {
            node,
            seq,
            t,
            real,
            kind,
        });
        Ok(())
    }

    /// A `client` member: an id, or `{"id", "name", "addr", "user"}`.
    fn client_val(&mut self, node: u16, v: Option<&Val<'_>>) -> Result<Option<u32>, String> {
        let c = match v {
            None | Some(Val::Null) => return Ok(None),
            Some(Val::Int(id)) => ClientRef {
                id: (*id).max(0) as u64,
                ..ClientRef::default()
            },
            Some(Val::Obj(raw)) => {
                // Each connection's object recurs on every event it made: read it once.
                let text = self.strings.intern(raw);
                if let Some(&c) = self.raw_clients.get(&(node, text)) {
                    return Ok(Some(c));
                }
                let mut c = ClientRef::default();
                json::members(raw, |k, v| {
                    let text =
                        || String::from_utf8_lossy(v.bytes().unwrap_or_default()).into_owned();
                    match k {
                        b"id" => c.id = v.int().unwrap_or(0).max(0) as u64,
                        b"name" => c.name = text(),
                        b"addr" => c.addr = text(),
                        b"user" => c.user = text(),
                        _ => {}
                    }
                    Ok(())
                })?;
                let id = self.client_id(node, c);
                self.raw_clients.insert((node, text), id);
                return Ok(Some(id));
            }
            Some(_) => return Err("\"client\" is neither an id nor an object".into()),
        };
        Ok(Some(self.client_id(node, c)))
    }

    fn add_op_line(&mut self, l: &Line<'_>) -> Result<(), String> {
        let op = match l.op.as_deref() {
            Some(b"acquire") => OpKind::Acquire,
            Some(b"release") => OpKind::Release,
            Some(b"extend") => OpKind::Extend,
            Some(b"use") | Some(b"use-resource") => OpKind::Use,
            Some(o) => return Err(format!("unknown op \"{}\"", String::from_utf8_lossy(o))),
            None => return Err("\"op\" is not a string".into()),
        };
        let invoke = l.invoke.ok_or("an op without \"invoke\" (real time, µs)")?;
        let complete = l.complete.as_ref().and_then(Val::int);
        if complete.is_some_and(|c| c < invoke) {
            return Err("an op that completed before it was invoked".into());
        }
        let client = match &l.client {
            Some(Val::Str(s)) => s,
            _ => return Err("an op without \"client\" (a name)".into()),
        };
        let lock = l.lock.as_deref().ok_or("an op without \"lock\"")?;
        let mut nodes = Vec::new();
        if let Some(raw) = l.nodes {
            let mut names = Vec::new();
            json::items(raw, |v| {
                if let Some(b) = v.bytes() {
                    names.push(b.to_vec());
                }
                Ok(())
            })?;
            nodes = names.iter().map(|n| self.node_index(n)).collect();
        } else if let Some(n) = &l.node {
            nodes.push(self.node_index(n));
        }
        let token = match &l.token {
            Some(Val::Str(t)) if !t.is_empty() => self.strings.intern(t),
            _ => self.strings.intern(client),
        };
        let rec = OpRec {
            client: self.strings.intern(client),
            lock: self.lock_id(l.db.unwrap_or(0).max(0) as u32, lock),
            op,
            invoke,
            complete: complete.unwrap_or(i64::MAX),
            ok: l.ok.as_ref().and_then(Val::bool),
            token,
            ttl_ms: l.ttl,
            add_ms: l.add,
            nodes,
            resource: self
                .strings
                .intern(l.resource.as_deref().unwrap_or_default()),
            fence: l.fence,
        };
        self.ops.push(rec);
        Ok(())
    }

    /// The history as JSON lines (a meta line first when it names nodes or drops, then the
    /// events in order, then the client ops): what `resplock check` reads.
    ///
    /// ```
    /// use resplock::history::History;
    /// let text = b"{\"ev\":\"fault\",\"node\":\"n1\",\"seq\":1,\"t\":1,\"real\":2,\"text\":\"PAUSE 5\"}\n";
    /// let h = History::from_json_lines(text).unwrap();
    /// assert_eq!(h.to_json_lines(), text);
    /// ```
    pub fn to_json_lines(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.recs.len() * 160 + self.ops.len() * 140);
        if !self.meta_nodes.is_empty() || self.dropped > 0 {
            let mut w = ObjWriter::new(&mut out);
            w.str("ev", b"meta");
            let o = w.raw("nodes");
            o.push(b'[');
            for (i, n) in self.meta_nodes.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                json::write_str(o, self.strings.get(self.nodes[*n as usize]));
            }
            o.push(b']');
            w.int("dropped", self.dropped as i64);
            w.end();
            out.push(b'\n');
        }
        for r in &self.recs {
            self.write_rec(&mut out, r);
            out.push(b'\n');
        }
        for op in &self.ops {
            self.write_op(&mut out, op);
            out.push(b'\n');
        }
        out
    }

    fn write_client(&self, w: &mut ObjWriter<'_>, c: Option<u32>) {
        let Some(c) = c else { return };
        let c = &self.clients[c as usize].1;
        let o = w.raw("client");
        let mut cw = ObjWriter::new(o);
        cw.int("id", c.id as i64);
        if !c.name.is_empty() {
            cw.str("name", c.name.as_bytes());
        }
        if !c.addr.is_empty() {
            cw.str("addr", c.addr.as_bytes());
        }
        if !c.user.is_empty() {
            cw.str("user", c.user.as_bytes());
        }
        cw.end();
    }

    pub(crate) fn write_rec(&self, out: &mut Vec<u8>, r: &Rec) {
        let s = |x: Sym| self.strings.get(x);
        let mut w = ObjWriter::new(out);
        let ev: &[u8] = match r.kind {
            RecKind::Key { .. } => b"key",
            RecKind::Clock { .. } => b"clock",
            RecKind::Restart { .. } => b"restart",
            RecKind::Fault { .. } => b"fault",
            RecKind::Fenced { .. } => b"fenced",
        };
        w.str("ev", ev);
        let node = s(self.nodes[r.node as usize]);
        if !node.is_empty() {
            w.str("node", node);
        }
        w.int("seq", r.seq as i64).int("t", r.t).int("real", r.real);
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
                gap,
            } => {
                let (db, key) = self.locks[*lock as usize];
                if db != 0 {
                    w.int("db", db as i64);
                }
                w.str("key", s(key));
                w.str("cause", cause.as_str().as_bytes());
                self.write_client(&mut w, *client);
                for (name, v) in [("cmd", command), ("sha", script), ("fn", function)] {
                    if !s(*v).is_empty() {
                        w.str(name, s(*v));
                    }
                }
                match state {
                    State::Gone => {
                        w.str("state", b"gone");
                    }
                    State::Str(o) => {
                        w.str("state", b"string").str("owner", s(*o));
                    }
                    State::Hash(fields) => {
                        w.str("state", b"hash");
                        let o = w.raw("fields");
                        let mut fw = ObjWriter::new(o);
                        for (f, c) in fields.iter() {
                            fw.int_named(s(*f), *c);
                        }
                        fw.end();
                    }
                    State::Other(t) => {
                        w.str("state", b"other").str("type", s(*t));
                    }
                }
                if !matches!(state, State::Gone) {
                    w.int("ttl", *ttl_ms);
                }
                match proof {
                    Proof::None => {}
                    Proof::Token => {
                        w.str("proof", b"token");
                    }
                    Proof::Watch => {
                        w.str("proof", b"watch");
                    }
                }
                if *gap {
                    w.bool("gap", true);
                }
            }
            RecKind::Clock {
                from,
                to,
                frozen,
                how,
            } => {
                w.int("from", *from).int("to", *to).bool("frozen", *frozen);
                if !s(*how).is_empty() {
                    w.str("how", s(*how));
                }
            }
            RecKind::Restart { mode } => {
                w.str("mode", s(*mode));
            }
            RecKind::Fault { text } => {
                w.str("text", s(*text));
            }
            RecKind::Fenced {
                resource,
                token,
                value,
                accepted,
                client,
            } => {
                w.str("resource", s(*resource))
                    .int("token", *token)
                    .str("value", s(*value))
                    .bool("accepted", *accepted);
                self.write_client(&mut w, *client);
            }
        }
        w.end();
    }

    fn write_op(&self, out: &mut Vec<u8>, op: &OpRec) {
        let s = |x: Sym| self.strings.get(x);
        let mut w = ObjWriter::new(out);
        w.str("op", op.op.as_str().as_bytes())
            .str("client", s(op.client));
        let (db, key) = self.locks[op.lock as usize];
        w.str("lock", s(key));
        if db != 0 {
            w.int("db", db as i64);
        }
        w.int("invoke", op.invoke);
        if op.complete != i64::MAX {
            w.int("complete", op.complete);
        }
        match op.ok {
            Some(ok) => w.bool("ok", ok),
            None => w.null("ok"),
        };
        if s(op.token) != s(op.client) {
            w.str("token", s(op.token));
        }
        if let Some(t) = op.ttl_ms {
            w.int("ttl", t);
        }
        if let Some(a) = op.add_ms {
            w.int("add", a);
        }
        if !op.nodes.is_empty() {
            let o = w.raw("nodes");
            o.push(b'[');
            for (i, n) in op.nodes.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                json::write_str(o, s(self.nodes[*n as usize]));
            }
            o.push(b']');
        }
        if !s(op.resource).is_empty() {
            w.str("resource", s(op.resource));
        }
        if let Some(f) = op.fence {
            w.int("fence", f);
        }
        w.end();
    }
}

fn sym(strings: &mut Interner, b: &Option<Cow<'_, [u8]>>) -> Sym {
    strings.intern(b.as_deref().unwrap_or_default())
}

/// The members of one line, as read.
#[derive(Default)]
struct Line<'a> {
    ev: Option<Cow<'a, [u8]>>,
    op: Option<Cow<'a, [u8]>>,
    node: Option<Cow<'a, [u8]>>,
    seq: Option<i64>,
    t: Option<i64>,
    real: Option<i64>,
    db: Option<i64>,
    key: Option<Cow<'a, [u8]>>,
    cause: Option<Cow<'a, [u8]>>,
    client: Option<Val<'a>>,
    cmd: Option<Cow<'a, [u8]>>,
    sha: Option<Cow<'a, [u8]>>,
    fn_: Option<Cow<'a, [u8]>>,
    state: Option<Cow<'a, [u8]>>,
    owner: Option<Cow<'a, [u8]>>,
    fields: Option<&'a [u8]>,
    type_: Option<Cow<'a, [u8]>>,
    ttl: Option<i64>,
    proof: Option<Cow<'a, [u8]>>,
    gap: Option<bool>,
    from: Option<i64>,
    to: Option<i64>,
    frozen: Option<bool>,
    how: Option<Cow<'a, [u8]>>,
    mode: Option<Cow<'a, [u8]>>,
    text: Option<Cow<'a, [u8]>>,
    resource: Option<Cow<'a, [u8]>>,
    token: Option<Val<'a>>,
    value: Option<Cow<'a, [u8]>>,
    accepted: Option<bool>,
    nodes: Option<&'a [u8]>,
    dropped: Option<i64>,
    lock: Option<Cow<'a, [u8]>>,
    invoke: Option<i64>,
    complete: Option<Val<'a>>,
    ok: Option<Val<'a>>,
    add: Option<i64>,
    fence: Option<i64>,
}

impl<'a> Line<'a> {
    fn set(&mut self, name: &[u8], v: Val<'a>) {
        let s = |v: Val<'a>| match v {
            Val::Str(s) => Some(s),
            _ => None,
        };
        match name {
            b"ev" => self.ev = s(v),
            b"op" => self.op = s(v),
            b"node" => self.node = s(v),
            b"seq" => self.seq = v.int(),
            b"t" => self.t = v.int(),
            b"real" => self.real = v.int(),
            b"db" => self.db = v.int(),
            b"key" => self.key = s(v),
            b"cause" => self.cause = s(v),
            b"client" => self.client = Some(v),
            b"cmd" => self.cmd = s(v),
            b"sha" => self.sha = s(v),
            b"fn" => self.fn_ = s(v),
            b"state" => self.state = s(v),
            b"owner" => self.owner = s(v),
            b"fields" => {
                if let Val::Obj(raw) = v {
                    self.fields = Some(raw)
                }
            }
            b"type" => self.type_ = s(v),
            b"ttl" => self.ttl = v.int(),
            b"proof" => self.proof = s(v),
            b"gap" => self.gap = v.bool(),
            b"from" => self.from = v.int(),
            b"to" => self.to = v.int(),
            b"frozen" => self.frozen = v.bool(),
            b"how" => self.how = s(v),
            b"mode" => self.mode = s(v),
            b"text" => self.text = s(v),
            b"resource" => self.resource = s(v),
            b"token" => self.token = Some(v),
            b"value" => self.value = s(v),
            b"accepted" => self.accepted = v.bool(),
            b"nodes" => {
                if let Val::Arr(raw) = v {
                    self.nodes = Some(raw)
                }
            }
            b"dropped" => self.dropped = v.int(),
            b"lock" => self.lock = s(v),
            b"invoke" => self.invoke = v.int(),
            b"complete" => self.complete = Some(v),
            b"ok" => self.ok = Some(v),
            b"add" => self.add = v.int(),
            b"fence" => self.fence = v.int(),
            _ => {}
        }
    }
}
