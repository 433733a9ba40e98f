//! A shard's `key -> Entry` map: a dense array of (key, entry) plus a hash index of u32
//! positions into it (the layout of `IndexMap`, made smaller for locks).
//!
//! The dense array is what the active expirer's rotating cursor and RANDOMKEY's O(1) pick
//! need. Against `IndexMap<Bytes, Entry>` it saves, per key: the cached 8-byte hash (recomputed
//! on the rare paths that need it: swap-removal and index growth), half of each index slot
//! (u32 instead of usize), the key's own allocation when it fits inline ([`Key`]), and the
//! growth slack: the array is kept in fixed-size chunks ([`Chunks`]) instead of one vector
//! that doubles, which would leave both unused capacity and its freed predecessors (as much
//! again) in the process's memory.

use super::key::Key;
use super::value::Entry;
use ahash::RandomState;
use hashbrown::HashTable;

/// Entries per chunk (16 KiB): small enough that a shard's unused tail is negligible, big
/// enough that the chunk table stays tiny.
/// Slots per chunk: as many as fit 16 KiB, a size the allocator serves without rounding up
/// (a 72-byte slot in 256-slot chunks would be rounded from 18 KiB to 20 KiB). Indexing
/// divides by this constant, which compiles to a multiply and a shift.
const CHUNK: usize = 16384 / std::mem::size_of::<Slot>();

type Slot = (Key, Entry);

/// A vector of slots stored as full chunks of `CHUNK` plus a partly filled last one, so growing
/// never copies or frees a large buffer. The first chunk grows like a `Vec` (a shard with a few
/// keys costs a few slots); later ones are allocated whole.
#[derive(Default)]
struct Chunks {
    chunks: Vec<Vec<Slot>>,
    len: usize,
}

impl std::ops::Index<usize> for Chunks {
    type Output = Slot;
    #[inline]
    fn index(&self, i: usize) -> &Slot {
        self.get(i).expect("index out of range")
    }
}

impl std::ops::IndexMut<usize> for Chunks {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut Slot {
        self.get_mut(i).expect("index out of range")
    }
}

impl Chunks {
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn get(&self, i: usize) -> Option<&Slot> {
        if i < self.len {
            Some(&self.chunks[i / CHUNK][i % CHUNK])
        } else {
            None
        }
    }

    #[inline]
    fn get_mut(&mut self, i: usize) -> Option<&mut Slot> {
        if i < self.len {
            Some(&mut self.chunks[i / CHUNK][i % CHUNK])
        } else {
            None
        }
    }

    fn push(&mut self, s: Slot) {
        // Chunks before `len`'s are full; the one after it, if any, is an empty spare.
        let c = self.len / CHUNK;
        if c == self.chunks.len() {
            let cap = if c == 0 { 4 } else { CHUNK };
            self.chunks.push(Vec::with_capacity(cap));
        }
        let chunk = &mut self.chunks[c];
        if chunk.len() == chunk.capacity() {
            // Only the first chunk is ever short of capacity: grow it towards CHUNK.
            chunk.reserve_exact(chunk.capacity().max(4).min(CHUNK - chunk.len()));
        }
        chunk.push(s);
        self.len += 1;
    }

    fn swap_remove(&mut self, i: usize) -> Slot {
        assert!(i < self.len, "index out of range");
        self.len -= 1;
        let last = self.chunks[self.len / CHUNK]
            .pop()
            .expect("the last chunk holds the last slot");
        let out = if i == self.len {
            last
        } else {
            std::mem::replace(&mut self[i], last)
        };
        // Free an emptied chunk only once another half chunk has gone, so a shard that
        // hovers at a chunk boundary does not allocate and free a chunk on every step.
        while self.chunks.len() > 1 && self.chunks.len() * CHUNK >= self.len + CHUNK + CHUNK / 2 {
            self.chunks.pop();
        }
        out
    }

    fn iter(&self) -> impl Iterator<Item = &Slot> {
        self.chunks.iter().flatten()
    }

    /// Free the empty chunks kept past the one `len` ends in (the spare that spares a shard
    /// hovering at a boundary from reallocating).
    fn release_spare(&mut self) {
        let needed = self.len.div_ceil(CHUNK).max(1);
        self.chunks.truncate(needed);
    }

    /// Give back the first chunk's unused capacity (the only slack the chunks can have beyond
    /// one chunk).
    fn shrink_to(&mut self, min: usize) {
        if self.chunks.len() == 1 {
            self.chunks[0].shrink_to(min.min(CHUNK));
        }
    }
}

pub struct Map {
    entries: Chunks,
    index: HashTable<u32>,
    hasher: RandomState,
    /// Bits rotated out of the top of the hash: the shard is picked by the top bits of the
    /// same hash, and hashbrown matches on the top 7, which would otherwise be nearly constant.
    rotate: u32,
}

const _: () = assert!(std::mem::size_of::<(Key, Entry)>() == 72);

#[inline]
fn hash_of(hasher: &RandomState, rotate: u32, key: &[u8]) -> u64 {
    hasher.hash_one(key).rotate_left(rotate)
}

/// Start loading the last cache line of `slot` while its key is compared. A 72-byte slot
/// spans two cache lines, and a lookup reads all of it (the key, then the expiry and the
/// value): without this it waited for two misses one after the other.
#[inline(always)]
fn prefetch_tail(slot: &Slot) {
    #[cfg(target_arch = "x86_64")]
    {
        let last = (slot as *const Slot).cast::<i8>().wrapping_add(std::mem::size_of::<Slot>() - 1);
        // SAFETY: a prefetch is a hint: it reads nothing and cannot fault, and `last` is
        // inside `slot`.
        unsafe { std::arch::x86_64::_mm_prefetch(last, std::arch::x86_64::_MM_HINT_T0) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = slot;
}

fn pos(i: usize) -> u32 {
    u32::try_from(i).expect("more than 2^32 keys in one shard")
}

/// The index a full `index` grows into, built by walking the entries in their dense order.
///
/// hashbrown grows a table by walking its buckets and rehashing each element, which here means
/// reading the key at a random position of the entries: a cache miss per key, so growing a
/// shard of 16k keys stalled every client of the server for about a millisecond, and with keys
/// spread evenly all 64 shards grow within moments of each other (the p99 of a pipelined SET
/// NX PX run that creates a million keys was 1.5x redis-server's, whose rehash is
/// incremental). Reading the keys in order instead streams them. The new table has the size
/// hashbrown's own growth would choose: the same when at most half full with live entries
/// (tombstones are dropped), else the next power of two.
fn rebuilt_index(
    index: &HashTable<u32>,
    entries: &Chunks,
    hasher: &RandomState,
    rotate: u32,
) -> HashTable<u32> {
    let buckets = index.num_buckets();
    let full = if buckets < 8 {
        buckets.saturating_sub(1)
    } else {
        buckets / 8 * 7
    };
    let want = entries.len() + 1;
    let capacity = if want <= full / 2 {
        full
    } else {
        want.max(full + 1)
    };
    let mut rebuilt = HashTable::with_capacity(capacity);
    for (i, (k, _)) in entries.iter().enumerate() {
        // The capacity holds every entry: the hasher is never asked to grow the table.
        rebuilt.insert_unique(hash_of(hasher, rotate, k.as_bytes()), pos(i), |_| 0);
    }
    rebuilt
}

impl Map {
    pub fn with_hasher(hasher: RandomState, rotate: u32) -> Self {
        Map {
            entries: Chunks::default(),
            index: HashTable::new(),
            hasher,
            rotate,
        }
    }

    #[inline]
    fn hash(&self, key: &[u8]) -> u64 {
        hash_of(&self.hasher, self.rotate, key)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len == 0
    }

    /// The index's capacity (the entries hold at most one chunk of slack).
    pub fn capacity(&self) -> usize {
        self.index.capacity()
    }

    pub fn get_index_of(&self, key: &[u8]) -> Option<usize> {
        let h = self.hash(key);
        let entries = &self.entries;
        self.index
            .find(h, |&i| {
                let slot = &entries[i as usize];
                prefetch_tail(slot);
                slot.0.as_bytes() == key
            })
            .map(|&i| i as usize)
    }

    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.get_index_of(key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        self.get_index_of(key).map(|i| &mut self.entries[i].1)
    }

    pub fn get_index(&self, i: usize) -> Option<(&Key, &Entry)> {
        self.entries.get(i).map(|(k, e)| (k, e))
    }

    pub fn get_index_mut(&mut self, i: usize) -> Option<(&Key, &mut Entry)> {
        self.entries.get_mut(i).map(|(k, e)| (&*k, e))
    }

    /// Insert or replace; returns the entry replaced.
    pub fn insert(&mut self, key: &[u8], entry: Entry) -> Option<Entry> {
        let h = self.hash(key);
        let Map {
            entries,
            index,
            hasher,
            rotate,
        } = self;
        if let Some(&i) = index.find(h, |&i| entries[i as usize].0.as_bytes() == key) {
            return Some(std::mem::replace(&mut entries[i as usize].1, entry));
        }
        if index.len() == index.capacity() {
            *index = rebuilt_index(index, entries, hasher, *rotate);
        }
        let i = pos(entries.len());
        index.insert_unique(h, i, |&j| hash_of(hasher, *rotate, &entries[j as usize].0));
        entries.push((Key::new(key), entry));
        None
    }

    pub fn swap_remove(&mut self, key: &[u8]) -> Option<(Key, Entry)> {
        let i = self.get_index_of(key)?;
        self.swap_remove_index(i)
    }

    /// Remove the entry at `i`, moving the last entry into its place (as `IndexMap`).
    pub fn swap_remove_index(&mut self, i: usize) -> Option<(Key, Entry)> {
        let h = self.hash(self.entries.get(i)?.0.as_bytes());
        let last = self.entries.len() - 1;
        let p = pos(i);
        match self.index.find_entry(h, |&j| j == p) {
            Ok(e) => {
                e.remove();
            }
            Err(_) => unreachable!("indexed entry missing from the index"),
        }
        if i != last {
            let hl = self.hash(self.entries[last].0.as_bytes());
            let l = pos(last);
            *self
                .index
                .find_mut(hl, |&j| j == l)
                .expect("last entry is indexed") = p;
        }
        Some(self.entries.swap_remove(i))
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Entry)> {
        self.entries.iter().map(|(k, e)| (k, e))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().map(|(_, e)| e)
    }

    pub fn clear(&mut self) {
        self.entries = Chunks::default();
        self.index = HashTable::new();
    }

    pub fn shrink_to_fit(&mut self) {
        self.shrink_to(0);
    }

    /// Give every slot and index bucket not in use back to the allocator. Eviction calls it
    /// after removing a key: maxmemory is judged by the allocator's count, and a removal that
    /// only left a free slot behind would not lower it (eviction would go on until the
    /// database was empty, as it did).
    pub fn release_slack(&mut self) {
        self.entries.release_spare();
        self.shrink_to(self.len());
    }

    pub fn shrink_to(&mut self, min: usize) {
        self.entries.shrink_to(min);
        let Map {
            entries,
            index,
            hasher,
            rotate,
        } = self;
        index.shrink_to(min, |&j| hash_of(hasher, *rotate, &entries[j as usize].0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;
    use bytes::Bytes;

    fn e(n: i64) -> Entry {
        Entry::with_expiry(Value::Str(Bytes::new()), n)
    }

    #[test]
    fn insert_get_remove_keep_index_consistent() {
        let mut m = Map::with_hasher(RandomState::new(), 6);
        let keys: Vec<Vec<u8>> = (0..2000)
            .map(|i| format!("k{i}-{}", "x".repeat(i % 40)).into_bytes())
            .collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(m.insert(k, e(i as i64)).is_none());
        }
        assert_eq!(m.insert(&keys[5], e(1005)).map(|o| o.expires_at()), Some(5));
        for (i, k) in keys.iter().enumerate().step_by(3) {
            let (rk, re) = m.swap_remove(k).expect("present");
            assert_eq!(rk.as_bytes(), &k[..]);
            assert_eq!(re.expires_at(), if i == 5 { 1005 } else { i as i64 });
        }
        m.shrink_to(10);
        for (i, k) in keys.iter().enumerate() {
            let got = m.get(k).map(|e| e.expires_at());
            if i % 3 == 0 {
                assert_eq!(got, None);
            } else {
                assert_eq!(got, Some(if i == 5 { 1005 } else { i as i64 }));
                let j = m.get_index_of(k).expect("present");
                assert_eq!(m.get_index(j).expect("in range").0.as_bytes(), &k[..]);
            }
        }
        assert_eq!(m.len(), keys.len() - keys.len().div_ceil(3));
        while !m.is_empty() {
            m.swap_remove_index(m.len() / 2).expect("in range");
        }
        // Hover around chunk boundaries: the spare chunk must never receive slots early.
        for round in 0..3 {
            for i in 0..(3 * CHUNK + 7) {
                m.insert(format!("r{round}-{i}").as_bytes(), e(i as i64));
            }
            for i in (0..(3 * CHUNK + 7)).step_by(2) {
                m.swap_remove(format!("r{round}-{i}").as_bytes())
                    .expect("present");
            }
        }
        for (i, (k, _)) in m.iter().enumerate() {
            assert_eq!(m.get_index_of(k), Some(i));
        }
        assert_eq!(m.iter().count(), m.len());
    }

    #[test]
    fn release_slack_gives_back_the_slots_and_buckets_removed_keys_left() {
        let mut m = Map::with_hasher(RandomState::new(), 6);
        for i in 0..200 {
            m.insert(format!("k{i}").as_bytes(), e(i));
        }
        for i in 0..190 {
            m.swap_remove(format!("k{i}").as_bytes()).expect("present");
        }
        // Removal alone keeps the capacity (a shard refilling reuses it).
        assert!(m.entries.chunks[0].capacity() >= 200);
        m.release_slack();
        assert_eq!(m.entries.chunks[0].capacity(), 10);
        assert!(m.index.capacity() < 32, "index of {}", m.index.capacity());
        for i in 190..200 {
            assert_eq!(m.get(format!("k{i}").as_bytes()).map(|e| e.expires_at()), Some(i));
        }
        // Past one chunk: the emptied spare chunk goes too.
        for i in 0..(2 * CHUNK) {
            m.insert(format!("c{i}").as_bytes(), e(0));
        }
        for i in 0..(CHUNK + 20) {
            m.swap_remove(format!("c{i}").as_bytes()).expect("present");
        }
        m.release_slack();
        assert_eq!(m.entries.chunks.len(), 1);
        assert_eq!(m.len(), CHUNK - 10);
        for (i, (k, _)) in m.iter().enumerate() {
            assert_eq!(m.get_index_of(k), Some(i));
        }
    }

    #[test]
    fn a_full_index_grows_as_hashbrown_would_and_keeps_every_key() {
        let mut m = Map::with_hasher(RandomState::new(), 6);
        let mut buckets = Vec::new();
        for i in 0..5000 {
            m.insert(format!("lock:{i}").as_bytes(), e(i));
            if buckets.last() != Some(&m.index.num_buckets()) {
                buckets.push(m.index.num_buckets());
            }
        }
        // Doubling from hashbrown's smallest table, as its own growth does.
        assert_eq!(
            buckets,
            [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
        );
        for i in 0..5000 {
            assert_eq!(
                m.get(format!("lock:{i}").as_bytes())
                    .map(|e| e.expires_at()),
                Some(i)
            );
        }
        // Mostly tombstones: a rebuild at the same size drops them instead of doubling.
        for i in 0..4500 {
            m.swap_remove(format!("lock:{i}").as_bytes())
                .expect("present");
        }
        for i in 5000..12000 {
            m.insert(format!("lock:{i}").as_bytes(), e(i));
            m.swap_remove(format!("lock:{i}").as_bytes())
                .expect("present");
        }
        assert_eq!(m.index.num_buckets(), 8192);
        assert_eq!(m.len(), 500);
        for (i, (k, _)) in m.iter().enumerate() {
            assert_eq!(m.get_index_of(k), Some(i));
        }
    }
}
