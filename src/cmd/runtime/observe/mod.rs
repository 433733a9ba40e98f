//! What the server records about the commands it runs, as Redis's `call()` does after each one:
//! per-command statistics (INFO commandstats, LATENCY HISTOGRAM), error statistics (INFO
//! errorstats), the slow log, latency events and the MONITOR feed.
//! `runtime::call::call` reports every command here; the request path reports what it
//! refused before running it.
//!
//! What belongs here: what is recorded about commands after (or instead of) running them,
//! and the state it is kept in (`registry.rs`); never anything that changes what a command
//! does. The commands that read it (SLOWLOG, LATENCY, MONITOR, INFO's sections) are
//! families of the same names.

pub mod latency;
pub mod monitor;
pub mod registry;
pub mod slowlog;

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::observe::latency::TS_LEN;
use crate::cmd::runtime::lock::add_to;
use crate::cmd::runtime::observe::registry::{bucket_usec, CmdStat};
use crate::cmd::runtime::observe::slowlog::{redacted, trimmed, Entry};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{fullname, Command};
use crate::cmd::runtime::tracking;
use crate::reply::Reply;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::outbox::Limits;

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

/// The commands that ran or were refused since the start (or CONFIG RESETSTAT), by full
/// name (`get`, `client|list`), as INFO commandstats and LATENCY HISTOGRAM read them.
pub fn cmdstats(state: &ServerState) -> BTreeMap<String, CmdStat> {
    let mut out = BTreeMap::new();
    for (i, (cmd, parent)) in state.commands.every_row().iter().enumerate() {
        let s = state.observe.snapshot(i);
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

/// Record a command that ran (from `runtime::call::call`): statistics, latency, slow
/// log, and the MONITOR feed unless the command feeds it itself or is an admin command.
pub fn after_call(ctx: &Ctx, cmd: &Command, args: &[Bytes], reply: &Reply, took: Duration) {
    let state = ctx.state;
    let us = took.as_micros() as u64;
    record(state, cmd, args, reply, took);
    // Changes are counted where they happen (each key a command changes signals it: see
    // `Ctx::signal_modified`), as Redis's commands add to server.dirty themselves.
    let event = if cmd.has(crate::cmd::base::flags::FAST) {
        "fast-command"
    } else {
        "command"
    };
    add_sample_if_needed(state, event, us / 1000);
    // Keys the command found expired and removed (Redis samples each in expireIfNeeded).
    let lazy_del = crate::keyspace::take_slowest_lazy_delete().as_millis() as u64;
    add_sample_if_needed(state, "expire-del", lazy_del);
    if !cmd.has(crate::cmd::base::flags::SKIP_SLOWLOG) {
        // A command that blocked is logged when it is served, with the time it took to block
        // and to be served (Redis's updateStatsOnUnblock).
        if matches!(reply, Reply::NoReply) && ctx.client.info.blocked.load(Ordering::Acquire) {
            state.blocking.remember_call(ctx.client.id, args, us);
        } else {
            push_if_slow(state, &ctx.client.info, args, us);
        }
    }
    if !cmd.has(crate::cmd::base::flags::SKIP_MONITOR | crate::cmd::base::flags::ADMIN) {
        feed(state, ctx.client, ctx.in_script, args);
    }
    if ctx.in_script {
        tracking::script_called(state, cmd.has(crate::cmd::base::flags::READONLY));
    } else if state.tracking.clients.load(Ordering::Relaxed) > 0 {
        let id = ctx.client.id;
        if cmd.has(crate::cmd::base::flags::READONLY) && !cmd.has(crate::cmd::base::flags::PUBSUB) {
            tracking::remember_keys(state, id, &read_keys(cmd, args));
        }
        tracking::command_done(state, id, args[0].eq_ignore_ascii_case(b"client"));
    }
}

/// A script command (EVAL and friends run outside `runtime::call::call`): statistics,
/// latency and slow log; it fed MONITOR itself before running.
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
    add_sample_if_needed(state, "command", us / 1000);
    push_if_slow(state, &client.info, args, us);
    state.stats.total_commands.add(1, state.lock.held_here());
}

/// SCRIPT KILL or FUNCTION KILL answered (served without the server lock, as it waits for
/// the script): counted, timed, logged if slow and fed to MONITOR, as call() does for every
/// command.
pub fn after_kill(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    args: &[Bytes],
    reply: &Reply,
    took: Duration,
) {
    if !cmd.has(crate::cmd::base::flags::SKIP_MONITOR | crate::cmd::base::flags::ADMIN) {
        feed(state, client, false, args);
    }
    after_script(state, client, cmd, args, reply, took);
}

fn record(state: &ServerState, cmd: &Command, args: &[Bytes], reply: &Reply, took: Duration) {
    let Some(i) = row_of(state, cmd, Some(args), None) else {
        return;
    };
    let (c, own) = state.observe.row(i, state.lock.held_here());
    add_to(&c.calls, 1, own);
    add_to(&c.usec, took.as_micros() as u64, own);
    if matches!(reply, Reply::Error(_)) {
        add_to(&c.failed_calls, 1, own);
    }
    if state.observe.latency_tracking() {
        let ns = took.as_nanos().max(1) as u64;
        let bucket = (64 - ((ns - 1) >> 10).leading_zeros()) as usize;
        add_to(&c.buckets[bucket.min(31)], 1, own);
    }
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
        let (c, own) = state.observe.row(i, state.lock.held_here());
        add_to(&c.rejected_calls, 1, own);
    }
}

/// A blocked client was answered with an error when served (a group reader whose group or
/// stream went away, a BLMOVE whose destination holds another type): its command counts a
/// failed call and the error is counted, as Redis's updateStatsOnUnblock does. The call itself
/// was counted when the client blocked.
pub fn count_unblocked_error(state: &ServerState, fullname: &str, e: &[u8]) {
    if let Some(i) = state.commands.row_named(fullname) {
        let (c, own) = state.observe.row(i, state.lock.held_here());
        add_to(&c.failed_calls, 1, own);
    }
    count_error(state, e);
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
    // With latency-tracking off the section is empty; the histograms kept stay for later.
    if !state.observe.latency_tracking() {
        return;
    }
    let percentiles = state.observe.percentiles();
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
        let _ = write!(out, "latency_percentiles_usec_{name}:");
        for (i, p) in percentiles.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{sep}p{}={:.3}", p, pct(*p));
        }
        out.push_str("\r\n");
    }
}

/// The keys a read-only command read.
fn read_keys(cmd: &Command, args: &[Bytes]) -> Vec<Bytes> {
    cmd.keys_in(args)
        .into_iter()
        .filter_map(|i| args.get(i).cloned())
        .collect()
}

/// Log the command a client ran if it took `us` microseconds or more than the threshold.
pub fn push_if_slow(
    state: &ServerState,
    client: &crate::cmd::runtime::client::ClientInfo,
    argv: &[Bytes],
    us: u64,
) {
    let (threshold, max_len) = state.observe.slowlog_settings();
    if threshold < 0 || us < threshold as u64 {
        return;
    }
    // Only what is shown is redacted and copied.
    let head = &argv[..argv.len().min(slowlog::MAX_ARGC)];
    let shown = trimmed(&redacted(head), argv.len());
    let entry = Entry {
        id: 0,
        time_s: state.clock.now_ms() / 1000,
        duration_us: us,
        args: shown,
        peer: Bytes::from(client.addr.clone()),
        name: client.name.lock().clone().unwrap_or_default(),
    };
    let mut log = state.observe.slowlog.lock();
    let id = log.next_id;
    log.next_id += 1;
    log.entries.push_front(Entry { id, ..entry });
    log.entries.truncate(max_len);
}

/// Redis's latencyAddSampleIfNeeded: record `ms` for `event` when the monitor is on and the
/// duration reaches its threshold. Samples within the same second keep the worst.
pub fn add_sample_if_needed(state: &ServerState, event: &str, ms: u64) {
    let threshold = state.observe.latency_threshold_ms();
    if threshold == 0 || ms < threshold {
        return;
    }
    let now = state.clock.now_ms() / 1000;
    let mut events = state.observe.latency.lock();
    let s = events.entry(event.to_string()).or_default();
    s.max = s.max.max(ms);
    if let Some(last) = s.samples.last_mut() {
        if last.0 == now {
            last.1 = last.1.max(ms);
            return;
        }
    }
    s.samples.push((now, ms));
    if s.samples.len() > TS_LEN {
        s.samples.remove(0);
    }
}

/// Send one executed command to every monitor.
pub fn feed(state: &ServerState, client: &Client, from_script: bool, argv: &[Bytes]) {
    let monitors = &state.observe.monitors;
    if monitors.count.load(Ordering::Relaxed) == 0 {
        return;
    }
    let us = state.clock.now_us();
    let who = if from_script {
        "lua".to_string()
    } else if client.info.is_unix_socket() {
        format!("unix:{}", client.info.addr.trim_end_matches(":0"))
    } else {
        client.info.addr.clone()
    };
    let mut line = format!(
        "+{}.{:06} [{} {who}]",
        us.div_euclid(1_000_000),
        us.rem_euclid(1_000_000),
        client.db
    );
    for a in crate::cmd::runtime::observe::slowlog::redacted(argv) {
        line.push(' ');
        line.push_str(&crate::config::repr(&a));
    }
    line.push_str("\r\n");
    let frame = Bytes::from(line);
    // Monitors are replicas in Redis's output-buffer classes.
    let (hard, soft, secs) = state.config.read().output_buffer_limit("slave");
    let limits = Limits {
        hard_bytes: hard as usize,
        soft_bytes: soft as usize,
        soft_seconds: secs as i64,
    };
    let now = state.clock.now_ms();
    // A monitor's own commands are not echoed to it: Redis would append the line after the
    // reply, but resplock writes queued frames before a reply, which would reorder them.
    for (id, q) in monitors.queues.lock().iter() {
        if *id != client.id || from_script {
            q.deliver(&frame, limits, now);
        }
    }
}

/// Feed the command a network client is about to run: the script commands feed themselves
/// before their script runs, so the script's own calls follow them.
pub fn feed_before_script(state: &ServerState, client: &Client, argv: &[Bytes]) {
    feed(state, client, false, argv);
}
