//! Building a stream from its saved form (an RDB payload: the nodes' listpacks, the counters,
//! the groups), checking everything a payload could get wrong: every listpack is walked
//! element by element with bounds checked (lpValidateIntegrity) and as a stream node
//! (streamValidateListpackIntegrity), and, beyond Redis's checks, the entry IDs must rise
//! through the nodes and the live entries add up to the stream's length, so that no later
//! command can trip over a value a payload made up.

use std::collections::BTreeMap;

use crate::types::alloc::jemalloc_size;
use crate::types::list::entry::decode;
use crate::types::list::Elem;

use super::id::StreamId;
use super::node::{Node, FLAG_DELETED, FLAG_SAMEFIELDS};
use super::Stream;

/// Why a saved stream was refused; each is one of rdb.c's reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadIssue {
    /// "Stream node key entry is not the size of a stream ID".
    NodeKeySize,
    /// "Stream listpack integrity check failed."
    Integrity,
    /// "Empty listpack inside stream".
    EmptyNode,
    /// "Listpack re-added with existing key".
    DuplicateNode,
    /// "Stream length inconsistent with rax entries".
    Length,
}

/// lpValidateNext: the length of the element at `p` (encoding, data, backlen), if it lies
/// within `lp` (which ends with its end byte) and its backlen agrees.
fn element_len(lp: &[u8], p: usize) -> Option<usize> {
    let end = lp.len() - 1;
    let b = *lp.get(p)?;
    let (hdr, data) = if b & 0x80 == 0 {
        (1, 0)
    } else if b & 0xC0 == 0x80 {
        (1, usize::from(b & 0x3f))
    } else if b & 0xE0 == 0xC0 {
        (2, 0)
    } else if b & 0xF0 == 0xE0 {
        let lo = *lp.get(p + 1)?;
        (2, (usize::from(b & 0x0f) << 8) | usize::from(lo))
    } else {
        match b {
            0xF0 => {
                let n = lp.get(p + 1..p + 5)?;
                (5, u32::from_le_bytes(n.try_into().ok()?) as usize)
            }
            0xF1 => (3, 0),
            0xF2 => (4, 0),
            0xF3 => (5, 0),
            0xF4 => (9, 0),
            _ => return None,
        }
    };
    let enc = hdr + data;
    let back = match enc {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    };
    let next = p.checked_add(enc + back)?;
    if next > end {
        return None;
    }
    // The backlen, read backward from its last byte, must give the entry's length.
    let mut q = next - 1;
    let mut val = usize::from(lp[q] & 127);
    let mut shift = 0;
    let mut n = 1;
    while lp[q] & 128 != 0 {
        n += 1;
        if n > 5 || q == 0 {
            return None;
        }
        q -= 1;
        shift += 7;
        val |= usize::from(lp[q] & 127) << shift;
    }
    (n == back && val == enc).then_some(enc + back)
}

/// A walk over a checked listpack's elements.
struct Walk<'a> {
    lp: &'a [u8],
    p: usize,
}

impl<'a> Walk<'a> {
    /// The next element's position, or None at the end byte or on a malformed element.
    fn next(&mut self) -> Option<usize> {
        if self.lp[self.p] == 0xFF {
            return None;
        }
        let at = self.p;
        self.p += element_len(self.lp, at)?;
        Some(at)
    }

    fn int(&mut self) -> Option<i64> {
        let p = self.next()?;
        match decode(self.lp, p).0 {
            Elem::Int(v) => Some(v),
            Elem::Bytes(b) => crate::num::parse_ll(b),
        }
    }
}

/// What a checked node holds.
struct NodeInfo {
    live: i64,
    first: StreamId,
    last: StreamId,
}

/// Checks one saved node (see the module docs). IDs must rise from `after` on.
fn check_node(lp: &[u8], master: StreamId, after: Option<StreamId>) -> Result<NodeInfo, LoadIssue> {
    let bad = LoadIssue::Integrity;
    // The header: total bytes, element count, the end byte.
    if lp.len() < 7 || lp[lp.len() - 1] != 0xFF {
        return Err(bad);
    }
    if u32::from_le_bytes(lp[0..4].try_into().expect("4 bytes")) as usize != lp.len() {
        return Err(bad);
    }
    if lp[6] == 0xFF {
        return Err(LoadIssue::EmptyNode);
    }
    let mut w = Walk { lp, p: 6 };
    let live = w.int().ok_or(bad)?;
    let deleted = w.int().ok_or(bad)?;
    let master_fields = w.int().ok_or(bad)?;
    if live < 0 || deleted < 0 || master_fields < 0 {
        return Err(bad);
    }
    for _ in 0..master_fields {
        w.next().ok_or(bad)?;
    }
    if w.int() != Some(0) {
        return Err(bad);
    }
    let total = live.checked_add(deleted).ok_or(bad)?;
    let mut seen_live = 0i64;
    let mut prev = after;
    let mut first = None;
    for _ in 0..total {
        let flags = w.int().ok_or(bad)?;
        if !(0..=(FLAG_DELETED | FLAG_SAMEFIELDS)).contains(&flags) {
            return Err(bad);
        }
        let ms = master.ms.wrapping_add(w.int().ok_or(bad)? as u64);
        let seq = master.seq.wrapping_add(w.int().ok_or(bad)? as u64);
        let id = StreamId::new(ms, seq);
        if id < master || prev.is_some_and(|p| id <= p) {
            return Err(bad);
        }
        prev = Some(id);
        first.get_or_insert(id);
        let (fields, extra) = if flags & FLAG_SAMEFIELDS != 0 {
            (master_fields, 3)
        } else {
            let nf = w.int().ok_or(bad)?;
            if nf < 0 {
                return Err(bad);
            }
            for _ in 0..nf {
                w.next().ok_or(bad)?;
            }
            (nf, 3 + nf + 1)
        };
        for _ in 0..fields {
            w.next().ok_or(bad)?;
        }
        if w.int() != Some(fields + extra) {
            return Err(bad);
        }
        if flags & FLAG_DELETED == 0 {
            seen_live += 1;
        }
    }
    // Nothing may follow the last entry, and the counts must be the entries'.
    if lp[w.p] != 0xFF || w.p != lp.len() - 1 || seen_live != live {
        return Err(bad);
    }
    let elements = u16::from_le_bytes([lp[4], lp[5]]);
    if elements != u16::MAX {
        let mut n = 0usize;
        let mut c = Walk { lp, p: 6 };
        while c.next().is_some() {
            n += 1;
        }
        if n != usize::from(elements) {
            return Err(bad);
        }
    }
    Ok(NodeInfo {
        live,
        first: first.ok_or(bad)?,
        last: prev.ok_or(bad)?,
    })
}

/// The counters a saved stream carries.
#[derive(Clone, Copy, Debug)]
pub struct SavedCounters {
    /// Live entries.
    pub length: u64,
    /// The last ID.
    pub last_id: StreamId,
    /// The first live entry's ID; `None` in a payload older than 7.0 (then it is found).
    pub first_id: Option<StreamId>,
    /// The largest deleted ID (0-0 before 7.0).
    pub max_deleted: StreamId,
    /// Entries ever added (the length before 7.0).
    pub entries_added: u64,
}

impl Stream {
    /// A stream from saved nodes (16-byte master IDs and listpacks, in the order saved) and
    /// its counters; groups are added after with [`Stream::create_group`] and the load
    /// methods of [`super::Group`].
    pub fn from_saved(
        nodes: Vec<(Vec<u8>, Vec<u8>)>,
        counters: SavedCounters,
    ) -> Result<Stream, LoadIssue> {
        let mut map: BTreeMap<u128, Node> = BTreeMap::new();
        let mut live: u64 = 0;
        for (key, lp) in nodes {
            let key: [u8; 16] = key.try_into().map_err(|_| LoadIssue::NodeKeySize)?;
            let master = StreamId::from_key(u128::from_be_bytes(key));
            let info = check_node(&lp, master, None)?;
            if map.contains_key(&master.key()) {
                return Err(LoadIssue::DuplicateNode);
            }
            live += info.live as u64;
            let alloc = jemalloc_size(lp.len()) as u32;
            map.insert(master.key(), Node::loaded(lp, alloc));
        }
        // The nodes must not overlap (their keys order them, their IDs must follow).
        let mut prev: Option<StreamId> = None;
        for (&k, n) in &map {
            let info = check_node(n.bytes(), StreamId::from_key(k), prev)
                .map_err(|_| LoadIssue::Integrity)?;
            let _ = info.first;
            prev = Some(info.last);
        }
        if counters.length != live || (counters.length > 0 && map.is_empty()) {
            return Err(LoadIssue::Length);
        }
        let mut s = Stream::default();
        {
            let i = &mut *s.inner;
            i.nodes = map;
            i.length = counters.length;
            i.last_id = counters.last_id;
            i.max_deleted = counters.max_deleted;
            i.entries_added = counters.entries_added;
        }
        s.inner.first_id = match counters.first_id {
            Some(id) => id,
            None if s.inner.length == 0 => StreamId::MAX,
            None => s.first_live_id(),
        };
        Ok(s)
    }

    /// The stream as loading a saved copy leaves it (DEBUG RELOAD): each listpack held in an
    /// allocation of its own size, as Redis reads them back.
    pub fn reloaded(&mut self) {
        for n in self.inner.nodes.values_mut() {
            n.close();
            n.fit_alloc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::stream::{AddId, NodeLimits};

    fn sample() -> Stream {
        let mut s = Stream::new();
        let l = NodeLimits {
            max_bytes: 0,
            max_entries: 3,
        };
        for ms in 1..=8u64 {
            let f: &[&[u8]] = if ms % 2 == 0 {
                &[b"a", b"1"]
            } else {
                &[b"b", b"x", b"c", b"12"]
            };
            s.add(AddId::Exact(StreamId::new(ms, 0)), f, 0, l).unwrap();
        }
        s.delete(&[StreamId::new(2, 0), StreamId::new(8, 0)]);
        s
    }

    /// A stream's listpacks as saved: (master id bytes, listpack bytes).
    type SavedNodes = Vec<(Vec<u8>, Vec<u8>)>;

    fn saved(s: &Stream) -> (SavedNodes, SavedCounters) {
        let m = s.meta();
        (
            s.listpacks()
                .map(|(id, lp)| (id.be_bytes().to_vec(), lp.to_vec()))
                .collect(),
            SavedCounters {
                length: m.length,
                last_id: m.last_id,
                first_id: Some(m.first_id),
                max_deleted: m.max_deleted,
                entries_added: m.entries_added,
            },
        )
    }

    #[test]
    fn a_saved_stream_loads_back_entry_for_entry() {
        let s = sample();
        let (nodes, c) = saved(&s);
        let t = Stream::from_saved(nodes, c).unwrap();
        assert_eq!(t.meta(), s.meta());
        let a: Vec<_> = s
            .range(StreamId::MIN, StreamId::MAX, false)
            .map(|e| format!("{e:?}"))
            .collect();
        let b: Vec<_> = t
            .range(StreamId::MIN, StreamId::MAX, false)
            .map(|e| format!("{e:?}"))
            .collect();
        assert_eq!(a, b);
        // A pre-7.0 payload finds its first entry itself.
        let (nodes, mut c) = saved(&s);
        c.first_id = None;
        assert_eq!(
            Stream::from_saved(nodes, c).unwrap().meta().first_id,
            StreamId::new(1, 0)
        );
    }

    #[test]
    fn every_corruption_of_a_node_is_refused_without_panicking() {
        let s = sample();
        let (nodes, c) = saved(&s);
        for n in 0..nodes.len() {
            let lp = &nodes[n].1;
            for i in 0..lp.len() {
                for v in [0u8, 1, 0x7f, 0x80, 0xc0, 0xe0, 0xf0, 0xf4, 0xff] {
                    let mut bad = nodes.clone();
                    bad[n].1[i] = v;
                    if bad[n].1 == *lp {
                        continue;
                    }
                    // Whatever the damage, loading answers (and an accepted copy iterates).
                    if let Ok(t) = Stream::from_saved(bad, c) {
                        let _ = t.range(StreamId::MIN, StreamId::MAX, true).count();
                    }
                }
            }
            let mut short = nodes.clone();
            short[n].1.truncate(lp.len() - 3);
            assert_eq!(
                Stream::from_saved(short, c).err(),
                Some(LoadIssue::Integrity)
            );
        }
        let mut key = nodes.clone();
        key[0].0.pop();
        assert_eq!(
            Stream::from_saved(key, c).err(),
            Some(LoadIssue::NodeKeySize)
        );
        let mut dup = nodes.clone();
        dup.push(nodes[0].clone());
        assert_eq!(
            Stream::from_saved(dup, c).err(),
            Some(LoadIssue::DuplicateNode)
        );
        let mut long = c;
        long.length += 1;
        assert_eq!(
            Stream::from_saved(nodes.clone(), long).err(),
            Some(LoadIssue::Length)
        );
        let mut swapped = nodes.clone();
        swapped.swap(0, 1);
        let (a, b) = (swapped[0].0.clone(), swapped[1].0.clone());
        swapped[0].0 = b;
        swapped[1].0 = a;
        // Node keys in order over each other's listpacks: redis-server's checks do not look
        // at entry IDs against their node key either, so this may load; it must not panic.
        if let Ok(t) = Stream::from_saved(swapped, c) {
            let _ = t.range(StreamId::MIN, StreamId::MAX, false).count();
            let _ = t.range(StreamId::MIN, StreamId::MAX, true).count();
        }
    }
}
