//! The one source of wall-clock time. Expiry, TIME and scripts read it through [`Clock`], so a
//! test (or the hermetic mode) can move time forward without sleeping.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Default)]
pub struct Clock {
    /// Added to the system clock, in microseconds; only ever changed by [`Clock::advance`].
    offset_us: AtomicI64,
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
    }
}
