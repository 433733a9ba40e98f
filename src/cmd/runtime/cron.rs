//! Background work on the server's state, as Redis's serverCron does it: active expiry, the
//! idle-client timeout (and MIGRATE's idle connections), a master's replication PING, and a
//! FAILOVER's progress. The
//! server layer spawns
//! [`run`].

use crate::cmd::runtime::state::ServerState;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Run the background cycles until the server shuts down.
pub async fn run(state: Arc<ServerState>) {
    tokio::join!(
        active_expiry(state.clone()),
        replication_ping(state.clone()),
        failover(state.clone()),
        idle_clients(state.clone()),
        output_limits(state.clone()),
        restart_delay(state.clone()),
        persistence(state)
    );
}

/// serverCron's persistence part, `hz` times a second: a shutdown a signal asked for, or
/// one waiting for replicas, goes on (`shutdown::cron`); a scheduled BGSAVE or a `save` point
/// reached starts a background save, a scheduled or due AOF rewrite starts one. Starting
/// takes the server lock (a snapshot begins with no command running).
async fn persistence(state: Arc<ServerState>) {
    use crate::cmd::runtime::persist::{aof, save};
    loop {
        let hz = u64::from(state.config.read().hz.clamp(1, 500));
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(1000 / hz)) => {}
        }
        if state.cron_paused.load(Ordering::Relaxed) {
            continue;
        }
        if crate::cmd::runtime::shutdown::pending(&state) {
            // The final save may take long: the worker's other tasks move meanwhile.
            loop {
                if let Some(guard) = state.lock.lock_briefly() {
                    crate::cmd::runtime::handoff::blocking(|| {
                        crate::cmd::runtime::shutdown::cron(&state)
                    });
                    drop(guard);
                    break;
                }
                state.lock.released().await;
            }
            if state.shutdown.is_cancelled() {
                return;
            }
        }
        let rdb = save::due(&state);
        let rewrite = rdb.is_none() && aof::due(&state);
        if rdb.is_none() && !rewrite {
            continue;
        }
        loop {
            if let Some(guard) = state.lock.lock_briefly() {
                match rdb {
                    Some(d) => save::start_due(&state, d),
                    None => {
                        let _ = aof::rewrite::rewrite_background(&state);
                    }
                }
                drop(guard);
                break;
            }
            state.lock.released().await;
        }
    }
}

/// Once a second: Redis's replicationCron PING (every repl-ping-replica-period seconds a
/// master with replicas puts a PING in the stream, which moves the replication offset, so
/// replicas of an idle master see it alive; a cluster node's goes through the cluster's
/// feed) and, on a cluster node, clientsCron's redirection of clients blocked on a slot the
/// node no longer serves.
async fn replication_ping(state: Arc<ServerState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut loops: u64 = 0;
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let period = state
            .config
            .read()
            .get("repl-ping-replica-period")
            .and_then(|p| p.parse::<u64>().ok())
            .unwrap_or(10)
            .max(1);
        // Not on the first tick: Redis's first replicationCron runs as the server starts,
        // before any replica can have attached, so its first PING comes a period later;
        // ours may run late on a loaded machine, after a replica attached.
        if loops > 0 && loops.is_multiple_of(period) {
            if state.cluster.is_some() {
                crate::cmd::runtime::cluster::feed::ping(&state);
            } else if !state.replication.replicas.lock().is_empty() {
                // The stream's PING goes in order with the commands: under the lock.
                loop {
                    if let Some(held) = state.lock.lock_briefly() {
                        crate::cmd::runtime::replication::ping(&state);
                        drop(held);
                        break;
                    }
                    tokio::select! {
                        _ = state.shutdown.cancelled() => return,
                        _ = state.lock.released() => {}
                    }
                }
            }
        }
        loops += 1;
        if state.cluster.is_none() {
            continue;
        }
        // Clients blocked on a slot this node stopped serving are redirected.
        if state.blocking.any() {
            if let Some(held) = state.lock.lock_briefly() {
                crate::cmd::runtime::cluster::hooks::redirect_blocked(&state);
                drop(held);
            }
        }
    }
}

/// A FAILOVER's progress, every 100 ms while one waits (replicationCron runs that often
/// then): its timeout, or a replica that caught up without a new acknowledgement.
async fn failover(state: Arc<ServerState>) {
    use crate::cmd::runtime::replication::failover;
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        if !failover::running(&state) {
            continue;
        }
        if let Some(held) = state.lock.lock_briefly() {
            failover::update(&state);
            drop(held);
        }
    }
}

/// stop-writes-after-restart: the end of the delay after a start, looked for ten times a
/// second, brings `auto`'s file down to what this run gave (under the server lock, so no
/// command gives a TTL meanwhile).
async fn restart_delay(state: Arc<ServerState>) {
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        if !state.restart_delay.due(state.clock.now_ms()) {
            continue;
        }
        loop {
            if let Some(guard) = state.lock.lock_briefly() {
                crate::cmd::runtime::handoff::blocking(|| {
                    state.restart_delay.end_if_over(state.clock.now_ms())
                });
                drop(guard);
                break;
            }
            state.lock.released().await;
        }
    }
}

/// `timeout`: close clients idle longer than that many seconds, checked every second, with
/// Redis's exemptions (subscribers, blocked clients, monitors); and MIGRATE's cached
/// connections unused for 10 s.
async fn idle_clients(state: Arc<ServerState>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        // MIGRATE's connections unused for 10 s are closed, as Redis's cron does.
        state
            .migrate_sockets
            .close_idle(state.clock.now_ms().div_euclid(1000));
        let timeout_s = state.config.read().timeout;
        if timeout_s == 0 {
            continue;
        }
        let now = state.clock.now_ms().max(0) as u64;
        let clients: Vec<_> = state.clients.lock().values().cloned().collect();
        for c in clients {
            let idle_ms = now.saturating_sub(c.last_active_ms.load(Ordering::Relaxed));
            if idle_ms > timeout_s * 1000 && crate::cmd::runtime::clients::timeout_applies(&c) {
                crate::log::verbose("Closing idle client");
                c.kill.cancel();
            }
        }
    }
}

/// clientsCron's closeClientOnOutputBufferLimitReached, `hz` times a second: a subscriber
/// whose output stayed over the pubsub soft limit long enough is closed also when no new
/// message comes to find it over.
async fn output_limits(state: Arc<ServerState>) {
    loop {
        let hz = u64::from(state.config.read().hz.clamp(1, 500));
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(1000 / hz)) => {}
        }
        let subscribers: Vec<_> = state
            .clients
            .lock()
            .values()
            .filter(|c| c.subscription_count() > 0)
            .filter_map(|c| c.extra.push.get().cloned())
            .collect();
        let (limits, now_ms) = (state.pubsub.limits(), state.clock.now_ms());
        for push in subscribers {
            push.check_limits(limits, now_ms);
        }
    }
}

/// Reclaim expired keys nobody reads, `hz` rounds a second (10 by default); and every key a
/// move of the clock made stale at once, so a test that moves time sees expiry (and
/// `expired` events) then, not at the next rounds. Nothing expires while a fault pauses the
/// server.
async fn active_expiry(state: Arc<ServerState>) {
    loop {
        // `hz` rounds a second (Redis's serverCron frequency, 1..=500).
        let hz = u64::from(state.config.read().hz.clamp(1, 500));
        let full = tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(1000 / hz)) => false,
            _ = state.clock.moved() => true,
        };
        if state.faults.paused_for().is_some() {
            continue;
        }
        let on =
            |flag: &std::sync::atomic::AtomicBool| flag.load(std::sync::atomic::Ordering::Relaxed);
        if !on(&state.active_expire_enabled) || on(&state.cron_paused) {
            continue;
        }
        loop {
            if let Some(guard) = state.lock.lock_briefly() {
                let started = std::time::Instant::now();
                // A client pause keeps the dataset constant: no active expiry meanwhile.
                let slowest_del = if crate::cmd::runtime::pause::is_paused(&state)
                    || crate::cmd::runtime::cluster::feed::is_replica(&state)
                    || state.replication.is_replica()
                {
                    if !crate::cmd::runtime::pause::is_paused(&state) {
                        crate::cmd::runtime::replication::expire_own_keys(
                            &state,
                            state.clock.now_ms(),
                        );
                    }
                    // A replica leaves expiry to its master (it gets the deletions).
                    Duration::ZERO
                } else if full {
                    // A moved clock: every stale key goes now (no latency sample: the
                    // sweep is a test's doing, not the server's load).
                    state.keyspace.expire_all(state.clock.now_ms());
                    Duration::ZERO
                } else {
                    state.keyspace.active_expire_round(state.clock.now_ms())
                };
                // Readers blocked on streams that expired are answered now, as Redis's
                // beforeSleep does after the expiry cycle (handleClientsBlockedOnKeys).
                crate::cmd::runtime::blocking::serve_ready(&state);
                // A cluster master's replicas get the deletions.
                crate::cmd::runtime::cluster::feed::commit(&state);
                drop(guard);
                let ms = started.elapsed().as_millis() as u64;
                // Redis samples each expired key's deletion; the history keeps a second's
                // maximum, so the round's slowest deletion gives the same entry.
                let del_ms = slowest_del.as_millis() as u64;
                crate::cmd::runtime::observe::add_sample_if_needed(&state, "expire-del", del_ms);
                crate::cmd::runtime::tracking::limit_table(&state);
                // Keys the cycle expired reach broadcasting clients now, not at the next command.
                crate::cmd::runtime::tracking::broadcast(&state, 0);
                crate::cmd::runtime::observe::add_sample_if_needed(&state, "expire-cycle", ms);
                break;
            }
            state.lock.released().await;
        }
    }
}
