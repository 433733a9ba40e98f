//! FAILOVER, as redis-server 7.0's failoverCommand, updateFailoverStatus and abortFailover:
//! the master pauses writes, waits until a replica (the one named by TO, or any) has
//! acknowledged the whole stream, then becomes that replica's replica and sends it
//! `PSYNC <replid> <offset> FAILOVER` (the link task, `link.rs`), which the replica answers
//! by becoming the master (`PSYNC`'s handler). The writes stay paused until the new master
//! accepted the PSYNC; a rejection, a TIMEOUT without FORCE, or FAILOVER ABORT end it with
//! this server a master again. The caller holds the server lock everywhere.

use crate::cmd::runtime::pause::{PauseKind, PausePurpose};
use crate::cmd::runtime::replication::registry::{Failover, FailoverState, LinkState};
use crate::cmd::runtime::replication::role;
use crate::cmd::runtime::state::ServerState;
use crate::error::{self, RedisError};
use std::sync::atomic::Ordering;

/// INFO's master_failover_state.
pub fn state_name(state: &ServerState) -> &'static str {
    match state.replication.failover.lock().state {
        FailoverState::None => "no-failover",
        FailoverState::WaitForSync => "waiting-for-sync",
        FailoverState::InProgress => "failover-in-progress",
    }
}

/// A FAILOVER runs (REPLICAOF and SYNC are refused meanwhile).
pub fn running(state: &ServerState) -> bool {
    state.replication.failing_over.load(Ordering::Acquire)
}

/// FAILOVER [TO host port [FORCE]] [TIMEOUT ms], its arguments parsed: the checks in
/// Redis's order, then the wait starts with writes paused.
pub fn start(
    state: &ServerState,
    target: Option<(String, i64)>,
    timeout_ms: i64,
    force: bool,
) -> Result<(), RedisError> {
    let r = &state.replication;
    if running(state) {
        return Err(RedisError::new(error::FAILOVER_IN_PROGRESS));
    }
    if r.is_replica() {
        return Err(RedisError::new(error::FAILOVER_ON_REPLICA));
    }
    if r.replicas.lock().is_empty() {
        return Err(RedisError::new(error::FAILOVER_NO_REPLICAS));
    }
    if force && (timeout_ms == 0 || target.is_none()) {
        return Err(RedisError::new(error::FAILOVER_FORCE_ARGS));
    }
    let mut f = Failover::default();
    if let Some((host, port)) = target {
        let Some(online) = find_replica(state, &host, port) else {
            return Err(RedisError::new(error::FAILOVER_NOT_A_REPLICA));
        };
        if !online {
            return Err(RedisError::new(error::FAILOVER_NOT_ONLINE));
        }
        crate::log::notice(&format!("FAILOVER requested to {host}:{port}."));
        // findReplica matched a replica's listening port, which is a u16.
        f.target = Some((host, port as u16));
    } else {
        crate::log::notice("FAILOVER requested to any replica.");
    }
    if timeout_ms != 0 {
        f.end_ms = state.clock.now_ms().saturating_add(timeout_ms);
    }
    f.force = force;
    f.state = FailoverState::WaitForSync;
    *r.failover.lock() = f;
    r.failing_over.store(true, Ordering::Release);
    state
        .pause
        .pause_for(PausePurpose::Failover, PauseKind::Write, i64::MAX);
    Ok(())
}

/// findReplica: the attached replica known by `host` (its announced or peer address, case
/// insensitively) and listening `port`; Some(whether it is online).
fn find_replica(state: &ServerState, host: &str, port: i64) -> Option<bool> {
    state
        .replication
        .replicas
        .lock()
        .iter()
        .find(|r| r.ip.eq_ignore_ascii_case(host) && r.port == port)
        .map(|r| r.state() == LinkState::Online)
}

/// abortFailover (`role.rs` keeps it with the role changes it makes).
pub fn abort(state: &ServerState, why: &str) {
    role::abort_failover(state, why);
}

/// updateFailoverStatus, after replicas' acknowledgements and every 100 ms while waiting:
/// the timeout (FORCE fails over anyway, else the failover is aborted), then whether the
/// target (or any replica) acknowledged the whole stream, in which case this server
/// follows it and its link asks it to take over.
pub fn update(state: &ServerState) {
    if !running(state) {
        return;
    }
    let f = state.replication.failover.lock().clone();
    if f.state != FailoverState::WaitForSync {
        return;
    }
    let now = state.clock.now_ms();
    if f.end_ms != 0 && f.end_ms <= now {
        if f.force {
            if let Some((host, port)) = &f.target {
                crate::log::notice(&format!(
                    "FAILOVER to {host}:{port} time out exceeded, failing over."
                ));
                state.replication.failover.lock().state = FailoverState::InProgress;
                role::set_master(state, host, *port);
                return;
            }
        }
        abort(state, "Replica never caught up before timeout");
        return;
    }
    let offset = state.replication.offset();
    let caught_up = {
        let replicas = state.replication.replicas.lock();
        match &f.target {
            Some((host, port)) => replicas
                .iter()
                .find(|r| r.ip.eq_ignore_ascii_case(host) && r.port == i64::from(*port))
                .filter(|r| r.ack_offset.load(Ordering::Relaxed) == offset)
                .map(|_| (host.clone(), *port)),
            None => replicas
                .iter()
                .find(|r| r.ack_offset.load(Ordering::Relaxed) == offset)
                .map(|r| (r.ip.clone(), r.port.clamp(0, 65535) as u16)),
        }
    };
    let Some((host, port)) = caught_up else {
        return;
    };
    {
        let mut f = state.replication.failover.lock();
        f.state = FailoverState::InProgress;
        f.target = Some((host.clone(), port));
    }
    crate::log::notice(&format!(
        "Failover target {host}:{port} is synced, failing over."
    ));
    role::set_master(state, &host, port);
}
