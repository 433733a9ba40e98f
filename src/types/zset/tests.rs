//! Unit tests for [`ZSet`](super::ZSet): ordering, encoding conversion, ZADD's flags,
//! random members and memory accounting.

use std::collections::HashMap;

use super::mem::g17_len;
use super::skiplist::{Node, NIL};
use super::*;

pub(super) fn small() -> ZSetLimits {
    ZSetLimits {
        max_listpack_entries: 16,
        max_listpack_value: 8,
    }
}

pub(super) fn contents(z: &ZSet) -> Vec<(Vec<u8>, f64)> {
    z.iter().map(|(m, s)| (m.to_vec(), s)).collect()
}

fn skiplist_of(z: &ZSet) -> &SkipList {
    match z {
        ZSet::Skiplist(sl) => sl,
        _ => panic!("not a skiplist"),
    }
}

/// The skiplist's links, spans, backward pointers, tail and index all agree.
pub(super) fn check_invariants(z: &ZSet) {
    let ZSet::Skiplist(sl) = z else { return };
    assert_eq!(sl.length, sl.len());
    let mut order = vec![];
    let mut x = sl.nodes[0].next;
    let mut prev = NIL;
    while x != NIL {
        assert_eq!(sl.nodes[x as usize].backward, prev);
        order.push(x);
        prev = x;
        x = sl.nodes[x as usize].next;
    }
    assert_eq!(sl.tail, prev);
    assert_eq!(order.len(), sl.len());
    let pos: HashMap<u32, usize> = order.iter().enumerate().map(|(i, &x)| (x, i + 1)).collect();
    for w in order.windows(2) {
        let (a, b) = (&sl.nodes[w[0] as usize], &sl.nodes[w[1] as usize]);
        assert!(cmp_entry(a.score, &a.ele, b.score, &b.ele).is_lt());
    }
    for i in 1..sl.level {
        let mut h = 0u32;
        let mut at = 0usize;
        while sl.fwd(h, i) != NIL {
            let f = sl.fwd(h, i);
            assert_eq!(at + sl.span(h, i) as usize, pos[&f], "span level {i}");
            at = pos[&f];
            h = f;
        }
    }
    assert_eq!(sl.index.len(), sl.len());
    assert_eq!(sl.nodes.slots(), sl.len() + 1 + sl.nodes.holes());
    for x in sl.nodes.free_ids() {
        assert!(!sl.is_member_slot(x as usize));
    }
    for &x in &order {
        assert!(sl.is_member_slot(x as usize));
        assert_eq!(sl.find(&sl.nodes[x as usize].ele), Some(x));
    }
}

#[test]
fn zset_value_fits_the_keyspace_enum() {
    assert!(std::mem::size_of::<ZSet>() <= 24);
    // One cache line, so a descent reads each node it visits in one memory access.
    assert_eq!(std::mem::size_of::<Node>(), 64);
    assert_eq!(std::mem::align_of::<Node>(), 64);
}

#[test]
fn orders_by_score_then_member_bytes_prefix_first() {
    for limits in [ZSetLimits::default(), small()] {
        let mut z = if limits == small() {
            ZSet::new_skiplist()
        } else {
            ZSet::new()
        };
        for (m, s) in [
            ("b", 1.0),
            ("a", 1.0),
            ("ab", 1.0),
            ("", 1.0),
            ("z", -1.0),
            ("y", f64::INFINITY),
            ("x", f64::NEG_INFINITY),
            ("\u{ff}", 1.0),
            ("A", 1.0),
        ] {
            assert_eq!(z.insert_or_update(m.as_bytes(), s, limits), (true, true));
        }
        let order: Vec<Vec<u8>> = contents(&z).into_iter().map(|(m, _)| m).collect();
        let want: Vec<&[u8]> = vec![
            b"x",
            b"z",
            b"",
            b"A",
            b"a",
            b"ab",
            b"b",
            "\u{ff}".as_bytes(),
            b"y",
        ];
        assert_eq!(order, want);
        assert_eq!(z.rank(b"ab", false), Some(5));
        assert_eq!(z.rank(b"ab", true), Some(3));
        assert_eq!(z.rank(b"nope", false), None);
        assert_eq!(z.get_by_rank(0), Some((&b"x"[..], f64::NEG_INFINITY)));
        assert_eq!(z.get_by_rank(9), None);
        check_invariants(&z);
    }
}

#[test]
fn negative_zero_equals_zero() {
    let mut z = ZSet::new();
    z.insert_or_update(b"a", 0.0, small());
    assert_eq!(z.insert_or_update(b"a", -0.0, small()), (false, false));
    z.insert_or_update(b"b", -0.0, small());
    assert_eq!(z.rank(b"a", false), Some(0));
    let zero = ScoreBound::inclusive(0.0);
    assert_eq!(z.count_in_score_range(&zero, &zero), 2);
}

#[test]
fn converts_on_entry_count_and_member_length_only_when_adding() {
    let l = ZSetLimits::default();
    let mut z = ZSet::new();
    for i in 0..128 {
        z.insert_or_update(format!("m{i}").as_bytes(), i as f64, l);
    }
    assert_eq!(z.encoding(), "listpack");
    // Updates never convert.
    z.insert_or_update(b"m5", 1000.0, l);
    assert_eq!(z.encoding(), "listpack");
    z.insert_or_update(b"m128", 0.5, l);
    assert_eq!(z.encoding(), "skiplist");
    assert_eq!(z.len(), 129);
    assert_eq!(z.rank(b"m128", false), Some(1));
    assert_eq!(z.get_by_rank(128), Some((&b"m5"[..], 1000.0)));
    check_invariants(&z);
    // Shrinking alone never converts back.
    z.remove_range_by_rank(0..120);
    assert_eq!(z.encoding(), "skiplist");
    z.convert_to_listpack_if_small(l);
    assert_eq!(z.encoding(), "listpack");
    assert_eq!(z.len(), 9);
    assert_eq!(z.get_by_rank(8), Some((&b"m5"[..], 1000.0)));

    let mut z = ZSet::new();
    z.insert_or_update(&[b'x'; 64], 1.0, l);
    assert_eq!(z.encoding(), "listpack");
    z.insert_or_update(&[b'y'; 65], 2.0, l);
    assert_eq!(z.encoding(), "skiplist");
    z.convert_to_listpack_if_small(l);
    assert_eq!(z.encoding(), "skiplist");
    z.remove(&[b'y'; 65]);
    z.convert_to_listpack_if_small(l);
    assert_eq!(z.encoding(), "listpack");

    let mut z = ZSet::new();
    let zero = ZSetLimits {
        max_listpack_entries: 0,
        ..l
    };
    z.insert_or_update(b"a", 1.0, zero);
    assert_eq!(z.encoding(), "skiplist");
}

#[test]
fn zadd_flags_follow_zsetadd() {
    let l = ZSetLimits::default();
    for skiplist in [false, true] {
        let mut z = if skiplist {
            ZSet::new_skiplist()
        } else {
            ZSet::new()
        };
        let f = |nx, xx, gt, lt, incr| ZAddFlags {
            nx,
            xx,
            gt,
            lt,
            incr,
        };
        let none = ZAddFlags::default();
        assert_eq!(z.add(b"a", f64::NAN, none, l), ZAddOutcome::Nan);
        assert_eq!(
            z.add(b"a", 1.0, f(false, true, false, false, false), l),
            ZAddOutcome::Skipped
        );
        assert!(z.is_empty());
        assert_eq!(z.add(b"a", 1.0, none, l), ZAddOutcome::Added(1.0));
        assert_eq!(z.add(b"a", 1.0, none, l), ZAddOutcome::Unchanged(1.0));
        assert_eq!(
            z.add(b"a", 5.0, f(true, false, false, false, false), l),
            ZAddOutcome::Skipped
        );
        assert_eq!(
            z.add(b"a", 0.5, f(false, false, true, false, false), l),
            ZAddOutcome::Skipped
        );
        assert_eq!(
            z.add(b"a", 1.0, f(false, false, true, false, false), l),
            ZAddOutcome::Skipped
        );
        assert_eq!(
            z.add(b"a", 2.0, f(false, false, true, false, false), l),
            ZAddOutcome::Updated(2.0)
        );
        assert_eq!(
            z.add(b"a", 3.0, f(false, false, false, true, false), l),
            ZAddOutcome::Skipped
        );
        assert_eq!(
            z.add(b"a", 1.5, f(false, false, false, true, false), l),
            ZAddOutcome::Updated(1.5)
        );
        assert_eq!(
            z.add(b"a", 2.0, f(false, false, false, false, true), l),
            ZAddOutcome::Updated(3.5)
        );
        assert_eq!(
            z.add(b"a", 0.0, f(false, false, false, false, true), l),
            ZAddOutcome::Unchanged(3.5)
        );
        assert_eq!(
            z.add(b"a", -1.0, f(false, false, true, false, true), l),
            ZAddOutcome::Skipped
        );
        // GT/LT do not gate new members; INCR on a new member starts from 0.
        assert_eq!(
            z.add(b"b", -7.0, f(false, false, true, false, true), l),
            ZAddOutcome::Added(-7.0)
        );
        z.add(b"inf", f64::INFINITY, none, l);
        assert_eq!(
            z.add(
                b"inf",
                f64::NEG_INFINITY,
                f(false, false, false, false, true),
                l
            ),
            ZAddOutcome::Nan
        );
        assert_eq!(z.score(b"inf"), Some(f64::INFINITY));
        assert_eq!(z.score(b"a"), Some(3.5));
        assert_eq!(z.len(), 3);
        check_invariants(&z);
    }
}

#[test]
fn pop_and_random_members() {
    fastrand::seed(5);
    for limits in [ZSetLimits::default(), small()] {
        let mut z = ZSet::new();
        for i in 0..40 {
            z.insert_or_update(format!("m{i:02}").as_bytes(), i as f64, limits);
        }
        assert_eq!(z.is_listpack(), limits == ZSetLimits::default());
        let (m, s) = z.random_member().unwrap();
        assert_eq!(z.score(m), Some(s));
        let d = z.random_distinct(10);
        let uniq: std::collections::BTreeSet<&[u8]> = d.iter().map(|(m, _)| *m).collect();
        assert_eq!(uniq.len(), 10);
        assert_eq!(z.random_distinct(100).len(), 40);
        assert_eq!(z.random_with_repetition(100).len(), 100);
        let low = z.pop(3, false);
        assert_eq!(
            low,
            vec![
                (Bytes::from_static(b"m00"), 0.0),
                (Bytes::from_static(b"m01"), 1.0),
                (Bytes::from_static(b"m02"), 2.0)
            ]
        );
        let high = z.pop(2, true);
        assert_eq!(
            high,
            vec![
                (Bytes::from_static(b"m39"), 39.0),
                (Bytes::from_static(b"m38"), 38.0)
            ]
        );
        assert_eq!(z.len(), 35);
        assert_eq!(z.pop(100, true).len(), 35);
        assert!(z.is_empty() && z.random_member().is_none());
        assert!(z.random_with_repetition(5).is_empty());
    }
}

#[test]
fn random_member_is_roughly_uniform() {
    fastrand::seed(9);
    for limits in [ZSetLimits::default(), small()] {
        let mut z = ZSet::new();
        for i in 0..20 {
            z.insert_or_update(format!("{i}").as_bytes(), (i % 3) as f64, limits);
        }
        let mut counts = HashMap::new();
        for _ in 0..20000 {
            *counts
                .entry(z.random_member().unwrap().0.to_vec())
                .or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 20);
        assert!(
            counts.values().all(|&c| (700..1300).contains(&c)),
            "{counts:?}"
        );
    }
}

#[test]
fn g17_len_matches_printf() {
    for (v, s) in [
        (1.5, "1.5"),
        (10.5, "10.5"),
        (0.1, "0.10000000000000001"),
        (-0.25, "-0.25"),
        (1e-5, "1.0000000000000001e-05"),
        (1.5e300, "1.5000000000000001e+300"),
        (1e17 + 0.0, "1e+17"),
        (123456.789, "123456.789"),
        (0.0001, "0.0001"),
        (2.3, "2.2999999999999998"),
        (2.71, "2.71"),
        (-2.5e-310, "-2.5000000000000171e-310"),
    ] {
        assert_eq!(g17_len(v), s.len(), "{v}");
    }
}

/// MEMORY USAGE of the same sets on redis-server 7.0.15, less the key's share (its sds
/// and the 24-byte dictEntry: 32 for these names): z10 = 10 x `zadd z10 i*1.5 m<i>`
/// reports 144, zi10 (scores 1..10) 128, z128 (`member:<i>` scored i) 1840; z1000
/// (i*1.5, m<i>) is a skiplist whose figure depends on its random levels: 94296 with
/// SAMPLES 0, 88984..98584 with the default 5 samples.
#[test]
fn mem_usage_matches_redis_for_the_measured_sets() {
    fastrand::seed(1);
    let build = |n: usize, score: &dyn Fn(usize) -> f64, name: &dyn Fn(usize) -> String| {
        let mut z = ZSet::new();
        for i in 1..=n {
            z.insert_or_update(name(i).as_bytes(), score(i), ZSetLimits::default());
        }
        z
    };
    let m = |i: usize| format!("m{i}");
    let z10 = build(10, &|i| i as f64 * 1.5, &m);
    assert_eq!(z10.encoding(), "listpack");
    assert_eq!(z10.mem_usage(), 144 - 32);
    assert_eq!(build(10, &|i| i as f64, &m).mem_usage(), 128 - 32);
    let z128 = build(128, &|i| i as f64, &|i| format!("member:{i}"));
    assert_eq!(z128.mem_usage(), 1840 - 32);
    let z1000 = build(1000, &|i| i as f64 * 1.5, &m);
    assert_eq!(z1000.encoding(), "skiplist");
    let all = z1000.mem_usage_samples(0) as f64;
    let redis = (94296 - 32) as f64;
    assert!((all / redis - 1.0).abs() < 0.02, "{all} vs {redis}");
    let sampled = z1000.mem_usage() as f64;
    assert!((sampled / redis - 1.0).abs() < 0.2, "{sampled} vs {redis}");
    assert_eq!(ZSet::new().mem_usage(), 16 + 8);
}

#[test]
fn skiplist_arena_reuses_and_compacts_freed_slots() {
    fastrand::seed(2);
    let mut z = ZSet::new_skiplist();
    for i in 0..500 {
        z.insert_or_update(format!("{i}").as_bytes(), (i % 7) as f64, small());
    }
    for i in (0..500).step_by(3) {
        assert!(z.remove(format!("{i}").as_bytes()));
    }
    z.remove_range_by_rank(10..100);
    let sl = skiplist_of(&z);
    assert!(sl.nodes.holes() <= z.len().max(16), "{} holes", sl.nodes.holes());
    assert_eq!(sl.nodes.slots(), z.len() + 1 + sl.nodes.holes());
    check_invariants(&z);
    for i in 1000..1010 {
        z.insert_or_update(format!("{i}").as_bytes(), 1.5, small());
    }
    let sl = skiplist_of(&z);
    assert_eq!(sl.nodes.slots(), z.len() + 1 + sl.nodes.holes());
    check_invariants(&z);
    while !z.is_empty() {
        z.pop(7, fastrand::bool());
        check_invariants(&z);
    }
    assert_eq!(skiplist_of(&z).tail, NIL);
}
