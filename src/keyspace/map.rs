//! A shard's `key -> Entry` map: a dense array of (key, entry) plus a hash index of
//! positions into it (the layout of `IndexMap`, made smaller for locks).
//!
//! The dense array is what the active expirer's rotating cursor and RANDOMKEY's O(1) pick
//! need. Against `IndexMap<Bytes, Entry>` it saves, per key: the cached 8-byte hash (the index
//! keeps 32 bits of it; the whole is recomputed for swap-removal), the key's own allocation
//! when it fits inline ([`Key`]), and the growth slack: the array is kept in fixed-size
//! chunks ([`Chunks`]) instead of one vector that doubles, which would leave both unused
//! capacity and its freed predecessors (as much again) in the process's memory.

use super::key::Key;
use super::value::Entry;
use ahash::RandomState;

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

/// The hash index: open addressing with linear probing over 8-byte cells, each holding the
/// upper 32 bits of the key's hash (its tag) and its position + 1 (0: empty).
///
/// It replaced hashbrown's table, whose control bytes and buckets are separate arrays: a
/// lookup read the control group, then the bucket, then the slot. Here tag and position share
/// a cell, so a lookup reads one line and then the slot, and a prefetch of the next
/// pipelined request's slot ([`Map::prefetch_slot`]) costs one line read instead of two:
/// with it, a pipelined GET took about 8% less CPU than with hashbrown's table. Growth
/// re-places cells by their stored tags, without reading a single key. Removal shifts the
/// cells after the hole back (no tombstones). At most 7/8 full, as hashbrown: a successful
/// lookup probes at most 4.5 cells on average (one or two lines, read in order); 3/4 was
/// hardly faster and cost 13 more bytes per lock. The price is memory: 8 bytes a cell instead
/// of hashbrown's 5 a bucket.
struct Index {
    cells: Box<[u64]>,
    /// log2 of the number of cells (0 with no cells).
    bits: u32,
    len: usize,
}

/// The tag the index keeps of a map hash.
#[inline]
fn tag_of(h: u64) -> u32 {
    (h >> 32) as u32
}

/// The cell a tag starts probing at, among `1 << bits` (the tag's top bits).
#[inline]
fn home(tag: u32, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (tag >> (32 - bits)) as usize
    }
}

impl Index {
    fn empty() -> Index {
        Index {
            cells: Box::default(),
            bits: 0,
            len: 0,
        }
    }

    fn with_cells(bits: u32) -> Index {
        Index {
            cells: vec![0u64; 1 << bits].into_boxed_slice(),
            bits,
            len: 0,
        }
    }

    /// The most cells it holds before it must grow.
    fn capacity(&self) -> usize {
        self.cells.len() / 8 * 7
    }

    fn mask(&self) -> usize {
        self.cells.len().wrapping_sub(1)
    }

    /// The cell holding `tag` whose position `eq` accepts.
    #[inline]
    fn find(&self, tag: u32, mut eq: impl FnMut(u32) -> bool) -> Option<usize> {
        if self.cells.is_empty() {
            return None;
        }
        let mask = self.mask();
        let mut i = home(tag, self.bits);
        loop {
            let c = self.cells[i];
            if c == 0 {
                return None;
            }
            if (c >> 32) as u32 == tag && eq(c as u32 - 1) {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    fn position(&self, cell: usize) -> u32 {
        self.cells[cell] as u32 - 1
    }

    fn set_position(&mut self, cell: usize, pos: u32) {
        self.cells[cell] = (self.cells[cell] & !0xffff_ffff) | (pos as u64 + 1);
    }

    /// Add a cell; the caller made room ([`Index::capacity`]).
    fn insert(&mut self, tag: u32, pos: u32) {
        debug_assert!(self.len < self.capacity());
        let mask = self.mask();
        let mut i = home(tag, self.bits);
        while self.cells[i] != 0 {
            i = (i + 1) & mask;
        }
        self.cells[i] = (tag as u64) << 32 | (pos as u64 + 1);
        self.len += 1;
    }

    /// Empty `cell`, moving back the cells after it that probing would no longer reach.
    fn remove(&mut self, cell: usize) {
        let mask = self.mask();
        let mut hole = cell;
        let mut j = (cell + 1) & mask;
        loop {
            let c = self.cells[j];
            if c == 0 {
                break;
            }
            let h = home((c >> 32) as u32, self.bits);
            // The cell may fill the hole when the hole lies between its home and it.
            if j.wrapping_sub(h) & mask >= j.wrapping_sub(hole) & mask {
                self.cells[hole] = c;
                hole = j;
            }
            j = (j + 1) & mask;
        }
        self.cells[hole] = 0;
        self.len -= 1;
    }

    /// The same cells in `1 << bits` cells (which must hold them).
    fn resized(&self, bits: u32) -> Index {
        let mut new = Index::with_cells(bits);
        for &c in self.cells.iter().filter(|&&c| c != 0) {
            new.insert((c >> 32) as u32, c as u32 - 1);
        }
        new
    }

    /// The fewest cells (at least 8) that hold `n` entries within the load limit.
    fn bits_for(n: usize) -> u32 {
        let mut bits = 3;
        while (1usize << bits) / 8 * 7 < n {
            bits += 1;
        }
        bits
    }
}

pub struct Map {
    entries: Chunks,
    index: Index,
    hasher: RandomState,
    /// Bits rotated out of the top of the hash: the shard is picked by the top bits of the
    /// same hash, and the index places by its top bits, which would otherwise be nearly
    /// constant within a shard.
    rotate: u32,
}

const _: () = assert!(std::mem::size_of::<(Key, Entry)>() == 72);

#[inline]
fn hash_of(hasher: &RandomState, rotate: u32, key: &[u8]) -> u64 {
    hasher.hash_one(key).rotate_left(rotate)
}

/// A hint to start loading the cache line at `p` (any address: a prefetch never faults).
#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads nothing and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
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

/// A slot's position as the index keeps it: below `u32::MAX`, since a cell holds it plus one.
fn pos(i: usize) -> u32 {
    u32::try_from(i)
        .ok()
        .filter(|&p| p < u32::MAX)
        .expect("4 billion keys in one shard")
}

impl Map {
    pub fn with_hasher(hasher: RandomState, rotate: u32) -> Self {
        Map {
            entries: Chunks::default(),
            index: Index::empty(),
            hasher,
            rotate,
        }
    }

    /// Start loading the index line where a lookup of map hash `h` starts probing.
    #[inline]
    pub fn prefetch_index(&self, h: u64) {
        if let Some(cell) = self.index.cells.get(home(tag_of(h), self.index.bits)) {
            prefetch(cell as *const u64 as *const u8);
        }
    }

    /// Start loading the value of the key with map hash `h` (see [`Value::prefetch_address`]).
    /// Reads the index and the slot: for after [`Map::prefetch_slot`] had time to load them.
    #[inline]
    pub fn prefetch_value(&self, h: u64) {
        let Some(cell) = self.index.find(tag_of(h), |_| true) else {
            return;
        };
        if let Some(slot) = self.entries.get(self.index.position(cell) as usize) {
            if let Some(p) = slot.1.value.prefetch_address() {
                prefetch(p);
                // A short string's reference count lies just before its bytes (see
                // `value::str_bytes`), maybe on the line before.
                prefetch(p.wrapping_sub(24));
            }
        }
    }

    /// Start loading the slot of the key with map hash `h` (its first tag match: nearly
    /// always the key's own).
    #[inline]
    pub fn prefetch_slot(&self, h: u64) {
        let Some(cell) = self.index.find(tag_of(h), |_| true) else {
            return;
        };
        if let Some(slot) = self.entries.get(self.index.position(cell) as usize) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch is a hint: it reads nothing and cannot fault.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    (slot as *const Slot).cast::<i8>(),
                    std::arch::x86_64::_MM_HINT_T0,
                )
            };
            prefetch_tail(slot);
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
        self.get_index_of_hashed(key, self.hash(key))
    }

    /// [`Map::get_index_of`] for a key whose map hash the caller computed (the database's
    /// hash rotated as this map rotates it: see `Db::hash_key`).
    #[inline]
    pub fn get_index_of_hashed(&self, key: &[u8], h: u64) -> Option<usize> {
        let entries = &self.entries;
        self.index
            .find(tag_of(h), |i| {
                let slot = &entries[i as usize];
                prefetch_tail(slot);
                slot.0.as_bytes() == key
            })
            .map(|cell| self.index.position(cell) as usize)
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
        let tag = tag_of(self.hash(key));
        let entries = &mut self.entries;
        if let Some(cell) = self
            .index
            .find(tag, |i| entries[i as usize].0.as_bytes() == key)
        {
            let i = self.index.position(cell) as usize;
            return Some(std::mem::replace(&mut entries[i].1, entry));
        }
        if self.index.len == self.index.capacity() {
            let bits = Index::bits_for(self.index.len + 1);
            self.index = self.index.resized(bits);
        }
        let i = pos(self.entries.len());
        self.index.insert(tag, i);
        self.entries.push((Key::new(key), entry));
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
        let cell = self
            .index
            .find(tag_of(h), |j| j == p)
            .expect("indexed entry missing from the index");
        self.index.remove(cell);
        if i != last {
            let hl = self.hash(self.entries[last].0.as_bytes());
            let l = pos(last);
            let cell = self
                .index
                .find(tag_of(hl), |j| j == l)
                .expect("last entry is indexed");
            self.index.set_position(cell, p);
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
        self.index = Index::empty();
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

    /// Shrink the slots and the index to hold at least `min` entries (and every entry held).
    pub fn shrink_to(&mut self, min: usize) {
        self.entries.shrink_to(min);
        let n = min.max(self.index.len);
        if n == 0 {
            self.index = Index::empty();
            return;
        }
        let bits = Index::bits_for(n);
        if bits < self.index.bits {
            self.index = self.index.resized(bits);
        }
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
    fn index_cells_stay_reachable_through_removals_in_crowded_runs() {
        // Few distinct tags crowd long probe runs, wrapping around the end of the cells:
        // every removal must move back what would otherwise be cut off from its home.
        let mut index = Index::with_cells(6);
        let mut model: std::collections::HashMap<u32, u32> = Default::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for pos in 0..20_000u32 {
            let r = next();
            if model.len() < index.capacity() && (r & 1 == 0 || model.is_empty()) {
                let tag = (((r >> 8) as u32 % 7) << 29) | ((r >> 40) as u32 % 3) | 0xff0;
                index.insert(tag, pos);
                model.insert(pos, tag);
            } else {
                let (&p, &tag) = model.iter().nth((r >> 16) as usize % model.len()).unwrap();
                let cell = index.find(tag, |q| q == p).expect("present");
                index.remove(cell);
                model.remove(&p);
            }
            assert_eq!(index.len, model.len());
            if pos % 97 == 0 {
                for (&p, &tag) in &model {
                    let cell = index.find(tag, |q| q == p).expect("reachable");
                    assert_eq!(index.position(cell), p);
                }
            }
        }
        let grown = index.resized(8);
        for (&p, &tag) in &model {
            assert!(grown.find(tag, |q| q == p).is_some());
        }
    }

    #[test]
    fn a_full_index_doubles_and_keeps_every_key() {
        let mut m = Map::with_hasher(RandomState::new(), 6);
        let mut buckets = Vec::new();
        for i in 0..5000 {
            m.insert(format!("lock:{i}").as_bytes(), e(i));
            if buckets.last() != Some(&m.index.cells.len()) {
                buckets.push(m.index.cells.len());
            }
        }
        // Doubling from the smallest index, kept at most 7/8 full.
        assert_eq!(
            buckets,
            [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
        );
        for i in 0..5000 {
            assert_eq!(
                m.get(format!("lock:{i}").as_bytes())
                    .map(|e| e.expires_at()),
                Some(i)
            );
        }
        // Removals leave no tombstones: inserting and removing keeps the size.
        for i in 0..4500 {
            m.swap_remove(format!("lock:{i}").as_bytes())
                .expect("present");
        }
        for i in 5000..12000 {
            m.insert(format!("lock:{i}").as_bytes(), e(i));
            m.swap_remove(format!("lock:{i}").as_bytes())
                .expect("present");
        }
        assert_eq!(m.index.cells.len(), 8192);
        assert_eq!(m.len(), 500);
        for (i, (k, _)) in m.iter().enumerate() {
            assert_eq!(m.get_index_of(k), Some(i));
        }
    }
}
