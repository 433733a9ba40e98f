//! A key's stored value and its metadata: expiry, access (LRU/LFU) and how a string value was
//! made (which decides its OBJECT ENCODING), packed into the one word the expiry alone used to
//! take, so an entry is its value plus 8 bytes.

use super::access::{self, AccessPolicy};
use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::stream::Stream;
use crate::types::zset::ZSet;
use bytes::Bytes;

/// A short string value in one allocation with its reference count: a `Bytes` made from a
/// copied slice keeps its bytes in one allocation and, once cloned (every GET's reply is a
/// clone), its reference count in a second, so reading a lock token touched three cache lines
/// (the shard slot, the count, the bytes) where this touches two, and holds 16-48 bytes where
/// the two allocations held 32-64.
struct Inline<const N: usize> {
    len: u8,
    data: [u8; N],
}

impl<const N: usize> AsRef<[u8]> for Inline<N> {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }
}

fn inline<const N: usize>(s: &[u8]) -> Bytes {
    let mut data = [0u8; N];
    data[..s.len()].copy_from_slice(s);
    Bytes::from_owner(Inline {
        len: s.len() as u8,
        data,
    })
}

/// The bytes of a new string value, copied from `s`: short ones (up to 119 bytes: tokens,
/// counters, timestamps) with their reference count beside them ([`Inline`]), each size
/// rounded to an allocation size class (the count is 8 bytes, the length 1), longer ones in
/// a buffer of their own.
pub fn str_bytes(s: &[u8]) -> Bytes {
    match s.len() {
        0 => Bytes::new(),
        1..=7 => inline::<7>(s),
        8..=15 => inline::<15>(s),
        16..=23 => inline::<23>(s),
        24..=31 => inline::<31>(s),
        32..=39 => inline::<39>(s),
        40..=55 => inline::<55>(s),
        56..=71 => inline::<71>(s),
        72..=87 => inline::<87>(s),
        88..=119 => inline::<119>(s),
        _ => Bytes::copy_from_slice(s),
    }
}

#[derive(Clone, Debug)]
pub enum Value {
    Str(Bytes),
    Hash(Hash),
    List(List),
    Set(Set),
    ZSet(ZSet),
    Stream(Stream),
}

// A shard entry is (Key 24, Entry 48). Every type is at most 32 bytes, but `Bytes` has a
// single niche (its vtable pointer is never null), so an enum over more than two types needs
// a tag of its own: 40 bytes. Keep it there (boxing a type would not help: the tag is the cost).
const _: () = assert!(std::mem::size_of::<Value>() == 40);

impl Value {
    /// Where a read of this value goes first beyond its slot, for a prefetch: a string's
    /// bytes (None for the other types, whose first line is in the slot, and for an empty
    /// string).
    #[inline]
    pub fn prefetch_address(&self) -> Option<*const u8> {
        match self {
            Value::Str(b) if !b.is_empty() => Some(b.as_ptr()),
            _ => None,
        }
    }

    /// lazyfreeGetFreeEffort: about how many allocations freeing this value takes (1 for
    /// a string or any compact encoding), which decides whether UNLINK frees it on the
    /// lazy-free thread.
    pub fn free_effort(&self) -> usize {
        match self {
            Value::Str(_) => 1,
            Value::List(l) => l.node_count(),
            Value::Set(s) if s.is_intset() => 1,
            Value::Set(s) => s.len(),
            Value::ZSet(z) if z.is_listpack() => 1,
            Value::ZSet(z) => z.len(),
            Value::Hash(h) if h.is_listpack() => 1,
            Value::Hash(h) => h.len(),
            Value::Stream(s) => {
                // Every node is an allocation, and so is every group and its PEL's
                // entries (the first group's PEL stands for all, as Redis estimates).
                let groups = s.groups().count();
                let pel = s.groups().next().map_or(0, |(_, g)| g.pel_len());
                s.node_count() + groups * (1 + pel)
            }
        }
    }

    /// TYPE's answer.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::Hash(_) => "hash",
            Value::List(_) => "list",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// Whether creating a key of this type can wake blocked clients (BLPOP and friends on
    /// lists; BZPOPMIN and friends on sorted sets; XREAD and XREADGROUP on streams): Redis's
    /// signalKeyAsReady types.
    pub fn serves_blocked_pops(&self) -> bool {
        matches!(self, Value::List(_) | Value::ZSet(_) | Value::Stream(_))
    }

    /// Whether replacing or removing a key of this type wakes blocked clients too: a group
    /// reader blocked on a stream is failed when its stream goes (Redis signals a stream key
    /// on dbOverwrite and dbDelete).
    pub fn signals_when_gone(&self) -> bool {
        matches!(self, Value::Stream(_))
    }
}

/// How a string value was made, which is what Redis's OBJECT ENCODING reports for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrKind {
    /// Stored through Redis's tryObjectEncoding (SET, MSET, INCR, a new APPEND...): `int` if it
    /// reads as a 64-bit integer of at most 20 characters, else `embstr` up to 44 bytes, else
    /// `raw`.
    Encoded,
    /// Made by createStringObject (INCRBYFLOAT): `embstr` up to 44 bytes, else `raw`.
    Plain,
    /// Changed in place or built as a buffer (APPEND to a key, SETRANGE, SETBIT, BITFIELD,
    /// BITOP): always `raw`.
    Raw,
    /// As [`StrKind::Encoded`], but a private object even for an integer 0..9999: a COPY's
    /// destination (dupStringObject), whose OBJECT REFCOUNT is 1, not the shared integers'.
    Unshared,
}

/// Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT.
pub const EMBSTR_SIZE_LIMIT: usize = 44;

/// The entry's metadata word. Two layouts, told apart by the top bit:
///
/// - compact (top bit 0), for every expiry within [`EXPIRY_BASE`] + 2^39 ms (about 17 years)
///   and no expiry: bits 0..39 the expiry (0: none, else `at - EXPIRY_BASE + 1`), bits 39..61
///   the access value ([`access::ACCESS_BITS`]), bits 61..63 the [`StrKind`].
/// - wide (top bit 1), for any other expiry (PEXPIREAT k 9223372036854775807): bits 0..63
///   the expiry itself. Such a key keeps no access time (OBJECT IDLETIME reports 0) and its
///   string kind reads as `Encoded`: an exact far-future TTL matters more than either.
///
/// Redis's robj keeps 24 bits of access and 4 of encoding; the expiry is a second dict
/// entry. Here all three share the 8 bytes the expiry alone took, so memory per key is
/// unchanged.
const WIDE: u64 = 1 << 63;
const EXPIRY_BITS: u32 = 39;
const EXPIRY_MASK: u64 = (1 << EXPIRY_BITS) - 1;
const ACCESS_SHIFT: u32 = EXPIRY_BITS;
const ACCESS_MASK: u64 = (access::ACCESS_MAX as u64) << ACCESS_SHIFT;
const KIND_SHIFT: u32 = ACCESS_SHIFT + access::ACCESS_BITS;
const KIND_MASK: u64 = 3 << KIND_SHIFT;
const _: () = assert!(KIND_SHIFT + 2 == 63);

/// The start of the compact expiry window: 2025-01-01T00:00:00Z, in Unix ms. A fixed value,
/// so an entry decodes the same in every process; expiries past the window (2042) still work
/// exactly, in the wide layout.
pub const EXPIRY_BASE: i64 = 1_735_689_600_000;

#[derive(Clone, Debug)]
pub struct Entry {
    pub value: Value,
    meta: u64,
}

impl Entry {
    /// A value created by the running command: no expiry, accessed now.
    pub fn new(value: Value) -> Self {
        let (now, policy) = access::context();
        Entry {
            value,
            meta: (access::initial(now, policy) as u64) << ACCESS_SHIFT,
        }
    }

    /// A value created by the running command that expires at `expires_at` (Unix ms; 0: never).
    pub fn with_expiry(value: Value, expires_at: i64) -> Self {
        let mut e = Entry::new(value);
        e.set_expires_at(expires_at);
        e
    }

    /// Unix time in ms after which the key is gone; 0 means no expiry.
    #[inline]
    pub fn expires_at(&self) -> i64 {
        if self.meta & WIDE != 0 {
            (self.meta & !WIDE) as i64
        } else {
            match self.meta & EXPIRY_MASK {
                0 => 0,
                code => EXPIRY_BASE + code as i64 - 1,
            }
        }
    }

    /// Set (0: remove) the expiry. A time before 1970 is kept as 1 ms after the epoch: any
    /// past time means the same (the key is gone), and Redis deletes such keys at once.
    pub fn set_expires_at(&mut self, at: i64) {
        let at = if at < 0 { 1 } else { at };
        let code = at.wrapping_sub(EXPIRY_BASE).wrapping_add(1);
        if at == 0 {
            self.meta = self.compact_meta() & !EXPIRY_MASK;
        } else if at >= EXPIRY_BASE && (code as u64) <= EXPIRY_MASK {
            self.meta = (self.compact_meta() & !EXPIRY_MASK) | code as u64;
        } else {
            self.meta = WIDE | at as u64;
        }
    }

    /// The metadata in the compact layout (a wide entry's access starts afresh, now).
    fn compact_meta(&self) -> u64 {
        if self.meta & WIDE != 0 {
            let (now, policy) = access::context();
            (access::initial(now, policy) as u64) << ACCESS_SHIFT
        } else {
            self.meta
        }
    }

    /// Redis: a key is expired once now > when.
    #[inline]
    pub fn is_expired(&self, now: i64) -> bool {
        let at = self.expires_at();
        at != 0 && now > at
    }

    /// How the string value was made (meaningless for other types).
    pub fn str_kind(&self) -> StrKind {
        if self.meta & WIDE != 0 {
            return StrKind::Encoded;
        }
        match (self.meta & KIND_MASK) >> KIND_SHIFT {
            1 => StrKind::Plain,
            2 => StrKind::Raw,
            3 => StrKind::Unshared,
            _ => StrKind::Encoded,
        }
    }

    /// Record how the string value was made; a command that changes a string in place marks it
    /// [`StrKind::Raw`], as Redis's dbUnshareStringValue does.
    pub fn set_str_kind(&mut self, kind: StrKind) {
        if self.meta & WIDE != 0 {
            return;
        }
        let k = match kind {
            StrKind::Encoded => 0,
            StrKind::Plain => 1,
            StrKind::Raw => 2,
            StrKind::Unshared => 3,
        };
        self.meta = (self.meta & !KIND_MASK) | (k << KIND_SHIFT);
    }

    /// The access value (LRU clock or LFU minutes and counter); None for a wide entry.
    pub fn access(&self) -> Option<u32> {
        if self.meta & WIDE != 0 {
            None
        } else {
            Some(((self.meta & ACCESS_MASK) >> ACCESS_SHIFT) as u32)
        }
    }

    /// Replace the access value (Redis's dbOverwrite keeps the old LFU counter).
    pub fn set_access(&mut self, a: u32) {
        if self.meta & WIDE == 0 {
            self.meta = (self.meta & !ACCESS_MASK) | ((a as u64) << ACCESS_SHIFT);
        }
    }

    /// Start the access record afresh, as for a value the running command creates.
    pub fn reset_access(&mut self) {
        let (now, policy) = access::context();
        self.set_access(access::initial(now, policy));
    }

    /// The string value as Redis's tryObjectEncoding would hold it as an integer: the value
    /// of a `int`-encoded string, None otherwise.
    pub fn str_as_int(&self) -> Option<i64> {
        match (&self.value, self.str_kind()) {
            (Value::Str(s), StrKind::Encoded | StrKind::Unshared) if s.len() <= 20 => {
                crate::num::parse_ll(s)
            }
            _ => None,
        }
    }

    /// OBJECT ENCODING's answer for this value.
    pub fn encoding(&self) -> &'static str {
        match &self.value {
            Value::Str(s) => {
                if self.str_as_int().is_some() {
                    "int"
                } else if self.str_kind() != StrKind::Raw && s.len() <= EMBSTR_SIZE_LIMIT {
                    "embstr"
                } else {
                    "raw"
                }
            }
            Value::Hash(h) => h.encoding(),
            // Redis 7.0 keeps every list in a quicklist.
            Value::List(_) => "quicklist",
            Value::Set(set) => set.encoding(),
            Value::ZSet(z) => z.encoding(),
            Value::Stream(_) => "stream",
        }
    }

    /// Redis's objectComputeSize for the value, sampling up to `samples` elements of an
    /// aggregate (0: all). A raw string is counted as allocated exactly, where Redis may have
    /// grown it with spare room.
    pub fn mem_usage(&self, samples: usize) -> usize {
        use crate::types::alloc::{jemalloc_size, sds_alloc_size, ROBJ};
        match &self.value {
            Value::Str(s) => match self.encoding() {
                "int" => ROBJ,
                // robj, sdshdr8, the bytes and the terminator in one allocation.
                "embstr" => jemalloc_size(ROBJ + 3 + s.len() + 1),
                _ => ROBJ + sds_alloc_size(s.len()),
            },
            Value::Hash(h) => h.mem_usage_samples(samples),
            Value::List(l) => l.mem_usage_samples(samples),
            Value::Set(set) => set.mem_usage_samples(samples),
            Value::ZSet(z) => z.mem_usage_samples(samples),
            Value::Stream(x) => x.mem_usage_samples(samples),
        }
    }

    /// Record a lookup at `now` under `policy`.
    #[inline]
    pub(super) fn touch(&mut self, now: i64, policy: AccessPolicy) {
        if let Some(a) = self.access() {
            self.set_access(access::touched(a, now, policy));
        }
    }

    /// Milliseconds since the last access (Redis's estimateObjectIdleTime).
    pub fn idle_ms(&self, now: i64) -> u64 {
        self.access().map_or(0, |a| access::idle_ms(a, now))
    }

    /// The LFU counter as OBJECT FREQ reports it (decayed to `now`).
    pub fn lfu_freq(&self, now: i64, policy: AccessPolicy) -> u8 {
        self.access().map_or(access::LFU_INIT_VAL, |a| {
            access::lfu_decayed(a, now, policy)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry::new(Value::Str(Bytes::new()))
    }

    #[test]
    fn str_bytes_keeps_every_length_and_byte_across_the_size_classes() {
        for len in 0..300usize {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let b = str_bytes(&src);
            assert_eq!(&b[..], &src[..], "length {len}");
            // Clones share the bytes and outlive the original.
            let c = b.clone();
            drop(b);
            assert_eq!(&c[..], &src[..], "length {len}");
            assert_eq!(c.slice(len / 2..), src[len / 2..], "length {len}");
        }
    }

    #[test]
    fn expiry_round_trips_exactly_in_both_layouts() {
        let window_end = EXPIRY_BASE + EXPIRY_MASK as i64 - 1;
        for at in [
            0,
            1,
            1_000,
            EXPIRY_BASE - 1,
            EXPIRY_BASE,
            1_800_000_000_123,
            window_end,
            window_end + 1,
            99_999_999_999_999,
            i64::MAX,
        ] {
            let mut e = entry();
            e.set_expires_at(at);
            assert_eq!(e.expires_at(), at, "{at}");
        }
        let mut e = entry();
        e.set_expires_at(-5);
        assert_eq!(e.expires_at(), 1);
        assert!(e.is_expired(2));
    }

    #[test]
    fn access_and_kind_survive_expiry_changes_in_the_compact_layout() {
        let mut e = entry();
        e.set_access(123_456);
        e.set_str_kind(StrKind::Raw);
        e.set_expires_at(1_800_000_000_000);
        e.set_expires_at(0);
        e.set_expires_at(1_900_000_000_000);
        assert_eq!(e.access(), Some(123_456));
        assert_eq!(e.str_kind(), StrKind::Raw);
        e.set_access(access::ACCESS_MAX);
        e.set_str_kind(StrKind::Plain);
        assert_eq!(e.expires_at(), 1_900_000_000_000);
        assert_eq!(e.access(), Some(access::ACCESS_MAX));
        assert_eq!(e.str_kind(), StrKind::Plain);
        // A far expiry drops them; clearing it starts them afresh.
        e.set_expires_at(i64::MAX);
        assert_eq!(e.access(), None);
        assert_eq!(e.str_kind(), StrKind::Encoded);
        e.set_expires_at(0);
        assert_eq!(e.access(), Some(0));
        assert_eq!(e.expires_at(), 0);
    }

    #[test]
    fn an_entry_is_the_value_plus_one_word() {
        assert_eq!(
            std::mem::size_of::<Entry>(),
            std::mem::size_of::<Value>() + 8
        );
    }
}
