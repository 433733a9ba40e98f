//! SORT and SORT_RO (sort.c): numeric or ALPHA order, ASC/DESC, LIMIT, BY a pattern of
//! string keys or hash fields (`weight_*`, `obj_*->field`; a pattern without `*` skips the
//! sort), GET patterns (`#` is the element itself), and STORE into a list, over lists, sets
//! and sorted sets.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{self, wrongtype};
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::reply::{CmdResult, Reply};
use crate::types::list::List;
use crate::types::zset::ScoreBound;
use bytes::Bytes;
use std::cmp::Ordering;

pub const COMMANDS: &[Row] = &[Row::new("sort", sort), Row::new("sort_ro", sort_ro)];

fn sort(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sort_generic(ctx, a, false)
}

fn sort_ro(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    sort_generic(ctx, a, true)
}

/// The parsed options.
struct Options<'a> {
    desc: bool,
    alpha: bool,
    limit_start: i64,
    limit_count: i64,
    store: Option<&'a Bytes>,
    by: Option<&'a Bytes>,
    /// BY names no `*`: keep the source's order.
    dontsort: bool,
    gets: Vec<&'a Bytes>,
}

/// `full_access`: the user may read every key (else BY with a pattern and GET are refused).
fn parse_options(
    a: &[Bytes],
    readonly: bool,
    full_access: bool,
) -> Result<Options<'_>, RedisError> {
    let mut o = Options {
        desc: false,
        alpha: false,
        limit_start: 0,
        limit_count: -1,
        store: None,
        by: None,
        dontsort: false,
        gets: Vec::new(),
    };
    let mut args = Args::new(a, 2);
    while let Some(opt) = args.next() {
        if is(opt, "asc") {
            o.desc = false;
        } else if is(opt, "desc") {
            o.desc = true;
        } else if is(opt, "alpha") {
            o.alpha = true;
        } else if let Some(v) = args.values_of(opt, "limit", 2) {
            o.limit_start = args::int(&v[0])?;
            o.limit_count = args::int(&v[1])?;
        } else if let Some(dst) = args.value_of(opt, "store").filter(|_| !readonly) {
            // (SORT_RO's STORE ends in the syntax error below, its value taken or not.)
            o.store = Some(dst);
        } else if let Some(by) = args.value_of(opt, "by") {
            o.by = Some(by);
            o.dontsort = !by.contains(&b'*');
            if !o.dontsort && !full_access {
                return Err(RedisError::new(error::SORT_BY_ACL));
            }
        } else if let Some(get) = args.value_of(opt, "get") {
            if !full_access {
                return Err(RedisError::new(error::SORT_GET_ACL));
            }
            o.gets.push(get);
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    Ok(o)
}

/// The elements of the value to sort: the list, set or sorted set at `key` (a missing key is
/// an empty list). Lists and sorted sets come in order; `window` (when the source's order is
/// kept) takes `count` elements from `start`, from the end when `desc`, without copying the
/// rest. The bool says whether the value is a set.
fn source(
    ctx: &Ctx,
    key: &[u8],
    window: Option<(usize, usize, bool)>,
) -> Result<(Vec<Bytes>, bool), RedisError> {
    let mut shard = ctx.db().lock(key);
    // Looked up (and counted) by `source_len` already.
    let v = match shard.peek(key, ctx.now) {
        None => return Ok((Vec::new(), false)),
        Some(e) => &e.value,
    };
    let take = |it: &mut dyn Iterator<Item = Bytes>, n: usize| it.take(n).collect::<Vec<_>>();
    Ok(match v {
        Value::List(l) => match window {
            Some((start, n, desc)) if desc => (
                take(&mut l.iter_rev().skip(start).map(|e| e.to_bytes()), n),
                false,
            ),
            Some((start, n, _)) => (
                take(&mut l.iter().skip(start).map(|e| e.to_bytes()), n),
                false,
            ),
            None => (l.iter().map(|e| e.to_bytes()).collect(), false),
        },
        Value::Set(s) => (s.iter().map(|m| m.to_bytes()).collect(), true),
        Value::ZSet(z) => {
            let copy = |(m, _): (&[u8], f64)| Bytes::copy_from_slice(m);
            match window {
                Some((start, n, desc)) => {
                    let len = z.len();
                    let r = if desc {
                        len.saturating_sub(start + n)..len - start.min(len)
                    } else {
                        start.min(len)..(start + n).min(len)
                    };
                    (z.range(r, desc).map(copy).collect(), false)
                }
                None => (z.iter().map(copy).collect(), false),
            }
        }
        _ => return Err(wrongtype()),
    })
}

/// The number of elements of the value at `key`, and whether it is a set; WRONGTYPE for a
/// type SORT cannot sort.
/// This is SORT's one read lookup of the key (a hit or a keymiss).
fn source_len(ctx: &Ctx, key: &[u8]) -> Result<(usize, Kind), RedisError> {
    let (found, hit) = {
        let mut shard = ctx.db().lock(key);
        let mut v = shard.get_mut(key, ctx.now).map(|e| &mut e.value);
        // sortCommandGeneric converts a sorted set to a skiplist before reading it, even for
        // SORT_RO: the key stays so (OBJECT ENCODING, DUMP) after the sort.
        if let Some(Value::ZSet(z)) = v.as_deref_mut() {
            z.convert_to_skiplist();
        }
        let v = v.map(|v| &*v);
        let found = match v {
            None => Ok((0, Kind::List)),
            Some(Value::List(l)) => Ok((l.len(), Kind::List)),
            Some(Value::Set(s)) => Ok((s.len(), Kind::Set)),
            Some(Value::ZSet(z)) => Ok((z.len(), Kind::ZSet)),
            Some(_) => Err(wrongtype()),
        };
        (found, v.is_some())
    };
    note_read(ctx, key, hit);
    found
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    List,
    Set,
    ZSet,
}

/// lookupKeyByPattern: `#` is the element; otherwise the first `*` is replaced by the
/// element, and a `->field` after it reads that hash field instead of a string key.
fn lookup_by_pattern(ctx: &Ctx, pattern: &[u8], elem: &Bytes) -> Option<Bytes> {
    if pattern == b"#" {
        return Some(elem.clone());
    }
    // Redis works on C strings here: the pattern ends at a NUL byte.
    let pattern = &pattern[..pattern
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(pattern.len())];
    let star = pattern.iter().position(|&b| b == b'*')?;
    let after = &pattern[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .filter(|&i| i + 2 < after.len());
    let (postfix, field) = match arrow {
        Some(i) => (&after[..i], Some(&after[i + 2..])),
        None => (after, None),
    };
    let mut key = Vec::with_capacity(pattern.len() + elem.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(postfix);
    let (found, hit) = {
        let mut shard = ctx.db().lock(&key);
        let v = shard.get(&key, ctx.now).map(|e| &e.value);
        let found = match (v, field) {
            (Some(Value::Str(s)), None) => Some(s.clone()),
            (Some(Value::Hash(h)), Some(f)) => h.get_bytes(f),
            _ => None,
        };
        (found, v.is_some())
    };
    // A read lookup (a keymiss when missing), as lookupKeyByPattern's lookupKeyRead.
    note_read(ctx, &key, hit);
    found
}

/// What an element is compared by.
struct Item {
    obj: Bytes,
    score: f64,
    cmpobj: Option<Bytes>,
}

/// A sort key as SORT reads numbers: strtod over the whole text (to a NUL byte; an empty text
/// is 0); None for trailing bytes, NaN or overflow.
fn sort_score(v: &[u8]) -> Option<f64> {
    if v.first() == Some(&b'(') {
        return None;
    }
    let s = ScoreBound::parse(v)?.value;
    let text = std::str::from_utf8(v)
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let infinite_text = text.trim_start_matches(['+', '-']).starts_with("inf");
    (s.is_finite() || infinite_text).then_some(s)
}

fn sort_generic(ctx: &mut Ctx, a: &[Bytes], readonly: bool) -> CmdResult {
    let full_access = {
        let user = if ctx.in_script {
            ctx.state.acl.script_user.get()
        } else {
            ctx.client.user.clone()
        };
        (user == "default"
            && ctx
                .state
                .acl
                .default_open
                .load(std::sync::atomic::Ordering::Relaxed))
            || crate::cmd::runtime::acl::full_key_read_access(ctx.state, &user, a)
    };
    let mut o = parse_options(a, readonly, full_access)?;
    let (len, kind) = source_len(ctx, &a[1])?;
    let mut by = o.by;
    if o.dontsort && kind == Kind::Set && (o.store.is_some() || ctx.in_script) {
        // A set's order is not deterministic: sort it for STORE and scripts.
        o.dontsort = false;
        o.alpha = true;
        by = None;
    }
    let vlen = len as i64;
    let mut start = o.limit_start.max(0).min(vlen);
    let count = o.limit_count.max(-1).min(vlen);
    let mut end = if count < 0 {
        vlen - 1
    } else {
        start + count - 1
    };
    if start >= vlen {
        start = vlen - 1;
        end = vlen - 2;
    }
    if end >= vlen {
        end = vlen - 1;
    }
    let window = (o.dontsort && kind != Kind::Set && (start != 0 || end != vlen - 1)).then(|| {
        (
            start.max(0) as usize,
            (end - start + 1).max(0) as usize,
            o.desc,
        )
    });
    let (elems, _) = source(
        ctx,
        &a[1],
        window.or_else(|| {
            // Keeping the order of a list or sorted set: walk it from the right end.
            (o.dontsort && kind != Kind::Set && o.desc).then_some((0, len, true))
        }),
    )?;
    if window.is_some() {
        end -= start;
        start = 0;
    }
    let mut items: Vec<Item> = elems
        .into_iter()
        .map(|obj| Item {
            obj,
            score: 0.0,
            cmpobj: None,
        })
        .collect();
    if !o.dontsort {
        let mut conversion_error = false;
        for it in items.iter_mut() {
            let byval = match by {
                Some(p) => match lookup_by_pattern(ctx, p, &it.obj) {
                    Some(v) => v,
                    None => continue,
                },
                None => it.obj.clone(),
            };
            if o.alpha {
                if by.is_some() {
                    it.cmpobj = Some(byval);
                }
            } else {
                match sort_score(&byval) {
                    Some(s) => it.score = s,
                    None => conversion_error = true,
                }
            }
        }
        if conversion_error {
            return Err(RedisError::new(error::SORT_NOT_DOUBLE));
        }
        let (alpha, bypattern, desc) = (o.alpha, by.is_some(), o.desc);
        items.sort_by(|x, y| {
            let c = compare(x, y, alpha, bypattern);
            if desc {
                c.reverse()
            } else {
                c
            }
        });
    }
    let chosen: &[Item] = if end >= start && start >= 0 {
        &items[start as usize..=(end as usize).min(items.len().saturating_sub(1))]
    } else {
        &[]
    };
    let mut out: Vec<Option<Bytes>> = Vec::new();
    for it in chosen {
        if o.gets.is_empty() {
            out.push(Some(it.obj.clone()));
        }
        for g in &o.gets {
            out.push(lookup_by_pattern(ctx, g, &it.obj));
        }
    }
    match o.store {
        None => Ok(Reply::Array(
            out.into_iter()
                .map(|v| v.map_or(Reply::Nil, Reply::Bulk))
                .collect(),
        )),
        Some(dst) => {
            let n = out.len();
            if n > 0 {
                let fill = ctx.state.config.read().list_max_listpack_size;
                let mut list = List::new();
                for v in &out {
                    list.push_back(v.as_deref().unwrap_or(b""), fill);
                }
                typed::store(ctx, dst, Value::List(list));
                ctx.signal_modified(dst);
                ctx.notify(notify::LIST, "sortstore", dst);
            } else if typed::delete(ctx, dst) {
                ctx.signal_modified(dst);
                ctx.notify(notify::GENERIC, "del", dst);
            }
            Ok(Reply::Int(n as i64))
        }
    }
}

/// sortCompare: numbers (ties by the elements' bytes), or ALPHA by the BY values (missing
/// ones first) or by the elements.
fn compare(x: &Item, y: &Item, alpha: bool, bypattern: bool) -> Ordering {
    if !alpha {
        return x
            .score
            .partial_cmp(&y.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| x.obj.cmp(&y.obj));
    }
    if bypattern {
        return match (&x.cmpobj, &y.cmpobj) {
            (Some(a), Some(b)) => a.cmp(b),
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
        };
    }
    x.obj.cmp(&y.obj)
}

/// Redis's sortGetKeys, for COMMAND GETKEYS: the sorted key, and the key after the last STORE
/// (LIMIT skips two arguments, GET and BY one; a STORE's key is scanned as an option too).
pub fn key_positions(args: &[Bytes]) -> Vec<usize> {
    crate::cmd::runtime::table::sort_keys(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getkeys_finds_the_last_store_key() {
        let args = |v: &[&str]| -> Vec<Bytes> {
            v.iter()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect()
        };
        let a = args(&[
            "sort", "abc", "store", "invalid", "store", "stillbad", "store", "def",
        ]);
        assert_eq!(key_positions(&a), vec![1, 7]);
        let a = args(&[
            "sort", "abc", "by", "store", "limit", "store", "1", "get", "store",
        ]);
        assert_eq!(key_positions(&a), vec![1]);
    }

    #[test]
    fn sort_scores_follow_strtod() {
        assert_eq!(sort_score(b"1.5"), Some(1.5));
        assert_eq!(sort_score(b""), Some(0.0));
        assert_eq!(sort_score(b" 2"), Some(2.0));
        assert_eq!(sort_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(sort_score(b"1e400"), None);
        assert_eq!(sort_score(b"abc"), None);
        assert_eq!(sort_score(b"(1"), None);
        assert_eq!(sort_score(b"nan"), None);
    }
}
