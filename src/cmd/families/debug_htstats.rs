//! DEBUG HTSTATS and HTSTATS-KEY: Redis's dictGetStats text for a database's key and expiry
//! tables and for a value kept in a hash table. resplock's tables are not Redis's dict (a
//! database is 64 shards of open-addressed indexes), so the figures are those of the dict
//! Redis would have for the same elements: its size (a power of two, at least 4, grown when
//! full), the element count, and the chains that size gives when each element is hashed
//! into it (with resplock's hash, not Redis's seeded SipHash, so which slots collide differs
//! as it does between two redis-server runs). Redis's incremental rehashing is not modelled:
//! there is never a "rehashing target" table.

use crate::cmd::runtime::state::Ctx;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, Value};
use crate::reply::Reply;
use bytes::Bytes;
use std::hash::Hasher;

/// Chain lengths counted one by one (Redis's DICT_STATS_VECTLEN); longer ones share the last.
const VECTLEN: usize = 50;

/// The size of the table Redis's dict has after `n` insertions (`_dictExpandIfNeeded`).
fn table_size(n: usize) -> usize {
    n.next_power_of_two().max(4)
}

fn hash(member: &[u8]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    h.write(member);
    h.finish()
}

/// dictGetStats for the main table of a dict holding elements with these hashes.
fn stats(hashes: &[u64]) -> String {
    let n = hashes.len();
    if n == 0 {
        return "Hash table 0 stats (main hash table):\n\
                No stats available for empty dictionaries\n"
            .to_string();
    }
    let size = table_size(n);
    let mut chains = vec![0u32; size];
    for h in hashes {
        chains[(*h as usize) & (size - 1)] += 1;
    }
    let mut vector = [0u64; VECTLEN];
    let (mut slots, mut max, mut total) = (0u64, 0u64, 0u64);
    for &len in &chains {
        let len = u64::from(len);
        vector[(len as usize).min(VECTLEN - 1)] += 1;
        if len == 0 {
            continue;
        }
        slots += 1;
        max = max.max(len);
        total += len;
    }
    // Redis divides as C floats.
    let mut out = format!(
        "Hash table 0 stats (main hash table):\n table size: {size}\n number of elements: {n}\n \
         different slots: {slots}\n max chain length: {max}\n avg chain length (counted): \
         {:.2}\n avg chain length (computed): {:.2}\n Chain length distribution:\n",
        f64::from(total as f32 / slots as f32),
        f64::from(n as f32 / slots as f32),
    );
    for (i, &c) in vector.iter().enumerate().take(VECTLEN - 1) {
        if c > 0 {
            out.push_str(&format!(
                "   {i}: {c} ({:.2}%)\n",
                f64::from(c as f32 / size as f32 * 100.0)
            ));
        }
    }
    out
}

/// DEBUG HTSTATS `dbid`: the key table, then the expiry table, of one database.
pub fn htstats(ctx: &mut Ctx, dbid: &[u8]) -> Result<Reply, RedisError> {
    let id = crate::cmd::base::args::int(dbid)?;
    let Some(db) = usize::try_from(id)
        .ok()
        .filter(|&i| i < ctx.state.keyspace.databases())
    else {
        return Err(RedisError::new(error::OUT_OF_RANGE_DB));
    };
    let mut keys = Vec::new();
    let mut expiring = Vec::new();
    {
        let mut all = ctx.state.keyspace.db(db).lock_all();
        for shard in all.shards() {
            for (k, e) in shard.map.iter() {
                let h = hash(k);
                keys.push(h);
                if e.expires_at() != 0 {
                    expiring.push(h);
                }
            }
        }
    }
    let text = format!(
        "[Dictionary HT]\n{}[Expires HT]\n{}",
        stats(&keys),
        stats(&expiring)
    );
    Ok(Reply::Verbatim(Bytes::from(text)))
}

/// The hashes of a value's hash-table members, if Redis keeps it in a dict: a hash or set
/// in its hashtable encoding, a sorted set as a skiplist (its member -> score dict).
fn members(e: &Entry) -> Option<Vec<u64>> {
    match (&e.value, e.encoding()) {
        (Value::Hash(h), "hashtable") => Some(h.iter().map(|(f, _)| hash(f)).collect()),
        (Value::Set(s), "hashtable") => Some(s.iter().map(|m| hash(&m)).collect()),
        (Value::ZSet(z), "skiplist") => Some(z.iter().map(|(m, _)| hash(m)).collect()),
        _ => None,
    }
}

/// DEBUG HTSTATS-KEY `key`: the stats of the hash table a value is kept in.
pub fn htstats_key(ctx: &mut Ctx, key: &[u8]) -> Result<Reply, RedisError> {
    let found = ctx
        .db()
        .lock(key)
        .peek(key, ctx.now)
        .map(|e| members(e).map(|h| stats(&h)));
    match found {
        None => Err(RedisError::new(error::NO_SUCH_KEY)),
        Some(None) => Err(RedisError::new(error::NOT_HASH_TABLE)),
        Some(Some(text)) => Ok(Reply::Verbatim(Bytes::from(text))),
    }
}
