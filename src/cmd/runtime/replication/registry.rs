//! What the server keeps as a replication master: its replication id, the stream's history
//! (the backlog, created when the first replica attaches), the attached replicas with the
//! stream bytes each still has to receive, and the clients blocked in WAIT.

use crate::cmd::runtime::client::ClientInfo;
use crate::repl::backlog::Backlog;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

/// What a would-be replica told the master before (and with) its SYNC or PSYNC.
#[derive(Clone, Debug, Default)]
pub struct Handshake {
    /// REPLCONF listening-port.
    pub port: i64,
    /// REPLCONF ip-address.
    pub ip: Option<String>,
    /// REPLCONF capa psync2: it understands `+CONTINUE <replid>`.
    pub psync2: bool,
    /// Set by SYNC/PSYNC: the request the connection turns into a replica link. None in
    /// `psync` is the old protocol (SYNC).
    pub sync: Option<SyncRequest>,
}

/// A SYNC (`psync` None) or PSYNC replid offset.
#[derive(Clone, Debug)]
pub struct SyncRequest {
    /// PSYNC's replication id and offset.
    pub psync: Option<(Bytes, i64)>,
}

/// A replica's place in its synchronization (Redis's SLAVE_STATE_*), as INFO prints it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LinkState {
    /// Waiting for a snapshot to start (another capture runs).
    WaitBgsave = 0,
    /// The RDB is being produced or sent.
    SendBulk = 1,
    /// Following the stream.
    Online = 2,
}

impl LinkState {
    /// INFO replication's word for it.
    pub fn name(self) -> &'static str {
        match self {
            LinkState::WaitBgsave => "wait_bgsave",
            LinkState::SendBulk => "send_bulk",
            LinkState::Online => "online",
        }
    }
}

/// One attached replica: the stream bytes waiting for its connection, and what it
/// acknowledged. Producers (commands, under the server lock) append and ring `wake`; the
/// replica's connection task takes and writes them. The bytes are bounded by
/// client-output-buffer-limit's replica class: past it the replica is disconnected.
pub struct Replica {
    /// The client id of the replica's connection.
    pub id: u64,
    /// The connection's client (its `kill` closes the link).
    pub info: Arc<ClientInfo>,
    /// The address it is known by (REPLCONF ip-address, else its peer address).
    pub ip: String,
    /// REPLCONF listening-port.
    pub port: i64,
    /// Its [`LinkState`].
    state: AtomicU8,
    /// The last offset it acknowledged (REPLCONF ACK).
    pub ack_offset: AtomicI64,
    /// Server clock (ms) of its last acknowledgement (INFO's lag).
    pub ack_time_ms: AtomicI64,
    /// Stream bytes not yet written to it.
    pub pending: Mutex<Vec<u8>>,
    /// Rung when `pending` gains bytes or the link must close.
    pub wake: Notify,
    /// Server clock (ms) when `pending` first went over the soft limit (0: not over).
    soft_since: AtomicI64,
    /// Spoke the old protocol (SYNC): acknowledges nothing.
    pub pre_psync: bool,
}

impl Replica {
    /// A replica about to be served, in `state`.
    pub fn new(
        id: u64,
        info: Arc<ClientInfo>,
        ip: String,
        port: i64,
        state: LinkState,
        now_ms: i64,
        pre_psync: bool,
    ) -> Replica {
        info.extra.replica.store(true, Ordering::Relaxed);
        Replica {
            id,
            info,
            ip,
            port,
            state: AtomicU8::new(state as u8),
            ack_offset: AtomicI64::new(0),
            ack_time_ms: AtomicI64::new(now_ms),
            pending: Mutex::new(Vec::new()),
            wake: Notify::new(),
            soft_since: AtomicI64::new(0),
            pre_psync,
        }
    }

    /// Where it is in its synchronization.
    pub fn state(&self) -> LinkState {
        match self.state.load(Ordering::Acquire) {
            0 => LinkState::WaitBgsave,
            1 => LinkState::SendBulk,
            _ => LinkState::Online,
        }
    }

    /// Move it along its synchronization.
    pub fn set_state(&self, s: LinkState) {
        self.state.store(s as u8, Ordering::Release);
    }

    /// Append stream bytes; false if that took it past its output-buffer limit (`hard`,
    /// or `soft` for longer than `soft_secs`), when it must be disconnected.
    pub fn append(&self, bytes: &[u8], limits: (u64, u64, u64), now_ms: i64) -> bool {
        let len = {
            let mut p = self.pending.lock();
            p.extend_from_slice(bytes);
            p.len() as u64
        };
        self.wake.notify_one();
        let (hard, soft, soft_secs) = limits;
        if hard > 0 && len >= hard {
            return false;
        }
        if soft > 0 && len >= soft {
            let since = self.soft_since.load(Ordering::Relaxed);
            if since == 0 {
                self.soft_since.store(now_ms.max(1), Ordering::Relaxed);
            } else if (now_ms - since) / 1000 > soft_secs as i64 {
                return false;
            }
        } else {
            self.soft_since.store(0, Ordering::Relaxed);
        }
        true
    }
}

/// The replication ids: the current history's, and the one it continues (after a replica
/// was promoted, or its master changed history), valid up to `second_offset`.
#[derive(Clone, Debug)]
pub struct Ids {
    /// master_replid.
    pub replid: String,
    /// master_replid2 (forty zeros when there is none).
    pub replid2: String,
    /// second_repl_offset: the first offset not shared with `replid2`'s history (-1: none).
    pub second_offset: i64,
}

/// Where a replica's link to its master is (Redis's repl_state), as ROLE words it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkStatus {
    /// Waiting to connect (the next attempt comes within a second).
    Connect,
    /// Connecting.
    Connecting,
    /// Connected, in the handshake (PING, AUTH, REPLCONF, PSYNC).
    Handshake,
    /// Receiving the RDB of a full resynchronization.
    Sync,
    /// Following the master's stream.
    Connected,
}

impl LinkStatus {
    /// ROLE's word for it.
    pub fn name(self) -> &'static str {
        match self {
            LinkStatus::Connect => "connect",
            LinkStatus::Connecting => "connecting",
            LinkStatus::Handshake => "handshake",
            LinkStatus::Sync => "sync",
            LinkStatus::Connected => "connected",
        }
    }
}

/// The master this server replicates (REPLICAOF host port) and its link's state.
#[derive(Clone, Debug)]
pub struct MasterLink {
    /// masterhost.
    pub host: String,
    /// masterport.
    pub port: u16,
    /// Bumped by every REPLICAOF: a link task whose generation is no longer current ends.
    pub generation: u64,
    /// The link's state.
    pub status: LinkStatus,
    /// Server clock (ms) of the last bytes read from the master (0: none yet).
    pub last_io_ms: i64,
    /// The master's stream offset read so far (slave_read_repl_offset; -1 before a sync).
    pub read_offset: i64,
    /// The link is connected and a master client exists (ROLE's offset, INFO's last io).
    pub has_master: bool,
    /// Server clock (s) when the link went down (0: never up since REPLICAOF).
    pub down_since_s: i64,
    /// Ends the running link task at once (REPLICAOF NO ONE or another master).
    pub cancel: tokio_util::sync::CancellationToken,
}

/// Where a FAILOVER is (Redis's failover_state), as INFO's master_failover_state words it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailoverState {
    /// None runs.
    #[default]
    None,
    /// Writes are paused until a replica acknowledged the whole stream.
    WaitForSync,
    /// This server follows the target and asks it, with PSYNC ... FAILOVER, to take over.
    InProgress,
}

/// A FAILOVER's parameters (server.target_replica_host and the rest).
#[derive(Clone, Debug, Default)]
pub struct Failover {
    /// Its state.
    pub state: FailoverState,
    /// The replica it fails over to: named by TO, or the first one found caught up.
    pub target: Option<(String, u16)>,
    /// Server clock (ms) when waiting ends (0: TIMEOUT not given).
    pub end_ms: i64,
    /// FORCE: at the end of the wait, fail over even to a replica that did not catch up.
    pub force: bool,
}

/// Replication's state.
pub struct Replication {
    /// The replication ids.
    pub ids: Mutex<Ids>,
    /// The master this server replicates, None for a master.
    pub master: Mutex<Option<MasterLink>>,
    /// `master` is Some: one atomic load on the write and expiry paths.
    replica: std::sync::atomic::AtomicBool,
    /// Keys a writable replica's own clients gave a TTL (Redis's slaveKeysWithExpire): the
    /// master never deletes them, so the replica expires them itself.
    pub own_volatile: Mutex<std::collections::HashSet<(usize, Bytes)>>,
    /// The runtime the server runs on, for REPLICAOF to start its link task from any thread.
    pub runtime: std::sync::OnceLock<tokio::runtime::Handle>,
    /// The stream's history; None until a replica first attaches (Redis creates the
    /// backlog then too).
    pub backlog: Mutex<Option<Backlog>>,
    /// The database the stream last selected (a SELECT goes out on a change); None after a
    /// full resynchronization starts, so the next command selects again.
    pub stream_db: Mutex<Option<usize>>,
    /// The attached replicas, in the order they attached.
    pub replicas: Mutex<Vec<Arc<Replica>>>,
    /// Clients blocked in WAIT: client id -> (the offset to be acknowledged, replicas
    /// wanted).
    pub waits: Mutex<HashMap<u64, (i64, i64)>>,
    /// Replicas fed in process rather than by the stream (an in-process cluster node's
    /// replicas, following its feed): how many of them applied up to an offset of that
    /// feed. Counted by WAIT with the stream's replicas.
    pub in_process: std::sync::OnceLock<InProcessAcks>,
    /// client-output-buffer-limit's replica class (hard, soft, soft seconds), refreshed on
    /// every configuration change so the write path reads no configuration.
    limits: [AtomicU64; 3],
    /// min-replicas-to-write and min-replicas-max-lag, refreshed with `limits`.
    pub min_replicas: [AtomicU64; 2],
    /// The FAILOVER running, if any.
    pub failover: Mutex<Failover>,
    /// `failover`'s state is not None: one atomic load for the cron and the ACK path.
    pub failing_over: std::sync::atomic::AtomicBool,
    /// master_repl_offset while there is no backlog (a replica that loaded its history
    /// from its RDB file keeps it here until its master lets it continue).
    pub base_offset: AtomicI64,
    /// A replica PSYNCs with its own history (Redis's cached master: it was a master, or
    /// synchronized, or loaded its history from its RDB); false asks `PSYNC ? -1`.
    pub has_history: std::sync::atomic::AtomicBool,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            ids: Mutex::new(Ids {
                replid: crate::repl::backlog::new_replid(),
                replid2: NO_REPLID.to_string(),
                second_offset: -1,
            }),
            master: Mutex::new(None),
            replica: Default::default(),
            own_volatile: Default::default(),
            runtime: std::sync::OnceLock::new(),
            backlog: Mutex::new(None),
            stream_db: Mutex::new(None),
            replicas: Mutex::new(Vec::new()),
            waits: Mutex::new(HashMap::new()),
            in_process: std::sync::OnceLock::new(),
            limits: Default::default(),
            min_replicas: Default::default(),
            failover: Mutex::new(Failover::default()),
            failing_over: Default::default(),
            base_offset: AtomicI64::new(0),
            has_history: std::sync::atomic::AtomicBool::new(true),
        }
    }
}

/// How many replicas fed in process applied up to an offset (see [`Replication::in_process`]).
pub type InProcessAcks = Box<dyn Fn(i64) -> i64 + Send + Sync>;

/// A replication id that names no history (master_replid2 when there is none).
pub const NO_REPLID: &str = "0000000000000000000000000000000000000000";

impl Replication {
    /// master_replid.
    pub fn replid(&self) -> String {
        self.ids.lock().replid.clone()
    }

    /// This server replicates a master (REPLICAOF host port is in effect).
    #[inline]
    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Acquire)
    }

    /// Set or clear the master (the caller holds the server lock).
    pub fn set_master(&self, m: Option<MasterLink>) {
        let mut cur = self.master.lock();
        if let Some(old) = cur.as_ref() {
            old.cancel.cancel();
        }
        self.replica.store(m.is_some(), Ordering::Release);
        *cur = m;
    }

    /// Run `f` on the master link's state if `generation` is still the current one.
    pub fn with_link<T>(&self, generation: u64, f: impl FnOnce(&mut MasterLink) -> T) -> Option<T> {
        let mut m = self.master.lock();
        match m.as_mut() {
            Some(l) if l.generation == generation => Some(f(l)),
            _ => None,
        }
    }

    /// Append bytes of the replication stream to the backlog and to every attached replica
    /// (a replica over its output-buffer limit is scheduled to close). Without a backlog
    /// nothing is produced.
    pub fn push_stream(&self, out: &[u8], now_ms: i64) {
        let mut backlog = self.backlog.lock();
        let Some(b) = backlog.as_mut() else {
            return;
        };
        b.append(out);
        let replicas = self.replicas.lock();
        let limits = self.limits();
        for rep in replicas.iter() {
            if !rep.append(out, limits, now_ms) && !rep.info.kill.is_cancelled() {
                crate::log::warning(&format!(
                    "Client id={} addr={} laddr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                    rep.id, rep.info.addr, rep.info.laddr
                ));
                rep.info.kill.cancel();
                rep.wake.notify_one();
            }
        }
    }

    /// disconnectSlaves: close every attached replica's link (they reconnect and resync,
    /// partially when they can).
    pub fn disconnect_replicas(&self) {
        for rep in self.replicas.lock().iter() {
            rep.info.kill.cancel();
            rep.wake.notify_one();
        }
    }

    /// Copy the replica output-buffer limit out of `config`.
    pub fn refresh(&self, config: &crate::config::Config) {
        let (h, s, secs) = config.output_buffer_limit("slave");
        self.limits[0].store(h, Ordering::Relaxed);
        self.limits[1].store(s, Ordering::Relaxed);
        self.limits[2].store(secs, Ordering::Relaxed);
        let get = |k: &str| config.get(k).and_then(|v| v.parse().ok()).unwrap_or(0);
        self.min_replicas[0].store(get("min-replicas-to-write"), Ordering::Relaxed);
        self.min_replicas[1].store(get("min-replicas-max-lag"), Ordering::Relaxed);
        // CONFIG SET repl-backlog-size: the backlog keeps what fits.
        let size = backlog_size(config);
        if let Some(b) = self.backlog.lock().as_mut() {
            if b.capacity() != size {
                b.resize(size);
            }
        }
    }

    /// Whether the stream is produced (a replica attached once: the backlog exists), so
    /// propagation runs even without the AOF.
    pub fn has_backlog(&self) -> bool {
        self.backlog.lock().is_some()
    }

    /// replicationCountAcksByOffset: online replicas that acknowledged `offset` (with those
    /// fed in process, see [`Replication::in_process`]).
    pub fn acked(&self, offset: i64) -> i64 {
        let streamed = self
            .replicas
            .lock()
            .iter()
            .filter(|r| {
                r.state() == LinkState::Online && r.ack_offset.load(Ordering::Relaxed) >= offset
            })
            .count() as i64;
        streamed + self.in_process.get().map_or(0, |count| count(offset))
    }

    /// A WAIT about to block: what it waits for, kept until it is answered.
    pub fn wait_registered(&self, client_id: u64, offset: i64, numreplicas: i64) {
        self.waits.lock().insert(client_id, (offset, numreplicas));
    }

    /// processClientsWaitingReplicas's test: the WAITs whose replicas acknowledged enough,
    /// removed, with the count each answers.
    pub fn satisfied_waits(&self) -> Vec<(u64, i64)> {
        let mut waits = self.waits.lock();
        let done: Vec<(u64, i64)> = waits
            .iter()
            .filter_map(|(id, (offset, wanted))| {
                let n = self.acked(*offset);
                (n >= *wanted).then_some((*id, n))
            })
            .collect();
        for (id, _) in &done {
            waits.remove(id);
        }
        done
    }

    /// A WAIT ends (timeout, CLIENT UNBLOCK, the client left): the replicas that
    /// acknowledged its offset by now.
    pub fn wait_ended(&self, client_id: u64) -> i64 {
        let w = self.waits.lock().remove(&client_id);
        w.map_or(0, |(offset, _)| self.acked(offset))
    }

    /// The replica output-buffer limit: (hard, soft, soft seconds).
    pub fn limits(&self) -> (u64, u64, u64) {
        (
            self.limits[0].load(Ordering::Relaxed),
            self.limits[1].load(Ordering::Relaxed),
            self.limits[2].load(Ordering::Relaxed),
        )
    }

    /// rdbPopulateSaveInfo: the replication history a saved file carries (aux fields
    /// repl-stream-db, repl-id, repl-offset), so that after a restart from it this server's
    /// replicas, or its master, continue with a partial resynchronization. A master has one
    /// once its backlog exists; a replica once it has a history to PSYNC with. Called under
    /// the server lock, so the offset matches the dataset the snapshot captures.
    pub fn save_info(&self) -> Option<crate::rdb::file::ReplAux> {
        let has = if self.is_replica() {
            self.has_history.load(Ordering::Relaxed)
        } else {
            self.has_backlog()
        };
        if !has {
            return None;
        }
        Some(crate::rdb::file::ReplAux {
            stream_db: self.stream_db.lock().unwrap_or(0) as i64,
            id: self.replid(),
            offset: self.offset(),
        })
    }

    /// The history an RDB file loaded at start carried (loadDataFromDisk): a replica
    /// (`master` false) takes it as its own, to PSYNC its master from there; a master keeps
    /// it as its second id with a backlog of `backlog_size` going on from its offset, so its
    /// former replicas continue. A file without it (or with an invalid -1 stream db) leaves
    /// everything as it was. True when the master's backlog was created (the stream must be
    /// produced from now on).
    pub fn restore_history(
        &self,
        id: &str,
        offset: i64,
        stream_db: i64,
        master: bool,
        backlog_size: usize,
    ) -> bool {
        if id.len() != 40 || offset < 0 || stream_db < 0 {
            // No history to continue: what `start_history` began goes (Redis frees the
            // backlog when the file's replication info is not valid).
            if master {
                self.drop_history();
            }
            return false;
        }
        if !master {
            self.ids.lock().replid = id.to_string();
            self.base_offset.store(offset, Ordering::Relaxed);
            self.has_history.store(true, Ordering::Relaxed);
            *self.stream_db.lock() = Some(stream_db as usize);
            return false;
        }
        {
            let mut ids = self.ids.lock();
            ids.replid2 = id.to_string();
            ids.second_offset = offset + 1;
        }
        // The DELs fed while loading (`start_history`) come right after the file's offset.
        let mut backlog = self.backlog.lock();
        match backlog.as_mut() {
            Some(b) => b.rebase(offset),
            None => *backlog = Some(Backlog::new(backlog_size, offset)),
        }
        true
    }

    /// A master about to load its RDB file at start: an empty history from offset 0, so the
    /// DELs of keys dropped as expired have a stream to go to (createReplicationBacklog
    /// before rdbLoad); [`Replication::restore_history`] continues it from the file's
    /// offset, or it is dropped.
    pub fn start_history(&self, backlog_size: usize) {
        *self.backlog.lock() = Some(Backlog::new(backlog_size, 0));
        *self.stream_db.lock() = None;
    }

    /// Forget a history begun by [`Replication::start_history`] that nothing continues
    /// (no file, or one without replication info): replicas that come resynchronize fully.
    pub fn drop_history(&self) {
        *self.backlog.lock() = None;
        *self.stream_db.lock() = None;
    }

    /// master_repl_offset.
    pub fn offset(&self) -> i64 {
        self.backlog
            .lock()
            .as_ref()
            .map_or_else(|| self.base_offset.load(Ordering::Relaxed), |b| b.offset())
    }
}

/// repl-backlog-size, at least Redis's minimum (CONFIG_REPL_BACKLOG_MIN_SIZE, 16 KB).
pub fn backlog_size(config: &crate::config::Config) -> usize {
    config
        .get("repl-backlog-size")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1 << 20)
        .max(16 * 1024)
}
