//! The replica side of the replication feed (see `registry.rs`): [`attach`] makes a node
//! follow a master (a full copy of its data and functions, then every unit it commits), a
//! follower task applies what arrives under the replica's server lock, and [`caught_up`]
//! waits until a replica has applied everything its master sent (a manual failover's
//! handshake).

use crate::cluster::NodeIx;
use crate::cmd::runtime::call::call;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::cluster::registry::{ClusterNode, Effect, Msg, Subscriber};
use crate::cmd::runtime::lock::Held;
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Take `state`'s server lock from async code, waiting without blocking the worker while
/// a long holder (a script) has it.
pub async fn lock_async(state: &ServerState) -> Held<'_> {
    loop {
        if let Some(h) = state.lock.try_lock() {
            return h;
        }
        if let Some(h) = state.lock.lock_briefly() {
            return h;
        }
        state.lock.released().await;
    }
}

/// Run one command on `state` as a client with no connection, holding its lock (caller).
fn run(state: &ServerState, db: usize, args: &[Bytes]) -> Reply {
    let Ok((cmd, _)) = state.commands.resolve(args) else {
        return Reply::Nil;
    };
    let mut client = Client::detached(0, db, 3);
    let mut ctx = Ctx {
        state,
        client: &mut client,
        now: state.clock.now_ms(),
        in_script: false,
        in_exec: true,
    };
    call(&mut ctx, cmd, args)
}

/// Stop following (a replica promoted): its follower task ends at its next message.
pub fn stop(replica: &ServerState) {
    if let Some(node) = replica.cluster.as_deref() {
        node.follow.generation.fetch_add(1, Ordering::AcqRel);
        *node.follow.master.write() = None;
    }
}

/// Make `replica` follow `master` (node `master_ix`): it starts again from a copy of the
/// master's data and functions, taken holding the master's lock at the same moment the
/// replica joins the feed, so nothing is missed or seen twice.
pub async fn attach(replica: Arc<ServerState>, master: Arc<ServerState>, master_ix: NodeIx) {
    let (Some(rnode), Some(mnode)) = (replica.cluster.clone(), master.cluster.clone()) else {
        return;
    };
    let generation = rnode.follow.generation.fetch_add(1, Ordering::AcqRel) + 1;
    *rnode.follow.master.write() = Some(master_ix);
    rnode.follow.synced.store(0, Ordering::Release);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    {
        let held = lock_async(&master).await;
        let snapshot = Arc::new(master.keyspace.snapshot());
        let functions = match run(
            &master,
            0,
            &[Bytes::from_static(b"function"), Bytes::from_static(b"dump")],
        ) {
            Reply::Bulk(b) => Some(b),
            _ => None,
        };
        let offset = mnode.feed.offset.load(Ordering::Acquire);
        let mut subs = mnode.feed.subscribers.lock();
        subs.retain(|s| s.node != rnode.me);
        let _ = tx.send(Msg::Sync {
            snapshot,
            functions,
            offset,
        });
        subs.push(Subscriber { node: rnode.me, tx });
        mnode.feed.active.store(true, Ordering::Release);
        drop(subs);
        drop(held);
    }
    tokio::spawn(follower(replica, rx, generation));
}

/// Apply what the master sends until the replica stops following it (or either stops).
async fn follower(
    replica: Arc<ServerState>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
    generation: u64,
) {
    let Some(node) = replica.cluster.clone() else {
        return;
    };
    let current = || node.follow.generation.load(Ordering::Acquire) == generation;
    loop {
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = replica.shutdown.cancelled() => None,
        };
        let Some(msg) = msg else { return };
        if !current() {
            return;
        }
        let held = lock_async(&replica).await;
        if !current() {
            return;
        }
        match msg {
            Msg::Sync {
                snapshot,
                functions,
                offset,
            } => {
                let now = replica.clock.now_ms();
                crate::cmd::runtime::watch::flushed(&replica, None, now);
                crate::cmd::runtime::tracking::flushed(&replica, 0);
                replica.keyspace.restore(&snapshot);
                if let Some(payload) = functions {
                    run(
                        &replica,
                        0,
                        &[
                            Bytes::from_static(b"function"),
                            Bytes::from_static(b"restore"),
                            payload,
                            Bytes::from_static(b"replace"),
                        ],
                    );
                }
                node.follow.applied.store(offset, Ordering::Release);
                node.follow.synced.store(1, Ordering::Release);
            }
            Msg::Unit { effects, offset } => {
                for e in effects.iter() {
                    apply(&replica, e);
                }
                node.follow.applied.store(offset, Ordering::Release);
            }
        }
        crate::cmd::runtime::blocking::serve_ready(&replica);
        drop(held);
        acknowledge(&node).await;
    }
}

/// The replica applied a unit: its master's clients blocked in WAIT that now have enough
/// replicas are answered (Redis: the replica's REPLCONF ACK), under the master's lock, taken
/// after the replica's was released.
async fn acknowledge(node: &ClusterNode) {
    let Some(master) = (*node.follow.master.read()).and_then(|m| node.shared.server(m)) else {
        return;
    };
    if master.replication.waits.lock().is_empty() {
        return;
    }
    let held = lock_async(&master).await;
    crate::cmd::runtime::blocking::serve_replica_waits(&master);
    drop(held);
}

/// Apply one effect on a replica, holding its lock.
fn apply(state: &ServerState, e: &Effect) {
    let now = state.clock.now_ms();
    match e {
        Effect::Flush(db) => {
            crate::cmd::runtime::watch::flushed(state, *db, now);
            crate::cmd::runtime::tracking::flushed(state, 0);
            let dbs = match db {
                Some(d) => *d..*d + 1,
                None => 0..state.keyspace.databases(),
            };
            for d in dbs {
                if d < state.keyspace.databases() {
                    let mut g = state.keyspace.db(d).lock_all();
                    for s in g.shards() {
                        s.clear();
                    }
                }
            }
        }
        Effect::Key { db, key, entry } => {
            if *db >= state.keyspace.databases() {
                return;
            }
            {
                let mut shard = state.keyspace.db(*db).lock(key);
                match entry {
                    Some(entry) => shard.insert(key, entry.clone()),
                    None => {
                        // Removed as a deletion (the master's DEL), never as this node's
                        // own expiry: at the start of time nothing has expired.
                        shard.remove(key, i64::MIN);
                    }
                }
            }
            state.keyspace.report_pending();
            crate::cmd::runtime::watch::key_modified(state, *db, key);
            crate::cmd::runtime::tracking::key_modified(state, 0, key);
        }
        Effect::Command { db, args } => {
            run(state, *db, args);
        }
        Effect::Event {
            class,
            event,
            db,
            key,
        } => {
            crate::cmd::runtime::keyspace_events::keyspace_event(state, *class, event, key, *db);
        }
    }
}

/// Wait until `replica` has applied everything its master sent up to `offset`, at most
/// `limit`. True if it did.
pub async fn caught_up(replica: &ServerState, offset: u64, limit: Duration) -> bool {
    let Some(node) = replica.cluster.as_deref() else {
        return false;
    };
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if node.follow.synced.load(Ordering::Acquire) == 1
            && node.follow.applied.load(Ordering::Acquire) >= offset
        {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}
