//! The rows of the parameter table ([`PARAMS`]), built with the constructors and validators
//! of its parent module: the data apart from the types that describe it.

use super::*;

/// Every parameter, in the order of Redis's `static_configs`, one row per line as there.
#[rustfmt::skip]
pub static PARAMS: &[Param] = &[
    boolean("rdbchecksum", None, IMMUTABLE, true).scope(Scope::Persistence),
    boolean("daemonize", None, IMMUTABLE, false).scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.daemonize), |c, v| c.daemonize = v.boolean()),
    boolean("io-threads-do-reads", None, DEBUG | IMMUTABLE, false),
    boolean("always-show-logo", None, IMMUTABLE, false),
    boolean("protected-mode", None, 0, true)
        .scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.protected_mode), |c, v| c.protected_mode = v.boolean()),
    boolean("rdbcompression", None, 0, true).scope(Scope::Persistence),
    boolean("rdb-del-sync-files", None, 0, false).scope(Scope::Persistence),
    boolean("activerehashing", None, 0, true),
    boolean("stop-writes-on-bgsave-error", None, 0, true).scope(Scope::Persistence),
    boolean("set-proc-title", None, IMMUTABLE, true),
    boolean("dynamic-hz", None, 0, true),
    boolean("lazyfree-lazy-eviction", None, DEBUG, false),
    boolean("lazyfree-lazy-expire", None, DEBUG, false),
    boolean("lazyfree-lazy-server-del", None, DEBUG, false),
    boolean("lazyfree-lazy-user-del", None, DEBUG, false),
    boolean("lazyfree-lazy-user-flush", None, DEBUG, false),
    boolean("repl-disable-tcp-nodelay", None, 0, false).scope(Scope::Replication),
    boolean("repl-diskless-sync", None, DEBUG, true).scope(Scope::Replication),
    boolean("aof-rewrite-incremental-fsync", None, 0, true).scope(Scope::Persistence),
    boolean("no-appendfsync-on-rewrite", None, 0, false).scope(Scope::Persistence),
    boolean("cluster-require-full-coverage", None, 0, true).scope(Scope::Cluster),
    boolean("rdb-save-incremental-fsync", None, 0, true).scope(Scope::Persistence),
    boolean("aof-load-truncated", None, 0, true).scope(Scope::Persistence),
    boolean("aof-use-rdb-preamble", None, 0, true).scope(Scope::Persistence),
    boolean("aof-timestamp-enabled", None, 0, false).scope(Scope::Persistence),
    boolean("cluster-replica-no-failover", Some("cluster-slave-no-failover"), 0, false).scope(Scope::Cluster),
    boolean("replica-lazy-flush", Some("slave-lazy-flush"), 0, false).scope(Scope::Replication),
    boolean("replica-serve-stale-data", Some("slave-serve-stale-data"), 0, true).scope(Scope::Replication),
    boolean("replica-read-only", Some("slave-read-only"), DEBUG, true).scope(Scope::Replication),
    boolean("replica-ignore-maxmemory", Some("slave-ignore-maxmemory"), 0, true).scope(Scope::Replication),
    boolean("jemalloc-bg-thread", None, 0, true),
    boolean("activedefrag", None, DEBUG, false).check_bool(valid_active_defrag),
    boolean("syslog-enabled", None, IMMUTABLE, false),
    boolean("cluster-enabled", None, IMMUTABLE, false).scope(Scope::Cluster),
    boolean("appendonly", None, DENY_LOADING, false).scope(Scope::Persistence)
        .typed(|c| Value::Bool(c.appendonly.eq_ignore_ascii_case("yes")), |c, v| c.appendonly = yes_no(v.boolean()).into()),
    boolean("cluster-allow-reads-when-down", None, 0, false).scope(Scope::Cluster),
    boolean("cluster-allow-pubsubshard-when-down", None, 0, true).scope(Scope::Cluster),
    boolean("crash-log-enabled", None, 0, true),
    boolean("crash-memcheck-enabled", None, 0, true),
    boolean("use-exit-on-panic", None, HIDDEN, false),
    boolean("disable-thp", None, IMMUTABLE, true).scope(Scope::Honoured),
    boolean("cluster-allow-replica-migration", None, 0, true).scope(Scope::Cluster),
    boolean("replica-announced", None, 0, true).scope(Scope::Replication),
    boolean("latency-tracking", None, 0, true),
    boolean("aof-disable-auto-gc", None, 0, false).scope(Scope::Persistence),
    boolean("replica-ignore-disk-write-errors", None, 0, false).scope(Scope::Replication),
    string("aclfile", None, IMMUTABLE, ALLOW_EMPTY, Some("")).scope(Scope::Pending)
        .typed(|c| Value::Str(Some(c.aclfile.clone().unwrap_or_default())), |c, v| c.aclfile = v.into_opt().filter(|s| !s.is_empty())),
    string("unixsocket", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.unixsocket.clone()), |c, v| c.unixsocket = v.into_opt()),
    string("pidfile", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.pidfile.clone()), |c, v| c.pidfile = v.into_opt()),
    string("replica-announce-ip", Some("slave-announce-ip"), 0, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("masteruser", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("cluster-announce-ip", None, 0, NULL_IF_EMPTY, None).scope(Scope::Cluster),
    string("cluster-config-file", None, IMMUTABLE, ALLOW_EMPTY, Some("nodes.conf")).scope(Scope::Cluster),
    string("cluster-announce-hostname", None, 0, NULL_IF_EMPTY, None).check_str(valid_announced_hostname).scope(Scope::Cluster),
    string("syslog-ident", None, IMMUTABLE, ALLOW_EMPTY, Some("redis")),
    string("dbfilename", None, PROTECTED, ALLOW_EMPTY, Some("dump.rdb")).check_str(valid_dbfilename).scope(Scope::Persistence),
    string("appendfilename", None, IMMUTABLE, ALLOW_EMPTY, Some("appendonly.aof")).check_str(valid_aof_filename).scope(Scope::Persistence),
    string("appenddirname", None, IMMUTABLE, ALLOW_EMPTY, Some("appendonlydir")).check_str(valid_aof_dirname).scope(Scope::Persistence),
    string("server_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None),
    string("bio_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None),
    string("aof_rewrite_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Persistence),
    string("bgsave_cpulist", None, IMMUTABLE, NULL_IF_EMPTY, None).scope(Scope::Persistence),
    string("ignore-warnings", None, 0, ALLOW_EMPTY, Some("")),
    string("proc-title-template", None, 0, ALLOW_EMPTY, Some("{title} {listen-addr} {server-mode}")).check_str(valid_proc_title_template),
    string("bind-source-addr", None, 0, NULL_IF_EMPTY, None),
    string("logfile", None, IMMUTABLE, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.logfile.clone())), |c, v| c.logfile = v.into_string()),
    string("masterauth", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Replication),
    string("requirepass", None, SENSITIVE, NULL_IF_EMPTY, None).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.requirepass.clone()), |c, v| c.requirepass = v.into_opt()),
    enumeration("supervised", None, IMMUTABLE, SUPERVISED_MODE, 3),
    enumeration("syslog-facility", None, IMMUTABLE, SYSLOG_FACILITY, 1),
    enumeration("repl-diskless-load", None, DEBUG | DENY_LOADING, REPL_DISKLESS_LOAD, 0).scope(Scope::Replication),
    enumeration("loglevel", None, 0, LOGLEVEL, 2).scope(Scope::Honoured)
        .typed(|c| Value::Enum(c.loglevel as u32), |c, v| c.loglevel = LogLevel::from_value(v.enumeration())),
    enumeration("maxmemory-policy", None, 0, MAXMEMORY_POLICY, 7)
        .typed(|c| Value::Enum(enum_value(MAXMEMORY_POLICY, &c.maxmemory_policy, 7)), |c, v| c.maxmemory_policy = enum_name(MAXMEMORY_POLICY, v.enumeration()).into()),
    enumeration("appendfsync", None, 0, AOF_FSYNC, 0).scope(Scope::Persistence)
        .typed(|c| Value::Enum(enum_value(AOF_FSYNC, &c.appendfsync, 0)), |c, v| c.appendfsync = enum_name(AOF_FSYNC, v.enumeration()).into()),
    enumeration("oom-score-adj", None, 0, OOM_SCORE_ADJ, 0),
    enumeration("acl-pubsub-default", None, 0, ACL_PUBSUB_DEFAULT, 0),
    enumeration("sanitize-dump-payload", None, DEBUG, SANITIZE_DUMP_PAYLOAD, 0),
    enumeration("enable-protected-configs", None, IMMUTABLE, PROTECTED_ACTION, 0),
    enumeration("enable-debug-command", None, IMMUTABLE, PROTECTED_ACTION, 0)
        .typed(|c| Value::Enum(c.enable_debug_command as u32), |c, v| c.enable_debug_command = ProtectedAction::from_value(v.enumeration())),
    enumeration("enable-module-command", None, IMMUTABLE, PROTECTED_ACTION, 0)
        .typed(|c| Value::Enum(c.enable_module_command as u32), |c, v| c.enable_module_command = ProtectedAction::from_value(v.enumeration())),
    enumeration("cluster-preferred-endpoint-type", None, 0, CLUSTER_PREFERRED_ENDPOINT_TYPE, 0).scope(Scope::Cluster),
    enumeration("propagation-error-behavior", None, 0, PROPAGATION_ERROR_BEHAVIOR, 0).scope(Scope::Replication),
    enumeration("shutdown-on-sigint", None, MULTI_ARG, SHUTDOWN_ON_SIG, 0).check_enum(valid_shutdown_flags),
    enumeration("shutdown-on-sigterm", None, MULTI_ARG, SHUTDOWN_ON_SIG, 0).check_enum(valid_shutdown_flags),
    number("databases", None, IMMUTABLE, 1, INT_MAX, SIGNED, NumFmt::Int, 16).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.databases as i64), |c, v| c.databases = v.int() as usize),
    number("port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 6379).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.port as i64), |c, v| c.port = v.int() as u16),
    number("io-threads", None, DEBUG | IMMUTABLE, 1, 128, SIGNED, NumFmt::Int, 1)
        .typed(|c| Value::Int(c.io_threads as i64), |c, v| c.io_threads = v.int() as u32),
    number("auto-aof-rewrite-percentage", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 100).scope(Scope::Persistence),
    number("cluster-replica-validity-factor", Some("cluster-slave-validity-factor"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Cluster),
    number("list-max-listpack-size", Some("list-max-ziplist-size"), 0, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, -2)
        .typed(|c| Value::Int(c.list_max_listpack_size as i64), |c, v| c.list_max_listpack_size = v.int() as i32),
    number("tcp-keepalive", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 300).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.tcp_keepalive as i64), |c, v| c.tcp_keepalive = v.int() as u32),
    number("cluster-migration-barrier", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 1).scope(Scope::Cluster),
    number("active-defrag-cycle-min", None, 0, 1, 99, SIGNED, NumFmt::Int, 1),
    number("active-defrag-cycle-max", None, 0, 1, 99, SIGNED, NumFmt::Int, 25),
    number("active-defrag-threshold-lower", None, 0, 0, 1000, SIGNED, NumFmt::Int, 10),
    number("active-defrag-threshold-upper", None, 0, 0, 1000, SIGNED, NumFmt::Int, 100),
    number("lfu-log-factor", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10)
        .typed(|c| Value::Int(c.lfu_log_factor as i64), |c, v| c.lfu_log_factor = v.int() as u32),
    number("lfu-decay-time", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 1)
        .typed(|c| Value::Int(c.lfu_decay_time as i64), |c, v| c.lfu_decay_time = v.int() as u32),
    number("replica-priority", Some("slave-priority"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 100).scope(Scope::Replication),
    number("repl-diskless-sync-delay", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 5).scope(Scope::Replication),
    number("maxmemory-samples", None, 0, 1, INT_MAX, SIGNED, NumFmt::Int, 5)
        .typed(|c| Value::Int(c.maxmemory_samples as i64), |c, v| c.maxmemory_samples = v.int() as u32),
    number("maxmemory-eviction-tenacity", None, 0, 0, 100, SIGNED, NumFmt::Int, 10),
    number("timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.timeout as i64), |c, v| c.timeout = v.int() as u64),
    number("replica-announce-port", Some("slave-announce-port"), 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("tcp-backlog", None, IMMUTABLE, 0, INT_MAX, SIGNED, NumFmt::Int, 511),
    number("cluster-port", None, IMMUTABLE, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-bus-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("cluster-announce-tls-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Cluster),
    number("repl-timeout", None, 0, 1, INT_MAX, SIGNED, NumFmt::Int, 60).scope(Scope::Replication),
    number("repl-ping-replica-period", Some("repl-ping-slave-period"), 0, 1, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Replication),
    number("list-compress-depth", None, DEBUG, 0, INT_MAX, SIGNED, NumFmt::Int, 0)
        .typed(|c| Value::Int(c.list_compress_depth as i64), |c, v| c.list_compress_depth = v.int() as u32),
    number("rdb-key-save-delay", None, HIDDEN, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Persistence),
    number("key-load-delay", None, HIDDEN, INT_MIN, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Persistence),
    number("active-expire-effort", None, 0, 1, 10, SIGNED, NumFmt::Int, 1),
    number("hz", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10)
        .typed(|c| Value::Int(c.hz as i64), |c, v| c.hz = v.int() as u32),
    number("min-replicas-to-write", Some("min-slaves-to-write"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("min-replicas-max-lag", Some("min-slaves-max-lag"), 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10).scope(Scope::Replication),
    number("watchdog-period", None, HIDDEN, 0, INT_MAX, SIGNED, NumFmt::Int, 0),
    number("shutdown-timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 10),
    number("repl-diskless-sync-max-replicas", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 0).scope(Scope::Replication),
    number("maxclients", None, 0, 1, UINT_MAX, UNSIGNED, NumFmt::Int, 10000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.maxclients as i64), |c, v| c.maxclients = v.int() as usize),
    number("unixsocketperm", None, IMMUTABLE, 0, 0o777, UNSIGNED, NumFmt::Octal, 0).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.unixsocketperm as i64), |c, v| c.unixsocketperm = v.int() as u32),
    number("socket-mark-id", None, IMMUTABLE, 0, UINT_MAX, UNSIGNED, NumFmt::Int, 0),
    number("active-defrag-max-scan-fields", None, 0, 1, LONG_MAX, SIGNED, NumFmt::Int, 1000),
    number("slowlog-max-len", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 128)
        .typed(|c| Value::Int(c.slowlog_max_len as i64), |c, v| c.slowlog_max_len = v.int() as u64),
    number("acllog-max-len", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 128),
    number("busy-reply-threshold", Some("lua-time-limit"), 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 5000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.busy_reply_threshold_ms as i64), |c, v| c.busy_reply_threshold_ms = v.int() as u64),
    number("cluster-node-timeout", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 15000).scope(Scope::Cluster),
    number("slowlog-log-slower-than", None, 0, -1, LLONG_MAX, SIGNED, NumFmt::Int, 10000)
        .typed(|c| Value::Int(c.slowlog_log_slower_than), |c, v| c.slowlog_log_slower_than = v.int()),
    number("latency-monitor-threshold", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 0)
        .typed(|c| Value::Int(c.latency_monitor_threshold as i64), |c, v| c.latency_monitor_threshold = v.int() as u64),
    number("proto-max-bulk-len", None, DEBUG, 1048576, LONG_MAX, SIGNED, NumFmt::Memory, 536870912).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.proto_max_bulk_len as i64), |c, v| c.proto_max_bulk_len = v.int() as u64),
    number("stream-node-max-entries", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Int, 100)
        .typed(|c| Value::Int(c.stream_node_max_entries), |c, v| c.stream_node_max_entries = v.int()),
    number("repl-backlog-size", None, 0, 1, LLONG_MAX, SIGNED, NumFmt::Memory, 1048576).scope(Scope::Replication),
    number("maxmemory", None, 0, 0, ULLONG_MAX, UNSIGNED, NumFmt::Memory, 0)
        .typed(|c| Value::Int(c.maxmemory as i64), |c, v| c.maxmemory = v.int() as u64),
    number("cluster-link-sendbuf-limit", None, 0, 0, ULLONG_MAX, UNSIGNED, NumFmt::Memory, 0).scope(Scope::Cluster),
    number("hash-max-listpack-entries", Some("hash-max-ziplist-entries"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 512)
        .typed(|c| Value::Int(c.hash_max_listpack_entries as i64), |c, v| c.hash_max_listpack_entries = v.int() as u64),
    number("set-max-intset-entries", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 512)
        .typed(|c| Value::Int(c.set_max_intset_entries as i64), |c, v| c.set_max_intset_entries = v.int() as u64),
    number("zset-max-listpack-entries", Some("zset-max-ziplist-entries"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 128)
        .typed(|c| Value::Int(c.zset_max_listpack_entries as i64), |c, v| c.zset_max_listpack_entries = v.int() as u64),
    number("active-defrag-ignore-bytes", None, 0, 1, LLONG_MAX, UNSIGNED, NumFmt::Memory, 104857600),
    number("hash-max-listpack-value", Some("hash-max-ziplist-value"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 64)
        .typed(|c| Value::Int(c.hash_max_listpack_value as i64), |c, v| c.hash_max_listpack_value = v.int() as u64),
    number("stream-node-max-bytes", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 4096)
        .typed(|c| Value::Int(c.stream_node_max_bytes as i64), |c, v| c.stream_node_max_bytes = v.int() as u64),
    number("zset-max-listpack-value", Some("zset-max-ziplist-value"), 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 64)
        .typed(|c| Value::Int(c.zset_max_listpack_value as i64), |c, v| c.zset_max_listpack_value = v.int() as u64),
    number("hll-sparse-max-bytes", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Memory, 3000)
        .typed(|c| Value::Int(c.hll_sparse_max_bytes as i64), |c, v| c.hll_sparse_max_bytes = v.int() as u64),
    number("tracking-table-max-keys", None, 0, 0, LONG_MAX, UNSIGNED, NumFmt::Int, 1000000),
    number("client-query-buffer-limit", None, DEBUG, 1048576, LONG_MAX, UNSIGNED, NumFmt::Memory, 1073741824)
        .typed(|c| Value::Int(c.client_query_buffer_limit as i64), |c, v| c.client_query_buffer_limit = v.int() as u64),
    number("maxmemory-clients", None, 0, -100, SSIZE_MAX, SIGNED, NumFmt::MemoryPercent, 0),
    number("repl-backlog-ttl", None, 0, 0, LONG_MAX, SIGNED, NumFmt::Int, 3600).scope(Scope::Replication),
    number("auto-aof-rewrite-min-size", None, 0, 0, LLONG_MAX, SIGNED, NumFmt::Memory, 67108864).scope(Scope::Persistence),
    number("loading-process-events-interval-bytes", None, HIDDEN, 1024, INT_MAX, SIGNED, NumFmt::Int, 2097152).scope(Scope::Persistence),
    number("tls-port", None, 0, 0, 65535, SIGNED, NumFmt::Int, 0).scope(Scope::Pending)
        .typed(|c| Value::Int(c.tls_port as i64), |c, v| c.tls_port = v.int() as u16),
    number("tls-session-cache-size", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 20480),
    number("tls-session-cache-timeout", None, 0, 0, INT_MAX, SIGNED, NumFmt::Int, 300),
    boolean("tls-cluster", None, 0, false).scope(Scope::Cluster),
    boolean("tls-replication", None, 0, false).scope(Scope::Replication),
    enumeration("tls-auth-clients", None, 0, TLS_AUTH_CLIENTS, 1),
    boolean("tls-prefer-server-ciphers", None, 0, false),
    boolean("tls-session-caching", None, 0, true),
    string("tls-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_cert_file.clone()), |c, v| c.tls_cert_file = v.into_opt()),
    string("tls-key-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_key_file.clone()), |c, v| c.tls_key_file = v.into_opt()),
    string("tls-key-file-pass", None, 0, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_key_file_pass.clone()), |c, v| c.tls_key_file_pass = v.into_opt()),
    string("tls-client-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_cert_file.clone()), |c, v| c.tls_client_cert_file = v.into_opt()),
    string("tls-client-key-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_key_file.clone()), |c, v| c.tls_client_key_file = v.into_opt()),
    string("tls-client-key-file-pass", None, 0, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_client_key_file_pass.clone()), |c, v| c.tls_client_key_file_pass = v.into_opt()),
    string("tls-dh-params-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_dh_params_file.clone()), |c, v| c.tls_dh_params_file = v.into_opt()),
    string("tls-ca-cert-file", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_ca_cert_file.clone()), |c, v| c.tls_ca_cert_file = v.into_opt()),
    string("tls-ca-cert-dir", None, VOLATILE, NULL_IF_EMPTY, None)
        .typed(|c| Value::Str(c.tls_ca_cert_dir.clone()), |c, v| c.tls_ca_cert_dir = v.into_opt()),
    string("tls-protocols", None, 0, NULL_IF_EMPTY, None),
    string("tls-ciphers", None, 0, NULL_IF_EMPTY, None),
    string("tls-ciphersuites", None, 0, NULL_IF_EMPTY, None),
    special("dir", None, PROTECTED | DENY_LOADING, Special::Dir).scope(Scope::Honoured)
        .typed(|c| Value::Str(c.dir.as_ref().map(|d| d.display().to_string())), |c, v| c.dir = v.into_opt().map(Into::into)),
    special("save", None, MULTI_ARG, Special::Save).scope(Scope::Persistence)
        .typed(|c| Value::Str(Some(c.save.clone())), |c, v| c.save = v.into_string()),
    special("client-output-buffer-limit", None, MULTI_ARG, Special::ClientOutputBufferLimit).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.client_output_buffer_limit.clone())), |c, v| c.client_output_buffer_limit = v.into_string()),
    special("oom-score-adj-values", None, MULTI_ARG, Special::OomScoreAdjValues),
    special("notify-keyspace-events", None, 0, Special::NotifyKeyspaceEvents).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.notify_keyspace_events.clone())), |c, v| c.notify_keyspace_events = v.into_string()),
    special("bind", None, MULTI_ARG, Special::Bind).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.bind.clone())), |c, v| c.bind = v.into_string()),
    special("replicaof", Some("slaveof"), IMMUTABLE | MULTI_ARG, Special::ReplicaOf).scope(Scope::Replication),
    special("latency-tracking-info-percentiles", None, MULTI_ARG, Special::LatencyTrackingInfoPercentiles),
    // resplock's own, hidden from `CONFIG GET *` so the list stays redis-server's: the lock
    // history (src/history) and its bounds.
    boolean("lock-history", None, HIDDEN, false).scope(Scope::Honoured)
        .typed(|c| Value::Bool(c.lock_history), |c, v| c.lock_history = v.boolean()),
    string("lock-history-keys", None, HIDDEN, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.lock_history_keys.clone())), |c, v| c.lock_history_keys = v.into_string()),
    number("lock-history-max-events", None, HIDDEN, 1, LLONG_MAX, SIGNED, NumFmt::Int, 1_000_000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.lock_history_max_events as i64), |c, v| c.lock_history_max_events = v.int() as u64),
    number("lock-history-max-per-key", None, HIDDEN, 1, LLONG_MAX, SIGNED, NumFmt::Int, 100_000).scope(Scope::Honoured)
        .typed(|c| Value::Int(c.lock_history_max_per_key as i64), |c, v| c.lock_history_max_per_key = v.int() as u64),
    string("lock-history-file", None, HIDDEN | VOLATILE, ALLOW_EMPTY, Some("")).scope(Scope::Honoured)
        .typed(|c| Value::Str(Some(c.lock_history_file.clone())), |c, v| c.lock_history_file = v.into_string()),
    // resplock's own, hidden likewise: the Redlock "delayed restart" (cmd::runtime::restart_delay).
    string("stop-writes-after-restart", None, HIDDEN, ALLOW_EMPTY, Some("no")).scope(Scope::Honoured)
        .check_str(valid_restart_delay),
];
