//! The lock patterns of well-known distributed-lock articles that need no Lua, driven through the `redis` crate as
//! a stock client would. Time moves with the server's clock instead of sleeping.
mod common;
use common::*;
use redis::AsyncCommands;

async fn set_nx_px(
    c: &mut redis::aio::MultiplexedConnection,
    key: &str,
    token: &str,
    ms: u64,
) -> bool {
    let r: Option<String> = redis::cmd("SET")
        .arg(key)
        .arg(token)
        .arg("NX")
        .arg("PX")
        .arg(ms)
        .query_async(c)
        .await
        .unwrap();
    r.as_deref() == Some("OK")
}

#[tokio::test]
async fn lease_frees_a_crashed_clients_lock() {
    let s = server().await;
    let mut a = client(&s).await;
    assert!(set_nx_px(&mut a, "lock:res", "token-a", 30_000).await);
    drop(a); // the holder crashes without releasing
    let mut b = client(&s).await;
    assert!(!set_nx_px(&mut b, "lock:res", "token-b", 30_000).await);
    s.state().clock.advance_ms(30_001);
    assert!(set_nx_px(&mut b, "lock:res", "token-b", 30_000).await);
    let v: String = b.get("lock:res").await.unwrap();
    assert_eq!(v, "token-b");
}

#[tokio::test]
async fn setnx_then_expire_gap_leaves_an_immortal_lock() {
    let s = server().await;
    let mut a = client(&s).await;
    let got: i64 = redis::cmd("SETNX")
        .arg("lock:res")
        .arg("1")
        .query_async(&mut a)
        .await
        .unwrap();
    assert_eq!(got, 1);
    drop(a); // dies before its EXPIRE
    let mut b = client(&s).await;
    let ttl: i64 = b.ttl("lock:res").await.unwrap();
    assert_eq!(ttl, -1);
    s.state().clock.advance_ms(365 * 24 * 3600 * 1000);
    let got: i64 = redis::cmd("SETNX")
        .arg("lock:res")
        .arg("2")
        .query_async(&mut b)
        .await
        .unwrap();
    assert_eq!(got, 0, "nothing ever frees the lock");
}

#[tokio::test]
async fn token_keeps_an_expired_holder_from_touching_the_new_holders_lock() {
    let s = server().await;
    let mut a = client(&s).await;
    let mut b = client(&s).await;
    assert!(set_nx_px(&mut a, "lock:res", "token-a", 1_000).await);
    s.state().clock.advance_ms(1_001); // a's work outlives its lease
    assert!(set_nx_px(&mut b, "lock:res", "token-b", 1_000).await);
    // a retries its acquire: NX keeps it from overwriting b's lock
    assert!(!set_nx_px(&mut a, "lock:res", "token-a", 1_000).await);
    // a checks its token before deleting and finds it is no longer the holder
    let holder: String = a.get("lock:res").await.unwrap();
    assert_ne!(holder, "token-a");
    let v: String = b.get("lock:res").await.unwrap();
    assert_eq!(v, "token-b");
}

#[tokio::test]
async fn get_then_del_outside_lua_races_with_expiry() {
    // The unsafe release: a reads its own token, the lease runs out, b takes the lock, and a's
    // DEL removes b's lock. This is why the release must be the Lua compare-and-delete.
    let s = server().await;
    let mut a = client(&s).await;
    let mut b = client(&s).await;
    assert!(set_nx_px(&mut a, "lock:res", "token-a", 1_000).await);
    let mine: String = a.get("lock:res").await.unwrap();
    assert_eq!(mine, "token-a");
    s.state().clock.advance_ms(1_001);
    assert!(set_nx_px(&mut b, "lock:res", "token-b", 1_000).await);
    let deleted: i64 = a.del("lock:res").await.unwrap();
    assert_eq!(deleted, 1, "a deleted b's lock");
}

#[tokio::test]
async fn setnx_getset_timestamp_recipe_takes_over_a_stale_lock() {
    let s = server().await;
    let mut a = client(&s).await;
    let mut b = client(&s).await;
    let now = s.state().clock.now_ms();
    let deadline_a = (now + 1_000).to_string();
    let got: i64 = redis::cmd("SETNX")
        .arg("lock.foo")
        .arg(&deadline_a)
        .query_async(&mut a)
        .await
        .unwrap();
    assert_eq!(got, 1);
    s.state().clock.advance_ms(2_000); // a crashed; its deadline passed
    let now = s.state().clock.now_ms();
    let got: i64 = redis::cmd("SETNX")
        .arg("lock.foo")
        .arg("x")
        .query_async(&mut b)
        .await
        .unwrap();
    assert_eq!(got, 0);
    let stored: String = b.get("lock.foo").await.unwrap();
    assert!(
        stored.parse::<i64>().unwrap() < now,
        "the stored deadline has passed"
    );
    let deadline_b = (now + 1_000).to_string();
    let old: String = b.getset("lock.foo", &deadline_b).await.unwrap();
    assert_eq!(old, stored, "b saw the stale deadline, so b holds the lock");
    let v: String = a.get("lock.foo").await.unwrap();
    assert_eq!(v, deadline_b);
}

#[tokio::test]
async fn redisson_hash_lock_reenters_and_releases_with_plain_commands() {
    let s = server().await;
    let mut c = client(&s).await;
    let key = "myLock";
    let holder = "8743c9c0-0795-4907-87fd-6c719a6b4586:1";
    let exists: i64 = c.exists(key).await.unwrap();
    assert_eq!(exists, 0);
    let n: i64 = c.hincr(key, holder, 1).await.unwrap();
    assert_eq!(n, 1);
    let ok: i64 = c.pexpire(key, 30_000).await.unwrap();
    assert_eq!(ok, 1);
    // reentry by the same holder
    let mine: i64 = c.hexists(key, holder).await.unwrap();
    assert_eq!(mine, 1);
    let n: i64 = c.hincr(key, holder, 1).await.unwrap();
    assert_eq!(n, 2);
    // another holder sees the remaining lease
    let other: i64 = c.hexists(key, "someone-else:1").await.unwrap();
    assert_eq!(other, 0);
    s.state().clock.advance_ms(10_000);
    let pttl: i64 = c.pttl(key).await.unwrap();
    assert!((19_000..=20_000).contains(&pttl), "pttl {pttl}");
    // the watchdog renews
    let ok: i64 = c.pexpire(key, 30_000).await.unwrap();
    assert_eq!(ok, 1);
    // two releases free it
    let n: i64 = c.hincr(key, holder, -1).await.unwrap();
    assert_eq!(n, 1);
    let n: i64 = c.hincr(key, holder, -1).await.unwrap();
    assert_eq!(n, 0);
    let deleted: i64 = c.del(key).await.unwrap();
    assert_eq!(deleted, 1);
    let exists: i64 = c.exists(key).await.unwrap();
    assert_eq!(exists, 0);
}

#[tokio::test]
async fn expired_lock_reads_as_missing_everywhere() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "lock", "t", "PX", "100"), b"+OK\r\n");
    s.state().clock.advance_ms(101);
    assert_eq!(cmd!(c, "GET", "lock"), b"$-1\r\n");
    assert_eq!(cmd!(c, "EXISTS", "lock"), b":0\r\n");
    assert_eq!(cmd!(c, "PTTL", "lock"), b":-2\r\n");
    assert_eq!(cmd!(c, "SET", "lock", "u", "NX", "PX", "100"), b"+OK\r\n");
}
