//! A server's role, as replicationSetMaster and replicationUnsetMaster change it: REPLICAOF
//! host port (or `replicaof` in the configuration) makes it a replica whose link task
//! (`link.rs`) follows that master; REPLICAOF NO ONE promotes it, keeping its data and its
//! history (the master's replication id becomes its second id, so its own replicas and
//! the old master's other replicas continue with a partial resynchronization).

use crate::cmd::runtime::pause::registry::PausePurpose;
use crate::cmd::runtime::replication::registry::{Failover, FailoverState, LinkStatus, MasterLink};
use crate::cmd::runtime::state::ServerState;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// REPLICAOF generations: each new master gets a link task of its own.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// replicationSetMaster: follow `host`:`port` from now on (a link task connects within a
/// second). The caller holds the server lock.
pub fn set_master(state: &ServerState, host: &str, port: u16) {
    let r = &state.replication;
    let was_master = !r.is_replica();
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    r.set_master(Some(MasterLink {
        host: host.to_string(),
        port,
        generation,
        status: LinkStatus::Connect,
        last_io_ms: 0,
        read_offset: -1,
        has_master: false,
        down_since_s: 0,
        cancel: tokio_util::sync::CancellationToken::new(),
    }));
    state.config.write().set_replicaof(Some((host, port)));
    crate::cmd::runtime::oom::apply_after_role_change(&state.config.read());
    // Clients blocked on the master it was (or on the old master's data) are told.
    crate::cmd::runtime::blocking::disconnect_all(state);
    // Our replicas stay: they follow the new master's stream through us if it lets us
    // continue our history, and are disconnected (to resync) when it changes it.
    if was_master {
        // replicationCacheMasterUsingMyself: we PSYNC with our own history.
        r.has_history.store(true, Ordering::Relaxed);
        // A master's writes stop at once; the history it had stays ours to PSYNC with.
        *r.stream_db.lock() = None;
    }
    let server = state.persist.server.get().and_then(|w| w.upgrade());
    let rt = r
        .runtime
        .get()
        .cloned()
        .or_else(|| tokio::runtime::Handle::try_current().ok());
    if let (Some(rt), Some(server)) = (rt, server) {
        rt.spawn(crate::cmd::runtime::replication::link::run(
            server, generation,
        ));
    }
}

/// replicationUnsetMaster: become a master again, keeping the data; the master's history
/// becomes the second id (up to this offset), and a new history starts. The caller holds
/// the server lock.
pub fn unset_master(state: &ServerState) {
    let r = &state.replication;
    if !r.is_replica() {
        return;
    }
    r.set_master(None);
    state.config.write().set_replicaof(None);
    crate::cmd::runtime::oom::apply_after_role_change(&state.config.read());
    let offset = r.offset();
    {
        let mut ids = r.ids.lock();
        ids.replid2 = std::mem::replace(&mut ids.replid, crate::repl::backlog::new_replid());
        ids.second_offset = offset + 1;
        crate::log::notice(&format!(
            "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID is {}",
            ids.replid2, ids.second_offset, ids.replid
        ));
    }
    r.disconnect_replicas();
    // The new master's stream starts with a SELECT.
    *r.stream_db.lock() = None;
}

/// The `replicaof` of the configuration, acted on as the server starts.
pub fn start_from_config(state: &Arc<ServerState>) {
    // A server built outside a runtime (the fuzz harness, testkit) has none to remember.
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        let _ = state.replication.runtime.set(rt);
    }
    if state.cluster.is_some() {
        return;
    }
    let Some(v) = state
        .config
        .read()
        .get("replicaof")
        .filter(|v| !v.is_empty())
    else {
        return;
    };
    let Some((host, port)) = v.rsplit_once(' ') else {
        return;
    };
    let Ok(port) = port.parse::<u16>() else {
        return;
    };
    set_master(state, host.trim_matches('"'), port);
    // Configured, not turned from a master: no history to PSYNC with unless the RDB file
    // loaded next carries one (its link waits for the load).
    state
        .replication
        .has_history
        .store(false, Ordering::Relaxed);
}

/// ROLE's and INFO's view of a replica's link: (host, port, status, has a master client,
/// seconds since the master's last bytes, link down since (s, 0: never up), bytes read).
pub struct LinkView {
    /// masterhost.
    pub host: String,
    /// masterport.
    pub port: u16,
    /// repl_state.
    pub status: LinkStatus,
    /// The link is up with a master client (server.master).
    pub has_master: bool,
    /// Server clock (ms) of the last read from the master.
    pub last_io_ms: i64,
    /// Server clock (s) when the link went down (0: never up).
    pub down_since_s: i64,
    /// The master's offset read so far (slave_read_repl_offset).
    pub read_offset: i64,
}

/// The replica's link, None on a master.
pub fn link(state: &ServerState) -> Option<LinkView> {
    state.replication.master.lock().as_ref().map(|l| LinkView {
        host: l.host.clone(),
        port: l.port,
        status: l.status,
        has_master: l.has_master,
        last_io_ms: l.last_io_ms,
        down_since_s: l.down_since_s,
        read_offset: l.read_offset,
    })
}

/// The FAILOVER is past waiting: this server follows the target and its link's PSYNC
/// carries FAILOVER.
pub fn failing_over_to_master(state: &ServerState) -> bool {
    state.replication.failing_over.load(Ordering::Acquire)
        && state.replication.failover.lock().state == FailoverState::InProgress
}

/// clearFailoverState: no failover any more; the writes it held go on.
pub fn clear_failover(state: &ServerState) {
    *state.replication.failover.lock() = Failover::default();
    state
        .replication
        .failing_over
        .store(false, Ordering::Release);
    state.pause.unpause_for(PausePurpose::Failover);
}

/// abortFailover: log why, become a master again if this server already followed the
/// target, and clear the failover. Nothing when none runs. The caller holds the server lock.
pub fn abort_failover(state: &ServerState, why: &str) {
    if !state.replication.failing_over.load(Ordering::Acquire) {
        return;
    }
    let f = state.replication.failover.lock().clone();
    match &f.target {
        Some((h, p)) => crate::log::notice(&format!("FAILOVER to {h}:{p} aborted: {why}")),
        None => crate::log::notice(&format!("FAILOVER to any replica aborted: {why}")),
    }
    if f.state == FailoverState::InProgress {
        unset_master(state);
    }
    clear_failover(state);
}

/// The target answered the link's PSYNC ... FAILOVER: accepted (+CONTINUE or +FULLRESYNC)
/// ends the failover with this server its replica; anything else aborts it. The caller
/// holds the server lock.
pub fn failover_psync_answered(state: &ServerState, accepted: bool) {
    if !failing_over_to_master(state) {
        return;
    }
    if accepted {
        clear_failover(state);
    } else {
        abort_failover(state, "Failover target rejected psync request");
    }
}
