//! Background work on the server's state, as Redis's serverCron does it: active expiry today
//! (and, next, client timeouts and idle-buffer reclaim). The server layer spawns [`run`].

use super::ServerState;
use std::sync::Arc;
use std::time::Duration;

/// Run the background cycles until the server shuts down.
pub async fn run(state: Arc<ServerState>) {
    active_expiry(state).await
}

/// Reclaim expired keys nobody reads, ten rounds a second; and every key a move of the
/// clock made stale at once, so a test that moves time sees expiry (and `expired` events)
/// then, not over the next second. Nothing expires while a fault pauses the server.
async fn active_expiry(state: Arc<ServerState>) {
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let full = tokio::select! {
            _ = state.shutdown.cancelled() => return,
            _ = tick.tick() => false,
            _ = state.clock.moved() => true,
        };
        if state.faults.paused_for().is_some() {
            continue;
        }
        loop {
            if let Some(guard) = state.lock.lock_briefly() {
                let now = state.clock.now_ms();
                if full {
                    state.keyspace.expire_all(now);
                } else {
                    state.keyspace.active_expire_round(now);
                }
                drop(guard);
                break;
            }
            state.lock.released().await;
        }
    }
}
