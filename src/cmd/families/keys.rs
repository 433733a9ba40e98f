//! Generic keyspace commands: DEL, EXISTS, TYPE, the EXPIRE/TTL family, KEYS, SCAN,
//! RANDOMKEY, RENAME, COPY, MOVE. The database-wide DBSIZE, FLUSHDB, FLUSHALL and SWAPDB are
//! in [`crate::cmd::families::databases`].
//!
//! Commands that touch several keys lock all their shards at once (`lock_keys`), so they are
//! atomic; commands spanning two databases lock the lower-numbered database first, which keeps
//! lock order global (db index, then shard index) and deadlock-free.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::base::scan as scan_args;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::glob::Glob;
use crate::keyspace::{
    scan_by_hash, Db, Entry, MultiGuard, ScanPage, Shard, ShardGuard, StrKind, SHARDS,
};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("del", del),
    Row::new("unlink", del),
    Row::new("exists", exists),
    Row::new("type", type_cmd),
    Row::new("expire", expire),
    Row::new("pexpire", pexpire),
    Row::new("expireat", expireat),
    Row::new("pexpireat", pexpireat),
    Row::new("ttl", ttl),
    Row::new("pttl", pttl),
    Row::new("expiretime", expiretime),
    Row::new("pexpiretime", pexpiretime),
    Row::new("persist", persist),
    Row::new("touch", touch),
    Row::new("keys", keys),
    Row::new("scan", scan),
    Row::new("randomkey", randomkey),
    Row::new("rename", rename),
    Row::new("renamenx", renamenx),
    Row::new("copy", copy),
    Row::new("move", move_cmd),
];

fn key_refs(keys: &[Bytes]) -> impl Iterator<Item = &[u8]> {
    keys.iter().map(|k| &k[..])
}

/// Count a read lookup in INFO's keyspace_hits/keyspace_misses, as Redis's lookupKeyRead does.
pub(super) fn count_lookup(ctx: &Ctx, hit: bool) {
    let s = &ctx.state.stats;
    let locked = ctx.state.lock.held_here();
    if hit {
        s.keyspace_hits.add(1, locked);
    } else {
        s.keyspace_misses.add(1, locked);
    }
}

/// Redis raises `keymiss` for every read lookup that finds nothing.
fn notify_misses<'k>(ctx: &Ctx, missed: impl IntoIterator<Item = &'k Bytes>) {
    for k in missed {
        ctx.notify(notify::KEY_MISS, "keymiss", k);
    }
}

/// DEL and UNLINK. UNLINK (and DEL with lazyfree-lazy-user-del) leaves freeing a big value
/// to the lazy-free thread; either frees after the keys' locks are released.
fn del(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let keys = &a[1..];
    let mut deleted = Vec::new();
    let mut gone = Vec::new();
    {
        let mut g = ctx.db().lock_keys(key_refs(keys));
        for k in keys {
            if let Some(e) = g.shard(k).remove(k, ctx.now) {
                deleted.push(k);
                gone.push(e);
            }
        }
    }
    let costly = |e: &crate::keyspace::Entry| {
        e.value.free_effort() > crate::cmd::runtime::lazyfree::THRESHOLD
    };
    if gone.iter().any(costly) {
        let lazy = a[0].eq_ignore_ascii_case(b"unlink")
            || ctx
                .state
                .config
                .read()
                .get("lazyfree-lazy-user-del")
                .is_some_and(|v| v == "yes");
        for e in gone {
            if lazy {
                ctx.state.lazyfree.free(e);
            } else {
                drop(e);
            }
        }
    } else {
        drop(gone);
    }
    for k in &deleted {
        ctx.signal_modified(k);
        ctx.notify(notify::GENERIC, "del", k);
    }
    Ok(Reply::Int(deleted.len() as i64))
}

/// Live keys among `keys`, duplicates counted each time (EXISTS, TOUCH); `touch`: count as
/// accesses (TOUCH does, EXISTS does not).
fn count_existing(ctx: &Ctx, keys: &[Bytes], touch: bool) -> i64 {
    let mut missed = Vec::new();
    let mut n = 0;
    {
        let mut g = ctx.db().lock_keys(key_refs(keys));
        for k in keys {
            let hit = if touch {
                g.shard(k).get(k, ctx.now).is_some()
            } else {
                g.shard(k).contains(k, ctx.now)
            };
            count_lookup(ctx, hit);
            if hit {
                n += 1;
            } else {
                missed.push(k);
            }
        }
    }
    notify_misses(ctx, missed);
    n
}

fn exists(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(count_existing(ctx, &a[1..], false)))
}

fn touch(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(count_existing(ctx, &a[1..], true)))
}

fn type_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let t = ctx
        .db()
        .lock(key)
        .peek(key, ctx.now)
        .map(|e| e.value.type_name());
    count_lookup(ctx, t.is_some());
    if t.is_none() {
        notify_misses(ctx, [key]);
    }
    Ok(Reply::Simple(Bytes::from_static(
        t.unwrap_or("none").as_bytes(),
    )))
}

#[derive(Default)]
struct ExpireFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

/// EXPIRE's NX/XX/GT/LT flags, validated before the time argument, as Redis does.
fn parse_expire_flags(a: &[Bytes]) -> Result<ExpireFlags, RedisError> {
    let mut f = ExpireFlags::default();
    for opt in &a[3..] {
        if is(opt, "nx") {
            f.nx = true;
        } else if is(opt, "xx") {
            f.xx = true;
        } else if is(opt, "gt") {
            f.gt = true;
        } else if is(opt, "lt") {
            f.lt = true;
        } else {
            return Err(error::unsupported_option(opt));
        }
    }
    if f.nx && (f.xx || f.gt || f.lt) {
        return Err(RedisError::new(error::EXPIRE_NX_CONFLICT));
    }
    if f.gt && f.lt {
        return Err(RedisError::new(error::EXPIRE_GT_LT_CONFLICT));
    }
    Ok(f)
}

/// Redis's expireGenericCommand: `relative` adds the current time, `seconds` scales by 1000.
fn expire_generic(ctx: &mut Ctx, a: &[Bytes], relative: bool, seconds: bool) -> CmdResult {
    let name = match (relative, seconds) {
        (true, true) => "expire",
        (true, false) => "pexpire",
        (false, true) => "expireat",
        (false, false) => "pexpireat",
    };
    let f = parse_expire_flags(a)?;
    let mut when = args::int(&a[2])?;
    if seconds {
        when = when
            .checked_mul(1000)
            .ok_or_else(|| error::invalid_expire(name))?;
    }
    if relative {
        // Redis only checks the upper bound: a very negative time is simply in the past.
        when = when
            .checked_add(ctx.now)
            .ok_or_else(|| error::invalid_expire(name))?;
    }
    let key = &a[1];
    let event = {
        let mut shard = ctx.db().lock(key);
        let current = match shard.get(key, ctx.now) {
            None => return Ok(Reply::Int(0)),
            Some(e) => e.expires_at(),
        };
        // 0 means "no TTL", which Redis treats as infinite for GT and LT.
        if (f.nx && current != 0)
            || (f.xx && current == 0)
            || (f.gt && (current == 0 || when <= current))
            || (f.lt && current != 0 && when >= current)
        {
            return Ok(Reply::Int(0));
        }
        if when <= ctx.now {
            shard.remove(key, ctx.now);
            "del"
        } else {
            shard.set_expiry(key, when, ctx.now);
            "expire"
        }
    };
    // Propagated as an explicit deletion, or as PEXPIREAT with the absolute time.
    if event == "del" {
        ctx.propagate_as_del(key, "lazyfree-lazy-expire");
    } else if (relative || seconds) && ctx.propagates() {
        let mut prop = a.to_vec();
        prop[0] = Bytes::from_static(b"PEXPIREAT");
        prop[2] = Bytes::from(when.to_string());
        ctx.propagate_as(prop);
    }
    ctx.signal_modified(key);
    ctx.notify(notify::GENERIC, event, key);
    Ok(Reply::Int(1))
}

fn expire(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expire_generic(ctx, a, true, true)
}

fn pexpire(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expire_generic(ctx, a, true, false)
}

fn expireat(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expire_generic(ctx, a, false, true)
}

fn pexpireat(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expire_generic(ctx, a, false, false)
}

/// The expiry of a live key for the TTL family: None if missing, Some(0) if persistent.
fn read_expiry(ctx: &Ctx, key: &Bytes) -> Option<i64> {
    let at = ctx
        .db()
        .lock(key)
        .peek(key, ctx.now)
        .map(|e| e.expires_at());
    count_lookup(ctx, at.is_some());
    if at.is_none() {
        notify_misses(ctx, [key]);
    }
    at
}

fn ttl_generic(ctx: &Ctx, key: &Bytes, ms: bool) -> CmdResult {
    Ok(Reply::Int(match read_expiry(ctx, key) {
        None => -2,
        Some(0) => -1,
        Some(at) => {
            let left = (at - ctx.now).max(0);
            if ms {
                left
            } else {
                (left + 500) / 1000
            }
        }
    }))
}

fn ttl(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &a[1], false)
}

fn pttl(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    ttl_generic(ctx, &a[1], true)
}

fn expiretime_generic(ctx: &Ctx, key: &Bytes, ms: bool) -> CmdResult {
    Ok(Reply::Int(match read_expiry(ctx, key) {
        None => -2,
        Some(0) => -1,
        Some(at) if ms => at,
        // Redis rounds to the nearest second here too; wide arithmetic so PEXPIREAT
        // i64::MAX gives Redis's 9223372036854776 instead of overflowing.
        Some(at) => ((at as i128 + 500) / 1000) as i64,
    }))
}

fn expiretime(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expiretime_generic(ctx, &a[1], false)
}

fn pexpiretime(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    expiretime_generic(ctx, &a[1], true)
}

fn persist(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let removed = {
        let mut shard = ctx.db().lock(key);
        match shard.get(key, ctx.now) {
            Some(e) if e.expires_at() != 0 => shard.set_expiry(key, 0, ctx.now),
            _ => false,
        }
    };
    if removed {
        ctx.signal_modified(key);
        ctx.notify(notify::GENERIC, "persist", key);
    }
    Ok(Reply::Int(removed as i64))
}

fn keys(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let pattern = &a[1];
    let all = pattern.as_ref() == b"*";
    let glob = Glob::new(pattern, false);
    let mut out = Vec::new();
    let mut g = ctx.db().lock_all();
    for shard in g.shards() {
        for (k, _) in shard.live_keys(ctx.now) {
            if all || glob.matches(k) {
                out.push(Reply::Bulk(k.to_bytes()));
            }
        }
    }
    Ok(Reply::Array(out))
}

/// SCAN walks keys in hash order. A shard holds a contiguous range of hashes (its index is
/// the hash's top bits), so the cursor (the next hash to visit) also says which shard to resume
/// in, and only one shard is locked at a time.
fn scan(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut cursor = scan_args::cursor(&a[1])?;
    let o = scan_args::options(a, 2, true, usize::MAX)?;
    let db = ctx.db();
    let shard_bits = SHARDS.trailing_zeros();
    let mut shard_idx = (cursor >> (64 - shard_bits)) as usize;
    let mut visited = 0usize;
    let mut keys = Vec::new();
    let next_cursor = loop {
        let page = {
            let shard = db.lock_shard(shard_idx);
            let items = shard.map.iter().map(|(k, e)| {
                (
                    db.hash_key(k),
                    (k, e.is_expired(ctx.now), e.value.type_name()),
                )
            });
            let page = scan_by_hash(items, cursor, o.count - visited);
            ScanPage {
                cursor: page.cursor,
                items: (page.items.into_iter())
                    .map(|(k, expired, t)| (k.to_bytes(), expired, t))
                    .collect::<Vec<_>>(),
            }
        };
        visited += page.items.len();
        for (k, expired, t) in page.items {
            if let Some(p) = &o.pattern {
                if !p.matches(&k) {
                    continue;
                }
            }
            if expired {
                // A matching key found expired is deleted (and its DEL propagated), as
                // scanGenericCommand's expireIfNeeded does; the lookup removes it.
                let _ = db.lock(&k).peek(&k, ctx.now);
                continue;
            }
            if let Some(want) = &o.type_name {
                if !want.eq_ignore_ascii_case(t.as_bytes()) {
                    continue;
                }
            }
            keys.push(Reply::Bulk(k));
        }
        if page.cursor != 0 {
            break page.cursor;
        }
        shard_idx += 1;
        if shard_idx == SHARDS {
            break 0;
        }
        cursor = (shard_idx as u64) << (64 - shard_bits);
        if visited >= o.count {
            break cursor;
        }
    };
    Ok(Reply::Array(vec![
        Reply::Bulk(Bytes::from(next_cursor.to_string())),
        Reply::Array(keys),
    ]))
}

/// A random live key; expired keys met on the way are reclaimed, as Redis's dbRandomKey does.
fn randomkey(ctx: &mut Ctx, _a: &[Bytes]) -> CmdResult {
    let mut g = ctx.db().lock_all();
    let mut shards: Vec<&mut Shard> = g.shards().collect();
    for _ in 0..100 {
        let total: usize = shards.iter().map(|s| s.map.len()).sum();
        if total == 0 {
            return Ok(Reply::Nil);
        }
        let mut i = fastrand::usize(..total);
        let s = shards
            .iter_mut()
            .find(|s| {
                if i < s.map.len() {
                    true
                } else {
                    i -= s.map.len();
                    false
                }
            })
            .expect("index within total");
        let key = s.map.get_index(i).expect("index").0.to_bytes();
        if s.contains(&key, ctx.now) {
            return Ok(Reply::Bulk(key));
        }
    }
    // Almost everything is expired: fall back to a full walk.
    for s in shards {
        if let Some((k, _)) = s.live_keys(ctx.now).next() {
            return Ok(Reply::Bulk(k.to_bytes()));
        }
    }
    Ok(Reply::Nil)
}

fn rename_generic(ctx: &mut Ctx, a: &[Bytes], nx: bool) -> CmdResult {
    let (src, dst) = (&a[1], &a[2]);
    let done = {
        let mut g = ctx.db().lock_keys([&src[..], &dst[..]]);
        if g.shard(src).get(src, ctx.now).is_none() {
            return Err(RedisError::new(error::NO_SUCH_KEY));
        }
        if src == dst {
            return Ok(if nx { Reply::Int(0) } else { Reply::ok() });
        }
        if nx && g.shard(dst).contains(dst, ctx.now) {
            return Ok(Reply::Int(0));
        }
        // The entry moves whole, so the destination takes the source's TTL.
        let entry = g.shard(src).remove(src, ctx.now).expect("checked above");
        g.shard(dst).remove(dst, ctx.now);
        g.shard(dst).insert(dst, entry);
        true
    };
    if done {
        ctx.signal_modified(src);
        ctx.signal_modified(dst);
        ctx.notify(notify::GENERIC, "rename_from", src);
        ctx.notify(notify::GENERIC, "rename_to", dst);
    }
    Ok(if nx { Reply::Int(1) } else { Reply::ok() })
}

fn rename(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    rename_generic(ctx, a, false)
}

fn renamenx(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    rename_generic(ctx, a, true)
}

/// The shards of a source and a destination key, possibly in different databases.
enum Pair<'a> {
    SameDb(MultiGuard<'a>),
    TwoDbs {
        src: ShardGuard<'a>,
        dst: ShardGuard<'a>,
    },
}

impl<'a> Pair<'a> {
    /// Lock `src_key` in `src_db` and `dst_key` in `dst_db`, lower database index first.
    fn lock(
        ctx: &Ctx<'a>,
        src_db: usize,
        src_key: &[u8],
        dst_db: usize,
        dst_key: &[u8],
    ) -> Pair<'a> {
        let ks = &ctx.state.keyspace;
        let (sdb, ddb): (&'a Db, &'a Db) = (ks.db(src_db), ks.db(dst_db));
        if src_db == dst_db {
            return Pair::SameDb(sdb.lock_keys([src_key, dst_key]));
        }
        if src_db < dst_db {
            let src = sdb.lock(src_key);
            let dst = ddb.lock(dst_key);
            Pair::TwoDbs { src, dst }
        } else {
            let dst = ddb.lock(dst_key);
            let src = sdb.lock(src_key);
            Pair::TwoDbs { src, dst }
        }
    }

    fn src(&mut self, key: &[u8]) -> &mut Shard {
        match self {
            Pair::SameDb(g) => g.shard(key),
            Pair::TwoDbs { src, .. } => src,
        }
    }

    fn dst(&mut self, key: &[u8]) -> &mut Shard {
        match self {
            Pair::SameDb(g) => g.shard(key),
            Pair::TwoDbs { dst, .. } => dst,
        }
    }
}

/// A DB argument: an int, and an existing database.
fn parse_db_index(ctx: &Ctx, arg: &[u8]) -> Result<usize, RedisError> {
    let n = args::parse_i64(arg)
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or(RedisError::new(error::NOT_INTEGER))?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n < ctx.state.keyspace.databases())
        .ok_or(RedisError::new(error::DB_INDEX_OUT_OF_RANGE))
}

fn copy(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (src, dst) = (&a[1], &a[2]);
    let src_db = ctx.client.db;
    let mut dst_db = src_db;
    let mut replace = false;
    let mut args = Args::new(a, 3);
    while let Some(opt) = args.next() {
        if is(opt, "replace") {
            replace = true;
        } else if let Some(db) = args.value_of(opt, "db") {
            dst_db = parse_db_index(ctx, db)?;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if ctx.state.cluster.is_some() && (src_db != 0 || dst_db != 0) {
        return Err(RedisError::new(error::COPY_DB_IN_CLUSTER));
    }
    if src_db == dst_db && src == dst {
        return Err(RedisError::new(error::SAME_OBJECT));
    }
    let copied = {
        let mut p = Pair::lock(ctx, src_db, src, dst_db, dst);
        let entry = p.src(src).get(src, ctx.now).cloned();
        count_lookup(ctx, entry.is_some());
        match entry {
            None => None,
            Some(_) if !replace && p.dst(dst).contains(dst, ctx.now) => Some(false),
            Some(mut entry) => {
                // A copy is a new object to Redis: accessed now, whatever the source's age,
                // and never one of the shared integers.
                entry.reset_access();
                if entry.str_as_int().is_some() {
                    entry.set_str_kind(StrKind::Unshared);
                }
                p.dst(dst).remove(dst, ctx.now);
                p.dst(dst).insert(dst, entry);
                Some(true)
            }
        }
    };
    match copied {
        None => {
            notify_misses(ctx, [src]);
            Ok(Reply::Int(0))
        }
        Some(false) => Ok(Reply::Int(0)),
        Some(true) => {
            ctx.signal_modified_in(dst_db, dst);
            notify::keyspace_event(ctx.state, notify::GENERIC, "copy_to", dst, dst_db);
            Ok(Reply::Int(1))
        }
    }
}

fn move_cmd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if ctx.state.cluster.is_some() {
        return Err(RedisError::new(error::MOVE_IN_CLUSTER));
    }
    let key = &a[1];
    let src_db = ctx.client.db;
    let dst_db = parse_db_index(ctx, &a[2])?;
    if src_db == dst_db {
        return Err(RedisError::new(error::SAME_OBJECT));
    }
    {
        let mut p = Pair::lock(ctx, src_db, key, dst_db, key);
        if p.src(key).get(key, ctx.now).is_none() || p.dst(key).contains(key, ctx.now) {
            return Ok(Reply::Int(0));
        }
        let entry: Entry = p.src(key).remove(key, ctx.now).expect("checked above");
        p.dst(key).insert(key, entry);
    }
    ctx.signal_modified_in(src_db, key);
    ctx.signal_modified_in(dst_db, key);
    notify::keyspace_event(ctx.state, notify::GENERIC, "move_from", key, src_db);
    notify::keyspace_event(ctx.state, notify::GENERIC, "move_to", key, dst_db);
    Ok(Reply::Int(1))
}
