//! A consistency check of the keyspace's bookkeeping, for fuzzing and tests: every key sits in
//! the shard its hash picks and is found at its own slot, each shard's `volatile` count matches
//! its keys with a TTL, and no empty aggregate is stored (Redis deletes a hash, list, set or
//! sorted set when its last element goes).

use super::{Db, Keyspace, Value, SHARDS};

impl Keyspace {
    /// Check the bookkeeping described in this module; the first inconsistency found, if any.
    #[doc(hidden)]
    pub fn audit(&self) -> Result<(), String> {
        for (n, db) in self.dbs.iter().enumerate() {
            audit_db(n, db)?;
        }
        Ok(())
    }
}

fn audit_db(n: usize, db: &Db) -> Result<(), String> {
    for idx in 0..SHARDS {
        let shard = db.lock_shard(idx);
        let mut volatile = 0;
        for i in 0..shard.map.len() {
            let (key, entry) = shard.map.get_index(i).ok_or("slot vanished")?;
            let k: &[u8] = key.as_ref();
            if db.shard_of(k) != idx {
                return Err(format!("db {n}: key {k:?} is in shard {idx}, not its own"));
            }
            if shard.map.get_index_of(k) != Some(i) {
                return Err(format!("db {n}: key {k:?} at slot {i} is not found there"));
            }
            volatile += usize::from(entry.expires_at() != 0);
            let empty = match &entry.value {
                Value::Hash(h) => h.is_empty(),
                Value::List(l) => l.is_empty(),
                Value::Set(x) => x.is_empty(),
                Value::ZSet(z) => z.is_empty(),
                Value::Str(_) | Value::Stream(_) => false,
            };
            if empty {
                return Err(format!("db {n}: key {k:?} holds an empty aggregate"));
            }
        }
        if volatile != shard.volatile {
            return Err(format!(
                "db {n} shard {idx}: volatile count {} but {volatile} keys with a TTL",
                shard.volatile
            ));
        }
    }
    Ok(())
}
