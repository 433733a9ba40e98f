//! The master side of replication, as redis-server 7.0's replication.c: the replication
//! stream (every effect the AOF gets, plus PUBLISH, PING and GETACK) fed to the backlog and
//! to the attached replicas; a replica's attachment (PSYNC's partial resynchronization from
//! the backlog, or a full one from an RDB snapshot taken while clients keep running); its
//! acknowledgements; and WAIT, which counts them. The replica's socket is the connection
//! layer's (`connection/replica.rs`): this module never waits on anything.

pub mod failover;
pub mod link;
pub mod registry;
pub mod role;

pub use registry::{Handshake, SyncRequest};

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::rdb::file::ReplAux;
use crate::rdb::snapshot;
use crate::repl::backlog::Backlog;
use bytes::Bytes;
use registry::{LinkState, Replica};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How a replica's attachment went.
pub enum Attach {
    /// Partial resynchronization: write `line`; the replica's pending bytes already hold
    /// the part of the backlog it lacks.
    Continue {
        /// The replica, online.
        replica: Arc<Replica>,
        /// `+CONTINUE [replid]`.
        line: Vec<u8>,
    },
    /// Full resynchronization: write `line` (PSYNC's `+FULLRESYNC`; nothing for SYNC), then
    /// the RDB that arrives on `rdb`, then the pending bytes.
    Full {
        /// The replica, in [`LinkState::SendBulk`].
        replica: Arc<Replica>,
        /// `+FULLRESYNC replid offset`, for PSYNC.
        line: Option<Vec<u8>>,
        /// The RDB file, produced on a thread of its own.
        rdb: tokio::sync::oneshot::Receiver<std::io::Result<Vec<u8>>>,
        /// Set to stop producing the RDB (the replica went away).
        abandon: Arc<AtomicBool>,
    },
    /// A snapshot cannot start now (a BGSAVE or AOF rewrite captures the dataset): try
    /// again later, as Redis waits for the next BGSAVE.
    Busy,
}

/// Append one command of the replication stream (replicationFeedSlaves), with a SELECT when
/// its database differs from the stream's; `db` None for commands of no database (PING,
/// REPLCONF GETACK).
pub fn feed(state: &ServerState, db: usize, args: &[Bytes]) {
    let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
    feed_in(state, Some(db), &refs);
}

fn feed_in(state: &ServerState, db: Option<usize>, args: &[&[u8]]) {
    let r = &state.replication;
    // A replica's stream is its master's, forwarded as received (`link`); nothing of its own.
    if r.is_replica() || r.backlog.lock().is_none() {
        return;
    }
    let mut out = Vec::new();
    if let Some(db) = db {
        let mut selected = r.stream_db.lock();
        if *selected != Some(db) {
            crate::aof::encode::select(&mut out, db);
            *selected = Some(db);
        }
    }
    crate::aof::encode::command(&mut out, args);
    r.push_stream(&out, state.clock.now_ms());
}

/// replicationCron's PING, every repl-ping-replica-period seconds while replicas are
/// attached: it moves the offset, so an idle master's replicas see it alive. The caller
/// holds the server lock.
pub fn ping(state: &ServerState) {
    if !state.replication.replicas.lock().is_empty() && !holds_pings(state) {
        // Redis's shared.ping: lower case in the stream.
        feed_in(state, None, &[b"ping"]);
    }
}

/// A FAILOVER with a TIMEOUT waits while writes are paused: the stream's PING would move
/// the offset the replicas must reach, so it is not sent (replicationCron's
/// manual_failover_in_progress).
fn holds_pings(state: &ServerState) -> bool {
    use crate::cmd::runtime::pause::registry::PauseKind;
    state.replication.failing_over.load(Ordering::Acquire)
        && state.replication.failover.lock().end_ms != 0
        && state.pause.in_force_at(|| state.clock.now_ms()).0 != PauseKind::Off
}

/// A replica is asked for its offset (REPLCONF GETACK *), so a WAIT is answered as soon as
/// the replicas caught up.
pub fn request_acks(state: &ServerState) {
    if !state.replication.replicas.lock().is_empty() {
        feed_in(state, None, &[b"REPLCONF", b"GETACK", b"*"]);
    }
}

/// SYNC/PSYNC from `client`: attach it as a replica, partially from the backlog if its
/// PSYNC names this master's history at an offset the backlog still holds, else fully from
/// an RDB snapshot of this instant. The caller holds the server lock.
pub fn attach(state: &Arc<ServerState>, client: &Client, hs: &Handshake) -> Attach {
    let r = &state.replication;
    let req = hs.sync.clone().unwrap_or(SyncRequest { psync: None });
    let name = replica_name(client, hs);
    let ip = hs.ip.clone().unwrap_or_else(|| peer_ip(&client.info.addr));
    let now = state.clock.now_ms();
    crate::log::notice(&format!("Replica {name} asks for synchronization"));
    if let Some((replid, offset)) = &req.psync {
        if let Some(a) = try_partial(state, client, hs, &ip, &name, replid, *offset, now) {
            state.stats.sync_partial_ok.fetch_add(1, Ordering::Relaxed);
            return a;
        }
    }
    let mut plan = crate::cmd::runtime::persist::save::plan(state, false);
    let created = {
        let mut b = r.backlog.lock();
        let created = b.is_none();
        if created {
            // The offset goes on from master_repl_offset; the history gets a new id
            // (changeReplicationId, clearReplicationId2), as no replica can share the old.
            let size = backlog_size(state);
            *b = Some(Backlog::new(size, r.base_offset.load(Ordering::Relaxed)));
            let mut ids = r.ids.lock();
            ids.replid = crate::repl::backlog::new_replid();
            ids.replid2 = registry::NO_REPLID.to_string();
            ids.second_offset = -1;
        }
        created
    };
    if created {
        crate::log::notice(&format!(
            "Replication backlog created, my new replication IDs are '{}' and '{}'",
            r.replid(),
            registry::NO_REPLID
        ));
        // The stream is produced from now on, AOF or not.
        state.propagation.set_active(true);
    }
    let offset = r.offset();
    let stream_db = r.stream_db.lock().take().unwrap_or(0) as i64;
    plan.aux.repl = Some(ReplAux {
        stream_db,
        id: r.replid(),
        offset,
    });
    let Ok(sink) = snapshot::begin(&state.keyspace, &plan) else {
        return Attach::Busy;
    };
    if req.psync.is_some() {
        crate::log::notice(&format!("Full resync requested by replica {name}"));
    }
    // Counted once the resynchronization starts (a busy attempt is tried again); a replica
    // that asks with `?` wants a full one on purpose.
    if req.psync.as_ref().is_some_and(|(id, _)| id[..] != b"?"[..]) {
        state.stats.sync_partial_err.fetch_add(1, Ordering::Relaxed);
    }
    state.stats.sync_full.fetch_add(1, Ordering::Relaxed);
    crate::log::notice("Starting BGSAVE for SYNC with target: replicas sockets");
    let replica = Arc::new(Replica::new(
        client.id,
        client.info.clone(),
        ip,
        hs.port,
        LinkState::SendBulk,
        now,
        req.psync.is_none(),
    ));
    r.replicas.lock().push(replica.clone());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let abandon = Arc::new(AtomicBool::new(false));
    let stop = abandon.clone();
    let server = state.clone();
    let spawned = std::thread::Builder::new()
        .name("replica-rdb".into())
        .spawn(move || {
            let stopped = || stop.load(Ordering::Relaxed) || server.shutdown.is_cancelled();
            let r = snapshot::write(&server.keyspace, &sink, &plan, Vec::new(), &stopped);
            let _ = tx.send(r.map(|(v, _)| v));
        });
    if spawned.is_err() {
        state.keyspace.end_capture();
    }
    let line = req
        .psync
        .as_ref()
        .map(|_| format!("+FULLRESYNC {} {}\r\n", r.replid(), offset).into_bytes());
    Attach::Full {
        replica,
        line,
        rdb: rx,
        abandon,
    }
}

/// masterTryPartialResynchronization: `+CONTINUE` when `replid` is this master's and the
/// backlog holds everything after `offset`; None asks for a full resynchronization.
#[allow(clippy::too_many_arguments)]
fn try_partial(
    state: &ServerState,
    client: &Client,
    hs: &Handshake,
    ip: &str,
    name: &str,
    replid: &[u8],
    offset: i64,
    now: i64,
) -> Option<Attach> {
    let r = &state.replication;
    let ids = r.ids.lock().clone();
    let mine = replid.eq_ignore_ascii_case(ids.replid.as_bytes());
    let second = replid.eq_ignore_ascii_case(ids.replid2.as_bytes());
    if !mine && (!second || offset > ids.second_offset) {
        if replid != b"?" {
            if !mine && !second {
                crate::log::notice(&format!(
                    "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '{}', my replication IDs are '{}' and '{}')",
                    String::from_utf8_lossy(replid),
                    ids.replid,
                    ids.replid2
                ));
            } else {
                crate::log::notice(&format!(
                    "Partial resynchronization not accepted: Requested offset for second ID was {offset}, but I can reply up to {}",
                    ids.second_offset
                ));
            }
        }
        return None;
    }
    let b = r.backlog.lock();
    let Some(data) = b.as_ref().and_then(|b| b.since(offset)) else {
        crate::log::notice(&format!(
            "Unable to partial resync with replica {name} for lack of backlog (Replica request was: {offset})."
        ));
        return None;
    };
    let replica = Arc::new(Replica::new(
        client.id,
        client.info.clone(),
        ip.to_string(),
        hs.port,
        LinkState::Online,
        now,
        false,
    ));
    replica.ack_offset.store(offset - 1, Ordering::Relaxed);
    crate::log::notice(&format!(
        "Partial resynchronization request from {name} accepted. Sending {} bytes of backlog starting from offset {offset}.",
        data.len()
    ));
    replica.pending.lock().extend_from_slice(&data);
    // Registered under the backlog's lock: no byte of the stream is missed or doubled.
    r.replicas.lock().push(replica.clone());
    drop(b);
    let line = if hs.psync2 {
        format!("+CONTINUE {}\r\n", ids.replid).into_bytes()
    } else {
        b"+CONTINUE\r\n".to_vec()
    };
    Some(Attach::Continue { replica, line })
}

/// The replica's RDB was sent: it follows the stream now.
pub fn online(state: &ServerState, replica: &Replica) {
    replica.set_state(LinkState::Online);
    replica
        .ack_time_ms
        .store(state.clock.now_ms(), Ordering::Relaxed);
    crate::log::notice(&format!(
        "Synchronization with replica {}:{} succeeded",
        replica.ip, replica.port
    ));
}

/// The replica's connection closed.
pub fn detach(state: &ServerState, replica: &Arc<Replica>) {
    state
        .replication
        .replicas
        .lock()
        .retain(|r| !Arc::ptr_eq(r, replica));
    crate::log::notice(&format!(
        "Connection with replica {}:{} lost.",
        replica.ip, replica.port
    ));
}

/// REPLCONF ACK offset from a replica: remember it (the caller then answers the WAITs it
/// satisfies: `blocking::serve_replica_waits`).
pub fn ack(state: &ServerState, replica: &Replica, offset: i64) {
    if offset > replica.ack_offset.load(Ordering::Relaxed) {
        replica.ack_offset.store(offset, Ordering::Relaxed);
    }
    replica
        .ack_time_ms
        .store(state.clock.now_ms(), Ordering::Relaxed);
}

/// processCommand's checkGoodReplicasStatus: with min-replicas-to-write and
/// min-replicas-max-lag set, a write is refused (-NOREPLICAS) unless that many online
/// replicas acknowledged within that many seconds.
pub fn write_refused(state: &ServerState, writes: bool) -> Option<crate::error::RedisError> {
    if !writes {
        return None;
    }
    let (good, wanted) = good_replicas(state)?;
    (good < wanted).then(|| crate::error::RedisError::new(crate::error::NOREPLICAS))
}

/// With min-replicas-to-write and min-replicas-max-lag both set: the online replicas that
/// acknowledged within the lag (repl_good_slaves_count), and how many are wanted.
pub fn good_replicas(state: &ServerState) -> Option<(u64, u64)> {
    let r = &state.replication;
    let wanted = r.min_replicas[0].load(Ordering::Relaxed);
    let max_lag = r.min_replicas[1].load(Ordering::Relaxed) as i64;
    if wanted == 0 || max_lag == 0 {
        return None;
    }
    let now_s = state.clock.now_ms() / 1000;
    let good = r
        .replicas
        .lock()
        .iter()
        .filter(|x| {
            x.state() == LinkState::Online
                && now_s - x.ack_time_ms.load(Ordering::Relaxed) / 1000 <= max_lag
        })
        .count() as u64;
    Some((good, wanted))
}

/// processCommand's read-only replica check: on a replica with replica-read-only, a
/// client's write (`writes` says whether the command writes) is refused. The master's
/// stream never comes this way.
pub fn readonly_refused(
    state: &ServerState,
    writes: impl FnOnce() -> bool,
) -> Option<crate::error::RedisError> {
    if !readonly_replica(state) {
        return None;
    }
    writes().then(|| crate::error::RedisError::new(crate::error::READONLY_REPLICA))
}

/// A replica whose link is down and that serves no stale data (replica-serve-stale-data
/// no): commands without the `stale` flag are refused with MASTERDOWN.
pub fn serves_no_stale_data(state: &ServerState) -> bool {
    state.replication.is_replica()
        && state
            .replication
            .master
            .lock()
            .as_ref()
            .is_some_and(|l| l.status != registry::LinkStatus::Connected)
        && state
            .config
            .read()
            .get("replica-serve-stale-data")
            .is_some_and(|v| v == "no")
}

/// rememberSlaveKeyWithExpire: after a client's (not the master's) write on a replica, its
/// keys that now have a TTL are remembered, for [`expire_own_keys`].
pub fn remember_own_volatile(state: &ServerState, db: usize, cmd: &Command, args: &[Bytes]) {
    if crate::keyspace::expiry_ignored() {
        return;
    }
    let dbh = state.keyspace.db(db);
    for i in cmd.keys_in(args) {
        let Some(key) = args.get(i) else { continue };
        let volatile = dbh
            .lock(key)
            .map
            .get(&key[..])
            .is_some_and(|e| e.expires_at() != 0);
        if volatile {
            state
                .replication
                .own_volatile
                .lock()
                .insert((db, key.clone()));
        }
    }
}

/// expireSlaveKeys: a replica deletes the keys its own clients gave a TTL once it passed
/// (counted and announced as expired); the master's keys wait for the master's DEL. The
/// caller holds the server lock.
pub fn expire_own_keys(state: &ServerState, now: i64) {
    let keys: Vec<(usize, Bytes)> = {
        let set = state.replication.own_volatile.lock();
        if set.is_empty() {
            return;
        }
        set.iter().cloned().collect()
    };
    for (db, key) in keys {
        if db >= state.keyspace.databases() {
            state.replication.own_volatile.lock().remove(&(db, key));
            continue;
        }
        let (gone, expired) = {
            let mut shard = state.keyspace.db(db).lock(&key);
            match shard.map.get(&key[..]).map(|e| e.expires_at()) {
                None | Some(0) => (true, false),
                Some(at) if at <= now => {
                    // Removed as of the start of time, where nothing has expired yet.
                    shard.remove(&key, i64::MIN);
                    (true, true)
                }
                Some(_) => (false, false),
            }
        };
        if gone {
            state
                .replication
                .own_volatile
                .lock()
                .remove(&(db, key.clone()));
        }
        if expired {
            state
                .keyspace
                .report_expired(db, std::slice::from_ref(&key));
        }
    }
}

/// A replica that refuses its clients' writes (replica-read-only yes).
pub fn readonly_replica(state: &ServerState) -> bool {
    state.replication.is_replica()
        && state
            .config
            .read()
            .get("replica-read-only")
            .is_some_and(|v| v == "yes")
}

/// What INFO replication and ROLE show of one replica.
pub struct ReplicaView {
    /// Its address.
    pub ip: String,
    /// Its listening port.
    pub port: i64,
    /// wait_bgsave, send_bulk or online.
    pub state: &'static str,
    /// The offset it acknowledged.
    pub offset: i64,
    /// Seconds since its last acknowledgement.
    pub lag: i64,
}

/// The attached replicas, in attachment order.
pub fn replicas(state: &ServerState) -> Vec<ReplicaView> {
    let now = state.clock.now_ms();
    state
        .replication
        .replicas
        .lock()
        .iter()
        .map(|r| ReplicaView {
            ip: r.ip.clone(),
            port: r.port,
            state: r.state().name(),
            offset: r.ack_offset.load(Ordering::Relaxed),
            lag: (now / 1000 - r.ack_time_ms.load(Ordering::Relaxed) / 1000).max(0),
        })
        .collect()
}

/// The backlog's figures for INFO: (active, size, first byte offset, histlen, offset).
pub fn backlog_figures(state: &ServerState) -> (bool, usize, i64, usize, i64) {
    match state.replication.backlog.lock().as_ref() {
        Some(b) => (
            true,
            b.capacity(),
            b.first_offset(),
            b.histlen(),
            b.offset(),
        ),
        None => (false, backlog_size(state), 0, 0, 0),
    }
}

/// Replication buffer memory as Redis 7.0 counts its shared buffer (repl_buffer_mem):
/// (total, the backlog's part, the replicas' part). The backlog and every replica's
/// unsent bytes end at the stream's end, so together they span the longest of them.
pub fn buffer_memory(state: &ServerState) -> (usize, usize, usize) {
    let r = &state.replication;
    let (histlen, size) = r
        .backlog
        .lock()
        .as_ref()
        .map_or((0, 0), |b| (b.histlen(), b.capacity()));
    let replicas = r.replicas.lock();
    let pending = replicas
        .iter()
        .map(|x| x.pending.lock().len())
        .max()
        .unwrap_or(0);
    let total = histlen.max(pending);
    if !replicas.is_empty() && total > size {
        (total, size, total - size)
    } else {
        (total, total, 0)
    }
}

fn backlog_size(state: &ServerState) -> usize {
    registry::backlog_size(&state.config.read())
}

/// replicationGetSlaveName: `ip:port` once the replica said its port, else the peer.
fn replica_name(client: &Client, hs: &Handshake) -> String {
    let ip = hs.ip.clone().unwrap_or_else(|| peer_ip(&client.info.addr));
    if hs.port > 0 {
        format!("{ip}:{}", hs.port)
    } else {
        client.info.addr.clone()
    }
}

fn peer_ip(addr: &str) -> String {
    addr.rsplit_once(':')
        .map_or(addr, |(ip, _)| ip)
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string()
}
