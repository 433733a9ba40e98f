//! Randomized tests: long runs of every [`List`](super::List) operation checked against a
//! `VecDeque` model, with ordinary and plain nodes.

use std::collections::VecDeque;

use super::tests::{check_invariants, contents, with_packed_threshold};
use super::*;

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
