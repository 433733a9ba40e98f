mod common;
use common::*;
use std::time::Duration;

/// The text of a bulk or verbatim reply.
fn text(r: &[u8]) -> String {
    let s = String::from_utf8_lossy(r).into_owned();
    let body = s.split_once("\r\n").unwrap().1;
    let body = body.strip_suffix("\r\n").unwrap();
    body.strip_prefix("txt:").unwrap_or(body).to_string()
}

#[tokio::test]
async fn info_has_redis_sections_with_exact_framing() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v");
    let info = text(&cmd!(c, "INFO"));
    let sections: Vec<&str> = info
        .lines()
        .filter(|l| l.starts_with("# "))
        .map(|l| l.trim_end())
        .collect();
    assert_eq!(
        sections,
        [
            "# Server",
            "# Clients",
            "# Memory",
            "# Persistence",
            "# Stats",
            "# Replication",
            "# CPU",
            "# Modules",
            "# Errorstats",
            "# Cluster",
            "# Keyspace"
        ]
    );
    // CRLF lines, one blank line before each section but the first, a final CRLF.
    assert!(info.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
    assert!(info.contains("\r\n\r\n# Clients\r\n"));
    assert!(info.ends_with("# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n"));
    for line in info.split("\r\n") {
        assert!(!line.contains('\n'), "bare LF in {line:?}");
        assert!(
            line.is_empty() || line.starts_with("# ") || line.contains(':'),
            "{line:?}"
        );
    }
    for field in [
        "redis_mode:standalone",
        "arch_bits:",
        "process_id:",
        "run_id:",
        "tcp_port:",
        "uptime_in_seconds:",
        "connected_clients:1",
        "blocked_clients:0",
        "maxclients:10000",
        "used_memory:",
        "used_memory_human:",
        "loading:0",
        // One write since the start (redis-server says the same after one SET).
        "rdb_changes_since_last_save:1",
        "total_connections_received:",
        "total_commands_processed:",
        "expired_keys:0",
        "keyspace_hits:",
        "keyspace_misses:",
        "role:master",
        "connected_slaves:0",
        "used_cpu_sys:",
    ] {
        assert!(info.contains(&format!("\r\n{field}")), "missing {field}");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn info_selects_sections_and_keyspace_lists_only_nonempty_dbs() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "INFO", "keyspace"), b"$12\r\n# Keyspace\r\n\r\n");
    cmd!(c, "SET", "a", "1");
    cmd!(c, "SET", "b", "1");
    assert_eq!(
        cmd!(c, "INFO", "keyspace"),
        &b"$44\r\n# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n\r\n"[..]
    );
    cmd!(c, "PEXPIRE", "b", "100000");
    let ks = text(&cmd!(c, "INFO", "keyspace"));
    let ttl: i64 = ks
        .trim_end()
        .rsplit_once("avg_ttl=")
        .map(|(head, t)| {
            assert_eq!(head, "# Keyspace\r\ndb0:keys=2,expires=1,");
            t.parse().unwrap()
        })
        .unwrap();
    assert!((90_000..=100_000).contains(&ttl), "{ttl}");
    assert_eq!(cmd!(c, "INFO", "nosuchsection"), b"$0\r\n\r\n");
    let two = text(&cmd!(c, "INFO", "keyspace", "SERVER"));
    assert!(two.starts_with("# Server\r\n"));
    assert!(two.contains("\r\n\r\n# Keyspace\r\n"));
    cmd!(c, "PERSIST", "b");
    cmd!(c, "HELLO", "3");
    assert_eq!(
        cmd!(c, "INFO", "keyspace"),
        &b"=48\r\ntxt:# Keyspace\r\ndb0:keys=2,expires=0,avg_ttl=0\r\n\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn command_count_matches_the_table() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let n = resplock::cmd::all_commands().len();
    assert_eq!(
        cmd!(c, "COMMAND", "COUNT"),
        format!(":{n}\r\n").into_bytes()
    );
    let all = cmd!(c, "COMMAND");
    assert!(all.starts_with(format!("*{n}\r\n").as_bytes()));
    assert_eq!(
        cmd!(c, "COMMAND", "COUNT", "x"),
        &b"-ERR wrong number of arguments for 'command|count' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "COMMAND", "foo"),
        &b"-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n"[..]
    );
    let list = cmd!(c, "COMMAND", "LIST", "FILTERBY", "PATTERN", "hincrby*");
    assert_eq!(list, &b"*2\r\n$7\r\nhincrby\r\n$12\r\nhincrbyfloat\r\n"[..]);
    s.shutdown().await;
}

#[tokio::test]
async fn command_info_matches_redis_for_table_rows() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    // Recorded from redis-server 7.0.15.
    assert_eq!(
        String::from_utf8_lossy(&cmd!(c, "COMMAND", "INFO", "hset", "nosuch")),
        "*2\r\n*10\r\n$4\r\nhset\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@hash\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+update\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n$-1\r\n"
    );
    cmd!(c, "HELLO", "3");
    assert_eq!(
        String::from_utf8_lossy(&cmd!(c, "COMMAND", "INFO", "hget")),
        "*1\r\n*10\r\n$4\r\nhget\r\n:3\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@hash\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn command_docs_carry_summary_since_and_group() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        String::from_utf8_lossy(&cmd!(c, "COMMAND", "DOCS", "hget", "nosuch")),
        // Recorded from redis-server 7.0.15.
        "*2\r\n$4\r\nhget\r\n*10\r\n$7\r\nsummary\r\n$29\r\nGet the value of a hash field\r\n$5\r\nsince\r\n$5\r\n2.0.0\r\n$5\r\ngroup\r\n$4\r\nhash\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*2\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n*4\r\n$4\r\nname\r\n$5\r\nfield\r\n$4\r\ntype\r\n$6\r\nstring\r\n"
    );
    cmd!(c, "HELLO", "3");
    assert_eq!(cmd!(c, "COMMAND", "DOCS", "nosuch"), b"%0\r\n");
    let docs = cmd!(c, "COMMAND", "DOCS");
    assert!(docs.starts_with(b"%"));
    assert!(frame_len(&docs) == Some(docs.len()));
    s.shutdown().await;
}

#[tokio::test]
async fn command_getkeys_uses_key_positions() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "COMMAND", "GETKEYS", "set", "a", "b"),
        b"*1\r\n$1\r\na\r\n"
    );
    assert_eq!(
        cmd!(c, "COMMAND", "GETKEYS", "ping", "x"),
        &b"-ERR The command has no key arguments\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "COMMAND", "GETKEYS", "get", "a", "b"),
        &b"-ERR Invalid number of arguments specified for command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "COMMAND", "GETKEYS", "nosuch", "a"),
        &b"-ERR Invalid command specified\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn config_get_and_set_follow_redis() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "MAXCLIENTS"),
        &b"*2\r\n$10\r\nMAXCLIENTS\r\n$5\r\n10000\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "maxmemory-p*"),
        &b"*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "databases", "3"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "foo", "1"),
        &b"-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "maxclients", "0"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "maxclients", "100", "maxclients", "200"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'maxclients') - duplicate parameter\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "notify-keyspace-events", "q"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.\r\n"[..]
    );
    assert_eq!(
        cmd!(
            c,
            "CONFIG",
            "SET",
            "notify-keyspace-events",
            "Kg$lshzxetmdn"
        ),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "notify-keyspace-events"),
        &b"*2\r\n$22\r\nnotify-keyspace-events\r\n$3\r\nAKm\r\n"[..]
    );
    assert_eq!(
        cmd!(
            c,
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "replica 1 2 3"
        ),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "client-output-buffer-limit"),
        &b"*2\r\n$26\r\nclient-output-buffer-limit\r\n$51\r\nnormal 0 0 0 slave 1 2 3 pubsub 33554432 8388608 60\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "client-output-buffer-limit", "normal x 2 3"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "lua-time-limit", "100"),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "busy-reply-threshold"),
        &b"*2\r\n$20\r\nbusy-reply-threshold\r\n$3\r\n100\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "proto-max-bulk-len", "5"),
        &b"-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CONFIG", "REWRITE"),
        &b"-ERR The server is running without a config file\r\n"[..]
    );
    assert_eq!(cmd!(c, "CONFIG", "RESETSTAT"), b"+OK\r\n");
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "a", "b", "c"),
        b"-ERR syntax error\r\n"
    );
    cmd!(c, "HELLO", "3");
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "appendonly"),
        &b"%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n"[..]
    );
    s.shutdown().await;
}

#[tokio::test]
async fn config_set_requirepass_takes_effect_for_new_connections() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "CONFIG", "SET", "requirepass", "pw"), b"+OK\r\n");
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "PING"), b"-NOAUTH Authentication required.\r\n");
    assert_eq!(cmd!(other, "AUTH", "pw"), b"+OK\r\n");
    assert_eq!(cmd!(c, "CONFIG", "SET", "requirepass", ""), b"+OK\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn time_wait_and_lastsave() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let t = String::from_utf8_lossy(&cmd!(c, "TIME")).into_owned();
    let parts: Vec<&str> = t.split("\r\n").collect();
    assert_eq!(parts[0], "*2");
    let secs: i64 = parts[2].parse().unwrap();
    let usecs: i64 = parts[4].parse().unwrap();
    let now = s.state().clock.now_us() / 1_000_000;
    assert!((now - secs).abs() <= 2);
    assert!((0..1_000_000).contains(&usecs));
    assert_eq!(cmd!(c, "WAIT", "0", "0"), b":0\r\n");
    assert_eq!(
        cmd!(c, "WAIT", "x", "0"),
        &b"-ERR value is not an integer or out of range\r\n"[..]
    );
    assert_eq!(cmd!(c, "WAIT", "0", "-1"), b"-ERR timeout is negative\r\n");
    let ls = String::from_utf8_lossy(&cmd!(c, "LASTSAVE")).into_owned();
    let ls: i64 = ls.trim().trim_start_matches(':').parse().unwrap();
    assert!((now - ls).abs() <= 5);
    s.shutdown().await;
}

#[tokio::test]
async fn shutdown_stops_the_server_without_a_reply() {
    let s = server().await;
    let addr = s.local_addr();
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "SHUTDOWN", "ABORT"),
        b"-ERR No shutdown in progress.\r\n"
    );
    assert_eq!(
        cmd!(c, "SHUTDOWN", "NOSAVE", "SAVE"),
        b"-ERR syntax error\r\n"
    );
    assert_eq!(cmd!(c, "SHUTDOWN", "foo"), b"-ERR syntax error\r\n");
    c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n").await;
    assert!(c.closed(Duration::from_secs(5)).await);
    tokio::time::timeout(Duration::from_secs(5), s.wait())
        .await
        .expect("server stops");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
}

/// The field names of redis-server 7.0.15's `INFO memory`, in its order.
const REDIS_MEMORY_FIELDS: &[&str] = &[
    "used_memory",
    "used_memory_human",
    "used_memory_rss",
    "used_memory_rss_human",
    "used_memory_peak",
    "used_memory_peak_human",
    "used_memory_peak_perc",
    "used_memory_overhead",
    "used_memory_startup",
    "used_memory_dataset",
    "used_memory_dataset_perc",
    "allocator_allocated",
    "allocator_active",
    "allocator_resident",
    "total_system_memory",
    "total_system_memory_human",
    "used_memory_lua",
    "used_memory_vm_eval",
    "used_memory_lua_human",
    "used_memory_scripts_eval",
    "number_of_cached_scripts",
    "number_of_functions",
    "number_of_libraries",
    "used_memory_vm_functions",
    "used_memory_vm_total",
    "used_memory_vm_total_human",
    "used_memory_functions",
    "used_memory_scripts",
    "used_memory_scripts_human",
    "maxmemory",
    "maxmemory_human",
    "maxmemory_policy",
    "allocator_frag_ratio",
    "allocator_frag_bytes",
    "allocator_rss_ratio",
    "allocator_rss_bytes",
    "rss_overhead_ratio",
    "rss_overhead_bytes",
    "mem_fragmentation_ratio",
    "mem_fragmentation_bytes",
    "mem_not_counted_for_evict",
    "mem_replication_backlog",
    "mem_total_replication_buffers",
    "mem_clients_slaves",
    "mem_clients_normal",
    "mem_cluster_links",
    "mem_aof_buffer",
    "mem_allocator",
    "active_defrag_running",
    "lazyfree_pending_objects",
    "lazyfreed_objects",
];

/// The scripting figures (Redis's Lua VM, script cache and functions), which come with the
/// scripting engine's own accounting.
const SCRIPTING_FIELDS: &[&str] = &[
    "used_memory_lua",
    "used_memory_vm_eval",
    "used_memory_lua_human",
    "used_memory_scripts_eval",
    "number_of_cached_scripts",
    "number_of_functions",
    "number_of_libraries",
    "used_memory_vm_functions",
    "used_memory_vm_total",
    "used_memory_vm_total_human",
    "used_memory_functions",
    "used_memory_scripts",
    "used_memory_scripts_human",
];

#[tokio::test]
async fn info_memory_has_redis_fields_in_redis_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let info = text(&cmd!(c, "INFO", "memory"));
    let names: Vec<&str> = info
        .split("\r\n")
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(':').unwrap().0)
        .collect();
    // Every field is one of Redis's, in Redis's order...
    let mut expected = REDIS_MEMORY_FIELDS.iter();
    for n in &names {
        assert!(
            expected.any(|e| e == n),
            "{n} unknown or out of order in {names:?}"
        );
    }
    // ...and all of Redis's are there, the scripting engine's aside.
    for f in REDIS_MEMORY_FIELDS {
        assert!(
            names.contains(f) || SCRIPTING_FIELDS.contains(f),
            "missing {f}"
        );
    }
    s.shutdown().await;
}

/// A free loopback port (bound and released at once).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn raw_at(port: u16) -> Option<tokio::net::TcpStream> {
    tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()
}

async fn ping_at(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(mut c) = raw_at(port).await else {
        return false;
    };
    c.write_all(b"PING\r\n").await.unwrap();
    let mut buf = [0u8; 7];
    matches!(
        tokio::time::timeout(Duration::from_secs(2), c.read_exact(&mut buf)).await,
        Ok(Ok(_))
    ) && &buf == b"+PONG\r\n"
}

#[tokio::test]
async fn config_set_port_moves_the_listener_and_a_busy_port_keeps_the_old_one() {
    let s = server().await;
    let old = s.local_addr().port();
    let mut c = Raw::connect(&s).await;
    let new = free_port();
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "port", new.to_string()),
        b"+OK\r\n"
    );
    // The connection that asked stays; new clients find the new port only.
    assert!(ping_at(new).await);
    assert!(!ping_at(old).await);
    let reply = cmd!(c, "CONFIG", "GET", "port");
    assert_eq!(
        reply,
        format!(
            "*2\r\n$4\r\nport\r\n${}\r\n{new}\r\n",
            new.to_string().len()
        )
        .into_bytes()
    );
    // A port someone else listens on: Redis's error, and the server still listens where it did.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = taken.local_addr().unwrap().port();
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "port", busy.to_string()),
        b"-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.\r\n"
    );
    assert!(ping_at(new).await);
    let info = String::from_utf8(cmd!(c, "INFO", "server")).unwrap();
    assert!(info.contains(&format!("tcp_port:{new}\r\n")), "{info}");
}

#[tokio::test]
async fn config_set_bind_refuses_a_bad_address_and_empty_bind_stops_tcp() {
    let s = server().await;
    let port = s.local_addr().port();
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "bind", "999.999.999.999"),
        b"-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.\r\n"
    );
    assert!(ping_at(port).await, "the old addresses listen again");
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "bind"),
        b"*2\r\n$4\r\nbind\r\n$9\r\n127.0.0.1\r\n"
    );
    // Rebinding to the same address on the same port works (the old socket is closed first).
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "bind", "127.0.0.1 -::1"),
        b"+OK\r\n"
    );
    assert!(ping_at(port).await);
    assert_eq!(cmd!(c, "CONFIG", "SET", "bind", ""), b"+OK\r\n");
    assert!(raw_at(port).await.is_none(), "nothing listens on TCP");
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(c, "CONFIG", "SET", "bind", "127.0.0.1"), b"+OK\r\n");
    assert!(ping_at(port).await);
}

#[tokio::test]
async fn config_rewrite_writes_the_live_acl_users_in_place_of_the_files() {
    let path = std::env::temp_dir().join(format!(
        "resplock-rewrite-users-{}.conf",
        std::process::id()
    ));
    std::fs::write(
        &path,
        "# mine\nuser alice on >pw ~a* +get\nuser bob off\nsave \"\"\n",
    )
    .unwrap();
    let config = resplock::Config {
        config_file: Some(path.clone()),
        users: vec![
            vec![
                "alice".into(),
                "on".into(),
                ">pw".into(),
                "~a*".into(),
                "+get".into(),
            ],
            vec!["bob".into(), "off".into()],
        ],
        ..resplock::Config::ephemeral()
    };
    let s = server_with(config).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "ACL", "SETUSER", "carol", "on", "+@read", "~c*"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "ACL", "DELUSER", "alice", "bob"), b":2\r\n");
    assert_eq!(cmd!(c, "CONFIG", "REWRITE"), b"+OK\r\n");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    // The file's user lines take the live users in name order; the port and dir follow.
    assert!(
        text.starts_with(
            "# mine\nuser carol on ~c* resetchannels -@all +@read\n\
             user default on nopass ~* &* +@all\nsave \"\"\n\n# Generated by CONFIG REWRITE\n"
        ),
        "{text}"
    );
    assert_eq!(text.matches("user ").count(), 2, "{text}");
    s.shutdown().await;
}

/// `enable-protected-configs local` lets a client on the loopback change protected
/// parameters (Redis's islocalClient); the default `no` refuses everyone.
#[tokio::test]
async fn protected_configs_local_admits_loopback_clients() {
    let s = common::server_with_args(&["--enable-protected-configs", "local"]).await;
    let mut c = common::Raw::connect(&s).await;
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"dbfilename", b"somename.rdb"])
            .await,
        b"+OK\r\n"
    );
    s.shutdown().await;
    let s = common::server().await;
    let mut c = common::Raw::connect(&s).await;
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"dbfilename", b"somename.rdb"]).await,
        b"-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n"
    );
    s.shutdown().await;
}

/// `rename-command` renames in the server's own command table, as redis-server 7.0.15
/// answers (recorded): the old name is unknown, the new one (any length, any case) runs the
/// command everywhere (clients, scripts), which keeps its own name in COMMAND INFO; an empty
/// new name removes the command.
#[tokio::test]
async fn rename_command_renames_for_clients_and_scripts_and_removes_with_an_empty_name() {
    let long = "b840fc02d524045429941cc15f59e41cb7be6c52";
    let s = common::server_with_args(&[
        "--rename-command",
        "flushdb",
        "badger",
        "--rename-command",
        "get",
        long,
        "--rename-command",
        "config",
        "",
    ])
    .await;
    let mut c = common::Raw::connect(&s).await;
    assert_eq!(
        c.cmd(&[b"flushdb"]).await,
        b"-ERR unknown command 'flushdb', with args beginning with: \r\n"
    );
    assert_eq!(c.cmd(&[b"BADGER"]).await, b"+OK\r\n");
    assert_eq!(c.cmd(&[b"SET", b"k", b"v"]).await, b"+OK\r\n");
    assert_eq!(
        c.cmd(&[long.to_uppercase().as_bytes(), b"k"]).await,
        b"$1\r\nv\r\n"
    );
    assert_eq!(
        c.cmd(&[b"get", b"k"]).await,
        b"-ERR unknown command 'get', with args beginning with: 'k' \r\n"
    );
    assert_eq!(
        c.cmd(&[b"config", b"get", b"port"]).await,
        b"-ERR unknown command 'config', with args beginning with: 'get' 'port' \r\n"
    );
    assert_eq!(c.cmd(&[b"COMMAND", b"COUNT"]).await, b":239\r\n");
    let info = c.cmd(&[b"COMMAND", b"INFO", b"badger"]).await;
    assert!(info.starts_with(b"*1\r\n*10\r\n$7\r\nflushdb\r\n:-1\r\n"));
    assert_eq!(
        c.cmd(&[b"EVAL", b"return redis.call('badger')", b"0"])
            .await,
        b"+OK\r\n"
    );
    assert_eq!(
        c.cmd(&[b"EVAL", b"return redis.pcall('flushdb')", b"0"])
            .await,
        b"-ERR Unknown Redis command called from script\r\n"
    );
    s.shutdown().await;
    // Another server in the same process keeps the whole table.
    let s = common::server().await;
    let mut c = common::Raw::connect(&s).await;
    assert_eq!(c.cmd(&[b"FLUSHDB"]).await, b"+OK\r\n");
    s.shutdown().await;
}

/// Once the SHUTDOWN caller sees its connection close, the port refuses connections, as after
/// redis-server's exit (unit/scripting reconnects at once and expects "connection refused");
/// the listeners close before the clients do.
#[tokio::test]
async fn after_shutdown_closes_the_callers_connection_the_port_refuses() {
    let s = common::server().await;
    let addr = s.local_addr();
    let mut c = common::Raw::connect(&s).await;
    c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n").await;
    assert!(c.closed(std::time::Duration::from_secs(5)).await);
    let e = tokio::net::TcpStream::connect(addr).await.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
}

/// CONFIG SET port while other clients are busy: their connections stay and every one of
/// their commands is answered, as Redis's changeListenPort leaves connected clients alone;
/// new clients find the new port only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_port_under_load_keeps_the_connected_clients_serving() {
    let s = server().await;
    let old = s.local_addr().port();
    let mut busy = Vec::new();
    for w in 0..4 {
        let mut c = Raw::connect(&s).await;
        busy.push(tokio::spawn(async move {
            for i in 0..500 {
                let key = format!("w{w}:{i}");
                assert_eq!(cmd!(c, "SET", &key, "v"), b"+OK\r\n");
                assert_eq!(cmd!(c, "GET", &key), b"$1\r\nv\r\n");
            }
        }));
    }
    let mut admin = Raw::connect(&s).await;
    let new = free_port();
    assert_eq!(
        cmd!(admin, "CONFIG", "SET", "port", new.to_string()),
        b"+OK\r\n"
    );
    for b in busy {
        b.await.expect("a busy client's commands were all answered");
    }
    assert_eq!(cmd!(admin, "DBSIZE"), b":2000\r\n");
    assert!(ping_at(new).await);
    assert!(!ping_at(old).await);
}

/// A client one CLIENT KILL closed is gone, as Redis frees it at once: a second CLIENT KILL
/// right after (pipelined, while its connection here may still be shutting down) finds none.
#[tokio::test]
async fn a_client_killed_once_is_not_counted_by_the_next_client_kill() {
    let s = server().await;
    let mut killer = Raw::connect(&s).await;
    let mut victim = Raw::connect(&s).await;
    let id = String::from_utf8(victim.cmd(&[b"CLIENT", b"ID"]).await).unwrap();
    let id = id.trim_start_matches(':').trim();
    killer
        .send(
            format!(
                "CLIENT KILL USER default SKIPME yes\r\nCLIENT KILL ID {id}\r\nCLIENT KILL ID {id} SKIPME no\r\n"
            )
            .as_bytes(),
        )
        .await;
    assert_eq!(killer.reply().await, b":1\r\n");
    assert_eq!(killer.reply().await, b":0\r\n");
    assert_eq!(killer.reply().await, b":0\r\n");
    s.shutdown().await;
}
