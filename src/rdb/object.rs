//! A value as an RDB object (the type byte and the serialized value) in both directions:
//! written in the encodings redis-server 7.0 writes, read from every encoding it reads
//! (including those of older versions), refused with its complaints when malformed.
//!
//! A loaded value takes the encoding Redis would give it under the current configuration
//! (a plain set of few integers becomes an intset, a listpack hash with too many fields a
//! hash table), since the types here decide their encodings as Redis's do.

use super::blob::{self, Item};
use super::decode::{parse_c_double, Decoder, LoadError, Source};
use super::encode::{put_binary_double, put_len, put_raw_string};
use crate::keyspace::Value;
use crate::types::hash::Hash;
use crate::types::list::{List, NodeView};
use crate::types::set::Set;
use crate::types::zset::{ZSet, ZSetLimits};
use bytes::Bytes;

/// RDB value types (rdb.h).
#[allow(missing_docs)]
pub mod types {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const MODULE: u8 = 6;
    pub const MODULE_2: u8 = 7;
    pub const HASH_ZIPMAP: u8 = 9;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS_2: u8 = 19;

    /// rdbIsObjectType.
    pub fn is_object_type(t: u8) -> bool {
        t <= 7 || (9..=19).contains(&t)
    }
}

/// quicklist node containers in RDB_TYPE_LIST_QUICKLIST_2.
const CONTAINER_PLAIN: u64 = 1;
const CONTAINER_PACKED: u64 = 2;

/// The settings a loaded value's encoding follows, read from the configuration.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// list-max-listpack-size.
    pub list_fill: i32,
    /// set-max-intset-entries.
    pub set_max_intset_entries: usize,
    /// zset-max-listpack-entries and zset-max-listpack-value.
    pub zset: ZSetLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            list_fill: crate::types::list::DEFAULT_FILL,
            set_max_intset_entries: crate::types::set::SET_MAX_INTSET_ENTRIES,
            zset: ZSetLimits::default(),
        }
    }
}

/// rdbSaveObjectType: the type byte for `v`'s encoding.
pub fn object_type(v: &Value) -> u8 {
    match v {
        Value::Str(_) => types::STRING,
        Value::List(_) => types::LIST_QUICKLIST_2,
        Value::Set(s) if s.is_intset() => types::SET_INTSET,
        Value::Set(_) => types::SET,
        Value::ZSet(z) if z.is_listpack() => types::ZSET_LISTPACK,
        Value::ZSet(_) => types::ZSET_2,
        Value::Hash(h) if h.is_listpack() => types::HASH_LISTPACK,
        Value::Hash(_) => types::HASH,
        Value::Stream(_) => types::STREAM_LISTPACKS_2,
    }
}

/// Redis's double2ll: the value as an integer when it is one exactly and safely in range.
fn double2ll(d: f64) -> Option<i64> {
    const HALF: f64 = (i64::MAX / 2) as f64;
    if !(-HALF..=HALF).contains(&d) {
        return None;
    }
    let l = d as i64;
    (l as f64 == d).then_some(l)
}

/// rdbSaveObject: `v` serialized (after its type byte), strings compressed when `compress`.
pub fn put_object(out: &mut Vec<u8>, v: &Value, compress: bool) {
    match v {
        Value::Str(s) => put_raw_string(out, s, compress),
        Value::Stream(x) => super::stream::put_stream(out, x, compress),
        Value::List(l) => put_list(out, l, compress),
        Value::Set(s) => match s.intset_width() {
            Some(width) => {
                let b = blob::intset::build(
                    s.iter()
                        .map(|m| m.as_int().expect("intset members are integers")),
                    width,
                );
                put_raw_string(out, &b, compress);
            }
            None => {
                put_len(out, s.len() as u64);
                for m in s.iter() {
                    put_raw_string(out, &m, compress);
                }
            }
        },
        Value::ZSet(z) => {
            if z.is_listpack() {
                let mut b = blob::listpack::Builder::new();
                for (m, score) in z.iter() {
                    b.push(m);
                    match double2ll(score) {
                        Some(l) => b.push_int(l),
                        None => b.push_str(crate::num::format_double(score).as_bytes()),
                    }
                }
                put_raw_string(out, &b.finish(), compress);
            } else {
                // Greatest first, as zsetAdd then loads each at the head of the skiplist.
                put_len(out, z.len() as u64);
                for (m, score) in z.range(0..z.len(), true) {
                    put_raw_string(out, m, compress);
                    put_binary_double(out, score);
                }
            }
        }
        Value::Hash(h) => {
            if h.is_listpack() {
                let mut b = blob::listpack::Builder::new();
                for (f, v) in h.iter() {
                    b.push(f);
                    b.push(v);
                }
                put_raw_string(out, &b.finish(), compress);
            } else {
                put_len(out, h.len() as u64);
                for (f, v) in h.iter() {
                    put_raw_string(out, f, compress);
                    put_raw_string(out, v, compress);
                }
            }
        }
    }
}

fn put_list(out: &mut Vec<u8>, l: &List, compress: bool) {
    put_len(out, l.node_count() as u64);
    for node in l.node_views() {
        match node {
            NodeView::Packed { entries, count } => {
                put_len(out, CONTAINER_PACKED);
                let mut b = blob::listpack::Builder::new();
                b.push_encoded(entries, count);
                put_raw_string(out, &b.finish(), compress);
            }
            NodeView::Plain(e) => {
                put_len(out, CONTAINER_PLAIN);
                e.with_bytes(|s| put_raw_string(out, s, compress));
            }
        }
    }
}

/// The type byte and value as one buffer (what DUMP puts before its footer).
pub fn serialize(v: &Value, compress: bool) -> Vec<u8> {
    let mut out = vec![object_type(v)];
    put_object(&mut out, v, compress);
    out
}

/// rdbLoadObject: a value of RDB type `t`. Ok(None) for an empty aggregate (Redis skips such
/// keys with a warning).
pub fn read_object<S: Source>(
    r: &mut Decoder<S>,
    t: u8,
    limits: &Limits,
) -> Result<Option<Value>, LoadError> {
    use types::*;
    let value = match t {
        STRING => {
            let s = r.read_string()?;
            // Short values as SET stores them (see `str_bytes`).
            Value::Str(if s.len() < 120 {
                crate::keyspace::str_bytes(&s)
            } else {
                Bytes::from(s)
            })
        }
        LIST => {
            let n = r.read_len()?;
            let mut l = List::new();
            for _ in 0..n {
                push_elem(&mut l, &r.read_string()?, limits)?;
            }
            Value::List(l)
        }
        SET => {
            let n = r.read_len()?;
            let mut s = Set::new();
            for _ in 0..n {
                if !s.add(&r.read_string()?, limits.set_max_intset_entries) {
                    return Err(LoadError::corrupt(1828, "Duplicate set members detected"));
                }
            }
            Value::Set(s)
        }
        ZSET | ZSET_2 => {
            let n = r.read_len()?;
            let mut z = ZSet::new();
            for _ in 0..n {
                let m = r.read_string()?;
                let score = if t == ZSET_2 {
                    r.read_binary_double()?
                } else {
                    r.read_text_double()?
                };
                if score.is_nan() {
                    return Err(LoadError::corrupt(1881, "Zset with NAN score detected"));
                }
                if !z.insert_or_update(&m, score, limits.zset).0 {
                    return Err(LoadError::corrupt(1893, "Duplicate zset fields detected"));
                }
            }
            Value::ZSet(z)
        }
        HASH => {
            let n = r.read_len()?;
            let mut h = Hash::new();
            for _ in 0..n {
                let f = r.read_string()?;
                let v = r.read_string()?;
                if !h.set(&f, &v) {
                    return Err(LoadError::corrupt(2018, "Duplicate hash fields detected"));
                }
            }
            Value::Hash(h)
        }
        LIST_QUICKLIST | LIST_QUICKLIST_2 => {
            let n = r.read_len()?;
            let mut l = List::new();
            for _ in 0..n {
                let container = if t == LIST_QUICKLIST_2 {
                    r.read_len()?
                } else {
                    CONTAINER_PACKED
                };
                if container != CONTAINER_PACKED && container != CONTAINER_PLAIN {
                    return Err(LoadError::corrupt(
                        2047,
                        "Quicklist integrity check failed.",
                    ));
                }
                let data = r.read_string()?;
                if data.is_empty() {
                    return Err(LoadError::Eof);
                }
                if container == CONTAINER_PLAIN {
                    push_elem(&mut l, &data, limits)?;
                    continue;
                }
                let items = if t == LIST_QUICKLIST_2 {
                    blob::listpack::items(&data).ok_or_else(|| {
                        LoadError::corrupt(2070, "Listpack integrity check failed.")
                    })?
                } else {
                    blob::ziplist::items(&data).ok_or_else(|| {
                        LoadError::corrupt(2080, "Ziplist integrity check failed.")
                    })?
                };
                for it in items {
                    it.with_bytes(|b| push_elem(&mut l, b, limits))?;
                }
            }
            Value::List(l)
        }
        HASH_ZIPMAP | LIST_ZIPLIST | SET_INTSET | ZSET_ZIPLIST | ZSET_LISTPACK | HASH_ZIPLIST
        | HASH_LISTPACK => read_blob_object(&r.read_string()?, t, limits)?,
        STREAM_LISTPACKS | STREAM_LISTPACKS_2 => {
            Value::Stream(super::stream::read_stream(r, t == STREAM_LISTPACKS_2)?)
        }
        MODULE | MODULE_2 => {
            let id = r.read_len()?;
            return Err(LoadError::corrupt(
                2627,
                format!(
                    "The RDB file contains module data I can't load: no matching module type '{}'",
                    module_type_name(id)
                ),
            ));
        }
        _ => {
            return Err(LoadError::read(
                2672,
                format!("Unknown RDB encoding type {t}"),
            ))
        }
    };
    let empty = match &value {
        Value::Str(_) | Value::Stream(_) => false,
        Value::List(l) => l.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::ZSet(z) => z.is_empty(),
        Value::Hash(h) => h.is_empty(),
    };
    Ok((!empty).then_some(value))
}

/// A list element, refused past the 4 GiB Redis allows one.
fn push_elem(l: &mut List, e: &[u8], limits: &Limits) -> Result<(), LoadError> {
    if e.len() >= u32::MAX as usize {
        return Err(LoadError::corrupt(
            2047,
            "Quicklist integrity check failed.",
        ));
    }
    l.push_back(e, limits.fill());
    Ok(())
}

impl Limits {
    fn fill(&self) -> i32 {
        self.list_fill
    }
}

/// The values that come as one packed string (zipmap, ziplist, intset, listpack).
fn read_blob_object(data: &[u8], t: u8, limits: &Limits) -> Result<Value, LoadError> {
    use types::*;
    Ok(match t {
        HASH_ZIPMAP => {
            let pairs = blob::zipmap::pairs(data)
                .ok_or_else(|| LoadError::corrupt(2129, "Zipmap integrity check failed."))?;
            let mut h = Hash::new();
            for (f, v) in pairs {
                if !h.set(f, v) {
                    return Err(LoadError::corrupt(
                        2153,
                        format!("Hash zipmap with dup elements, or big length ({})", f.len()),
                    ));
                }
            }
            Value::Hash(h)
        }
        LIST_ZIPLIST => {
            let items = blob::ziplist::items(data)
                .ok_or_else(|| LoadError::corrupt(2187, "List ziplist integrity check failed."))?;
            let mut l = List::new();
            for it in items {
                it.with_bytes(|b| push_elem(&mut l, b, limits))?;
            }
            Value::List(l)
        }
        SET_INTSET => {
            let values = blob::intset::values(data)
                .ok_or_else(|| LoadError::corrupt(2212, "Intset integrity check failed."))?;
            let mut s = Set::new();
            for v in values {
                s.add(
                    itoa::Buffer::new().format(v).as_bytes(),
                    limits.set_max_intset_entries,
                );
            }
            Value::Set(s)
        }
        ZSET_ZIPLIST | ZSET_LISTPACK => {
            let (line, msg) = if t == ZSET_ZIPLIST {
                (2227, "Zset ziplist integrity check failed.")
            } else {
                (2253, "Zset listpack integrity check failed.")
            };
            let bad = || LoadError::corrupt(line, msg);
            let items = if t == ZSET_ZIPLIST {
                blob::ziplist::items(data)
            } else {
                blob::listpack::items(data)
            }
            .ok_or_else(bad)?;
            if items.len() % 2 != 0 {
                return Err(bad());
            }
            // A listpack as Redis wrote it keeps its encoding below the entry limit whatever
            // its members' lengths (Redis checks only the count on load).
            let zl = ZSetLimits {
                max_listpack_value: usize::MAX,
                ..limits.zset
            };
            let zl = if items.len() / 2 > limits.zset.max_listpack_entries {
                limits.zset
            } else {
                zl
            };
            let mut z = ZSet::new();
            for pair in items.chunks_exact(2) {
                let score = match pair[1] {
                    Item::Int(v) => v as f64,
                    Item::Str(s) => parse_c_double(&s[..s.len().min(127)]).unwrap_or(0.0),
                };
                if score.is_nan() {
                    return Err(bad());
                }
                let added = pair[0].with_bytes(|m| z.insert_or_update(m, score, zl).0);
                if !added {
                    return Err(bad());
                }
            }
            Value::ZSet(z)
        }
        HASH_ZIPLIST | HASH_LISTPACK => {
            let (line, msg) = if t == HASH_ZIPLIST {
                (2273, "Hash ziplist integrity check failed.")
            } else {
                (2299, "Hash listpack integrity check failed.")
            };
            let bad = || LoadError::corrupt(line, msg);
            let items = if t == HASH_ZIPLIST {
                blob::ziplist::items(data)
            } else {
                blob::listpack::items(data)
            }
            .ok_or_else(bad)?;
            if items.len() % 2 != 0 {
                return Err(bad());
            }
            let mut h = Hash::new();
            for pair in items.chunks_exact(2) {
                let f = pair[0].to_vec();
                let added = pair[1].with_bytes(|v| h.set(&f, v));
                if !added {
                    return Err(bad());
                }
            }
            Value::Hash(h)
        }
        _ => unreachable!("not a blob type: {t}"),
    })
}

/// moduleTypeNameByID: the 9-character name packed in a module type id.
pub fn module_type_name(id: u64) -> String {
    const CSET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut id = id >> 10;
    let mut name = [0u8; 9];
    for j in (0..9).rev() {
        name[j] = CSET[(id & 63) as usize];
        id >>= 6;
    }
    String::from_utf8_lossy(&name).into_owned()
}
