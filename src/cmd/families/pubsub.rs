//! Pub/sub commands: (P|S)SUBSCRIBE, (P|S)UNSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB.
//!
//! Subscribe and unsubscribe answer with one frame per channel. They queue every frame on the
//! client's push queue and return [`Reply::NoReply`]: a confirmation is queued before the
//! channel is registered, so a message published to it right after can never overtake its
//! confirmation (Redis, single-threaded, guarantees the same order).

use crate::cmd::base::flags::*;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error;
use crate::pubsub::Kind;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Row] = &[
    Row::new("subscribe", subscribe).flags(SUBSCRIBED_OK | NEEDS_CONNECTION),
    Row::new("unsubscribe", unsubscribe).flags(SUBSCRIBED_OK),
    Row::new("psubscribe", psubscribe).flags(SUBSCRIBED_OK | NEEDS_CONNECTION),
    Row::new("punsubscribe", punsubscribe).flags(SUBSCRIBED_OK),
    Row::new("ssubscribe", ssubscribe).flags(SUBSCRIBED_OK | NEEDS_CONNECTION),
    Row::new("sunsubscribe", sunsubscribe).flags(SUBSCRIBED_OK),
    Row::new("publish", publish).flags(MAY_REPLICATE),
    Row::new("spublish", spublish).flags(MAY_REPLICATE),
    Row::new("pubsub", crate::cmd::runtime::table::container).subs(PUBSUB_SUBS),
];

const PUBSUB_SUBS: &[Row] = &[
    Row::new("channels", pubsub_channels),
    Row::new("numsub", pubsub_numsub),
    Row::new("numpat", pubsub_numpat),
    Row::new("shardchannels", pubsub_shardchannels),
    Row::new("shardnumsub", pubsub_shardnumsub),
    Row::new("help", pubsub_help),
];

/// `[kind, name-or-nil, count]` as a push frame (an array in RESP2).
fn frame(kind: &'static str, name: Reply, count: usize) -> Reply {
    Reply::Push(vec![
        Reply::bulk_static(kind),
        name,
        Reply::Int(count as i64),
    ])
}

/// Mirror the client's subscription counts where CLIENT LIST (and the subscribed-mode check)
/// read them.
fn sync_counts(ctx: &Ctx) {
    let s = &ctx.client.pubsub;
    let i = &ctx.client.info;
    i.subscriptions.store(s.channels.len(), Ordering::Relaxed);
    i.pattern_subscriptions
        .store(s.patterns.len(), Ordering::Relaxed);
    i.shard_subscriptions
        .store(s.shard_channels.len(), Ordering::Relaxed);
}

/// Redis's clientSubscriptionsCount: channels plus patterns (shard channels count apart).
fn count(ctx: &Ctx) -> usize {
    ctx.client.pubsub.channels.len() + ctx.client.pubsub.patterns.len()
}

fn shard_count(ctx: &Ctx) -> usize {
    ctx.client.pubsub.shard_channels.len()
}

fn subscribe_kind(ctx: &mut Ctx, a: &[Bytes], kind: Kind) -> CmdResult {
    let (name, confirm) = match kind {
        Kind::Channel => ("subscribe", count as fn(&Ctx) -> usize),
        Kind::Shard => ("ssubscribe", shard_count as fn(&Ctx) -> usize),
    };
    for ch in &a[1..] {
        let set = match kind {
            Kind::Channel => &mut ctx.client.pubsub.channels,
            Kind::Shard => &mut ctx.client.pubsub.shard_channels,
        };
        let new = !set.contains(&ch[..]);
        let ch = Bytes::copy_from_slice(ch);
        if new {
            set.insert(ch.clone());
        }
        ctx.client
            .push
            .push_own(frame(name, Reply::Bulk(ch.clone()), confirm(ctx)));
        if new {
            ctx.state.pubsub.subscribe(kind, ch, &ctx.client.push);
        }
    }
    sync_counts(ctx);
    Ok(Reply::NoReply)
}

fn unsubscribe_kind(ctx: &mut Ctx, a: &[Bytes], kind: Kind) -> CmdResult {
    let (name, confirm) = match kind {
        Kind::Channel => ("unsubscribe", count as fn(&Ctx) -> usize),
        Kind::Shard => ("sunsubscribe", shard_count as fn(&Ctx) -> usize),
    };
    let set = match kind {
        Kind::Channel => &ctx.client.pubsub.channels,
        Kind::Shard => &ctx.client.pubsub.shard_channels,
    };
    let targets: Vec<Bytes> = if a.len() > 1 {
        a[1..].to_vec()
    } else {
        set.iter().cloned().collect()
    };
    if targets.is_empty() {
        ctx.client
            .push
            .push_own(frame(name, Reply::Nil, confirm(ctx)));
    }
    for ch in targets {
        let set = match kind {
            Kind::Channel => &mut ctx.client.pubsub.channels,
            Kind::Shard => &mut ctx.client.pubsub.shard_channels,
        };
        if set.swap_remove(&ch[..]) {
            ctx.state.pubsub.unsubscribe(kind, &ch, ctx.client.id);
        }
        let c = confirm(ctx);
        ctx.client.push.push_own(frame(name, Reply::Bulk(ch), c));
    }
    sync_counts(ctx);
    Ok(Reply::NoReply)
}

fn subscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    subscribe_kind(ctx, a, Kind::Channel)
}

fn ssubscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    subscribe_kind(ctx, a, Kind::Shard)
}

fn unsubscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    unsubscribe_kind(ctx, a, Kind::Channel)
}

fn sunsubscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    unsubscribe_kind(ctx, a, Kind::Shard)
}

fn psubscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    for p in &a[1..] {
        let new = !ctx.client.pubsub.patterns.contains(&p[..]);
        let p = Bytes::copy_from_slice(p);
        if new {
            ctx.client.pubsub.patterns.insert(p.clone());
        }
        let c = count(ctx);
        ctx.client
            .push
            .push_own(frame("psubscribe", Reply::Bulk(p.clone()), c));
        if new {
            ctx.state.pubsub.psubscribe(p, &ctx.client.push);
        }
    }
    sync_counts(ctx);
    Ok(Reply::NoReply)
}

fn punsubscribe(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let targets: Vec<Bytes> = if a.len() > 1 {
        a[1..].to_vec()
    } else {
        ctx.client.pubsub.patterns.iter().cloned().collect()
    };
    if targets.is_empty() {
        let c = count(ctx);
        ctx.client
            .push
            .push_own(frame("punsubscribe", Reply::Nil, c));
    }
    for p in targets {
        // shift_remove keeps the subscription order Redis's pattern list has.
        if ctx.client.pubsub.patterns.shift_remove(&p[..]) {
            ctx.state.pubsub.punsubscribe(&p, ctx.client.id);
        }
        let c = count(ctx);
        ctx.client
            .push
            .push_own(frame("punsubscribe", Reply::Bulk(p), c));
    }
    sync_counts(ctx);
    Ok(Reply::NoReply)
}

fn publish(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let limits = ctx.state.pubsub.limits();
    let state = ctx.state;
    // With maxmemory-clients on, each subscriber's grown output buffer is counted once this
    // command is over (Redis's evictClients after the command), or subscribers that never
    // send a command would never be evicted.
    let n = if state.client_limits.eviction_limit() != 0 {
        let mut noted = |id| state.client_limits.mark_grown(id);
        state
            .pubsub
            .publish_noting(&a[1], &a[2], limits, ctx.now, &mut noted)
    } else {
        state.pubsub.publish(&a[1], &a[2], limits, ctx.now)
    };
    if ctx.state.cluster.is_some() {
        // Every other node delivers it to its own subscribers; the count is this node's.
        crate::cmd::runtime::cluster::hooks::publish_to_others(ctx.state, &a[1], &a[2], false);
    } else {
        // Replicas deliver it to their own subscribers (never the AOF), as publishCommand's
        // forceCommandPropagation(PROPAGATE_REPL).
        ctx.force_replication();
    }
    Ok(Reply::Int(n as i64))
}

fn spublish(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let limits = ctx.state.pubsub.limits();
    let n = ctx.state.pubsub.spublish(&a[1], &a[2], limits, ctx.now);
    if ctx.state.cluster.is_some() {
        // The other nodes of this shard deliver it too.
        crate::cmd::runtime::cluster::hooks::publish_to_others(ctx.state, &a[1], &a[2], true);
    } else {
        ctx.force_replication();
    }
    Ok(Reply::Int(n as i64))
}

fn channels(ctx: &mut Ctx, a: &[Bytes], kind: Kind) -> CmdResult {
    if a.len() > 3 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let list = ctx.state.pubsub.channels(kind, a.get(2).map(|p| &p[..]));
    Ok(Reply::Array(list.into_iter().map(Reply::Bulk).collect()))
}

fn numsub(ctx: &mut Ctx, a: &[Bytes], kind: Kind) -> CmdResult {
    let mut out = Vec::with_capacity((a.len() - 2) * 2);
    for ch in &a[2..] {
        out.push(Reply::Bulk(ch.clone()));
        out.push(Reply::Int(ctx.state.pubsub.numsub(kind, ch) as i64));
    }
    Ok(Reply::Array(out))
}

fn pubsub_channels(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    channels(ctx, a, Kind::Channel)
}

fn pubsub_shardchannels(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    channels(ctx, a, Kind::Shard)
}

fn pubsub_numsub(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    numsub(ctx, a, Kind::Channel)
}

fn pubsub_shardnumsub(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    numsub(ctx, a, Kind::Shard)
}

fn pubsub_numpat(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(ctx.state.pubsub.numpat() as i64))
}

fn pubsub_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    const LINES: &[&str] = &[
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> (default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a <pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level channel(s)",
        "HELP",
        "    Prints this help.",
    ];
    Ok(Reply::Array(
        LINES
            .iter()
            .map(|l| Reply::Simple(Bytes::from_static(l.as_bytes())))
            .collect(),
    ))
}
