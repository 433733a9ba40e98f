//! The master side of the replication feed (see `registry.rs` for what the feed is): the
//! command layer reports what a command changes ([`touched`], [`flushed`], [`replay`]) and
//! [`commit`] sends it as one unit when the command, script or transaction ends. Each
//! call is one branch when the server is not a cluster node, and one atomic load on a node
//! no replica follows.

use crate::cmd::runtime::cluster::registry::{ClusterNode, Effect, Msg};
use crate::cmd::runtime::state::ServerState;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The node, when some replica follows it.
fn active(state: &ServerState) -> Option<&ClusterNode> {
    let node = state.cluster.as_deref()?;
    node.feed.active.load(Ordering::Acquire).then_some(node)
}

/// `key` of `db` was changed (signalModifiedKey): its state goes with the unit.
pub fn touched(state: &ServerState, db: usize, key: &[u8]) {
    if let Some(node) = active(state) {
        node.feed
            .pending
            .lock()
            .keys
            .insert((db, Bytes::copy_from_slice(key)));
    }
}

/// `db` was emptied (None: every database).
pub fn flushed(state: &ServerState, db: Option<usize>) {
    if let Some(node) = active(state) {
        let mut p = node.feed.pending.lock();
        p.flushes.push(db);
        // The keys changed before the flush are gone; their final state is read at commit.
    }
}

/// A keyspace notification was raised: the replicas raise it too. Expiry's are not: the
/// replicas get the key's deletion with a `del` event instead ([`expired`]).
pub fn event(state: &ServerState, class: u32, event: &str, key: &[u8], db: usize) {
    if class == crate::config::notify::EXPIRED {
        return;
    }
    if let Some(node) = active(state) {
        node.feed.pending.lock().events.push((
            class,
            event.to_string(),
            db,
            Bytes::copy_from_slice(key),
        ));
    }
}

/// The master removed an expired key: as Redis propagates a DEL, its replicas delete it
/// (with the `del` event a replica executing DEL raises); they do not expire keys themselves.
pub fn expired(state: &ServerState, db: usize, key: &[u8]) {
    if let Some(node) = active(state) {
        let mut p = node.feed.pending.lock();
        p.keys.insert((db, Bytes::copy_from_slice(key)));
        p.events.push((
            crate::config::notify::GENERIC,
            "del".to_string(),
            db,
            Bytes::copy_from_slice(key),
        ));
    }
}

/// Whether this node replicates a master now (it then leaves expiry to its master).
pub fn is_replica(state: &ServerState) -> bool {
    state
        .cluster
        .as_deref()
        .is_some_and(|n| n.follow.master.read().is_some())
}

/// A command whose effect is itself (FUNCTION LOAD/DELETE/FLUSH/RESTORE): replayed as is.
pub fn replay(state: &ServerState, db: usize, args: &[Bytes]) {
    if let Some(node) = active(state) {
        node.feed.pending.lock().commands.push((db, args.to_vec()));
    }
}

/// The command, script or transaction that ran ends: send what it changed to every replica
/// as one unit. The caller holds the server lock, so the keys' states are its final ones.
pub fn commit(state: &ServerState) {
    let Some(node) = active(state) else {
        return;
    };
    let pending = std::mem::take(&mut *node.feed.pending.lock());
    if pending.is_empty() {
        return;
    }
    let now = state.clock.now_ms();
    let mut effects = Vec::with_capacity(pending.flushes.len() + pending.keys.len());
    let mut size = 0u64;
    for db in pending.flushes {
        size += 16;
        effects.push(Effect::Flush(db));
    }
    for (db, key) in pending.keys {
        let entry = {
            let shard = state.keyspace.db(db).lock(&key);
            shard.map.get(&key).filter(|e| !e.is_expired(now)).cloned()
        };
        size += key.len() as u64 + 16;
        effects.push(Effect::Key { db, key, entry });
    }
    for (db, args) in pending.commands {
        size += args.iter().map(|a| a.len() as u64 + 8).sum::<u64>();
        effects.push(Effect::Command { db, args });
    }
    for (class, event, db, key) in pending.events {
        effects.push(Effect::Event {
            class,
            event,
            db,
            key,
        });
    }
    let offset = node.feed.offset.fetch_add(size, Ordering::AcqRel) + size;
    let effects = Arc::new(effects);
    let mut subs = node.feed.subscribers.lock();
    subs.retain(|s| {
        s.tx.send(Msg::Unit {
            effects: effects.clone(),
            offset,
        })
        .is_ok()
    });
    if subs.is_empty() {
        node.feed.active.store(false, Ordering::Release);
    }
}

/// The replication PING a master sends every repl-ping-replica-period (`*1\r\n$4\r\nPING\r\n`,
/// 14 bytes of the stream): no effect, the offset moves.
pub fn ping(state: &ServerState) {
    let Some(node) = active(state) else {
        return;
    };
    let offset = node.feed.offset.fetch_add(14, Ordering::AcqRel) + 14;
    let effects = Arc::new(Vec::new());
    let mut subs = node.feed.subscribers.lock();
    subs.retain(|s| {
        s.tx.send(Msg::Unit {
            effects: effects.clone(),
            offset,
        })
        .is_ok()
    });
}
