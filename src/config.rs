//! Server settings: filled from the command line, read and changed by CONFIG GET/SET.

/// Redis's default client-output-buffer-limit.
pub const DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT: &str =
    "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";

#[derive(Clone, Debug)]
pub struct Config {
    pub bind: String,
    /// 0 picks a free port.
    pub port: u16,
    pub requirepass: Option<String>,
    pub databases: usize,
    pub maxclients: usize,
    /// Accepted for redis-server compatibility; resplock keeps nothing on disk.
    pub save: String,
    pub appendonly: String,
    /// busy-reply-threshold (alias lua-time-limit), milliseconds.
    pub busy_reply_threshold_ms: u64,
    /// notify-keyspace-events, as the flags string Redis accepts.
    pub notify_keyspace_events: String,
    /// client-output-buffer-limit as Redis prints it: `class hard soft seconds` for the
    /// classes normal, slave and pubsub, in bytes (see [`Config::output_buffer_limit`]).
    pub client_output_buffer_limit: String,
    /// Largest bulk string a request may carry.
    pub proto_max_bulk_len: u64,
    /// Idle client timeout in seconds (0: never). Stored for CONFIG GET/SET only.
    pub timeout: u64,
    /// Stored for CONFIG GET/SET only: resplock never evicts.
    pub maxmemory: u64,
    pub maxmemory_policy: String,
    pub appendfsync: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: "127.0.0.1".into(),
            port: 6379,
            requirepass: None,
            databases: 16,
            maxclients: 10000,
            save: String::new(),
            appendonly: "no".into(),
            busy_reply_threshold_ms: 5000,
            notify_keyspace_events: String::new(),
            client_output_buffer_limit: DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT.into(),
            proto_max_bulk_len: 512 * 1024 * 1024,
            timeout: 0,
            maxmemory: 0,
            maxmemory_policy: "noeviction".into(),
            appendfsync: "everysec".into(),
        }
    }
}

impl Config {
    /// A configuration for tests: loopback, a free port, everything else default.
    pub fn ephemeral() -> Self {
        Config {
            port: 0,
            ..Config::default()
        }
    }

    /// (hard limit bytes, soft limit bytes, soft seconds) of a client-output-buffer-limit
    /// class ("normal", "slave", "pubsub"); 0 means no limit. (0, 0, 0) for an unknown class.
    pub fn output_buffer_limit(&self, class: &str) -> (u64, u64, u64) {
        let words: Vec<&str> = self.client_output_buffer_limit.split(' ').collect();
        for c in words.chunks_exact(4) {
            if c[0] == class {
                let n = |s: &str| s.parse().unwrap_or(0);
                return (n(c[1]), n(c[2]), n(c[3]));
            }
        }
        (0, 0, 0)
    }
}
