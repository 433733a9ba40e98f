//! The one source of wall-clock time. Expiry, TIME, scripts and blocking timeouts read it
//! through [`Clock`], so a test (or the hermetic mode) can move time forward without sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct Clock {
    /// Added to the system clock, in microseconds; only ever changed by [`Clock::advance_ms`].
    offset_us: AtomicI64,
    /// Wakes [`Clock::sleep_until`] sleepers when the clock is moved, so a deadline the move
    /// passed fires without waiting for real time to catch up.
    moved: Notify,
}

impl Clock {
    pub fn new() -> Self {
        Clock::default()
    }

    /// Microseconds since the Unix epoch.
    pub fn now_us(&self) -> i64 {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        d.as_micros() as i64 + self.offset_us.load(Ordering::Relaxed)
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        self.now_us() / 1000
    }

    /// Move this clock forward (or back, with a negative value) by `ms` milliseconds.
    pub fn advance_ms(&self, ms: i64) {
        self.offset_us.fetch_add(ms * 1000, Ordering::Relaxed);
        self.moved.notify_waiters();
    }

    /// Resolve once this clock reads `ms` (Unix time in milliseconds) or later: after the
    /// real time left, or at once when [`Clock::advance_ms`] moves the clock past it.
    pub async fn sleep_until(&self, ms: i64) {
        loop {
            // Registered before the clock is read, so a move in between is not missed.
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            let now = self.now_ms();
            if now >= ms {
                return;
            }
            let left = Duration::from_millis(ms.saturating_sub(now) as u64);
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
                _ = moved => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn moving_the_clock_ends_a_sleep_without_waiting() {
        let clock = std::sync::Arc::new(Clock::new());
        let deadline = clock.now_ms() + 3_600_000;
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep_until(deadline).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!sleeper.is_finished());
        clock.advance_ms(3_600_001);
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("woken by the move")
            .unwrap();
    }

    #[tokio::test]
    async fn a_deadline_in_the_past_returns_at_once() {
        let clock = Clock::new();
        let past = clock.now_ms() - 10;
        tokio::time::timeout(Duration::from_secs(1), clock.sleep_until(past))
            .await
            .expect("no wait");
    }
}
