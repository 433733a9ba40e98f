//! Typed access to the keyspace for the hash, list, set, sorted-set, stream and SORT families:
//! read a value of one type (WRONGTYPE otherwise), modify it in place and delete the key once it
//! is empty (as Redis does), overwrite or delete a destination key (Redis's setKey /
//! dbDelete), and read several keys at once under one set of shard locks.
//!
//! What belongs here: the ways a family reaches a value of its type through `Ctx` (the
//! lookup, its keyspace statistics and events, the type check, the empty-key rule) and the
//! encoding limits they read from the configuration. What one family does with the value
//! stays in that family's file; what the keyspace does without a command is `crate::keyspace`.

use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::config::Config;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, Shard, Value};
use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::stream::Stream;
use crate::types::zset::{ZSet, ZSetLimits};

/// A value type a command family works on.
pub trait Typed: Sized {
    /// The value as this type, or None for another type.
    fn of(v: &Value) -> Option<&Self>;
    /// Mutable [`Typed::of`].
    fn of_mut(v: &mut Value) -> Option<&mut Self>;
    /// Wrap into a keyspace value.
    fn into_value(self) -> Value;
    /// True when the key must be deleted.
    fn empty(&self) -> bool;
}

/// `Typed` for the type a `Value` variant holds.
macro_rules! typed {
    ($t:ty, $variant:ident) => {
        impl Typed for $t {
            fn of(v: &Value) -> Option<&Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn of_mut(v: &mut Value) -> Option<&mut Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn into_value(self) -> Value {
                Value::$variant(self)
            }
            fn empty(&self) -> bool {
                self.is_empty()
            }
        }
    };
}

typed!(Set, Set);
typed!(ZSet, ZSet);
typed!(Hash, Hash);
typed!(List, List);

impl Typed for Stream {
    fn of(v: &Value) -> Option<&Self> {
        match v {
            Value::Stream(s) => Some(s),
            _ => None,
        }
    }
    fn of_mut(v: &mut Value) -> Option<&mut Self> {
        match v {
            Value::Stream(s) => Some(s),
            _ => None,
        }
    }
    fn into_value(self) -> Value {
        Value::Stream(self)
    }
    /// An empty stream stays a key: Redis never deletes a stream for having no entries.
    fn empty(&self) -> bool {
        false
    }
}

/// `WRONGTYPE Operation against a key holding the wrong kind of value`.
pub fn wrongtype() -> RedisError {
    RedisError::new(error::WRONGTYPE)
}

/// The current `set-max-intset-entries`, read per command so CONFIG SET applies at once.
pub fn intset_limit(ctx: &Ctx) -> usize {
    ctx.state.config.read().set_max_intset_entries as usize
}

/// The current `zset-max-listpack-*` settings.
pub fn zset_limits(ctx: &Ctx) -> ZSetLimits {
    limits_of(&ctx.state.config.read())
}

/// The configured hash listpack limits a hash write converts by.
pub fn hash_limits(ctx: &Ctx) -> crate::types::hash::HashLimits {
    let c = ctx.state.config.read();
    crate::types::hash::HashLimits {
        max_listpack_entries: c.hash_max_listpack_entries as usize,
        max_listpack_value: c.hash_max_listpack_value as usize,
    }
}

fn limits_of(c: &Config) -> ZSetLimits {
    ZSetLimits {
        max_listpack_entries: c.zset_max_listpack_entries as usize,
        max_listpack_value: c.zset_max_listpack_value as usize,
    }
}

/// Run `f` on the value of type `T` at `key` (None when missing); WRONGTYPE for another type.
pub fn read<T: Typed, R>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(Option<&T>) -> R,
) -> Result<R, RedisError> {
    let mut shard = ctx.db().lock(key);
    match shard.get(key, ctx.now) {
        None => Ok(f(None)),
        Some(e) => T::of(&e.value).map(|v| f(Some(v))).ok_or_else(wrongtype),
    }
}

/// [`read`] as Redis's lookupKeyRead: the lookup also counts as a keyspace hit or miss, with a
/// `keymiss` event on a miss ([`note_read`]). Commands Redis looks their key up for writing
/// (lookupKeyWrite: no stats, no event) use [`read`].
pub fn read_counted<T: Typed, R>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(Option<&T>) -> R,
) -> Result<R, RedisError> {
    let mut found = false;
    let r = read(ctx, key, |v: Option<&T>| {
        found = v.is_some();
        f(v)
    });
    // WRONGTYPE: the key was there.
    note_read(ctx, key, found || r.is_err());
    r
}

/// Account for a read lookup as Redis's lookupKeyRead does: a keyspace hit or miss, and a
/// `keymiss` event on a miss. Call it after releasing the shard lock.
pub fn note_read(ctx: &Ctx, key: &[u8], hit: bool) {
    let stats = &ctx.state.stats;
    let locked = ctx.state.lock.held_here();
    if hit {
        stats.keyspace_hits.add(1, locked);
    } else {
        stats.keyspace_misses.add(1, locked);
        ctx.notify(notify::KEY_MISS, "keymiss", key);
    }
}

/// [`note_read`] for each of `keys`, in order, all hits but those at the positions
/// `misses` lists (ascending): the hits counted at once.
pub fn note_reads(ctx: &Ctx, keys: &[bytes::Bytes], misses: &[usize]) {
    let hits = keys.len() - misses.len();
    if hits > 0 {
        let locked = ctx.state.lock.held_here();
        ctx.state.stats.keyspace_hits.add(hits as u64, locked);
    }
    for &i in misses {
        note_read(ctx, &keys[i], false);
    }
}

/// What [`modify`] and [`upsert`] did to the key beyond running `f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The key did not exist and was created.
    pub created: bool,
    /// The value became empty and the key was deleted.
    pub deleted: bool,
}

/// Run `f` on the existing value of type `T` at `key`: Ok(None) when the key is missing. A
/// value `f` leaves empty is deleted with its key.
pub fn modify<T: Typed, R>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(&mut T) -> R,
) -> Result<Option<(R, bool)>, RedisError> {
    let mut shard = ctx.db().lock(key);
    let v = match shard.get_mut(key, ctx.now) {
        None => return Ok(None),
        Some(e) => T::of_mut(&mut e.value).ok_or_else(wrongtype)?,
    };
    let r = f(v);
    let deleted = v.empty();
    if deleted {
        shard.remove(key, ctx.now);
    }
    Ok(Some((r, deleted)))
}

/// Run `f` on the value of type `T` at `key`, first creating it with `new` when missing. A
/// value left empty (a new one included) is removed again, so no empty key is ever visible.
pub fn upsert<T: Typed, R>(
    ctx: &Ctx,
    key: &[u8],
    new: impl FnOnce() -> T,
    f: impl FnOnce(&mut T) -> Result<R, RedisError>,
) -> Result<(R, Outcome), RedisError> {
    let mut shard = ctx.db().lock(key);
    let created = match shard.get(key, ctx.now) {
        None => true,
        Some(e) if T::of(&e.value).is_some() => false,
        Some(_) => return Err(wrongtype()),
    };
    if created {
        shard.insert(key, Entry::new(new().into_value()));
    }
    // The lookup above was the access (Redis looks the key up once).
    let v = shard
        .peek_mut(key, ctx.now)
        .and_then(|e| T::of_mut(&mut e.value))
        .expect("present and typed");
    let r = f(v);
    let deleted = v.empty();
    if deleted {
        shard.remove(key, ctx.now);
    }
    Ok((
        r?,
        Outcome {
            created,
            deleted: deleted && !created,
        },
    ))
}

/// Redis's setKey for a STORE destination: replace whatever `key` holds (any type, any TTL)
/// with `value`.
pub fn store(ctx: &Ctx, key: &[u8], value: Value) {
    let mut shard = ctx.db().lock(key);
    // Expire it first, so a live key is overwritten (no `new` event) and a dead one re-added.
    shard.contains(key, ctx.now);
    shard.insert(key, Entry::new(value));
}

/// Redis's dbDelete for a STORE destination whose result is empty: true if a key was there.
pub fn delete(ctx: &Ctx, key: &[u8]) -> bool {
    ctx.db().lock(key).remove(key, ctx.now).is_some()
}

/// Run `f` on the values of `keys` (None for missing keys), read together under their shard
/// locks without copying. Keys may repeat.
pub fn read_many<R>(ctx: &Ctx, keys: &[&[u8]], f: impl FnOnce(&[Option<&Value>]) -> R) -> R {
    let db = ctx.db();
    let mut guard = db.lock_keys(keys.iter().copied());
    // Expire and count the access first (needs the shards mutably; Redis's lookupKeyRead),
    // then read them all shared.
    for k in keys {
        guard.shard(k).get(k, ctx.now);
    }
    let mut order: Vec<usize> = keys.iter().map(|k| db.shard_of(k)).collect();
    order.sort_unstable();
    order.dedup();
    let shards: Vec<&Shard> = guard.shards().map(|s| &*s).collect();
    let values: Vec<Option<&Value>> = keys
        .iter()
        .map(|k| {
            let pos = order.binary_search(&db.shard_of(k)).expect("locked shard");
            shards[pos].map.get(k).map(|e| &e.value)
        })
        .collect();
    f(&values)
}
