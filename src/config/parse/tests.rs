//! Tests of the text primitives (sdssplitargs, sdscatrepr, string2ll, memtoull, strtoll) and
//! of formatting and validation details.

use super::*;

fn split(s: &str) -> Option<Vec<String>> {
    split_args_str(s)
}

#[test]
fn split_args_follows_sdssplitargs_quoting() {
    assert_eq!(
        split("  a  b\tc "),
        Some(vec!["a".into(), "b".into(), "c".into()])
    );
    assert_eq!(
        split(r#"a "b c" 'd e'"#),
        Some(vec!["a".into(), "b c".into(), "d e".into()])
    );
    assert_eq!(
        split(r#""\x41\n" 'it\'s'"#),
        Some(vec!["A\n".into(), "it's".into()])
    );
    assert_eq!(split(r#"ab"cd""#), Some(vec!["abcd".into()]));
    assert_eq!(split(r#""""#), Some(vec![String::new()]));
    assert_eq!(split(r#""abc"def"#), None);
    assert_eq!(split(r#""abc"#), None);
    assert_eq!(split("'abc"), None);
    assert_eq!(split(""), Some(vec![]));
}

#[test]
fn repr_round_trips_through_split_args() {
    let s = b"a \"b\"\\\n\x01\xff";
    let r = repr(s);
    assert_eq!(r, r#""a \"b\"\\\n\x01\xff""#);
    assert_eq!(split_args(r.as_bytes()).unwrap(), vec![s.to_vec()]);
}

#[test]
fn string2ll_is_strict_like_redis() {
    assert_eq!(string2ll(b"0"), Some(0));
    assert_eq!(string2ll(b"-12"), Some(-12));
    assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
    assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
    for bad in [
        "",
        "-",
        "-0",
        "007",
        "+1",
        " 1",
        "1 ",
        "9223372036854775808",
        "1x",
    ] {
        assert_eq!(string2ll(bad.as_bytes()), None, "{bad:?}");
    }
}

#[test]
fn memtoull_units_and_quirks_match_redis() {
    assert_eq!(memtoull(b"1k"), Some(1000));
    assert_eq!(memtoull(b"1KB"), Some(1024));
    assert_eq!(memtoull(b"2mb"), Some(2 << 20));
    assert_eq!(memtoull(b"1g"), Some(1_000_000_000));
    assert_eq!(memtoull(b"1gb"), Some(1 << 30));
    assert_eq!(memtoull(b"5b"), Some(5));
    assert_eq!(memtoull(b""), Some(0));
    assert_eq!(memtoull(b"99999999999999999999999"), Some(u64::MAX));
    assert_eq!(memtoull(b"-1"), None);
    assert_eq!(memtoull(b"+5"), None);
    assert_eq!(memtoull(b"1x"), None);
    assert_eq!(memtoull(b"1 kb"), None);
}

#[test]
fn strtoll_reports_end_and_overflow() {
    assert_eq!(strtoll(b" 12", 10), (12, true, false));
    assert_eq!(strtoll(b"12x", 10), (12, false, false));
    assert_eq!(strtoll(b"", 10), (0, true, false));
    assert_eq!(strtoll(b"x", 10), (0, false, false));
    assert_eq!(strtoll(b"0755", 8), (0o755, true, false));
    assert!(strtoll(b"99999999999999999999", 10).2);
}

#[test]
fn percentiles_print_like_trimmed_printf() {
    assert_eq!(format_percentile(50.0), "50");
    assert_eq!(format_percentile(99.9), "99.9");
    assert_eq!(format_percentile(99.99), "99.99");
}

#[test]
fn proc_title_template_is_validated() {
    let p = super::super::table::lookup(b"proc-title-template")
        .unwrap()
        .0;
    let ok = |s: &str| parse_value(p, &[s.into()], &Value::Str(None), None, None);
    assert!(ok("{title} {listen-addr}").is_ok());
    assert!(ok("x {{").is_ok());
    for bad in ["{nope}", "{title", "{title}", "   ", "{"] {
        assert_eq!(
            ok(bad).unwrap_err(),
            "template format is invalid or contains unknown variables",
            "{bad:?}"
        );
    }
}
