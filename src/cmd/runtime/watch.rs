//! WATCH: which clients watch which keys, and the signals that make their EXEC fail.
//!
//! Redis keeps, per database, `key -> clients watching it` and, per client, the keys it
//! watches (multi.c). This registry is the same pair of maps in one place, behind one mutex
//! that is only ever taken under the server lock (so it is never contended), plus a global
//! count of watched keys: with no WATCH anywhere, a write's signal costs one atomic load.
//!
//! What makes a transaction fail (the client's *dirty* flag, Redis's CLIENT_DIRTY_CAS):
//! - [`Watches::touch`]: a command changed the key (Redis's signalModifiedKey), or expiry
//!   removed it. A watcher whose key was already logically expired when it watched it is not
//!   dirtied by the deletion of that key (it changed nothing visible), only by a later change;
//!   and, as in Redis 7.0.15's touchWatchedKey, meeting such a watcher on a key that still
//!   exists stops the walk over that key's watchers.
//! - [`Watches::touch_db`]: FLUSHDB, FLUSHALL and SWAPDB (touchAllWatchedKeysInDb).
//! - EXEC itself also fails when a key that was alive at WATCH time is now logically expired
//!   ([`Watches::any_expired`]).
//!
//! A dirtied client stops watching everything at once (nothing can make it clean again but
//! EXEC, DISCARD, UNWATCH or RESET), but keeps its dirty flag.

use crate::cmd::runtime::state::ServerState;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One client's watch of one key (Redis's watchedKey).
struct Watcher {
    client: u64,
    /// The key was present but logically expired when the client watched it.
    expired: bool,
}

/// What one client watches, and whether a watched key changed.
#[derive(Default)]
struct ClientWatches {
    keys: HashSet<(usize, Bytes)>,
    dirty: bool,
}

#[derive(Default)]
struct Registry {
    /// Per database: key -> its watchers, in the order they watched it.
    dbs: Vec<HashMap<Bytes, Vec<Watcher>>>,
    clients: HashMap<u64, ClientWatches>,
}

impl Registry {
    fn db_mut(&mut self, db: usize) -> &mut HashMap<Bytes, Vec<Watcher>> {
        if self.dbs.len() <= db {
            self.dbs.resize_with(db + 1, HashMap::new);
        }
        &mut self.dbs[db]
    }

    /// Forget every key `client` watches, keeping its record (and dirty flag). Returns how
    /// many keys it watched.
    fn unwatch_keys(&mut self, client: u64) -> usize {
        let Some(c) = self.clients.get_mut(&client) else {
            return 0;
        };
        let keys = std::mem::take(&mut c.keys);
        for (db, key) in &keys {
            let map = &mut self.dbs[*db];
            if let Some(list) = map.get_mut(key) {
                list.retain(|w| w.client != client);
                if list.is_empty() {
                    map.remove(key);
                }
            }
        }
        keys.len()
    }

    fn dirty(&mut self, client: u64) {
        self.clients.entry(client).or_default().dirty = true;
    }
}

/// See the module documentation.
#[derive(Default)]
pub struct Watches {
    /// (client, key) watches in the registry: zero means a signal has nothing to do.
    watched: AtomicUsize,
    inner: Mutex<Registry>,
}

impl Watches {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether any client watches any key (one atomic load).
    pub fn any(&self) -> bool {
        self.watched.load(Ordering::Relaxed) > 0
    }

    /// Whether a key `client` watched has changed since (its EXEC will fail).
    pub fn is_dirty(&self, client: u64) -> bool {
        self.inner
            .lock()
            .clients
            .get(&client)
            .is_some_and(|c| c.dirty)
    }

    /// Number of keys `client` watches (CLIENT LIST's `watch=` in later Redis; tests).
    pub fn watched_by(&self, client: u64) -> usize {
        self.inner
            .lock()
            .clients
            .get(&client)
            .map_or(0, |c| c.keys.len())
    }

    /// WATCH one key for `client` in `db`; `expired`: the key is present but already
    /// logically expired (Redis 7.0 remembers it, see the module documentation). Watching a
    /// key twice is one watch.
    pub fn watch(&self, client: u64, db: usize, key: &[u8], expired: bool) {
        let mut r = self.inner.lock();
        let c = r.clients.entry(client).or_default();
        let key = Bytes::copy_from_slice(key);
        if !c.keys.insert((db, key.clone())) {
            return;
        }
        r.db_mut(db)
            .entry(key)
            .or_default()
            .push(Watcher { client, expired });
        self.watched.fetch_add(1, Ordering::Relaxed);
    }

    /// The keys `client` watches (the lock history counts a transaction under WATCH of a
    /// key as a check-and-set of it).
    pub fn keys_of(&self, client: u64) -> Vec<(usize, Bytes)> {
        self.inner
            .lock()
            .clients
            .get(&client)
            .map(|c| c.keys.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// UNWATCH, EXEC, DISCARD, RESET, disconnect: forget the client's keys and its dirty flag.
    pub fn forget(&self, client: u64) {
        let mut r = self.inner.lock();
        let n = r.unwatch_keys(client);
        r.clients.remove(&client);
        self.watched.fetch_sub(n, Ordering::Relaxed);
    }

    /// Redis's touchWatchedKey: `key` in `db` was modified (or deleted). `exists` says whether
    /// the key is in the database now, expired or not; it is asked only when an
    /// already-expired watch is met, and must not need a lock the caller holds.
    pub fn touch(&self, db: usize, key: &[u8], exists: impl FnOnce() -> bool) {
        if !self.any() {
            return;
        }
        let mut r = self.inner.lock();
        let Some(list) = r.dbs.get_mut(db).and_then(|m| m.get_mut(key)) else {
            return;
        };
        let mut exists = Some(exists);
        let mut present = None;
        let mut dirtied = Vec::new();
        for w in list.iter_mut() {
            if w.expired {
                let here = *present.get_or_insert_with(|| (exists.take().expect("asked once"))());
                if !here {
                    // The stale key is gone: nothing visible changed.
                    w.expired = false;
                    continue;
                }
                break;
            }
            dirtied.push(w.client);
        }
        for c in dirtied {
            r.dirty(c);
            let n = r.unwatch_keys(c);
            self.watched.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// Redis's touchAllWatchedKeysInDb: `emptied` is flushed, or swapped with
    /// `replaced_with`. Called before the change. `state(db, key)` reports a key as it is
    /// now: None if absent, Some(true) if present but logically expired.
    pub fn touch_db(
        &self,
        emptied: usize,
        replaced_with: Option<usize>,
        state: impl Fn(usize, &[u8]) -> Option<bool>,
    ) {
        if !self.any() {
            return;
        }
        let mut r = self.inner.lock();
        let Some(map) = r.dbs.get_mut(emptied) else {
            return;
        };
        let mut dirtied = Vec::new();
        for (key, list) in map.iter_mut() {
            let in_emptied = state(emptied, key).is_some();
            let in_other = replaced_with.and_then(|o| state(o, key));
            if !in_emptied && in_other.is_none() {
                continue;
            }
            let other_expired = in_other == Some(true);
            for w in list.iter_mut() {
                if w.expired {
                    if in_other.is_none() {
                        // The stale key is deleted: no logical change.
                        w.expired = false;
                        continue;
                    } else if other_expired {
                        // Stale, and replaced with another stale key.
                        continue;
                    }
                } else if !in_emptied && other_expired {
                    // A missing key replaced with a stale one.
                    w.expired = true;
                    continue;
                }
                dirtied.push(w.client);
            }
        }
        for c in dirtied {
            r.dirty(c);
        }
    }

    /// Redis's isWatchedKeyExpired: has a key `client` watched while it was alive expired
    /// since? `expired(db, key)` says whether a key is present and logically expired now.
    pub fn any_expired(&self, client: u64, expired: impl Fn(usize, &[u8]) -> bool) -> bool {
        let r = self.inner.lock();
        let Some(c) = r.clients.get(&client) else {
            return false;
        };
        c.keys.iter().any(|(db, key)| {
            let was_stale = r.dbs[*db]
                .get(key)
                .and_then(|l| l.iter().find(|w| w.client == client))
                .is_some_and(|w| w.expired);
            !was_stale && expired(*db, key)
        })
    }
}

/// A key as WATCH sees it now, without expiring it: None if absent, Some(true) if present
/// but logically expired (Redis's dictFind and keyIsExpired).
pub fn key_state(state: &ServerState, db: usize, key: &[u8], now: i64) -> Option<bool> {
    let shard = state.keyspace.db(db).lock(key);
    shard.map.get(key).map(|e| e.is_expired(now))
}

/// signalModifiedKey's WATCH half: `key` in `db` was changed by a command. The caller holds
/// no shard lock.
pub fn key_modified(state: &ServerState, db: usize, key: &[u8]) {
    state.watches.touch(db, key, || {
        state.keyspace.db(db).lock(key).map.get(key).is_some()
    });
}

/// Expiry (lazy or active) removed `key` from `db`.
pub fn key_expired(state: &ServerState, db: usize, key: &[u8]) {
    state.watches.touch(db, key, || false);
}

/// FLUSHDB (one database) or FLUSHALL (`db` None: all of them), before the keys go.
pub fn flushed(state: &ServerState, db: Option<usize>, now: i64) {
    if !state.watches.any() {
        return;
    }
    let dbs = match db {
        Some(d) => d..d + 1,
        None => 0..state.keyspace.databases(),
    };
    for d in dbs {
        state
            .watches
            .touch_db(d, None, |db, key| key_state(state, db, key, now));
    }
}

/// SWAPDB `a` `b`, before the swap.
pub fn swapped(state: &ServerState, a: usize, b: usize, now: i64) {
    if !state.watches.any() {
        return;
    }
    let st = |db: usize, key: &[u8]| key_state(state, db, key, now);
    state.watches.touch_db(a, Some(b), st);
    state.watches.touch_db(b, Some(a), st);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touch_dirties_every_watcher_and_unwatches_them() {
        let w = Watches::new();
        w.watch(1, 0, b"k", false);
        w.watch(1, 0, b"other", false);
        w.watch(2, 0, b"k", false);
        w.touch(0, b"k", || true);
        assert!(w.is_dirty(1) && w.is_dirty(2));
        assert_eq!(w.watched_by(1), 0);
        assert!(!w.any());
        w.forget(1);
        assert!(!w.is_dirty(1));
    }

    #[test]
    fn deleting_a_key_that_was_stale_when_watched_is_no_change() {
        let w = Watches::new();
        w.watch(1, 0, b"k", true);
        w.touch(0, b"k", || false);
        assert!(!w.is_dirty(1));
        // Now it is an ordinary watch of a missing key.
        w.touch(0, b"k", || true);
        assert!(w.is_dirty(1));
    }

    #[test]
    fn other_databases_and_keys_are_not_touched() {
        let w = Watches::new();
        w.watch(1, 3, b"k", false);
        w.touch(0, b"k", || true);
        w.touch(3, b"j", || true);
        assert!(!w.is_dirty(1));
        assert_eq!(w.watched_by(1), 1);
    }
}
