//! Client memory as Redis 7.0 counts it (getClientMemoryUsage) and client eviction
//! (maxmemory-clients, evictClients): each client's total adds its query buffer, the
//! arguments it is reading or running, its unwritten replies, its transaction, and the
//! overhead of its subscriptions, watched keys and tracking prefixes. The connection stores
//! the parts it owns as they change ([`crate::cmd::runtime::client::ClientMem`]); the total
//! of the clients that may be evicted is kept as one sum, so checking the limit costs one
//! load, and only a client over it pays for finding the biggest clients.

use crate::cmd::runtime::client::ClientInfo;
use crate::cmd::runtime::state::ServerState;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What Redis allocates for the client structure itself (zmalloc_size(c) in 7.0).
const CLIENT_STRUCT: usize = 768;
/// The reply buffer every client has (CLIENT LIST's rbs).
pub const REPLY_BUFFER: usize = 1024;
/// A pointer (an argument's robj*, a hash table slot).
const PTR: usize = 8;
/// A list node (a pattern subscription) and a hash table entry (a channel).
const LIST_NODE: usize = 24;
const DICT_ENTRY: usize = 24;
/// A watched key: its list node and its watchedKey.
const WATCHED_KEY: usize = 24 + 32;
/// A queued command's slot in the transaction (multiCmd).
const MULTI_CMD: usize = 24;
/// A node of the tracking-prefix tree (the estimate Redis adds per rax node).
const RAX_NODE: usize = 4 * PTR;

/// The overhead of a hash table of `n` entries (a client's channels): entries and slots.
fn dict_overhead(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    n * DICT_ENTRY + n.next_power_of_two().max(4) * PTR
}

/// The transaction's part: queued arguments, watched keys, the queued commands' array
/// (Redis's multiStateMemOverhead; the array starts at two slots and doubles).
fn multi_overhead(state: &ServerState, c: &ClientInfo) -> usize {
    let m = &c.extra.mem;
    let cmds = m.multi_cmds.load(Ordering::Relaxed);
    let slots = if cmds == 0 {
        0
    } else {
        cmds.next_power_of_two().max(2)
    };
    let watched = if state.watches.any() {
        state.watches.watched_by(c.id)
    } else {
        0
    };
    m.multi_argv.load(Ordering::Relaxed) + watched * WATCHED_KEY + slots * MULTI_CMD
}

/// Reply bytes waiting for the client: produced and not written, and pushes queued.
pub fn output_bytes(c: &ClientInfo) -> usize {
    let queued = c.extra.push.get().map_or(0, |p| p.pending());
    c.extra.mem.obuf.load(Ordering::Relaxed) + queued
}

/// The client's total memory (CLIENT LIST's tot-mem).
pub fn total(state: &ServerState, c: &ClientInfo) -> usize {
    let m = &c.extra.mem;
    let channels = c.subscriptions.load(Ordering::Relaxed);
    let shard = c.shard_subscriptions.load(Ordering::Relaxed);
    let patterns = c.pattern_subscriptions.load(Ordering::Relaxed);
    let prefixes = state.tracking.prefix_count(c.id);
    output_bytes(c)
        + m.qbuf_alloc.load(Ordering::Relaxed)
        + CLIENT_STRUCT
        + REPLY_BUFFER
        + m.argv_len.load(Ordering::Relaxed)
        + m.argc.load(Ordering::Relaxed) * PTR
        + multi_overhead(state, c)
        + patterns * LIST_NODE
        + dict_overhead(channels)
        + dict_overhead(shard)
        + if prefixes > 0 {
            (prefixes + 1) * RAX_NODE
        } else {
            0
        }
}

/// CLIENT LIST's multi-mem: the transaction's part.
pub fn multi_mem(c: &ClientInfo) -> usize {
    c.extra.mem.multi_argv.load(Ordering::Relaxed)
}

/// Whether maxmemory-clients may close this client (Redis's clientEvictionAllowed): normal
/// and pubsub clients, not replicas, not NO-EVICT ones, not one already closing.
fn evictable(state: &ServerState, c: &ClientInfo) -> bool {
    let replica =
        c.extra.replica.load(Ordering::Relaxed) && !c.extra.monitor.load(Ordering::Relaxed);
    state.client_limits.eviction_limit() != 0
        && !c.extra.no_evict.load(Ordering::Relaxed)
        && !replica
        && !c.kill.is_cancelled()
}

/// Count the client's current memory towards the limit (Redis's
/// updateClientMemUsageAndBucket); true when the evictable clients are now over it.
pub fn account(state: &ServerState, c: &ClientInfo) -> bool {
    let limit = state.client_limits.eviction_limit();
    if limit == 0 && c.extra.mem.counted.load(Ordering::Relaxed) == 0 {
        return false;
    }
    let now = if evictable(state, c) {
        total(state, c)
    } else {
        0
    };
    let before = c.extra.mem.counted.swap(now, Ordering::Relaxed);
    let sum = &state.client_limits.evictable_bytes;
    let after = if now >= before {
        sum.fetch_add((now - before) as u64, Ordering::Relaxed) + (now - before) as u64
    } else {
        sum.fetch_sub((before - now) as u64, Ordering::Relaxed) - (before - now) as u64
    };
    limit != 0 && after >= limit
}

/// Count the client's memory and evict clients if that put the total over the limit (`line`
/// describes a client for the log); true if this client itself was evicted.
pub fn account_and_evict(
    state: &ServerState,
    c: &ClientInfo,
    line: &dyn Fn(&ClientInfo) -> String,
) -> bool {
    if account(state, c) {
        evict(state, line);
    }
    c.kill.is_cancelled()
}

/// A client goes away: its memory no longer counts.
pub fn forget(state: &ServerState, c: &ClientInfo) {
    let before = c.extra.mem.counted.swap(0, Ordering::Relaxed);
    if before > 0 {
        state
            .client_limits
            .evictable_bytes
            .fetch_sub(before as u64, Ordering::Relaxed);
    }
}

/// Count every client afresh (maxmemory-clients or maxmemory changed: Redis's
/// applyClientMaxMemoryUsage), then evict if over the limit.
pub fn recount_all(state: &ServerState, line: &dyn Fn(&ClientInfo) -> String) {
    let clients: Vec<Arc<ClientInfo>> = state.clients.lock().values().cloned().collect();
    for c in &clients {
        account(state, c);
    }
    evict(state, line);
}

/// Redis's evictClients: while the evictable clients' memory is at or over the limit, close
/// the biggest client, logging it and counting it in INFO's evicted_clients. The evicted
/// client leaves the client list at once, as Redis frees it on the spot. `line` is the
/// client's CLIENT LIST line, which the log shows.
pub fn evict(state: &ServerState, line: &dyn Fn(&ClientInfo) -> String) {
    let limit = state.client_limits.eviction_limit();
    let sum = &state.client_limits.evictable_bytes;
    if limit == 0 || sum.load(Ordering::Relaxed) < limit {
        return;
    }
    let mut victims: Vec<(usize, Arc<ClientInfo>)> = state
        .clients
        .lock()
        .values()
        .map(|c| (c.extra.mem.counted.load(Ordering::Relaxed), c.clone()))
        .filter(|(m, _)| *m > 0)
        .collect();
    // Largest first; among equals the older connection, as Redis's buckets keep arrival order.
    victims.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    for (_, c) in victims {
        if sum.load(Ordering::Relaxed) < limit {
            return;
        }
        if c.kill.is_cancelled() {
            continue;
        }
        crate::log::notice(&format!("Evicting client: {}", line(&c).trim_end()));
        c.kill.cancel();
        state.clients.lock().remove(&c.id);
        forget(state, &c);
        state.client_limits.evicted.fetch_add(1, Ordering::Relaxed);
    }
    if sum.load(Ordering::Relaxed) >= limit {
        crate::log::warning("Over client maxmemory after evicting all evictable clients");
    }
}
