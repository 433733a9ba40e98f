//! maxmemory's statistics: CONFIG RESETSTAT starts INFO's evicted_keys again from zero, as
//! Redis's resetServerStats does (Redis's suite resets the stats between eviction tests and
//! then expects evicted_keys to count only what the test evicted), and CONFIG SET maxmemory
//! evicting at once. Apart from tests/maxmemory.rs, whose one test reads the process's whole
//! allocator count and must not share the process with others.

mod common;

use redis::aio::MultiplexedConnection;

// The server binary's allocator count, so maxmemory evicts here as it does there.
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

async fn evicted_keys(c: &mut MultiplexedConnection) -> u64 {
    let text: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(c)
        .await
        .unwrap();
    common::info_field(text.as_bytes(), "evicted_keys")
        .and_then(|v| v.trim().parse().ok())
        .expect("evicted_keys in INFO")
}

#[tokio::test]
async fn config_resetstat_zeroes_evicted_keys() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async(&mut c)
        .await
        .unwrap();
    cfg(&mut c, "maxmemory-policy", "allkeys-random").await;
    cfg(&mut c, "maxmemory", "1").await;
    // maxmemory 1 is always exceeded: the next command evicts the only key.
    let _: () = redis::cmd("PING").query_async(&mut c).await.unwrap();
    cfg(&mut c, "maxmemory", "0").await;
    assert_eq!(evicted_keys(&mut c).await, 1);
    let n: i64 = redis::cmd("DBSIZE").query_async(&mut c).await.unwrap();
    assert_eq!(n, 0);
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(evicted_keys(&mut c).await, 0);
    s.shutdown().await;
}

/// CONFIG SET maxmemory below what is used evicts at once (Redis's updateMaxmemory), so a
/// subscriber hears `evicted` without another command being sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_maxmemory_evicts_at_once() {
    use std::time::Duration;
    let s = common::server().await;
    let mut r = common::Raw::connect(&s).await;
    r.cmd(&[b"CONFIG", b"SET", b"notify-keyspace-events", b"Ee"])
        .await;
    r.cmd(&[b"CONFIG", b"SET", b"maxmemory-policy", b"allkeys-lru"])
        .await;
    let mut sub = common::Raw::connect(&s).await;
    sub.cmd(&[b"PSUBSCRIBE", b"*"]).await;
    r.cmd(&[b"SET", b"foo", b"bar"]).await;
    assert_eq!(
        r.cmd(&[b"CONFIG", b"SET", b"maxmemory", b"1"]).await,
        b"+OK\r\n"
    );
    let msg = sub
        .try_reply(Duration::from_secs(2))
        .await
        .expect("an evicted event");
    assert_eq!(
        msg,
        b"*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$22\r\n__keyevent@0__:evicted\r\n$3\r\nfoo\r\n"
    );
    r.cmd(&[b"CONFIG", b"SET", b"maxmemory", b"0"]).await;
    s.shutdown().await;
}

/// Redis evicts after CONFIG SET maxmemory from a timer, never inside the transaction that
/// set it: the EXEC's later commands still see the key (unit/maxmemory's "propagation with
/// eviction in MULTI"), and it goes right after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_maxmemory_in_multi_evicts_after_the_exec() {
    use std::time::{Duration, Instant};
    let s = common::server().await;
    let mut r = common::Raw::connect(&s).await;
    r.cmd(&[b"CONFIG", b"SET", b"maxmemory-policy", b"allkeys-lru"])
        .await;
    assert_eq!(r.cmd(&[b"MULTI"]).await, b"+OK\r\n");
    r.cmd(&[b"INCR", b"x"]).await;
    r.cmd(&[b"CONFIG", b"SET", b"maxmemory", b"1"]).await;
    r.cmd(&[b"INCR", b"x"]).await;
    assert_eq!(r.cmd(&[b"EXEC"]).await, b"*3\r\n:1\r\n+OK\r\n:2\r\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    while r.cmd(&[b"DBSIZE"]).await != b":0\r\n" {
        assert!(Instant::now() < deadline, "x was not evicted");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    r.cmd(&[b"CONFIG", b"SET", b"maxmemory", b"0"]).await;
    s.shutdown().await;
}
