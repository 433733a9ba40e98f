//! LATENCY (Redis's latency.c): the latency events' history, latest and worst samples, the
//! doctor's report and graph, and the per-command run-time histograms. The events are kept
//! by the observation subsystem (`runtime/observe/latency.rs`, hence the shared name).

use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::observe::registry::{bucket_usec, CmdStat};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::fmt::Write as _;

pub const COMMANDS: &[Row] = &[Row::new("latency", container).subs(LATENCY_SUBS)];

const LATENCY_SUBS: &[Row] = &[
    Row::new("doctor", latency_doctor),
    Row::new("graph", latency_graph),
    Row::new("help", latency_help),
    Row::new("histogram", latency_histogram),
    Row::new("history", latency_history),
    Row::new("latest", latency_latest),
    Row::new("reset", latency_reset),
];

fn latency_history(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let events = ctx.state.observe.latency.lock();
    let name = String::from_utf8_lossy(&a[2]);
    Ok(Reply::Array(match events.get(name.as_ref()) {
        None => vec![],
        Some(s) => s
            .samples
            .iter()
            .map(|(t, ms)| Reply::Array(vec![Reply::Int(*t), Reply::Int(*ms as i64)]))
            .collect(),
    }))
}

fn latency_latest(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let events = ctx.state.observe.latency.lock();
    Ok(Reply::Array(
        events
            .iter()
            .filter_map(|(name, s)| {
                let (t, ms) = *s.samples.last()?;
                Some(Reply::Array(vec![
                    Reply::bulk_str(name),
                    Reply::Int(t),
                    Reply::Int(ms as i64),
                    Reply::Int(s.max as i64),
                ]))
            })
            .collect(),
    ))
}

fn latency_reset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut events = ctx.state.observe.latency.lock();
    if a.len() == 2 {
        let n = events.len();
        events.clear();
        return Ok(Reply::Int(n as i64));
    }
    let mut n = 0;
    for e in &a[2..] {
        if events.remove(String::from_utf8_lossy(e).as_ref()).is_some() {
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

fn latency_doctor(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let events = ctx.state.observe.latency.lock();
    let threshold = ctx.state.config.read().latency_monitor_threshold;
    let mut r = String::new();
    if events.is_empty() && threshold == 0 {
        r.push_str("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n");
    } else if events.is_empty() {
        r.push_str("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n");
    } else {
        r.push_str("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n");
        for (i, (name, s)) in events.iter().enumerate() {
            let n = s.samples.len().max(1) as u64;
            let avg = s.samples.iter().map(|x| x.1).sum::<u64>() / n;
            let mad = s.samples.iter().map(|x| x.1.abs_diff(avg)).sum::<u64>() / n;
            let period = match (s.samples.first(), s.samples.last()) {
                (Some(a), Some(b)) => (b.0 - a.0) as f64,
                _ => 0.0,
            };
            let _ = writeln!(
                r,
                "{}. {name}: {} latency spikes (average {avg}ms, mean deviation {mad}ms, period {:.2} sec). Worst all time event {}ms.",
                i + 1,
                s.samples.len(),
                period / n as f64,
                s.max
            );
        }
        r.push_str("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n");
    }
    Ok(Reply::Verbatim(Bytes::from(r)))
}

fn latency_graph(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let events = ctx.state.observe.latency.lock();
    let name = String::from_utf8_lossy(&a[2]).into_owned();
    let Some(s) = events.get(&name) else {
        return Err(crate::error::err(format!(
            "ERR No samples available for event '{name}'"
        )));
    };
    let now = ctx.state.clock.now_ms() / 1000;
    let max = s.samples.iter().map(|x| x.1).max().unwrap_or(0);
    let min = s.samples.iter().map(|x| x.1).min().unwrap_or(0);
    let mut g = format!(
        "{name} - high {max} ms, low {min} ms (all time high {} ms)\n{}\n",
        s.max,
        "-".repeat(80)
    );
    // One column per sample, four rows of bars, then the age of each sample.
    const ROWS: u64 = 4;
    for row in (1..=ROWS).rev() {
        for (_, ms) in &s.samples {
            let h = if max == 0 {
                0
            } else {
                (ms * ROWS).div_ceil(max)
            };
            g.push(if h >= row { '#' } else { ' ' });
        }
        g.push('\n');
    }
    for (t, _) in &s.samples {
        let el = now - t;
        let label = if el < 60 {
            format!("{el}s")
        } else if el < 3600 {
            format!("{}m", el / 60)
        } else if el < 86400 {
            format!("{}h", el / 3600)
        } else {
            format!("{}d", el / 86400)
        };
        g.push(label.chars().next().unwrap_or(' '));
    }
    g.push('\n');
    Ok(Reply::Verbatim(Bytes::from(g)))
}

/// One command's histogram: `calls N histogram_usec {bucket: cumulative count}`.
fn histogram_of(s: &CmdStat) -> Reply {
    let mut cum = 0;
    let mut buckets = Vec::new();
    for (i, n) in s.buckets.iter().enumerate() {
        if *n > 0 {
            cum += n;
            buckets.push((Reply::Int(bucket_usec(i) as i64), Reply::Int(cum as i64)));
        }
    }
    Reply::Map(vec![
        (Reply::bulk_static("calls"), Reply::Int(s.calls as i64)),
        (Reply::bulk_static("histogram_usec"), Reply::Map(buckets)),
    ])
}

fn latency_histogram(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let stats = crate::cmd::runtime::observe::cmdstats(ctx.state);
    let with_data = |name: &str| stats.get(name).filter(|s| s.calls > 0);
    let mut out = Vec::new();
    if a.len() == 2 {
        for (name, s) in stats.iter().filter(|(_, s)| s.calls > 0) {
            out.push((Reply::bulk_str(name), histogram_of(s)));
        }
        return Ok(Reply::Map(out));
    }
    for arg in &a[2..] {
        let asked = String::from_utf8_lossy(arg).to_ascii_lowercase();
        // A container names all its subcommands; `client|id` one of them.
        let Some(cmd) = ctx
            .state
            .commands
            .lookup(asked.split('|').next().unwrap_or("").as_bytes())
        else {
            continue;
        };
        if asked.contains('|') || cmd.subcommands.is_empty() {
            let full = if asked.contains('|') {
                asked.clone()
            } else {
                cmd.name.to_string()
            };
            if let Some(s) = with_data(&full) {
                out.push((Reply::bulk_str(&full), histogram_of(s)));
            }
        } else {
            for sub in cmd.subcommands {
                let full = format!("{}|{}", cmd.name, sub.name);
                if let Some(s) = with_data(&full) {
                    out.push((Reply::bulk_str(&full), histogram_of(s)));
                }
            }
        }
    }
    Ok(Reply::Map(out))
}

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

fn latency_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(LATENCY_HELP))
}
