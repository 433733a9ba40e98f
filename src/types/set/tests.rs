//! Unit tests for [`Set`](super::Set): both encodings and the conversion between them,
//! random sampling, and the memory models against Redis's MEMORY USAGE.

use super::*;
use std::collections::BTreeSet;

fn members(s: &Set) -> Vec<Vec<u8>> {
    s.iter().map(|m| m.to_vec()).collect()
}

fn sorted_members(s: &Set) -> Vec<Vec<u8>> {
    let mut v = members(s);
    v.sort();
    v
}

#[test]
fn set_value_fits_the_keyspace_enum() {
    assert!(std::mem::size_of::<Set>() <= 24);
}

#[test]
fn string2ll_accepts_only_canonical_integers() {
    assert_eq!(string2ll(b"0"), Some(0));
    assert_eq!(string2ll(b"-1"), Some(-1));
    assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
    assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
    for bad in [
        &b""[..],
        b"-",
        b"-0",
        b"+1",
        b"01",
        b" 1",
        b"1 ",
        b"1a",
        b"9223372036854775808",
        b"-9223372036854775809",
        b"00",
        b"123456789012345678901",
    ] {
        assert_eq!(string2ll(bad), None, "{:?}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn integers_stay_an_intset_sorted_numerically() {
    let mut s = Set::new();
    for m in ["10", "-3", "2", "100000", "2", "-70000", "5000000000"] {
        s.add(m.as_bytes(), SET_MAX_INTSET_ENTRIES);
    }
    assert_eq!(s.encoding(), "intset");
    assert_eq!(s.len(), 6);
    let got: Vec<String> = s
        .iter()
        .map(|m| String::from_utf8(m.to_vec()).unwrap())
        .collect();
    assert_eq!(
        got,
        ["-70000", "-3", "2", "10", "100000", "5000000000"].map(String::from)
    );
    assert!(s.contains(b"5000000000"));
    assert!(!s.contains(b"05000000000"));
    assert!(!s.contains(b"abc"));
    assert!(s.remove(b"-3"));
    assert!(!s.remove(b"-3"));
    assert!(!s.remove(b"x"));
    assert_eq!(s.iter().next().unwrap().as_int(), Some(-70000));
}

#[test]
fn non_canonical_integer_converts_to_hashtable() {
    for odd in ["-0", "+1", "01", " 1", "abc", "1.0"] {
        let mut s = Set::new();
        s.add(b"1", SET_MAX_INTSET_ENTRIES);
        assert!(s.add(odd.as_bytes(), SET_MAX_INTSET_ENTRIES));
        assert_eq!(s.encoding(), "hashtable", "{odd}");
        assert!(s.contains(b"1") && s.contains(odd.as_bytes()));
        assert_eq!(s.len(), 2);
    }
}

#[test]
fn intset_converts_past_max_entries_and_never_back() {
    let mut s = Set::new();
    for i in 0..512 {
        assert!(s.add(i.to_string().as_bytes(), 512));
    }
    assert_eq!(s.encoding(), "intset");
    assert!(!s.add(b"7", 512));
    assert_eq!(s.encoding(), "intset");
    assert!(s.add(b"512", 512));
    assert_eq!(s.encoding(), "hashtable");
    for i in 0..500 {
        assert!(s.remove(i.to_string().as_bytes()));
    }
    assert_eq!(s.encoding(), "hashtable");
    assert_eq!(s.len(), 13);
    assert!(s.contains(b"511") && !s.contains(b"5"));

    let mut s = Set::new();
    s.add(b"1", 0);
    assert_eq!(s.encoding(), "hashtable");
}

#[test]
fn removing_the_last_member_frees_the_intset() {
    let mut s = Set::new();
    s.add(b"5", 512);
    assert!(s.remove(b"5"));
    assert!(s.is_empty());
    match &s {
        Set::Intset(is) => assert_eq!(is.buf.capacity(), 0),
        _ => panic!(),
    }
}

#[test]
fn random_member_pop_and_samples() {
    fastrand::seed(7);
    for hashtable in [false, true] {
        let mut s = Set::new();
        for i in 0..100 {
            s.add(i.to_string().as_bytes(), 512);
        }
        if hashtable {
            s.add(b"x", 512);
            s.remove(b"x");
        }
        assert_eq!(s.is_intset(), !hashtable);
        assert!(s.contains(&s.random_member().unwrap()));
        let d = s.random_distinct(30);
        assert_eq!(d.len(), 30);
        let uniq: BTreeSet<Vec<u8>> = d.iter().map(|m| m.to_vec()).collect();
        assert_eq!(uniq.len(), 30);
        assert_eq!(s.random_distinct(1000).len(), 100);
        let r = s.random_with_repetition(500);
        assert_eq!(r.len(), 500);
        assert!(r.iter().all(|m| s.contains(m)));
        let popped = s.pop_random_n(40);
        assert_eq!(popped.len(), 40);
        assert_eq!(s.len(), 60);
        assert!(popped.iter().all(|m| !s.contains(m)));
        let one = s.pop_random().unwrap();
        assert!(!s.contains(&one));
        let rest = s.pop_random_n(usize::MAX);
        assert_eq!(rest.len(), 59);
        assert!(s.is_empty() && s.pop_random().is_none() && s.random_member().is_none());
        assert!(s.random_with_repetition(3).is_empty());
    }
}

#[test]
fn random_member_is_roughly_uniform() {
    fastrand::seed(11);
    for hashtable in [false, true] {
        let mut s = Set::new();
        for i in 0..10 {
            s.add(i.to_string().as_bytes(), if hashtable { 0 } else { 512 });
        }
        let mut counts = [0usize; 10];
        for _ in 0..20000 {
            let m = s.random_member().unwrap();
            counts[string2ll(&m).unwrap() as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (1600..2400).contains(&c)),
            "{counts:?}"
        );
    }
}

#[test]
fn sample_distinct_covers_both_strategies() {
    fastrand::seed(3);
    for (len, n) in [(10, 10), (10, 3), (1000, 5), (1000, 999), (5, 0), (0, 4)] {
        let v = sample_distinct(len, n);
        assert_eq!(v.len(), n.min(len));
        let u: BTreeSet<usize> = v.iter().copied().collect();
        assert_eq!(u.len(), v.len());
        assert!(v.iter().all(|&i| i < len));
    }
}

/// Random adds, removes and pops against a BTreeSet, across the intset -> hashtable
/// conversion (integers first, strings later, a small intset limit).
#[test]
fn randomized_against_btreeset_model() {
    let mut converted = 0;
    for seed in 0..20u64 {
        fastrand::seed(seed);
        let mut s = Set::new();
        let mut model = BTreeSet::<Vec<u8>>::new();
        let max = 64;
        for step in 0..3000 {
            let member: Vec<u8> = if step < 1500 || fastrand::bool() {
                match fastrand::u8(..4) {
                    0 => fastrand::i64(-40..40).to_string().into_bytes(),
                    1 => fastrand::i64(..).to_string().into_bytes(),
                    2 => fastrand::i64(-70000..70000).to_string().into_bytes(),
                    _ => fastrand::i64(-3_000_000_000..3_000_000_000)
                        .to_string()
                        .into_bytes(),
                }
            } else {
                format!("m{}", fastrand::u32(..200)).into_bytes()
            };
            match fastrand::u8(..10) {
                0..=5 => assert_eq!(s.add(&member, max), model.insert(member.clone())),
                6..=7 => assert_eq!(s.remove(&member), model.remove(&member)),
                8 => {
                    if let Some(p) = s.pop_random() {
                        assert!(model.remove(&p[..]));
                    } else {
                        assert!(model.is_empty());
                    }
                }
                _ => assert_eq!(s.contains(&member), model.contains(&member)),
            }
            assert_eq!(s.len(), model.len());
            if s.is_intset() {
                assert!(s.len() <= max);
            }
        }
        let got = sorted_members(&s);
        let want: Vec<Vec<u8>> = model.iter().cloned().collect();
        assert_eq!(got, want, "seed {seed}");
        if s.is_intset() {
            let ints: Vec<i64> = s.iter().map(|m| m.as_int().unwrap()).collect();
            assert!(ints.windows(2).all(|w| w[0] < w[1]));
        } else {
            converted += 1;
        }
    }
    assert!(
        converted > 10,
        "most runs must reach the hashtable encoding"
    );
}

#[test]
fn jemalloc_size_classes() {
    let cases = [
        (1, 8),
        (8, 8),
        (9, 16),
        (17, 32),
        (33, 48),
        (100, 112),
        (128, 128),
        (129, 160),
        (257, 320),
        (1008, 1024),
        (1025, 1280),
        (8193, 10240),
        (16384, 16384),
        (16385, 20480),
    ];
    for (n, want) in cases {
        assert_eq!(jemalloc_size(n), want, "{n}");
    }
    assert_eq!(sds_alloc_size(2), 8);
    assert_eq!(sds_alloc_size(0), 8);
    assert_eq!(sds_alloc_size(31), 40_usize.next_multiple_of(16));
    assert_eq!(sds_alloc_size(32), 48);
}

/// MEMORY USAGE of the same sets on redis-server 7.0.15, minus the key's share (its sds
/// plus the 24-byte dictEntry): `sadd is10 1..10` reports 80 (key "is10": 8+24),
/// `is500` 1072, `hs10` (m1..m10) 616 (key 32), `hs1000` (m1..m1000) 40296 (key 32).
#[test]
fn mem_usage_matches_redis_for_the_measured_sets() {
    let build = |n: usize, prefix: &str| {
        let mut s = Set::new();
        for i in 1..=n {
            s.add(format!("{prefix}{i}").as_bytes(), SET_MAX_INTSET_ENTRIES);
        }
        s
    };
    assert_eq!(build(10, "").mem_usage(), 80 - 32);
    assert_eq!(build(500, "").mem_usage(), 1072 - 32);
    assert_eq!(build(10, "m").mem_usage(), 616 - 32);
    assert_eq!(build(1000, "m").mem_usage(), 40296 - 32);
    assert_eq!(build(1000, "m").mem_usage_samples(0), 40296 - 32);
}

#[test]
fn dict_model_grows_rehashes_and_shrinks() {
    let mut d = DictModel::default();
    for used in 0..4 {
        d.rehash_step();
        d.expand_if_needed(used);
    }
    assert_eq!(d.slots(), 4);
    d.rehash_step();
    d.expand_if_needed(4);
    assert_eq!(d.slots(), 12);
    for _ in 0..10 {
        d.rehash_step();
    }
    assert_eq!(d.slots(), 8);
    d.resize_if_needed(0);
    assert_eq!(d.slots(), 12);
    for _ in 0..10 {
        d.rehash_step();
    }
    assert_eq!(d.slots(), 4);
}
