//! The records ServerState keeps for observation (see the operations in `observe/mod.rs`):
//! per-command counters by row number, error statistics, the slow log, latency events and
//! the monitors, with the thresholds copied out of the config.

use crate::cmd::runtime::observe::{latency, monitor, slowlog};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// One command's counters.
#[derive(Clone, Default)]
pub struct CmdStat {
    /// Times it ran.
    pub calls: u64,
    /// Total run time, microseconds.
    pub usec: u64,
    /// Refused before running (arity, auth, pause...).
    pub rejected_calls: u64,
    /// Ran and answered an error.
    pub failed_calls: u64,
    /// Run times by power-of-two bucket of 1024 ns (LATENCY HISTOGRAM).
    pub buckets: [u64; 32],
}

/// One command's counters, added to without a lock of their own: a map behind a mutex, looked
/// up by name, cost every command a lock shared by all workers and a walk of string compares
/// (Redis keeps them in the command's own struct).
#[derive(Default)]
pub(super) struct Counters {
    pub(super) calls: AtomicU64,
    pub(super) usec: AtomicU64,
    pub(super) rejected_calls: AtomicU64,
    pub(super) failed_calls: AtomicU64,
    pub(super) buckets: [AtomicU64; 32],
}

impl Counters {
    pub(super) fn snapshot(&self) -> CmdStat {
        let r = Ordering::Relaxed;
        CmdStat {
            calls: self.calls.load(r),
            usec: self.usec.load(r),
            rejected_calls: self.rejected_calls.load(r),
            failed_calls: self.failed_calls.load(r),
            buckets: std::array::from_fn(|i| self.buckets[i].load(r)),
        }
    }

    fn reset(&self) {
        let r = Ordering::Relaxed;
        self.calls.store(0, r);
        self.usec.store(0, r);
        self.rejected_calls.store(0, r);
        self.failed_calls.store(0, r);
        for b in &self.buckets {
            b.store(0, r);
        }
    }
}

/// The server's records of its commands.
pub struct Observe {
    /// Per row of the table's `every_row`; read as a map by full name through
    /// `observe::cmdstats`. Written only by holders of the server lock (every command but
    /// those served past a busy script), with plain loads and stores.
    counters: Box<[Counters]>,
    /// The same rows for what is counted without the server lock, with atomic adds (made by
    /// the first such count: most servers never serve anything past a busy script).
    unlocked: std::sync::OnceLock<Box<[Counters]>>,
    /// Error replies by their first word (`ERR`, `WRONGTYPE`).
    pub errorstats: Mutex<BTreeMap<String, u64>>,
    /// Every error reply sent (INFO stats total_error_replies).
    pub total_error_replies: AtomicU64,
    /// SLOWLOG.
    pub slowlog: Mutex<slowlog::SlowLog>,
    /// LATENCY events.
    pub latency: Mutex<latency::Events>,
    /// MONITOR clients.
    pub monitors: monitor::Monitors,
    /// latency-monitor-threshold (ms; 0 off), copied out of the config by
    /// [`Observe::refresh`] so that every command does not read the config lock.
    latency_threshold_ms: AtomicU64,
    /// slowlog-log-slower-than (us; negative off), copied as above.
    slowlog_slower_than_us: AtomicI64,
    /// slowlog-max-len, copied as above.
    slowlog_max_len: AtomicU64,
    /// latency-tracking: whether commands feed the latency histograms, copied as above.
    latency_tracking: std::sync::atomic::AtomicBool,
    /// latency-tracking-info-percentiles, copied as above (INFO latencystats).
    percentiles: Mutex<Vec<f64>>,
}

impl Observe {
    /// Records for a table of `rows` rows.
    pub fn new(rows: usize) -> Self {
        let config = crate::config::Config::default();
        let o = Observe {
            counters: (0..rows).map(|_| Counters::default()).collect(),
            unlocked: std::sync::OnceLock::new(),
            errorstats: Default::default(),
            total_error_replies: Default::default(),
            slowlog: Default::default(),
            latency: Default::default(),
            monitors: Default::default(),
            latency_threshold_ms: Default::default(),
            slowlog_slower_than_us: Default::default(),
            slowlog_max_len: Default::default(),
            latency_tracking: Default::default(),
            percentiles: Default::default(),
        };
        o.refresh(&config);
        o
    }
}

impl Observe {
    /// Row `i`'s counters for a count taken by this thread, and whether they are its alone
    /// (`locked`: it holds the server lock), as `lock::add_to` takes it.
    pub(super) fn row(&self, i: usize, locked: bool) -> (&Counters, bool) {
        if locked {
            return (&self.counters[i], true);
        }
        let rows = self
            .unlocked
            .get_or_init(|| (0..self.counters.len()).map(|_| Counters::default()).collect());
        (&rows[i], false)
    }

    /// Row `i`'s counters as they stand, both parts added.
    pub(super) fn snapshot(&self, i: usize) -> CmdStat {
        let mut s = self.counters[i].snapshot();
        if let Some(rows) = self.unlocked.get() {
            let u = rows[i].snapshot();
            s.calls += u.calls;
            s.usec += u.usec;
            s.rejected_calls += u.rejected_calls;
            s.failed_calls += u.failed_calls;
            for (b, ub) in s.buckets.iter_mut().zip(u.buckets) {
                *b += ub;
            }
        }
        s
    }

    /// CONFIG RESETSTAT: command and error statistics start again.
    pub fn reset_stats(&self) {
        for c in self.counters.iter().chain(self.unlocked.get().into_iter().flatten()) {
            c.reset();
        }
        self.errorstats.lock().clear();
        self.total_error_replies.store(0, Ordering::Relaxed);
    }

    /// Copy the thresholds this module reads per command out of `config` (after CONFIG SET).
    pub fn refresh(&self, config: &crate::config::Config) {
        let r = Ordering::Relaxed;
        self.latency_threshold_ms
            .store(config.latency_monitor_threshold, r);
        self.slowlog_slower_than_us
            .store(config.slowlog_log_slower_than, r);
        self.slowlog_max_len.store(config.slowlog_max_len, r);
        self.latency_tracking
            .store(config.get("latency-tracking").as_deref() != Some("no"), r);
        *self.percentiles.lock() = config
            .get("latency-tracking-info-percentiles")
            .unwrap_or_default()
            .split(' ')
            .filter_map(|p| p.parse().ok())
            .collect();
    }

    /// latency-tracking: whether a command's duration goes into its histogram.
    pub fn latency_tracking(&self) -> bool {
        self.latency_tracking.load(Ordering::Relaxed)
    }

    /// latency-tracking-info-percentiles, in order.
    pub fn percentiles(&self) -> Vec<f64> {
        self.percentiles.lock().clone()
    }

    /// latency-monitor-threshold in ms (0: off).
    pub fn latency_threshold_ms(&self) -> u64 {
        self.latency_threshold_ms.load(Ordering::Relaxed)
    }

    /// slowlog-log-slower-than (us) and slowlog-max-len.
    pub fn slowlog_settings(&self) -> (i64, usize) {
        (
            self.slowlog_slower_than_us.load(Ordering::Relaxed),
            self.slowlog_max_len.load(Ordering::Relaxed) as usize,
        )
    }
}

/// The upper bound, in microseconds, of histogram bucket `i` (1024 ns << i), as Redis prints
/// an HDR histogram's log buckets.
pub fn bucket_usec(i: usize) -> u64 {
    (1024u64 << i) / 1000
}
