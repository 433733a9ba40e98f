//! Server settings: filled from the command line, read and changed by CONFIG GET/SET.

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
}
