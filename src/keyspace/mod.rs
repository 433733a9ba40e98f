//! The keyspace: databases of sharded `key -> Entry` maps with millisecond expiry.
//!
//! A key lives in the shard chosen by the top bits of its hash; commands that touch several
//! keys lock every shard they need in ascending order ([`Db::lock_keys`]). Callers run with
//! the command layer's server lock held, so shard mutexes are never contended; they keep each
//! shard's map independently growable and the keyspace sound on its own. Knows nothing of
//! clients, sockets or RESP.
//!
//! Each shard is a [`Map`]: an `IndexMap`-like dense entry vector (which gives the active
//! expirer a cheap rotating scan and RANDOMKEY an O(1) random pick, which a plain `HashMap`
//! cannot) with a compact u32 index and short keys stored inline, so a lock costs about as
//! much memory as in redis-server.
//!
//! Every entry also records when it was last used, or how often (Redis's LRU/LFU `lru` field:
//! [`access`]), and how a string value was made (its OBJECT ENCODING), in bits of the word that
//! holds its expiry ([`Entry`] explains the layout). Creating a value stamps it with the running
//! command's time, which the command layer sets with [`set_command_context`]; [`Shard::get`] and
//! [`Shard::get_mut`] count as accesses, [`Shard::peek`] and [`Shard::contains`] do not (Redis's
//! LOOKUP_NOTOUCH, for TYPE, TTL, EXISTS, OBJECT).

pub mod access;
mod audit;
mod capture;
mod key;
mod map;
mod scan;
mod snapshot;
mod value;

pub use access::{set_command_context, AccessPolicy};
pub use capture::{CaptureBusy, ShardSink};
pub use key::Key;
pub use map::Map;
pub use scan::{scan_by_hash, ScanPage};
pub use snapshot::Snapshot;
pub use value::{str_bytes, Entry, StrKind, Value, EMBSTR_SIZE_LIMIT};

use ahash::RandomState;
use bytes::Bytes;
use parking_lot::{Mutex, MutexGuard};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// 2^SHARD_BITS shards per database.
const SHARD_BITS: u32 = 6;
pub const SHARDS: usize = 1 << SHARD_BITS;

/// What happened to a key behind a command's back: the keyspace reports these to a hook,
/// which the pub/sub layer turns into `expired` and `new` keyspace events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyEvent {
    /// Removed because its time ran out.
    Expired,
    /// Created (Redis's dbAdd).
    New,
    /// Created with a type blocked clients pop from (a list, a sorted set, a stream), or a
    /// stream replaced or removed: raised only while some client is blocked
    /// ([`track_ready_keys`]), for the command layer to serve them.
    Ready,
}

/// Called with (db, key, event) for every [`KeyEvent`].
pub type KeyEventHook = Box<dyn Fn(usize, &Bytes, KeyEvent) + Send + Sync>;

thread_local! {
    /// Key events raised on this thread and not yet reported, with their db. Handlers run
    /// synchronously, so the command that caused them reports them (through
    /// [`Keyspace::report_pending`]) before raising its own events, as Redis does.
    static PENDING: std::cell::RefCell<Vec<(usize, Bytes, KeyEvent)>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Whether new keys are reported on this thread (set per command: only when someone
    /// listens for `new` events, since it costs a copy of every created key).
    static TRACK_NEW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The longest lazy-expiry removal on this thread since [`take_slowest_lazy_delete`]
    /// (Redis's `expire-del` latency event, sampled after each command).
    static SLOWEST_LAZY_DEL: std::cell::Cell<Duration> = const { std::cell::Cell::new(Duration::ZERO) };
    /// Whether new keys that can serve blocked pops are reported as [`KeyEvent::Ready`] on
    /// this thread (set per command: only while some client is blocked).
    static TRACK_READY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether expired keys are kept (read as missing, not removed) on this thread: set per
    /// command while the dataset must stay constant (Redis keeps it so during a client pause).
    static KEEP_EXPIRED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether expiry is ignored altogether on this thread: a replica applying its master's
    /// stream sees every key the master sent as live (the master decides when keys expire
    /// and sends their deletion).
    static IGNORE_EXPIRY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The running command's time (Unix ms, 0: no command) and the longest TTL it gave a key
    /// so far ([`watch_ttls`], [`take_longest_ttl`]): stop-writes-after-restart's `auto`.
    static LONGEST_TTL: std::cell::Cell<(i64, i64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Measure the TTLs the command this thread runs next (at Unix ms `now`) gives keys, from
/// zero: the command layer calls it before each command.
pub fn watch_ttls(now: i64) {
    LONGEST_TTL.with(|t| t.set((now, 0)));
}

/// The longest TTL (ms) a key was given since [`watch_ttls`] (0: none), and stop measuring.
pub fn take_longest_ttl() -> i64 {
    LONGEST_TTL.with(|t| t.replace((0, 0)).1)
}

/// A key got the expiry time `at` (Unix ms): remember it if it is the longest TTL the
/// running command gave. Loads (no command running) are not measured.
#[inline]
fn note_expiry(at: i64) {
    LONGEST_TTL.with(|t| {
        let (now, longest) = t.get();
        if now != 0 && at - now > longest {
            t.set((now, at - now));
        }
    });
}

/// The longest removal lazy expiry made on this thread since the last call, and reset it: the
/// command path samples it as the `expire-del` latency event after each command.
pub fn take_slowest_lazy_delete() -> Duration {
    SLOWEST_LAZY_DEL.with(|c| c.replace(Duration::ZERO))
}

/// Keep expired keys instead of removing them, for the commands run next on this thread.
pub fn keep_expired(on: bool) {
    KEEP_EXPIRED.with(|t| t.set(on));
}

/// Treat every key as live, expired or not, for what this thread runs next (a replica's
/// master link), until called with false.
pub fn ignore_expiry(on: bool) {
    IGNORE_EXPIRY.with(|t| t.set(on));
}

/// Whether [`ignore_expiry`] is on for this thread (a replica applying its master's stream).
pub fn expiry_ignored() -> bool {
    IGNORE_EXPIRY.with(|t| t.get())
}

/// Report (true) or not (false) the keys created by the commands this thread runs next.
pub fn track_new_keys(on: bool) {
    TRACK_NEW.with(|t| t.set(on));
}

/// Report (true) or not (false) the lists (and sorted sets) created by the commands this
/// thread runs next, as [`KeyEvent::Ready`].
pub fn track_ready_keys(on: bool) {
    TRACK_READY.with(|t| t.set(on));
}

pub struct Shard {
    pub map: Map,
    /// The database this shard belongs to (for expired-key reports).
    db: usize,
    /// Next index the active expirer looks at.
    expire_cursor: usize,
    /// Number of keys that carry a TTL (INFO keyspace's `expires=`).
    pub volatile: usize,
    /// The last capture epoch this shard was handed to a sink for ([`ShardSink`]).
    captured: u64,
}

impl Shard {
    fn new(db: usize, hasher: RandomState) -> Self {
        Shard {
            map: Map::with_hasher(hasher, SHARD_BITS),
            db,
            expire_cursor: 0,
            volatile: 0,
            captured: 0,
        }
    }

    /// Remove `key` if its time ran out; its index if it is (still) present afterwards, so
    /// the caller reaches the entry without hashing the key again.
    fn live_index(&mut self, key: &[u8], now: i64) -> Option<usize> {
        let i = self.map.get_index_of(key);
        self.live_or_expire(i, now)
    }

    /// What [`Shard::live_index`] does once the key is found at `i` (or not found).
    fn live_or_expire(&mut self, found: Option<usize>, now: i64) -> Option<usize> {
        match found {
            None => None,
            Some(i) => {
                let (_, e) = self.map.get_index(i).expect("index");
                if e.is_expired(now) && !IGNORE_EXPIRY.with(|t| t.get()) {
                    if KEEP_EXPIRED.with(|t| t.get()) {
                        return None;
                    }
                    let started = Instant::now();
                    let (k, value) = self.map.swap_remove_index(i).expect("index");
                    let signal = value.value.signals_when_gone() && TRACK_READY.with(|t| t.get());
                    drop(value);
                    let took = started.elapsed();
                    SLOWEST_LAZY_DEL.with(|c| c.set(c.get().max(took)));
                    self.volatile -= 1;
                    let k = k.into_bytes();
                    PENDING.with(|l| {
                        let mut l = l.borrow_mut();
                        if signal {
                            l.push((self.db, k.clone(), KeyEvent::Ready));
                        }
                        l.push((self.db, k, KeyEvent::Expired))
                    });
                    None
                } else {
                    Some(i)
                }
            }
        }
    }

    /// The live entry of `key`, removing it first if it has expired; counts as an access.
    pub fn get(&mut self, key: &[u8], now: i64) -> Option<&Entry> {
        self.get_mut(key, now).map(|e| &*e)
    }

    /// [`Shard::get`] for a key whose [`Db::hash_key`] is `h` (a command over many keys
    /// hashes each once, for its shard and its slot).
    pub fn get_hashed(&mut self, key: &[u8], h: u64, now: i64) -> Option<&Entry> {
        let i = self
            .map
            .get_index_of_hashed(key, h.rotate_left(SHARD_BITS));
        let i = self.live_or_expire(i, now)?;
        self.touch_at(i, now).map(|e| &*e)
    }

    /// The entry at `i`, its access counted at `now`.
    fn touch_at(&mut self, i: usize, now: i64) -> Option<&mut Entry> {
        let (_, e) = self.map.get_index_mut(i)?;
        e.touch(now, access::context().1);
        Some(e)
    }

    /// Like [`Shard::get`], for changing the entry.
    pub fn get_mut(&mut self, key: &[u8], now: i64) -> Option<&mut Entry> {
        let i = self.live_index(key, now)?;
        self.touch_at(i, now)
    }

    /// The live entry of `key` without counting an access (Redis's LOOKUP_NOTOUCH).
    pub fn peek(&mut self, key: &[u8], now: i64) -> Option<&Entry> {
        let i = self.live_index(key, now)?;
        self.map.get_index(i).map(|(_, e)| e)
    }

    /// Like [`Shard::peek`], for changing the entry (a second lookup of a key the command
    /// already counted an access to).
    pub fn peek_mut(&mut self, key: &[u8], now: i64) -> Option<&mut Entry> {
        let i = self.live_index(key, now)?;
        self.map.get_index_mut(i).map(|(_, e)| e)
    }

    pub fn contains(&mut self, key: &[u8], now: i64) -> bool {
        self.live_index(key, now).is_some()
    }

    /// Insert or replace `key`; the key's bytes are copied so the entry does not pin the
    /// request buffer it was parsed from.
    /// Replacing a value keeps the old one's LFU counter, as Redis's dbOverwrite does.
    pub fn insert(&mut self, key: &[u8], mut entry: Entry) {
        if access::context().1.lfu {
            if let Some(a) = self.map.get(key).and_then(|old| old.access()) {
                entry.set_access(a);
            }
        }
        let new_volatile = entry.expires_at() != 0;
        if new_volatile {
            note_expiry(entry.expires_at());
        }
        let serves = entry.value.serves_blocked_pops();
        let new_signals = entry.value.signals_when_gone();
        let old = self.map.insert(key, entry);
        let old_volatile = old.as_ref().is_some_and(|old| old.expires_at() != 0);
        self.volatile = self.volatile + new_volatile as usize - old_volatile as usize;
        // A stream replaced (dbOverwrite), or a key replaced by a stream (RENAME and COPY
        // REPLACE delete, then add): its blocked readers are asked again.
        if old
            .as_ref()
            .is_some_and(|o| o.value.signals_when_gone() || new_signals)
            && TRACK_READY.with(|t| t.get())
        {
            PENDING.with(|l| {
                l.borrow_mut()
                    .push((self.db, Bytes::copy_from_slice(key), KeyEvent::Ready))
            });
        }
        if old.is_none() {
            // Redis's dbAdd: the `new` event, then the key is signalled as ready.
            if TRACK_NEW.with(|t| t.get()) {
                PENDING.with(|l| {
                    l.borrow_mut()
                        .push((self.db, Bytes::copy_from_slice(key), KeyEvent::New))
                });
            }
            if serves && TRACK_READY.with(|t| t.get()) {
                PENDING.with(|l| {
                    l.borrow_mut()
                        .push((self.db, Bytes::copy_from_slice(key), KeyEvent::Ready))
                });
            }
        }
    }

    /// Remove a live key; None if it is missing or expired.
    pub fn remove(&mut self, key: &[u8], now: i64) -> Option<Entry> {
        let i = self.live_index(key, now)?;
        let (_, e) = self.map.swap_remove_index(i)?;
        if e.expires_at() != 0 {
            self.volatile -= 1;
        }
        // Readers blocked on a deleted stream are asked again (dbDelete signals streams).
        if e.value.signals_when_gone() && TRACK_READY.with(|t| t.get()) {
            PENDING.with(|l| {
                l.borrow_mut()
                    .push((self.db, Bytes::copy_from_slice(key), KeyEvent::Ready))
            });
        }
        Some(e)
    }

    /// Set or clear the expiry of a live key. Returns false if the key is missing.
    pub fn set_expiry(&mut self, key: &[u8], at: i64, now: i64) -> bool {
        let Some(i) = self.live_index(key, now) else {
            return false;
        };
        match self.map.get_index_mut(i) {
            None => false,
            Some((_, e)) => {
                let was = e.expires_at() != 0;
                e.set_expires_at(at);
                let is = at != 0;
                if is {
                    note_expiry(at);
                }
                self.volatile = self.volatile + is as usize - was as usize;
                true
            }
        }
    }

    /// Live keys (expired ones still present are skipped, not removed).
    pub fn live_keys(&self, now: i64) -> impl Iterator<Item = (&Key, &Entry)> {
        self.map.iter().filter(move |(_, e)| !e.is_expired(now))
    }

    /// Exchange this shard's keys with `other`'s (SWAPDB); each keeps its database number, so
    /// expiry keeps reporting keys in the database they are now in.
    pub fn swap_contents(&mut self, other: &mut Shard) {
        std::mem::swap(&mut self.map, &mut other.map);
        std::mem::swap(&mut self.volatile, &mut other.volatile);
        std::mem::swap(&mut self.expire_cursor, &mut other.expire_cursor);
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.map.shrink_to_fit();
        self.volatile = 0;
        self.expire_cursor = 0;
    }

    /// Look at up to `budget` entries from the rotating cursor and remove the expired ones
    /// into `out`. Returns the longest single removal (freeing a big value is what takes time:
    /// Redis's `expire-del` latency event).
    fn active_expire(&mut self, budget: usize, now: i64, out: &mut Vec<Bytes>) -> Duration {
        let mut slowest = Duration::ZERO;
        if self.volatile == 0 {
            return slowest;
        }
        let mut seen = 0;
        while seen < budget && !self.map.is_empty() {
            if self.expire_cursor >= self.map.len() {
                self.expire_cursor = 0;
            }
            let i = self.expire_cursor;
            let expired = self.map.get_index(i).map(|(_, e)| e.is_expired(now)) == Some(true);
            if expired {
                let started = Instant::now();
                // swap_remove moves the last entry into slot i: look at i again next.
                let (k, value) = self.map.swap_remove_index(i).expect("index");
                drop(value);
                slowest = slowest.max(started.elapsed());
                self.volatile -= 1;
                out.push(k.into_bytes());
            } else {
                self.expire_cursor += 1;
            }
            seen += 1;
        }
        if self.map.capacity() > 64 && self.map.len() * 4 < self.map.capacity() {
            self.map.shrink_to(self.map.len() * 2);
        }
        slowest
    }
}

pub type ShardGuard<'a> = MutexGuard<'a, Shard>;

pub struct Db {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    /// This database's number.
    index: usize,
    /// The keyspace's capture state: every lock that may change a shard passes it first.
    gate: Arc<capture::Gate>,
}

/// Several shards of one database, locked in ascending order.
pub struct MultiGuard<'a> {
    db: &'a Db,
    /// Bit i set: shard i is locked (its guard is at the position of the bit among the set
    /// ones, as the guards are taken in ascending order).
    mask: u64,
    guards: Vec<ShardGuard<'a>>,
}

/// The shard of a key whose [`Db::hash_key`] is `h`: the hash's top bits.
fn shard_index(h: u64) -> usize {
    (h >> (64 - SHARD_BITS)) as usize
}

// A multi-shard guard's set of shards is one u64.
const _: () = assert!(SHARDS <= 64);

impl<'a> MultiGuard<'a> {
    /// The shard holding `key`; it must be one of the keys this guard was built from.
    pub fn shard(&mut self, key: &[u8]) -> &mut Shard {
        self.shard_hashed(self.db.hash_key(key))
    }

    /// [`MultiGuard::shard`] for a key whose [`Db::hash_key`] is `h`.
    pub fn shard_hashed(&mut self, h: u64) -> &mut Shard {
        let idx = shard_index(h);
        assert!(
            self.mask & (1 << idx) != 0,
            "key was not locked by this command"
        );
        // A command over many keys (MGET of 100) finds each key's shard in constant time.
        let pos = (self.mask & ((1u64 << idx) - 1)).count_ones() as usize;
        &mut self.guards[pos]
    }

    /// Every locked shard (all of them when built by [`Db::lock_all`]).
    pub fn shards(&mut self) -> impl Iterator<Item = &mut Shard> + use<'_, 'a> {
        self.guards.iter_mut().map(|g| &mut **g)
    }
}

impl Db {
    fn new(db: usize, hasher: RandomState, gate: Arc<capture::Gate>) -> Self {
        Db {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard::new(db, hasher.clone())))
                .collect(),
            hasher,
            index: db,
            gate,
        }
    }

    /// Lock shard `idx`, first handing it to a running capture if it has not been yet: every
    /// path that may change a shard locks it through here.
    #[inline]
    fn acquire(&self, idx: usize) -> ShardGuard<'_> {
        let mut g = self.shards[idx].lock();
        self.gate.check(self.index, idx, &mut g);
        g
    }

    /// The 64-bit hash of `key`: its top bits pick the shard, and SCAN walks keys in its order.
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// Start loading what lookups of the keys with hashes `hashes` (from [`Db::hash_key`])
    /// will read, one link of the chain at a time for all of them: the index lines, then the
    /// slots they point at, then the values those hold. A connection calls it for a batch of
    /// pipelined requests before running them, so the batch's misses overlap each other and
    /// its requests find their keys in cache. A key whose shard another worker holds is
    /// skipped.
    ///
    /// Each shard is locked once for the whole look ahead (a try-lock and an unlock are two
    /// locked instructions: per key and step they were most of this function's time).
    pub fn prefetch_many(&self, hashes: &[u64]) {
        const MAX: usize = 16;
        let hashes = &hashes[..hashes.len().min(MAX)];
        let mut held: [Option<parking_lot::MutexGuard<'_, Shard>>; MAX] = Default::default();
        // For each key, the position of the key whose guard covers its shard.
        let mut by = [usize::MAX; MAX];
        for (k, &h) in hashes.iter().enumerate() {
            let shard = shard_index(h);
            by[k] = match hashes[..k].iter().position(|&o| shard_index(o) == shard) {
                Some(first) => by[first],
                None => match self.shards[shard].try_lock() {
                    Some(g) => {
                        held[k] = Some(g);
                        k
                    }
                    None => usize::MAX,
                },
            };
        }
        for step in 0..3 {
            for (k, &h) in hashes.iter().enumerate() {
                let Some(g) = held.get(by[k]).and_then(|g| g.as_ref()) else {
                    continue;
                };
                let h = h.rotate_left(SHARD_BITS);
                match step {
                    0 => g.map.prefetch_index(h),
                    1 => g.map.prefetch_slot(h),
                    _ => g.map.prefetch_value(h),
                }
            }
        }
    }

    pub fn shard_of(&self, key: &[u8]) -> usize {
        shard_index(self.hash_key(key))
    }

    pub fn lock(&self, key: &[u8]) -> ShardGuard<'_> {
        self.acquire(self.shard_of(key))
    }

    pub fn lock_shard(&self, idx: usize) -> ShardGuard<'_> {
        self.acquire(idx)
    }

    /// Lock the shards of all `keys` at once, in ascending shard order.
    pub fn lock_keys<'k, I: IntoIterator<Item = &'k [u8]>>(&self, keys: I) -> MultiGuard<'_> {
        // The set of shards as bits: ascending order and no duplicates without sorting.
        let mask = keys
            .into_iter()
            .fold(0u64, |m, k| m | 1 << self.shard_of(k));
        self.lock_mask(mask)
    }

    /// [`Db::lock_keys`] for keys whose [`Db::hash_key`]s the caller computed.
    pub fn lock_hashes(&self, hashes: &[u64]) -> MultiGuard<'_> {
        self.lock_mask(hashes.iter().fold(0u64, |m, &h| m | 1 << shard_index(h)))
    }

    /// Lock the shards whose bits `mask` sets, in ascending order.
    fn lock_mask(&self, mask: u64) -> MultiGuard<'_> {
        let mut guards = Vec::with_capacity(mask.count_ones() as usize);
        let mut rest = mask;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            guards.push(self.acquire(i));
            rest &= rest - 1;
        }
        MultiGuard {
            db: self,
            mask,
            guards,
        }
    }

    /// Lock every shard (KEYS, DBSIZE, FLUSHDB, RANDOMKEY: a consistent view of the whole db).
    pub fn lock_all(&self) -> MultiGuard<'_> {
        MultiGuard {
            db: self,
            mask: u64::MAX >> (64 - SHARDS),
            guards: (0..SHARDS).map(|i| self.acquire(i)).collect(),
        }
    }

    /// Number of keys, counting expired ones not yet reclaimed (as DBSIZE does in Redis).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn volatile(&self) -> usize {
        self.shards.iter().map(|s| s.lock().volatile).sum()
    }
}

pub struct Keyspace {
    dbs: Box<[Db]>,
    gate: Arc<capture::Gate>,
    event_hook: parking_lot::RwLock<Option<KeyEventHook>>,
    /// Keys removed by expiry, lazily or actively (INFO's expired_keys).
    pub expired_keys: std::sync::atomic::AtomicU64,
}

impl Keyspace {
    pub fn new(databases: usize) -> Self {
        let hasher = RandomState::new();
        let gate = Arc::new(capture::Gate::default());
        Keyspace {
            dbs: (0..databases.max(1))
                .map(|i| Db::new(i, hasher.clone(), gate.clone()))
                .collect(),
            gate,
            event_hook: parking_lot::RwLock::new(None),
            expired_keys: Default::default(),
        }
    }

    pub fn db(&self, i: usize) -> &Db {
        &self.dbs[i]
    }

    pub fn databases(&self) -> usize {
        self.dbs.len()
    }

    pub fn set_event_hook(&self, hook: KeyEventHook) {
        *self.event_hook.write() = Some(hook);
    }

    /// Report keys removed by expiry: counts them and calls the hook.
    pub fn report_expired(&self, db: usize, keys: &[Bytes]) {
        if keys.is_empty() {
            return;
        }
        self.expired_keys
            .fetch_add(keys.len() as u64, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.event_hook.read().as_ref() {
            for k in keys {
                h(db, k, KeyEvent::Expired);
            }
        }
    }

    /// Report the key events this thread raised (lazy expiry, created keys). Called by the
    /// command path before a command raises its own events and after it returns; must not run
    /// under a shard lock.
    pub fn report_pending(&self) {
        let pending = PENDING.with(|l| {
            let mut l = l.borrow_mut();
            if l.is_empty() {
                None
            } else {
                Some(std::mem::take(&mut *l))
            }
        });
        for (db, key, event) in pending.into_iter().flatten() {
            match event {
                KeyEvent::Expired => self.report_expired(db, std::slice::from_ref(&key)),
                KeyEvent::New | KeyEvent::Ready => {
                    if let Some(h) = self.event_hook.read().as_ref() {
                        h(db, &key, event);
                    }
                }
            }
        }
    }

    /// One round of active expiry over every shard: each round looks at a tenth of each shard,
    /// so at 10 rounds a second every expired key is reclaimed within about a second. Returns
    /// the longest single key removal, for the `expire-del` latency event.
    pub fn active_expire_round(&self, now: i64) -> Duration {
        let mut slowest = Duration::ZERO;
        let mut removed = Vec::new();
        for (dbi, db) in self.dbs.iter().enumerate() {
            for idx in 0..SHARDS {
                {
                    let mut g = db.acquire(idx);
                    let budget = g.map.len() / 10 + 16;
                    slowest = slowest.max(g.active_expire(budget, now, &mut removed));
                }
                self.report_expired(dbi, &removed);
                removed.clear();
            }
        }
        slowest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_expiry_reports_its_slowest_removal_for_expire_del() {
        let ks = Keyspace::new(1);
        ks.db(0).lock(b"k").insert(
            b"k",
            Entry::with_expiry(Value::Str(Bytes::from(vec![7u8; 1 << 20])), 1_000),
        );
        assert_eq!(ks.active_expire_round(500), Duration::ZERO);
        assert_eq!(ks.db(0).len(), 1);
        assert!(ks.active_expire_round(2_000) > Duration::ZERO);
        assert_eq!(ks.db(0).len(), 0);
        assert_eq!(ks.active_expire_round(3_000), Duration::ZERO);
    }

    #[test]
    fn lazy_expiry_reports_its_slowest_removal_once_for_expire_del() {
        let ks = Keyspace::new(1);
        let mut g = ks.db(0).lock(b"k");
        g.insert(
            b"k",
            Entry::with_expiry(Value::Str(Bytes::from(vec![7u8; 1 << 20])), 1_000),
        );
        take_slowest_lazy_delete();
        assert!(g.get(b"k", 500).is_some());
        assert_eq!(take_slowest_lazy_delete(), Duration::ZERO);
        assert!(g.get(b"k", 2_000).is_none());
        assert!(take_slowest_lazy_delete() > Duration::ZERO);
        assert_eq!(take_slowest_lazy_delete(), Duration::ZERO);
        drop(g);
        ks.report_pending();
    }
}
