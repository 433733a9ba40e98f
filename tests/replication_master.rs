//! resplock as a replication master: a real redis-server 7.0 started with `--replicaof`
//! resplock follows its dataset, writes, expiry, scripts and transactions (compared key by
//! key with DUMP and PTTL), WAIT counts it, and after a dropped link it continues from the
//! backlog (`+CONTINUE`); the old SYNC protocol (what Redis's test harness uses to watch the
//! replication stream) gets the RDB then the commands; a replica that does not read is
//! disconnected at its output-buffer limit while other clients carry on. The tests that
//! need redis-server skip (with a line saying so) when it is not on PATH.

mod common;
use common::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A redis-server replica of `master`, in a directory of its own, killed on drop.
struct Replica {
    child: std::process::Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Replica {
    /// Start `redis-server --replicaof master`; None (the test then skips) if redis-server
    /// is not on PATH.
    fn start(master: SocketAddr) -> Option<Replica> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let dir =
            std::env::temp_dir().join(format!("resplock-replica-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--dir"])
            .arg(&dir)
            .arg("--logfile")
            .arg(dir.join("redis.log"))
            .args(["--replicaof", "127.0.0.1", &master.port().to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        let Ok(child) = child else {
            println!("skipped: redis-server is not on PATH");
            return None;
        };
        let addr = format!("127.0.0.1:{port}").parse().ok()?;
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < until, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Replica { child, addr, dir })
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default()
    }
}

/// A raw connection to any address (the replica is not one of ours).
async fn raw_to(addr: SocketAddr) -> Raw {
    Raw::from_stream(TcpStream::connect(addr).await.expect("connect"))
}

/// The array of bulk strings in a RESP2 reply, sorted.
fn bulks(reply: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = reply;
    assert_eq!(rest[0], b'*', "{:?}", String::from_utf8_lossy(reply));
    let line_end = |b: &[u8]| b.windows(2).position(|w| w == b"\r\n").unwrap();
    let n: usize = std::str::from_utf8(&rest[1..line_end(rest)])
        .unwrap()
        .parse()
        .unwrap();
    rest = &rest[line_end(rest) + 2..];
    for _ in 0..n {
        let e = line_end(rest);
        let len: usize = std::str::from_utf8(&rest[1..e]).unwrap().parse().unwrap();
        out.push(rest[e + 2..e + 2 + len].to_vec());
        rest = &rest[e + 2 + len + 2..];
    }
    out.sort();
    out
}

fn pttl(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// Every key of databases 0 and 1 is on both sides with the same DUMP payload and, within
/// clock skew, the same time to live.
async fn assert_same_dataset(master: &mut Raw, replica: &mut Raw) {
    for db in ["0", "1"] {
        cmd!(master, "SELECT", db);
        cmd!(replica, "SELECT", db);
        let keys = bulks(&cmd!(master, "KEYS", "*"));
        assert_eq!(keys, bulks(&cmd!(replica, "KEYS", "*")), "db {db}'s keys");
        for k in &keys {
            let name = String::from_utf8_lossy(k);
            if cmd!(master, "TYPE", k) == b"+set\r\n" {
                // A set of strings is a hash table, its order each server's own.
                assert_eq!(
                    bulks(&cmd!(master, "SMEMBERS", k)),
                    bulks(&cmd!(replica, "SMEMBERS", k)),
                    "members of {name} in db {db}"
                );
                assert_eq!(
                    cmd!(master, "OBJECT", "ENCODING", k),
                    cmd!(replica, "OBJECT", "ENCODING", k)
                );
                continue;
            }
            if cmd!(master, "TYPE", k) == b"+stream\r\n" {
                // A consumer's seen-time and a group's entries-read are each server's own
                // (Redis propagates neither): entries, IDs and PELs must be equal.
                assert_eq!(
                    cmd!(master, "XRANGE", k, "-", "+"),
                    cmd!(replica, "XRANGE", k, "-", "+"),
                    "entries of {name}"
                );
                assert_eq!(
                    cmd!(master, "XINFO", "STREAM", k),
                    cmd!(replica, "XINFO", "STREAM", k),
                    "XINFO STREAM {name}"
                );
                assert_eq!(
                    cmd!(master, "XPENDING", k, "g"),
                    cmd!(replica, "XPENDING", k, "g"),
                    "pending entries of {name}"
                );
                continue;
            }
            assert_eq!(
                cmd!(master, "DUMP", k),
                cmd!(replica, "DUMP", k),
                "DUMP of {name} in db {db}"
            );
            let (m, r) = (
                pttl(&cmd!(master, "PTTL", k)),
                pttl(&cmd!(replica, "PTTL", k)),
            );
            assert!(
                (m < 0 && m == r) || (m >= 0 && (m - r).abs() < 2000),
                "PTTL of {name}: {m} here, {r} on the replica"
            );
        }
    }
    cmd!(master, "SELECT", "0");
    cmd!(replica, "SELECT", "0");
}

/// A write load covering every type, then the commands whose propagation is rewritten.
async fn dataset(c: &mut Raw) {
    cmd!(c, "SET", "s", "v");
    cmd!(c, "SET", "n", "12345");
    cmd!(c, "SET", "ttl", "v", "EX", "1000");
    cmd!(c, "HSET", "h", "f1", "v1", "f2", "2");
    cmd!(c, "RPUSH", "l", "a", "b", "c", "1");
    cmd!(c, "SADD", "set", "x", "y", "z");
    cmd!(c, "SADD", "ints", "1", "2", "3");
    cmd!(c, "ZADD", "z", "1", "a", "2.5", "b");
    cmd!(c, "XADD", "st", "1-1", "f", "v");
    cmd!(c, "XGROUP", "CREATE", "st", "g", "0");
    cmd!(c, "PFADD", "hll", "a", "b", "c");
    cmd!(c, "SELECT", "1");
    cmd!(c, "SET", "in1", "v", "PX", "500000");
    cmd!(c, "SELECT", "0");
}

async fn writes(c: &mut Raw) {
    cmd!(c, "SET", "s", "v2");
    cmd!(c, "DEL", "n");
    cmd!(c, "EXPIRE", "h", "1000");
    cmd!(c, "INCRBYFLOAT", "f", "1.5");
    cmd!(c, "LPOP", "l");
    cmd!(c, "SPOP", "set");
    cmd!(c, "SADD", "many", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
    cmd!(c, "SPOP", "many", "2");
    cmd!(c, "SPOP", "many", "7");
    cmd!(c, "SPOP", "ints", "5");
    cmd!(c, "XREADGROUP", "GROUP", "g", "c1", "STREAMS", "st", ">");
    // Generated IDs, an approximate trim and group reads (with and without NOACK) reach
    // the replica as the master came to them.
    cmd!(c, "XADD", "st", "*", "f", "v2");
    cmd!(c, "XADD", "st", "99999999999999-*", "f", "v3");
    cmd!(c, "XADD", "auto", "MAXLEN", "~", "2", "*", "f", "v");
    cmd!(c, "XTRIM", "auto", "MAXLEN", "~", "1");
    cmd!(
        c,
        "XREADGROUP",
        "GROUP",
        "g",
        "c2",
        "COUNT",
        "1",
        "STREAMS",
        "st",
        ">"
    );
    cmd!(
        c,
        "XREADGROUP",
        "GROUP",
        "g",
        "c3",
        "NOACK",
        "STREAMS",
        "st",
        ">"
    );
    // A lock script (acquire with a token and a TTL, count the acquisitions): the replica
    // gets its effects.
    let acquire = "if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
                   return redis.call('incr', KEYS[2]) end return 0";
    assert_eq!(
        cmd!(c, "EVAL", acquire, "2", "lock", "acquired", "tok", "30000"),
        b":1\r\n"
    );
    let release = "if redis.call('get', KEYS[1]) == ARGV[1] then \
                   return redis.call('del', KEYS[1]) end return 0";
    cmd!(c, "EVAL", acquire, "2", "lock2", "acquired", "tok", "30000");
    assert_eq!(cmd!(c, "EVAL", release, "1", "lock2", "tok"), b":1\r\n");
    cmd!(c, "MULTI");
    cmd!(c, "SET", "m", "1");
    cmd!(c, "INCR", "m");
    cmd!(c, "HINCRBY", "counts", "a", "2");
    assert_eq!(cmd!(c, "EXEC"), b"*3\r\n+OK\r\n:2\r\n:2\r\n");
    cmd!(c, "SELECT", "1");
    cmd!(c, "SET", "in1b", "w");
    cmd!(c, "SELECT", "0");
    // A key whose time runs out goes on the replica too (the master propagates its DEL).
    cmd!(c, "SET", "short", "v", "PX", "1");
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert_eq!(cmd!(c, "GET", "short"), b"$-1\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_server_replica_follows_the_dataset_writes_scripts_and_transactions() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    dataset(&mut m).await;
    let Some(replica) = Replica::start(s.local_addr()) else {
        s.shutdown().await;
        return;
    };
    let mut r = raw_to(replica.addr).await;
    until_linked(&mut r).await;
    until_caught_up(&mut m, &mut r).await;
    assert_same_dataset(&mut m, &mut r).await;

    writes(&mut m).await;
    // WAIT: the replica acknowledges everything written so far.
    assert_eq!(cmd!(m, "WAIT", "1", "5000"), b":1\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_same_dataset(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "GET", "short"), b"$-1\r\n");

    // The master lists its replica as Redis does.
    let info = cmd!(m, "INFO", "replication");
    assert_eq!(info_field(&info, "connected_slaves").as_deref(), Some("1"));
    let line = info_field(&info, "slave0").unwrap();
    let port = replica.addr.port();
    assert!(
        line.starts_with(&format!("ip=127.0.0.1,port={port},state=online,offset=")),
        "{line}"
    );
    let list = String::from_utf8(cmd!(m, "CLIENT", "LIST", "TYPE", "replica")).unwrap();
    assert!(list.contains(" flags=S "), "{list}");
    // min-replicas-to-write: one good replica is enough, two are not.
    cmd!(m, "CONFIG", "SET", "min-replicas-to-write", "1");
    assert_eq!(cmd!(m, "SET", "guarded", "1"), b"+OK\r\n");
    cmd!(m, "CONFIG", "SET", "min-replicas-to-write", "2");
    assert_eq!(
        cmd!(m, "SET", "guarded", "2"),
        b"-NOREPLICAS Not enough good replicas to write.\r\n"
    );
    cmd!(m, "CONFIG", "SET", "min-replicas-to-write", "0");
    let role = String::from_utf8(cmd!(m, "ROLE")).unwrap();
    assert!(role.starts_with("*3\r\n$6\r\nmaster\r\n:"), "{role}");
    assert!(role.contains(&format!(
        "$9\r\n127.0.0.1\r\n${}\r\n{port}\r\n",
        port.to_string().len()
    )));
    drop(replica);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_link_dropped_continues_from_the_backlog() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    cmd!(m, "SET", "before", "1");
    let Some(replica) = Replica::start(s.local_addr()) else {
        s.shutdown().await;
        return;
    };
    let mut r = raw_to(replica.addr).await;
    until_linked(&mut r).await;
    until_caught_up(&mut m, &mut r).await;
    // The replica drops its link; what is written meanwhile reaches it through the backlog.
    assert_eq!(cmd!(r, "CLIENT", "KILL", "TYPE", "master"), b":1\r\n");
    cmd!(m, "SET", "during", "2");
    until_linked(&mut r).await;
    cmd!(m, "SET", "after", "3");
    assert_eq!(cmd!(m, "WAIT", "1", "5000"), b":1\r\n");
    until_caught_up(&mut m, &mut r).await;
    for k in ["before", "during", "after"] {
        assert_eq!(cmd!(r, "GET", k), cmd!(m, "GET", k), "{k}");
    }
    let log = replica.log();
    assert!(
        log.contains("Successful partial resynchronization with master"),
        "{log}"
    );
    drop(replica);
    s.shutdown().await;
}

/// Read a `$<len>\r\n` bulk (after any keepalive newlines) and return its bytes.
async fn read_rdb(c: &mut TcpStream) -> Vec<u8> {
    let mut head = Vec::new();
    loop {
        let mut b = [0u8; 1];
        c.read_exact(&mut b).await.unwrap();
        if b[0] == b'\n' && head.is_empty() {
            continue;
        }
        head.push(b[0]);
        if head.ends_with(b"\r\n") {
            break;
        }
    }
    assert_eq!(head[0], b'$', "{:?}", String::from_utf8_lossy(&head));
    let len: usize = std::str::from_utf8(&head[1..head.len() - 2])
        .unwrap()
        .parse()
        .unwrap();
    let mut rdb = vec![0u8; len];
    c.read_exact(&mut rdb).await.unwrap();
    rdb
}

/// The next `n` bytes of the stream after any pings (the cron sends one when it first runs,
/// which may be after the replica attached; Redis writes it in lower case).
async fn read_stream(c: &mut TcpStream, n: usize) -> Vec<u8> {
    const PING: &[u8] = b"*1\r\n$4\r\nping\r\n";
    let mut v = read_exactly(c, n).await;
    // replicationCron's PING may come between any two commands (its first tick can fall
    // after the SYNC on a loaded machine): the test is about the commands.
    while let Some(at) = v
        .windows(PING.len())
        .position(|w| w.eq_ignore_ascii_case(PING))
    {
        v.drain(at..at + PING.len());
        v.extend(read_exactly(c, PING.len()).await);
    }
    v
}

async fn read_exactly(c: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    tokio::time::timeout(Duration::from_secs(5), c.read_exact(&mut v))
        .await
        .expect("stream bytes in time")
        .unwrap();
    v
}

#[tokio::test]
async fn sync_sends_the_rdb_then_the_write_commands() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    cmd!(m, "SET", "k", "v");
    let mut sync = TcpStream::connect(s.local_addr()).await.unwrap();
    sync.write_all(b"SYNC\r\n").await.unwrap();
    let rdb = read_rdb(&mut sync).await;
    assert!(rdb.starts_with(b"REDIS0010"), "{:?}", &rdb[..9]);
    assert!(rdb.windows(1).any(|w| w == b"k"), "the RDB holds the key");
    cmd!(m, "SET", "foo", "bar");
    cmd!(m, "SELECT", "2");
    cmd!(m, "DEL", "nothing");
    cmd!(m, "LPUSH", "l", "x");
    let want = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n\
*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*3\r\n$5\r\nLPUSH\r\n$1\r\nl\r\n$1\r\nx\r\n";
    assert_eq!(
        String::from_utf8_lossy(&read_stream(&mut sync, want.len()).await),
        String::from_utf8_lossy(want)
    );
    let info = cmd!(m, "INFO", "replication");
    assert_eq!(info_field(&info, "connected_slaves").as_deref(), Some("1"));
    // A WAIT counts no replica that never acknowledges (the old protocol sends no ACK).
    assert_eq!(cmd!(m, "WAIT", "1", "50"), b":0\r\n");
    drop(sync);
    for _ in 0..200 {
        let info = cmd!(m, "INFO", "replication");
        if info_field(&info, "connected_slaves").as_deref() == Some("0") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    s.shutdown().await;
}

#[tokio::test]
async fn psync_fullresync_then_continue_from_the_offset_it_reached() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    cmd!(m, "CONFIG", "SET", "repl-ping-replica-period", "3600");
    let mut a = TcpStream::connect(s.local_addr()).await.unwrap();
    a.write_all(b"REPLCONF capa psync2\r\nPSYNC ? -1\r\n")
        .await
        .unwrap();
    assert_eq!(read_exactly(&mut a, 5).await, b"+OK\r\n");
    let line = read_exactly(&mut a, 12 + 40 + 4).await;
    let line = String::from_utf8(line).unwrap();
    assert!(
        line.starts_with("+FULLRESYNC ") && line.ends_with(" 0\r\n"),
        "{line}"
    );
    let replid = line[12..52].to_string();
    read_rdb(&mut a).await;
    cmd!(m, "SET", "a", "1");
    let first = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n";
    assert_eq!(read_stream(&mut a, first.len()).await, first);
    let reached: usize = info_field(&cmd!(m, "INFO", "replication"), "master_repl_offset")
        .unwrap()
        .parse()
        .unwrap();
    a.write_all(format!("REPLCONF ACK {reached}\r\n").as_bytes())
        .await
        .unwrap();
    drop(a);
    cmd!(m, "SET", "b", "2");
    let second = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n";
    // It asks for the byte after the last one it got: the backlog holds the rest.
    let mut b = TcpStream::connect(s.local_addr()).await.unwrap();
    b.write_all(format!("REPLCONF capa psync2\r\nPSYNC {replid} {}\r\n", reached + 1).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_exactly(&mut b, 5).await, b"+OK\r\n");
    let cont = format!("+CONTINUE {replid}\r\n");
    assert_eq!(read_exactly(&mut b, cont.len()).await, cont.as_bytes());
    assert_eq!(read_exactly(&mut b, second.len()).await, second);
    // An offset the backlog does not hold is a full resynchronization.
    let mut c = TcpStream::connect(s.local_addr()).await.unwrap();
    c.write_all(format!("PSYNC {replid} 999999\r\n").as_bytes())
        .await
        .unwrap();
    let offset = reached + second.len();
    let full = format!("+FULLRESYNC {replid} {offset}\r\n");
    assert_eq!(read_exactly(&mut c, full.len()).await, full.as_bytes());
    read_rdb(&mut c).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_does_not_read_is_disconnected_at_its_limit_and_others_carry_on() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    assert_eq!(
        cmd!(
            m,
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "replica 1048576 0 0"
        ),
        b"+OK\r\n"
    );
    let mut stuck = TcpStream::connect(s.local_addr()).await.unwrap();
    stuck.write_all(b"SYNC\r\n").await.unwrap();
    read_rdb(&mut stuck).await;
    // It never reads again: its socket buffers fill, then its pending bytes pass the limit.
    let value = vec![b'x'; 64 * 1024];
    let mut gone = false;
    for i in 0..400 {
        assert_eq!(cmd!(m, "SET", format!("k{}", i % 10), &value), b"+OK\r\n");
        let info = cmd!(m, "INFO", "replication");
        if info_field(&info, "connected_slaves").as_deref() == Some("0") {
            gone = true;
            break;
        }
    }
    assert!(gone, "the replica was never disconnected");
    drop(stuck);
    s.shutdown().await;
}

/// A command's RESP encoding, as the replication stream carries it.
fn resp(args: &[&str]) -> String {
    let mut s = format!("*{}\r\n", args.len());
    for a in args {
        s.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s
}

/// ZMPOP, BZMPOP, BZPOPMIN and LMPOP reach replicas as the plain pop of the key they chose,
/// with the number of elements actually popped (Redis rewrites them so that a replica never
/// blocks or picks a key); a blocked pop served by a later push propagates after that push.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_key_and_blocking_pops_propagate_as_the_pop_they_did() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    let mut sync = TcpStream::connect(s.local_addr()).await.unwrap();
    sync.write_all(b"SYNC\r\n").await.unwrap();
    read_rdb(&mut sync).await;
    cmd!(m, "ZADD", "z", "1", "a", "2", "b");
    cmd!(m, "ZMPOP", "2", "nothing", "z", "MIN");
    cmd!(m, "ZMPOP", "1", "z", "MAX", "COUNT", "10");
    cmd!(m, "RPUSH", "l", "x", "y");
    cmd!(m, "LMPOP", "1", "l", "RIGHT", "COUNT", "10");
    let mut waiter = Raw::connect(&s).await;
    waiter
        .send(b"*3\r\n$8\r\nBZPOPMIN\r\n$1\r\nw\r\n$1\r\n0\r\n")
        .await;
    for _ in 0..200 {
        if common::blocked_clients(&mut m).await == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    cmd!(m, "ZADD", "w", "5", "m");
    assert_eq!(
        waiter.reply().await,
        b"*3\r\n$1\r\nw\r\n$1\r\nm\r\n$1\r\n5\r\n"
    );
    let want = [
        resp(&["SELECT", "0"]),
        resp(&["ZADD", "z", "1", "a", "2", "b"]),
        resp(&["ZPOPMIN", "z", "1"]),
        resp(&["ZPOPMAX", "z", "1"]),
        resp(&["RPUSH", "l", "x", "y"]),
        resp(&["RPOP", "l", "2"]),
        resp(&["ZADD", "w", "5", "m"]),
        resp(&["ZPOPMIN", "w"]),
    ]
    .concat();
    assert_eq!(
        String::from_utf8_lossy(&read_stream(&mut sync, want.len()).await),
        want
    );
    s.shutdown().await;
}

/// Keys SCAN and RANDOMKEY find expired are deleted and their DELs reach replicas one by one,
/// never wrapped in MULTI/EXEC (Redis's CMD_TOUCHES_ARBITRARY_KEYS), as active expiry's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_scan_and_randomkey_find_expired_propagate_as_plain_dels() {
    let s = common::server_with_args(&["--enable-debug-command", "yes"]).await;
    let mut m = Raw::connect(&s).await;
    cmd!(m, "DEBUG", "SET-ACTIVE-EXPIRE", "0");
    let mut sync = TcpStream::connect(s.local_addr()).await.unwrap();
    sync.write_all(b"SYNC\r\n").await.unwrap();
    read_rdb(&mut sync).await;
    for (cmd, a, b) in [("SCAN", "s1", "s2"), ("RANDOMKEY", "r1", "r2")] {
        cmd!(m, "SET", a, "v", "PX", "1");
        cmd!(m, "SET", b, "v", "PX", "1");
        s.state().clock.advance_ms(10);
        if cmd == "SCAN" {
            assert_eq!(cmd!(m, "SCAN", "0"), b"*2\r\n$1\r\n0\r\n*0\r\n");
        } else {
            assert_eq!(cmd!(m, "RANDOMKEY"), b"$-1\r\n");
        }
    }
    let stream = String::from_utf8(read_stream(&mut sync, 1).await).unwrap();
    let mut all = stream;
    for _ in 0..100 {
        if all.matches("DEL").count() >= 4 {
            break;
        }
        let more = tokio::time::timeout(Duration::from_millis(50), async {
            let mut b = vec![0u8; 4096];
            let n = sync.read(&mut b).await.unwrap();
            b.truncate(n);
            b
        })
        .await
        .unwrap_or_default();
        all.push_str(&String::from_utf8_lossy(&more));
    }
    assert!(!all.contains("MULTI"), "{all}");
    for k in ["s1", "s2", "r1", "r2"] {
        assert!(all.contains(&resp(&["DEL", k])), "no DEL of {k} in {all}");
    }
    s.shutdown().await;
}

/// PUBLISH and SPUBLISH reach replicas (their subscribers get the message there), also from
/// inside a transaction, though they change no data.
#[tokio::test]
async fn publish_is_replicated_to_replicas() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    let mut sync = TcpStream::connect(s.local_addr()).await.unwrap();
    sync.write_all(b"SYNC\r\n").await.unwrap();
    read_rdb(&mut sync).await;
    cmd!(m, "PUBLISH", "a", "1");
    cmd!(m, "MULTI");
    cmd!(m, "SPUBLISH", "b", "2");
    assert_eq!(cmd!(m, "EXEC"), b"*1\r\n:0\r\n");
    let want = [
        resp(&["SELECT", "0"]),
        resp(&["PUBLISH", "a", "1"]),
        resp(&["SPUBLISH", "b", "2"]),
    ]
    .concat();
    assert_eq!(
        String::from_utf8_lossy(&read_stream(&mut sync, want.len()).await),
        want
    );
    s.shutdown().await;
}

/// The bytes a replica's link took to write and cannot (the replica stopped reading) stay
/// its output buffer: CLIENT LIST's omem, and left out of maxmemory's count
/// (mem_not_counted_for_evict), as Redis's replica buffer is.
#[tokio::test]
async fn a_stuck_replicas_unwritten_stream_is_its_output_buffer_and_not_counted_for_eviction() {
    let s = server().await;
    let mut m = Raw::connect(&s).await;
    let mut stuck = TcpStream::connect(s.local_addr()).await.unwrap();
    stuck.write_all(b"SYNC\r\n").await.unwrap();
    read_rdb(&mut stuck).await;
    let value = vec![b'x'; 64 * 1024];
    let replica_omem = |list: &[u8]| -> u64 {
        let list = String::from_utf8_lossy(list).to_string();
        let line = list
            .lines()
            .find(|l| l.contains(" flags=S "))
            .expect("the replica's link")
            .to_string();
        line.split(" omem=")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let mut omem = 0;
    for i in 0..200 {
        assert_eq!(cmd!(m, "SET", format!("k{}", i % 10), &value), b"+OK\r\n");
        omem = replica_omem(&cmd!(m, "CLIENT", "LIST"));
        if omem > 0 {
            break;
        }
    }
    assert!(omem > 0, "the link never held bytes it could not write");
    let info = cmd!(m, "INFO", "memory");
    let not_counted: u64 = info_field(&info, "mem_not_counted_for_evict")
        .unwrap()
        .parse()
        .unwrap();
    assert!(not_counted >= omem, "{not_counted} < {omem}");
    drop(stuck);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_server_replica_loses_the_keys_that_expired_while_its_master_was_down() {
    let dir = std::env::temp_dir().join(format!("resplock-master-expired-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = |port: u16| {
        let mut c = resplock::Config::ephemeral();
        c.dir = Some(dir.clone());
        c.port = port;
        c
    };
    let s = server_with(config(0)).await;
    let addr = s.local_addr();
    // The master's clock an hour behind: a minute's lease it gives has expired for the
    // restarted master (on the real time); the replica keeps such a key until its master's
    // DEL, as a replica never expires keys itself.
    s.state().clock.advance_ms(-3_600_000);
    let Some(replica) = Replica::start(addr) else {
        s.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let mut m = Raw::connect(&s).await;
    let mut r = raw_to(replica.addr).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "lock", "tok", "PX", "60000");
    cmd!(m, "SET", "kept", "y");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(cmd!(r, "DBSIZE"), b":2\r\n");
    assert_eq!(cmd!(m, "SAVE"), b"+OK\r\n");
    s.shutdown().await;
    let s = server_with(config(addr.port())).await;
    let mut m = Raw::connect(&s).await;
    until_linked(&mut r).await;
    cmd!(m, "SET", "after", "restart");
    assert_eq!(cmd!(m, "WAIT", "1", "5000"), b":1\r\n");
    until_caught_up(&mut m, &mut r).await;
    assert_eq!(
        cmd!(r, "DBSIZE"),
        b":2\r\n",
        "`lock` deleted, `after` added"
    );
    assert_eq!(cmd!(r, "GET", "kept"), b"$1\r\ny\r\n");
    let log = replica.log();
    assert!(
        log.contains("Successful partial resynchronization with master"),
        "{log}"
    );
    drop(replica);
    s.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
