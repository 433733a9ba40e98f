//! MONITOR: every command the server runs, as one line per command in each monitoring
//! client's outbox, formatted as Redis's replicationFeedMonitors does:
//! `+1339518083.107412 [0 127.0.0.1:60866] "set" "k" "v"`. Scripts' calls show `lua` as the
//! client, clients on the unix socket `unix:PATH`. Secrets are redacted as in the slow log.

use crate::cmd::base::flags::*;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::outbox::{Limits, PushQueue};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub const COMMANDS: &[Command] =
    &[
        Command::new("monitor", 1, ADMIN | NOSCRIPT | LOADING | STALE, monitor).doc(
            "server",
            "1.0.0",
            "Listen for all requests received by the server in real time",
        ),
    ];

/// The monitoring clients' outboxes; the count lets a command skip the feed with one load.
#[derive(Default)]
pub struct Monitors {
    queues: Mutex<Vec<(u64, Arc<PushQueue>)>>,
    count: AtomicUsize,
}

impl Monitors {
    /// Stop feeding a client (it disconnected, or RESET).
    pub fn forget(&self, id: u64) {
        if self.count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut q = self.queues.lock();
        q.retain(|(c, _)| *c != id);
        self.count.store(q.len(), Ordering::Relaxed);
    }
}

fn monitor(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let info = &ctx.client.info;
    // Already monitoring: Redis ignores the command without a reply.
    if info.extra.monitor.swap(true, Ordering::Relaxed) {
        return Ok(Reply::NoReply);
    }
    let mut q = ctx.state.observe.monitors.queues.lock();
    q.push((ctx.client.id, ctx.client.push.clone()));
    ctx.state
        .observe
        .monitors
        .count
        .store(q.len(), Ordering::Relaxed);
    Ok(Reply::ok())
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
