//! The test backend's controls, without a client: direct access to the data (miniredis's
//! `Set`/`Get`/`Dump`/`Check*`), the clock, faults, snapshots and simulated restarts, and
//! counters. [`ServerHandle`](super::ServerHandle) and [`BlockingServer`](super::BlockingServer)
//! both dereference to a [`Backend`], so `server.advance(..)` and `server.db(0).get(..)` work on
//! either. Every operation runs holding the server lock, like a command.

use crate::cmd::runtime::fault_table::{Action, Target};
use crate::cmd::testctl::dataset::{self, Restore};
use crate::cmd::ServerState;
use crate::keyspace::Snapshot;
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod db;
pub use db::Db;

/// Controls of one running server (see the module documentation).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
/// let server = resplock::start(resplock::Config::ephemeral()).await?;
/// server.db(0).set("lock:a", "owner-1");
/// server.db(0).set_ttl("lock:a", std::time::Duration::from_secs(30));
/// server.advance(std::time::Duration::from_secs(31));
/// server.db(0).assert_missing("lock:a");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Backend {
    state: Arc<ServerState>,
}

/// What a simulated [`Backend::restart`] comes back with.
///
/// ```
/// use resplock::Restart;
/// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// server.db(0).set("lock:a", "owner-1");
/// server.restart(Restart::Keep); // connections and scripts go, the data stays
/// server.db(0).assert_value("lock:a", "owner-1");
/// server.restart(Restart::Empty); // a restart without persistence
/// assert_eq!(server.dump(), "");
/// ```
#[derive(Clone, Debug)]
pub enum Restart {
    /// No data: a restart without persistence.
    Empty,
    /// The data as it is (connections and the script cache still go).
    Keep,
    /// An older copy from [`Backend::snapshot`]: the writes made since are lost, as in a
    /// failover to a replica that had not received them.
    From(Arc<Snapshot>),
}

/// Which commands a fault from [`Backend::fail`] or [`Backend::delay`] hits
/// ([`Hit::command`] and [`Hit::matching`] build the two kinds that take a name).
///
/// ```
/// use resplock::Hit;
/// use std::io::{BufRead, BufReader, Write};
/// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// server.fail(Hit::matching("*set*"), "ERR injected", None);
/// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
/// c.write_all(b"HSET h f v\r\nGET k\r\n").unwrap();
/// let mut lines = BufReader::new(c).lines().map(Result::unwrap);
/// assert_eq!(lines.next().unwrap(), "-ERR injected"); // HSET matches `*set*`
/// assert_eq!(lines.next().unwrap(), "$-1"); // GET does not
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hit {
    /// Every command.
    All,
    /// One command by name (`set`, `eval`, `client|kill`).
    Command(String),
    /// Commands whose name matches a glob (`*set*`).
    Matching(String),
    /// Every command of one client (its CLIENT ID).
    Client(u64),
}

impl Hit {
    /// One command by name, any case (`"set"`, `"client|kill"`).
    ///
    /// ```
    /// assert_eq!(resplock::Hit::command("SET"), resplock::Hit::Command("SET".into()));
    /// ```
    pub fn command(name: &str) -> Hit {
        Hit::Command(name.to_string())
    }

    /// Commands whose name matches a glob pattern (`"*set*"`).
    ///
    /// ```
    /// assert_eq!(resplock::Hit::matching("h*"), resplock::Hit::Matching("h*".into()));
    /// ```
    pub fn matching(pattern: &str) -> Hit {
        Hit::Matching(pattern.to_string())
    }
}

impl Backend {
    pub(super) fn new(state: Arc<ServerState>) -> Self {
        Backend { state }
    }

    /// The server's state, for the controls defined in the other files of `server`.
    pub(super) fn server_state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// Database `index` (0..databases), for direct reads and writes.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(1).set("k", "v");
    /// assert_eq!(server.db(1).get("k").as_deref(), Some(&b"v"[..]));
    /// ```
    pub fn db(&self, index: usize) -> Db {
        assert!(
            index < self.state.keyspace.databases(),
            "resplock: no database {index} (the server has {})",
            self.state.keyspace.databases()
        );
        Db {
            state: self.state.clone(),
            index,
        }
    }

    /// Every key of every database with its value and time to live, one line each, sorted:
    /// `db0 "lock:a" "owner-1" ttl=29999ms`. Meant for `assert_eq!` and failure messages.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("a", "1");
    /// assert_eq!(server.dump(), "db0 \"a\" \"1\"\n");
    /// ```
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for i in 0..self.state.keyspace.databases() {
            out.push_str(&self.db(i).dump());
        }
        out
    }

    /// Remove every key of every database.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("a", "1");
    /// server.db(3).set("b", "2");
    /// server.flush_all();
    /// assert_eq!(server.dump(), "");
    /// ```
    pub fn flush_all(&self) {
        crate::cmd::testctl::direct::run(&self.state, 0, &[Bytes::from_static(b"FLUSHALL")]);
    }

    // ------------------------------------------------------------------------- the clock

    /// The server's time, Unix milliseconds.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.freeze();
    /// let t = server.now_ms();
    /// server.advance(std::time::Duration::from_millis(250));
    /// assert_eq!(server.now_ms(), t + 250);
    /// ```
    pub fn now_ms(&self) -> i64 {
        self.state.clock.now_ms()
    }

    /// Move the server's clock forward (miniredis's `FastForward`): TTLs run out, expired
    /// keys go at once (with their `expired` events), blocked clients' timeouts fire.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("lease", "w1");
    /// server.db(0).set_ttl("lease", std::time::Duration::from_secs(10));
    /// server.advance(std::time::Duration::from_millis(10_001));
    /// server.db(0).assert_missing("lease");
    /// ```
    pub fn advance(&self, by: Duration) {
        let ms = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.move_clock("advance", |c| c.advance_ms(ms));
    }

    /// Set the server's clock to `at` (miniredis's `SetTime`); it keeps running from there
    /// unless frozen.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.set_time(std::time::UNIX_EPOCH + std::time::Duration::from_secs(4_102_444_800));
    /// assert_eq!(server.now_ms() / 1000, 4_102_444_800);
    /// ```
    pub fn set_time(&self, at: SystemTime) {
        let ms = match at.duration_since(UNIX_EPOCH) {
            Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
        };
        self.move_clock("set", |c| c.set_ms(ms));
    }

    /// Stop the server's clock: time moves only by [`Backend::advance`] and
    /// [`Backend::set_time`]. The script time limit (BUSY) still runs on real time.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.freeze();
    /// let t = server.now_ms();
    /// std::thread::sleep(std::time::Duration::from_millis(5));
    /// assert_eq!(server.now_ms(), t);
    /// ```
    pub fn freeze(&self) {
        crate::cmd::testctl::direct::locked(&self.state, || dataset::freeze_clock(&self.state));
    }

    /// Let a frozen clock run again, from where it stands.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.freeze();
    /// server.resume();
    /// let t = server.now_ms();
    /// std::thread::sleep(std::time::Duration::from_millis(5));
    /// assert!(server.now_ms() > t);
    /// ```
    pub fn resume(&self) {
        crate::cmd::testctl::direct::locked(&self.state, || dataset::resume_clock(&self.state));
    }

    fn move_clock(&self, how: &str, change: impl FnOnce(&crate::clock::Clock)) {
        crate::cmd::testctl::direct::locked(&self.state, || {
            dataset::move_clock(&self.state, how, change)
        });
    }

    /// A fault set or cleared, for the lock history.
    fn noted(&self, text: String) {
        crate::cmd::testctl::direct::locked(&self.state, || {
            crate::cmd::testctl::faults::noted(&self.state, &text)
        });
    }

    // ---------------------------------------------------------------------------- faults

    /// The next `times` commands `hit` matches (every one with None) fail with `error`
    /// (an error line without the `-`, e.g. `"ERR injected"`); miniredis's `SetError`,
    /// targeted. `times` is a count (`1`) or `None`. Clients read an error's first word as its
    /// code (`ERR`, `READONLY`, `NOSCRIPT`...), so a message that does not start with an
    /// upper-case code gets `ERR ` in front. Returns the rule's id for
    /// [`Backend::clear_fault`].
    ///
    /// ```
    /// use resplock::Hit;
    /// use std::io::{BufRead, BufReader, Write};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.fail(Hit::command("set"), "READONLY You can't write against a read only replica.", 1);
    /// server.fail(Hit::command("get"), "injected", 1); // no code: sent as "ERR injected"
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"SET k v\r\nSET k v\r\nGET k\r\n").unwrap();
    /// let mut lines = BufReader::new(c).lines().map(Result::unwrap);
    /// assert_eq!(lines.next().unwrap(), "-READONLY You can't write against a read only replica.");
    /// assert_eq!(lines.next().unwrap(), "+OK"); // only the first SET was hit
    /// assert_eq!(lines.next().unwrap(), "-ERR injected");
    /// ```
    pub fn fail(&self, hit: Hit, error: &str, times: impl Into<Option<u64>>) -> u64 {
        let line = error.strip_prefix('-').unwrap_or(error);
        assert!(
            !line.is_empty() && !line.contains(['\r', '\n']),
            "resplock: an injected error is one non-empty line"
        );
        let times = times.into();
        self.noted(format!("ERROR {line} {hit:?} COUNT {times:?}"));
        let action = Action::Error(crate::error::with_error_code(line.as_bytes()));
        self.state.faults.add(target(hit), action, times)
    }

    /// Hold the replies of the next `times` commands `hit` matches for `by`.
    ///
    /// ```
    /// use resplock::Hit;
    /// use std::{io::{Read, Write}, time::{Duration, Instant}};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// // Every PING answers 200 ms late (a lock acquisition that outlives its validity).
    /// server.delay(Hit::command("ping"), Duration::from_millis(200), None);
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// let sent = Instant::now();
    /// c.write_all(b"PING\r\n").unwrap();
    /// c.read_exact(&mut [0u8; 7]).unwrap(); // +PONG
    /// assert!(sent.elapsed() >= Duration::from_millis(200));
    /// ```
    pub fn delay(&self, hit: Hit, by: Duration, times: impl Into<Option<u64>>) -> u64 {
        let times = times.into();
        self.noted(format!("DELAY {} {hit:?} COUNT {times:?}", by.as_millis()));
        self.state.faults.add(target(hit), Action::Delay(by), times)
    }

    /// Close the connection of the next `times` requests `hit` matches without running them
    /// (`after_running`: run them, then close before the reply, a write whose reply is lost).
    ///
    /// ```
    /// use resplock::Hit;
    /// use std::io::{Read, Write};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// // The next SET runs, but its client never hears back (a lock it does not know it holds).
    /// server.drop_requests(Hit::command("set"), true, 1);
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"SET lock:a owner-1\r\n").unwrap();
    /// assert_eq!(c.read(&mut [0u8; 16]).unwrap_or(0), 0); // closed without a reply
    /// server.db(0).assert_value("lock:a", "owner-1");
    /// ```
    pub fn drop_requests(
        &self,
        hit: Hit,
        after_running: bool,
        times: impl Into<Option<u64>>,
    ) -> u64 {
        let action = if after_running {
            Action::DropAfter
        } else {
            Action::Drop
        };
        let times = times.into();
        let what = if after_running { "DROP-AFTER" } else { "DROP" };
        self.noted(format!("{what} {hit:?} COUNT {times:?}"));
        self.state.faults.add(target(hit), action, times)
    }

    /// Remove one fault rule by id, or all of them and the pause with None. Returns how many
    /// rules went.
    ///
    /// ```
    /// use resplock::Hit;
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let id = server.fail(Hit::Command("get".into()), "ERR injected", None);
    /// server.fail(Hit::All, "ERR injected", Some(1));
    /// assert_eq!(server.clear_fault(Some(id)), 1);
    /// assert_eq!(server.clear_fault(Some(id)), 0); // already gone
    /// assert_eq!(server.clear_fault(None), 1); // every other fault
    /// ```
    pub fn clear_fault(&self, id: Option<u64>) -> usize {
        self.noted(id.map_or("CLEAR".to_string(), |i| format!("CLEAR {i}")));
        if id.is_none() {
            self.state.faults.unpause();
            self.state.faults.refuse_connections(false);
        }
        self.state.faults.clear(id)
    }

    /// Answer nothing for `d` (connections stay open; requests wait, then run).
    ///
    /// ```
    /// use std::{io::{Read, Write}, time::{Duration, Instant}};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let paused = Instant::now();
    /// server.pause(Duration::from_millis(200)); // a GC pause, a stopped VM
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"PING\r\n").unwrap();
    /// c.read_exact(&mut [0u8; 7]).unwrap(); // +PONG, once the pause is over
    /// assert!(paused.elapsed() >= Duration::from_millis(200));
    /// ```
    pub fn pause(&self, d: Duration) {
        self.noted(format!("PAUSE {}", d.as_millis()));
        self.state.faults.pause(d);
    }

    /// End a [`Backend::pause`] early.
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.pause(std::time::Duration::from_secs(60));
    /// server.unpause();
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"PING\r\n").unwrap();
    /// let mut buf = [0u8; 7];
    /// c.read_exact(&mut buf).unwrap();
    /// assert_eq!(&buf, b"+PONG\r\n");
    /// ```
    pub fn unpause(&self) {
        self.noted("UNPAUSE".into());
        self.state.faults.unpause();
    }

    /// Close every client connection, as a network partition or proxy restart would, except
    /// control connections (those that sent a `RESPLOCK.*` command: a test's way back).
    /// Returns how many were closed.
    ///
    /// ```
    /// use std::io::Read;
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// # while server.connected_clients() == 0 { std::thread::sleep(std::time::Duration::from_millis(1)); }
    /// assert_eq!(server.disconnect_all(), 1);
    /// assert_eq!(server.disconnect_all(), 0); // the one client is already closing
    /// assert_eq!(c.read(&mut [0u8; 16]).unwrap(), 0); // closed by the server
    /// ```
    pub fn disconnect_all(&self) -> usize {
        self.noted("DISCONNECT ALL".into());
        crate::cmd::testctl::faults::disconnect(&self.state, |c| {
            !c.control.load(std::sync::atomic::Ordering::Relaxed)
        })
    }

    /// Close one client's connection (its CLIENT ID); whether it was connected.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// use std::io::{BufRead, BufReader, Write};
    /// let mut c = BufReader::new(std::net::TcpStream::connect(server.local_addr()).unwrap());
    /// c.get_mut().write_all(b"CLIENT ID\r\n").unwrap();
    /// let mut line = String::new();
    /// c.read_line(&mut line).unwrap(); // ":<id>\r\n"
    /// let id: u64 = line.trim()[1..].parse().unwrap();
    /// assert!(server.disconnect_client(id));
    /// assert!(!server.disconnect_client(id)); // already closing: not closed twice
    /// assert_eq!(c.read_line(&mut line).unwrap(), 0); // closed by the server
    /// assert!(!server.disconnect_client(id + 1)); // no such client
    /// ```
    pub fn disconnect_client(&self, id: u64) -> bool {
        self.noted(format!("DISCONNECT ID {id}"));
        crate::cmd::testctl::faults::disconnect(&self.state, |c| c.id == id) == 1
    }

    /// Refuse new connections (`true`), or serve them again (`false`): a connection accepted
    /// meanwhile is closed, without a reply, at its first request. Requests that cannot lock
    /// a test out are still served: `RESPLOCK.*` (so a client can lift the refusal) and the
    /// commands clients send while connecting (HELLO, AUTH, SELECT, CLIENT).
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.refuse_connections(true); // the node is unreachable
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// let _ = c.write_all(b"PING\r\n");
    /// assert_eq!(c.read(&mut [0u8; 16]).unwrap_or(0), 0); // closed, no reply
    /// server.refuse_connections(false);
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"PING\r\n").unwrap();
    /// let mut buf = [0u8; 7];
    /// c.read_exact(&mut buf).unwrap();
    /// assert_eq!(&buf, b"+PONG\r\n");
    /// ```
    pub fn refuse_connections(&self, on: bool) {
        self.noted(format!(
            "REFUSE-CONNECTIONS {}",
            if on { "yes" } else { "no" }
        ));
        self.state.faults.refuse_connections(on);
    }

    // ---------------------------------------------------------- snapshots and restarts

    /// A copy of the whole dataset now, for [`Restart::From`]. It is also kept as the
    /// server's snapshot named `default`, the one a bare `RESPLOCK.SNAPSHOT` takes and
    /// `RESPLOCK.RESTART FROM default` restores over the wire.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("lock:a", "owner-1");
    /// let before = server.snapshot();
    /// assert_eq!(before.len(), 1);
    /// server.db(0).del("lock:a");
    /// server.restart(resplock::Restart::From(before));
    /// server.db(0).assert_value("lock:a", "owner-1");
    /// ```
    pub fn snapshot(&self) -> Arc<Snapshot> {
        crate::cmd::testctl::direct::locked(&self.state, || {
            dataset::take_snapshot(&self.state, dataset::DEFAULT_SNAPSHOT)
        })
    }

    /// Simulate a restart without persistence (miniredis's `Restart`, and its failover
    /// variant): every connection closes, the script cache empties and the data becomes
    /// `with`'s. The address, configuration, clock and fault rules stay.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let before = server.snapshot();
    /// server.db(0).set("lock:a", "owner-1");
    /// server.restart(resplock::Restart::From(before)); // the lock was lost in the failover
    /// server.db(0).assert_missing("lock:a");
    /// ```
    pub fn restart(&self, with: Restart) {
        let (restore, label) = match with {
            Restart::Empty => (Restore::Empty, "empty"),
            Restart::Keep => (Restore::Keep, "keep"),
            Restart::From(s) => (Restore::From(s), "from a snapshot"),
        };
        crate::cmd::testctl::direct::locked(&self.state, || {
            dataset::restart(&self.state, &restore, None, label)
        });
    }

    // -------------------------------------------------------------------------- counters

    /// Commands received since the start (INFO's total_commands_processed).
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let before = server.commands_processed();
    /// let mut c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// c.write_all(b"PING\r\nPING\r\n").unwrap();
    /// c.read_exact(&mut [0u8; 14]).unwrap(); // +PONG twice
    /// assert_eq!(server.commands_processed(), before + 2);
    /// ```
    pub fn commands_processed(&self) -> u64 {
        self.state.stats.total_commands.get()
    }

    /// Connections accepted since the start (INFO's total_connections_received).
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let _c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// # while server.connections_received() == 0 { std::thread::sleep(std::time::Duration::from_millis(1)); }
    /// assert_eq!(server.connections_received(), 1);
    /// ```
    pub fn connections_received(&self) -> u64 {
        self.state.stats.total_connections.load(Ordering::Relaxed)
    }

    /// Clients connected now.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert_eq!(server.connected_clients(), 0);
    /// let c = std::net::TcpStream::connect(server.local_addr()).unwrap();
    /// # while server.connected_clients() == 0 { std::thread::sleep(std::time::Duration::from_millis(1)); }
    /// assert_eq!(server.connected_clients(), 1);
    /// # drop(c);
    /// ```
    pub fn connected_clients(&self) -> usize {
        self.state.clients.lock().len()
    }
}

fn target(hit: Hit) -> Target {
    match hit {
        Hit::All => Target::All,
        Hit::Command(c) => Target::Command(c.to_ascii_lowercase()),
        Hit::Matching(p) => Target::Match(p),
        Hit::Client(id) => Target::Client(id),
    }
}
