//! Whole-keyspace operations for the test control surface: a full expiry sweep (so expiry
//! happens when a test moves the clock, not up to a cron round later), and snapshots, copies
//! of every database taken under the server lock, that a simulated restart loads back (a
//! failover that lost the writes made since).

use super::{Entry, Keyspace};
use bytes::Bytes;

/// A copy of every database's keys, values and expiry times.
///
/// ```
/// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// server.db(0).set("lock:a", "owner-1");
/// let snap: std::sync::Arc<resplock::Snapshot> = server.snapshot();
/// server.db(0).set("lock:b", "owner-2");
/// server.restart(resplock::Restart::From(snap)); // lock:b is lost, as in a failover
/// server.db(0).assert_missing("lock:b");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Per database, its entries (key, entry), in no particular order.
    dbs: Vec<Vec<(Bytes, Entry)>>,
}

impl Snapshot {
    /// Number of keys in all databases (expired ones not yet reclaimed included).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("a", "1");
    /// server.db(1).set("b", "2");
    /// assert_eq!(server.snapshot().len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.dbs.iter().map(Vec::len).sum()
    }

    /// No key at all.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert!(server.snapshot().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries of database `db` (none if it does not exist).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(1).set("b", "2");
    /// let snap = server.snapshot();
    /// assert_eq!(snap.db(1).len(), 1);
    /// assert_eq!(&snap.db(1)[0].0[..], b"b");
    /// assert!(snap.db(99).is_empty());
    /// ```
    pub fn db(&self, db: usize) -> &[(Bytes, Entry)] {
        self.dbs.get(db).map_or(&[], Vec::as_slice)
    }
}

impl Keyspace {
    /// Remove every key whose time ran out at `now`, in every database, and report them as
    /// expired (events, expired_keys). Looks at every key: meant for a clock a test moved,
    /// not for the ten-rounds-a-second cycle.
    pub fn expire_all(&self, now: i64) {
        let mut removed = Vec::new();
        for (dbi, db) in self.dbs.iter().enumerate() {
            for idx in 0..super::SHARDS {
                {
                    let mut g = db.acquire(idx);
                    if g.volatile == 0 {
                        continue;
                    }
                    // From the start, a budget of every entry visits each exactly once.
                    g.expire_cursor = 0;
                    let budget = g.map.len();
                    g.active_expire(budget, now, &mut removed);
                }
                self.report_expired(dbi, &removed);
                removed.clear();
            }
        }
    }

    /// Copy every database. The caller holds the server lock, so the copy is consistent.
    pub fn snapshot(&self) -> Snapshot {
        let dbs = self
            .dbs
            .iter()
            .map(|db| {
                let mut out = Vec::new();
                for s in db.shards.iter() {
                    let g = s.lock();
                    out.extend(
                        g.map
                            .iter()
                            .map(|(k, e)| (Bytes::copy_from_slice(k.as_bytes()), e.clone())),
                    );
                }
                out
            })
            .collect();
        Snapshot { dbs }
    }

    /// Replace every database's contents with `snapshot`'s (databases it lacks are emptied).
    /// No key events are raised: to clients this is a server that came back with that data.
    pub fn restore(&self, snapshot: &Snapshot) {
        for (dbi, db) in self.dbs.iter().enumerate() {
            for idx in 0..super::SHARDS {
                db.acquire(idx).clear();
            }
            for (k, e) in snapshot.db(dbi) {
                let mut g = db.lock(k);
                let volatile = e.expires_at() != 0;
                g.map.insert(k, e.clone());
                g.volatile += volatile as usize;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;

    fn put(ks: &Keyspace, db: usize, key: &str, expires_at: i64) {
        ks.db(db).lock(key.as_bytes()).insert(
            key.as_bytes(),
            Entry::with_expiry(Value::Str(Bytes::from(key.to_string())), expires_at),
        );
    }

    #[test]
    fn a_restored_snapshot_has_the_keys_of_its_time_and_only_those() {
        let ks = Keyspace::new(2);
        put(&ks, 0, "a", 0);
        put(&ks, 1, "b", 500);
        let snap = ks.snapshot();
        put(&ks, 0, "later", 0);
        ks.restore(&snap);
        assert_eq!(ks.db(0).len(), 1);
        assert!(ks.db(0).lock(b"a").contains(b"a", 0));
        assert!(!ks.db(0).lock(b"later").contains(b"later", 0));
        assert_eq!(ks.db(1).volatile(), 1);
        ks.restore(&Snapshot::default());
        assert!(ks.db(0).is_empty() && ks.db(1).is_empty());
    }

    #[test]
    fn expire_all_removes_every_expired_key_at_once() {
        let ks = Keyspace::new(1);
        for i in 0..5000 {
            put(&ks, 0, &format!("k{i}"), if i % 2 == 0 { 100 } else { 0 });
        }
        ks.expire_all(101);
        assert_eq!(ks.db(0).len(), 2500);
        assert_eq!(ks.db(0).volatile(), 0);
        assert_eq!(
            ks.expired_keys.load(std::sync::atomic::Ordering::Relaxed),
            2500
        );
    }
}
