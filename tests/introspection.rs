//! OBJECT's access times and counters on the server clock, DEBUG's server-wide effects, and
//! what bitmap writes count as changes: the parts the conformance cases cannot pin down
//! because they depend on time or on other clients. Expected replies follow redis-server
//! 7.0.15.

mod common;
use common::*;
use resplock::config::ProtectedAction;
use resplock::{Config, ServerHandle};
use std::time::{Duration, Instant};

async fn debug_server() -> ServerHandle {
    let mut c = Config::ephemeral();
    c.enable_debug_command = ProtectedAction::Local;
    server_with(c).await
}

/// The integer in a `:N` reply.
fn int(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .expect("utf8")
        .parse()
        .expect("integer reply")
}

#[tokio::test]
async fn object_idletime_counts_server_clock_seconds_since_the_last_read() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v");
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":0\r\n");
    s.state().clock.advance_ms(10_000);
    // Lookups that Redis makes without touching the key leave the idle time alone.
    cmd!(c, "TTL", "k");
    cmd!(c, "TYPE", "k");
    cmd!(c, "EXISTS", "k");
    cmd!(c, "OBJECT", "ENCODING", "k");
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":10\r\n");
    cmd!(c, "GET", "k");
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":0\r\n");
    s.state().clock.advance_ms(3_000);
    cmd!(c, "TOUCH", "k");
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":0\r\n");
}

#[tokio::test]
async fn object_idletime_of_a_renamed_key_counts_from_the_rename() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "a", "v");
    s.state().clock.advance_ms(5_000);
    cmd!(c, "RENAME", "a", "b");
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "b"), b":0\r\n");
}

#[tokio::test]
async fn object_freq_decays_one_step_per_lfu_decay_time_minute() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu");
    cmd!(c, "SET", "k", "v");
    assert_eq!(cmd!(c, "OBJECT", "FREQ", "k"), b":5\r\n");
    cmd!(c, "GET", "k");
    assert_eq!(cmd!(c, "OBJECT", "FREQ", "k"), b":6\r\n");
    s.state().clock.advance_ms(3 * 60_000);
    assert_eq!(cmd!(c, "OBJECT", "FREQ", "k"), b":3\r\n");
    cmd!(c, "CONFIG", "SET", "lfu-decay-time", "2");
    assert_eq!(cmd!(c, "OBJECT", "FREQ", "k"), b":5\r\n");
    cmd!(c, "CONFIG", "SET", "lfu-decay-time", "0");
    s.state().clock.advance_ms(60 * 60_000);
    assert_eq!(cmd!(c, "OBJECT", "FREQ", "k"), b":6\r\n");
}

#[tokio::test]
async fn a_key_expiring_past_2042_keeps_its_ttl_exactly() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v");
    for at in ["9223372036854775807", "4102444800000", "2300000000000"] {
        cmd!(c, "PEXPIREAT", "k", at);
        assert_eq!(cmd!(c, "PEXPIRETIME", "k"), format!(":{at}\r\n").as_bytes());
    }
    cmd!(c, "PERSIST", "k");
    assert_eq!(cmd!(c, "PEXPIRETIME", "k"), b":-1\r\n");
    // Back in the compact layout, the key records accesses again.
    s.state().clock.advance_ms(4_000);
    assert_eq!(cmd!(c, "OBJECT", "IDLETIME", "k"), b":4\r\n");
}

#[tokio::test]
async fn debug_sleep_makes_other_clients_wait_and_then_serves_them() {
    let s = debug_server().await;
    let mut sleeper = Raw::connect(&s).await;
    let mut other = Raw::connect(&s).await;
    sleeper
        .send(b"*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$3\r\n0.5\r\n")
        .await;
    // Give the sleep time to start, then ask for something else.
    tokio::time::sleep(Duration::from_millis(100)).await;
    other.send(b"*1\r\n$4\r\nPING\r\n").await;
    let (slept, ponged) = tokio::join!(
        async {
            let r = sleeper.reply().await;
            (r, Instant::now())
        },
        async {
            let r = other.reply().await;
            (r, Instant::now())
        }
    );
    assert_eq!(slept.0, b"+OK\r\n");
    // Not BUSY: the other client simply waited for the sleep to end, as with Redis.
    assert_eq!(ponged.0, b"+PONG\r\n");
    assert!(ponged.1 >= slept.1, "PING was answered during DEBUG SLEEP");
}

#[tokio::test]
async fn debug_set_active_expire_0_leaves_expired_keys_until_looked_up() {
    let s = debug_server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "DEBUG", "SET-ACTIVE-EXPIRE", "0"), b"+OK\r\n");
    for i in 0..20 {
        cmd!(c, "SET", format!("k{i}"), "v", "PX", "1");
    }
    s.state().clock.advance_ms(5_000);
    // Several expiry cycles (100 ms apart) pass: none may reclaim anything.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(cmd!(c, "DBSIZE"), b":20\r\n");
    assert_eq!(cmd!(c, "DEBUG", "SET-ACTIVE-EXPIRE", "1"), b"+OK\r\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    while int(&cmd!(c, "DBSIZE")) != 0 {
        assert!(Instant::now() < deadline, "active expiry did not resume");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// INFO's rdb_changes_since_last_save.
async fn dirty(c: &mut Raw) -> i64 {
    let info = cmd!(c, "INFO", "persistence");
    let text = String::from_utf8_lossy(&info).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("rdb_changes_since_last_save:"))
        .expect("field present")
        .trim()
        .parse()
        .expect("a number")
}

#[tokio::test]
async fn setbit_and_bitfield_count_a_change_only_when_the_bits_or_length_change() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let d0 = dirty(&mut c).await;
    cmd!(c, "SETBIT", "a", "0", "0");
    cmd!(c, "BITFIELD", "b", "SET", "i5", "0", "0");
    assert_eq!(dirty(&mut c).await, d0 + 2, "creating a key is a change");
    cmd!(c, "SETBIT", "a", "0", "0");
    cmd!(c, "BITFIELD", "b", "SET", "i5", "0", "0");
    assert_eq!(dirty(&mut c).await, d0 + 2, "writing the same bits is not");
    cmd!(c, "SETBIT", "a", "0", "1");
    cmd!(c, "SETBIT", "a", "0", "1");
    cmd!(c, "BITFIELD", "b", "SET", "i5", "0", "1");
    cmd!(c, "BITFIELD", "b", "SET", "i5", "0", "1");
    assert_eq!(dirty(&mut c).await, d0 + 4);
    cmd!(c, "SETBIT", "a", "90", "0");
    cmd!(c, "BITFIELD", "b", "SET", "i5", "90", "0");
    assert_eq!(
        dirty(&mut c).await,
        d0 + 6,
        "growing the string is a change"
    );
}

#[tokio::test]
async fn debug_reload_forgets_unsaved_changes_and_keeps_the_digest() {
    let s = debug_server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SETBIT", "a", "3", "1");
    cmd!(c, "HSET", "h", "f", "v");
    let digest = cmd!(c, "DEBUG", "DIGEST");
    assert!(dirty(&mut c).await > 0);
    assert_eq!(cmd!(c, "DEBUG", "RELOAD"), b"+OK\r\n");
    assert_eq!(dirty(&mut c).await, 0);
    assert_eq!(cmd!(c, "DEBUG", "DIGEST"), digest);
}

#[tokio::test]
async fn bitmap_commands_reject_offsets_past_proto_max_bulk_len() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "CONFIG", "SET", "proto-max-bulk-len", "1mb");
    let err = b"-ERR bit offset is not an integer or out of range\r\n";
    assert_eq!(cmd!(c, "SETBIT", "k", "8388608", "1"), err);
    assert_eq!(cmd!(c, "BITFIELD", "k", "SET", "u8", "#1048576", "1"), err);
    assert_eq!(cmd!(c, "SETBIT", "k", "8388607", "1"), b":0\r\n");
    assert_eq!(cmd!(c, "STRLEN", "k"), b":1048576\r\n");
}

#[tokio::test]
async fn memory_doctor_calls_a_fresh_server_empty() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let text = "Hi Sam, this instance is empty or is using very little memory, my issues detector \
                can't be used in these conditions. Please, leave for your mission on Earth and fill \
                it with some data. The new Sam and I will be back to our programming as soon as I \
                finished rebooting.\n";
    let want = format!("${}\r\n{text}\r\n", text.len());
    assert_eq!(cmd!(c, "MEMORY", "DOCTOR"), want.as_bytes());
}

/// The `cmdstat_<name>` line of INFO commandstats, without its timing fields.
fn cmdstat(info: &[u8], name: &str) -> Option<String> {
    let text = String::from_utf8_lossy(info);
    let prefix = format!("cmdstat_{name}:");
    let line = text.lines().find(|l| l.starts_with(&prefix))?;
    let fields: Vec<&str> = line[prefix.len()..]
        .split(',')
        .filter(|f| {
            f.starts_with("calls=")
                || f.starts_with("rejected_calls=")
                || f.starts_with("failed_calls=")
        })
        .collect();
    Some(fields.join(","))
}

#[tokio::test]
async fn commandstats_count_calls_rejections_and_failures_per_server_and_subcommand() {
    let a = server().await;
    let b = server().await;
    let mut c = Raw::connect(&a).await;
    cmd!(c, "SET", "k", "v");
    cmd!(c, "GET", "k");
    cmd!(c, "GET", "k");
    cmd!(c, "GET"); // wrong arity: rejected
    cmd!(c, "INCR", "k"); // not an integer: failed
    cmd!(c, "CLIENT", "ID");
    // A script's own calls are counted under their names too.
    cmd!(c, "EVAL", "return redis.call('get', KEYS[1])", "1", "k");
    let info = cmd!(c, "INFO", "commandstats");
    assert_eq!(
        cmdstat(&info, "get").as_deref(),
        Some("calls=3,rejected_calls=1,failed_calls=0")
    );
    assert_eq!(
        cmdstat(&info, "incr").as_deref(),
        Some("calls=1,rejected_calls=0,failed_calls=1")
    );
    assert_eq!(
        cmdstat(&info, "client|id").as_deref(),
        Some("calls=1,rejected_calls=0,failed_calls=0")
    );
    assert_eq!(cmdstat(&info, "client"), None);
    // Another server in the same process keeps its own counts.
    let mut d = Raw::connect(&b).await;
    let other = cmd!(d, "INFO", "commandstats");
    assert_eq!(cmdstat(&other, "get"), None);
    assert_eq!(cmdstat(&other, "incr"), None);
    // CONFIG RESETSTAT starts them again; it is counted itself, INFO not yet (as Redis).
    cmd!(c, "CONFIG", "RESETSTAT");
    let info = cmd!(c, "INFO", "commandstats");
    assert_eq!(cmdstat(&info, "get"), None);
    assert_eq!(cmdstat(&info, "info"), None);
    assert_eq!(
        cmdstat(&info, "config|resetstat").as_deref(),
        Some("calls=1,rejected_calls=0,failed_calls=0")
    );
}

#[tokio::test]
async fn debug_htstats_describes_the_dict_redis_would_hold_for_the_keys() {
    let s = debug_server().await;
    let mut c = Raw::connect(&s).await;
    let empty = cmd!(c, "DEBUG", "HTSTATS", "0");
    assert_eq!(
        empty,
        b"$189\r\n[Dictionary HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n[Expires HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n\r\n"
    );
    for i in 0..5 {
        cmd!(c, "SET", format!("k{i}"), "v");
    }
    cmd!(c, "EXPIRE", "k0", "100");
    let text = String::from_utf8(cmd!(c, "DEBUG", "HTSTATS", "0")).unwrap();
    let (keys, expires) = text.split_once("[Expires HT]\n").unwrap();
    // Five keys: Redis's dict has grown from 4 to 8 slots.
    assert!(
        keys.contains(" table size: 8\n number of elements: 5\n"),
        "{keys}"
    );
    assert!(expires.contains(" table size: 4\n number of elements: 1\n different slots: 1\n max chain length: 1\n avg chain length (counted): 1.00\n avg chain length (computed): 1.00\n Chain length distribution:\n   0: 3 (75.00%)\n   1: 1 (25.00%)\n"), "{expires}");
    assert_eq!(
        cmd!(c, "DEBUG", "HTSTATS", "16"),
        b"-ERR Out of range database\r\n"
    );
    assert_eq!(
        cmd!(c, "DEBUG", "HTSTATS-KEY", "k1"),
        b"-ERR The value stored at the specified key is not represented using an hash table\r\n"
    );
    assert_eq!(
        cmd!(c, "DEBUG", "HTSTATS-KEY", "nokey"),
        b"-ERR no such key\r\n"
    );
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut sadd: Vec<&[u8]> = vec![b"SADD", b"set"];
    sadd.extend(members.iter().map(|m| m.as_bytes()));
    c.cmd(&sadd).await;
    let set = String::from_utf8(cmd!(c, "DEBUG", "HTSTATS-KEY", "set")).unwrap();
    assert!(
        set.contains(" table size: 256\n number of elements: 200\n"),
        "{set}"
    );
}
