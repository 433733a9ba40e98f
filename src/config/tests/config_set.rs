//! CONFIG SET: Redis's error texts, protected and immutable parameters, and applying
//! several pairs all or nothing.

use super::*;

#[test]
fn config_set_unknown_name_uses_redis_text() {
    let mut c = Config::default();
    assert_eq!(
        set(&mut c, &[("foo", "1")]).unwrap_err(),
        "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
    );
}

#[test]
fn config_set_bad_memory_value_names_the_argument() {
    let mut c = Config::default();
    assert_eq!(
        set(&mut c, &[("maxmemory", "1x")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
    );
    assert_eq!(
        set(&mut c, &[("MAXMEMORY", "+5")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"
    );
    assert_eq!(
        set(&mut c, &[("LUA-TIME-LIMIT", "x")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'lua-time-limit') - argument couldn't be parsed into an integer"
    );
}

#[test]
fn config_set_refuses_immutable_and_protected_configs() {
    let mut c = Config::default();
    for (name, why) in [
        ("databases", "can't set immutable config"),
        ("Databases", "can't set immutable config"),
        ("unixsocketperm", "can't set immutable config"),
        ("slaveof", "can't set immutable config"),
        ("dir", "can't set protected config"),
        ("dbfilename", "can't set protected config"),
    ] {
        assert_eq!(
            set(&mut c, &[(name, "1")]).unwrap_err(),
            format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}")
        );
    }
}

#[test]
fn protected_configs_follow_enable_protected_configs() {
    let mut c = cli(&["--enable-protected-configs", "local"])
        .unwrap()
        .config;
    let pairs: &[(&[u8], &[u8])] = &[(b"dbfilename", b"x.rdb")];
    assert!(c.set_many_from(pairs, false).is_err());
    assert_eq!(c.set_many_from(pairs, true).unwrap(), ["dbfilename"]);
    let mut c = cli(&["--enable-protected-configs", "yes"]).unwrap().config;
    assert_eq!(c.set_many(pairs).unwrap(), ["dbfilename"]);
}

#[test]
fn config_set_duplicate_is_refused_but_an_alias_is_another_parameter() {
    let mut c = Config::default();
    assert_eq!(
        set(&mut c, &[("maxmemory", "1"), ("MAXMEMORY", "2")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter"
    );
    assert_eq!(
        set(
            &mut c,
            &[("lua-time-limit", "5"), ("busy-reply-threshold", "6")]
        )
        .unwrap(),
        ["busy-reply-threshold"]
    );
    assert_eq!(c.busy_reply_threshold_ms, 6);
}

#[test]
fn config_set_checks_every_name_before_any_value() {
    let mut c = Config::default();
    // The immutable name wins over an earlier bad value and a later unknown name.
    assert_eq!(
        set(&mut c, &[("maxmemory", "x"), ("databases", "3")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"
    );
    assert_eq!(
        set(&mut c, &[("databases", "3"), ("foo", "1")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"
    );
    assert_eq!(
        set(
            &mut c,
            &[("maxmemory", "1"), ("foo", "1"), ("databases", "3")]
        )
        .unwrap_err(),
        "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
    );
}

#[test]
fn config_set_is_all_or_nothing() {
    let mut c = Config::default();
    let before = c.clone();
    assert_eq!(
        set(&mut c, &[("maxmemory", "1mb"), ("timeout", "-1")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive"
    );
    assert_eq!(c, before);
    assert_eq!(
        set(&mut c, &[("maxmemory", "1mb"), ("timeout", "5")]).unwrap(),
        ["maxmemory", "timeout"]
    );
    assert_eq!((c.maxmemory, c.timeout), (1 << 20, 5));
}

#[test]
fn config_set_reports_only_changed_parameters_by_primary_name() {
    let mut c = Config::default();
    assert_eq!(
        set(
            &mut c,
            &[("hash-max-ziplist-entries", "100"), ("port", "6379")]
        )
        .unwrap(),
        ["hash-max-listpack-entries"]
    );
    assert_eq!(c.hash_max_listpack_entries, 100);
    // A TLS file may have new content under the same name: always a change.
    assert_eq!(
        set(&mut c, &[("tls-cert-file", "")]).unwrap(),
        ["tls-cert-file"]
    );
}

#[test]
fn notify_keyspace_events_keeps_new_next_to_all() {
    let mut c = Config::default();
    c.set_many(&[(b"notify-keyspace-events", b"KEAn")]).unwrap();
    let flags = crate::config::notify::parse_flags(&c.notify_keyspace_events).unwrap();
    assert_ne!(
        flags & crate::config::notify::NEW,
        0,
        "the server still raises `new`"
    );
    // CONFIG GET prints Redis's canonical form, which drops `n` next to `A`.
    assert_eq!(c.get("notify-keyspace-events").as_deref(), Some("AKE"));
}

#[test]
fn while_loading_configs_denied_during_loading_fail_with_loading_first() {
    let mut c = cli(&["--enable-protected-configs", "yes"]).unwrap().config;
    // loglevel may change while loading; dir may not, even when its value is invalid.
    assert_eq!(
        c.set_many_while(&[(b"loglevel", b"debug")], true, true)
            .unwrap(),
        ["loglevel"]
    );
    for pairs in [
        &[(&b"dir"[..], &b"asdf"[..])][..],
        &[(b"loglevel", b"warning"), (b"appendonly", b"yes")],
    ] {
        assert_eq!(
            c.set_many_while(pairs, true, true).unwrap_err(),
            "LOADING Redis is loading the dataset in memory"
        );
    }
    assert_eq!(c.get("loglevel").unwrap(), "debug");
    // An earlier error is reported first, as Redis stops at it.
    assert!(c
        .set_many_while(&[(b"nosuch", b"1"), (b"dir", b"x")], true, true)
        .unwrap_err()
        .starts_with("ERR Unknown option"));
}
