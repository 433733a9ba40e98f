//! Load benchmark (not a unit test): 200 clients take and release locks until at least
//! LOCK_LOAD_TARGET acquisitions (default 1,000,000) or LOCK_LOAD_SECS (default 600) have
//! passed, half with SET NX PX + the Lua compare-and-delete release, half with Redisson's
//! reentrant hash lock and its unlock script. Meanwhile other connections start a lock script
//! (made to spin first) and drop mid-script. Every acquisition is checked against an
//! in-process table of holders: two holders of one lock at once is an overlap; a release that
//! does not find its own token is a lost release. Both must be zero.
//!
//! ```sh
//! cargo bench --bench lock_load                          # an in-process server
//! LOCK_LOAD_ADDR=127.0.0.1:8095 cargo bench --bench lock_load   # a running server
//! ```

use redis::aio::MultiplexedConnection;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

const CLIENTS: usize = 200;
const RESOURCES: usize = 64;

const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const REDISSON_LOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
const REDISSON_UNLOCK: &str = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;";

#[derive(Default)]
struct Tally {
    set_nx: AtomicU64,
    redisson: AtomicU64,
    overlaps: AtomicU64,
    lost_releases: AtomicU64,
    dropped_mid_script: AtomicU64,
    errors: AtomicU64,
}

struct Shared {
    holders_nx: Vec<AtomicU64>,
    holders_rs: Vec<AtomicU64>,
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

async fn client_loop(
    id: u64,
    mut c: MultiplexedConnection,
    sh: Arc<Shared>,
    rel: String,
    lock: String,
    unlock: String,
) {
    let mut n: u64 = 0;
    while !sh.stop.load(Ordering::Relaxed) {
        n += 1;
        let r = fastrand::usize(..RESOURCES);
        let token = format!("{id}:{n}");
        let me = (id << 40) | n;
        if n.is_multiple_of(2) {
            let key = format!("nx:{r}");
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
                    continue;
                }
            };
            if got.is_some() {
                enter(&sh.holders_nx[r], me, &sh.tally);
                tokio::task::yield_now().await;
                leave(&sh.holders_nx[r], me);
                let del: i64 = redis::cmd("EVALSHA")
                    .arg(&rel)
                    .arg(1)
                    .arg(&key)
                    .arg(&token)
                    .query_async(&mut c)
                    .await
                    .unwrap_or(-1);
                if del != 1 {
                    sh.tally.lost_releases.fetch_add(1, Ordering::Relaxed);
                }
                if sh.tally.set_nx.fetch_add(1, Ordering::Relaxed)
                    + sh.tally.redisson.load(Ordering::Relaxed)
                    >= sh.target
                {
                    sh.stop.store(true, Ordering::Relaxed);
                }
            }
        } else {
            let key = format!("{{rs:{r}}}");
            let chan = format!("redisson_lock__channel:{{rs:{r}}}");
            let got: Option<i64> = match redis::cmd("EVALSHA")
                .arg(&lock)
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
                    .arg(&unlock)
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
                    sh.tally.lost_releases.fetch_add(1, Ordering::Relaxed);
                }
                if sh.tally.redisson.fetch_add(1, Ordering::Relaxed)
                    + sh.tally.set_nx.load(Ordering::Relaxed)
                    >= sh.target
                {
                    sh.stop.store(true, Ordering::Relaxed);
                }
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
    let (addr, _server) = match std::env::var("LOCK_LOAD_ADDR") {
        Ok(a) => (a.parse().expect("LOCK_LOAD_ADDR host:port"), None),
        Err(_) => {
            let s = resplock::BlockingServer::start(resplock::Config::ephemeral()).expect("server");
            (s.local_addr(), Some(s))
        }
    };
    rt.block_on(async move {
        let sh = Arc::new(Shared {
            holders_nx: (0..RESOURCES).map(|_| AtomicU64::new(0)).collect(),
            holders_rs: (0..RESOURCES).map(|_| AtomicU64::new(0)).collect(),
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
        for body in [RELEASE, REDISSON_LOCK, REDISSON_UNLOCK] {
            let sha: String = redis::cmd("SCRIPT")
                .arg("LOAD")
                .arg(body)
                .query_async(&mut admin)
                .await
                .expect("SCRIPT LOAD");
            shas.push(sha);
        }
        let (rel, lock, unlock) = (shas[0].clone(), shas[1].clone(), shas[2].clone());
        let started = Instant::now();
        let mut tasks = Vec::new();
        for id in 1..=CLIENTS as u64 {
            let c = client
                .get_multiplexed_async_connection()
                .await
                .expect("connect");
            tasks.push(tokio::spawn(client_loop(
                id,
                c,
                sh.clone(),
                rel.clone(),
                lock.clone(),
                unlock.clone(),
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
        let (a, b) = (
            t.set_nx.load(Ordering::Relaxed),
            t.redisson.load(Ordering::Relaxed),
        );
        println!(
            "lock_load against {addr}: {CLIENTS} clients, {RESOURCES}+{RESOURCES} locks, {el:.1} s"
        );
        println!(
            "  acquisitions: {} (SET NX PX + Lua release {a}, Redisson hash lock {b}), {:.0}/s",
            a + b,
            (a + b) as f64 / el
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
}
