//! Lock history and its safety checker: did a run ever let two holders in?
//!
//! A server started with `--lock-history yes` records every change of its lock keys; lock
//! libraries' tests may also record what each client did (the client-ops format) and write
//! to a fenced resource. [`History`] reads both (JSON lines), [`History::check`] checks them
//! and explains the first broken rule as a story, and [`html::render`] draws the run as a
//! timeline. `resplock check HISTORY [CLIENT-OPS] [--html out.html]` does all three.
//!
//! # The server's events (one JSON object a line)
//!
//! Every event has `ev` (its kind), `t` (the node's server clock, µs since the epoch: what
//! TTLs run on, moved by `RESPLOCK.CLOCK`), `real` (real time, µs, read at the same instant),
//! `seq` (the node's recording order) and, across `--instances`, `node`.
//!
//! | `ev` | fields |
//! | --- | --- |
//! | `key` | `db`, `key`; `cause`: `client`, `expired`, `evicted`, `flushed`, `restart` (lost or brought back by a simulated restart), `clock` (expired by a clock jump); for a client's change `client` (`{"id","name","addr","user"}`), `cmd` (the command that wrote the key), `sha` (a script) or `fn` (a function), `proof` (`token`: the request named the owner; `watch`: a check-and-set under WATCH); the state after: `state` `gone`, `string` with `owner` (the lock's value), `hash` with `fields` (`{"uuid:thread": count}`), or `other` with `type`; `ttl` (ms, -1 none); `gap` (events of this key were dropped before) |
//! | `clock` | `from`, `to` (server µs), `frozen`, `how` (`advance`, `set`, `freeze`, `resume`, `reset`, `start`) |
//! | `restart` | `mode` (`keep`, `empty`, `from NAME`) |
//! | `fault` | `text` (`PAUSE 500`, `DROP COMMAND set`, `CLEAR`...) |
//! | `fenced` | `resource`, `token`, `value`, `accepted`, `client` |
//! | `meta` | `nodes` (every node of the run), `dropped` (events the bounded recorder dropped) |
//!
//! # The clients' operations
//!
//! `{"op": "acquire" | "release" | "extend" | "use", "client": NAME, "lock": KEY,
//! "invoke": µs, "complete": µs, "ok": true | false | null}` in real time, with `token` (the
//! client's owner token, default its name), `ttl` (ms, the lease asked for), `add` (an
//! extension that adds ms), `nodes` (a Redlock's nodes), `resource` and `fence` (a use's
//! resource and fencing token), `db`. `ok: false` means the lock said no; an error or timeout
//! whose effect is unknown is `null`, and an op that never returned has no `complete`.
//!
//! # The rules
//!
//! - **One holder.** A lease runs from the change that gave a key its owner until its owner
//!   releases it or its TTL runs out on the lock's clock. A lease that a restart, an
//!   eviction, a non-owner or (on one node of several) a clock jump ended early still counts
//!   until then: its holder cannot know. (A flush ends leases for good: tests wipe the data
//!   between steps on purpose.) At no instant may two owners hold a lock; for a key
//!   on several nodes (Redlock), two owners each holding a majority. A lock over several
//!   nodes runs on the median of their clocks, so a test moving every node's clock moves the
//!   leases, and one node's jump does not.
//! - **Owner only.** A client's change that removes, replaces or lengthens a live lease must
//!   act for its owner: name its token (or hash field) in the request, run under a WATCH of
//!   the key, or come from the connection that took the lock.
//! - **Fencing.** The tokens a resource accepted strictly increase; an accepted write or a
//!   client's use of the resource lies within a lease its client held.
//! - **Linearizability.** The client ops of each lock, taking effect somewhere between call
//!   and return, fit one lease (see `linear.rs`: Porcupine's search over a timed model).
//!
//! ```
//! use resplock::history::{CheckOptions, History, ViolationKind};
//! // A GC-pause: client 1's lease (10 s) ran out while it stalled; client 2 took the lock and
//! // wrote with token 34; client 1 woke up and wrote with its stale token 33.
//! let h = History::from_json_lines(br#"
//! {"ev":"key","t":0,"real":0,"key":"lock","owner":"c1","ttl":10000,"client":{"id":1,"name":"c1"}}
//! {"ev":"key","t":10001000,"real":10001000,"key":"lock","state":"gone","cause":"expired"}
//! {"ev":"key","t":10002000,"real":10002000,"key":"lock","owner":"c2","ttl":10000,"client":{"id":2,"name":"c2"}}
//! {"ev":"fenced","t":10003000,"real":10003000,"resource":"file","token":34,"value":"x","accepted":true,"client":{"id":2,"name":"c2"}}
//! {"ev":"fenced","t":12000000,"real":12000000,"resource":"file","token":33,"value":"y","accepted":true,"client":{"id":3,"name":"c1"}}
//! "#).unwrap();
//! let report = h.check(&CheckOptions::default());
//! assert_eq!(report.first().unwrap().kind, ViolationKind::StaleFence);
//! ```

mod check;
pub mod cli;
mod client_ops;
mod event;
pub mod html;
mod json;
mod lease;
mod linear;
pub(crate) mod record;
mod timebase;

pub use check::{CheckOptions, Report, Violation, ViolationKind};
pub use client_ops::{ClientRecorder, OpCall};
pub use event::{
    Cause, ClientOp, ClientRef, ClockMove, Event, FencedWrite, History, HistoryError, KeyChange,
    KeyState, OpKind, Proof, What,
};
