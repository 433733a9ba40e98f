//! [`Db`]: one database of a running test backend, read, written and asserted on directly.

use super::*;

/// One database of a running server, read and written directly (no client, no network).
/// The writes are commands run as a client would run them: WATCH, keyspace events and
/// blocked clients see them.
///
/// ```
/// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// let db = server.db(2);
/// db.set("lock:a", "owner-1");
/// db.set_ttl("lock:a", std::time::Duration::from_secs(30));
/// assert_eq!(db.keys(), ["lock:a"]);
/// server.db(0).assert_missing("lock:a"); // another database
/// ```
pub struct Db {
    pub(super) state: Arc<ServerState>,
    pub(super) index: usize,
}

impl Db {
    /// Run any command on this database and return its reply (RESP3-typed). Blocking
    /// commands, subscriptions, MULTI and scripts need a client and get an error reply.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let reply = server.db(0).command(&["HSET", "h", "f", "v"]);
    /// assert_eq!(reply, resplock::Reply::Int(1));
    /// ```
    pub fn command<A: AsRef<[u8]>>(&self, args: &[A]) -> Reply {
        let args: Vec<Bytes> = args
            .iter()
            .map(|a| Bytes::copy_from_slice(a.as_ref()))
            .collect();
        crate::cmd::testctl::direct::run(&self.state, self.index, &args)
    }

    /// SET `key` to `value` (no expiry).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("lock:a", "owner-1");
    /// server.db(0).assert_value("lock:a", "owner-1");
    /// ```
    pub fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let r = self.command(&[b"SET".as_slice(), key.as_ref(), value.as_ref()]);
        assert!(!is_error(&r), "resplock: SET failed: {}", show(&r));
    }

    /// The string at `key`; None if it is missing or holds another type.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert_eq!(server.db(0).get("nope"), None);
    /// server.db(0).set("k", "v");
    /// assert_eq!(server.db(0).get("k").as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Option<Bytes> {
        match self.command(&[b"GET".as_slice(), key.as_ref()]) {
            Reply::Bulk(b) => Some(b),
            _ => None,
        }
    }

    /// Delete `key`; whether it existed.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("k", "v");
    /// assert!(server.db(0).del("k"));
    /// assert!(!server.db(0).del("k"));
    /// ```
    pub fn del(&self, key: impl AsRef<[u8]>) -> bool {
        self.command(&[b"DEL".as_slice(), key.as_ref()]) == Reply::Int(1)
    }

    /// Whether `key` exists (and has not expired by the server's clock).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("k", "v");
    /// assert!(server.db(0).exists("k"));
    /// assert!(!server.db(1).exists("k"));
    /// ```
    pub fn exists(&self, key: impl AsRef<[u8]>) -> bool {
        self.command(&[b"EXISTS".as_slice(), key.as_ref()]) == Reply::Int(1)
    }

    /// Time left to live; None if `key` is missing or has no expiry.
    ///
    /// ```
    /// use std::time::Duration;
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.freeze();
    /// server.db(0).set("k", "v");
    /// assert_eq!(server.db(0).ttl("k"), None);
    /// server.db(0).set_ttl("k", Duration::from_secs(30));
    /// assert_eq!(server.db(0).ttl("k"), Some(Duration::from_secs(30)));
    /// ```
    pub fn ttl(&self, key: impl AsRef<[u8]>) -> Option<Duration> {
        match self.command(&[b"PTTL".as_slice(), key.as_ref()]) {
            Reply::Int(ms) if ms >= 0 => Some(Duration::from_millis(ms as u64)),
            _ => None,
        }
    }

    /// Give `key` a time to live (PEXPIRE); whether the key exists.
    ///
    /// ```
    /// use std::time::Duration;
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("lease", "w1");
    /// assert!(server.db(0).set_ttl("lease", Duration::from_secs(10)));
    /// assert!(!server.db(0).set_ttl("missing", Duration::from_secs(10)));
    /// server.advance(Duration::from_secs(11));
    /// server.db(0).assert_missing("lease");
    /// ```
    pub fn set_ttl(&self, key: impl AsRef<[u8]>, ttl: Duration) -> bool {
        let ms = ttl.as_millis().to_string();
        self.command(&[b"PEXPIRE".as_slice(), key.as_ref(), ms.as_bytes()]) == Reply::Int(1)
    }

    /// The keys of this database, sorted.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("b", "2");
    /// server.db(0).set("a", "1");
    /// assert_eq!(server.db(0).keys(), ["a", "b"]);
    /// ```
    pub fn keys(&self) -> Vec<Bytes> {
        let mut keys = match self.command(&[b"KEYS".as_slice(), b"*"]) {
            Reply::Array(ks) | Reply::Set(ks) => ks
                .into_iter()
                .filter_map(|k| match k {
                    Reply::Bulk(b) => Some(b),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        keys.sort();
        keys
    }

    /// Remove every key of this database.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("a", "1");
    /// server.db(1).set("b", "2");
    /// server.db(0).flush();
    /// assert!(!server.db(0).exists("a"));
    /// assert!(server.db(1).exists("b"));
    /// ```
    pub fn flush(&self) {
        self.command(&[b"FLUSHDB".as_slice()]);
    }

    /// Panic with a readable message unless `key` holds the string `expected`.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).command(&["SET", "lock:a", "owner-1", "NX", "PX", "30000"]);
    /// server.db(0).assert_value("lock:a", "owner-1");
    /// ```
    pub fn assert_value(&self, key: impl AsRef<[u8]>, expected: impl AsRef<[u8]>) {
        let key = key.as_ref();
        let r = self.command(&[b"GET".as_slice(), key]);
        let want = Reply::Bulk(Bytes::copy_from_slice(expected.as_ref()));
        assert!(
            r == want,
            "resplock: db{} key {} holds {}, expected {}",
            self.index,
            quote(key),
            show(&r),
            show(&want)
        );
    }

    /// Panic with a readable message if `key` exists.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).assert_missing("lock:a");
    /// ```
    pub fn assert_missing(&self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        if self.exists(key) {
            panic!(
                "resplock: db{} key {} exists, expected none: {}",
                self.index,
                quote(key),
                self.dump_key(key)
            );
        }
    }

    /// Panic with a readable message unless `key`'s time to live is `expected`, to the
    /// millisecond with a frozen clock, within the second below it with a running one.
    ///
    /// ```
    /// use std::time::Duration;
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.freeze();
    /// server.db(0).command(&["SET", "lock:a", "owner-1", "PX", "30000"]);
    /// server.db(0).assert_ttl("lock:a", Duration::from_secs(30));
    /// ```
    pub fn assert_ttl(&self, key: impl AsRef<[u8]>, expected: Duration) {
        let key = key.as_ref();
        let got = self.ttl(key);
        let slack = if self.state.clock.is_frozen() {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        };
        let ok = got.is_some_and(|t| t <= expected && t + slack >= expected);
        assert!(
            ok,
            "resplock: db{} key {} has ttl {:?}, expected {:?}",
            self.index,
            quote(key),
            got,
            expected
        );
    }

    /// This database's part of [`Backend::dump`].
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(2).set("a", "1");
    /// assert_eq!(server.db(2).dump(), "db2 \"a\" \"1\"\n");
    /// ```
    pub fn dump(&self) -> String {
        self.keys()
            .iter()
            .map(|k| format!("{}\n", self.dump_key(k)))
            .collect()
    }

    fn dump_key(&self, key: &[u8]) -> String {
        let kind = match self.command(&[b"TYPE".as_slice(), key]) {
            Reply::Simple(t) => t,
            _ => Bytes::new(),
        };
        let read: &[&[u8]] = match kind.as_ref() {
            b"string" => &[b"GET", key],
            b"list" => &[b"LRANGE", key, b"0", b"-1"],
            b"hash" => &[b"HGETALL", key],
            b"set" => &[b"SMEMBERS", key],
            b"zset" => &[b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"],
            _ => &[b"TYPE", key],
        };
        let mut value = self.command(read);
        if let Reply::Set(items) | Reply::Array(items) = &mut value {
            if kind.as_ref() == b"set" {
                items.sort_by_key(show);
            }
        }
        if let Reply::Map(pairs) = &mut value {
            pairs.sort_by_key(|(k, _)| show(k));
        }
        let ttl = match self.ttl(key) {
            Some(t) => format!(" ttl={}ms", t.as_millis()),
            None => String::new(),
        };
        format!("db{} {} {}{ttl}", self.index, quote(key), show(&value))
    }
}

fn is_error(r: &Reply) -> bool {
    matches!(r, Reply::Error(_))
}

fn quote(b: &[u8]) -> String {
    format!("\"{}\"", b.escape_ascii()).replace("\\'", "'")
}

/// A reply as a test failure shows it: strings quoted, collections bracketed.
fn show(r: &Reply) -> String {
    let list = |items: &[Reply], open: &str, close: &str| {
        let inner: Vec<String> = items.iter().map(show).collect();
        format!("{open}{}{close}", inner.join(", "))
    };
    match r {
        Reply::Simple(s) => String::from_utf8_lossy(s).into_owned(),
        Reply::Error(e) => format!("(error) {}", String::from_utf8_lossy(e)),
        Reply::Int(i) => i.to_string(),
        Reply::Bulk(b) | Reply::Verbatim(b) => quote(b),
        Reply::BigNumber(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Nil | Reply::NilArray => "(nil)".into(),
        Reply::Array(a) | Reply::Push(a) => list(a, "[", "]"),
        Reply::Set(a) => list(a, "{", "}"),
        Reply::Map(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", show(k), show(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Reply::Double(d) => d.to_string(),
        Reply::HumanDouble(d) => d.to_string(),
        Reply::Bool(b) => b.to_string(),
        Reply::NoReply => "(no reply)".into(),
        Reply::Attributed(_, r) => show(r),
    }
}
