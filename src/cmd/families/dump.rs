//! DUMP, RESTORE and RESTORE-ASKING (Redis's cluster.c): a key's value as Redis's payload
//! (the RDB object, the RDB version and a CRC-64), and back. A payload from redis-server
//! restores here and the reverse; the payload format is `crate::rdb::payload`'s.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::persist;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::access;
use crate::keyspace::Entry;
use crate::rdb::payload::{self, RestoreError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

/// DUMP, RESTORE and RESTORE-ASKING (RESTORE's handler: ASKING only matters to a cluster).
pub const COMMANDS: &[Row] = &[
    Row::new("dump", dump),
    Row::new("restore", restore),
    Row::new("restore-asking", restore),
];

/// DUMP key: the payload, or nil for a missing key.
fn dump(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let value = ctx
        .db()
        .lock(key)
        .get(key, ctx.now)
        .map(|e| e.value.clone());
    let stats = &ctx.state.stats;
    match value {
        None => {
            stats.keyspace_misses.add(1, ctx.state.lock.held_here());
            ctx.notify(notify::KEY_MISS, "keymiss", key);
            Ok(Reply::Nil)
        }
        Some(v) => {
            stats.keyspace_hits.add(1, ctx.state.lock.held_here());
            let compress = persist::settings::compression(&ctx.state.config.read());
            Ok(Reply::Bulk(Bytes::from(payload::dump(&v, compress))))
        }
    }
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] (restoreCommand).
fn restore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut args = Args::new(a, 4);
    while let Some(opt) = args.next() {
        if is(opt, "replace") {
            replace = true;
        } else if is(opt, "absttl") {
            absttl = true;
        } else if let Some(v) = args.value_of(opt, "idletime").filter(|_| freq.is_none()) {
            let v = args::int(v)?;
            if v < 0 {
                return Err(RedisError::new(error::INVALID_IDLETIME));
            }
            idle = Some(v);
        } else if let Some(v) = args.value_of(opt, "freq").filter(|_| idle.is_none()) {
            let v = args::int(v)?;
            if !(0..=255).contains(&v) {
                return Err(RedisError::new(error::INVALID_FREQ));
            }
            freq = Some(v);
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    let key = &a[1];
    if !replace && ctx.db().lock(key).contains(key, ctx.now) {
        return Err(RedisError::new(error::BUSYKEY));
    }
    let mut ttl = args::int(&a[2])?;
    if ttl < 0 {
        return Err(RedisError::new(error::INVALID_TTL));
    }
    let limits = persist::settings::load_limits(&ctx.state.config.read());
    let value = match payload::restore(&a[3], &limits) {
        Ok(v) => v,
        Err(RestoreError::Footer) => return Err(RedisError::new(error::DUMP_PAYLOAD)),
        Err(RestoreError::BadData(e)) => {
            crate::log::verbose(&e.to_string());
            return Err(RedisError::new(error::BAD_DATA_FORMAT));
        }
    };
    let deleted = replace && ctx.db().lock(key).remove(key, ctx.now).is_some();
    if ttl != 0 && !absttl {
        ttl = ttl.saturating_add(ctx.now);
    }
    if ttl != 0 && ttl <= ctx.now {
        // Already expired: nothing is created, but a replaced key is gone (a DEL).
        if deleted {
            ctx.propagate_as(vec![Bytes::from_static(b"DEL"), key.clone()]);
            ctx.signal_modified(key);
            ctx.notify(notify::GENERIC, "del", key);
            ctx.state.add_dirty(1);
        }
        return Ok(Reply::ok());
    }
    let mut entry = Entry::with_expiry(value, ttl);
    let policy = ctx.state.access_policy();
    if policy.lfu {
        if let Some(f) = freq {
            entry.set_access(access::from_freq(ctx.now, f as u8));
        }
    } else if let Some(i) = idle {
        entry.set_access(access::from_idle(ctx.now, i as u64));
    }
    ctx.db().lock(key).insert(key, entry);
    if ttl != 0 && !absttl {
        // Propagated with the absolute time, so a replica or the log expires it when the
        // master does.
        let mut prop: Vec<Bytes> = a.to_vec();
        prop[2] = Bytes::from(ttl.to_string());
        prop.push(Bytes::from_static(b"ABSTTL"));
        ctx.propagate_as(prop);
    }
    ctx.signal_modified(key);
    ctx.notify(notify::GENERIC, "restore", key);
    Ok(Reply::ok())
}
