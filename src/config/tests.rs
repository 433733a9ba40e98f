//! Behaviour of the configuration table, CONFIG GET/SET/REWRITE and the command line,
//! checked against what redis-server 7.0.15 does.

use super::*;

fn set(c: &mut Config, pairs: &[(&str, &str)]) -> Result<Vec<&'static str>, String> {
    let pairs: Vec<(&[u8], &[u8])> = pairs
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect();
    c.set_many(&pairs)
}

fn get(c: &Config, patterns: &[&str]) -> Vec<(String, String)> {
    let p: Vec<&[u8]> = patterns.iter().map(|s| s.as_bytes()).collect();
    c.get_matching(&p)
}

/// The command names these tests rename (the real lookup is the command table's).
fn known_command(name: &str) -> bool {
    ["get", "set", "del", "ping", "config", "flushall", "keys"].contains(&name)
}

fn cli(args: &[&str]) -> Result<Startup, Fatal> {
    cli_stdin(args, "")
}

fn cli_stdin(args: &[&str], stdin: &str) -> Result<Startup, Fatal> {
    let mut argv = vec!["resplock".to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    parse_command_line(&argv, stdin.as_bytes(), known_command)
}

fn fatal(args: &[&str]) -> String {
    cli(args).expect_err("should be refused").render()
}

/// A scratch directory for file tests, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!(
            "resplock-config-{tag}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Values recorded from the real server that depend on the machine or on how it was
/// started, or where resplock's defaults differ on purpose (loopback bind, no save points).
const MACHINE_DEPENDENT: &[&str] = &[
    "dir",
    "pidfile",
    "port",
    "logfile",
    "daemonize",
    "save",
    "appendonly",
    "bind",
];

#[test]
fn defaults_match_config_get_star_of_redis_7_0_15() {
    let fixture = include_str!("../../conformance/config_defaults.txt");
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
fn resplock_defaults_that_differ_from_redis_are_loopback_and_no_save() {
    let c = Config::default();
    assert_eq!(c.get("bind").unwrap(), "127.0.0.1");
    assert_eq!(c.get("save").unwrap(), "");
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

impl Config {
    fn with_dir(mut self, d: Option<PathBuf>) -> Config {
        self.dir = d;
        self
    }
}

#[test]
fn table_holds_every_name_and_alias_once() {
    let names: Vec<&str> = table::entries().map(|(n, _)| n).collect();
    let unique: HashSet<&str> = names.iter().copied().collect();
    assert_eq!(names.len(), unique.len());
    assert_eq!(names.len(), 197);
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
            "loading-process-events-interval-bytes"
        ]
    );
}

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

// ---- command line ----

#[test]
fn no_arguments_gives_the_defaults() {
    let s = cli(&[]).unwrap();
    assert_eq!(s.action, Action::Serve);
    assert_eq!(s.config, Config::default());
    assert!(s.warnings.is_empty());
}

#[test]
fn version_help_and_test_memory_are_first_argument_actions() {
    assert_eq!(cli(&["-v"]).unwrap().action, Action::Version);
    assert_eq!(cli(&["--version"]).unwrap().action, Action::Version);
    assert_eq!(cli(&["-h"]).unwrap().action, Action::Help);
    assert_eq!(cli(&["--help"]).unwrap().action, Action::Help);
    assert_eq!(
        cli(&["--test-memory", "10"]).unwrap().action,
        Action::TestMemory
    );
    assert_eq!(
        cli(&["--check-system"]).unwrap().action,
        Action::CheckSystem
    );
    // Anywhere else it is a directive.
    assert!(fatal(&["--port", "1", "--version"]).contains(">>> 'version'\n"));
    assert!(version_line().starts_with("Redis server v=7.0.15 sha=00000000:0 malloc=libc bits="));
    assert!(version_line().ends_with(&format!("build=resplock-{}", env!("CARGO_PKG_VERSION"))));
}

#[test]
fn options_set_typed_fields() {
    let c = cli(&[
        "--port",
        "7000",
        "--bind",
        "127.0.0.1",
        "::1",
        "--requirepass",
        "pw",
        "--databases",
        "4",
        "--maxclients",
        "7",
        "--lua-time-limit",
        "250",
        "--notify-keyspace-events",
        "KEA",
        "--maxmemory",
        "1gb",
        "--tcp-keepalive",
        "60",
        "--tls-port",
        "7001",
        "--tls-cert-file",
        "/c.pem",
        "--aclfile",
        "/acl",
        "--unixsocket",
        "/tmp/x.sock",
        "--loglevel",
        "debug",
        "--enable-debug-command",
        "local",
    ])
    .unwrap()
    .config;
    assert_eq!(c.port, 7000);
    assert_eq!(c.bind, "127.0.0.1 ::1");
    assert_eq!(c.bind_addresses(), ["127.0.0.1", "::1"]);
    assert_eq!(c.requirepass.as_deref(), Some("pw"));
    assert_eq!((c.databases, c.maxclients), (4, 7));
    assert_eq!(c.busy_reply_threshold_ms, 250);
    assert_eq!(c.notify_keyspace_events, "AKE");
    assert_eq!(c.maxmemory, 1 << 30);
    assert_eq!((c.tcp_keepalive, c.tls_port), (60, 7001));
    assert_eq!(c.tls_cert_file.as_deref(), Some("/c.pem"));
    assert_eq!(c.aclfile.as_deref(), Some("/acl"));
    assert_eq!(c.unixsocket.as_deref(), Some("/tmp/x.sock"));
    assert_eq!(c.loglevel, LogLevel::Debug);
    assert_eq!(c.enable_debug_command, ProtectedAction::Local);
    assert!(c.enable_debug_command.allows(true) && !c.enable_debug_command.allows(false));
}

#[test]
fn bare_save_means_empty_string() {
    let at_end = cli(&["--port", "1", "--save"]).unwrap().config;
    assert_eq!(at_end.save, "");
    let before_option = cli(&["--save", "--port", "2"]).unwrap().config;
    assert_eq!((before_option.save.as_str(), before_option.port), ("", 2));
    let quoted = cli(&["--save", ""]).unwrap();
    assert_eq!(quoted.config.save, "");
    assert!(quoted.warnings.is_empty());
}

#[test]
fn save_lines_add_up_and_a_lone_empty_one_clears() {
    let c = cli(&["--save", "900", "1", "--save", "300", "10"])
        .unwrap()
        .config;
    assert_eq!(c.save, "900 1 300 10");
    let c = cli(&["--save", "900 1", "--save", ""]).unwrap().config;
    assert_eq!(c.save, "");
    let c = cli(&["--save", "", "--save", "60 5"]).unwrap().config;
    assert_eq!(c.save, "60 5");
}

#[test]
fn unknown_directive_is_fatal_with_redis_text() {
    assert_eq!(
        fatal(&["--port", "7301", "--foo", "bar"]),
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 3\n>>> 'foo \"bar\"'\nBad directive or wrong number of arguments\n"
    );
}

#[test]
fn bad_values_are_fatal_like_redis() {
    let block = |line: usize, text: &str, why: &str| {
        format!("\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line {line}\n>>> '{text}'\n{why}\n")
    };
    assert_eq!(
        fatal(&["--notify-keyspace-events", "Z"]),
        block(
            2,
            "notify-keyspace-events \"Z\"",
            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
        )
    );
    assert_eq!(
        fatal(&["--databases", "0"]),
        block(
            2,
            "databases \"0\"",
            "argument must be between 1 and 2147483647 inclusive"
        )
    );
    assert_eq!(
        fatal(&["--maxclients", "0"]),
        block(
            2,
            "maxclients \"0\"",
            "argument must be between 1 and 4294967295 inclusive"
        )
    );
    assert_eq!(
        fatal(&["--port", "70000"]),
        block(
            2,
            "port \"70000\"",
            "argument must be between 0 and 65535 inclusive"
        )
    );
    assert_eq!(
        fatal(&["--port", "1", "2"]),
        block(2, "port \"1\" \"2\"", "wrong number of arguments")
    );
    assert_eq!(
        fatal(&["-x"]),
        block(2, "\"-x\"", "Bad directive or wrong number of arguments")
    );
    assert_eq!(cli(&["--port", "70000"]).unwrap_err().exit_code(), 1);
}

#[test]
fn a_name_takes_the_next_argument_even_if_it_starts_with_dashes() {
    let c = cli(&["--requirepass", "--secret", "--port", "5"])
        .unwrap()
        .config;
    assert_eq!(c.requirepass.as_deref(), Some("--secret"));
    assert_eq!(c.port, 5);
    // `-` in the middle is a value, not stdin.
    let c = cli(&["--requirepass", "-", "--port", "5"]).unwrap().config;
    assert_eq!(c.requirepass.as_deref(), Some("-"));
}

#[test]
fn later_options_override_earlier_ones_and_names_ignore_case() {
    let c = cli(&["--port", "1", "--PORT", "2", "--Maxmemory", "5mb"])
        .unwrap()
        .config;
    assert_eq!(c.port, 2);
    assert_eq!(c.maxmemory, 5 << 20);
}

#[test]
fn option_name_and_value_may_share_one_argument() {
    let c = cli(&["--port 7391", "--timeout", "3"]).unwrap().config;
    assert_eq!((c.port, c.timeout), (7391, 3));
}

#[test]
fn config_file_then_stdin_then_options() {
    let d = TempDir::new("order");
    let path = d.file(
        "a.conf",
        "# comment\n  port 1000\nmaxmemory \"2mb\"\ntimeout 1\r\n\n",
    );
    let s = cli_stdin(&[&path, "--timeout", "3", "-"], "port 2000\ntimeout 2\n").unwrap();
    assert_eq!(s.config.port, 2000);
    assert_eq!(s.config.timeout, 3);
    assert_eq!(s.config.maxmemory, 2 << 20);
    assert_eq!(
        s.config.config_file.as_deref(),
        Some(std::path::Path::new(&path))
    );
    assert_eq!(s.warnings, ["Reading config from stdin"]);
}

#[test]
fn stdin_alone_is_a_config_without_file() {
    let s = cli_stdin(&["-"], "port 7302\nhz 20\n").unwrap();
    assert_eq!((s.config.port, s.config.hz), (7302, 20));
    assert_eq!(s.config.config_file, None);
    let f = cli_stdin(&["-"], "port 7302\nfoo bar\n").unwrap_err();
    assert_eq!(
        f.render(),
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 2\n>>> 'foo bar'\nBad directive or wrong number of arguments\n"
    );
}

#[test]
fn missing_config_file_is_logged_like_redis() {
    let f = cli(&["/nonexistent/resplock.conf"]).unwrap_err();
    assert!(f.to_stdout());
    let text = f.render();
    assert!(
        text.ends_with(" # Fatal error, can't open config file '/nonexistent/resplock.conf': No such file or directory\n"),
        "{text}"
    );
    assert!(text.starts_with(&format!("{}:C ", std::process::id())));
}

#[test]
fn include_reads_files_and_patterns() {
    let d = TempDir::new("include");
    d.file("b.conf", "timeout 7\n");
    std::fs::create_dir(d.0.join("conf.d")).unwrap();
    d.file("conf.d/1.conf", "maxmemory 1mb\n");
    d.file("conf.d/2.conf", "maxmemory 2mb\n");
    let main = d.file(
        "a.conf",
        &format!(
            "include {}/b.conf\ninclude {}/conf.d/*.conf\ninclude {}/none/*.conf\nport 9\n",
            d.0.display(),
            d.0.display(),
            d.0.display()
        ),
    );
    let c = cli(&[&main]).unwrap().config;
    assert_eq!((c.timeout, c.maxmemory, c.port), (7, 2 << 20, 9));
    // Errors in an included file report its own line numbers.
    let bad = d.file("bad.conf", "\n\nbogus 1\n");
    let main = d.file("c.conf", &format!("port 1\ninclude {bad}\n"));
    assert!(cli(&[&main])
        .unwrap_err()
        .render()
        .contains("at line 3\n>>> 'bogus 1'\n"));
}

#[test]
fn unbalanced_quotes_are_fatal() {
    let d = TempDir::new("quotes");
    let p = d.file("q.conf", "port 7302\n\n# c\nport \"unbalanced\n");
    assert_eq!(
        cli(&[&p]).unwrap_err().render(),
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line 4\n>>> 'port \"unbalanced'\nUnbalanced quotes in configuration line\n"
    );
}

#[test]
fn deprecated_directives_are_skipped() {
    let s = cli(&[
        "--list-max-ziplist-entries",
        "1",
        "--lua-replicate-commands",
        "yes",
    ])
    .unwrap();
    assert_eq!(s.config, Config::default());
}

#[test]
fn directives_without_effect_are_accepted_with_one_warning_each() {
    let s = cli(&[
        "--save",
        "900",
        "1",
        "--appendonly",
        "yes",
        "--replicaof",
        "10.0.0.1",
        "6380",
        "--masterauth",
        "hunter2",
        "--cluster-node-timeout",
        "5000",
        "--loadmodule",
        "/x.so",
    ])
    .unwrap();
    assert_eq!(
        s.warnings,
        [
            "'save \"900\" \"1\"' ignored: resplock keeps nothing on disk",
            "'appendonly \"yes\"' ignored: resplock keeps nothing on disk",
            "'replicaof \"10.0.0.1\" \"6380\"' ignored: resplock does not replicate",
            "'masterauth' ignored: resplock does not replicate",
            "'cluster-node-timeout \"5000\"' ignored: resplock has no cluster mode",
            "'loadmodule /x.so' ignored: resplock does not load modules",
        ]
    );
    assert_eq!(s.config.get("replicaof").unwrap(), "10.0.0.1 6380");
    assert_eq!(s.config.get("slaveof").unwrap(), "10.0.0.1 6380");
    // Asking for what resplock does anyway is silent.
    let quiet = cli(&[
        "--save",
        "",
        "--appendonly",
        "no",
        "--replicaof",
        "no",
        "one",
    ])
    .unwrap();
    assert!(quiet.warnings.is_empty(), "{:?}", quiet.warnings);
}

#[test]
fn process_directives_not_implemented_yet_are_announced() {
    let s = cli(&["--daemonize", "yes", "--logfile", "", "--port", "0"]).unwrap();
    assert_eq!(
        s.warnings,
        ["'daemonize \"yes\"' ignored: not implemented in resplock yet"]
    );
    assert!(s.config.daemonize);
    assert!(cli(&["--daemonize", "no"]).unwrap().warnings.is_empty());
}

#[test]
fn module_configs_need_a_module() {
    assert_eq!(
        cli(&["--foo.bar", "1"]).unwrap_err().render().split_once(" # ").unwrap().1,
        "Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting\n"
    );
    assert!(fatal(&["--foo.bar"]).ends_with("Module config specified without value\n"));
    let s = cli(&["--loadmodule", "/m.so", "--m.opt", "1"]).unwrap();
    assert_eq!(s.warnings.len(), 2);
}

#[test]
fn rename_command_checks_names_like_redis() {
    assert!(fatal(&["--rename-command", "nosuch", "x"])
        .ends_with("No such command in rename-command\n"));
    assert!(fatal(&["--rename-command", "get", "set"])
        .ends_with("Target command name already exists\n"));
    let s = cli(&[
        "--rename-command",
        "GET",
        "fetch",
        "--rename-command",
        "fetch",
        "",
    ])
    .unwrap();
    assert_eq!(
        s.config.rename_commands,
        [
            ("get".to_string(), "fetch".to_string()),
            ("fetch".into(), String::new())
        ]
    );
}

#[test]
fn sentinel_mode_is_refused() {
    let f = cli(&["--sentinel"]).unwrap_err();
    assert_eq!(f.exit_code(), 1);
    assert!(f.render().starts_with("resplock: Sentinel mode"));
}

#[test]
fn logfile_must_be_writable_at_start() {
    assert_eq!(
        fatal(&["--logfile", "/nonexistent/x.log"]),
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nCan't open the log file: No such file or directory\n"
    );
}

#[test]
fn replicaof_is_refused_in_cluster_mode() {
    assert!(
        fatal(&["--cluster-enabled", "yes", "--replicaof", "1.2.3.4", "5"])
            .ends_with("***\nreplicaof directive not allowed in cluster mode\n")
    );
}

#[test]
fn dir_must_exist_and_prints_absolute() {
    let d = TempDir::new("dir");
    let c = cli(&["--dir", &d.0.display().to_string()]).unwrap().config;
    let canonical = std::fs::canonicalize(&d.0).unwrap();
    assert_eq!(c.dir.as_deref(), Some(canonical.as_path()));
    assert_eq!(c.get("dir").unwrap(), canonical.display().to_string());
    assert!(fatal(&["--dir", "/nonexistent"]).ends_with("No such file or directory\n"));
}

// ---- CONFIG REWRITE ----

#[test]
fn rewrite_without_config_file_is_an_error() {
    assert_eq!(
        Config::default().rewrite().unwrap_err(),
        "ERR The server is running without a config file"
    );
}

#[test]
fn rewrite_keeps_lines_and_comments_and_appends_changes() {
    let old = "# my comment\nport 7302\nsave 900 1\nsave 300 10\nmaxmemory 5mb\n\n\n\nhash-max-ziplist-entries 100\nloglevel notice\ninclude /tmp/empty.conf\nlist-max-ziplist-entries 5\n";
    let mut c = cli_stdin(
        &["-", "--hz", "20"],
        &old.replace("include /tmp/empty.conf\n", ""),
    )
    .unwrap()
    .config;
    set(
        &mut c,
        &[
            ("maxmemory", "1mb"),
            ("notify-keyspace-events", "Ex"),
            ("client-output-buffer-limit", "normal 1mb 0 0"),
            ("save", ""),
            ("timeout", "5"),
        ],
    )
    .unwrap();
    let cwd = std::env::current_dir().unwrap().display().to_string();
    assert_eq!(
        c.rewrite_text(old),
        format!(
            "# my comment\nport 7302\nsave \"\"\n\nmaxmemory 1mb\n\nhash-max-listpack-entries 100\nloglevel notice\ninclude /tmp/empty.conf\n# ??? list-max-ziplist-entries 5\n\n\
             # Generated by CONFIG REWRITE\ntimeout 5\nhz 20\ndir \"{cwd}\"\nclient-output-buffer-limit normal 1mb 0 0\nnotify-keyspace-events \"xE\"\nbind 127.0.0.1\nlatency-tracking-info-percentiles 50 99 99.9\n"
        )
    );
}

#[test]
fn rewrite_writes_the_file_that_loads_back_the_same() {
    let d = TempDir::new("rewrite");
    let path = d.file("r.conf", "# keep me\nport 7000\nslaveof 10.0.0.1 1\n");
    let mut c = cli(&[&path]).unwrap().config;
    set(
        &mut c,
        &[
            ("requirepass", "a \"b\""),
            ("bind", "127.0.0.1 ::1"),
            ("maxmemory-clients", "5%"),
            ("oom-score-adj-values", "1 2 3"),
        ],
    )
    .unwrap();
    c.rewrite().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# keep me\nport 7000\nreplicaof 10.0.0.1 1\n"),
        "{text}"
    );
    assert!(text.contains("requirepass \"a \\\"b\\\"\"\n"), "{text}");
    let again = cli(&[&path]).unwrap().config;
    // The rewrite pins `dir` to the working directory, as Redis does.
    assert_eq!(again.clone().with_dir(None), c);
    // As Redis, a second rewrite keeps the file's final empty line as a blank line, and
    // from then on nothing changes.
    again.rewrite().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{text}\n"));
    again.rewrite().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{text}\n"));
}

#[test]
fn rewrite_formats_memory_with_units() {
    assert_eq!(rewrite_memory(0), "0");
    assert_eq!(rewrite_memory(3 << 30), "3gb");
    assert_eq!(rewrite_memory(5 << 20), "5mb");
    assert_eq!(rewrite_memory(2048), "2kb");
    assert_eq!(rewrite_memory(1000), "1000");
}

fn rewrite_memory(v: i64) -> String {
    let c = Config {
        proto_max_bulk_len: v as u64,
        ..Config::default()
    };
    let text = c.rewrite_text("proto-max-bulk-len 1\n");
    text.lines().next().unwrap()["proto-max-bulk-len ".len()..].to_string()
}
