//! A lock test as a user of the crate writes it: an embedded server, the `redis` crate, the
//! SET NX PX lock with the compare-and-delete release in Lua, and the frozen clock expiring it.

use std::time::Duration;

const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

#[test]
fn a_lock_is_exclusive_released_by_its_owner_and_expires_with_the_clock() {
    // A frozen clock: time moves only when the test says, so TTLs do not depend on its speed.
    let server = resplock::BlockingServer::start(resplock::Config::ephemeral().frozen()).unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let acquire = |con: &mut redis::Connection, token: &str| -> Option<String> {
        redis::cmd("SET")
            .arg("lock:order-42")
            .arg(token)
            .arg("NX")
            .arg("PX")
            .arg(30_000)
            .query(con)
            .unwrap()
    };

    assert_eq!(acquire(&mut con, "owner-1").as_deref(), Some("OK"));
    assert_eq!(acquire(&mut con, "owner-2"), None);
    let release = redis::Script::new(RELEASE);
    let released: i64 = release.key("lock:order-42").arg("owner-2").invoke(&mut con).unwrap();
    assert_eq!(released, 0, "a non-owner's release deletes nothing");
    let released: i64 = release.key("lock:order-42").arg("owner-1").invoke(&mut con).unwrap();
    assert_eq!(released, 1);

    // Expiry without sleeping.
    assert_eq!(acquire(&mut con, "owner-2").as_deref(), Some("OK"));
    server.advance(Duration::from_millis(30_001));
    server.db(0).assert_missing("lock:order-42");
    assert_eq!(acquire(&mut con, "owner-3").as_deref(), Some("OK"));
}

#[test]
fn scripts_run_on_redis_patched_lua_with_read_only_library_tables() {
    let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    let err = redis::cmd("EVAL")
        .arg("string.len = nil")
        .arg(0)
        .query::<()>(&mut con)
        .unwrap_err();
    assert!(
        err.to_string().contains("Attempt to modify a readonly table"),
        "{err}"
    );
}
