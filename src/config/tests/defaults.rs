//! The table's defaults against `CONFIG GET *` of redis-server 7.0.15, and every name and
//! value round-tripping through it.

use super::*;
use std::collections::BTreeMap;

/// Values recorded from the real server that depend on the machine or on how it was
/// started.
const MACHINE_DEPENDENT: &[&str] = &["dir", "pidfile", "port", "logfile", "daemonize"];

#[test]
fn defaults_match_config_get_star_of_redis_7_0_15() {
    let fixture = include_str!("../../../conformance/config_defaults.txt");
    let recorded: BTreeMap<&str, &str> = fixture
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_once('\t').expect("name<TAB>value"))
        .collect();
    let ours: BTreeMap<String, String> = get(&Config::default(), &["*"]).into_iter().collect();
    assert_eq!(
        ours.keys().map(String::as_str).collect::<Vec<_>>(),
        recorded.keys().copied().collect::<Vec<_>>(),
        "CONFIG GET * names"
    );
    for (name, value) in &recorded {
        if MACHINE_DEPENDENT.contains(name) {
            continue;
        }
        assert_eq!(ours[*name], *value, "default of {name}");
    }
}

#[test]
fn defaults_are_redis_s_and_test_servers_are_loopback_without_save_points() {
    let c = Config::default();
    assert_eq!(c.get("bind").unwrap(), "* -::*");
    assert_eq!(c.get("save").unwrap(), "3600 1 300 100 60 10000");
    let t = Config::ephemeral();
    assert_eq!(t.get("bind").unwrap(), "127.0.0.1");
    assert_eq!(t.get("save").unwrap(), "");
    assert_eq!(c.get("port").unwrap(), "6379");
    assert_eq!(c.get("daemonize").unwrap(), "no");
    assert_eq!(
        c.get("dir").unwrap(),
        std::env::current_dir().unwrap().display().to_string()
    );
    assert_eq!(Config::ephemeral().port, 0);
}

#[test]
fn typed_fields_start_at_the_table_defaults() {
    let c = Config::default();
    for p in PARAMS.iter().filter(|p| p.typed.is_some()) {
        if p.name == "dir" {
            continue;
        }
        let want = parse::format_value(p, &parse::default_value(p));
        assert_eq!(c.formatted(p), want, "{}", p.name);
    }
}

#[test]
fn every_parameter_accepts_its_own_value_back() {
    let mut c = Config::default();
    for p in PARAMS {
        let v = c.formatted(p);
        let args: Vec<String> = if p.name == "replicaof" && v.is_empty() {
            vec!["no".into(), "one".into()]
        } else if p.multi_arg() {
            split_args(v.as_bytes())
                .unwrap()
                .into_iter()
                .map(|a| String::from_utf8(a).unwrap())
                .collect()
        } else {
            vec![v.clone()]
        };
        c.set_param(p, &args, None)
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(c.formatted(p), v, "{}", p.name);
    }
    assert_eq!(c, Config::default().with_dir(c.dir.clone()));
}

#[test]
fn table_holds_every_name_and_alias_once() {
    let names: Vec<&str> = table::entries().map(|(n, _)| n).collect();
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(names.len(), unique.len());
    // redis-server 7.0.15's 197, resplock's five hidden lock-history-* rows and its hidden
    // stop-writes-after-restart.
    assert_eq!(names.len(), 197 + 6);
    for alias in [
        "slaveof",
        "lua-time-limit",
        "hash-max-ziplist-entries",
        "hash-max-ziplist-value",
        "zset-max-ziplist-entries",
        "zset-max-ziplist-value",
        "list-max-ziplist-size",
        "slave-priority",
    ] {
        assert!(lookup(alias.as_bytes()).is_some(), "{alias}");
    }
    let hidden: Vec<&str> = PARAMS
        .iter()
        .filter(|p| p.has(flags::HIDDEN))
        .map(|p| p.name)
        .collect();
    assert_eq!(
        hidden,
        [
            "use-exit-on-panic",
            "rdb-key-save-delay",
            "key-load-delay",
            "watchdog-period",
            "loading-process-events-interval-bytes",
            "lock-history",
            "lock-history-keys",
            "lock-history-max-events",
            "lock-history-max-per-key",
            "lock-history-file",
            "stop-writes-after-restart",
        ]
    );
}
