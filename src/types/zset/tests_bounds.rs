//! Tests of range bounds: parsing as Redis does, and score and lex ranges over both
//! encodings.

use super::tests::check_invariants;
use super::*;

#[test]
fn score_bound_parses_as_zslparserange() {
    let ok = |s: &[u8], v: f64, ex: bool| {
        assert_eq!(
            ScoreBound::parse(s),
            Some(ScoreBound {
                value: v,
                exclusive: ex
            }),
            "{:?}",
            String::from_utf8_lossy(s)
        )
    };
    ok(b"1.5", 1.5, false);
    ok(b"(1.5", 1.5, true);
    ok(b"-inf", f64::NEG_INFINITY, false);
    ok(b"+inf", f64::INFINITY, false);
    ok(b"inf", f64::INFINITY, false);
    ok(b"(-Infinity", f64::NEG_INFINITY, true);
    ok(b"", 0.0, false);
    ok(b"(", 0.0, true);
    ok(b" 1", 1.0, false);
    ok(b"\t\x0b\x0c\r\n2", 2.0, false);
    ok(b"1.", 1.0, false);
    ok(b".5", 0.5, false);
    ok(b"-.5e1", -5.0, false);
    ok(b"1E+2", 100.0, false);
    ok(b"1e400", f64::INFINITY, false);
    ok(b"0x10", 16.0, false);
    ok(b"0x1p4", 16.0, false);
    ok(b"(0x1.8p1", 3.0, true);
    ok(b"-0X.8", -0.5, false);
    ok(b"0x1P-2", 0.25, false);
    ok(b"1\0garbage", 1.0, false);
    ok(b"(\0", 0.0, true);
    for bad in [
        &b"nan"[..],
        b"(nan",
        b"-nan",
        b"1 ",
        b"  ",
        b".",
        b"1e",
        b"1e+",
        b"0x",
        b"0x1p",
        b"0xg",
        b"1_0",
        b"--1",
        b"+-1",
        b"abc",
        b"infinit",
        b"((1",
        b"1.5x",
    ] {
        assert_eq!(
            ScoreBound::parse(bad),
            None,
            "{:?}",
            String::from_utf8_lossy(bad)
        );
    }
}

#[test]
fn lex_bound_parses_as_zslparselexrangeitem() {
    assert_eq!(LexBound::parse(b"-"), Some(LexBound::Min));
    assert_eq!(LexBound::parse(b"+"), Some(LexBound::Max));
    assert_eq!(LexBound::parse(b"+\0x"), Some(LexBound::Max));
    assert_eq!(
        LexBound::parse(b"[a"),
        Some(LexBound::Inclusive(b"a".to_vec()))
    );
    assert_eq!(
        LexBound::parse(b"(a"),
        Some(LexBound::Exclusive(b"a".to_vec()))
    );
    assert_eq!(LexBound::parse(b"["), Some(LexBound::Inclusive(vec![])));
    for bad in [&b""[..], b"a", b"+a", b"-a", b"1", b"]a"] {
        assert_eq!(LexBound::parse(bad), None);
    }
}

#[test]
fn score_and_lex_ranges_with_bounds() {
    for skiplist in [false, true] {
        let mut z = if skiplist {
            ZSet::new_skiplist()
        } else {
            ZSet::new()
        };
        for (i, m) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            z.insert_or_update(m.as_bytes(), i as f64, ZSetLimits::default());
        }
        let b = |s: &str| ScoreBound::parse(s.as_bytes()).unwrap();
        let members = |it: ZRangeIter| it.map(|(m, _)| m.to_vec()).collect::<Vec<_>>();
        assert_eq!(z.score_ranks(&b("1"), &b("3")), 1..4);
        assert_eq!(z.score_ranks(&b("(1"), &b("(3")), 2..3);
        assert_eq!(z.score_ranks(&b("-inf"), &b("+inf")), 0..5);
        assert_eq!(z.score_ranks(&b("3"), &b("1")).len(), 0);
        assert_eq!(z.score_ranks(&b("(2"), &b("2")).len(), 0);
        assert_eq!(z.count_in_score_range(&b("2"), &b("2")), 1);
        assert_eq!(z.count_in_score_range(&b("9"), &b("10")), 0);
        assert_eq!(
            members(z.range_by_score(&b("1"), &b("3"), true)),
            vec![b"d".to_vec(), b"c".to_vec(), b"b".to_vec()]
        );
        let l = |s: &str| LexBound::parse(s.as_bytes()).unwrap();
        // Lex ranges assume equal scores: use a second set.
        let mut e = if skiplist {
            ZSet::new_skiplist()
        } else {
            ZSet::new()
        };
        for m in ["a", "b", "c", "d", "e"] {
            e.insert_or_update(m.as_bytes(), 0.0, ZSetLimits::default());
        }
        assert_eq!(e.lex_ranks(&l("-"), &l("+")), 0..5);
        assert_eq!(e.lex_ranks(&l("[b"), &l("(d")), 1..3);
        assert_eq!(e.lex_ranks(&l("(b"), &l("[d")), 2..4);
        assert_eq!(e.lex_ranks(&l("+"), &l("-")).len(), 0);
        assert_eq!(e.lex_ranks(&l("[d"), &l("[b")).len(), 0);
        assert_eq!(e.count_in_lex_range(&l("[bb"), &l("+")), 3);
        assert_eq!(
            members(e.range_by_lex(&l("-"), &l("(c"), true)),
            vec![b"b".to_vec(), b"a".to_vec()]
        );
        assert_eq!(e.remove_range_by_lex(&l("(a"), &l("[c")), 2);
        assert_eq!(z.remove_range_by_score(&b("(0"), &b("3")), 3);
        assert_eq!(members(z.iter()), vec![b"a".to_vec(), b"e".to_vec()]);
        check_invariants(&z);
        check_invariants(&e);
    }
}
