//! Locks that survive a restart: the binary started, stopped and killed as a lock server is,
//! with Redis's persistence settings (`save` points, `appendonly` with each `appendfsync`),
//! and its files read back at start.
//!
//! With `PERSIST_REDIS_SERVER=/path/to/redis-server` (7.0.15; CI sets it) the same files are
//! crossed with a real redis-server in both directions: an RDB file and an AOF directory
//! written by one server load in the other with every key, value and expiry time equal.

use redis::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "resplock-persist-{tag}-{}-{}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process (resplock, or redis-server for the cross checks) on a loopback port,
/// logging to `log` in its directory.
struct Proc {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Proc {
    /// Start `bin` with `--dir dir` and `args`; wait (at most 10 s) until it answers PING
    /// (its dataset loaded).
    fn start(bin: &str, dir: &Path, log: &str, args: &[&str]) -> Proc {
        let port = free_port();
        let log = dir.join(log);
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", dir.to_str().unwrap()])
            .args(["--logfile", log.to_str().unwrap()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let mut p = Proc { child, port, log };
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut c) = p.try_conn() {
                if matches!(redis::cmd("PING").query::<String>(&mut c), Ok(s) if s == "PONG") {
                    return p;
                }
            }
            if let Ok(Some(st)) = p.child.try_wait() {
                panic!("server exited at start ({st}): {}", p.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "server not ready: {}",
                p.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn try_conn(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?.get_connection()
    }

    fn conn(&self) -> redis::Connection {
        self.try_conn().expect("connect")
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SHUTDOWN with `args`, then wait for the process to end.
    fn shutdown(mut self, args: &[&str]) -> String {
        let mut c = self.conn();
        let _ = redis::cmd("SHUTDOWN").arg(args).query::<Value>(&mut c);
        self.wait_exit();
        self.log_text()
    }

    /// SIGKILL, as a crash or an OOM killer does.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st;
            }
            assert!(Instant::now() < deadline, "server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn resplock() -> &'static str {
    env!("CARGO_BIN_EXE_resplock")
}

fn q<T: redis::FromRedisValue>(c: &mut redis::Connection, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The dataset of a lock server and then some: a lock with a TTL, a Redisson-style hash lock,
/// and one value of each other type in its small and large encodings, in two databases.
fn build(c: &mut redis::Connection) {
    let cmds: &[&[&str]] = &[
        &["SET", "lock:order-42", "owner-1", "NX", "PX", "600000"],
        &["HSET", "lock:redisson", "client-7:1", "1"],
        &["PEXPIRE", "lock:redisson", "300000"],
        &["SET", "counter", "12345"],
        &["SET", "plain", "no expiry"],
        &["RPUSH", "list", "a", "b", "1", "2"],
        &["SADD", "intset", "1", "2", "3"],
        &["SADD", "set", "x", "y", "z"],
        &["ZADD", "zset", "1", "a", "2.5", "b"],
        &["HSET", "hash", "f1", "v1", "f2", "v2"],
        &["SELECT", "3"],
        &["SET", "lock:db3", "owner-3", "EX", "1000"],
        &["SELECT", "0"],
    ];
    for args in cmds {
        let _: Value = q(c, args);
    }
    let big: Vec<String> = (0..300).map(|i| format!("member-{i}")).collect();
    let mut cmd = redis::cmd("SADD");
    cmd.arg("bigset").arg(&big);
    let _: Value = cmd.query(c).unwrap();
    let mut cmd = redis::cmd("RPUSH");
    cmd.arg("biglist").arg(&big);
    let _: Value = cmd.query(c).unwrap();
    let mut cmd = redis::cmd("ZADD");
    cmd.arg("bigzset");
    for (i, m) in big.iter().enumerate() {
        cmd.arg(i).arg(m);
    }
    let _: Value = cmd.query(c).unwrap();
}

/// Every key of databases 0 and 3, rendered with its type, value (sorted where order is not
/// part of it) and absolute expiry time.
fn contents(c: &mut redis::Connection) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for db in ["0", "3"] {
        let _: Value = q(c, &["SELECT", db]);
        let keys: Vec<String> = q(c, &["KEYS", "*"]);
        for k in keys {
            let t: String = q(c, &["TYPE", &k]);
            let v = match t.as_str() {
                "string" => q::<String>(c, &["GET", &k]),
                "list" => q::<Vec<String>>(c, &["LRANGE", &k, "0", "-1"]).join(","),
                "set" => {
                    let mut m: Vec<String> = q(c, &["SMEMBERS", &k]);
                    m.sort();
                    m.join(",")
                }
                "zset" => q::<Vec<String>>(c, &["ZRANGE", &k, "0", "-1", "WITHSCORES"]).join(","),
                "hash" => {
                    let m: BTreeMap<String, String> = q(c, &["HGETALL", &k]);
                    format!("{m:?}")
                }
                "stream" => format!(
                    "{:?} {:?}",
                    q::<Value>(c, &["XRANGE", &k, "-", "+"]),
                    q::<Value>(c, &["XINFO", "GROUPS", &k])
                ),
                other => panic!("type {other}"),
            };
            let at: i64 = q(c, &["PEXPIRETIME", &k]);
            out.insert(format!("{db}/{k}"), format!("{t} {v} @{at}"));
        }
    }
    let _: Value = q(c, &["SELECT", "0"]);
    out
}

/// Equal contents, or a panic naming the keys that differ.
fn assert_same(got: &BTreeMap<String, String>, want: &BTreeMap<String, String>, what: &str) {
    let keys: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    let diff: Vec<String> = keys
        .into_iter()
        .filter(|k| got.get(*k) != want.get(*k))
        .map(|k| format!("{k}: got {:?}, want {:?}", got.get(k), want.get(k)))
        .collect();
    assert!(diff.is_empty(), "{what}:\n{}", diff.join("\n"));
}

#[test]
fn a_lock_survives_shutdown_and_restart_with_save_points() {
    let dir = TempDir::new("save");
    let s = Proc::start(resplock(), &dir.0, "1.log", &["--save", "900 1"]);
    let mut c = s.conn();
    let ok: Option<String> = q(&mut c, &["SET", "lock", "owner-1", "NX", "PX", "600000"]);
    assert_eq!(ok.as_deref(), Some("OK"));
    let changes: String = q(&mut c, &["INFO", "persistence"]);
    assert!(
        changes.contains("rdb_changes_since_last_save:1\r\n"),
        "{changes}"
    );
    let log = s.shutdown(&[]);
    assert!(
        log.contains("Saving the final RDB snapshot before exiting."),
        "{log}"
    );
    assert!(log.contains("DB saved on disk"), "{log}");
    assert!(dir.0.join("dump.rdb").exists());

    let s = Proc::start(resplock(), &dir.0, "2.log", &["--save", "900 1"]);
    let mut c = s.conn();
    let v: Option<String> = q(&mut c, &["GET", "lock"]);
    assert_eq!(v.as_deref(), Some("owner-1"), "{}", s.log_text());
    let ttl: i64 = q(&mut c, &["PTTL", "lock"]);
    assert!(ttl > 500_000 && ttl <= 600_000, "{ttl}");
    // A second SET NX is refused: the lock was not handed out twice.
    let again: Option<String> = q(&mut c, &["SET", "lock", "owner-2", "NX", "PX", "1000"]);
    assert_eq!(again, None);
    let log = s.log_text();
    assert!(
        log.contains("Done loading RDB, keys loaded: 1, keys expired: 0."),
        "{log}"
    );
    assert!(log.contains("DB loaded from disk: "), "{log}");
    s.shutdown(&["NOSAVE"]);
}

#[test]
fn save_bgsave_and_debug_reload_keep_every_type_and_expiry() {
    let dir = TempDir::new("types");
    let s = Proc::start(
        resplock(),
        &dir.0,
        "1.log",
        &["--enable-debug-command", "yes"],
    );
    let mut c = s.conn();
    build(&mut c);
    let before = contents(&mut c);
    let _: String = q(&mut c, &["SAVE"]);
    let _: String = q(&mut c, &["DEBUG", "RELOAD"]);
    assert_same(&contents(&mut c), &before, "after DEBUG RELOAD");
    let last: i64 = q(&mut c, &["LASTSAVE"]);
    let reply: String = q(&mut c, &["BGSAVE"]);
    assert_eq!(reply, "Background saving started");
    let deadline = Instant::now() + Duration::from_secs(10);
    while q::<String>(&mut c, &["INFO", "persistence"]).contains("rdb_bgsave_in_progress:1") {
        assert!(Instant::now() < deadline, "BGSAVE did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(q::<i64>(&mut c, &["LASTSAVE"]) >= last);
    // No save points and SHUTDOWN without SAVE: the BGSAVE's file is what is loaded.
    s.shutdown(&[]);
    let s = Proc::start(resplock(), &dir.0, "2.log", &[]);
    assert_same(&contents(&mut s.conn()), &before, "after a restart");
    s.shutdown(&["NOSAVE"]);
}

#[test]
fn a_corrupt_rdb_file_stops_the_server_with_redis_lines() {
    let dir = TempDir::new("corrupt");
    for (bytes, line) in [
        (
            &b"XEDIS0010"[..],
            "Wrong signature trying to load DB from file",
        ),
        (
            &b"REDIS0010\xfa\x09garbage"[..],
            "Short read or OOM loading DB. Unrecoverable error, aborting now.",
        ),
    ] {
        std::fs::write(dir.0.join("dump.rdb"), bytes).unwrap();
        let log = dir.0.join("bad.log");
        let st = Command::new(resplock())
            .args([
                "--port",
                &free_port().to_string(),
                "--dir",
                dir.0.to_str().unwrap(),
            ])
            .args(["--logfile", log.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(!st.success(), "{text}");
        assert!(text.contains(line), "{text}");
        assert!(!text.contains("Ready to accept connections"), "{text}");
    }
}

#[test]
fn appendonly_reloads_after_shutdown_with_every_fsync_policy() {
    for policy in ["always", "everysec", "no"] {
        let dir = TempDir::new(policy);
        let args = ["--appendonly", "yes", "--appendfsync", policy];
        let s = Proc::start(resplock(), &dir.0, "1.log", &args);
        let mut c = s.conn();
        build(&mut c);
        // A script's effects and an EXPIRE go to the log as what they did.
        let _: Value = q(
            &mut c,
            &[
                "EVAL",
                "redis.call('pexpire', KEYS[1], 5000) return redis.call('incrbyfloat', 'f', '1.5')",
                "1",
                "plain",
            ],
        );
        let before = contents(&mut c);
        s.shutdown(&[]);
        let aofdir = dir.0.join("appendonlydir");
        let manifest = std::fs::read_to_string(aofdir.join("appendonly.aof.manifest")).unwrap();
        assert_eq!(
            manifest,
            "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"
        );
        let incr = std::fs::read(aofdir.join("appendonly.aof.1.incr.aof")).unwrap();
        let text = String::from_utf8_lossy(&incr);
        assert!(
            text.contains("$4\r\nPXAT\r\n"),
            "SET PX is logged with its absolute time"
        );
        assert!(
            text.contains("MULTI\r\n*3\r\n$9\r\nPEXPIREAT\r\n"),
            "{text}"
        );

        let s = Proc::start(resplock(), &dir.0, "2.log", &args);
        assert_same(
            &contents(&mut s.conn()),
            &before,
            &format!("appendfsync {policy}"),
        );
        let log = s.log_text();
        assert!(log.contains("DB loaded from append only file: "), "{log}");
        s.shutdown(&["NOSAVE"]);
    }
}

/// What a client of the durability test was told.
#[derive(Default)]
struct History {
    /// Locks whose acquisition was acknowledged and whose release was not attempted: (key,
    /// owner, a Redisson hash lock).
    held: Vec<(String, String, bool)>,
    /// Locks whose release script answered 1.
    released: Vec<String>,
}

const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
/// Redisson's RedissonLock acquire and unlock scripts (KEYS: lock[, channel]; ARGV: lease,
/// owner / message, lease, owner).
const REDISSON_LOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
const REDISSON_UNLOCK: &str = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;";

/// One client's acquire-then-maybe-release step on lock `i`: a SET NX PX with the Lua
/// compare-and-delete release, or (`redisson`) Redisson's hash lock and unlock scripts. False
/// when the outcome is unknown (the server was killed): the client stops.
fn lock_step(
    c: &mut redis::Connection,
    history: &Mutex<History>,
    key: &str,
    i: u64,
    redisson: bool,
) -> bool {
    let owner = format!("owner-{i}");
    let acquired = if redisson {
        let r: redis::RedisResult<Option<i64>> = redis::cmd("EVAL")
            .arg(REDISSON_LOCK)
            .arg(1)
            .arg(key)
            .arg(600_000)
            .arg(&owner)
            .query(c);
        matches!(r, Ok(None))
    } else {
        let r: redis::RedisResult<Option<String>> = redis::cmd("SET")
            .arg(key)
            .arg(&owner)
            .arg("NX")
            .arg("PX")
            .arg(600_000)
            .query(c);
        matches!(r, Ok(Some(_)))
    };
    if !acquired {
        return false;
    }
    if i.is_multiple_of(2) {
        history
            .lock()
            .unwrap()
            .held
            .push((key.to_string(), owner, redisson));
        return true;
    }
    let r: redis::RedisResult<Option<i64>> = if redisson {
        redis::cmd("EVAL")
            .arg(REDISSON_UNLOCK)
            .arg(2)
            .arg(key)
            .arg(format!("redisson_lock__channel:{{{key}}}"))
            .arg(0)
            .arg(600_000)
            .arg(&owner)
            .query(c)
    } else {
        redis::cmd("EVAL")
            .arg(RELEASE)
            .arg(1)
            .arg(key)
            .arg(&owner)
            .query(c)
    };
    match r {
        Ok(Some(1)) => {
            history.lock().unwrap().released.push(key.to_string());
            true
        }
        // Unknown outcome: the release may or may not have happened.
        _ => false,
    }
}

/// SIGKILL at a random moment under lock traffic (SET NX PX with Lua releases, Redisson hash
/// locks), five times: each restart holds every acquisition a client saw acknowledged and
/// none it saw released. Under every policy the bytes are in the kernel before the reply, so
/// a killed process (unlike a machine losing power) loses none.
fn killed_under_load_loses_no_acknowledged_lock(policy: &str) {
    let dir = TempDir::new(&format!("kill-{policy}"));
    let args = ["--appendonly", "yes", "--appendfsync", policy];
    let history = Arc::new(Mutex::new(History::default()));
    let mut n = 0u64;
    // Bounded: 5 kills, each after at most 300 ms of load.
    for round in 0..5 {
        let s = Proc::start(resplock(), &dir.0, &format!("{round}.log"), &args);
        {
            // Every acknowledged acquisition still held, and no released lock back.
            let mut c = s.conn();
            let h = history.lock().unwrap();
            for (k, owner, redisson) in &h.held {
                if *redisson {
                    let v: Option<String> = q(&mut c, &["HGET", k, owner]);
                    assert_eq!(v.as_deref(), Some("1"), "{policy} round {round}: {k}");
                } else {
                    let v: Option<String> = q(&mut c, &["GET", k]);
                    assert_eq!(
                        v.as_deref(),
                        Some(owner.as_str()),
                        "{policy} round {round}: {k}"
                    );
                }
            }
            for k in &h.released {
                let v: i64 = q(&mut c, &["EXISTS", k]);
                assert_eq!(v, 0, "{policy} round {round}: released {k} came back");
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let workers: Vec<_> = (0..4)
            .map(|w| {
                let stop = stop.clone();
                let history = history.clone();
                let port = s.port;
                let base = n + w * 100_000;
                std::thread::spawn(move || {
                    let Ok(client) = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
                    else {
                        return;
                    };
                    let Ok(mut c) = client.get_connection() else {
                        return;
                    };
                    let redisson = w >= 2;
                    let mut i = base;
                    while !stop.load(Ordering::Relaxed) && i < base + 5_000 {
                        i += 1;
                        let key = format!("lock:{round}:{w}:{i}");
                        if !lock_step(&mut c, &history, &key, i, redisson) {
                            return;
                        }
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100 + fastrand::u64(..200)));
        s.kill();
        stop.store(true, Ordering::Relaxed);
        for w in workers {
            w.join().unwrap();
        }
        n += 1_000_000;
    }
    let h = history.lock().unwrap();
    let hashes = h.held.iter().filter(|e| e.2).count();
    assert!(
        h.held.len() > 10 && h.released.len() > 10 && hashes > 5,
        "the load ran: {} held ({hashes} hash locks), {} released",
        h.held.len(),
        h.released.len()
    );
}

#[test]
fn appendfsync_always_loses_no_acknowledged_lock_when_killed_under_load() {
    killed_under_load_loses_no_acknowledged_lock("always");
}

#[test]
fn appendfsync_everysec_loses_no_acknowledged_lock_when_the_process_is_killed() {
    killed_under_load_loses_no_acknowledged_lock("everysec");
}

#[test]
fn appendfsync_always_acknowledges_many_concurrent_clients_and_reloads_all_their_locks() {
    let dir = TempDir::new("many");
    let args = ["--appendonly", "yes", "--appendfsync", "always"];
    let s = Proc::start(resplock(), &dir.0, "1.log", &args);
    // Bounded: 40 clients, 25 acquisitions each, every other one released; they start
    // together so that many wait for the log at once.
    const CLIENTS: usize = 40;
    const EACH: usize = 25;
    let start = Arc::new(std::sync::Barrier::new(CLIENTS));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|w| {
            let start = start.clone();
            let port = s.port;
            std::thread::spawn(move || {
                let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
                let mut c = client.get_connection().unwrap();
                start.wait();
                let mut held = Vec::new();
                for i in 0..EACH {
                    let key = format!("lock:{w}:{i}");
                    let owner = format!("owner-{w}-{i}");
                    let r: Option<String> = redis::cmd("SET")
                        .arg(&key)
                        .arg(&owner)
                        .arg("NX")
                        .arg("PX")
                        .arg(600_000)
                        .query(&mut c)
                        .unwrap();
                    assert_eq!(r.as_deref(), Some("OK"), "{key}");
                    if i % 2 == 0 {
                        held.push((key, owner));
                    } else {
                        let r: i64 = redis::cmd("EVAL")
                            .arg(RELEASE)
                            .arg(1)
                            .arg(&key)
                            .arg(&owner)
                            .query(&mut c)
                            .unwrap();
                        assert_eq!(r, 1, "{key}");
                    }
                }
                held
            })
        })
        .collect();
    let held: Vec<(String, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(held.len(), CLIENTS * EACH.div_ceil(2));
    // Killed without a chance to write anything more: what was acknowledged is in the log.
    s.kill();
    let s = Proc::start(resplock(), &dir.0, "2.log", &args);
    let mut c = s.conn();
    let keys: i64 = q(&mut c, &["DBSIZE"]);
    assert_eq!(keys as usize, held.len());
    for (k, owner) in &held {
        let v: Option<String> = q(&mut c, &["GET", k]);
        assert_eq!(v.as_deref(), Some(owner.as_str()), "{k}");
    }
    s.shutdown(&["NOSAVE"]);
}

/// Cross checks with a real redis-server: only with PERSIST_REDIS_SERVER set.
fn redis_server() -> Option<String> {
    std::env::var("PERSIST_REDIS_SERVER")
        .ok()
        .filter(|s| !s.is_empty())
}

/// Build the dataset in `from`, stop it (SHUTDOWN SAVE, or with the AOF on its last write
/// synced), start `to` on the same directory with `args`: same contents.
fn cross(from: &str, to: &str, args: &[&str], what: &str) {
    let dir = TempDir::new("cross");
    let s = Proc::start(from, &dir.0, "from.log", args);
    let mut c = s.conn();
    build(&mut c);
    let before = contents(&mut c);
    let shut: &[&str] = if args.is_empty() { &["SAVE"] } else { &[] };
    s.shutdown(shut);
    let s = Proc::start(to, &dir.0, "to.log", args);
    assert_same(&contents(&mut s.conn()), &before, what);
    s.shutdown(&["NOSAVE"]);
}

#[test]
fn redis_server_and_resplock_load_each_others_rdb_files() {
    let Some(redis) = redis_server() else { return };
    cross(
        resplock(),
        &redis,
        &[],
        "redis-server loading resplock's dump.rdb",
    );
    cross(
        &redis,
        resplock(),
        &[],
        "resplock loading redis-server's dump.rdb",
    );
}

#[test]
fn redis_server_and_resplock_load_each_others_aof_directories() {
    let Some(redis) = redis_server() else { return };
    for preamble in ["yes", "no"] {
        let args = ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble];
        cross(
            resplock(),
            &redis,
            &args,
            "redis-server loading resplock's AOF",
        );
        cross(
            &redis,
            resplock(),
            &args,
            "resplock loading redis-server's AOF",
        );
    }
}
