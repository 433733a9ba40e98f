//! Comparing the two servers' replies where Redis itself is not deterministic (times, random
//! picks, dict order, connection ids, commands resplock does not have): each rule keeps every
//! byte that is deterministic and compares the rest by shape. Everything else is compared byte
//! for byte.

use super::classic::Norm;
use super::resp::{encode, int_of, parse, parse_all, V};
use std::collections::BTreeSet;

/// Elements of an aggregate sorted (pairs kept together when `pairs`).
fn sorted(items: &[V], pairs: bool) -> Vec<V> {
    let mut out: Vec<V> = if pairs {
        items
            .chunks(2)
            .map(|c| V::Agg(b'*', Some(c.to_vec())))
            .collect()
    } else {
        items.to_vec()
    };
    out.sort();
    out
}

fn unordered_eq(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Agg(ta, Some(x)), V::Agg(tb, Some(y))) if ta == tb && x.len() == y.len() => {
            let pairs = *ta == b'%';
            sorted(x, pairs) == sorted(y, pairs)
        }
        _ => a == b,
    }
}

fn same_type(a: &V, b: &V) -> bool {
    if a.is_error() || b.is_error() {
        return a == b;
    }
    a.ty() == b.ty()
}

/// A command's reply without what names the connection or the moment: HELLO's id.
fn strip_hello(v: &mut V) {
    if let Some(id) = v.field_mut(b"id") {
        *id = V::Line(b':', b"<id>".to_vec());
    }
}

/// ACL LOG entries without age-seconds and client-info.
pub fn strip_acl_log(v: &mut V) {
    if let Some(entries) = v.items_mut() {
        for e in entries {
            for k in [&b"age-seconds"[..], b"client-info"] {
                if let Some(x) = e.field_mut(k) {
                    *x = V::Line(b'+', b"<varies>".to_vec());
                }
            }
        }
    }
}

/// The name a COMMAND-table element describes: a name (LIST), an INFO entry (its first
/// element), or a DOCS key.
fn entry_name(v: &V) -> Option<String> {
    let t = match v {
        V::Agg(_, Some(items)) => items.first()?.text()?,
        _ => v.text()?,
    };
    Some(String::from_utf8_lossy(t).to_ascii_lowercase())
}

/// A COMMAND INFO entry list (or COMMAND LIST) without the entries named in `names`, and each
/// kept entry's subcommand list likewise.
fn strip_info_list(items: &mut Vec<V>, names: &BTreeSet<String>) {
    items.retain(|e| !entry_name(e).is_some_and(|n| names.contains(&n)));
    for e in items.iter_mut() {
        if let Some(fields) = e.items_mut() {
            if let Some(subs) = fields.get_mut(9).and_then(|s| s.items_mut()) {
                strip_info_list(subs, names);
                // Subcommands come in the server's dict order.
                subs.sort();
            }
        }
    }
}

/// COMMAND DOCS's map (name, docs, name, docs...) without the names in `names`, at every
/// level of subcommands.
fn strip_docs_map(items: &mut Vec<V>, names: &BTreeSet<String>) {
    let mut kept = Vec::new();
    for pair in items.chunks(2) {
        if pair.len() == 2 && !entry_name(&pair[0]).is_some_and(|n| names.contains(&n)) {
            let mut p = pair.to_vec();
            if let Some(subs) = p[1].field_mut(b"subcommands").and_then(|s| s.items_mut()) {
                strip_docs_map(subs, names);
                sort_pairs(subs);
            }
            kept.extend(p);
        }
    }
    *items = kept;
}

/// A flat map's pairs sorted by key (dict order is the server's accident).
fn sort_pairs(items: &mut Vec<V>) {
    let mut pairs: Vec<Vec<V>> = items.chunks(2).map(|c| c.to_vec()).collect();
    pairs.sort();
    *items = pairs.concat();
}

/// A COMMAND-table reply without the commands one server has and the other has not.
fn strip_unshared(args: &[Vec<u8>], v: &mut V, names: &BTreeSet<String>, top_missing: i64) {
    let sub = args
        .get(1)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .unwrap_or_default();
    match sub.as_str() {
        "count" => {
            if let Some(n) = int_of(v) {
                *v = V::Line(b':', (n - top_missing).to_string().into_bytes());
            }
        }
        "docs" => {
            if let Some(items) = v.items_mut() {
                strip_docs_map(items, names);
            }
        }
        _ => {
            if let Some(items) = v.items_mut() {
                strip_info_list(items, names);
            }
        }
    }
}

/// What the comparison needs besides the two replies.
pub struct Facts<'a> {
    /// Commands the reference has and resplock has not, and the few resplock has on purpose
    /// that the reference has not (CLIENT SETINFO, NO-TOUCH).
    pub unshared: &'a BTreeSet<String>,
    /// The reference's OBJECT ENCODING of the command's key (for HashOrder/HScan), if asked.
    pub encoding: Option<Vec<u8>>,
}

/// Whether `ra` (the reference's reply, possibly several frames) and `rb` (resplock's) agree
/// under `norm`. DbSize and Scan need more than the replies: the caller settles them.
pub fn same(norm: Norm, args: &[Vec<u8>], ra: &[u8], rb: &[u8], facts: &Facts) -> bool {
    if ra == rb {
        return true;
    }
    // ACL descriptions: redis-server lists single-command rules in its dict's order.
    if args.first().is_some_and(|a| a.eq_ignore_ascii_case(b"ACL"))
        && super::scenario::sorted_command_rules(ra) == super::scenario::sorted_command_rules(rb)
    {
        return true;
    }
    let (Some(mut a), Some(mut b)) = (parse(ra), parse(rb)) else {
        return false;
    };
    if a.is_error() || b.is_error() {
        return false;
    }
    match norm {
        Norm::Exact => false,
        Norm::Ttl => match (int_of(&a), int_of(&b)) {
            (Some(x), Some(y)) => a.ty() == b.ty() && x >= 0 && y >= 0,
            _ => false,
        },
        Norm::Type => same_type(&a, &b),
        Norm::Unordered => {
            // FUNCTION LIST: each library's functions come in its dict's order too.
            for v in [&mut a, &mut b] {
                for lib in v.items_mut().into_iter().flatten() {
                    if let Some(f) = lib.field_mut(b"functions").and_then(|f| f.items_mut()) {
                        f.sort();
                    }
                }
            }
            unordered_eq(&a, &b)
        }
        Norm::HashOrder | Norm::HScan => {
            // Order (or a scan's page) is a dict accident only for a hashtable.
            let hashtable = facts
                .encoding
                .as_deref()
                .is_some_and(|e| e == b"hashtable" || e == b"skiplist");
            if !hashtable {
                return false;
            }
            if norm == Norm::HScan {
                let pairs = !args
                    .first()
                    .is_some_and(|n| n.eq_ignore_ascii_case(b"SSCAN"));
                // HSCAN/SSCAN/ZSCAN key CURSOR: the cursor is the third argument.
                return scan_same(&a, &b, pairs, args.get(2).map(Vec::as_slice));
            }
            let pairs = args
                .first()
                .is_some_and(|n| n.eq_ignore_ascii_case(b"HGETALL"));
            match (&a, &b) {
                (V::Agg(ta, Some(x)), V::Agg(tb, Some(y))) if ta == tb && x.len() == y.len() => {
                    sorted(x, pairs || *ta == b'%') == sorted(y, pairs || *ta == b'%')
                }
                _ => false,
            }
        }
        Norm::SortOrder => {
            let hashtable = facts.encoding.as_deref() == Some(b"hashtable");
            let is = |a: &Vec<u8>, w: &[u8]| a.eq_ignore_ascii_case(w);
            let unsorted = args
                .windows(2)
                .skip(2)
                .any(|w| is(&w[0], b"BY") && !w[1].contains(&b'*'));
            if !hashtable || !unsorted {
                return false;
            }
            let limit = args.iter().skip(2).any(|a| is(a, b"LIMIT"));
            match (&a, &b) {
                (V::Agg(ta, Some(x)), V::Agg(tb, Some(y))) if ta == tb && x.len() == y.len() => {
                    limit || sorted(x, false) == sorted(y, false)
                }
                _ => false,
            }
        }
        Norm::DumpOrder => {
            let hashtable = facts.encoding.as_deref() == Some(b"hashtable");
            match (&a, &b) {
                (V::Bulk(_, Some(x)), V::Bulk(_, Some(y))) => {
                    hashtable && x.len() == y.len() && x.first() == y.first()
                }
                _ => false,
            }
        }
        Norm::Scan => scan_same(&a, &b, false, args.get(1).map(Vec::as_slice)),
        Norm::DbSize => false,
        Norm::CommandTable => {
            let top = |set: &BTreeSet<String>| set.iter().filter(|m| !m.contains('|')).count();
            // Only the reference's count includes its extra top-level commands.
            strip_unshared(args, &mut a, facts.unshared, top(facts.unshared) as i64);
            strip_unshared(args, &mut b, facts.unshared, 0);
            unordered_eq(&a, &b)
        }
        Norm::Hello => {
            strip_hello(&mut a);
            strip_hello(&mut b);
            a == b
        }
        Norm::AclLog => {
            strip_acl_log(&mut a);
            strip_acl_log(&mut b);
            a == b
        }
        Norm::Random => random_same(args, &a, &b),
        Norm::Pairs => match (&a, &b) {
            (V::Agg(ta, Some(x)), V::Agg(tb, Some(y))) if ta == tb && x.len() == y.len() => {
                sorted(x, true) == sorted(y, true)
            }
            _ => false,
        },
    }
}

/// A scan page: the same cursor and elements in any order when a scan that started at cursor
/// 0 finished (cursor 0); otherwise only the shape. Which elements come first is the dict's
/// layout, and so is which ones a scan started from another cursor (`from`, as sent) sees:
/// redis-server seeds its dict hash at random each start (a differential run saw
/// `SSCAN S1 -62` on a one-member hashtable set give the member on one start, none on another).
pub fn scan_same(a: &V, b: &V, pairs: bool, from: Option<&[u8]>) -> bool {
    let from_start = from.is_some_and(|c| c == b"0");
    match (a.items(), b.items()) {
        (Some([ca, ea]), Some([cb, eb])) => {
            if from_start && ca.text() == Some(b"0") && cb.text() == Some(b"0") {
                match (ea.items(), eb.items()) {
                    (Some(x), Some(y)) => {
                        x.len() == y.len() && sorted(x, pairs) == sorted(y, pairs)
                    }
                    _ => false,
                }
            } else {
                ea.ty() == eb.ty() && ca.ty() == cb.ty()
            }
        }
        _ => false,
    }
}

/// SPOP/SRANDMEMBER/HRANDFIELD/ZRANDMEMBER: a count reply has the same length (and, when it
/// took every element, the same elements); a single pick only the same type.
fn random_same(args: &[Vec<u8>], a: &V, b: &V) -> bool {
    let count: Option<i64> = args
        .get(2)
        .and_then(|c| std::str::from_utf8(c).ok()?.parse().ok());
    match (a.items(), b.items()) {
        (Some(x), Some(y)) => {
            if x.len() != y.len() || a.ty() != b.ty() {
                return false;
            }
            match count {
                // Positive counts are distinct picks: all of them when the count is large.
                Some(c) if c > 0 => {
                    let pairs = args.len() > 3 || a.ty() == b'%';
                    sorted(x, pairs) == sorted(y, pairs) || (x.len() as i64) == c
                }
                _ => true,
            }
        }
        _ => same_type(a, b),
    }
}

/// `rb`, the reference's reply as the printed case should carry it: one frame per line group.
pub fn frames(b: &[u8]) -> Vec<Vec<u8>> {
    parse_all(b).iter().map(encode).collect()
}
