//! What ServerState keeps for maxmemory: the settings copied from the config, the eviction
//! pool and the state of the running command or script (see `evict/mod.rs`).

use bytes::Bytes;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// maxmemory-policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    NoEviction = 0,
    AllkeysLru,
    VolatileLru,
    AllkeysLfu,
    VolatileLfu,
    AllkeysRandom,
    VolatileRandom,
    VolatileTtl,
}

impl Policy {
    /// The policy CONFIG uses this name for (`noeviction` for anything else).
    pub fn from_name(name: &str) -> Policy {
        match name {
            "allkeys-lru" => Policy::AllkeysLru,
            "volatile-lru" => Policy::VolatileLru,
            "allkeys-lfu" => Policy::AllkeysLfu,
            "volatile-lfu" => Policy::VolatileLfu,
            "allkeys-random" => Policy::AllkeysRandom,
            "volatile-random" => Policy::VolatileRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    pub(super) fn from_u8(v: u8) -> Policy {
        [
            Policy::NoEviction,
            Policy::AllkeysLru,
            Policy::VolatileLru,
            Policy::AllkeysLfu,
            Policy::VolatileLfu,
            Policy::AllkeysRandom,
            Policy::VolatileRandom,
            Policy::VolatileTtl,
        ]
        .get(v as usize)
        .copied()
        .unwrap_or(Policy::NoEviction)
    }

    pub(super) fn volatile_only(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::VolatileRandom
                | Policy::VolatileTtl
        )
    }
}

/// The maxmemory settings (copied from `Config` on every change) and eviction's state.
#[derive(Default)]
pub struct Eviction {
    pub(super) maxmemory: AtomicU64,
    pub(super) policy: AtomicU8,
    pub(super) samples: AtomicU32,
    /// INFO's evicted_keys.
    pub evicted_keys: AtomicU64,
    /// Redis's pre_command_oom_state: whether the server was out of memory when the running
    /// command (a script, for its `redis.call`s) started.
    pub(super) pre_command_oom: AtomicBool,
    /// The database the next random eviction starts from (Redis rotates it).
    pub(super) next_db: AtomicU32,
    /// Redis's eviction pool: the best candidates sampled so far (score, db, key), best last;
    /// each round adds fresh samples and takes the best, so the choice improves across rounds.
    pub(super) pool: parking_lot::Mutex<Vec<(u64, usize, Bytes)>>,
    /// The running script declared flags (so `allow-oom` decided at its start, and its
    /// commands are not checked one by one).
    pub(super) script_declared_flags: AtomicBool,
}

impl Eviction {
    /// Copy the settings out of `config`.
    pub fn refresh(&self, config: &crate::config::Config) {
        let r = Ordering::Relaxed;
        self.maxmemory.store(config.maxmemory, r);
        self.policy
            .store(Policy::from_name(&config.maxmemory_policy) as u8, r);
        self.samples.store(config.maxmemory_samples.max(1), r);
    }

    pub(super) fn policy(&self) -> Policy {
        Policy::from_u8(self.policy.load(Ordering::Relaxed))
    }
}

/// Candidates the eviction pool keeps (Redis's EVPOOL_SIZE).
pub(super) const POOL_SIZE: usize = 16;
