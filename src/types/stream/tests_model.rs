//! Random operations on a stream checked against a plain list of entries.

use super::*;

type Model = Vec<(StreamId, Vec<Vec<u8>>)>;

fn random_value(rng: &mut fastrand::Rng) -> Vec<u8> {
    match rng.u8(0..10) {
        0 => Vec::new(),
        1 => rng.i64(..).to_string().into_bytes(),
        2 => rng.u16(..).to_string().into_bytes(),
        3 => vec![b'q'; rng.usize(60..5000)],
        _ => (0..rng.usize(1..12))
            .map(|_| rng.alphanumeric() as u8)
            .collect(),
    }
}

fn random_pairs(rng: &mut fastrand::Rng) -> Vec<Vec<u8>> {
    let names: [&[u8]; 4] = [b"a", b"b", b"12", b"long-field-name"];
    let n = rng.usize(1..4);
    let mut out = Vec::new();
    for i in 0..n {
        let f = if rng.u8(0..4) == 0 {
            names[rng.usize(0..names.len())].to_vec()
        } else {
            names[i].to_vec()
        };
        out.push(f);
        out.push(random_value(rng));
    }
    out
}

fn flat(e: Entry<'_>) -> (StreamId, Vec<Vec<u8>>) {
    let mut v = Vec::new();
    for (f, x) in e.fields() {
        v.push(f.to_vec());
        v.push(x.to_vec());
    }
    (e.id, v)
}

fn check(s: &Stream, m: &Model, rng: &mut fastrand::Rng) {
    assert_eq!(s.len() as usize, m.len());
    let fwd: Model = s
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(flat)
        .collect();
    assert_eq!(&fwd, m);
    let mut back: Model = s
        .range(StreamId::MIN, StreamId::MAX, true)
        .map(flat)
        .collect();
    back.reverse();
    assert_eq!(&back, m);
    assert_eq!(s.meta().first_id, m.first().map_or(StreamId::MIN, |e| e.0));
    assert_eq!(s.last_valid_id(), m.last().map(|e| e.0));
    for _ in 0..4 {
        let a = StreamId::new(rng.u64(0..1200), rng.u64(0..3));
        let b = StreamId::new(rng.u64(0..1200), rng.u64(0..3));
        let want: Vec<StreamId> = m
            .iter()
            .map(|e| e.0)
            .filter(|&i| i >= a && i <= b)
            .collect();
        let got: Vec<StreamId> = s.range(a, b, false).map(|e| e.id).collect();
        assert_eq!(got, want, "{a:?}..{b:?}");
        let mut got: Vec<StreamId> = s.range(a, b, true).map(|e| e.id).collect();
        got.reverse();
        assert_eq!(got, want, "rev {a:?}..{b:?}");
    }
}

fn run(seed: u64, limits: NodeLimits) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut s = Stream::new();
    let mut m: Model = Vec::new();
    let mut next_ms = 1u64;
    for step in 0..600 {
        match rng.u8(0..10) {
            0..=5 => {
                let pairs = random_pairs(&mut rng);
                let at = StreamId::new(next_ms, rng.u64(0..3));
                next_ms += rng.u64(0..3);
                match s.add(AddId::Exact(at), &pairs, 0, limits) {
                    Ok(i) => {
                        assert_eq!(i, at);
                        m.push((at, pairs));
                    }
                    Err(e) => {
                        assert_eq!(e, StreamError::IdNotGreater);
                        assert!(m.last().is_some_and(|l| l.0 >= at) || at <= s.last_id());
                    }
                }
            }
            6 | 7 => {
                let mut ids = Vec::new();
                for _ in 0..rng.usize(1..4) {
                    if !m.is_empty() && rng.bool() {
                        ids.push(m[rng.usize(0..m.len())].0);
                    } else {
                        ids.push(StreamId::new(rng.u64(0..next_ms + 2), rng.u64(0..3)));
                    }
                }
                let mut want = 0;
                for i in &ids {
                    if let Some(p) = m.iter().position(|e| e.0 == *i) {
                        m.remove(p);
                        want += 1;
                    }
                }
                assert_eq!(s.delete(&ids), want);
            }
            _ => {
                let approx = rng.bool();
                let strategy = if rng.bool() {
                    TrimStrategy::MaxLen(rng.u64(0..(m.len() as u64 + 3)))
                } else {
                    TrimStrategy::MinId(StreamId::new(rng.u64(0..next_ms + 2), rng.u64(0..3)))
                };
                let limit = if approx && rng.bool() {
                    rng.u64(1..40)
                } else {
                    0
                };
                let removed = s.trim(Trim {
                    strategy,
                    approx,
                    limit,
                }) as usize;
                // Trimming only ever takes live entries from the head.
                let exact = match strategy {
                    TrimStrategy::MaxLen(n) => m.len().saturating_sub(n as usize),
                    TrimStrategy::MinId(min) => m.iter().take_while(|e| e.0 < min).count(),
                };
                if approx {
                    assert!(removed <= exact, "step {step}: {removed} > {exact}");
                    if limit != 0 {
                        assert!(removed as u64 <= limit);
                    }
                } else {
                    assert_eq!(removed, exact, "step {step}");
                }
                m.drain(..removed);
            }
        }
        check(&s, &m, &mut rng);
    }
}

#[test]
fn random_operations_match_a_plain_list_with_small_nodes() {
    for seed in 0..6 {
        run(
            seed,
            NodeLimits {
                max_bytes: 0,
                max_entries: 4,
            },
        );
    }
}

#[test]
fn random_operations_match_a_plain_list_with_byte_bounded_nodes() {
    for seed in 10..14 {
        run(
            seed,
            NodeLimits {
                max_bytes: 300,
                max_entries: 0,
            },
        );
    }
    run(20, NodeLimits::default());
}
