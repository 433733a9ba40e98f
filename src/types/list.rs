//! Redis 7.0's list value: a quicklist (a sequence of packed listpack nodes), as a pure data
//! structure.
//!
//! Redis 7.0 stores every list as a quicklist (OBJECT ENCODING always says "quicklist"): a
//! doubly linked list of listpacks, each bounded by `list-max-listpack-size` (the *fill*). This
//! module keeps the same shape so memory and behaviour match:
//!
//! * A [`List`] is a box around a `VecDeque` of nodes; a node is one `Vec<u8>` holding its
//!   entries back to back in Redis's listpack entry encoding (encoding byte(s), data, backlen),
//!   so an element costs its bytes plus 2 to 10 bytes and no allocation of its own. The
//!   listpack's 6-byte header and EOF byte are left out (the node keeps its count and the `Vec`
//!   its length), but node sizes are judged as Redis judges them, header included, so a list
//!   built by pushes is cut into exactly the nodes Redis would make.
//! * Canonical integers ("0", "-12", "9223372036854775807"; never "007", "+1" or "-0") are
//!   packed as Redis packs them (1 to 9 bytes) and read back as the same decimal string, so
//!   bytes out always equal bytes in; [`Elem`] hands them out without formatting until asked.
//! * The backlen after each entry lets a node be walked from either end, so an index near the
//!   tail is reached from the tail, as `lpSeek` and `quicklistGetIteratorAtIdx` do.
//! * Inserting into a full node splits it and merges the pieces with their neighbours when
//!   they fit (quicklist's `_quicklistInsert` and `_quicklistMergeNodes`); [`List::remove`]
//!   (LREM) also merges the nodes it shrank, which Redis does not, so churn stays compact.
//! * An element of [`PACKED_THRESHOLD`] bytes or more gets a node of its own (Redis 7.0's
//!   plain node), never shared or merged.
//!
//! The fill (an `i32` with `list-max-listpack-size`'s meaning: -1..-5 bound a node to
//! 4/8/16/32/64 KB, a positive N to N entries, within 8 KB) is passed to every operation that
//! adds elements; the list remembers the last one for the merges that [`List::remove`] and
//! [`List::set`] make. (Redis fixes a list's fill when the list is created; here the caller
//! decides, normally passing the current config.) Index arguments follow Redis: negative
//! indexes count from the tail. An element must be under 4 GiB, Redis's own ceiling; a larger
//! one panics.

#![warn(missing_docs)]

use std::collections::VecDeque;
use std::fmt;
use std::iter::Rev;

use bytes::Bytes;

/// Redis's default `list-max-listpack-size`: nodes of at most 8 KB.
pub const DEFAULT_FILL: i32 = -2;

/// Redis's packed threshold (1 GB): an element at least this long gets a node of its own.
pub const PACKED_THRESHOLD: usize = 1 << 30;

/// How many nodes MEMORY USAGE samples by default before extrapolating (its SAMPLES 5).
pub const MEMORY_USAGE_SAMPLES: usize = 5;

/// Node byte limits for fills -1..-5 (quicklist.c `optimization_level`).
const OPTIMIZATION_LEVEL: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// A node limited by entry count still may not pass 8 KB (quicklist.c `SIZE_SAFETY_LIMIT`).
const SIZE_SAFETY_LIMIT: usize = 8192;
/// quicklist.c's per-entry overhead estimate when judging whether an element fits a node.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;
/// quicklist.c `FILL_MAX`: larger positive fills are clamped to it.
const FILL_MAX: i32 = (1 << 15) - 1;
/// A listpack's 6-byte header and 1-byte EOF, which nodes here leave out but Redis counts.
const LP_FRAME: usize = 7;
/// Strings this long or longer can't be integers (Redis's `LONG_STR_SIZE`).
const LONG_STR_SIZE: usize = 21;
/// sizeof(robj), sizeof(quicklist) and sizeof(quicklistNode) on 64-bit Redis 7.0, as
/// `objectComputeSize` adds them.
const REDIS_ROBJ: usize = 16;
const REDIS_QUICKLIST: usize = 40;
const REDIS_QUICKLIST_NODE: usize = 40;

/// The packed threshold in force: process-wide, as Redis's `packed_threshold` global, which
/// DEBUG QUICKLIST-PACKED-THRESHOLD changes ([`set_packed_threshold`]).
#[cfg(not(test))]
static PACKED_THRESHOLD_NOW: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(PACKED_THRESHOLD);

#[cfg(not(test))]
#[inline]
fn packed_threshold() -> usize {
    PACKED_THRESHOLD_NOW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Redis's quicklistisSetPackedThreshold: elements of `sz` bytes or more get plain nodes from
/// now on; 0 restores the default; false (unchanged) at 4 GB minus 1 MB or more.
pub fn set_packed_threshold(sz: u64) -> bool {
    if sz > (1u64 << 32) - (1 << 20) {
        return false;
    }
    let sz = if sz == 0 {
        PACKED_THRESHOLD
    } else {
        sz as usize
    };
    #[cfg(not(test))]
    PACKED_THRESHOLD_NOW.store(sz, std::sync::atomic::Ordering::Relaxed);
    #[cfg(test)]
    TEST_PACKED_THRESHOLD.with(|t| t.set(sz));
    true
}

#[cfg(test)]
thread_local! {
    /// Tests lower the threshold (as Redis's DEBUG QUICKLIST-PACKED-THRESHOLD does) to try
    /// plain nodes without gigabyte elements; per thread so parallel tests don't interfere.
    static TEST_PACKED_THRESHOLD: std::cell::Cell<usize> =
        const { std::cell::Cell::new(PACKED_THRESHOLD) };
}

#[cfg(test)]
fn packed_threshold() -> usize {
    TEST_PACKED_THRESHOLD.with(|t| t.get())
}

#[inline]
fn is_large(sz: usize) -> bool {
    sz >= packed_threshold()
}

/// Redis's quicklistSetFill clamping.
fn clamp_fill(fill: i32) -> i32 {
    fill.clamp(-(OPTIMIZATION_LEVEL.len() as i32), FILL_MAX)
}

/// jemalloc's size class for an `n`-byte request (what Redis's `zmalloc_size` reports); also
/// the growth step for node buffers, so they waste at most about a quarter, as Redis's do.
fn size_class(n: usize) -> usize {
    if n <= 8 {
        return 8;
    }
    if n <= 128 {
        return (n + 15) & !15;
    }
    let log = usize::BITS - 1 - (n - 1).leading_zeros();
    let spacing = 1usize << (log - 2);
    (n + spacing - 1) & !(spacing - 1)
}

// ---------------------------------------------------------------------------------------------
// Entry encoding: listpack.c's, byte for byte.

/// listpack.c `lpStringToInt64`: only canonical decimal integers qualify.
fn parse_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= LONG_STR_SIZE {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        (v <= i64::MAX as u64 + 1).then(|| 0i64.wrapping_sub(v as i64))
    } else {
        (v <= i64::MAX as u64).then_some(v as i64)
    }
}

/// Bytes of the backlen that follows an entry whose encoding+data is `l` bytes.
#[inline]
fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// An element in its packed form, computed once per write.
struct Encoded<'a> {
    hdr: [u8; 9],
    hdr_len: usize,
    /// The string's bytes; empty for an integer (all in `hdr`).
    body: &'a [u8],
}

impl<'a> Encoded<'a> {
    fn new(s: &'a [u8]) -> Self {
        let mut hdr = [0u8; 9];
        if let Some(v) = parse_int(s) {
            let hdr_len = if (0..=127).contains(&v) {
                hdr[0] = v as u8;
                1
            } else if (-4096..=4095).contains(&v) {
                let u = (v as u16) & 0x1fff;
                hdr[0] = 0xC0 | (u >> 8) as u8;
                hdr[1] = u as u8;
                2
            } else if (-32768..=32767).contains(&v) {
                hdr[0] = 0xF1;
                hdr[1..3].copy_from_slice(&(v as i16).to_le_bytes());
                3
            } else if (-8388608..=8388607).contains(&v) {
                hdr[0] = 0xF2;
                hdr[1..4].copy_from_slice(&(v as i32).to_le_bytes()[..3]);
                4
            } else if (-2147483648..=2147483647).contains(&v) {
                hdr[0] = 0xF3;
                hdr[1..5].copy_from_slice(&(v as i32).to_le_bytes());
                5
            } else {
                hdr[0] = 0xF4;
                hdr[1..9].copy_from_slice(&v.to_le_bytes());
                9
            };
            return Encoded {
                hdr,
                hdr_len,
                body: &[],
            };
        }
        let len = s.len();
        let hdr_len = if len < 64 {
            hdr[0] = 0x80 | len as u8;
            1
        } else if len < 4096 {
            hdr[0] = 0xE0 | (len >> 8) as u8;
            hdr[1] = len as u8;
            2
        } else {
            let len32 = u32::try_from(len).expect("list elements must be under 4 GiB");
            hdr[0] = 0xF0;
            hdr[1..5].copy_from_slice(&len32.to_le_bytes());
            5
        };
        Encoded {
            hdr,
            hdr_len,
            body: s,
        }
    }

    #[inline]
    fn enc_len(&self) -> usize {
        self.hdr_len + self.body.len()
    }

    /// The whole entry: encoding, data and backlen.
    #[inline]
    fn len(&self) -> usize {
        let l = self.enc_len();
        l + backlen_size(l)
    }

    /// Writes the entry into `out`, which is exactly [`Encoded::len`] bytes.
    fn write(&self, out: &mut [u8]) {
        let (h, rest) = out.split_at_mut(self.hdr_len);
        h.copy_from_slice(&self.hdr[..self.hdr_len]);
        let (b, back) = rest.split_at_mut(self.body.len());
        b.copy_from_slice(self.body);
        let l = self.enc_len();
        // listpack.c lpEncodeBacklen: high bits first, every byte but the first flagged.
        let n = back.len();
        for (i, byte) in back.iter_mut().enumerate() {
            let shift = 7 * (n - 1 - i);
            *byte = ((l >> shift) & 127) as u8 | if i == 0 { 0 } else { 128 };
        }
    }
}

/// Decodes the entry starting at `p`: the element and the entry's whole length.
#[inline]
fn decode(buf: &[u8], p: usize) -> (Elem<'_>, usize) {
    let b = buf[p];
    let (elem, enc_len) = if b & 0x80 == 0 {
        (Elem::Int(i64::from(b)), 1)
    } else if b & 0xC0 == 0x80 {
        let n = usize::from(b & 0x3f);
        (Elem::Bytes(&buf[p + 1..p + 1 + n]), 1 + n)
    } else if b & 0xE0 == 0xC0 {
        let u = (u16::from(b & 0x1f) << 8) | u16::from(buf[p + 1]);
        (Elem::Int(i64::from(((u << 3) as i16) >> 3)), 2)
    } else if b & 0xF0 == 0xE0 {
        let n = (usize::from(b & 0x0f) << 8) | usize::from(buf[p + 1]);
        (Elem::Bytes(&buf[p + 2..p + 2 + n]), 2 + n)
    } else {
        match b {
            0xF0 => {
                let n = u32::from_le_bytes(buf[p + 1..p + 5].try_into().unwrap()) as usize;
                (Elem::Bytes(&buf[p + 5..p + 5 + n]), 5 + n)
            }
            0xF1 => {
                let v = i16::from_le_bytes([buf[p + 1], buf[p + 2]]);
                (Elem::Int(i64::from(v)), 3)
            }
            0xF2 => {
                let v = i32::from_le_bytes([0, buf[p + 1], buf[p + 2], buf[p + 3]]) >> 8;
                (Elem::Int(i64::from(v)), 4)
            }
            0xF3 => {
                let v = i32::from_le_bytes(buf[p + 1..p + 5].try_into().unwrap());
                (Elem::Int(i64::from(v)), 5)
            }
            0xF4 => {
                let v = i64::from_le_bytes(buf[p + 1..p + 9].try_into().unwrap());
                (Elem::Int(v), 9)
            }
            _ => unreachable!("corrupt list node: encoding byte {b:#x}"),
        }
    };
    (elem, enc_len + backlen_size(enc_len))
}

/// Where the entry that ends at `end` starts, read from its backlen (lpDecodeBacklen).
#[inline]
fn prev_start(buf: &[u8], end: usize) -> usize {
    let mut q = end - 1;
    let mut val = usize::from(buf[q] & 127);
    let mut shift = 0;
    while buf[q] & 128 != 0 {
        q -= 1;
        shift += 7;
        val |= usize::from(buf[q] & 127) << shift;
    }
    q - val
}

// ---------------------------------------------------------------------------------------------
// Elements.

/// One element as stored: a borrowed string, or a canonical integer packed as a number.
///
/// The integer form saves formatting until a reply needs the bytes; either way the bytes are
/// those that were pushed. Equal elements always have the same variant, so `==` is exact.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Elem<'a> {
    /// A string that is not a canonical integer (or is too long to be one).
    Bytes(&'a [u8]),
    /// A canonical integer, stored packed; its bytes are its decimal form.
    Int(i64),
}

impl Elem<'_> {
    /// Calls `f` with the element's bytes, formatting an integer on the stack: the way to
    /// write a reply or compare without allocating.
    #[inline]
    pub fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        match *self {
            Elem::Bytes(b) => f(b),
            Elem::Int(v) => f(itoa::Buffer::new().format(v).as_bytes()),
        }
    }

    /// The element's bytes, copied.
    pub fn to_vec(&self) -> Vec<u8> {
        self.with_bytes(<[u8]>::to_vec)
    }

    /// The element's bytes, copied into a `Bytes` for a reply.
    pub fn to_bytes(&self) -> Bytes {
        self.with_bytes(Bytes::copy_from_slice)
    }

    /// The value when the element is a canonical integer (so an integer reply or arithmetic
    /// needs no parsing); `None` for any other string.
    pub fn as_int(&self) -> Option<i64> {
        match *self {
            Elem::Int(v) => Some(v),
            Elem::Bytes(_) => None,
        }
    }

    /// The element's length in bytes (what STRLEN would say), without formatting.
    pub fn len(&self) -> usize {
        match *self {
            Elem::Bytes(b) => b.len(),
            Elem::Int(v) => {
                let mut n = usize::from(v < 0) + 1;
                let mut u = v.unsigned_abs();
                while u >= 10 {
                    u /= 10;
                    n += 1;
                }
                n
            }
        }
    }

    /// True for the empty string (an integer never is).
    pub fn is_empty(&self) -> bool {
        matches!(self, Elem::Bytes(b) if b.is_empty())
    }
}

impl PartialEq<[u8]> for Elem<'_> {
    fn eq(&self, other: &[u8]) -> bool {
        Needle::new(other).matches(*self)
    }
}

impl PartialEq<&[u8]> for Elem<'_> {
    fn eq(&self, other: &&[u8]) -> bool {
        Needle::new(other).matches(*self)
    }
}

impl fmt::Debug for Elem<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Elem::Bytes(b) => write!(f, "\"{}\"", b.escape_ascii()),
            Elem::Int(v) => write!(f, "{v}"),
        }
    }
}

/// A value searched for (LREM, LPOS, LINSERT's pivot), classified once: a canonical integer
/// can only match packed integers and any other string only strings, since the encoder packs
/// every canonical integer.
struct Needle<'a> {
    bytes: &'a [u8],
    int: Option<i64>,
}

impl<'a> Needle<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Needle {
            bytes,
            int: parse_int(bytes),
        }
    }

    #[inline]
    fn matches(&self, e: Elem<'_>) -> bool {
        match (e, self.int) {
            (Elem::Int(v), Some(n)) => v == n,
            (Elem::Bytes(b), None) => b == self.bytes,
            _ => false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Nodes.

/// One quicklist node: entries back to back in listpack entry encoding.
#[derive(Clone)]
struct Node {
    buf: Vec<u8>,
    count: u32,
    /// Redis's plain node: holds one large element and never takes another or merges.
    plain: bool,
}

impl Node {
    fn with_entry(e: &Encoded<'_>, plain: bool) -> Node {
        let mut buf = Vec::with_capacity(if plain { e.len() } else { size_class(e.len()) });
        buf.resize(e.len(), 0);
        e.write(&mut buf);
        Node {
            buf,
            count: 1,
            plain,
        }
    }

    /// The node's size as Redis sees it (`node->sz`): the listpack's bytes, or a plain
    /// node's raw element.
    fn redis_sz(&self) -> usize {
        if self.plain {
            decode(&self.buf, 0).0.len()
        } else {
            self.buf.len() + LP_FRAME
        }
    }

    /// Byte offset of entry `off` (< count), walked from the nearer end (listpack `lpSeek`).
    fn seek(&self, off: usize) -> usize {
        let count = self.count as usize;
        debug_assert!(off < count);
        if off <= count / 2 {
            let mut p = 0;
            for _ in 0..off {
                p += decode(&self.buf, p).1;
            }
            p
        } else {
            let mut p = self.buf.len();
            for _ in off..count {
                p = prev_start(&self.buf, p);
            }
            p
        }
    }

    /// Opens an `n`-byte gap at byte `at`, growing by size class rather than doubling.
    fn open_gap(&mut self, at: usize, n: usize) -> &mut [u8] {
        let old = self.buf.len();
        if old + n > self.buf.capacity() {
            self.buf.reserve_exact(size_class(old + n) - old);
        }
        self.buf.resize(old + n, 0);
        self.buf.copy_within(at..old, at + n);
        &mut self.buf[at..at + n]
    }

    fn insert_entry(&mut self, at: usize, e: &Encoded<'_>) {
        e.write(self.open_gap(at, e.len()));
        self.count += 1;
    }

    fn push_entry(&mut self, e: &Encoded<'_>) {
        self.insert_entry(self.buf.len(), e);
    }

    /// Removes `n` entries occupying bytes `range`.
    fn remove_bytes(&mut self, range: std::ops::Range<usize>, n: usize) {
        self.buf.drain(range);
        self.count -= n as u32;
        self.shrink();
    }

    /// Gives memory back once a buffer has shrunk well below its capacity.
    fn shrink(&mut self) {
        let len = self.buf.len();
        if self.buf.capacity() > size_class(len + len / 4 + 16) {
            self.buf.shrink_to(size_class(len));
        }
    }

    /// quicklist.c `_quicklistSplitNode`: with `after`, this node keeps entries `..=off` and
    /// the returned node gets the rest; otherwise the returned node gets `..off` and this
    /// node keeps `off..`.
    fn split(&mut self, off: usize, after: bool) -> Node {
        let count = self.count as usize;
        let mut pos = self.seek(off);
        let (buf, taken) = if after {
            pos += decode(&self.buf, pos).1;
            let tail = self.buf[pos..].to_vec();
            self.buf.truncate(pos);
            (tail, count - off - 1)
        } else {
            (self.buf.drain(..pos).collect(), off)
        };
        self.count -= taken as u32;
        self.shrink();
        Node {
            buf,
            count: taken as u32,
            plain: false,
        }
    }

    /// Appends `right`'s entries after this node's, moving the smaller buffer into the larger.
    fn absorb(&mut self, mut right: Node) {
        if self.buf.len() < right.buf.len() {
            std::mem::swap(&mut self.buf, &mut right.buf);
            let left = right.buf;
            self.open_gap(0, left.len()).copy_from_slice(&left);
        } else {
            let at = self.buf.len();
            self.open_gap(at, right.buf.len())
                .copy_from_slice(&right.buf);
        }
        self.count += right.count;
    }

    /// LREM within one node: removes up to `quota` entries matching `needle` (the last ones
    /// when `from_tail`) in one compacting pass, and returns how many went.
    fn remove_matching(&mut self, needle: &Needle<'_>, quota: usize, from_tail: bool) -> usize {
        let len = self.buf.len();
        // Matches to leave alone first: from the tail, only the last `quota` matches go.
        let mut skip = 0;
        if from_tail && quota < self.count as usize {
            let mut total = 0;
            let mut p = 0;
            while p < len {
                let (e, n) = decode(&self.buf, p);
                total += usize::from(needle.matches(e));
                p += n;
            }
            skip = total.saturating_sub(quota);
        }
        let (mut r, mut w, mut removed) = (0, 0, 0);
        while r < len && removed < quota {
            let (e, n) = decode(&self.buf, r);
            if needle.matches(e) {
                if skip > 0 {
                    skip -= 1;
                } else {
                    removed += 1;
                    r += n;
                    continue;
                }
            }
            if w != r {
                self.buf.copy_within(r..r + n, w);
            }
            w += n;
            r += n;
        }
        if removed > 0 {
            self.buf.copy_within(r..len, w);
            self.buf.truncate(w + (len - r));
            self.count -= removed as u32;
            self.shrink();
        }
        removed
    }
}

/// quicklist.c `_quicklistNodeSizeMeetsOptimizationRequirement`.
#[inline]
fn size_meets_optimization(sz: usize, fill: i32) -> bool {
    fill < 0 && sz <= OPTIMIZATION_LEVEL[(-fill - 1) as usize]
}

/// quicklist.c `_quicklistNodeAllowInsert`: may an `sz`-byte element join `node`?
fn allow_insert(node: &Node, fill: i32, sz: usize) -> bool {
    if node.plain || is_large(sz) {
        return false;
    }
    let new_sz = node.redis_sz() + sz + SIZE_ESTIMATE_OVERHEAD;
    if size_meets_optimization(new_sz, fill) {
        true
    } else if new_sz > SIZE_SAFETY_LIMIT {
        false
    } else {
        (node.count as i64) < i64::from(fill)
    }
}

/// quicklist.c `_quicklistNodeAllowMerge`: may `a` and `b` become one node?
fn allow_merge(a: &Node, b: &Node, fill: i32) -> bool {
    if a.plain || b.plain {
        return false;
    }
    // Redis's approximation: minus 11 for one listpack's header and trailer.
    let merge_sz = (a.redis_sz() + b.redis_sz()).saturating_sub(11);
    if size_meets_optimization(merge_sz, fill) {
        true
    } else if merge_sz > SIZE_SAFETY_LIMIT {
        false
    } else {
        i64::from(a.count) + i64::from(b.count) <= i64::from(fill)
    }
}

// ---------------------------------------------------------------------------------------------
// The list.

/// A Redis list value: a quicklist of packed nodes (see the module docs).
///
/// One pointer wide, so it fits the keyspace's 32-byte value enum.
#[derive(Clone)]
pub struct List {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    nodes: VecDeque<Node>,
    len: usize,
    /// The fill last passed in, for merges made by operations that take none.
    fill: i32,
}

impl Default for List {
    fn default() -> Self {
        List::new()
    }
}

/// Lists are equal when they hold the same elements in the same order, however the nodes
/// are cut.
impl PartialEq for List {
    fn eq(&self, other: &List) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for List {}

impl fmt::Debug for List {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl List {
    /// An empty list (the keyspace deletes a list once it is empty, as Redis does).
    pub fn new() -> List {
        List {
            inner: Box::new(Inner {
                nodes: VecDeque::new(),
                len: 0,
                fill: DEFAULT_FILL,
            }),
        }
    }

    /// Number of elements (LLEN).
    #[inline]
    pub fn len(&self) -> usize {
        self.inner.len
    }

    /// True when the list holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inner.len == 0
    }

    /// Number of nodes (DEBUG OBJECT's `ql_nodes`), for introspection and tests.
    pub fn node_count(&self) -> usize {
        self.inner.nodes.len()
    }

    fn note_fill(&mut self, fill: i32) -> i32 {
        let fill = clamp_fill(fill);
        self.inner.fill = fill;
        fill
    }

    /// Adds a node at `at`. The node table grows by a quarter at a time (one slot for a
    /// list's first node) rather than doubling, so it costs about what Redis's 40-byte
    /// quicklistNode structs do, still amortised O(1).
    fn insert_node(&mut self, at: usize, node: Node) {
        let nodes = &mut self.inner.nodes;
        if nodes.len() == nodes.capacity() {
            nodes.reserve_exact((nodes.len() / 4).max(1));
        }
        nodes.insert(at, node);
    }

    /// Drops node `i`, giving back deque memory once it is mostly unused.
    fn remove_node(&mut self, i: usize) {
        let nodes = &mut self.inner.nodes;
        nodes.remove(i);
        Self::shrink_nodes(nodes);
    }

    fn shrink_nodes(nodes: &mut VecDeque<Node>) {
        if nodes.capacity() > 8 && nodes.len() * 4 < nodes.capacity() {
            nodes.shrink_to(nodes.len() * 2);
        }
    }

    /// LPUSH one element (quicklistPushHead), with `fill` as `list-max-listpack-size`.
    ///
    /// Panics if `value` is 4 GiB or longer (Redis's own ceiling for an element).
    pub fn push_front(&mut self, value: &[u8], fill: i32) {
        let fill = self.note_fill(fill);
        let enc = Encoded::new(value);
        match self.inner.nodes.front_mut() {
            Some(head) if allow_insert(head, fill, value.len()) => head.insert_entry(0, &enc),
            _ => self.insert_node(0, Node::with_entry(&enc, is_large(value.len()))),
        }
        self.inner.len += 1;
    }

    /// RPUSH one element (quicklistPushTail), with `fill` as `list-max-listpack-size`.
    ///
    /// Panics if `value` is 4 GiB or longer (Redis's own ceiling for an element).
    pub fn push_back(&mut self, value: &[u8], fill: i32) {
        let fill = self.note_fill(fill);
        let enc = Encoded::new(value);
        match self.inner.nodes.back_mut() {
            Some(tail) if allow_insert(tail, fill, value.len()) => tail.push_entry(&enc),
            _ => {
                let at = self.inner.nodes.len();
                self.insert_node(at, Node::with_entry(&enc, is_large(value.len())));
            }
        }
        self.inner.len += 1;
    }

    /// LPOP: the head element, if any.
    pub fn pop_front(&mut self) -> Option<Bytes> {
        let node = self.inner.nodes.front_mut()?;
        let (e, n) = decode(&node.buf, 0);
        let out = e.to_bytes();
        if node.count == 1 {
            self.remove_node(0);
        } else {
            node.remove_bytes(0..n, 1);
        }
        self.inner.len -= 1;
        Some(out)
    }

    /// RPOP: the tail element, if any.
    pub fn pop_back(&mut self) -> Option<Bytes> {
        let last = self.inner.nodes.len().checked_sub(1)?;
        let node = &mut self.inner.nodes[last];
        let start = prev_start(&node.buf, node.buf.len());
        let out = decode(&node.buf, start).0.to_bytes();
        if node.count == 1 {
            self.remove_node(last);
        } else {
            let end = node.buf.len();
            node.remove_bytes(start..end, 1);
        }
        self.inner.len -= 1;
        Some(out)
    }

    /// LPOP with a count: up to `count` elements from the head, in list order, dropping
    /// whole nodes without walking them twice.
    pub fn pop_front_n(&mut self, count: usize) -> Vec<Bytes> {
        let n = count.min(self.inner.len);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let need = n - out.len();
            let node = self.inner.nodes.front_mut().expect("len counts the nodes");
            let take = need.min(node.count as usize);
            let mut p = 0;
            for _ in 0..take {
                let (e, l) = decode(&node.buf, p);
                out.push(e.to_bytes());
                p += l;
            }
            if take == node.count as usize {
                self.inner.nodes.pop_front();
            } else {
                node.remove_bytes(0..p, take);
            }
        }
        self.inner.len -= n;
        Self::shrink_nodes(&mut self.inner.nodes);
        out
    }

    /// RPOP with a count: up to `count` elements from the tail, in the order popped (tail
    /// first, as RPOP's reply lists them).
    pub fn pop_back_n(&mut self, count: usize) -> Vec<Bytes> {
        let n = count.min(self.inner.len);
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let need = n - out.len();
            let node = self.inner.nodes.back_mut().expect("len counts the nodes");
            let take = need.min(node.count as usize);
            let mut p = node.buf.len();
            for _ in 0..take {
                p = prev_start(&node.buf, p);
                out.push(decode(&node.buf, p).0.to_bytes());
            }
            if take == node.count as usize {
                self.inner.nodes.pop_back();
            } else {
                let end = node.buf.len();
                node.remove_bytes(p..end, take);
            }
        }
        self.inner.len -= n;
        Self::shrink_nodes(&mut self.inner.nodes);
        out
    }

    /// Resolves a Redis index (negative from the tail) to an in-range position.
    fn normalize(&self, index: i64) -> Option<usize> {
        let len = self.inner.len as i64;
        let i = if index < 0 { index + len } else { index };
        (0..len).contains(&i).then_some(i as usize)
    }

    /// (node, offset in node) of position `i` (< len), walking node counts from the nearer end.
    fn locate(&self, i: usize) -> (usize, usize) {
        let nodes = &self.inner.nodes;
        if i < self.inner.len / 2 {
            let mut acc = 0;
            for (ni, node) in nodes.iter().enumerate() {
                let c = node.count as usize;
                if i < acc + c {
                    return (ni, i - acc);
                }
                acc += c;
            }
        } else {
            let mut from_tail = self.inner.len - 1 - i;
            for (ni, node) in nodes.iter().enumerate().rev() {
                let c = node.count as usize;
                if from_tail < c {
                    return (ni, c - 1 - from_tail);
                }
                from_tail -= c;
            }
        }
        unreachable!("position {i} outside a list of {}", self.inner.len)
    }

    /// LINDEX: the element at `index` (negative from the tail), `None` out of range.
    pub fn get(&self, index: i64) -> Option<Elem<'_>> {
        let (ni, off) = self.locate(self.normalize(index)?);
        let node = &self.inner.nodes[ni];
        Some(decode(&node.buf, node.seek(off)).0)
    }

    /// [`List::get`] copied into `Bytes` for a reply.
    pub fn get_bytes(&self, index: i64) -> Option<Bytes> {
        self.get(index).map(|e| e.to_bytes())
    }

    /// LSET: replaces the element at `index`; false (Redis's "index out of range") when
    /// there is none. Replaced in place, as lpReplace does, without a fill check; a large
    /// element moves to (or out of) a node of its own.
    pub fn set(&mut self, index: i64, value: &[u8]) -> bool {
        let Some(i) = self.normalize(index) else {
            return false;
        };
        let (ni, off) = self.locate(i);
        let node = &mut self.inner.nodes[ni];
        if !node.plain && !is_large(value.len()) {
            let pos = node.seek(off);
            let old = decode(&node.buf, pos).1;
            let enc = Encoded::new(value);
            let new = enc.len();
            if new > old {
                node.open_gap(pos + old, new - old);
            } else if new < old {
                node.buf.drain(pos + new..pos + old);
                node.shrink();
            }
            enc.write(&mut node.buf[pos..pos + new]);
        } else {
            // quicklistReplaceEntry: insert the new element after the old, then drop the old.
            let fill = self.inner.fill;
            self.insert_at_entry(ni, off, true, value, fill);
            self.delete_entry(ni, off);
        }
        true
    }

    /// Removes entry `off` of node `ni`, and the node if that empties it.
    fn delete_entry(&mut self, ni: usize, off: usize) {
        let node = &mut self.inner.nodes[ni];
        if node.count == 1 {
            self.remove_node(ni);
        } else {
            let pos = node.seek(off);
            let n = decode(&node.buf, pos).1;
            node.remove_bytes(pos..pos + n, 1);
        }
        self.inner.len -= 1;
    }

    /// LINSERT: puts `value` before (or after) the first element equal to `pivot`, and
    /// returns the new length (LINSERT's reply); `None` when no element equals `pivot`.
    pub fn insert(&mut self, before: bool, pivot: &[u8], value: &[u8], fill: i32) -> Option<usize> {
        let fill = self.note_fill(fill);
        let needle = Needle::new(pivot);
        let (ni, off) = self.inner.nodes.iter().enumerate().find_map(|(ni, node)| {
            let mut p = 0;
            for off in 0..node.count as usize {
                let (e, n) = decode(&node.buf, p);
                if needle.matches(e) {
                    return Some((ni, off));
                }
                p += n;
            }
            None
        })?;
        self.insert_at_entry(ni, off, !before, value, fill);
        Some(self.inner.len)
    }

    /// quicklist.c `_quicklistInsert`: adds `value` next to entry `off` of node `ni`, into
    /// that node when it has room, else into a neighbour with room at the matching edge, else
    /// a new node at an edge, else by splitting the node and merging what fits.
    fn insert_at_entry(&mut self, ni: usize, off: usize, after: bool, value: &[u8], fill: i32) {
        let sz = value.len();
        let enc = Encoded::new(value);
        let nodes = &self.inner.nodes;
        let count = nodes[ni].count as usize;
        let full = !allow_insert(&nodes[ni], fill, sz);
        let at_tail = after && off == count - 1;
        let at_head = !after && off == 0;
        let avail_next = at_tail && ni + 1 < nodes.len() && allow_insert(&nodes[ni + 1], fill, sz);
        let avail_prev = at_head && ni > 0 && allow_insert(&nodes[ni - 1], fill, sz);
        self.inner.len += 1;

        if is_large(sz) {
            let plain = Node::with_entry(&enc, true);
            if self.inner.nodes[ni].plain || at_tail || at_head {
                self.insert_node(if after { ni + 1 } else { ni }, plain);
            } else {
                let piece = self.inner.nodes[ni].split(off, after);
                if after {
                    self.insert_node(ni + 1, plain);
                    self.insert_node(ni + 2, piece);
                } else {
                    self.insert_node(ni, piece);
                    self.insert_node(ni + 1, plain);
                }
            }
            return;
        }

        let nodes = &mut self.inner.nodes;
        if !full {
            let node = &mut nodes[ni];
            let mut pos = node.seek(off);
            if after {
                pos += decode(&node.buf, pos).1;
            }
            node.insert_entry(pos, &enc);
        } else if avail_next {
            nodes[ni + 1].insert_entry(0, &enc);
        } else if avail_prev {
            nodes[ni - 1].push_entry(&enc);
        } else if at_tail || at_head {
            self.insert_node(
                if after { ni + 1 } else { ni },
                Node::with_entry(&enc, false),
            );
        } else {
            let mut piece = nodes[ni].split(off, after);
            if after {
                piece.insert_entry(0, &enc);
                self.insert_node(ni + 1, piece);
                self.merge_around(ni, fill);
            } else {
                piece.push_entry(&enc);
                self.insert_node(ni, piece);
                self.merge_around(ni + 1, fill);
            }
        }
    }

    /// Moves node `i + 1`'s entries into node `i`.
    fn merge_next_into(&mut self, i: usize) {
        let right = self
            .inner
            .nodes
            .remove(i + 1)
            .expect("merging with a neighbour");
        self.inner.nodes[i].absorb(right);
    }

    /// quicklist.c `_quicklistMergeNodes`: after a split, tries (prev-prev, prev),
    /// (next, next-next), (prev, center) and (center, next), in that order.
    fn merge_around(&mut self, mut c: usize, fill: i32) {
        let can = |s: &Self, i: usize, j: usize| {
            let nodes = &s.inner.nodes;
            j < nodes.len() && allow_merge(&nodes[i], &nodes[j], fill)
        };
        if c >= 2 && can(self, c - 1, c - 2) {
            self.merge_next_into(c - 2);
            c -= 1;
        }
        if can(self, c + 1, c + 2) {
            self.merge_next_into(c + 1);
        }
        if c >= 1 && can(self, c, c - 1) {
            self.merge_next_into(c - 1);
            c -= 1;
        }
        if can(self, c, c + 1) {
            self.merge_next_into(c);
        }
    }

    /// Drops emptied nodes in `lo..=hi` and merges every run of neighbours there (and one
    /// node either side) that fits the fill, in one pass.
    fn compact(&mut self, lo: usize, hi: usize) {
        let fill = self.inner.fill;
        let nodes = &mut self.inner.nodes;
        if nodes.is_empty() {
            return;
        }
        let a = lo.saturating_sub(1);
        let b = (hi + 1).min(nodes.len() - 1);
        // Nodes a..=w are kept; the slots between w and r hold emptied leftovers.
        let mut w: Option<usize> = None;
        for r in a..=b {
            if nodes[r].count == 0 {
                continue;
            }
            match w {
                Some(wi) if allow_merge(&nodes[wi], &nodes[r], fill) => {
                    let right = std::mem::replace(
                        &mut nodes[r],
                        Node {
                            buf: Vec::new(),
                            count: 0,
                            plain: false,
                        },
                    );
                    nodes[wi].absorb(right);
                }
                _ => {
                    let wi = w.map_or(a, |x| x + 1);
                    nodes.swap(wi, r);
                    w = Some(wi);
                }
            }
        }
        let keep_end = w.map_or(a, |x| x + 1);
        nodes.drain(keep_end..=b);
        Self::shrink_nodes(nodes);
    }

    /// LREM: removes elements equal to `value`: the first `count` from the head when
    /// `count > 0`, the last `-count` from the tail when `count < 0`, all when 0. Returns
    /// how many went. Each node is rewritten in one pass and the nodes it shrank are merged
    /// with their neighbours where the fill allows.
    pub fn remove(&mut self, count: i64, value: &[u8]) -> usize {
        let needle = Needle::new(value);
        let from_tail = count < 0;
        let mut quota = match count {
            0 => usize::MAX,
            c => usize::try_from(c.unsigned_abs()).unwrap_or(usize::MAX),
        };
        let n = self.inner.nodes.len();
        let (mut removed, mut lo, mut hi) = (0, usize::MAX, 0);
        for step in 0..n {
            let i = if from_tail { n - 1 - step } else { step };
            let k = self.inner.nodes[i].remove_matching(&needle, quota, from_tail);
            if k > 0 {
                removed += k;
                quota -= k;
                lo = lo.min(i);
                hi = hi.max(i);
                if quota == 0 {
                    break;
                }
            }
        }
        if removed > 0 {
            self.inner.len -= removed;
            self.compact(lo, hi);
        }
        removed
    }

    /// Removes the first `n` (≤ len) elements.
    fn delete_front(&mut self, mut n: usize) {
        self.inner.len -= n;
        while n > 0 {
            let node = self.inner.nodes.front_mut().expect("len counts the nodes");
            let c = node.count as usize;
            if c <= n {
                self.inner.nodes.pop_front();
                n -= c;
            } else {
                let pos = node.seek(n);
                node.remove_bytes(0..pos, n);
                n = 0;
            }
        }
        Self::shrink_nodes(&mut self.inner.nodes);
    }

    /// Removes the last `n` (≤ len) elements.
    fn delete_back(&mut self, mut n: usize) {
        self.inner.len -= n;
        while n > 0 {
            let node = self.inner.nodes.back_mut().expect("len counts the nodes");
            let c = node.count as usize;
            if c <= n {
                self.inner.nodes.pop_back();
                n -= c;
            } else {
                let pos = node.seek(c - n);
                let end = node.buf.len();
                node.remove_bytes(pos..end, n);
                n = 0;
            }
        }
        Self::shrink_nodes(&mut self.inner.nodes);
    }

    /// LTRIM: keeps only `start..=stop` (Redis's index rules: negative from the tail, an
    /// empty or out-of-range window empties the list). Returns how many elements went.
    pub fn trim(&mut self, start: i64, stop: i64) -> usize {
        let len = self.inner.len as i64;
        let (ltrim, rtrim) = match Self::window(len, start, stop) {
            None => (len, 0),
            Some((s, e)) => (s, len - e - 1),
        };
        self.delete_front(ltrim as usize);
        self.delete_back(rtrim as usize);
        (ltrim + rtrim) as usize
    }

    /// LRANGE/LTRIM index normalisation: the inclusive window, or `None` when it is empty.
    fn window(len: i64, start: i64, stop: i64) -> Option<(i64, i64)> {
        let mut start = if start < 0 { start + len } else { start };
        let stop = if stop < 0 { stop + len } else { stop };
        if start < 0 {
            start = 0;
        }
        if start > stop || start >= len {
            None
        } else {
            Some((start, stop.min(len - 1)))
        }
    }

    /// An iterator over positions `s..=e` (both in range), each end found from the nearer
    /// end of the list.
    fn iter_between(&self, s: usize, e: usize) -> Iter<'_> {
        let nodes = &self.inner.nodes;
        let (fnode, foff) = self.locate(s);
        let (bnode, boff) = self.locate(e);
        let fpos = nodes[fnode].seek(foff);
        let bpos = nodes[bnode].seek(boff);
        Iter {
            nodes,
            fnode,
            fpos,
            bnode,
            bend: bpos + decode(&nodes[bnode].buf, bpos).1,
            remaining: e - s + 1,
        }
    }

    fn empty_iter(&self) -> Iter<'_> {
        Iter {
            nodes: &self.inner.nodes,
            fnode: 0,
            fpos: 0,
            bnode: 0,
            bend: 0,
            remaining: 0,
        }
    }

    /// LRANGE: the elements `start..=stop` with Redis's index rules (negative from the tail,
    /// clamped, empty when the window is). Double-ended: `.rev()` walks it from `stop` back,
    /// as LMPOP/RPOP-with-count replies need.
    pub fn range(&self, start: i64, stop: i64) -> Iter<'_> {
        match Self::window(self.inner.len as i64, start, stop) {
            Some((s, e)) => self.iter_between(s as usize, e as usize),
            None => self.empty_iter(),
        }
    }

    /// Every element from `index` (negative from the tail) to the tail; empty when `index`
    /// is out of range. Starts from whichever end of the list is nearer.
    pub fn iter_from(&self, index: i64) -> Iter<'_> {
        match self.normalize(index) {
            Some(i) => self.iter_between(i, self.inner.len - 1),
            None => self.empty_iter(),
        }
    }

    /// Every element from `index` (negative from the tail) back to the head; empty when
    /// `index` is out of range.
    pub fn iter_rev_from(&self, index: i64) -> Rev<Iter<'_>> {
        match self.normalize(index) {
            Some(i) => self.iter_between(0, i),
            None => self.empty_iter(),
        }
        .rev()
    }

    /// Every element, head to tail.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            nodes: &self.inner.nodes,
            fnode: 0,
            fpos: 0,
            bnode: self.inner.nodes.len().saturating_sub(1),
            bend: self.inner.nodes.back().map_or(0, |n| n.buf.len()),
            remaining: self.inner.len,
        }
    }

    /// Every element, tail to head.
    pub fn iter_rev(&self) -> Rev<Iter<'_>> {
        self.iter().rev()
    }

    /// LPOS: positions (0-based from the head, as LINDEX counts) of elements equal to
    /// `value`. `rank` picks the first match to report (1 = first; negative searches from
    /// the tail; 0 finds nothing, LPOS rejects it before asking), `count` caps how many are
    /// reported (0 = all, as COUNT 0), and `maxlen` caps how many elements are compared
    /// (0 = no cap). Without COUNT, LPOS's answer is `positions(v, rank, 1, maxlen).first()`
    /// (see [`List::position`]).
    pub fn positions(&self, value: &[u8], rank: i64, count: usize, maxlen: usize) -> Vec<usize> {
        if rank == 0 || self.is_empty() {
            return Vec::new();
        }
        let needle = Needle::new(value);
        if rank > 0 {
            scan_matches(
                self.iter(),
                &needle,
                rank.unsigned_abs(),
                count,
                maxlen,
                |i| i,
            )
        } else {
            let last = self.inner.len - 1;
            scan_matches(
                self.iter_rev(),
                &needle,
                rank.unsigned_abs(),
                count,
                maxlen,
                |i| last - i,
            )
        }
    }

    /// LPOS without COUNT: the position of the `rank`-th match, compared within the first
    /// `maxlen` elements (0 = all); see [`List::positions`].
    pub fn position(&self, value: &[u8], rank: i64, maxlen: usize) -> Option<usize> {
        self.positions(value, rank, 1, maxlen).first().copied()
    }

    /// What Redis 7.0's MEMORY USAGE reports for this list's value with its default SAMPLES
    /// (5): the object header, the quicklist, and per node a quicklistNode plus the
    /// listpack's jemalloc size, averaged over the first 5 nodes and multiplied by the node
    /// count. MEMORY USAGE adds the key's allocation and a 24-byte dict entry on top.
    pub fn mem_usage(&self) -> usize {
        self.mem_usage_samples(MEMORY_USAGE_SAMPLES)
    }

    /// [`List::mem_usage`] with MEMORY USAGE's SAMPLES `samples` (0 = every node).
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        let nodes = &self.inner.nodes;
        let base = REDIS_ROBJ + REDIS_QUICKLIST;
        if nodes.is_empty() {
            return base;
        }
        let samples = if samples == 0 { usize::MAX } else { samples };
        let (mut elesize, mut taken) = (0usize, 0usize);
        for node in nodes.iter().take(samples) {
            elesize += REDIS_QUICKLIST_NODE + size_class(node.redis_sz());
            taken += 1;
        }
        base + (elesize as f64 / taken as f64 * nodes.len() as f64) as usize
    }

    /// Bytes this list has asked the allocator for (its box, the node table and the node
    /// buffers' capacity), for the server's own memory accounting and compactness tests.
    pub fn heap_bytes(&self) -> usize {
        let nodes = &self.inner.nodes;
        std::mem::size_of::<Inner>()
            + nodes.capacity() * std::mem::size_of::<Node>()
            + nodes.iter().map(|n| n.buf.capacity()).sum::<usize>()
    }
}

/// lposCommand's loop over `it`: reports match positions (mapped by `pos` from the scan
/// index) from the `rank`-th match on, at most `count` of them (0 = all), comparing at most
/// `maxlen` elements (0 = all).
fn scan_matches<'a>(
    it: impl Iterator<Item = Elem<'a>>,
    needle: &Needle<'_>,
    rank: u64,
    count: usize,
    maxlen: usize,
    pos: impl Fn(usize) -> usize,
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut matches: u64 = 0;
    for (index, e) in it.enumerate() {
        if maxlen != 0 && index >= maxlen {
            break;
        }
        if needle.matches(e) {
            matches += 1;
            if matches >= rank {
                out.push(pos(index));
                if count != 0 && out.len() >= count {
                    break;
                }
            }
        }
    }
    out
}

/// Iterates a list's elements (or a window of them) from either end; each step decodes one
/// entry in place.
#[derive(Clone)]
pub struct Iter<'a> {
    nodes: &'a VecDeque<Node>,
    /// Node and byte offset of the next element from the front.
    fnode: usize,
    fpos: usize,
    /// Node and end offset of the next element from the back.
    bnode: usize,
    bend: usize,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Elem<'a>;

    #[inline]
    fn next(&mut self) -> Option<Elem<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let nodes: &'a VecDeque<Node> = self.nodes;
        if self.fpos == nodes[self.fnode].buf.len() {
            self.fnode += 1;
            self.fpos = 0;
        }
        let (e, n) = decode(&nodes[self.fnode].buf, self.fpos);
        self.fpos += n;
        self.remaining -= 1;
        Some(e)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<'a> DoubleEndedIterator for Iter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<Elem<'a>> {
        if self.remaining == 0 {
            return None;
        }
        let nodes: &'a VecDeque<Node> = self.nodes;
        if self.bend == 0 {
            self.bnode -= 1;
            self.bend = nodes[self.bnode].buf.len();
        }
        let buf = &nodes[self.bnode].buf;
        let start = prev_start(buf, self.bend);
        self.bend = start;
        self.remaining -= 1;
        Some(decode(buf, start).0)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl std::iter::FusedIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a List {
    type Item = Elem<'a>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MEMORY USAGE's part for a one-letter key: an 8-byte sds allocation and a dictEntry.
    const KEY_K_OVERHEAD: usize = 8 + 24;

    fn list_of<S: AsRef<[u8]>>(items: impl IntoIterator<Item = S>, fill: i32) -> List {
        let mut l = List::new();
        for it in items {
            l.push_back(it.as_ref(), fill);
        }
        l
    }

    fn contents(l: &List) -> Vec<Vec<u8>> {
        l.iter().map(|e| e.to_vec()).collect()
    }

    fn strs(l: &List) -> Vec<String> {
        l.iter()
            .map(|e| String::from_utf8(e.to_vec()).unwrap())
            .collect()
    }

    /// (node count, sum of Redis's node sizes): DEBUG OBJECT's ql_nodes and
    /// ql_uncompressed_size, to compare the node layout with a real server's.
    fn layout(l: &List) -> (usize, usize) {
        (
            l.node_count(),
            l.inner.nodes.iter().map(Node::redis_sz).sum(),
        )
    }

    /// Every structural promise the list makes, checked from scratch.
    fn check_invariants(l: &List) {
        let mut total = 0;
        for (i, node) in l.inner.nodes.iter().enumerate() {
            assert!(node.count > 0, "node {i} is empty");
            let mut p = 0;
            let mut starts = Vec::new();
            while p < node.buf.len() {
                starts.push(p);
                p += decode(&node.buf, p).1;
            }
            assert_eq!(p, node.buf.len(), "node {i} entries overrun");
            assert_eq!(starts.len(), node.count as usize, "node {i} count");
            let mut end = node.buf.len();
            for &s in starts.iter().rev() {
                assert_eq!(prev_start(&node.buf, end), s, "node {i} backlen");
                end = s;
            }
            if node.plain {
                assert_eq!(node.count, 1, "plain node {i} shares");
            }
            total += node.count as usize;
        }
        assert_eq!(total, l.len());
        assert_eq!(l.iter().len(), l.len());
        assert_eq!(l.iter().count(), l.len());
        assert_eq!(l.iter_rev().count(), l.len());
    }

    fn with_packed_threshold<R>(t: usize, f: impl FnOnce() -> R) -> R {
        TEST_PACKED_THRESHOLD.with(|c| c.set(t));
        let r = f();
        TEST_PACKED_THRESHOLD.with(|c| c.set(PACKED_THRESHOLD));
        r
    }

    #[test]
    fn lists_cross_threads_and_compare_by_content() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<List>();
        let items: Vec<String> = (0..500).map(|i| format!("e{i}")).collect();
        assert_eq!(list_of(&items, 2), list_of(&items, -2));
        assert_ne!(list_of(&items, 2), list_of(&items[1..], 2));
    }

    #[test]
    fn list_value_is_one_pointer_wide() {
        assert!(std::mem::size_of::<List>() <= 24);
        assert_eq!(std::mem::size_of::<List>(), 8);
    }

    #[test]
    fn bytes_out_equal_bytes_in_for_integer_like_strings() {
        let items: Vec<Vec<u8>> = [
            "0",
            "-0",
            "007",
            "+1",
            "1 ",
            " 1",
            "",
            "-",
            "1e3",
            "0x10",
            "127",
            "128",
            "-1",
            "4095",
            "4096",
            "-4096",
            "-4097",
            "32767",
            "32768",
            "-32768",
            "-32769",
            "8388607",
            "8388608",
            "-8388608",
            "-8388609",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "9223372036854775807",
            "-9223372036854775808",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            "00",
            "-01",
            "123456789012345678901",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let mut l = list_of(&items, DEFAULT_FILL);
        check_invariants(&l);
        assert_eq!(contents(&l), items);
        let rev: Vec<_> = l.iter_rev().map(|e| e.to_vec()).collect();
        assert_eq!(rev, items.iter().rev().cloned().collect::<Vec<_>>());
        for (i, it) in items.iter().enumerate() {
            assert_eq!(l.get(i as i64).unwrap().to_vec(), *it);
            assert_eq!(l.get(i as i64).unwrap().len(), it.len());
            assert!(l.get(i as i64).unwrap() == it.as_slice());
        }
        assert_eq!(l.get(0), Some(Elem::Int(0)));
        assert_eq!(l.get(1), Some(Elem::Bytes(b"-0")));
        assert_eq!(l.get(2).unwrap().as_int(), None);
        // Popping hands back the same bytes too.
        assert_eq!(&l.pop_back().unwrap()[..], b"123456789012345678901");
        assert_eq!(&l.pop_front().unwrap()[..], b"0");
        assert_eq!(&l.pop_front().unwrap()[..], b"-0");
    }

    #[test]
    fn entries_take_listpack_sizes() {
        // Same bytes per entry as Redis's listpack: "a" 3, 7 4-bit-ish int 2, 13-bit int 3,
        // a 100-byte string 2+100+1, a 5000-byte string 5+5000+2.
        let cases: [(&[u8], usize); 7] = [
            (b"a", 3),
            (b"7", 2),
            (b"-4096", 3),
            (b"32767", 4),
            (b"9223372036854775807", 10),
            (&[b'x'; 100], 103),
            (&[b'y'; 5000], 5007),
        ];
        for (v, n) in cases {
            let l = list_of([v], DEFAULT_FILL);
            assert_eq!(l.inner.nodes[0].buf.len(), n, "{:?}", v.escape_ascii());
        }
    }

    #[test]
    fn pushes_cut_nodes_where_redis_does() {
        // Figures from redis-server 7.0.15 DEBUG OBJECT (ql_nodes, ql_uncompressed_size)
        // after RPUSH of "v0".."v9999" under each list-max-listpack-size.
        let items: Vec<String> = (0..10000).map(|i| format!("v{i}")).collect();
        for (fill, nodes, sz) in [
            (-1, 17, 69009),
            (-2, 9, 68953),
            (-5, 2, 68904),
            (1, 10000, 138890),
            (5, 2000, 82890),
            (128, 79, 69443),
        ] {
            let l = list_of(&items, fill);
            check_invariants(&l);
            assert_eq!(layout(&l), (nodes, sz), "fill {fill}");
        }
        // LPUSH of "0".."9999" (packed integers), 1000 at a time as LPUSH k 0 1 2 ... does.
        let mut l = List::new();
        for i in 0..10000 {
            l.push_front(i.to_string().as_bytes(), DEFAULT_FILL);
        }
        assert_eq!(layout(&l), (5, 35811));
        assert_eq!(l.get(0).unwrap().as_int(), Some(9999));
        assert_eq!(l.get(-1).unwrap().as_int(), Some(0));
    }

    #[test]
    fn fill_is_clamped_like_quicklist_set_fill() {
        let items: Vec<String> = (0..3000).map(|i| format!("v{i}")).collect();
        assert_eq!(layout(&list_of(&items, -100)), layout(&list_of(&items, -5)));
        assert_eq!(
            layout(&list_of(&items, i32::MAX)),
            layout(&list_of(&items, FILL_MAX))
        );
        // Count-limited nodes still stop at 8 KB.
        let big: Vec<Vec<u8>> = (0..100)
            .map(|i| vec![b'a' + (i % 26) as u8; 1000])
            .collect();
        let l = list_of(&big, 1000);
        assert!(l
            .inner
            .nodes
            .iter()
            .all(|n| n.redis_sz() <= SIZE_SAFETY_LIMIT));
    }

    #[test]
    fn insert_into_full_node_splits_and_keeps_order() {
        // redis-server 7.0.15, list-max-listpack-size 4: RPUSH a1..a40, then these LINSERTs.
        let mut l = list_of((1..=40).map(|i| format!("a{i}")), 4);
        for (before, pivot, v) in [
            (true, "a6", "x"),
            (false, "a9", "y"),
            (true, "a1", "z"),
            (false, "a40", "w"),
            (true, "a22", "m"),
            (false, "a22", "n"),
            (true, "a3", "o"),
        ] {
            let want = l.len() + 1;
            assert_eq!(
                l.insert(before, pivot.as_bytes(), v.as_bytes(), 4),
                Some(want)
            );
            check_invariants(&l);
        }
        assert_eq!(
            strs(&l).join(" "),
            "z a1 a2 o a3 a4 a5 x a6 a7 a8 a9 y a10 a11 a12 a13 a14 a15 a16 a17 a18 a19 \
             a20 a21 m a22 n a23 a24 a25 a26 a27 a28 a29 a30 a31 a32 a33 a34 a35 a36 a37 \
             a38 a39 a40 w"
        );
        assert_eq!(layout(&l), (13, 303));
        assert!(l.inner.nodes.iter().all(|n| n.count <= 4));

        // Byte-limited nodes (4 KB), 100-byte elements, LINSERTs into the middle of full
        // nodes; redis-server 7.0.15 ends with 27 nodes totalling 105957 bytes.
        let item = |i: usize| format!("p{i:04}{}", "x".repeat(95));
        let mut l = list_of((0..1000).map(item), -1);
        for i in (0..1000).step_by(37) {
            let v = format!("ins{i}{}", "y".repeat(90));
            l.insert(i % 2 == 1, item(i).as_bytes(), v.as_bytes(), -1)
                .unwrap();
            check_invariants(&l);
        }
        assert_eq!(l.len(), 1028);
        assert_eq!(layout(&l), (27, 105957));
        assert_eq!(
            l.get(1).unwrap().to_vec(),
            format!("ins0{}", "y".repeat(90)).as_bytes()
        );
    }

    #[test]
    fn insert_reports_missing_pivot() {
        let mut l = list_of(["a", "1", "b"], DEFAULT_FILL);
        assert_eq!(l.insert(true, b"zz", b"x", DEFAULT_FILL), None);
        assert_eq!(l.insert(true, b"01", b"x", DEFAULT_FILL), None);
        assert_eq!(l.insert(false, b"1", b"x", DEFAULT_FILL), Some(4));
        assert_eq!(strs(&l), ["a", "1", "x", "b"]);
    }

    #[test]
    fn large_elements_get_nodes_of_their_own() {
        // redis-server 7.0.15 with DEBUG QUICKLIST-PACKED-THRESHOLD 100, step by step.
        with_packed_threshold(100, || {
            let mut l = list_of((0..10).map(|i| format!("s{i}")), DEFAULT_FILL);
            assert_eq!(layout(&l), (1, 47));
            assert!(l.set(5, &[b'L'; 200]));
            assert_eq!(layout(&l), (3, 250));
            l.insert(true, b"s2", &[b'M'; 150], DEFAULT_FILL).unwrap();
            assert_eq!(layout(&l), (5, 407));
            l.push_back(&[b'N'; 300], DEFAULT_FILL);
            assert_eq!(layout(&l), (6, 707));
            assert!(l.set(6, b"small"));
            assert_eq!(layout(&l), (5, 514));
            l.insert(false, b"small", b"t", DEFAULT_FILL).unwrap();
            assert_eq!(layout(&l), (5, 517));
            l.push_front(&[b'P'; 120], DEFAULT_FILL);
            assert_eq!(layout(&l), (6, 637));
            check_invariants(&l);
            let shape: Vec<String> = l
                .iter()
                .map(|e| match e.len() {
                    n if n > 20 => n.to_string(),
                    _ => String::from_utf8(e.to_vec()).unwrap(),
                })
                .collect();
            assert_eq!(
                shape,
                [
                    "120", "s0", "s1", "150", "s2", "s3", "s4", "small", "t", "s6", "s7", "s8",
                    "s9", "300"
                ]
            );
            // Memory as MEMORY USAGE k reported at each of these steps.
            assert_eq!(l.mem_usage() + KEY_K_OVERHEAD, 788);
            // A plain node never merges, even when its neighbours are removed around it.
            assert_eq!(l.remove(0, b"s3"), 1);
            assert!(l.inner.nodes.iter().filter(|n| n.plain).count() == 3);
            check_invariants(&l);
        });
    }

    #[test]
    fn get_and_set_follow_redis_index_rules() {
        let mut l = list_of(["a", "b", "c"], DEFAULT_FILL);
        assert_eq!(l.get(0).unwrap().to_vec(), b"a");
        assert_eq!(l.get(-1).unwrap().to_vec(), b"c");
        assert_eq!(l.get(-3).unwrap().to_vec(), b"a");
        assert_eq!(l.get(3), None);
        assert_eq!(l.get(-4), None);
        assert_eq!(l.get(i64::MIN), None);
        assert_eq!(l.get(i64::MAX), None);
        assert!(l.set(-1, b"12345"));
        assert!(l.set(0, &[b'z'; 5000]));
        assert!(l.set(1, b""));
        assert!(!l.set(3, b"x"));
        assert!(!l.set(-4, b"x"));
        check_invariants(&l);
        assert_eq!(contents(&l), [vec![b'z'; 5000], vec![], b"12345".to_vec()]);
        assert_eq!(l.get(2).unwrap().as_int(), Some(12345));
        assert_eq!(l.get_bytes(1).unwrap(), Bytes::new());
    }

    #[test]
    fn pops_with_count_come_out_in_pop_order() {
        let mut l = list_of((0..5000).map(|i| format!("e{i}")), 7);
        let front = l.pop_front_n(10);
        assert_eq!(front[0], "e0");
        assert_eq!(front[9], "e9");
        let back = l.pop_back_n(3);
        assert_eq!(back, ["e4999", "e4998", "e4997"]);
        check_invariants(&l);
        let all = l.pop_back_n(100_000);
        assert_eq!(all.len(), 4987);
        assert_eq!(all[0], "e4996");
        assert_eq!(all[4986], "e10");
        assert!(l.is_empty() && l.node_count() == 0);
        assert_eq!(l.pop_front(), None);
        assert_eq!(l.pop_back(), None);
        assert!(l.pop_front_n(3).is_empty());
        assert_eq!(l.node_count(), 0);
    }

    #[test]
    fn trim_follows_ltrim_normalisation() {
        let base: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let cases: [(i64, i64, &[&str]); 8] = [
            (0, -1, &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]),
            (1, 2, &["1", "2"]),
            (-3, -1, &["7", "8", "9"]),
            (-100, 1, &["0", "1"]),
            (8, 100, &["8", "9"]),
            (5, 2, &[]),
            (10, 20, &[]),
            (0, -11, &[]),
        ];
        for (s, e, want) in cases {
            let mut l = list_of(&base, 3);
            let removed = l.trim(s, e);
            assert_eq!(strs(&l), want, "LTRIM {s} {e}");
            assert_eq!(removed, 10 - want.len());
            check_invariants(&l);
        }
    }

    #[test]
    fn range_walks_windows_in_both_directions() {
        let l = list_of((0..3000).map(|i| format!("r{i}")), DEFAULT_FILL);
        let got: Vec<_> = l.range(2990, -1).map(|e| e.to_vec()).collect();
        assert_eq!(got.len(), 10);
        assert_eq!(got[0], b"r2990");
        let back: Vec<_> = l.range(-3, -1).rev().map(|e| e.to_vec()).collect();
        assert_eq!(
            back,
            [b"r2999".to_vec(), b"r2998".to_vec(), b"r2997".to_vec()]
        );
        assert_eq!(l.range(5, 4).count(), 0);
        assert_eq!(l.range(3000, 4000).count(), 0);
        assert_eq!(l.range(-5000, 1).count(), 2);
        assert_eq!(l.range(0, 1 << 40).len(), 3000);
        assert_eq!(
            l.iter_from(-2)
                .map(|e| e.to_vec())
                .collect::<Vec<_>>()
                .len(),
            2
        );
        assert_eq!(
            l.iter_rev_from(1).map(|e| e.to_vec()).collect::<Vec<_>>(),
            [b"r1".to_vec(), b"r0".to_vec()]
        );
        assert_eq!(l.iter_from(3000).count(), 0);
        assert_eq!(l.iter_rev_from(-3001).count(), 0);
        // Both ends of one iterator meet in the middle without repeating.
        let mut it = l.range(100, 103);
        assert_eq!(it.next().unwrap().to_vec(), b"r100");
        assert_eq!(it.next_back().unwrap().to_vec(), b"r103");
        assert_eq!(it.next_back().unwrap().to_vec(), b"r102");
        assert_eq!(it.next().unwrap().to_vec(), b"r101");
        assert_eq!(it.next(), None);
        assert_eq!(it.next_back(), None);
        assert_eq!(List::new().iter().count(), 0);
        assert_eq!(List::new().range(0, -1).rev().count(), 0);
    }

    #[test]
    fn positions_follow_lpos() {
        // The cases from Redis's tests/unit/type/list.tcl LPOS tests.
        let l = list_of(["a", "b", "c", "1", "2", "3", "c", "c"], DEFAULT_FILL);
        assert_eq!(l.position(b"c", 1, 0), Some(2));
        assert_eq!(l.position(b"c", 2, 0), Some(6));
        assert_eq!(l.position(b"c", 4, 0), None);
        assert_eq!(l.position(b"c", -1, 0), Some(7));
        assert_eq!(l.position(b"c", -2, 0), Some(6));
        assert_eq!(l.positions(b"c", 1, 0, 0), [2, 6, 7]);
        assert_eq!(l.positions(b"c", 1, 2, 0), [2, 6]);
        assert_eq!(l.positions(b"c", -1, 0, 0), [7, 6, 2]);
        assert_eq!(l.positions(b"c", 2, 0, 0), [6, 7]);
        assert_eq!(l.positions(b"c", -2, 1, 0), [6]);
        assert_eq!(l.positions(b"c", 1, 0, 1), Vec::<usize>::new());
        assert_eq!(l.positions(b"c", 1, 0, 3), [2]);
        assert_eq!(l.positions(b"c", -1, 0, 1), [7]);
        assert_eq!(l.position(b"c", 1, 2), None);
        assert_eq!(l.position(b"3", 1, 0), Some(5));
        assert_eq!(l.position(b"03", 1, 0), None);
        assert_eq!(l.position(b"c", 0, 0), None);
        assert_eq!(l.position(b"c", i64::MIN, 0), None);
        assert_eq!(List::new().position(b"c", -1, 0), None);
    }

    #[test]
    fn remove_follows_lrem_directions() {
        let items = ["x", "a", "x", "1", "x", "b", "x", "01", "1"];
        let mut l = list_of(items, 2);
        assert_eq!(l.remove(2, b"x"), 2);
        assert_eq!(strs(&l), ["a", "1", "x", "b", "x", "01", "1"]);
        assert_eq!(l.remove(-1, b"x"), 1);
        assert_eq!(strs(&l), ["a", "1", "x", "b", "01", "1"]);
        assert_eq!(l.remove(0, b"1"), 2);
        assert_eq!(strs(&l), ["a", "x", "b", "01"]);
        assert_eq!(l.remove(0, b"nope"), 0);
        assert_eq!(l.remove(i64::MIN, b"01"), 1);
        check_invariants(&l);
        assert_eq!(l.remove(0, b"a") + l.remove(0, b"x") + l.remove(0, b"b"), 3);
        assert!(l.is_empty() && l.node_count() == 0);
    }

    #[test]
    fn remove_churn_merges_nodes_back_together() {
        // 40000 elements over ~40 full 8 KB nodes; removing 3 of every 4 leaves nodes a
        // quarter full, which Redis keeps apart but this list merges back.
        let items: Vec<String> = (0..40000).map(|i| format!("k{}:{i}", i % 4)).collect();
        let mut l = list_of(&items, DEFAULT_FILL);
        let before = l.node_count();
        for k in 1..4 {
            assert_eq!(l.remove(0, format!("k{k}").as_bytes()), 0);
        }
        let mut removed = 0;
        for i in 0..40000 {
            if i % 4 != 0 {
                removed += l.remove(1, format!("k{}:{i}", i % 4).as_bytes());
            }
        }
        assert_eq!(removed, 30000);
        check_invariants(&l);
        let bytes: usize = l.inner.nodes.iter().map(Node::redis_sz).sum();
        // Greedy merging leaves no two neighbours that would fit one node, so nodes average
        // more than half the limit.
        assert!(
            l.node_count() <= 2 * bytes / 8192 + 1,
            "{} nodes",
            l.node_count()
        );
        assert!(l.node_count() < before / 2);
        for w in l.inner.nodes.iter().collect::<Vec<_>>().windows(2) {
            assert!(!allow_merge(w[0], w[1], DEFAULT_FILL));
        }
        // Memory came back too.
        let fresh = list_of(l.iter().map(|e| e.to_vec()), DEFAULT_FILL);
        assert!(l.heap_bytes() <= fresh.heap_bytes() * 3 / 2);
        assert_eq!(contents(&l), contents(&fresh));
    }

    #[test]
    fn mem_usage_matches_redis_memory_usage() {
        // redis-server 7.0.15: RPUSH k <n elements>, then MEMORY USAGE k (default SAMPLES 5).
        for (n, short_strings, ints) in [
            (1, 144, 144),
            (3, 160, 144),
            (100, 640, 352),
            (1000, 6272, 3200),
            (10000, 74176, 36640),
        ] {
            let s = list_of((0..n).map(|i| format!("v{i}")), DEFAULT_FILL);
            let i = list_of((0..n).map(|i| i.to_string()), DEFAULT_FILL);
            assert_eq!(s.mem_usage() + KEY_K_OVERHEAD, short_strings, "{n} strings");
            assert_eq!(i.mem_usage() + KEY_K_OVERHEAD, ints, "{n} ints");
        }
        // SAMPLES 0 looks at every node instead of extrapolating from the first five.
        let s = list_of((0..10000).map(|i| format!("v{i}")), DEFAULT_FILL);
        assert_eq!(s.mem_usage_samples(0) + KEY_K_OVERHEAD, 69568);
        // Three one-letter elements: the 144 bytes the brief quotes, key included.
        assert_eq!(list_of(["a", "b", "c"], DEFAULT_FILL).mem_usage() + 32, 144);
    }

    #[test]
    fn heap_is_no_larger_than_redis_for_short_lists() {
        // Redis's own value cost (MEMORY USAGE minus the key) for the same lists.
        for (n, redis_strings, redis_ints) in [
            (1, 112, 112),
            (3, 128, 112),
            (100, 608, 320),
            (1000, 6240, 3168),
            (10000, 69536, 36608),
        ] {
            let s = list_of((0..n).map(|i| format!("v{i}")), DEFAULT_FILL);
            let i = list_of((0..n).map(|i| i.to_string()), DEFAULT_FILL);
            assert!(s.heap_bytes() <= redis_strings, "{n}: {}", s.heap_bytes());
            assert!(i.heap_bytes() <= redis_ints, "{n}: {}", i.heap_bytes());
        }
        // Popping most of a list gives the memory back.
        let mut l = list_of((0..10000).map(|i| format!("v{i}")), DEFAULT_FILL);
        l.pop_front_n(9990);
        assert!(l.heap_bytes() < 400, "{}", l.heap_bytes());
        l.trim(0, 1);
        assert!(l.heap_bytes() < 200, "{}", l.heap_bytes());
    }

    /// The reference answers, computed the obvious way on a `VecDeque<Vec<u8>>`.
    mod model {
        use std::collections::VecDeque;

        pub fn window(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
            let len = len as i64;
            let s = if start < 0 {
                (len + start).max(0)
            } else {
                start
            };
            let e = if stop < 0 {
                len + stop
            } else {
                stop.min(len - 1)
            };
            (s <= e && s < len).then_some((s as usize, e as usize))
        }

        pub fn index(len: usize, i: i64) -> Option<usize> {
            let i = if i < 0 { i + len as i64 } else { i };
            (i >= 0 && i < len as i64).then_some(i as usize)
        }

        pub fn lpos(
            m: &VecDeque<Vec<u8>>,
            v: &[u8],
            rank: i64,
            count: usize,
            maxlen: usize,
        ) -> Vec<usize> {
            let order: Vec<usize> = if rank > 0 {
                (0..m.len()).collect()
            } else {
                (0..m.len()).rev().collect()
            };
            let limit = if maxlen == 0 { usize::MAX } else { maxlen };
            let hits = order
                .into_iter()
                .take(limit)
                .filter(|&i| m[i] == v)
                .skip(rank.unsigned_abs() as usize - 1);
            if count == 0 {
                hits.collect()
            } else {
                hits.take(count).collect()
            }
        }

        pub fn lrem(m: &mut VecDeque<Vec<u8>>, count: i64, v: &[u8]) -> usize {
            let n = m.len();
            let quota = if count == 0 {
                usize::MAX
            } else {
                count.unsigned_abs() as usize
            };
            let order: Vec<usize> = if count < 0 {
                (0..n).rev().collect()
            } else {
                (0..n).collect()
            };
            let mut gone: Vec<usize> = order.into_iter().filter(|&i| m[i] == v).collect();
            gone.truncate(quota);
            gone.sort_unstable();
            for &i in gone.iter().rev() {
                m.remove(i);
            }
            gone.len()
        }
    }

    fn random_value(rng: &mut fastrand::Rng, pool: &[Vec<u8>]) -> Vec<u8> {
        match rng.u32(0..100) {
            0..=59 => pool[rng.usize(..pool.len())].clone(),
            60..=74 => rng.i64(-100_000..100_000).to_string().into_bytes(),
            75..=79 => [i64::MIN, i64::MAX, -1, 0, 127, 128, -4097, 1 << 40][rng.usize(..8)]
                .to_string()
                .into_bytes(),
            80..=89 => (0..rng.usize(0..20))
                .map(|_| rng.alphanumeric() as u8)
                .collect(),
            90..=97 => vec![b'm'; rng.usize(60..300)],
            _ => vec![b'L'; rng.usize(3000..9000)],
        }
    }

    fn random_index(rng: &mut fastrand::Rng, len: usize) -> i64 {
        let len = len as i64;
        rng.i64(-len - 3..=len + 3)
    }

    fn run_model(seed: u64, fill: i32, steps: usize) {
        let mut rng = fastrand::Rng::with_seed(seed);
        let pool: Vec<Vec<u8>> = ["a", "b", "c", "7", "007", "-3", "", "hello world", "1000"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let mut l = List::new();
        let mut m: VecDeque<Vec<u8>> = VecDeque::new();
        for step in 0..steps {
            let ctx = format!("seed {seed} fill {fill} step {step}");
            // Grow while small, so every node shape gets exercised.
            let grow = if m.len() < 300 { 40 } else { 25 };
            match rng.u32(0..100) {
                n if n < grow => {
                    for _ in 0..rng.usize(1..8) {
                        let v = random_value(&mut rng, &pool);
                        if rng.bool() {
                            l.push_back(&v, fill);
                            m.push_back(v);
                        } else {
                            l.push_front(&v, fill);
                            m.push_front(v);
                        }
                    }
                }
                n if n < 45 => {
                    let (a, b) = if rng.bool() {
                        (l.pop_front(), m.pop_front())
                    } else {
                        (l.pop_back(), m.pop_back())
                    };
                    assert_eq!(a.map(|b| b.to_vec()), b, "{ctx}: pop");
                }
                n if n < 50 => {
                    let k = rng.usize(0..12);
                    if rng.bool() {
                        let got = l.pop_front_n(k);
                        let want: Vec<_> = (0..k).map_while(|_| m.pop_front()).collect();
                        assert_eq!(got, want, "{ctx}: pop_front_n");
                    } else {
                        let got = l.pop_back_n(k);
                        let want: Vec<_> = (0..k).map_while(|_| m.pop_back()).collect();
                        assert_eq!(got, want, "{ctx}: pop_back_n");
                    }
                }
                n if n < 57 => {
                    let i = random_index(&mut rng, m.len());
                    let want = model::index(m.len(), i).map(|i| m[i].clone());
                    assert_eq!(l.get(i).map(|e| e.to_vec()), want, "{ctx}: get {i}");
                }
                n if n < 64 => {
                    let i = random_index(&mut rng, m.len());
                    let v = random_value(&mut rng, &pool);
                    let ok = l.set(i, &v);
                    assert_eq!(ok, model::index(m.len(), i).is_some(), "{ctx}: set {i}");
                    if let Some(i) = model::index(m.len(), i) {
                        m[i] = v;
                    }
                }
                n if n < 74 => {
                    let pivot = pool[rng.usize(..pool.len())].clone();
                    let v = random_value(&mut rng, &pool);
                    let before = rng.bool();
                    let got = l.insert(before, &pivot, &v, fill);
                    let want = m.iter().position(|e| *e == pivot).map(|p| {
                        m.insert(if before { p } else { p + 1 }, v);
                        m.len()
                    });
                    assert_eq!(got, want, "{ctx}: insert");
                }
                n if n < 82 => {
                    let count = rng.i64(-3..=3);
                    let v = pool[rng.usize(..pool.len())].clone();
                    let want = model::lrem(&mut m, count, &v);
                    assert_eq!(l.remove(count, &v), want, "{ctx}: remove {count}");
                }
                n if n < 84 => {
                    // Mostly gentle trims, so the list keeps some size.
                    let len = m.len() as i64;
                    let (s, e) = if rng.u32(0..4) == 0 {
                        (
                            random_index(&mut rng, m.len()),
                            random_index(&mut rng, m.len()),
                        )
                    } else {
                        (rng.i64(0..=3), rng.i64(-4..=-1).max(-len.max(1)))
                    };
                    let removed = l.trim(s, e);
                    let keep = model::window(m.len(), s, e);
                    let before = m.len();
                    m = match keep {
                        Some((s, e)) => m.range(s..=e).cloned().collect(),
                        None => VecDeque::new(),
                    };
                    assert_eq!(removed, before - m.len(), "{ctx}: trim {s} {e}");
                }
                n if n < 90 => {
                    let v = pool[rng.usize(..pool.len())].clone();
                    let mut rank = rng.i64(-3..=3);
                    if rank == 0 {
                        rank = 1;
                    }
                    let count = rng.usize(0..4);
                    let maxlen = if rng.bool() {
                        0
                    } else {
                        rng.usize(0..m.len() + 2)
                    };
                    assert_eq!(
                        l.positions(&v, rank, count, maxlen),
                        model::lpos(&m, &v, rank, count, maxlen),
                        "{ctx}: positions {rank} {count} {maxlen}"
                    );
                }
                n if n < 96 => {
                    let (s, e) = (
                        random_index(&mut rng, m.len()),
                        random_index(&mut rng, m.len()),
                    );
                    let want: Vec<Vec<u8>> = model::window(m.len(), s, e)
                        .map(|(s, e)| m.range(s..=e).cloned().collect())
                        .unwrap_or_default();
                    let got: Vec<_> = l.range(s, e).map(|e| e.to_vec()).collect();
                    assert_eq!(got, want, "{ctx}: range {s} {e}");
                    let mut got_rev: Vec<_> = l.range(s, e).rev().map(|e| e.to_vec()).collect();
                    got_rev.reverse();
                    assert_eq!(got_rev, want, "{ctx}: range rev {s} {e}");
                }
                _ => {
                    let i = random_index(&mut rng, m.len());
                    let (fwd, back): (Vec<Vec<u8>>, Vec<Vec<u8>>) = match model::index(m.len(), i) {
                        Some(i) => (
                            m.range(i..).cloned().collect(),
                            m.range(..=i).rev().cloned().collect(),
                        ),
                        None => (vec![], vec![]),
                    };
                    assert_eq!(l.iter_from(i).map(|e| e.to_vec()).collect::<Vec<_>>(), fwd);
                    assert_eq!(
                        l.iter_rev_from(i).map(|e| e.to_vec()).collect::<Vec<_>>(),
                        back
                    );
                }
            }
            assert_eq!(l.len(), m.len(), "{ctx}: len");
            if step % 10 == 0 || m.len() < 20 {
                check_invariants(&l);
                assert_eq!(contents(&l), m.iter().cloned().collect::<Vec<_>>(), "{ctx}");
            }
        }
        check_invariants(&l);
        assert_eq!(contents(&l), m.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn randomized_operations_match_a_vecdeque_model() {
        for (seed, fill) in [(1, -2), (2, -1), (3, -5), (4, 1), (5, 3), (6, 16), (7, 128)] {
            run_model(seed, fill, 3000);
        }
    }

    #[test]
    fn randomized_operations_match_with_plain_nodes() {
        with_packed_threshold(200, || {
            for (seed, fill) in [(11, -2), (12, 4)] {
                run_model(seed, fill, 3000);
            }
        });
    }

    #[test]
    fn clone_and_debug_show_the_elements() {
        let l = list_of(["a", "12", "b c"], DEFAULT_FILL);
        let c = l.clone();
        assert_eq!(format!("{c:?}"), r#"["a", 12, "b c"]"#);
        assert_eq!(contents(&l), contents(&c));
        assert_eq!((&l).into_iter().count(), 3);
    }
}
