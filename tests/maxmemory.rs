//! maxmemory's eviction policies, measured with the allocator count the binary uses (this test
//! binary installs it too): memory stays near the limit while writes go on, the keys evicted
//! are the ones the policy picks, and INFO counts them. The OOM replies themselves are in
//! conformance/maxmemory.case, recorded from redis-server.

mod common;

use redis::aio::MultiplexedConnection;

#[global_allocator]
static ALLOC: resplock::alloc::Counting<std::alloc::System> =
    resplock::alloc::Counting(std::alloc::System);

async fn cfg(c: &mut MultiplexedConnection, k: &str, v: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(k)
        .arg(v)
        .query_async(c)
        .await
        .unwrap();
}

async fn evicted(c: &mut MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(c)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("evicted_keys:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("evicted_keys in INFO")
}

fn used() -> u64 {
    resplock::alloc::used_memory().expect("counting allocator installed") as u64
}

/// One test, run in order: the allocator count is the whole process's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_policies_keep_memory_under_maxmemory() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    let value = "x".repeat(1000);

    // volatile-ttl: keys nearest to expiry go first; keys without a TTL are never touched.
    for i in 0..300 {
        let _: () = redis::cmd("SET")
            .arg(format!("keep:{i}"))
            .arg(&value)
            .query_async(&mut c)
            .await
            .unwrap();
        let _: () = redis::cmd("SET")
            .arg(format!("soon:{i}"))
            .arg(&value)
            .arg("EX")
            .arg(100 + i)
            .query_async(&mut c)
            .await
            .unwrap();
        let _: () = redis::cmd("SET")
            .arg(format!("late:{i}"))
            .arg(&value)
            .arg("EX")
            .arg(100_000 + i)
            .query_async(&mut c)
            .await
            .unwrap();
    }
    cfg(&mut c, "maxmemory-policy", "volatile-ttl").await;
    // About 200 values' worth under what is used now.
    cfg(&mut c, "maxmemory", &(used() - 200 * 1100).to_string()).await;
    let _: () = redis::cmd("PING").query_async(&mut c).await.unwrap();
    let count = |prefix: &'static str| {
        let mut c = c.clone();
        async move {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{prefix}:*"))
                .query_async(&mut c)
                .await
                .unwrap();
            keys.len()
        }
    };
    let (keep, soon, late) = (
        count("keep").await,
        count("soon").await,
        count("late").await,
    );
    assert_eq!(
        keep, 300,
        "keys without a TTL are not evicted by volatile-ttl"
    );
    // Sampling is approximate, as in Redis: a round whose samples held only late keys may
    // evict one, but the near-expiry keys must go first, by far.
    assert!(
        soon < 300 && (300 - late) * 10 <= 300 - soon,
        "nearest expiry first: soon={soon} late={late}"
    );
    assert!(evicted(&mut c).await >= (300 - soon) as u64);

    // allkeys-random: writes go on past the limit, memory stays bounded, nothing is refused.
    cfg(&mut c, "maxmemory-policy", "allkeys-random").await;
    let limit = used() + 2 * 1024 * 1024;
    cfg(&mut c, "maxmemory", &limit.to_string()).await;
    for i in 0..6000 {
        let _: () = redis::cmd("SET")
            .arg(format!("fill:{i}"))
            .arg(&value)
            .query_async(&mut c)
            .await
            .unwrap();
    }
    assert!(
        used() < limit + 512 * 1024,
        "used {} against limit {limit}",
        used()
    );
    let n: usize = redis::cmd("DBSIZE").query_async(&mut c).await.unwrap();
    assert!(n < 900 + 6000, "keys were evicted: {n} left");

    // allkeys-lru: the same bound holds.
    cfg(&mut c, "maxmemory-policy", "allkeys-lru").await;
    for i in 0..3000 {
        let _: () = redis::cmd("SET")
            .arg(format!("lru:{i}"))
            .arg(&value)
            .query_async(&mut c)
            .await
            .unwrap();
    }
    assert!(
        used() < limit + 512 * 1024,
        "used {} against limit {limit}",
        used()
    );

    // noeviction: the same write is refused with Redis's text.
    cfg(&mut c, "maxmemory-policy", "noeviction").await;
    cfg(&mut c, "maxmemory", "1").await;
    let e = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async::<()>(&mut c)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("OOM"));
    assert_eq!(
        e.detail(),
        Some("command not allowed when used memory > 'maxmemory'.")
    );
    cfg(&mut c, "maxmemory", "0").await;
    s.shutdown().await;
}
