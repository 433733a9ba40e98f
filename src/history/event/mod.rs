//! The records a history is made of, in their owned form ([`Event`], [`ClientOp`]), their
//! JSON lines, and [`History`], which keeps them compactly (every byte string interned) so a
//! history of millions of events fits in memory and checks in seconds.
//!
//! This file holds the owned records a recorder or a test builds; `store.rs` the compact form
//! [`History`] keeps them in (what the checker and the timeline read); `read.rs` and
//! `write.rs` the JSON lines in each direction, apart because each is long and neither
//! needs the other.

mod read;
mod store;
mod write;

pub use store::History;
pub(crate) use store::{OpRec, RecKind, State, Sym};

use std::fmt;

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
