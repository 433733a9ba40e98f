//! Unit tests for [`List`](super::List): encoding, node layout against a real Redis 7.0,
//! Redis's index rules for every operation, and memory accounting.

use super::node::{allow_merge, FILL_MAX, SIZE_SAFETY_LIMIT, TEST_PACKED_THRESHOLD};
use super::*;

/// MEMORY USAGE's part for a one-letter key: an 8-byte sds allocation and a dictEntry.
const KEY_K_OVERHEAD: usize = 8 + 24;

pub(super) fn list_of<S: AsRef<[u8]>>(items: impl IntoIterator<Item = S>, fill: i32) -> List {
    let mut l = List::new();
    for it in items {
        l.push_back(it.as_ref(), fill);
    }
    l
}

pub(super) fn contents(l: &List) -> Vec<Vec<u8>> {
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
pub(super) fn check_invariants(l: &List) {
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

pub(super) fn with_packed_threshold<R>(t: usize, f: impl FnOnce() -> R) -> R {
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
                "120", "s0", "s1", "150", "s2", "s3", "s4", "small", "t", "s6", "s7", "s8", "s9",
                "300"
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

#[test]
fn clone_and_debug_show_the_elements() {
    let l = list_of(["a", "12", "b c"], DEFAULT_FILL);
    let c = l.clone();
    assert_eq!(format!("{c:?}"), r#"["a", 12, "b c"]"#);
    assert_eq!(contents(&l), contents(&c));
    assert_eq!((&l).into_iter().count(), 3);
}
