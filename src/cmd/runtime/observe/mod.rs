//! What the server records about the commands it runs, as Redis's `call()` does after each
//! one: per-command statistics (INFO commandstats, LATENCY HISTOGRAM), error statistics
//! (INFO errorstats), the slow log, latency events and the MONITOR feed. [`crate::cmd::runtime::call::call`]
//! reports every command here; the request path reports what it refused before running it.

pub mod latency;
pub mod monitor;
pub mod slowlog;

use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{fullname, Command};
use crate::cmd::runtime::tracking;
use crate::reply::Reply;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

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

/// One command's counters, added to without a lock: a map behind a mutex, looked up by name,
/// cost every command a lock shared by all workers and a walk of string compares (Redis keeps
/// them in the command's own struct).
#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    usec: AtomicU64,
    rejected_calls: AtomicU64,
    failed_calls: AtomicU64,
    buckets: [AtomicU64; 32],
}

impl Counters {
    fn snapshot(&self) -> CmdStat {
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

/// The counters' number for `cmd` run as `args` (or refused): the row's number in the
/// table's `every_row`, found by its address, or for a row reached some other way by its
/// full name.
fn row_of(
    state: &ServerState,
    cmd: &Command,
    args: Option<&[Bytes]>,
    parent: Option<&Command>,
) -> Option<usize> {
    if let Some(i) = state.commands.row_number(cmd) {
        return Some(i);
    }
    let name = match (args, parent) {
        (Some(args), _) => full_name(state, cmd, args),
        (None, p) => fullname(p, cmd),
    };
    state.commands.row_named(&name)
}

/// The server's records of its commands.
pub struct Observe {
    /// Per row of the table's `every_row`; read as a map by full name through
    /// [`cmdstats`].
    counters: Box<[Counters]>,
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
}

impl Observe {
    /// Records for a table of `rows` rows.
    pub fn new(rows: usize) -> Self {
        let config = crate::config::Config::default();
        let o = Observe {
            counters: (0..rows).map(|_| Counters::default()).collect(),
            errorstats: Default::default(),
            total_error_replies: Default::default(),
            slowlog: Default::default(),
            latency: Default::default(),
            monitors: Default::default(),
            latency_threshold_ms: Default::default(),
            slowlog_slower_than_us: Default::default(),
            slowlog_max_len: Default::default(),
        };
        o.refresh(&config);
        o
    }
}

impl Observe {
    /// CONFIG RESETSTAT: command and error statistics start again.
    pub fn reset_stats(&self) {
        for c in self.counters.iter() {
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

/// The commands that ran or were refused since the start (or CONFIG RESETSTAT), by full
/// name (`get`, `client|list`), as INFO commandstats and LATENCY HISTOGRAM read them.
pub fn cmdstats(state: &ServerState) -> BTreeMap<String, CmdStat> {
    let mut out = BTreeMap::new();
    let rows = state.commands.every_row().iter();
    for ((cmd, parent), c) in rows.zip(state.observe.counters.iter()) {
        let s = c.snapshot();
        if s.calls > 0 || s.rejected_calls > 0 {
            out.insert(fullname(*parent, cmd), s);
        }
    }
    out
}

/// `get`, or `client|list` for a subcommand (args\[0\] names the container).
pub fn full_name(state: &ServerState, cmd: &Command, args: &[Bytes]) -> String {
    if cmd.name.as_bytes().eq_ignore_ascii_case(&args[0]) {
        return cmd.name.to_string();
    }
    fullname(state.commands.lookup(&args[0]), cmd)
}

/// Writes that add to the change count themselves: FLUSHALL (a save after it starts the count
/// again) and the bit commands, which count only when a bit changed.
const COUNTS_OWN_CHANGES: &[&str] = &["flushall", "setbit", "bitop", "bitfield"];

/// Record a command that ran (from [`crate::cmd::runtime::call::call`]): statistics, latency, slow log, and the
/// MONITOR feed unless the command feeds it itself or is an admin command.
pub fn after_call(ctx: &Ctx, cmd: &Command, args: &[Bytes], reply: &Reply, took: Duration) {
    let state = ctx.state;
    let us = took.as_micros() as u64;
    record(state, cmd, args, reply, took);
    // A write that succeeded is one change (Redis's server.dirty); the commands in
    // COUNTS_OWN_CHANGES count exactly what they changed themselves.
    if cmd.has(crate::cmd::base::flags::WRITE)
        && !COUNTS_OWN_CHANGES.contains(&cmd.name)
        && !matches!(reply, Reply::Error(_))
    {
        state.add_dirty(1);
    }
    let event = if cmd.has(crate::cmd::base::flags::FAST) {
        "fast-command"
    } else {
        "command"
    };
    latency::add_sample_if_needed(state, event, us / 1000);
    // Keys the command found expired and removed (Redis samples each in expireIfNeeded).
    let lazy_del = crate::keyspace::take_slowest_lazy_delete().as_millis() as u64;
    latency::add_sample_if_needed(state, "expire-del", lazy_del);
    if !cmd.has(crate::cmd::base::flags::SKIP_SLOWLOG) {
        slowlog::push_if_slow(state, ctx.client, args, us);
    }
    if !cmd.has(crate::cmd::base::flags::SKIP_MONITOR | crate::cmd::base::flags::ADMIN) {
        monitor::feed(state, ctx.client, ctx.in_script, args);
    }
    if ctx.in_script {
        tracking::script_called(state, cmd.has(crate::cmd::base::flags::READONLY));
    } else if state.tracking.clients.load(Ordering::Relaxed) > 0 {
        let id = ctx.client.id;
        if cmd.has(crate::cmd::base::flags::READONLY) && !cmd.has(crate::cmd::base::flags::PUBSUB) {
            tracking::remember_keys(state, id, &read_keys(state, cmd, args));
        }
        tracking::command_done(state, id, args[0].eq_ignore_ascii_case(b"client"));
    }
}

/// A script command (EVAL and friends run outside [`crate::cmd::runtime::call::call`]): statistics, latency and
/// slow log; it fed MONITOR itself before running.
pub fn after_script(
    state: &ServerState,
    client: &crate::cmd::runtime::client::Client,
    cmd: &Command,
    args: &[Bytes],
    reply: &Reply,
    took: Duration,
) {
    let us = took.as_micros() as u64;
    record(state, cmd, args, reply, took);
    latency::add_sample_if_needed(state, "command", us / 1000);
    slowlog::push_if_slow(state, client, args, us);
}

fn record(state: &ServerState, cmd: &Command, args: &[Bytes], reply: &Reply, took: Duration) {
    let Some(i) = row_of(state, cmd, Some(args), None) else {
        return;
    };
    let c = &state.observe.counters[i];
    let r = Ordering::Relaxed;
    c.calls.fetch_add(1, r);
    c.usec.fetch_add(took.as_micros() as u64, r);
    if matches!(reply, Reply::Error(_)) {
        c.failed_calls.fetch_add(1, r);
    }
    let ns = took.as_nanos().max(1) as u64;
    let bucket = (64 - ((ns - 1) >> 10).leading_zeros()) as usize;
    c.buckets[bucket.min(31)].fetch_add(1, r);
}

/// A request that named no runnable command: a known command (not EXEC, whose refusal is
/// counted where it aborts the transaction) with the wrong number of arguments is a rejected
/// call of it or of its subcommand; an unknown command is only an error.
pub fn count_refused_lookup(state: &ServerState, args: &[Bytes]) {
    if let Some(c) = state.commands.lookup(&args[0]) {
        if c.subcommands.is_empty() {
            if c.name != "exec" {
                count_rejected(state, c, None);
            }
        } else if let Some(sub) = args
            .get(1)
            .and_then(|s| crate::cmd::runtime::table::lookup_sub(c, s))
        {
            count_rejected(state, sub, Some(c));
        }
    }
}

/// A command refused before it ran (auth, subscribed mode, BUSY...): its rejected_calls.
pub fn count_rejected(state: &ServerState, cmd: &Command, parent: Option<&Command>) {
    if let Some(i) = row_of(state, cmd, None, parent) {
        state.observe.counters[i]
            .rejected_calls
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// errorstats and total_error_replies for one error reply.
pub fn count_error(state: &ServerState, e: &[u8]) {
    let code = e.split(|&c| c == b' ').next().unwrap_or(b"ERR");
    let code = String::from_utf8_lossy(code).into_owned();
    state
        .observe
        .total_error_replies
        .fetch_add(1, Ordering::Relaxed);
    let mut es = state.observe.errorstats.lock();
    // Redis stops adding new error codes past 128 (errors flooding with random codes).
    if es.len() < 128 || es.contains_key(&code) {
        *es.entry(code).or_default() += 1;
    }
}

/// INFO commandstats lines.
pub fn commandstats_info(state: &ServerState, out: &mut String) {
    for (name, s) in cmdstats(state).iter() {
        let per = if s.calls == 0 {
            0.0
        } else {
            s.usec as f64 / s.calls as f64
        };
        let _ = write!(
            out,
            "cmdstat_{name}:calls={},usec={},usec_per_call={per:.2},rejected_calls={},failed_calls={}\r\n",
            s.calls, s.usec, s.rejected_calls, s.failed_calls
        );
    }
}

/// INFO errorstats lines.
pub fn errorstats_info(state: &ServerState, out: &mut String) {
    for (code, n) in state.observe.errorstats.lock().iter() {
        let _ = write!(out, "errorstat_{code}:count={n}\r\n");
    }
}

/// INFO latencystats lines: p50, p99 and p99.9 of each command's run time.
pub fn latencystats_info(state: &ServerState, out: &mut String) {
    for (name, s) in cmdstats(state).iter() {
        let total: u64 = s.buckets.iter().sum();
        if total == 0 {
            continue;
        }
        let pct = |p: f64| {
            let want = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, n) in s.buckets.iter().enumerate() {
                seen += n;
                if seen >= want {
                    return bucket_usec(i) as f64;
                }
            }
            0.0
        };
        let _ = write!(
            out,
            "latency_percentiles_usec_{name}:p50={:.3},p99={:.3},p99.9={:.3}\r\n",
            pct(50.0),
            pct(99.0),
            pct(99.9)
        );
    }
}

/// The upper bound, in microseconds, of histogram bucket `i` (1024 ns << i), as Redis prints
/// an HDR histogram's log buckets.
pub fn bucket_usec(i: usize) -> u64 {
    (1024u64 << i) / 1000
}

/// The keys a read-only command read, by its key specs (or its row).
fn read_keys(state: &ServerState, cmd: &Command, args: &[Bytes]) -> Vec<Bytes> {
    let name = full_name(state, cmd, args);
    let positions: Vec<usize> = match crate::cmd::base::meta::get(&name)
        .map(|m| crate::cmd::base::meta::key_positions(m, args))
    {
        Some(crate::cmd::base::meta::KeySearch::Keys(p)) => p,
        Some(crate::cmd::base::meta::KeySearch::NoKeys) => vec![],
        _ => cmd.key_positions(args.len()).collect(),
    };
    positions
        .into_iter()
        .filter_map(|i| args.get(i).cloned())
        .collect()
}
