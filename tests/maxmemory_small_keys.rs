//! maxmemory with many small keys, as Redis's own suite checks it: keys too small to own an
//! allocation cost only their slot in the shard, so eviction must give slots back for used
//! memory to come down (before it did not, and eviction emptied the database while INFO's
//! used_memory stayed over the limit). Also: CONFIG RESETSTAT zeroes evicted_keys.
//! This binary installs the counting allocator, as the server binary does; the count is the
//! whole process's, so the steps run in order in one test.

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

/// A numeric INFO field, as the TCL suite's `s` reads it.
async fn info(c: &mut MultiplexedConnection, field: &str) -> u64 {
    let text: String = redis::cmd("INFO").query_async(c).await.unwrap();
    common::info_field(text.as_bytes(), field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} in INFO"))
}

/// Fill to just under a limit 100 KB above what is used now, then write as many keys again:
/// returns (keys written in the fill, the limit). `volatile_every` makes every n-th key of
/// the fill carry a TTL (1: all of them).
async fn fill_to_limit(
    c: &mut MultiplexedConnection,
    policy: &str,
    volatile_every: usize,
) -> (usize, u64) {
    let _: () = redis::cmd("FLUSHALL").query_async(c).await.unwrap();
    cfg(c, "maxmemory", "0").await;
    let limit = info(c, "used_memory").await + 100 * 1024;
    cfg(c, "maxmemory", &limit.to_string()).await;
    cfg(c, "maxmemory-policy", policy).await;
    let mut n = 0;
    while n < 100_000 {
        let mut cmd = redis::cmd("SET");
        cmd.arg(format!("key:{n}")).arg("x");
        if n % volatile_every == volatile_every - 1 {
            cmd.arg("EX").arg(10_000);
        }
        let _: () = cmd.query_async(c).await.unwrap();
        n += 1;
        if info(c, "used_memory").await + 4096 > limit {
            break;
        }
    }
    assert!(n > 10, "the limit is reached after {n} keys");
    (n, limit)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicting_small_keys_brings_used_memory_under_maxmemory() {
    let s = common::server().await;
    let mut c = common::client(&s).await;

    // allkeys-random: as many keys again fit by evicting about as many, not all of them.
    let (n, limit) = fill_to_limit(&mut c, "allkeys-random", 1).await;
    for j in 0..n {
        let _: () = redis::cmd("SET")
            .arg(format!("more:{j}"))
            .arg("x")
            .arg("EX")
            .arg(10_000)
            .query_async(&mut c)
            .await
            .unwrap();
    }
    let used = info(&mut c, "used_memory").await;
    assert!(used < limit + 4096, "used {used} against limit {limit}");
    let left: usize = redis::cmd("DBSIZE").query_async(&mut c).await.unwrap();
    assert!(
        left > n / 2,
        "{left} of {n} keys left: eviction went too far"
    );

    // volatile-lru: only keys with a TTL go, and they are enough to make room.
    let (n, limit) = fill_to_limit(&mut c, "volatile-lru", 2).await;
    for j in 0..n {
        // Refused with OOM once no volatile key is left, as in Redis.
        let _ = redis::cmd("SET")
            .arg(format!("foo:{j}"))
            .arg("x")
            .arg("EX")
            .arg(10_000)
            .query_async::<()>(&mut c)
            .await;
    }
    let used = info(&mut c, "used_memory").await;
    assert!(used < limit + 4096, "used {used} against limit {limit}");
    for j in (0..n).step_by(2) {
        let exists: i64 = redis::cmd("EXISTS")
            .arg(format!("key:{j}"))
            .query_async(&mut c)
            .await
            .unwrap();
        assert_eq!(exists, 1, "key:{j} has no TTL and must stay");
    }

    // CONFIG RESETSTAT starts evicted_keys again from zero.
    assert!(info(&mut c, "evicted_keys").await > 0);
    cfg(&mut c, "maxmemory", "0").await;
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(info(&mut c, "evicted_keys").await, 0);
    s.shutdown().await;
}
