//! CONFIG GET: exact names, patterns, ordering and hidden parameters.

use super::*;

#[test]
fn config_get_exact_name_is_echoed_as_spelled() {
    let c = Config::default();
    assert_eq!(get(&c, &["MAXMEMORY"]), [("MAXMEMORY".into(), "0".into())]);
    assert_eq!(
        get(&c, &["maxmemory", "MAXMEMORY", "MaxMemory"]),
        [("maxmemory".into(), "0".into())]
    );
    assert!(get(&c, &["no-such-thing"]).is_empty());
}

#[test]
fn config_get_takes_several_patterns_and_lists_each_parameter_once() {
    let c = Config::default();
    let names: Vec<String> = get(&c, &["maxmemory", "maxmem*"])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "maxmemory",
            "maxmemory-policy",
            "maxmemory-samples",
            "maxmemory-eviction-tenacity",
            "maxmemory-clients"
        ]
    );
    let names: Vec<String> = get(&c, &["MAXMEM*", "maxmemory"])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names.len(), 5);
    assert!(names.contains(&"maxmemory".to_string()));
}

#[test]
fn config_get_patterns_list_matches_in_table_order() {
    let c = Config::default();
    assert_eq!(
        get(&c, &["busy-*", "*lua*"]),
        [
            ("busy-reply-threshold".into(), "5000".into()),
            ("lua-time-limit".into(), "5000".into()),
        ]
    );
    // Each pattern's matches in turn.
    assert_eq!(
        get(&c, &["*lua*", "busy-*"]),
        [
            ("lua-time-limit".into(), "5000".into()),
            ("busy-reply-threshold".into(), "5000".into()),
        ]
    );
    assert_eq!(
        get(&c, &["*-ziplist-entries"]),
        [
            ("hash-max-ziplist-entries".into(), "512".into()),
            ("zset-max-ziplist-entries".into(), "128".into()),
        ]
    );
    assert_eq!(get(&c, &["*"]).len(), 192);
}

#[test]
fn hidden_parameters_answer_only_to_their_exact_name() {
    let c = Config::default();
    assert!(get(&c, &["loading*"]).is_empty());
    assert_eq!(
        get(&c, &["loading-process-events-interval-bytes"]),
        [(
            "loading-process-events-interval-bytes".into(),
            "2097152".into()
        )]
    );
}
