//! `maxmemory`: Redis's performEvictions and processCommand's OOM rule.
//!
//! Used memory is the allocator's count ([`crate::alloc::used_memory`], Redis's
//! zmalloc_used_memory); a process that does not count (an embedding that did not install
//! `alloc::Counting`) never reaches maxmemory. Before every command (not inside scripts) the
//! server evicts keys by the policy until used memory is under maxmemory; if it cannot
//! (`noeviction`, or nothing left to evict) a command flagged `denyoom` is refused with
//! Redis's `-OOM command not allowed when used memory > 'maxmemory'.`. A script declared with
//! flags is refused as a whole unless it has `allow-oom` or `no-writes`; a script without
//! flags (EVAL compatibility mode) is refused at its first denyoom command, as Redis does.
//!
//! Victims are chosen as Redis approximates them: `maxmemory-samples` random keys per
//! database, the best one evicted (`volatile-ttl`: nearest expiry; `*-lru`: longest idle;
//! `*-lfu`: least used; `*-random`: any). The `volatile-*` policies only consider keys with a
//! TTL. Access times for LRU/LFU come from the keyspace's access tracking when it records
//! them; until then those policies evict the first sampled key, i.e. at random.

pub mod registry;

pub use registry::{Eviction, Policy};

use crate::cmd::base::flags;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::keyspace::{Db, Entry, SHARDS};
use bytes::Bytes;
use std::sync::atomic::Ordering;

use crate::cmd::runtime::evict::registry::POOL_SIZE;

/// processCommand's maxmemory step for a command about to run (the server lock held): evict
/// as needed, then refuse `cmd` if memory is still over the limit and the command may grow
/// it. `denyoom` adds to the command's own flag (a script declared without allow-oom, an EXEC
/// of queued denyoom commands).
pub fn before_command(
    state: &ServerState,
    cmd: &Command,
    parent: Option<&Command>,
    denyoom: bool,
) -> Result<(), RedisError> {
    let ev = &state.eviction;
    if ev.maxmemory.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    let oom = perform_evictions(state);
    ev.pre_command_oom.store(oom, Ordering::Relaxed);
    let denyoom =
        denyoom || cmd.has(flags::DENYOOM) || parent.is_some_and(|p| p.has(flags::DENYOOM));
    if oom && denyoom {
        return Err(RedisError::new(error::OOM));
    }
    Ok(())
}

/// updateMaxmemory's startEvictionTimeProc: after CONFIG SET maxmemory (and the
/// transaction it may be in) ends, keys are evicted without waiting for the next command, so
/// keyspace `evicted` events and the DELs come at once. Not inline: Redis never evicts inside
/// a command or EXEC, and the DELs go out on their own after the command's effects.
pub fn maxmemory_set(state: &ServerState) {
    if state.eviction.maxmemory.load(Ordering::Relaxed) == 0 {
        return;
    }
    let Some(server) = state.persist.server.get().and_then(|w| w.upgrade()) else {
        return;
    };
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    rt.spawn(async move {
        loop {
            if let Some(held) = server.lock.lock_briefly() {
                perform_evictions(&server);
                drop(held);
                return;
            }
            server.lock.released().await;
        }
    });
}

/// processCommand's maxmemory step for a command queued in MULTI (which takes no lock, so
/// evicts nothing): refused when memory is over maxmemory and the policy cannot evict.
pub fn queuing_refused(state: &ServerState) -> bool {
    let ev = &state.eviction;
    let max = ev.maxmemory.load(Ordering::Relaxed) as usize;
    max != 0
        && ev.policy() == Policy::NoEviction
        && crate::alloc::used_memory()
            .is_some_and(|used| used.saturating_sub(not_counted_memory(state)) > max)
}

/// processCommand's maxmemory step for EVAL and friends: a script declared with flags is
/// denyoom unless it has `allow-oom` or `no-writes`; one without flags is checked command by
/// command ([`script_call_refused`]).
pub fn before_script(
    state: &ServerState,
    cmd: &Command,
    script_flags: Option<u32>,
) -> Result<(), RedisError> {
    use crate::script::script_flags as sf;
    let declared = script_flags.is_some_and(|f| f & sf::EVAL_COMPAT == 0);
    let denyoom =
        declared && script_flags.is_some_and(|f| f & (sf::ALLOW_OOM | sf::NO_WRITES) == 0);
    state
        .eviction
        .script_declared_flags
        .store(declared, Ordering::Relaxed);
    before_command(state, cmd, None, denyoom)
}

/// scriptVerifyOOM: a denyoom command called from a script without flags, before the script
/// wrote anything, while the server was out of memory when the script started.
pub fn script_call_refused(state: &ServerState, cmd: &Command, wrote: bool) -> bool {
    !state.eviction.script_declared_flags.load(Ordering::Relaxed)
        && !wrote
        && state.eviction.maxmemory.load(Ordering::Relaxed) != 0
        && state.eviction.pre_command_oom.load(Ordering::Relaxed)
        && cmd.has(flags::DENYOOM)
}

/// performEvictions: evict until used memory is under maxmemory. True when the server is
/// still over it with nothing left to evict (EVICT_FAIL); a round stopped by its bound while
/// keys remain counts as progress, as Redis's EVICT_RUNNING does.
fn perform_evictions(state: &ServerState) -> bool {
    let ev = &state.eviction;
    let max = ev.maxmemory.load(Ordering::Relaxed) as usize;
    let Some(reported) = crate::alloc::used_memory() else {
        return false;
    };
    if reported <= max {
        return false;
    }
    // getMaxmemoryState: what replicas have not been sent yet (and the AOF buffer) is left
    // out, or a slow replica would have every key evicted to make room for its own backlog.
    let used = reported.saturating_sub(not_counted_memory(state));
    if used <= max {
        return false;
    }
    // isSafeToPerformEvictions: a replica that ignores maxmemory leaves eviction to its
    // master (the deletions arrive with the stream).
    if state.replication.is_replica()
        && state
            .config
            .read()
            .get("replica-ignore-maxmemory")
            .is_some_and(|v| v == "yes")
    {
        return false;
    }
    let policy = ev.policy();
    if policy == Policy::NoEviction {
        return true;
    }
    let now = state.clock.now_ms();
    // Redis frees what was over at the start, counting only what each deletion itself gave
    // back: the effects of telling others (tracking invalidations, keyspace events) are not
    // set against it, so a deletion that makes other memory grow cannot keep the loop going.
    let to_free = used - max;
    let mut freed = 0usize;
    let mut evicted = 0;
    while freed < to_free {
        // Redis bounds one round by time (maxmemory-eviction-tenacity); a bound on keys does
        // the same job here.
        if evicted >= 1024 {
            return false;
        }
        let Some((db, key)) = pick_victim(state, policy, now) else {
            return true;
        };
        let d = state.keyspace.db(db);
        let before = crate::alloc::used_memory().unwrap_or(0);
        {
            let mut shard = d.lock(&key);
            let gone = shard.remove(&key, now);
            drop(gone);
            shard.map.release_slack();
        }
        freed += before.saturating_sub(crate::alloc::used_memory().unwrap_or(0));
        state.keyspace.report_pending();
        ev.evicted_keys.fetch_add(1, Ordering::Relaxed);
        // Redis's signalModifiedKey: WATCH fails, and tracking clients are told before the
        // reply of the command that made room.
        crate::cmd::runtime::watch::key_modified(state, db, &key);
        crate::cmd::runtime::tracking::key_modified(state, 0, &key);
        notify::keyspace_event(state, notify::EVICTED, "evicted", &key, db);
        crate::cmd::runtime::propagate::evicted(state, db, &key);
        if crate::cmd::runtime::lock_history::on(state) {
            crate::cmd::runtime::lock_history::removed(state, db, &key, true);
        }
        evicted += 1;
        // Every 16 keys, the whole count is looked at again (as Redis does with lazy
        // eviction): other threads allocate and free meanwhile, so the per-deletion deltas
        // are only an estimate.
        if evicted % 16 == 0
            && crate::alloc::used_memory()
                .unwrap_or(0)
                .saturating_sub(not_counted_memory(state))
                <= max
        {
            break;
        }
    }
    false
}

/// freeMemoryGetNotCountedMemory: the bytes maxmemory does not count, the replicas' output
/// buffers (INFO's mem_not_counted_for_evict). Each replica's stream buffer is its own here
/// (Redis shares one among the backlog and the replicas), so all of it is left out; the
/// backlog, fixed in size once created, stays counted as Redis counts it.
pub fn not_counted_memory(state: &ServerState) -> usize {
    let replicas = state.replication.replicas.lock();
    replicas
        .iter()
        .map(|r| r.pending.lock().capacity() + crate::cmd::runtime::client_mem::output_bytes(&r.info))
        .sum()
}

/// The replicas' stream buffers waiting to be written, as allocated (capacity, which the
/// allocator's count sees); what a link is writing is its client's output buffer.
pub fn replica_buffers(state: &ServerState) -> usize {
    let replicas = state.replication.replicas.lock();
    replicas.iter().map(|r| r.pending.lock().capacity()).sum()
}

/// How strongly an entry asks to be evicted (higher first), for the sampling policies.
fn score(ap: crate::keyspace::access::AccessPolicy, policy: Policy, e: &Entry, now: i64) -> u64 {
    use crate::keyspace::access;
    match policy {
        // The nearest expiry first (Redis: ULLONG_MAX - expire).
        Policy::VolatileTtl => u64::MAX - e.expires_at().max(0) as u64,
        // The longest idle first (Redis: estimateObjectIdleTime).
        Policy::AllkeysLru | Policy::VolatileLru => {
            e.access().map_or(0, |a| access::idle_ms(a, now))
        }
        // The least used first (Redis: 255 - LFUDecrAndReturn).
        Policy::AllkeysLfu | Policy::VolatileLfu => e
            .access()
            .map_or(0, |a| 255 - u64::from(access::lfu_decayed(a, now, ap))),
        _ => 0,
    }
}

/// The key to evict next: `maxmemory-samples` random keys from each database, the best
/// scored one, or for the random policies the first sampled key from the next database in
/// rotation that has one.
fn pick_victim(state: &ServerState, policy: Policy, now: i64) -> Option<(usize, Bytes)> {
    let ev = &state.eviction;
    let dbs = state.keyspace.databases();
    let volatile = policy.volatile_only();
    let samples = ev.samples.load(Ordering::Relaxed) as usize;
    let random = matches!(policy, Policy::AllkeysRandom | Policy::VolatileRandom);
    let start = ev.next_db.fetch_add(1, Ordering::Relaxed) as usize;
    let mut pool = ev.pool.lock();
    for i in 0..dbs {
        let n = (start + i) % dbs;
        let db = state.keyspace.db(n);
        for (key, s) in sample(
            db,
            volatile,
            now,
            if random { 1 } else { samples },
            policy,
            state.access_policy(),
        ) {
            if random {
                return Some((n, key));
            }
            if !pool.iter().any(|(_, d, k)| *d == n && *k == key) {
                pool.push((s, n, key));
            }
        }
    }
    pool.sort_by_key(|(s, _, _)| *s);
    if pool.len() > POOL_SIZE {
        let extra = pool.len() - POOL_SIZE;
        pool.drain(..extra);
    }
    // The best candidate still present (a pooled key may have gone since it was sampled).
    while let Some((_, n, key)) = pool.pop() {
        if state.keyspace.db(n).lock(&key).contains(&key, now) {
            return Some((n, key));
        }
    }
    None
}

/// Up to `want` random live keys of `db` with their scores; volatile keys only if asked.
fn sample(
    db: &Db,
    volatile: bool,
    now: i64,
    want: usize,
    policy: Policy,
    ap: crate::keyspace::access::AccessPolicy,
) -> Vec<(Bytes, u64)> {
    let mut out = Vec::with_capacity(want);
    let start = fastrand::usize(..SHARDS);
    // Random slots of random shards; a shard without candidates is skipped.
    let mut attempts = want * 8 + SHARDS;
    let mut idx = start;
    while out.len() < want && attempts > 0 {
        attempts -= 1;
        let shard = db.lock_shard(idx % SHARDS);
        idx += 1 + fastrand::usize(..SHARDS);
        let len = shard.map.len();
        if len == 0 || (volatile && shard.volatile == 0) {
            continue;
        }
        for _ in 0..4 {
            let (k, e) = shard
                .map
                .get_index(fastrand::usize(..len))
                .expect("index in range");
            if e.is_expired(now) || (volatile && e.expires_at() == 0) {
                continue;
            }
            out.push((k.to_bytes(), score(ap, policy, e, now)));
            break;
        }
    }
    if out.is_empty() {
        // The random probes can miss a sparse database (one key in 64 shards): walk every
        // shard once, so "nothing to evict" is only said of a database that has nothing.
        for i in 0..SHARDS {
            let shard = db.lock_shard((start + i) % SHARDS);
            let found = shard
                .map
                .iter()
                .find(|(_, e)| !(e.is_expired(now) || volatile && e.expires_at() == 0));
            if let Some((k, e)) = found {
                out.push((k.to_bytes(), score(ap, policy, e, now)));
                break;
            }
        }
    }
    out
}
