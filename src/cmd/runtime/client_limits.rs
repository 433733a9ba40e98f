//! What a server allows each client, as Redis 7.0 enforces it: the request limits the
//! connection applies while reading (proto-max-bulk-len, client-query-buffer-limit, the caps
//! on clients that still have to authenticate), client-output-buffer-limit for the normal
//! class, and `timeout` for idle clients (checked by the cron). The settings are copied out
//! of `Config` on every change, so the per-request path reads atomics, not the config lock.

use crate::config::Config;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The limits, refreshed from `Config` by `ServerState::config_changed`.
#[derive(Default)]
pub struct ClientLimits {
    proto_max_bulk_len: AtomicI64,
    query_buffer_limit: AtomicU64,
    normal_hard: AtomicU64,
    normal_soft: AtomicU64,
    normal_soft_seconds: AtomicU64,
    timeout_seconds: AtomicU64,
    /// maxmemory-clients in bytes as Redis's getClientEvictionLimit computes it; 0: off.
    eviction_limit: AtomicU64,
    /// The memory of the clients that may be evicted, as each last counted it (Redis's
    /// stat_clients_type_memory for the normal and pubsub classes).
    pub evictable_bytes: AtomicU64,
    /// Clients evicted for maxmemory-clients (INFO's evicted_clients).
    pub evicted: AtomicU64,
    /// Clients whose output grew from another client's command (tracking redirections), to
    /// be counted against maxmemory-clients when that command is over.
    grown: parking_lot::Mutex<Vec<u64>>,
    grown_any: std::sync::atomic::AtomicBool,
}

/// A client's standing against the normal output-buffer limit's soft part.
#[derive(Default, Debug, Clone, Copy)]
pub struct SoftLimitClock {
    /// When the client's output first went over the soft limit (server clock, ms); 0: not over.
    since_ms: i64,
}

impl ClientLimits {
    /// Copy the limits out of `config`.
    pub fn refresh(&self, config: &Config) {
        let r = Ordering::Relaxed;
        self.proto_max_bulk_len
            .store(config.proto_max_bulk_len.min(i64::MAX as u64) as i64, r);
        self.query_buffer_limit
            .store(config.client_query_buffer_limit, r);
        let (hard, soft, secs) = config.output_buffer_limit("normal");
        self.normal_hard.store(hard, r);
        self.normal_soft.store(soft, r);
        self.normal_soft_seconds.store(secs, r);
        self.timeout_seconds.store(config.timeout, r);
        self.eviction_limit.store(
            eviction_limit(config.maxmemory_clients(), config.maxmemory),
            r,
        );
    }

    /// Client `id`'s output grew from another client's command: count it at the next check.
    pub fn mark_grown(&self, id: u64) {
        if self.eviction_limit() != 0 {
            self.grown.lock().push(id);
            self.grown_any.store(true, Ordering::Release);
        }
    }

    /// The clients [`ClientLimits::mark_grown`] named since the last call (one load when none).
    pub fn take_grown(&self) -> Vec<u64> {
        // A load first: the swap's write would bounce this line between workers per request.
        if !self.grown_any.load(Ordering::Relaxed) || !self.grown_any.swap(false, Ordering::Acquire) {
            return Vec::new();
        }
        std::mem::take(&mut *self.grown.lock())
    }

    /// maxmemory-clients in bytes (0: client eviction is off).
    pub fn eviction_limit(&self) -> u64 {
        self.eviction_limit.load(Ordering::Relaxed)
    }

    /// proto-max-bulk-len.
    pub fn proto_max_bulk_len(&self) -> i64 {
        self.proto_max_bulk_len.load(Ordering::Relaxed)
    }

    /// Whether a query buffer of `bytes` is over client-query-buffer-limit: Redis then closes
    /// the client, without a reply, rather than grow the server.
    pub fn query_buffer_over(&self, bytes: usize) -> bool {
        bytes as u64 > self.query_buffer_limit.load(Ordering::Relaxed)
    }

    /// checkClientOutputBufferLimits for the normal class: `pending` bytes of replies wait to
    /// be written. True when the client must be closed (hard limit reached, or soft limit
    /// exceeded for longer than its seconds).
    pub fn normal_output_over(
        &self,
        pending: usize,
        clock: &mut SoftLimitClock,
        now_ms: impl FnOnce() -> i64,
    ) -> bool {
        let r = Ordering::Relaxed;
        let (hard, soft) = (self.normal_hard.load(r), self.normal_soft.load(r));
        let used = pending as u64;
        let hard_hit = hard != 0 && used >= hard;
        let mut soft_hit = soft != 0 && used >= soft;
        if soft_hit {
            // The clock is read only past the soft limit: not on every reply.
            let now_ms = now_ms();
            if clock.since_ms == 0 {
                clock.since_ms = now_ms.max(1);
                soft_hit = false;
            } else {
                let elapsed_s = (now_ms - clock.since_ms) / 1000;
                if elapsed_s <= self.normal_soft_seconds.load(r) as i64 {
                    soft_hit = false;
                }
            }
        } else {
            clock.since_ms = 0;
        }
        hard_hit || soft_hit
    }

    /// `timeout` in seconds (0: clients may idle forever).
    pub fn timeout_seconds(&self) -> u64 {
        self.timeout_seconds.load(Ordering::Relaxed)
    }
}

/// Redis's getClientEvictionLimit: `setting` is bytes, or a percentage of `maxmemory` kept
/// negated (no limit while maxmemory is 0); never under 128 KB, so that a bad setting cannot
/// cut every client off.
pub fn eviction_limit(setting: i64, maxmemory: u64) -> u64 {
    let limit = if setting < 0 && maxmemory > 0 {
        (maxmemory as f64 * -(setting as f64) / 100.0) as u64
    } else if setting > 0 {
        setting as u64
    } else {
        return 0;
    };
    limit.max(128 * 1024)
}
