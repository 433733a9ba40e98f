//! redis-server's command line: arguments, config files, stdin, includes and the
//! directives resplock accepts, ignores or refuses.

use super::*;

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
    // Kept as given; CONFIG GET shows the canonical form.
    assert_eq!(c.get("notify-keyspace-events").as_deref(), Some("AKE"));
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
fn directives_without_effect_are_accepted_with_one_warning_each_and_replication_ones_silently() {
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
            "'cluster-node-timeout \"5000\"' ignored: a single resplock server has no cluster mode (resplock --cluster N has)",
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
fn process_directives_resplock_honours_say_nothing() {
    let s = cli(&[
        "--daemonize",
        "yes",
        "--logfile",
        "",
        "--port",
        "0",
        "--unixsocket",
        "/tmp/x.sock",
        "--pidfile",
        "/tmp/x.pid",
    ])
    .unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert!(s.config.daemonize);
}

#[test]
fn directives_not_implemented_yet_are_announced() {
    let s = cli(&["--tls-port", "6380"]).unwrap();
    assert_eq!(
        s.warnings,
        ["'tls-port \"6380\"' ignored: not implemented in resplock yet"]
    );
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
