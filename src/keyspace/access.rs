//! When a key was last used (LRU) or how often (LFU), as Redis's evict.c keeps it in every
//! object's 24-bit `lru` field; resplock keeps [`ACCESS_BITS`] of it in the entry (see
//! `Entry`). OBJECT IDLETIME, OBJECT FREQ and DEBUG OBJECT read it.
//!
//! Which one is kept depends on maxmemory-policy, which the keyspace does not read: the command
//! layer passes it with the command's time through [`set_command_context`] before every
//! command, so creating a value (`Entry::new`) and looking it up
//! (`Shard::get`) stamp it without every call site passing the clock.

use std::cell::Cell;

/// Bits of access state an entry keeps (Redis keeps 24).
pub const ACCESS_BITS: u32 = 22;
/// The largest access value.
pub const ACCESS_MAX: u32 = (1 << ACCESS_BITS) - 1;
/// LFU: the minutes clock takes what the 8-bit counter leaves (Redis: 16 bits).
const LFU_MINUTE_BITS: u32 = ACCESS_BITS - 8;
const LFU_MINUTES_MAX: u64 = (1 << LFU_MINUTE_BITS) - 1;
/// Redis's LFU_INIT_VAL: a new key's counter, so it is not evicted before it had a chance.
pub const LFU_INIT_VAL: u8 = 5;

/// How accesses are recorded: Redis's maxmemory-policy picks LRU or LFU, the two lfu-*
/// settings tune LFU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessPolicy {
    /// An LFU maxmemory-policy (allkeys-lfu, volatile-lfu) is selected.
    pub lfu: bool,
    /// lfu-log-factor.
    pub log_factor: u32,
    /// lfu-decay-time, in minutes (0: counters never decay).
    pub decay_minutes: u32,
}

impl Default for AccessPolicy {
    fn default() -> Self {
        AccessPolicy {
            lfu: false,
            log_factor: 10,
            decay_minutes: 1,
        }
    }
}

thread_local! {
    /// The running command's time (Unix ms) and the server's policy.
    static CONTEXT: Cell<(i64, AccessPolicy)> = Cell::new((0, AccessPolicy::default()));
}

/// Set the time and policy the commands this thread runs next stamp accesses with (the
/// command layer calls it before each command, next to `track_new_keys`).
pub fn set_command_context(now_ms: i64, policy: AccessPolicy) {
    CONTEXT.with(|c| c.set((now_ms, policy)));
}

/// The time and policy set by [`set_command_context`].
pub(super) fn context() -> (i64, AccessPolicy) {
    CONTEXT.with(|c| c.get())
}

/// Redis's LRU clock (seconds, wrapping) at `now_ms`.
pub fn lru_clock(now_ms: i64) -> u32 {
    ((now_ms.max(0) / 1000) as u64 & ACCESS_MAX as u64) as u32
}

/// Redis's LFUGetTimeInMinutes.
fn lfu_minutes(now_ms: i64) -> u64 {
    (now_ms.max(0) / 60_000) as u64 & LFU_MINUTES_MAX
}

/// The access value of a value created at `now_ms` (Redis's createObject).
pub fn initial(now_ms: i64, policy: AccessPolicy) -> u32 {
    if policy.lfu {
        ((lfu_minutes(now_ms) << 8) as u32) | LFU_INIT_VAL as u32
    } else {
        lru_clock(now_ms)
    }
}

/// The access value after a lookup at `now_ms` (Redis's lookupKey: updateLFU or LRU_CLOCK).
pub fn touched(access: u32, now_ms: i64, policy: AccessPolicy) -> u32 {
    if policy.lfu {
        let counter = lfu_log_incr(lfu_decayed(access, now_ms, policy), policy.log_factor);
        ((lfu_minutes(now_ms) << 8) as u32) | counter as u32
    } else {
        lru_clock(now_ms)
    }
}

/// The access value of a value loaded or restored with a known idle time in seconds
/// (objectSetLRUOrLFU's LRU branch: RDB's IDLE opcode, RESTORE ... IDLETIME). An idle time
/// longer than the clock can express lands half a turn of the clock away, as in Redis.
pub fn from_idle(now_ms: i64, idle_secs: u64) -> u32 {
    let clock = lru_clock(now_ms) as i64;
    let abs = clock - idle_secs.min(i64::MAX as u64) as i64;
    if abs < 0 {
        ((clock + ACCESS_MAX as i64 / 2) % ACCESS_MAX as i64) as u32
    } else {
        abs as u32
    }
}

/// The access value of a value loaded or restored with a known LFU counter
/// (objectSetLRUOrLFU's LFU branch: RDB's FREQ opcode, RESTORE ... FREQ).
pub fn from_freq(now_ms: i64, freq: u8) -> u32 {
    ((lfu_minutes(now_ms) << 8) as u32) | freq as u32
}

/// Redis's estimateObjectIdleTime, in ms.
pub fn idle_ms(access: u32, now_ms: i64) -> u64 {
    let clock = lru_clock(now_ms) as u64;
    let lru = access as u64;
    let ticks = if clock >= lru {
        clock - lru
    } else {
        clock + (ACCESS_MAX as u64 - lru)
    };
    ticks * 1000
}

/// Redis's LFUDecrAndReturn: the counter, decremented by the decay periods that passed since
/// the last access (OBJECT FREQ's answer).
pub fn lfu_decayed(access: u32, now_ms: i64, policy: AccessPolicy) -> u8 {
    let ldt = (access >> 8) as u64;
    let counter = (access & 255) as u64;
    let now = lfu_minutes(now_ms);
    let elapsed = if now >= ldt {
        now - ldt
    } else {
        LFU_MINUTES_MAX - ldt + now
    };
    let periods = match policy.decay_minutes {
        0 => 0,
        d => elapsed / d as u64,
    };
    counter.saturating_sub(periods) as u8
}

/// Redis's LFULogIncr: the counter grows with probability 1 / ((counter - 5) * factor + 1).
fn lfu_log_incr(counter: u8, log_factor: u32) -> u8 {
    if counter == 255 {
        return 255;
    }
    let base = counter.saturating_sub(LFU_INIT_VAL) as f64;
    let p = 1.0 / (base * log_factor as f64 + 1.0);
    if fastrand::f64() < p {
        counter + 1
    } else {
        counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LFU: AccessPolicy = AccessPolicy {
        lfu: true,
        log_factor: 10,
        decay_minutes: 1,
    };

    #[test]
    fn lru_idle_time_counts_seconds_and_survives_the_clock_wrapping() {
        let t = 1_700_000_000_000;
        let a = initial(t, AccessPolicy::default());
        assert_eq!(idle_ms(a, t), 0);
        assert_eq!(idle_ms(a, t + 2_500), 2_000);
        // The clock wraps every 2^22 s; an access just before the wrap is still near.
        let before_wrap = (ACCESS_MAX as i64) * 1000;
        let a = lru_clock(before_wrap);
        assert_eq!(idle_ms(a, before_wrap + 3_000), 2_000);
    }

    #[test]
    fn loaded_idle_times_and_counters_read_back() {
        let t = 1_700_000_000_000;
        assert_eq!(idle_ms(from_idle(t, 100), t), 100_000);
        assert_eq!(idle_ms(from_idle(t, 0), t), 0);
        // Longer than the clock goes back: half a turn, a long idle time still.
        let half = ACCESS_MAX as u64 / 2 * 1000;
        let far = idle_ms(from_idle(t, u64::MAX), t);
        assert!(far == half || far == half + 1000, "{far}");
        assert_eq!(lfu_decayed(from_freq(t, 77), t, LFU), 77);
    }

    #[test]
    fn lfu_counter_starts_at_five_grows_surely_at_first_and_decays_per_minute() {
        let t = 1_700_000_000_000;
        let a = initial(t, LFU);
        assert_eq!(lfu_decayed(a, t, LFU), 5);
        // At the initial value the increment probability is 1.
        let a = touched(a, t, LFU);
        assert_eq!(lfu_decayed(a, t, LFU), 6);
        assert_eq!(lfu_decayed(a, t + 3 * 60_000, LFU), 3);
        assert_eq!(lfu_decayed(a, t + 60 * 60_000, LFU), 0);
        let never = AccessPolicy {
            decay_minutes: 0,
            ..LFU
        };
        assert_eq!(lfu_decayed(a, t + 60 * 60_000, never), 6);
    }
}
