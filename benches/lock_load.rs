//! Load benchmark (not a unit test): 200 clients take and release locks until at least
//! LOCK_LOAD_TARGET acquisitions (default 1,000,000) or LOCK_LOAD_SECS (default 600) have
//! passed, a third each with SET NX PX + the Lua compare-and-delete release, Redisson's
//! reentrant hash lock and its unlock script, and Redisson's fair lock (RedissonFairLock: a
//! queue of waiters and a sorted set of their deadlines; a client that gets queued waits, as
//! Redisson's tryLock(10, SECONDS) does, for the unlock message on its own channel or a short
//! timeout, then retries the same lock until the queue lets it in, or gives up after 10 s). Meanwhile other connections start a lock script
//! (made to spin first) and drop mid-script. Every acquisition is checked against an
//! in-process table of holders: two holders of one lock at once is an overlap; a release that
//! does not find its own token is a lost release. Both must be zero.
//!
//! With `LOCK_LOAD_HISTORY=1` (in-process server only) the server records its lock history
//! and the clients record their SET NX and fair-lock operations (acquire, release: the
//! Redisson locks also take ghost acquisitions from the dropped connections, which no client
//! records); at the end the history is checked (`resplock::history`), and the figures printed:
//! events, client ops, the recorder's memory, the check's time. `LOCK_LOAD_HISTORY_DIR=DIR`
//! also writes `DIR/history.jsonl` and `DIR/ops.jsonl` for `resplock check`.
//!
//! ```sh
//! cargo bench --bench lock_load                          # an in-process server
//! LOCK_LOAD_ADDR=127.0.0.1:8095 cargo bench --bench lock_load   # a running server
//! LOCK_LOAD_HISTORY=1 cargo bench --bench lock_load      # and check its lock history
//! ```

use redis::aio::MultiplexedConnection;
use resplock::history::{CheckOptions, ClientRecorder, History, OpKind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

const CLIENTS: usize = 200;
const RESOURCES: usize = 64;
/// Fair locks: more of them than clients, so queueing happens often but not on every attempt.
const FAIR_RESOURCES: usize = 256;
/// How long a fair-lock waiter waits before it gives up (Redisson's tryLock wait time).
const FAIR_WAIT: Duration = Duration::from_secs(10);

const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const REDISSON_LOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
const REDISSON_UNLOCK: &str = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;";

/// RedissonFairLock's tryLockInnerAsync (KEYS: lock, queue, timeouts; ARGV: lease ms,
/// thread id, thread wait ms, current time ms).
const FAIR_LOCK: &str = "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);if firstThreadId2 == false then break;end;local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);redis.call('lpop', KEYS[2]);else break;end;end;if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);end;redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then redis.call('hincrby', KEYS[1], ARGV[2],1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;while true do local firstThreadId = redis.call('lindex', KEYS[2], 0);if (firstThreadId == false) or (firstThreadId == ARGV[2]) then break;end;local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId));if (timeout > tonumber(ARGV[4])) and (redis.call('exists', KEYS[1]) ==0) then redis.call('lpop', KEYS[2]);redis.call('zrem', KEYS[3], firstThreadId);else break;end;end;local timeout = redis.call('zscore', KEYS[3], ARGV[2]);if timeout ~= false then return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4]);end;local lastThreadId = redis.call('lindex', KEYS[2], -1);local ttl;if lastThreadId ~= false and lastThreadId ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);else ttl = redis.call('pttl', KEYS[1]);end;local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);end;return ttl;";
/// RedissonFairLock's unlockInnerAsync (KEYS: lock, queue, timeouts, channel prefix; ARGV:
/// unlock message, lease ms, thread id, current time ms).
const FAIR_UNLOCK: &str = "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);if firstThreadId2 == false then break;end; local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2); redis.call('lpop', KEYS[2]); else break;end; end;if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', KEYS[2], 0); if nextThreadId ~= false then redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end; return 1; end;if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; end; redis.call('del', KEYS[1]); local nextThreadId = redis.call('lindex', KEYS[2], 0); if nextThreadId ~= false then redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end; return 1; ";

#[derive(Default)]
struct Tally {
    set_nx: AtomicU64,
    redisson: AtomicU64,
    fair: AtomicU64,
    /// Fair-lock attempts that found the lock taken and queued (then retried).
    fair_queued: AtomicU64,
    /// Fair-lock waits given up after FAIR_WAIT.
    fair_gave_up: AtomicU64,
    overlaps: AtomicU64,
    lost_releases: AtomicU64,
    dropped_mid_script: AtomicU64,
    errors: AtomicU64,
}

struct Shared {
    /// The clients' record of their lock operations (LOCK_LOAD_HISTORY).
    rec: Option<ClientRecorder>,
    holders_nx: Vec<AtomicU64>,
    holders_rs: Vec<AtomicU64>,
    holders_fair: Vec<AtomicU64>,
    tally: Tally,
    stop: AtomicBool,
    target: u64,
}

/// Claim `slot` for `me`; an overlap if someone else holds it.
fn enter(slot: &AtomicU64, me: u64, t: &Tally) {
    if slot
        .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        t.overlaps.fetch_add(1, Ordering::Relaxed);
    }
}

fn leave(slot: &AtomicU64, me: u64) {
    let _ = slot.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Acquire);
}

/// The SHAs of the loaded scripts.
struct Shas {
    rel: String,
    lock: String,
    unlock: String,
    fair_lock: String,
    fair_unlock: String,
}

/// The total acquisitions so far reached the target: stop everyone.
fn count(sh: &Shared, which: &AtomicU64) {
    which.fetch_add(1, Ordering::Relaxed);
    let t = &sh.tally;
    let total = t.set_nx.load(Ordering::Relaxed)
        + t.redisson.load(Ordering::Relaxed)
        + t.fair.load(Ordering::Relaxed);
    if total >= sh.target {
        sh.stop.store(true, Ordering::Relaxed);
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// One fair-lock acquisition and release, as Redisson's lock()/unlock() send them: a client
/// that is queued subscribes to its own channel (`channel:<thread id>`, where unlock announces
/// the next waiter), waits for the message or at most 100 ms, and retries the same lock
/// (bounded by the stop flag) until it is its turn. Polling instead makes waiters evict each
/// other from the queue (the script drops a head that is slow to take a free lock) until
/// every client is stuck on a few locks.
async fn fair_round(
    c: &mut MultiplexedConnection,
    ps: &mut Option<redis::aio::PubSub>,
    client: &redis::Client,
    sh: &Shared,
    shas: &Shas,
    token: &str,
    me: u64,
) {
    use futures_util::StreamExt;
    let r = fastrand::usize(..FAIR_RESOURCES);
    let keys = [
        format!("{{fair:{r}}}"),
        format!("redisson_lock_queue:{{fair:{r}}}"),
        format!("redisson_lock_timeout:{{fair:{r}}}"),
        format!("redisson_lock__channel:{{fair:{r}}}"),
    ];
    let mut subscribed: Option<String> = None;
    let name = format!("c{}", me >> 40);
    let call = sh.rec.as_ref().map(|r| {
        r.begin(&name, OpKind::Acquire, &keys[0])
            .token(token)
            .ttl_ms(10_000)
    });
    let began = Instant::now();
    let acquired = loop {
        // Redisson's tryLock(10, SECONDS): a waiter gives up after FAIR_WAIT and cancels its
        // place in the queue. With lock() waiting without end, a loaded machine piles most
        // clients up on a few fair locks for minutes (up to 163 waiters on one, 290 s waits),
        // and each such wait is one client op overlapping thousands of others in the
        // history's linearizability search.
        let waited_out = began.elapsed() > FAIR_WAIT;
        if sh.stop.load(Ordering::Relaxed) || waited_out {
            if waited_out {
                sh.tally.fair_gave_up.fetch_add(1, Ordering::Relaxed);
            }
            // Leave no queue entry behind (it would hold the lock's queue for its wait time),
            // as Redisson's cancelAcquisition does,
            // in one script: between two separate commands another client's script would see
            // a queued waiter without a deadline, which Redisson's scripts cannot handle.
            let _: redis::RedisResult<i64> = redis::cmd("EVAL")
                .arg("redis.call('lrem', KEYS[1], 0, ARGV[1]) return redis.call('zrem', KEYS[2], ARGV[1])")
                .arg(2)
                .arg(&keys[1])
                .arg(&keys[2])
                .arg(token)
                .query_async(c)
                .await;
            break false;
        }
        let got: Option<i64> = match redis::cmd("EVALSHA")
            .arg(&shas.fair_lock)
            .arg(3)
            .arg(&keys[..3])
            .arg(10_000)
            .arg(token)
            .arg(5_000)
            .arg(now_ms())
            .query_async(c)
            .await
        {
            Ok(v) => v,
            Err(e) => {
                if sh.tally.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                    eprintln!("first fair-lock error: {e}");
                }
                break false;
            }
        };
        let Some(ttl) = got else { break true };
        sh.tally.fair_queued.fetch_add(1, Ordering::Relaxed);
        if ps.is_none() {
            *ps = client.get_async_pubsub().await.ok();
        }
        let Some(p) = ps.as_mut() else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        if subscribed.is_none() {
            let chan = format!("{}:{token}", keys[3]);
            if p.subscribe(&chan).await.is_err() {
                *ps = None;
                continue;
            }
            // Subscribed after being queued: retry at once in case the message went out in
            // between, as Redisson does after subscribing.
            subscribed = Some(chan);
            continue;
        }
        // Redisson waits up to the returned estimate, or (negative) for the message alone;
        // 100 ms bounds both here.
        let wait = Duration::from_millis(if ttl < 0 {
            100
        } else {
            ttl.clamp(1, 100) as u64
        });
        let _ = tokio::time::timeout(wait, p.on_message().next()).await;
    };
    if let Some(call) = call {
        // Given up (waited FAIR_WAIT, the run stopped, or an error): it may or may not have
        // taken effect.
        call.end(if acquired { Some(true) } else { None });
    }
    if let (Some(chan), Some(p)) = (subscribed, ps.as_mut()) {
        if p.unsubscribe(&chan).await.is_err() {
            *ps = None;
        }
    }
    if !acquired {
        return;
    }
    enter(&sh.holders_fair[r], me, &sh.tally);
    tokio::task::yield_now().await;
    leave(&sh.holders_fair[r], me);
    let call = sh
        .rec
        .as_ref()
        .map(|r| r.begin(&name, OpKind::Release, &keys[0]).token(token));
    let released: Option<i64> = redis::cmd("EVALSHA")
        .arg(&shas.fair_unlock)
        .arg(4)
        .arg(&keys[..])
        .arg(0)
        .arg(10_000)
        .arg(token)
        .arg(now_ms())
        .query_async(c)
        .await
        .unwrap_or_else(|e| {
            eprintln!("fair unlock error: {e}");
            None
        });
    if let Some(call) = call {
        call.end(Some(released == Some(1)));
    }
    if released != Some(1) {
        eprintln!(
            "fair lock release of {token} on {} answered {released:?}",
            keys[0]
        );
        sh.tally.lost_releases.fetch_add(1, Ordering::Relaxed);
    }
    count(sh, &sh.tally.fair);
}

async fn client_loop(
    id: u64,
    client: redis::Client,
    mut c: MultiplexedConnection,
    sh: Arc<Shared>,
    shas: Arc<Shas>,
) {
    let mut ps = None;
    let mut n: u64 = 0;
    while !sh.stop.load(Ordering::Relaxed) {
        n += 1;
        let r = fastrand::usize(..RESOURCES);
        let token = format!("{id}:{n}");
        let me = (id << 40) | n;
        if n % 3 == 2 {
            fair_round(&mut c, &mut ps, &client, &sh, &shas, &token, me).await;
        } else if n.is_multiple_of(3) {
            let key = format!("nx:{r}");
            let name = format!("c{id}");
            let call = sh.rec.as_ref().map(|rec| {
                rec.begin(&name, OpKind::Acquire, &key)
                    .token(&token)
                    .ttl_ms(10_000)
            });
            let got: Option<String> = match redis::cmd("SET")
                .arg(&key)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(10_000)
                .query_async(&mut c)
                .await
            {
                Ok(v) => v,
                Err(_) => {
                    sh.tally.errors.fetch_add(1, Ordering::Relaxed);
                    if let Some(call) = call {
                        call.end(None);
                    }
                    continue;
                }
            };
            if let Some(call) = call {
                call.end(Some(got.is_some()));
            }
            if got.is_some() {
                enter(&sh.holders_nx[r], me, &sh.tally);
                tokio::task::yield_now().await;
                leave(&sh.holders_nx[r], me);
                let call = sh
                    .rec
                    .as_ref()
                    .map(|rec| rec.begin(&name, OpKind::Release, &key).token(&token));
                let del: i64 = redis::cmd("EVALSHA")
                    .arg(&shas.rel)
                    .arg(1)
                    .arg(&key)
                    .arg(&token)
                    .query_async(&mut c)
                    .await
                    .unwrap_or(-1);
                if let Some(call) = call {
                    call.end(Some(del == 1));
                }
                if del != 1 {
                    eprintln!("SET NX release of {token} on {key} answered {del}");
                    sh.tally.lost_releases.fetch_add(1, Ordering::Relaxed);
                }
                count(&sh, &sh.tally.set_nx);
            }
        } else {
            let key = format!("{{rs:{r}}}");
            let chan = format!("redisson_lock__channel:{{rs:{r}}}");
            let got: Option<i64> = match redis::cmd("EVALSHA")
                .arg(&shas.lock)
                .arg(1)
                .arg(&key)
                .arg(10_000)
                .arg(&token)
                .query_async(&mut c)
                .await
            {
                Ok(v) => v,
                Err(_) => {
                    sh.tally.errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            };
            if got.is_none() {
                enter(&sh.holders_rs[r], me, &sh.tally);
                tokio::task::yield_now().await;
                leave(&sh.holders_rs[r], me);
                let done: Option<i64> = redis::cmd("EVALSHA")
                    .arg(&shas.unlock)
                    .arg(2)
                    .arg(&key)
                    .arg(&chan)
                    .arg(0)
                    .arg(10_000)
                    .arg(&token)
                    .query_async(&mut c)
                    .await
                    .unwrap_or(None);
                if done != Some(1) {
                    eprintln!("Redisson release of {token} on {key} answered {done:?}");
                    sh.tally.lost_releases.fetch_add(1, Ordering::Relaxed);
                }
                count(&sh, &sh.tally.redisson);
            }
        }
    }
}

/// Start the Redisson lock script on a fresh connection, made to spin first, and drop the
/// connection while it runs: the lock it may take expires on its own (PX 300).
async fn drop_mid_script(addr: std::net::SocketAddr, sh: Arc<Shared>) {
    let body = format!("for i = 1, 200000 do end {REDISSON_LOCK}");
    while !sh.stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
            continue;
        };
        let r = fastrand::usize(..RESOURCES);
        let key = format!("{{rs:{r}}}");
        let mut req = String::from("*6\r\n");
        for a in ["EVAL", &body, "1", &key, "300", "ghost"] {
            req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        if s.write_all(req.as_bytes()).await.is_ok() {
            drop(s);
            sh.tally.dropped_mid_script.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn main() {
    let target: u64 = std::env::var("LOCK_LOAD_TARGET")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let secs: u64 = std::env::var("LOCK_LOAD_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let history = std::env::var("LOCK_LOAD_HISTORY").is_ok_and(|v| v != "0");
    let (addr, server) = match std::env::var("LOCK_LOAD_ADDR") {
        Ok(a) => (a.parse().expect("LOCK_LOAD_ADDR host:port"), None),
        Err(_) => {
            let s = resplock::BlockingServer::start(resplock::Config {
                // Room for every event of the run: nothing dropped, the whole run checked.
                lock_history: history,
                enable_test_commands: history,
                lock_history_max_events: 50_000_000,
                lock_history_max_per_key: 50_000_000,
                ..resplock::Config::ephemeral()
            })
            .expect("server");
            (s.local_addr(), Some(s))
        }
    };
    assert!(
        !history || server.is_some(),
        "LOCK_LOAD_HISTORY needs the in-process server"
    );
    let rec = history.then(ClientRecorder::new);
    let clients_rec = rec.clone();
    rt.block_on(async move {
        let sh = Arc::new(Shared {
            rec: clients_rec,
            holders_nx: (0..RESOURCES).map(|_| AtomicU64::new(0)).collect(),
            holders_rs: (0..RESOURCES).map(|_| AtomicU64::new(0)).collect(),
            holders_fair: (0..FAIR_RESOURCES).map(|_| AtomicU64::new(0)).collect(),
            tally: Tally::default(),
            stop: AtomicBool::new(false),
            target,
        });
        let client = redis::Client::open(format!("redis://{addr}")).expect("url");
        let mut admin = client
            .get_multiplexed_async_connection()
            .await
            .expect("connect");
        let _: () = redis::cmd("FLUSHALL")
            .query_async(&mut admin)
            .await
            .expect("flushall");
        let mut shas = Vec::new();
        for body in [RELEASE, REDISSON_LOCK, REDISSON_UNLOCK, FAIR_LOCK, FAIR_UNLOCK] {
            let sha: String = redis::cmd("SCRIPT")
                .arg("LOAD")
                .arg(body)
                .query_async(&mut admin)
                .await
                .expect("SCRIPT LOAD");
            shas.push(sha);
        }
        let mut shas = shas.into_iter();
        let mut next = || shas.next().expect("five scripts");
        let shas = Arc::new(Shas {
            rel: next(),
            lock: next(),
            unlock: next(),
            fair_lock: next(),
            fair_unlock: next(),
        });
        let started = Instant::now();
        let mut tasks = Vec::new();
        for id in 1..=CLIENTS as u64 {
            let c = client
                .get_multiplexed_async_connection()
                .await
                .expect("connect");
            tasks.push(tokio::spawn(client_loop(
                id,
                client.clone(),
                c,
                sh.clone(),
                shas.clone(),
            )));
        }
        tasks.push(tokio::spawn(drop_mid_script(addr, sh.clone())));
        let deadline = started + Duration::from_secs(secs);
        while !sh.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        sh.stop.store(true, Ordering::Relaxed);
        for t in tasks {
            let _ = t.await;
        }
        let t = &sh.tally;
        let el = started.elapsed().as_secs_f64();
        let (a, b, f) = (
            t.set_nx.load(Ordering::Relaxed),
            t.redisson.load(Ordering::Relaxed),
            t.fair.load(Ordering::Relaxed),
        );
        println!(
            "lock_load against {addr}: {CLIENTS} clients, {RESOURCES}+{RESOURCES}+{FAIR_RESOURCES} locks, {el:.1} s"
        );
        println!(
            "  acquisitions: {} (SET NX PX + Lua release {a}, Redisson hash lock {b}, Redisson fair lock {f}), {:.0}/s",
            a + b + f,
            (a + b + f) as f64 / el
        );
        println!(
            "  fair-lock attempts queued behind another holder: {}, waits given up after {} s: {}",
            t.fair_queued.load(Ordering::Relaxed),
            FAIR_WAIT.as_secs(),
            t.fair_gave_up.load(Ordering::Relaxed)
        );
        println!(
            "  connections dropped mid-script: {}",
            t.dropped_mid_script.load(Ordering::Relaxed)
        );
        println!(
            "  overlaps: {}  lost releases: {}  errors: {}",
            t.overlaps.load(Ordering::Relaxed),
            t.lost_releases.load(Ordering::Relaxed),
            t.errors.load(Ordering::Relaxed)
        );
        assert_eq!(
            t.overlaps.load(Ordering::Relaxed),
            0,
            "two holders of one lock"
        );
        assert_eq!(
            t.lost_releases.load(Ordering::Relaxed),
            0,
            "a release lost its lock"
        );
    });
    if let (Some(server), Some(rec)) = (server, rec) {
        check_history(&server, &rec);
    }
}

/// Export the server's lock history, add the clients' operations, check them, and print
/// what it took.
fn check_history(server: &resplock::BlockingServer, rec: &ClientRecorder) {
    let rss = || {
        std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    let t = Instant::now();
    let mut h = server.history();
    let exported = t.elapsed();
    let events = h.len();
    for op in rec.ops() {
        h.push_op(op);
    }
    let rss_before_check = rss();
    let report = h.check(&CheckOptions::default());
    println!(
        "  {events} server events and {} client ops; exported in {:.2} s; History in memory {:.0} MB; process RSS {:.0} MB",
        h.op_count(),
        exported.as_secs_f64(),
        h.memory_bytes() as f64 / 1e6,
        rss_before_check as f64 / 1e6
    );
    println!("  {}", report.summary());
    if let Ok(dir) = std::env::var("LOCK_LOAD_HISTORY_DIR") {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("history dir");
        let server_only = {
            let mut s = History::new();
            s.add_json_lines(&server.history().to_json_lines())
                .expect("reads back");
            s
        };
        std::fs::write(dir.join("history.jsonl"), server_only.to_json_lines()).expect("write");
        std::fs::write(dir.join("ops.jsonl"), rec.to_json_lines()).expect("write");
        println!("  written to {}", dir.display());
    }
    assert!(report.is_clean(), "{report}");
}
