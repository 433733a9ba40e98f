//! Randomized and scale tests: every [`ZSet`](super::ZSet) operation against a sorted-vector
//! model, and the skiplist staying logarithmic at size.

use std::time::Instant;

use super::tests::{check_invariants, contents, small};
use super::*;

/// A sorted Vec model; every operation compared, across listpack -> skiplist conversion
/// (small limits) and back (convert_to_listpack_if_small).
#[test]
fn randomized_against_sorted_vec_model() {
    let limits = small();
    // Steps spent in each encoding, and skiplist -> listpack conversions seen.
    let (mut in_listpack, mut in_skiplist, mut back) = (0, 0, 0);
    for seed in 0..30u64 {
        fastrand::seed(seed);
        let mut z = ZSet::new();
        let mut model: Vec<(f64, Vec<u8>)> = Vec::new();
        let sort = |m: &mut Vec<(f64, Vec<u8>)>| {
            m.sort_by(|a, b| cmp_entry(a.0, &a.1, b.0, &b.1));
        };
        let equal_scores = seed % 5 == 0;
        let rand_member = || -> Vec<u8> {
            let len = fastrand::usize(0..if fastrand::u8(..20) == 0 { 12 } else { 4 });
            (0..len)
                .map(|_| b"ab\x00\xff"[fastrand::usize(..4)])
                .collect()
        };
        let rand_score = || -> f64 {
            if equal_scores {
                return 1.0;
            }
            match fastrand::u8(..10) {
                0 => f64::INFINITY,
                1 => f64::NEG_INFINITY,
                2..=5 => fastrand::i32(-5..5) as f64,
                _ => fastrand::i32(-50..50) as f64 / 4.0,
            }
        };
        let rand_score_bound = || ScoreBound {
            value: rand_score(),
            exclusive: fastrand::bool(),
        };
        let rand_lex_bound = || match fastrand::u8(..6) {
            0 => LexBound::Min,
            1 => LexBound::Max,
            2 | 3 => LexBound::Inclusive(rand_member()),
            _ => LexBound::Exclusive(rand_member()),
        };
        for _ in 0..600 {
            match fastrand::u8(..16) {
                0..=5 => {
                    let (m, s) = (rand_member(), rand_score());
                    let flags = ZAddFlags {
                        incr: !equal_scores && fastrand::u8(..4) == 0,
                        gt: fastrand::u8(..6) == 0,
                        ..Default::default()
                    };
                    let out = z.add(&m, s, flags, limits);
                    match model.iter().position(|(_, x)| *x == m) {
                        Some(p) => {
                            let cur = model[p].0;
                            let new = if flags.incr { cur + s } else { s };
                            if new.is_nan() {
                                assert_eq!(out, ZAddOutcome::Nan);
                            } else if flags.gt && new <= cur {
                                assert_eq!(out, ZAddOutcome::Skipped);
                            } else if new == cur {
                                assert_eq!(out, ZAddOutcome::Unchanged(new));
                            } else {
                                assert_eq!(out, ZAddOutcome::Updated(new));
                                model[p].0 = new;
                            }
                        }
                        None => {
                            assert_eq!(out, ZAddOutcome::Added(s));
                            model.push((s, m));
                        }
                    }
                    sort(&mut model);
                }
                6 | 7 => {
                    let m = rand_member();
                    let p = model.iter().position(|(_, x)| *x == m);
                    assert_eq!(z.remove(&m), p.is_some());
                    if let Some(p) = p {
                        model.remove(p);
                    }
                }
                8 => {
                    let m = rand_member();
                    let want = model.iter().position(|(_, x)| *x == m);
                    assert_eq!(z.rank(&m, false), want);
                    assert_eq!(z.rank(&m, true), want.map(|r| model.len() - 1 - r));
                    assert_eq!(z.score(&m), want.map(|p| model[p].0));
                }
                9 => {
                    let (a, b) = (fastrand::usize(0..40), fastrand::usize(0..40));
                    let rev = fastrand::bool();
                    let got: Vec<(Vec<u8>, f64)> =
                        z.range(a..b, rev).map(|(m, s)| (m.to_vec(), s)).collect();
                    let end = b.min(model.len());
                    let start = a.min(end);
                    let mut want: Vec<(Vec<u8>, f64)> = model[start..end]
                        .iter()
                        .map(|(s, m)| (m.clone(), *s))
                        .collect();
                    if rev {
                        want.reverse();
                    }
                    assert_eq!(got, want);
                    assert_eq!(z.range(a..b, rev).len(), want.len());
                }
                10 => {
                    let (min, max) = (rand_score_bound(), rand_score_bound());
                    let want: Vec<usize> = (0..model.len())
                        .filter(|&i| min.admits_above(model[i].0) && max.admits_below(model[i].0))
                        .collect();
                    let r = z.score_ranks(&min, &max);
                    assert_eq!(r.clone().collect::<Vec<_>>(), want);
                    if fastrand::u8(..4) == 0 {
                        assert_eq!(z.remove_range_by_score(&min, &max), want.len());
                        model.drain(r);
                    }
                }
                11 if equal_scores => {
                    let (min, max) = (rand_lex_bound(), rand_lex_bound());
                    let want: Vec<usize> = (0..model.len())
                        .filter(|&i| min.admits_above(&model[i].1) && max.admits_below(&model[i].1))
                        .collect();
                    let r = z.lex_ranks(&min, &max);
                    assert_eq!(r.clone().collect::<Vec<_>>(), want);
                    if fastrand::u8(..4) == 0 {
                        assert_eq!(z.remove_range_by_lex(&min, &max), want.len());
                        model.drain(r);
                    }
                }
                12 => {
                    let (a, b) = (fastrand::usize(0..30), fastrand::usize(0..30));
                    let end = b.min(model.len());
                    let start = a.min(end);
                    assert_eq!(z.remove_range_by_rank(a..b), end - start);
                    model.drain(start..end);
                }
                13 => {
                    let n = fastrand::usize(0..4);
                    let max = fastrand::bool();
                    let got: Vec<(Vec<u8>, f64)> = z
                        .pop(n, max)
                        .into_iter()
                        .map(|(m, s)| (m.to_vec(), s))
                        .collect();
                    let n = n.min(model.len());
                    let drained: Vec<(f64, Vec<u8>)> = if max {
                        model.drain(model.len() - n..).collect()
                    } else {
                        model.drain(..n).collect()
                    };
                    let mut want: Vec<(Vec<u8>, f64)> =
                        drained.into_iter().map(|(s, m)| (m, s)).collect();
                    if max {
                        want.reverse();
                    }
                    assert_eq!(got, want);
                }
                14 => {
                    let was = z.is_listpack();
                    z.convert_to_listpack_if_small(limits);
                    back += (!was && z.is_listpack()) as usize;
                }
                _ => {
                    if let Some((m, s)) = z.random_member() {
                        assert_eq!(z.score(m), Some(s));
                    }
                }
            }
            assert_eq!(z.len(), model.len());
            if z.is_listpack() {
                assert!(z.len() <= limits.max_listpack_entries);
                assert!(z.iter().all(|(m, _)| m.len() <= limits.max_listpack_value));
            }
            let want: Vec<(Vec<u8>, f64)> = model.iter().map(|(s, m)| (m.clone(), *s)).collect();
            assert_eq!(contents(&z), want, "seed {seed}");
            check_invariants(&z);
            if z.is_listpack() {
                in_listpack += 1;
            } else {
                in_skiplist += 1;
            }
        }
    }
    assert!(in_listpack > 2000 && in_skiplist > 2000 && back > 10);
    eprintln!("steps: {in_listpack} listpack, {in_skiplist} skiplist; {back} back to listpack");
}

/// Builds 200k members in the skiplist encoding and times rank/range/count lookups: each
/// must be O(log n), so 30k of them take milliseconds even unoptimized.
#[test]
fn large_skiplist_stays_logarithmic() {
    fastrand::seed(42);
    const N: usize = 200_000;
    let t0 = Instant::now();
    let mut z = ZSet::new();
    for i in 0..N {
        // Scores out of order, with ties broken by member.
        let m = format!("member:{i}");
        z.insert_or_update(m.as_bytes(), (i % 1000) as f64, ZSetLimits::default());
    }
    let build = t0.elapsed();
    assert_eq!(z.len(), N);
    assert_eq!(z.encoding(), "skiplist");

    let t1 = Instant::now();
    for k in 0..10_000 {
        let i = (k * 7919) % N;
        let m = format!("member:{i}");
        let r = z.rank(m.as_bytes(), false).unwrap();
        assert_eq!(z.get_by_rank(r).unwrap().0, m.as_bytes());
        let s = (i % 1000) as f64;
        let ranks = z.score_ranks(&ScoreBound::inclusive(s), &ScoreBound::inclusive(s));
        assert_eq!(ranks.len(), N / 1000);
        assert!(ranks.contains(&r));
        assert_eq!(z.range(r..r + 10, true).count(), 10.min(N - r));
    }
    let lookups = t1.elapsed();

    let t2 = Instant::now();
    for k in 0..2_000 {
        let m = format!("member:{}", (k * 104729) % N);
        assert!(z.remove(m.as_bytes()));
    }
    assert_eq!(
        z.remove_range_by_rank(1000..2000),
        1000,
        "removes a block in place"
    );
    let removes = t2.elapsed();
    assert_eq!(z.len(), N - 3000);
    eprintln!(
        "200k skiplist: build {build:?}, 10k rank+get_by_rank+score_ranks+range {lookups:?}, \
         3k removals {removes:?}"
    );
    // Speed is reported, not asserted: these machines are shared and noisy. The benchmark
    // script benches/values_compare.sh measures a 1M-member set side by side with Redis.
}
