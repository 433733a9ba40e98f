//! How each kind of value is parsed and printed: memory units, percentages, integers,
//! enums, flags, multi-argument and special parameters.

use super::*;

#[test]
fn memory_values_take_units_and_redis_quirks() {
    let mut c = Config::default();
    for (v, want) in [
        ("1k", "1000"),
        ("1kb", "1024"),
        ("1MB", "1048576"),
        ("2g", "2000000000"),
        ("1gb", "1073741824"),
        ("", "0"),
        ("99999999999999999999999", "18446744073709551615"),
    ] {
        set(&mut c, &[("maxmemory", v)]).unwrap();
        assert_eq!(c.get("maxmemory").unwrap(), want, "{v:?}");
    }
    assert_eq!(
        set(&mut c, &[("proto-max-bulk-len", "1k")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive"
    );
}

#[test]
fn percent_values_print_with_percent_sign() {
    let mut c = Config::default();
    set(&mut c, &[("maxmemory-clients", "10%")]).unwrap();
    assert_eq!(c.get("maxmemory-clients").unwrap(), "10%");
    set(&mut c, &[("maxmemory-clients", "0%")]).unwrap();
    assert_eq!(c.get("maxmemory-clients").unwrap(), "0");
    assert_eq!(
        set(&mut c, &[("maxmemory-clients", "200%")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100"
    );
    assert_eq!(
        set(&mut c, &[("maxmemory-clients", "-5")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - argument must be a memory or percent value"
    );
}

#[test]
fn integers_are_parsed_strictly() {
    let mut c = Config::default();
    for bad in ["007", "-0", "+1", " 1", "1.5"] {
        assert!(
            set(&mut c, &[("list-max-listpack-size", bad)]).is_err(),
            "{bad}"
        );
    }
    set(&mut c, &[("list-max-listpack-size", "-1")]).unwrap();
    assert_eq!(c.list_max_listpack_size, -1);
}

#[test]
fn unixsocketperm_is_octal() {
    let c = cli(&["--unixsocketperm", "0755"]).unwrap().config;
    assert_eq!(c.unixsocketperm, 0o755);
    assert_eq!(c.get("unixsocketperm").unwrap(), "755");
    assert!(fatal(&["--unixsocketperm", "999"])
        .ends_with("argument couldn't be parsed as an octal number\n"));
    assert!(fatal(&["--unixsocketperm", "1000"])
        .ends_with("argument must be between 0 and 777 inclusive\n"));
}

#[test]
fn hz_is_capped_like_redis() {
    let mut c = Config::default();
    set(&mut c, &[("hz", "1000")]).unwrap();
    assert_eq!(c.hz, 500);
    set(&mut c, &[("hz", "0")]).unwrap();
    assert_eq!(c.get("hz").unwrap(), "1");
}

#[test]
fn multi_arg_values_split_on_single_spaces() {
    let mut c = Config::default();
    set(&mut c, &[("save", "900 1 300 10")]).unwrap();
    assert_eq!(c.save, "900 1 300 10");
    assert_eq!(
        set(&mut c, &[("save", "900  1")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"
    );
    // strtoll of "" is 0 changes, as Redis.
    set(&mut c, &[("save", "900 ")]).unwrap();
    assert_eq!(c.save, "900 0");
    set(&mut c, &[("save", "")]).unwrap();
    assert_eq!(c.save, "");
}

#[test]
fn client_output_buffer_limit_keeps_classes_not_named() {
    let mut c = Config::default();
    set(
        &mut c,
        &[("client-output-buffer-limit", "normal 1mb 2mb 3")],
    )
    .unwrap();
    assert_eq!(
        c.client_output_buffer_limit,
        "normal 1048576 2097152 3 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    );
    assert_eq!(c.output_buffer_limit("normal"), (1048576, 2097152, 3));
    set(
        &mut c,
        &[("client-output-buffer-limit", "replica 1 2 3 PUBSUB 4 5 6")],
    )
    .unwrap();
    assert_eq!(c.output_buffer_limit("slave"), (1, 2, 3));
    assert_eq!(c.output_buffer_limit("pubsub"), (4, 5, 6));
    assert_eq!(
        set(&mut c, &[("client-output-buffer-limit", "master 1 2 3")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration."
    );
}

#[test]
fn notify_keyspace_events_print_canonically() {
    let mut c = Config::default();
    set(&mut c, &[("notify-keyspace-events", "KEA")]).unwrap();
    assert_eq!(c.get("notify-keyspace-events").unwrap(), "AKE");
    // A field set directly (as tests do) prints canonically too.
    c.notify_keyspace_events = "Egm".into();
    assert_eq!(c.get("notify-keyspace-events").unwrap(), "gEm");
    assert_eq!(
        set(&mut c, &[("notify-keyspace-events", "Z")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
    );
}

#[test]
fn enums_print_their_first_name_and_flag_lists() {
    let mut c = Config::default();
    set(&mut c, &[("oom-score-adj", "relative")]).unwrap();
    assert_eq!(c.get("oom-score-adj").unwrap(), "yes");
    set(&mut c, &[("shutdown-on-sigint", "now nosave")]).unwrap();
    assert_eq!(c.get("shutdown-on-sigint").unwrap(), "nosave now");
    set(&mut c, &[("loglevel", "WARNING")]).unwrap();
    assert_eq!(c.loglevel, LogLevel::Warning);
    assert_eq!(
        set(&mut c, &[("shutdown-on-sigint", "save nosave")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigint') - shutdown options SAVE and NOSAVE can't be used simultaneously"
    );
    assert_eq!(
        set(&mut c, &[("maxmemory-policy", "lru")]).unwrap_err(),
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
    );
    set(&mut c, &[("maxmemory-policy", "ALLKEYS-LRU")]).unwrap();
    assert_eq!(c.maxmemory_policy, "allkeys-lru");
}

#[test]
fn latency_percentiles_print_trimmed() {
    let mut c = Config::default();
    set(
        &mut c,
        &[("latency-tracking-info-percentiles", "50 99.90 100")],
    )
    .unwrap();
    assert_eq!(
        c.get("latency-tracking-info-percentiles").unwrap(),
        "50 99.9 100"
    );
}

#[test]
fn requirepass_empty_means_no_password() {
    let mut c = Config::default();
    set(&mut c, &[("requirepass", "s3cret")]).unwrap();
    assert_eq!(c.requirepass.as_deref(), Some("s3cret"));
    set(&mut c, &[("requirepass", "")]).unwrap();
    assert_eq!(c.requirepass, None);
    assert!(is_sensitive(b"REQUIREPASS"));
    assert!(is_sensitive(b"masterauth"));
    assert!(!is_sensitive(b"port"));
}

#[test]
fn activedefrag_is_refused_as_by_a_redis_without_jemalloc() {
    let mut c = Config::default();
    assert!(set(&mut c, &[("activedefrag", "yes")])
        .unwrap_err()
        .ends_with("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"));
    set(&mut c, &[("activedefrag", "no")]).unwrap();
}
