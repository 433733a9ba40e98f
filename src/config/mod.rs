//! Server settings: Redis 7.0's configuration table as the one source of truth.
//!
//! `table::PARAMS` lists every parameter redis-server 7.0.15 knows, with its type, bounds,
//! flags, default and checks. [`Config`] is the typed view the server reads: the parameters
//! resplock acts on (or soon will) are fields; every other one is kept as the text CONFIG GET
//! prints, so CONFIG GET/SET/REWRITE round-trip all of them. The command line and config
//! files go through [`parse_command_line`], which follows redis-server's `main()` and
//! `loadServerConfigFromString` to the byte, FATAL texts included.

mod load;
pub(crate) mod notify;
mod own_args;
mod parse;
mod rewrite;
mod settings;
pub(crate) mod table;

use std::collections::HashSet;

pub use load::{parse_command_line, usage_text, version_line, Action, Fatal, Startup};
pub use own_args::{take_own_args, OwnArgs};
pub use settings::{
    Config, LogLevel, ProtectedAction, DEFAULT_BIND, DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT,
    DEFAULT_SAVE,
};
// The parameter table and its parsing are the server's business: CONFIG GET/SET and the
// command line reach them through `Config`.
pub(crate) use parse::{memtoull, repr, split_args, strerror};
pub(crate) use settings::Value;
pub(crate) use table::{flags, lookup, Param, PARAMS};

use parse::LoadState;

impl Default for Config {
    fn default() -> Self {
        let others = PARAMS
            .iter()
            .filter(|p| p.typed.is_none())
            .map(|p| (p.name, parse::format_value(p, &parse::default_value(p))))
            .collect();
        Config {
            bind: DEFAULT_BIND.into(),
            port: 6379,
            requirepass: None,
            databases: 16,
            maxclients: 10000,
            save: DEFAULT_SAVE.into(),
            appendonly: "no".into(),
            busy_reply_threshold_ms: 5000,
            notify_keyspace_events: String::new(),
            client_output_buffer_limit: DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT.into(),
            proto_max_bulk_len: 512 * 1024 * 1024,
            timeout: 0,
            maxmemory: 0,
            maxmemory_policy: "noeviction".into(),
            appendfsync: "everysec".into(),
            unixsocket: None,
            unixsocketperm: 0,
            daemonize: false,
            pidfile: None,
            logfile: String::new(),
            loglevel: LogLevel::Notice,
            dir: None,
            protected_mode: true,
            enable_debug_command: ProtectedAction::No,
            enable_module_command: ProtectedAction::No,
            hz: 10,
            tcp_keepalive: 300,
            io_threads: 1,
            maxmemory_samples: 5,
            lfu_log_factor: 10,
            lfu_decay_time: 1,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
            set_max_intset_entries: 512,
            zset_max_listpack_entries: 128,
            hll_sparse_max_bytes: 3000,
            zset_max_listpack_value: 64,
            hash_max_listpack_entries: 512,
            stream_node_max_entries: 100,
            stream_node_max_bytes: 4096,
            hash_max_listpack_value: 64,
            slowlog_log_slower_than: 10000,
            slowlog_max_len: 128,
            latency_monitor_threshold: 0,
            client_query_buffer_limit: 1 << 30,
            tls_port: 0,
            tls_cert_file: None,
            tls_key_file: None,
            tls_key_file_pass: None,
            tls_client_cert_file: None,
            tls_client_key_file: None,
            tls_client_key_file_pass: None,
            tls_dh_params_file: None,
            tls_ca_cert_file: None,
            tls_ca_cert_dir: None,
            aclfile: None,
            config_file: None,
            enable_test_commands: false,
            start_frozen: false,
            lock_history: false,
            lock_history_keys: String::new(),
            lock_history_max_events: 1_000_000,
            lock_history_max_per_key: 100_000,
            lock_history_file: String::new(),
            rename_commands: Vec::new(),
            users: Vec::new(),
            others,
        }
    }
}

/// The name prefix of the directories [`Config::ephemeral`] makes up.
const EPHEMERAL_DIR_PREFIX: &str = "resplock-ephemeral-";

/// True for a parameter whose CONFIG SET argument must be redacted from logs, slowlog and
/// MONITOR (Redis's SENSITIVE_CONFIG: requirepass, masterauth, masteruser).
///
/// ```
/// assert!(resplock::config::is_sensitive(b"requirepass"));
/// assert!(!resplock::config::is_sensitive(b"maxmemory"));
/// ```
pub fn is_sensitive(name: &[u8]) -> bool {
    lookup(name).is_some_and(|(p, _)| p.has(flags::SENSITIVE))
}

impl Config {
    /// A configuration for tests: loopback, a free port, no `save` points, and a `dir` of its
    /// own (a fresh path under the system temp directory, made on the first save and removed
    /// when the server stops), so SAVE or BGSAVE never write into the working directory and a
    /// server never loads another's file; everything else default (Redis's).
    ///
    /// ```
    /// let server = resplock::BlockingServer::start(resplock::Config::ephemeral())?;
    /// assert!(server.local_addr().ip().is_loopback());
    /// assert_ne!(server.local_addr().port(), 0); // a free port was picked
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn ephemeral() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Config {
            port: 0,
            bind: "127.0.0.1".into(),
            save: String::new(),
            dir: Some(
                std::env::temp_dir()
                    .join(format!("{EPHEMERAL_DIR_PREFIX}{}-{n}", std::process::id())),
            ),
            ..Config::default()
        }
    }

    /// Whether `dir` is one [`Config::ephemeral`] made up (the server removes it at stop).
    ///
    /// ```
    /// assert!(resplock::Config::ephemeral().has_ephemeral_dir());
    /// assert!(!resplock::Config::default().has_ephemeral_dir());
    /// ```
    pub fn has_ephemeral_dir(&self) -> bool {
        self.dir.as_ref().is_some_and(|d| {
            d.parent() == Some(std::env::temp_dir().as_path())
                && d.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(EPHEMERAL_DIR_PREFIX))
        })
    }

    /// The same configuration with the server's clock frozen from its start, so a test's TTL
    /// boundaries do not depend on how long the test takes: time moves only by the server
    /// handle's `advance` and `set_time` (or `RESPLOCK.CLOCK`). It starts at the real time of
    /// the start; the handle's `resume` lets it run.
    ///
    /// ```
    /// use std::time::Duration;
    /// let server = resplock::BlockingServer::start(resplock::Config::ephemeral().frozen())?;
    /// server.db(0).set("lock:a", "owner-1");
    /// server.db(0).set_ttl("lock:a", Duration::from_secs(30));
    /// std::thread::sleep(Duration::from_millis(20));
    /// server.db(0).assert_ttl("lock:a", Duration::from_secs(30)); // no time passed
    /// server.advance(Duration::from_secs(30));
    /// server.db(0).assert_ttl("lock:a", Duration::ZERO); // due, not yet past
    /// server.advance(Duration::from_millis(1));
    /// server.db(0).assert_missing("lock:a");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn frozen(self) -> Self {
        Config {
            start_frozen: true,
            ..self
        }
    }

    /// (hard limit bytes, soft limit bytes, soft seconds) of a client-output-buffer-limit
    /// class ("normal", "slave", "pubsub"); 0 means no limit. (0, 0, 0) for an unknown class.
    ///
    /// ```
    /// let config = resplock::Config::default();
    /// assert_eq!(config.output_buffer_limit("pubsub"), (32 << 20, 8 << 20, 60));
    /// ```
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

    /// The `bind` addresses, in order (empty: none).
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// config.set_many(&[(b"bind", b"127.0.0.1 ::1")]).unwrap();
    /// assert_eq!(config.bind_addresses(), vec!["127.0.0.1", "::1"]);
    /// ```
    pub fn bind_addresses(&self) -> Vec<&str> {
        self.bind.split(' ').filter(|a| !a.is_empty()).collect()
    }

    /// maxmemory-clients as Redis stores it: bytes, or a percentage of maxmemory kept negated
    /// (`-7` for `7%`); 0 turns client eviction off.
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// assert_eq!(config.maxmemory_clients(), 0);
    /// config.set_many(&[(b"maxmemory-clients", b"7%")]).unwrap();
    /// assert_eq!(config.maxmemory_clients(), -7);
    /// ```
    pub fn maxmemory_clients(&self) -> i64 {
        let (p, _) = lookup(b"maxmemory-clients").expect("a Redis parameter");
        self.value(p).int()
    }

    /// tracking-table-max-keys: the most keys the tracking table remembers (0: no limit).
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// assert_eq!(config.tracking_table_max_keys(), 1_000_000);
    /// config.set_many(&[(b"tracking-table-max-keys", b"10")]).unwrap();
    /// assert_eq!(config.tracking_table_max_keys(), 10);
    /// ```
    pub fn tracking_table_max_keys(&self) -> usize {
        let (p, _) = lookup(b"tracking-table-max-keys").expect("a Redis parameter");
        self.value(p).int().max(0) as usize
    }

    /// shutdown-on-sigint (`sigint`) or shutdown-on-sigterm as Redis's SHUTDOWN_* bits: 1
    /// SAVE, 2 NOSAVE, 4 NOW, 8 FORCE (0: `default`).
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// config.set_many(&[(b"shutdown-on-sigterm", b"nosave now")]).unwrap();
    /// assert_eq!(config.shutdown_on_signal(false), 2 | 4);
    /// assert_eq!(config.shutdown_on_signal(true), 0);
    /// ```
    pub fn shutdown_on_signal(&self, sigint: bool) -> u32 {
        let name: &[u8] = if sigint {
            b"shutdown-on-sigint"
        } else {
            b"shutdown-on-sigterm"
        };
        let (p, _) = lookup(name).expect("a Redis parameter");
        match self.value(p) {
            Value::Enum(v) => v,
            _ => 0,
        }
    }

    /// A parameter's value in Redis's stored form.
    pub(crate) fn value(&self, p: &Param) -> Value {
        match p.typed {
            Some(t) => (t.get)(self),
            None => match self.others.get(p.name) {
                Some(s) => parse::unformat(p, s),
                None => parse::default_value(p),
            },
        }
    }

    fn store(&mut self, p: &Param, v: Value) {
        match p.typed {
            Some(t) => (t.set)(self, v),
            None => {
                let s = parse::format_value(p, &v);
                self.others.insert(p.name, s);
            }
        }
    }

    /// Mark a node of an in-process cluster: `cluster-enabled` reads `yes` (an immutable
    /// parameter, set as if from the command line).
    pub(crate) fn enable_cluster(&mut self) {
        let (p, _) = lookup(b"cluster-enabled").expect("a Redis parameter");
        let _ = self.set_param(p, &["yes".to_string()], None);
    }

    /// A parameter's value as CONFIG GET prints it.
    pub(crate) fn formatted(&self, p: &Param) -> String {
        parse::format_value(p, &self.value(p))
    }

    /// The value of one parameter (or alias), any case, as CONFIG GET prints it.
    ///
    /// ```
    /// let config = resplock::Config::default();
    /// assert_eq!(config.get("maxmemory-policy").as_deref(), Some("noeviction"));
    /// assert_eq!(config.get("no-such-parameter"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<String> {
        lookup(name.as_bytes()).map(|(p, _)| self.formatted(p))
    }

    /// Parse `args` for `p` and store the result; true when the value changed (or `p` is
    /// VOLATILE). Err is Redis's reason text.
    pub(crate) fn set_param(
        &mut self,
        p: &Param,
        args: &[String],
        load: Option<&mut LoadState>,
    ) -> Result<bool, String> {
        let current = self.value(p);
        let base = self.dir.clone().or_else(|| std::env::current_dir().ok());
        let runtime = load.is_none();
        let mut new = parse::parse_value(p, args, &current, load, base.as_deref())?;
        if runtime && p.name == "watchdog-period" {
            // applyWatchdogPeriod: at least two server ticks.
            let min = i64::from(1000 / self.hz.max(1)) * 2;
            if let Value::Int(v) = &mut new {
                if *v != 0 && *v < min {
                    *v = min;
                }
            }
        }
        let changed = p.has(flags::VOLATILE)
            || parse::format_value(p, &new) != parse::format_value(p, &current)
            || new != current;
        self.store(p, new);
        Ok(changed)
    }

    /// `replicaof` follows REPLICAOF at run time (CONFIG GET and CONFIG REWRITE show the
    /// master being followed, empty for a master), as Redis's value is its masterhost.
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// config.set_replicaof(Some(("127.0.0.1", 6380)));
    /// assert_eq!(config.get("replicaof").as_deref(), Some("127.0.0.1 6380"));
    /// config.set_replicaof(None);
    /// assert_eq!(config.get("replicaof").as_deref(), Some(""));
    /// ```
    pub fn set_replicaof(&mut self, master: Option<(&str, u16)>) {
        let Some((p, _)) = lookup(b"replicaof") else {
            return;
        };
        let args = match master {
            Some((host, port)) => vec![host.to_string(), port.to_string()],
            None => vec!["no".to_string(), "one".to_string()],
        };
        let _ = self.set_param(p, &args, None);
    }

    /// The files of node `n` (from 1) of a group in one process (`--instances`, `--cluster`):
    /// its RDB file and AOF directory get the number before the extension (`dump-2.rdb`,
    /// `appendonlydir-2`), so nodes sharing `dir` each restart with their own dataset, as
    /// redis-server processes with their own directories would.
    pub(crate) fn number_files(&mut self, n: usize) {
        for name in ["dbfilename", "appenddirname"] {
            let Some((p, _)) = lookup(name.as_bytes()) else {
                continue;
            };
            let v = self.formatted(p);
            if v.is_empty() {
                continue;
            }
            let numbered = match v.rfind('.').filter(|&i| i > 0) {
                Some(i) => format!("{}-{n}{}", &v[..i], &v[i..]),
                None => format!("{v}-{n}"),
            };
            // A numbered name of a valid name is valid.
            let _ = self.set_param(p, &[numbered], None);
        }
    }

    /// CONFIG GET with one or more glob patterns (Redis 7.0 takes several): (name, value)
    /// pairs as redis-server answers them. An exact name (no `*?[`) is looked up in any
    /// case and echoed as given, hidden parameters included; a pattern matches primary names
    /// and aliases case-insensitively, hidden ones excluded. A parameter appears once.
    ///
    /// Order: redis-server answers in the order of a hash table seeded at random on every
    /// start, so no order is promised; resplock gives each pattern's matches in turn, in
    /// `PARAMS` order (Redis's config.c declaration order, an alias right after its name).
    ///
    /// ```
    /// let config = resplock::Config::default();
    /// let got = config.get_matching(&[b"maxmemory-p*"]);
    /// assert_eq!(got, vec![("maxmemory-policy".to_string(), "noeviction".to_string())]);
    /// ```
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let mut seen: HashSet<String> = HashSet::new();
        let mut out: Vec<(String, &'static Param)> = Vec::new();
        for pat in patterns {
            if !pat.iter().any(|c| matches!(c, b'[' | b'*' | b'?')) {
                let key = String::from_utf8_lossy(pat).to_ascii_lowercase();
                if seen.contains(&key) {
                    continue;
                }
                if let Some((p, _)) = lookup(pat) {
                    seen.insert(key);
                    out.push((String::from_utf8_lossy(pat).into_owned(), p));
                }
                continue;
            }
            let glob = crate::glob::Glob::new(pat, true);
            for (name, p) in table::entries() {
                if p.has(flags::HIDDEN) || seen.contains(name) {
                    continue;
                }
                if glob.matches(name.as_bytes()) {
                    seen.insert(name.to_string());
                    out.push((name.to_string(), p));
                }
            }
        }
        out.into_iter()
            .map(|(name, p)| (name, self.formatted(p)))
            .collect()
    }

    /// CONFIG SET of several pairs, all or nothing, as redis-server 7.0's `configSetCommand`,
    /// for a client that is not local (PROTECTED parameters are refused unless
    /// `enable-protected-configs yes`). See [`Config::set_many_from`].
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// let changed = config.set_many(&[(b"maxmemory", b"100mb")]).unwrap();
    /// assert_eq!(changed, vec!["maxmemory"]);
    /// assert_eq!(config.get("maxmemory").as_deref(), Some("104857600"));
    /// assert!(config.set_many(&[(b"maxmemory", b"lots")]).is_err());
    /// ```
    pub fn set_many(&mut self, pairs: &[(&[u8], &[u8])]) -> Result<Vec<&'static str>, String> {
        self.set_many_from(pairs, false)
    }

    /// CONFIG SET of several pairs for a client connected locally or not (`enable-protected-configs
    /// local` lets local clients set `dir` and `dbfilename`).
    ///
    /// Every name is looked up first: the first unknown name fails the command with
    /// `ERR Unknown option or number of arguments for CONFIG SET - 'name'`, unless an
    /// immutable, protected or duplicated name came before it; those fail with
    /// `ERR CONFIG SET failed (possibly related to argument 'name') - reason`, the name as
    /// the client spelled it. Then the values are set in order on a copy; the first invalid
    /// one fails the command naming the parameter (or alias) it set, and `self` is left as it
    /// was. MULTI_ARG values are split on single spaces, as Redis does.
    ///
    /// Ok lists the primary names whose value changed, in argument order, once each: the
    /// caller applies them (re-listen on a new port, reload TLS files...) and restores the
    /// previous Config if that fails, as Redis's apply functions do.
    ///
    /// ```
    /// let mut config = resplock::Config::default();
    /// // enable-protected-configs is `no` by default: protected parameters are refused.
    /// assert!(config.set_many_from(&[(b"dir", b"/tmp")], true).is_err());
    /// assert!(config.set_many_from(&[(b"maxmemory", b"1mb")], false).is_ok());
    /// ```
    pub fn set_many_from(
        &mut self,
        pairs: &[(&[u8], &[u8])],
        client_is_local: bool,
    ) -> Result<Vec<&'static str>, String> {
        self.set_many_while(pairs, client_is_local, false)
    }

    /// [`Config::set_many_from`] on a server that may be loading its dataset: then a
    /// parameter that cannot change meanwhile (`dir`, `appendonly`...) fails the command
    /// with -LOADING, which Redis gives precedence over a plain error.
    pub(crate) fn set_many_while(
        &mut self,
        pairs: &[(&[u8], &[u8])],
        client_is_local: bool,
        loading: bool,
    ) -> Result<Vec<&'static str>, String> {
        let protected_ok = ProtectedAction::from_value(
            self.value(lookup(b"enable-protected-configs").expect("row").0)
                .enumeration(),
        )
        .allows(client_is_local);
        let mut found: Vec<(&'static Param, &'static str)> = Vec::new();
        let mut failure: Option<String> = None;
        for (name, _) in pairs {
            let Some((p, entry)) = lookup(name) else {
                if failure.is_none() {
                    failure = Some(format!(
                        "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                        String::from_utf8_lossy(name)
                    ));
                }
                continue;
            };
            if failure.is_some() {
                continue;
            }
            let why = if p.has(flags::IMMUTABLE) {
                Some("can't set immutable config")
            } else if p.has(flags::PROTECTED) && !protected_ok {
                Some("can't set protected config")
            } else if loading && p.has(flags::DENY_LOADING) {
                failure = Some(crate::error::LOADING.into());
                continue;
            } else if found
                .iter()
                .any(|(q, e)| std::ptr::eq(*q, p) && *e == entry)
            {
                Some("duplicate parameter")
            } else {
                None
            };
            if let Some(why) = why {
                failure = Some(set_failed(&String::from_utf8_lossy(name), why));
                continue;
            }
            found.push((p, entry));
        }
        if let Some(f) = failure {
            return Err(f);
        }
        let mut next = self.clone();
        let mut changed: Vec<&'static str> = Vec::new();
        for ((p, entry), (_, value)) in found.iter().zip(pairs) {
            let value = String::from_utf8_lossy(value).into_owned();
            let args: Vec<String> = if p.multi_arg() {
                if value.is_empty() {
                    Vec::new()
                } else {
                    value.split(' ').map(String::from).collect()
                }
            } else {
                vec![value]
            };
            let did = next
                .set_param(p, &args, None)
                .map_err(|why| set_failed(entry, &why))?;
            if did && !changed.contains(&p.name) {
                changed.push(p.name);
            }
        }
        *self = next;
        Ok(changed)
    }
}

impl Config {
    /// The process title `proc-title-template` gives for a server run as `title` (Redis's
    /// `{title}`, its command's first word), or None when `set-proc-title` is off.
    ///
    /// ```
    /// let mut c = resplock::Config::default();
    /// assert_eq!(c.proc_title("resplock", false).unwrap(), "resplock *:6379");
    /// c.set_many(&[(b"proc-title-template", b"{title} {listen-addr} {port} {config-file}")])
    ///     .unwrap();
    /// assert_eq!(c.proc_title("resplock", false).unwrap(), "resplock *:6379 6379 -");
    /// ```
    pub fn proc_title(&self, title: &str, cluster: bool) -> Option<String> {
        if self.get("set-proc-title").as_deref() != Some("yes") {
            return None;
        }
        let template = self.get("proc-title-template")?;
        table::expand_template(&template, &|name| {
            Some(match name {
                "title" => title.to_string(),
                "listen-addr" => {
                    if self.port != 0 || self.tls_port != 0 {
                        let first = self.bind.split(' ').find(|a| !a.is_empty()).unwrap_or("*");
                        let port = if self.port != 0 {
                            self.port
                        } else {
                            self.tls_port
                        };
                        format!("{first}:{port}")
                    } else {
                        format!("unixsocket:{}", self.unixsocket.as_deref().unwrap_or(""))
                    }
                }
                "server-mode" => if cluster { "[cluster]" } else { "" }.to_string(),
                "config-file" => self
                    .config_file
                    .as_ref()
                    .map_or("-".to_string(), |p| p.display().to_string()),
                "port" => self.port.to_string(),
                "tls-port" => self.tls_port.to_string(),
                "unixsocket" => self.unixsocket.clone().unwrap_or_default(),
                _ => return None,
            })
        })
    }
}

fn set_failed(name: &str, why: &str) -> String {
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}")
}

#[cfg(test)]
mod tests;
