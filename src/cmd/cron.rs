//! Background work on the server's state, as Redis's serverCron does it: active expiry today
//! (and, next, client timeouts and idle-buffer reclaim). The server layer spawns [`run`].

use super::ServerState;
use std::sync::Arc;
use std::time::Duration;

/// Run the background cycles until the server shuts down.
pub async fn run(state: Arc<ServerState>) {
    active_expiry(state).await
}

/// Reclaim expired keys nobody reads, ten rounds a second.
async fn active_expiry(state: Arc<ServerState>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let on =
            |flag: &std::sync::atomic::AtomicBool| flag.load(std::sync::atomic::Ordering::Relaxed);
        if !on(&state.active_expire_enabled) || on(&state.cron_paused) {
            continue;
        }
        loop {
            if let Some(guard) = state.lock.lock_briefly() {
                state.keyspace.active_expire_round(state.clock.now_ms());
                drop(guard);
                break;
            }
            state.lock.released().await;
        }
    }
}
