//! The Rust Redlock crates against three resplock instances (RESPLOCK_NODES): `redlock`
//! (synchronous, one connection per call) and `rslock` (async, tokio). Each runs the same
//! scenario as the Python and Node libraries; the clock and faults are driven with redis-cli,
//! which sends nothing but the command (a paused node answers only RESPLOCK.* requests).
//! Neither crate sets socket timeouts, so a paused node would hang them forever: the pause in
//! the quorum step is shorter than it and longer than the lease, which makes the Redlock
//! validity check (lease minus elapsed time) refuse the lock, as it must.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WORKERS: usize = 20;
const ROUNDS: usize = 5;

struct Report {
    library: &'static str,
    passed: usize,
    failed: usize,
}

type Step = Result<(), String>;

fn check(cond: bool, what: &str) -> Step {
    if cond {
        Ok(())
    } else {
        Err(what.to_string())
    }
}

fn nodes() -> Vec<String> {
    std::env::var("RESPLOCK_NODES")
        .expect("RESPLOCK_NODES")
        .split(',')
        .map(str::to_string)
        .collect()
}

fn urls() -> Vec<String> {
    nodes().iter().map(|n| format!("redis://{n}/")).collect()
}

/// redis-cli against node `i`.
fn cli(i: usize, args: &[&str]) -> String {
    let node = &nodes()[i];
    let (host, port) = node.rsplit_once(':').expect("host:port");
    let out = Command::new("redis-cli")
        .args(["-h", host, "-p", port])
        .args(args)
        .output()
        .expect("redis-cli runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn advance_clock(ms: i64) {
    for i in 0..nodes().len() {
        cli(i, &["RESPLOCK.CLOCK", "ADVANCE", &ms.to_string()]);
    }
}

fn flush_all() {
    for i in 0..nodes().len() {
        cli(i, &["FLUSHALL"]);
    }
}

fn holders(key: &str) -> usize {
    (0..nodes().len())
        .filter(|&i| cli(i, &["EXISTS", key]) == "1")
        .count()
}

fn holders_up(key: &str, n: usize) -> usize {
    (0..n).filter(|&i| cli(i, &["EXISTS", key]) == "1").count()
}

fn pttls(key: &str) -> Vec<i64> {
    (0..nodes().len())
        .map(|i| cli(i, &["PTTL", key]).parse().unwrap_or(-3))
        .collect()
}

impl Report {
    fn step(&mut self, name: &str, f: impl FnOnce() -> Step) {
        flush_all();
        let started = Instant::now();
        match f() {
            Ok(()) => {
                self.passed += 1;
                println!(
                    "ok   {}: {name} ({:.2}s)",
                    self.library,
                    started.elapsed().as_secs_f64()
                );
            }
            Err(e) => {
                self.failed += 1;
                println!("FAIL {}: {name}: {e}", self.library);
            }
        }
    }

    fn finish(&self) -> bool {
        println!(
            "{}: {} passed, {} failed",
            self.library, self.passed, self.failed
        );
        self.failed == 0
    }
}

/// The shared critical section: overlaps counted, and a read-modify-write of a counter on
/// node 0 that loses updates unless the lock excludes.
struct Exclusion {
    inside: AtomicUsize,
    overlaps: AtomicUsize,
    counter: Mutex<redis::Connection>,
}

impl Exclusion {
    fn new() -> Arc<Exclusion> {
        let conn = redis::Client::open(urls()[0].as_str())
            .and_then(|c| c.get_connection())
            .expect("counter connection");
        Arc::new(Exclusion {
            inside: AtomicUsize::new(0),
            overlaps: AtomicUsize::new(0),
            counter: Mutex::new(conn),
        })
    }

    fn enter(&self) {
        if self.inside.fetch_add(1, Ordering::SeqCst) > 0 {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
        let mut c = self.counter.lock().unwrap();
        let n: i64 = redis::cmd("GET")
            .arg("exclusion:counter")
            .query::<Option<i64>>(&mut *c)
            .unwrap()
            .unwrap_or(0);
        drop(c);
        std::thread::sleep(Duration::from_millis(1));
        let mut c = self.counter.lock().unwrap();
        let _: () = redis::cmd("SET")
            .arg("exclusion:counter")
            .arg(n + 1)
            .query(&mut *c)
            .unwrap();
        drop(c);
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }

    fn verdict(&self) -> Step {
        let overlaps = self.overlaps.load(Ordering::SeqCst);
        check(overlaps == 0, &format!("{overlaps} overlaps"))?;
        let n = cli(0, &["GET", "exclusion:counter"]);
        check(
            n == (WORKERS * ROUNDS).to_string(),
            &format!("lost updates: counter {n}"),
        )
    }
}

// ---------------------------------------------------------------- redlock (synchronous)

fn redlock_scenario() -> bool {
    use redlock::RedLock;
    let mut r = Report {
        library: "redlock (Rust)",
        passed: 0,
        failed: 0,
    };
    let manager = || {
        let mut m = RedLock::new(urls());
        m.set_retry(1, 10);
        m
    };
    r.step("acquire", || {
        let m = manager();
        let lock = m.lock(b"res", 10_000).map_err(|e| e.to_string())?;
        check(lock.is_some(), "first acquire")?;
        check(holders("res") == 3, "held on every node")
    });
    r.step("contention", || {
        let m = manager();
        let first = m.lock(b"res", 10_000).map_err(|e| e.to_string())?;
        check(first.is_some(), "first acquire")?;
        let second = m.lock(b"res", 10_000).map_err(|e| e.to_string())?;
        check(second.is_none(), "second locker fails")
    });
    r.step("release", || {
        let m = manager();
        let lock = m.lock(b"res", 10_000).map_err(|e| e.to_string())?;
        let lock = lock.ok_or("acquire")?;
        m.unlock(&lock);
        check(holders("res") == 0, "released everywhere")
    });
    r.step("release by a non-owner", || {
        let m = manager();
        let lock = m.lock(b"res", 10_000).map_err(|e| e.to_string())?;
        let mut forged = lock.ok_or("acquire")?;
        forged.val = b"not-the-owner".to_vec();
        m.unlock(&forged);
        check(holders("res") == 3, "still held")
    });
    r.step("mutual exclusion, 20 workers", || {
        let excl = Exclusion::new();
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let excl = excl.clone();
                std::thread::spawn(move || -> Step {
                    let mut m = RedLock::new(urls());
                    m.set_retry(1, 1);
                    for _ in 0..ROUNDS {
                        let deadline = Instant::now() + Duration::from_secs(60);
                        let lock = loop {
                            if let Some(l) = m.lock(b"res", 10_000).map_err(|e| e.to_string())? {
                                break l;
                            }
                            check(Instant::now() < deadline, "starved")?;
                            std::thread::sleep(Duration::from_millis(2));
                        };
                        excl.enter();
                        m.unlock(&lock);
                    }
                    Ok(())
                })
            })
            .collect();
        for w in workers {
            w.join().map_err(|_| "worker panicked")??;
        }
        excl.verdict()
    });
    r.step("expiry by moving the clock", || {
        let m = manager();
        check(m.lock(b"res", 10_000).map_err(|e| e.to_string())?.is_some(), "acquire")?;
        check(m.lock(b"res", 10_000).map_err(|e| e.to_string())?.is_none(), "held")?;
        advance_clock(10_001);
        check(
            m.lock(b"res", 10_000).map_err(|e| e.to_string())?.is_some(),
            "the lease ran out when the clock moved",
        )
    });
    r.step("quorum with one node stopped", || {
        // The crate returns the first connection error instead of counting the node out,
        // so a stopped node fails every attempt, and the keys it set on the nodes before
        // stay until their lease ends. A pause is not tried: past the lease, the crate's
        // validity arithmetic underflows (usize) and it reports a lock.
        cli(2, &["SHUTDOWN", "NOSAVE"]);
        let m = manager();
        check(m.lock(b"res", 10_000).is_err(), "an error, not a lock")?;
        check(holders_up("res", 2) == 2, "the keys set before the error stay")
    });
    println!("n/a  redlock (Rust): extend (the crate has no extend)");
    r.finish()
}

// ------------------------------------------------------------------- rslock (async, tokio)

async fn rslock_scenario() -> bool {
    use rslock::LockManager;
    let mut r = Report {
        library: "rslock",
        passed: 0,
        failed: 0,
    };
    let manager = || {
        let mut m = LockManager::new(urls());
        m.set_retry(1, Duration::from_millis(10));
        m
    };
    let ten = Duration::from_secs(10);
    let steps: Vec<(&str, std::pin::Pin<Box<dyn std::future::Future<Output = Step>>>)> = vec![
        ("acquire", Box::pin(async move {
            let m = manager();
            m.lock("res", ten).await.map_err(|e| format!("first acquire: {e}"))?;
            check(holders("res") == 3, "held on every node")
        })),
        ("contention", Box::pin(async move {
            let m = manager();
            m.lock("res", ten).await.map_err(|e| format!("first acquire: {e}"))?;
            check(m.lock("res", ten).await.is_err(), "second locker fails")
        })),
        ("extend", Box::pin(async move {
            let m = manager();
            let lock = m.lock("res", ten).await.map_err(|e| format!("acquire: {e}"))?;
            advance_clock(6_000);
            m.extend(&lock, ten).await.map_err(|e| format!("extend: {e}"))?;
            let left = pttls("res");
            check(left.iter().all(|&t| t > 9_000), &format!("a full lease again: {left:?}"))
        })),
        ("release", Box::pin(async move {
            let m = manager();
            let lock = m.lock("res", ten).await.map_err(|e| format!("acquire: {e}"))?;
            m.unlock(&lock).await;
            check(holders("res") == 0, "released everywhere")
        })),
        ("release by a non-owner", Box::pin(async move {
            let m = manager();
            let mut forged = m.lock("res", ten).await.map_err(|e| format!("acquire: {e}"))?;
            forged.val = b"not-the-owner".to_vec();
            m.unlock(&forged).await;
            check(holders("res") == 3, "still held")
        })),
        ("mutual exclusion, 20 workers", Box::pin(async move {
            let excl = Exclusion::new();
            let mut tasks = Vec::new();
            for _ in 0..WORKERS {
                let excl = excl.clone();
                tasks.push(tokio::spawn(async move {
                    let mut m = LockManager::new(urls());
                    m.set_retry(1, Duration::from_millis(2));
                    for _ in 0..ROUNDS {
                        let deadline = Instant::now() + Duration::from_secs(60);
                        let lock = loop {
                            if let Ok(l) = m.lock("res", ten).await {
                                break l;
                            }
                            if Instant::now() > deadline {
                                return Err("starved".to_string());
                            }
                            tokio::time::sleep(Duration::from_millis(2)).await;
                        };
                        let e = excl.clone();
                        tokio::task::spawn_blocking(move || e.enter()).await.unwrap();
                        m.unlock(&lock).await;
                    }
                    Ok(())
                }));
            }
            for t in tasks {
                t.await.map_err(|e| e.to_string())??;
            }
            excl.verdict()
        })),
        ("expiry by moving the clock", Box::pin(async move {
            let m = manager();
            m.lock("res", ten).await.map_err(|e| format!("acquire: {e}"))?;
            check(m.lock("res", ten).await.is_err(), "held")?;
            advance_clock(10_001);
            m.lock("res", ten).await.map(|_| ()).map_err(|e| format!("the lease ran out when the clock moved: {e}"))
        })),
        ("quorum with one node stopped and one paused", Box::pin(async move {
            cli(2, &["SHUTDOWN", "NOSAVE"]);
            let m = manager();
            let lock = m.lock("res", ten).await.map_err(|e| format!("2 of 3 are a quorum: {e}"))?;
            m.unlock(&lock).await;
            // No socket timeouts in the crate: a pause longer than the lease (1 s) but short
            // enough to wait out makes the validity check refuse the lock.
            cli(1, &["RESPLOCK.FAULT", "PAUSE", "1500"]);
            let got = m.lock("res", Duration::from_millis(1_000)).await;
            cli(1, &["RESPLOCK.FAULT", "UNPAUSE"]);
            check(got.is_err(), "a node answering after the lease ran out gives no quorum")
        })),
    ];
    for (name, fut) in steps {
        flush_all();
        let started = Instant::now();
        match tokio::time::timeout(Duration::from_secs(120), fut).await {
            Ok(Ok(())) => {
                r.passed += 1;
                println!("ok   rslock: {name} ({:.2}s)", started.elapsed().as_secs_f64());
            }
            Ok(Err(e)) => {
                r.failed += 1;
                println!("FAIL rslock: {name}: {e}");
            }
            Err(_) => {
                r.failed += 1;
                println!("FAIL rslock: {name}: no result within 120 s");
            }
        }
    }
    r.finish()
}

fn main() {
    // Which crate: `redlock` or `rslock` (run-all.sh gives each fresh instances: the rslock
    // scenario stops one).
    let which = std::env::args().nth(1).unwrap_or_default();
    let ok = match which.as_str() {
        "redlock" => redlock_scenario(),
        "rslock" => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(rslock_scenario()),
        _ => {
            eprintln!("usage: resplock-lock-clients redlock|rslock");
            false
        }
    };
    std::process::exit(if ok { 0 } else { 1 });
}
