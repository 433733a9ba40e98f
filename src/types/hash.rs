//! Redis's hash value in its two encodings (listpack and hashtable).

use ahash::RandomState;
use bytes::Bytes;
use indexmap::IndexMap;

/// Redis's hash-max-listpack-entries and hash-max-listpack-value: below both, a hash keeps
/// insertion order (as Redis's listpack does) and HSCAN returns it whole.
pub const HASH_MAX_LISTPACK_ENTRIES: usize = 512;
pub const HASH_MAX_LISTPACK_VALUE: usize = 64;

/// The configured hash-max-listpack-entries and hash-max-listpack-value a write converts a
/// hash by. The listpack here stores a field count in a u16 and each length in a byte, so a
/// configuration above those keeps the hash a listpack only up to them.
#[derive(Clone, Copy, Debug)]
pub struct HashLimits {
    /// hash-max-listpack-entries.
    pub max_listpack_entries: usize,
    /// hash-max-listpack-value.
    pub max_listpack_value: usize,
}

impl Default for HashLimits {
    fn default() -> HashLimits {
        HashLimits {
            max_listpack_entries: HASH_MAX_LISTPACK_ENTRIES,
            max_listpack_value: HASH_MAX_LISTPACK_VALUE,
        }
    }
}

impl HashLimits {
    fn entries(self) -> usize {
        self.max_listpack_entries.min(u16::MAX as usize)
    }

    fn value(self) -> usize {
        self.max_listpack_value.min(u8::MAX as usize)
    }
}

/// A hash, in Redis's two encodings. `Listpack` (small, short fields and values) is one
/// buffer, as Redis's listpack: a u16 field count, then `[len u8][field][len u8][value]` per
/// field in insertion order, searched linearly; deletion keeps the order. A Redisson lock
/// (one short field) costs a 16-byte allocation. Past Redis's limits it becomes `Table`
/// (Redis's hashtable encoding: order no longer kept) and, as in Redis, never converts back.
#[derive(Clone, Debug)]
pub enum Hash {
    /// Empty when the hash has no fields, so a new hash allocates nothing.
    Listpack(Vec<u8>),
    Table(Box<IndexMap<Bytes, Bytes, RandomState>>),
}

impl Default for Hash {
    fn default() -> Self {
        Hash::new()
    }
}

/// Walks a listpack buffer's (field, value) pairs.
#[derive(Clone)]
pub struct ListpackIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for ListpackIter<'a> {
    type Item = (&'a [u8], &'a [u8]);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let r = self.rest;
        let fl = *r.first()? as usize;
        let f = &r[1..1 + fl];
        let vl = r[1 + fl] as usize;
        let v = &r[2 + fl..2 + fl + vl];
        self.rest = &r[2 + fl + vl..];
        Some((f, v))
    }
}

/// A hash's (field, value) pairs in its order, whichever the encoding.
pub enum HashIter<'a> {
    Listpack(ListpackIter<'a>),
    Table(indexmap::map::Iter<'a, Bytes, Bytes>),
}

impl<'a> Iterator for HashIter<'a> {
    type Item = (&'a [u8], &'a [u8]);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            HashIter::Listpack(it) => it.next(),
            HashIter::Table(it) => it.next().map(|(f, v)| (&f[..], &v[..])),
        }
    }
}

fn lp_count(buf: &[u8]) -> usize {
    if buf.is_empty() {
        0
    } else {
        u16::from_le_bytes([buf[0], buf[1]]) as usize
    }
}

fn lp_set_count(buf: &mut [u8], n: usize) {
    buf[..2].copy_from_slice(&(n as u16).to_le_bytes());
}

/// The field's span in a listpack buffer: (start of the entry, start of the value length
/// byte, end of the entry).
fn lp_find(buf: &[u8], field: &[u8]) -> Option<(usize, usize, usize)> {
    let mut at = 2;
    while at < buf.len() {
        let fl = buf[at] as usize;
        let vat = at + 1 + fl;
        let end = vat + 1 + buf[vat] as usize;
        if &buf[at + 1..vat] == field {
            return Some((at, vat, end));
        }
        at = end;
    }
    None
}

impl Hash {
    pub fn new() -> Self {
        Hash::Listpack(Vec::new())
    }

    /// True while the hash has Redis's listpack encoding (insertion order, HSCAN in one page).
    pub fn is_listpack(&self) -> bool {
        matches!(self, Hash::Listpack(_))
    }

    pub fn len(&self) -> usize {
        match self {
            Hash::Listpack(b) => lp_count(b),
            Hash::Table(m) => m.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match self {
            Hash::Listpack(b) => lp_find(b, field).map(|(_, v, end)| &b[v + 1..end]),
            Hash::Table(m) => m.get(field).map(|v| &v[..]),
        }
    }

    /// A field's value for a reply: copied from a listpack (at most 64 bytes), shared from a
    /// table without copying.
    pub fn get_bytes(&self, field: &[u8]) -> Option<Bytes> {
        match self {
            Hash::Listpack(_) => self.get(field).map(Bytes::copy_from_slice),
            Hash::Table(m) => m.get(field).cloned(),
        }
    }

    pub fn iter(&self) -> HashIter<'_> {
        match self {
            Hash::Listpack(b) => HashIter::Listpack(ListpackIter {
                rest: b.get(2..).unwrap_or(&[]),
            }),
            Hash::Table(m) => HashIter::Table(m.iter()),
        }
    }

    /// The pairs as `Bytes` for a reply (shared, not copied, from a table).
    pub fn iter_bytes(&self) -> impl Iterator<Item = (Bytes, Bytes)> + '_ {
        let (lp, table) = match self {
            Hash::Listpack(_) => (Some(self.iter()), None),
            Hash::Table(m) => (None, Some(m.iter())),
        };
        lp.into_iter()
            .flatten()
            .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
            .chain(
                table
                    .into_iter()
                    .flatten()
                    .map(|(f, v)| (f.clone(), v.clone())),
            )
    }

    /// The i-th pair in the hash's order: O(1) for a table, a walk of at most 512 entries for
    /// a listpack (as Redis's lpSeek).
    pub fn get_index(&self, i: usize) -> Option<(&[u8], &[u8])> {
        match self {
            Hash::Listpack(_) => self.iter().nth(i),
            Hash::Table(m) => m.get_index(i).map(|(f, v)| (&f[..], &v[..])),
        }
    }

    /// Like [`Hash::get_index`], as `Bytes` for a reply.
    pub fn get_index_bytes(&self, i: usize) -> Option<(Bytes, Bytes)> {
        match self {
            Hash::Listpack(_) => self
                .get_index(i)
                .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v))),
            Hash::Table(m) => m.get_index(i).map(|(f, v)| (f.clone(), v.clone())),
        }
    }

    /// Redis's hashTypeConvertListpack: same pairs, same order, now a table.
    fn convert(&mut self) {
        if let Hash::Listpack(b) = self {
            let mut m = IndexMap::with_capacity_and_hasher(lp_count(b) + 1, RandomState::new());
            for (f, v) in (ListpackIter {
                rest: b.get(2..).unwrap_or(&[]),
            }) {
                m.insert(Bytes::copy_from_slice(f), Bytes::copy_from_slice(v));
            }
            *self = Hash::Table(Box::new(m));
        }
    }

    /// Set a field under the default limits; true if it is new.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        self.set_within(field, value, HashLimits::default())
    }

    /// Set a field; true if it is new. As Redis's hashTypeSet, a field or value longer than
    /// the limit, or one field more than it allows, makes a listpack a table first.
    pub fn set_within(&mut self, field: &[u8], value: &[u8], limits: HashLimits) -> bool {
        if field.len() > limits.value() || value.len() > limits.value() {
            self.convert();
        }
        match self {
            Hash::Listpack(b) => {
                if let Some((_, vat, end)) = lp_find(b, field) {
                    if end - vat - 1 == value.len() {
                        b[vat + 1..end].copy_from_slice(value);
                    } else {
                        b[vat] = value.len() as u8;
                        b.splice(vat + 1..end, value.iter().copied());
                        b.shrink_to_fit();
                    }
                    return false;
                }
                let n = lp_count(b) + 1;
                if n > limits.entries() {
                    self.convert();
                    return self.set_within(field, value, limits);
                }
                // Exact fit: a listpack grows a few bytes at a time and most stay tiny.
                b.reserve_exact(if b.is_empty() { 2 } else { 0 } + 2 + field.len() + value.len());
                if b.is_empty() {
                    b.extend_from_slice(&[0, 0]);
                }
                b.push(field.len() as u8);
                b.extend_from_slice(field);
                b.push(value.len() as u8);
                b.extend_from_slice(value);
                lp_set_count(b, n);
                true
            }
            Hash::Table(m) => {
                let v = Bytes::copy_from_slice(value);
                match m.get_mut(field) {
                    Some(old) => {
                        *old = v;
                        false
                    }
                    None => {
                        m.insert(Bytes::copy_from_slice(field), v);
                        true
                    }
                }
            }
        }
    }

    /// Remove a field; true if it was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match self {
            Hash::Listpack(b) => match lp_find(b, field) {
                None => false,
                Some((at, _, end)) => {
                    let n = lp_count(b) - 1;
                    if n == 0 {
                        *b = Vec::new();
                    } else {
                        b.drain(at..end);
                        lp_set_count(b, n);
                        b.shrink_to_fit();
                    }
                    true
                }
            },
            Hash::Table(m) => m.swap_remove(field).is_some(),
        }
    }

    /// OBJECT ENCODING's answer.
    pub fn encoding(&self) -> &'static str {
        match self {
            Hash::Listpack(_) => "listpack",
            Hash::Table(_) => "hashtable",
        }
    }

    /// Redis's objectComputeSize for this hash with MEMORY USAGE's default 5 samples (the key
    /// and its dict entry are the caller's).
    pub fn mem_usage(&self) -> usize {
        self.mem_usage_samples(5)
    }

    /// objectComputeSize: a listpack is its (jemalloc-rounded) Redis listpack size; a
    /// hashtable is the dict plus the average of the first `samples` fields (0: all) times
    /// the field count.
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        use super::alloc::*;
        match self {
            Hash::Listpack(_) => {
                let bytes: usize = self
                    .iter()
                    .map(|(f, v)| listpack_entry_size(f) + listpack_entry_size(v))
                    .sum();
                ROBJ + jemalloc_size(LISTPACK_OVERHEAD + bytes)
            }
            Hash::Table(m) => {
                let samples = if samples == 0 { usize::MAX } else { samples };
                let base = ROBJ + DICT + 8 * dict_slots(m.len());
                let (mut sum, mut n) = (0usize, 0usize);
                for (f, v) in m.iter().take(samples) {
                    sum += sds_alloc_size(f.len()) + sds_alloc_size(v.len()) + DICT_ENTRY;
                    n += 1;
                }
                match n {
                    0 => base,
                    n => base + (sum as f64 / n as f64 * m.len() as f64) as usize,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpack_keeps_order_and_converts_past_the_limits() {
        let mut h = Hash::new();
        assert!(h.is_empty() && h.is_listpack());
        assert!(h.set(b"a", b"1"));
        assert!(h.set(b"bb", b"22"));
        assert!(h.set(b"c", b""));
        assert!(!h.set(b"a", b"longer"));
        assert!(!h.set(b"bb", b"x"));
        assert_eq!(h.get(b"a"), Some(&b"longer"[..]));
        assert_eq!(h.get(b"c"), Some(&b""[..]));
        assert_eq!(h.get(b"d"), None);
        assert!(h.remove(b"bb"));
        assert!(!h.remove(b"bb"));
        let v: Vec<_> = h.iter().collect();
        assert_eq!(v, vec![(&b"a"[..], &b"longer"[..]), (&b"c"[..], &b""[..])]);
        assert_eq!(h.get_index(1), Some((&b"c"[..], &b""[..])));
        assert!(h.remove(b"a") && h.remove(b"c") && h.is_empty());

        let mut h = Hash::new();
        for i in 0..HASH_MAX_LISTPACK_ENTRIES {
            h.set(i.to_string().as_bytes(), b"v");
        }
        assert!(h.is_listpack());
        h.set(b"one-more", b"v");
        assert!(!h.is_listpack());
        assert_eq!(h.len(), HASH_MAX_LISTPACK_ENTRIES + 1);
        assert_eq!(h.get_index(0), Some((&b"0"[..], &b"v"[..])));

        let mut h = Hash::new();
        h.set(b"f", b"v");
        h.set(b"g", &[b'x'; HASH_MAX_LISTPACK_VALUE + 1]);
        assert!(!h.is_listpack());
        assert_eq!(h.iter().next(), Some((&b"f"[..], &b"v"[..])));
    }
}
