//! MONITOR: the client's outbox joins the monitors (`runtime/observe/monitor.rs`, hence the
//! shared name), which `observe::feed` writes every command to, as one line per command:
//! `+1339518083.107412 [0 127.0.0.1:60866] "set" "k" "v"`. Scripts' calls show `lua` as the
//! client, clients on the unix socket `unix:PATH`. Secrets are redacted as in the slow log.

use crate::cmd::base::flags::*;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Row] = &[Row::new("monitor", monitor).flags(NEEDS_CONNECTION)];

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
