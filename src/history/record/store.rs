//! The recorder's storage: a ring of compact events per lock key, the global recording order
//! over all rings and the node events (for the cap that drops the oldest first), and the
//! clients and commands interned once; turned back into full [`Event`]s on export.

use super::Settings;
use crate::glob::Glob;
use crate::history::event::{Cause, ClientRef, Event, KeyChange, KeyState, Proof, What};
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub(super) enum St {
    Gone,
    Str(Bytes),
    Hash(Box<[(Bytes, i64)]>),
    Other(&'static str),
}

/// A stored key change (about 100 bytes, the owner's bytes shared with the keyspace).
#[derive(Clone, Debug)]
pub(super) struct Stored {
    pub(super) seq: u64,
    pub(super) t: i64,
    pub(super) real: i64,
    pub(super) ttl_ms: i64,
    /// Index into `Inner::clients` (u32::MAX: none).
    pub(super) client: u32,
    /// Index into `Inner::by` (the command, script, function).
    pub(super) by: u32,
    pub(super) cause: Cause,
    pub(super) proof: Proof,
    pub(super) state: St,
}

pub(super) struct Ring {
    pub(super) db: u32,
    pub(super) key: Bytes,
    pub(super) events: VecDeque<Stored>,
    /// Events of this key were dropped: the oldest kept one follows a gap.
    pub(super) gap: bool,
}

/// What made a change: the command, the script's SHA, the function's name.
pub(super) type By = (Arc<str>, Arc<str>, Arc<str>);

/// Where the global order queue points.
pub(super) const NODE_RING: u32 = u32::MAX;

#[derive(Default)]
pub(super) struct Inner {
    pub(super) settings: Settings,
    pub(super) globs: Vec<Glob>,
    pub(super) rings: Vec<Ring>,
    pub(super) index: HashMap<(u32, Bytes), u32, ahash::RandomState>,
    /// Every kept event in recording order: (seq, ring), some stale after per-key drops.
    pub(super) order: VecDeque<(u64, u32)>,
    /// Clock moves, restarts, faults, fenced writes.
    pub(super) node_events: VecDeque<(u64, i64, i64, What)>,
    pub(super) clients: Vec<Arc<ClientRef>>,
    pub(super) client_index: HashMap<ClientRef, u32, ahash::RandomState>,
    pub(super) by: Vec<By>,
    pub(super) by_index: HashMap<By, u32, ahash::RandomState>,
    pub(super) seq: u64,
    /// The seq of the last clock move: a key's times may go back only across one.
    pub(super) clock_moved_at: u64,
    pub(super) kept: usize,
    pub(super) bytes: usize,
}

impl Inner {
    pub(super) fn client(&mut self, c: &ClientRef) -> u32 {
        if let Some(&i) = self.client_index.get(c) {
            return i;
        }
        let i = self.clients.len() as u32;
        self.clients.push(Arc::new(c.clone()));
        self.client_index.insert(c.clone(), i);
        self.bytes += 96 + c.name.len() + c.addr.len() + c.user.len();
        i
    }

    pub(super) fn by(&mut self, command: &str, script: &str, function: &str) -> u32 {
        let key: By = (command.into(), script.into(), function.into());
        if let Some(&i) = self.by_index.get(&key) {
            return i;
        }
        let i = self.by.len() as u32;
        self.by.push(key.clone());
        self.by_index.insert(key, i);
        i
    }

    pub(super) fn drop_oldest_of(&mut self, ring: u32) {
        let r = &mut self.rings[ring as usize];
        if let Some(e) = r.events.pop_front() {
            let heap = match &e.state {
                St::Str(b) => b.len() + 32,
                St::Hash(f) => f.iter().map(|(k, _)| k.len() + 40).sum::<usize>() + 16,
                _ => 0,
            };
            r.gap = true;
            self.kept -= 1;
            self.bytes = self
                .bytes
                .saturating_sub(std::mem::size_of::<Stored>() + 16 + heap);
        }
    }

    pub(super) fn event(&self, node: &str, ring: &Ring, e: &Stored, gap: bool) -> Event {
        let (command, script, function) = &self.by[e.by as usize];
        let state = match &e.state {
            St::Gone => KeyState::Gone,
            St::Str(b) => KeyState::Str(b.to_vec()),
            St::Hash(f) => KeyState::Hash(f.iter().map(|(k, c)| (k.to_vec(), *c)).collect()),
            St::Other(t) => KeyState::Other(t.to_string()),
        };
        let mut ev = Event::new(
            node,
            e.t,
            e.real,
            What::Key(KeyChange {
                db: ring.db,
                key: ring.key.to_vec(),
                cause: e.cause,
                client: (e.client != u32::MAX).then(|| (*self.clients[e.client as usize]).clone()),
                command: command.to_string(),
                script: script.to_string(),
                function: function.to_string(),
                state,
                ttl_ms: e.ttl_ms,
                proof: e.proof,
                gap,
            }),
        );
        ev.seq = e.seq;
        ev
    }
}
