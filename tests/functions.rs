//! Functions and the shared Lua state, beyond what the recorded conformance cases can show:
//! payloads that travel between servers, libraries that outlive SCRIPT FLUSH, atomicity under
//! concurrent FCALLs, busy functions and the way out of an unkillable one, and that neither
//! thousands of cached scripts nor endless reloads exhaust the interpreter.

mod common;
use common::*;
use resplock::Config;
use std::time::Duration;

const LOCKS: &str = "#!lua name=locks
redis.register_function('acquire', function(keys, args) return redis.call('SET', keys[1], args[1], 'NX', 'PX', args[2]) end)
redis.register_function{function_name='holder', callback=function(keys) return redis.call('GET', keys[1]) end, flags={'no-writes'}}";

fn bulk(b: &[u8]) -> Vec<u8> {
    let mut v = format!("${}\r\n", b.len()).into_bytes();
    v.extend_from_slice(b);
    v.extend_from_slice(b"\r\n");
    v
}

/// The payload of a bulk reply.
fn payload(reply: &[u8]) -> Vec<u8> {
    let start = reply.iter().position(|&c| c == b'\n').expect("header") + 1;
    reply[start..reply.len() - 2].to_vec()
}

#[tokio::test]
async fn function_dump_restores_into_another_server_byte_for_byte() {
    let a = server().await;
    let b = server().await;
    let mut ra = Raw::connect(&a).await;
    let mut rb = Raw::connect(&b).await;
    assert_eq!(cmd!(ra, "FUNCTION", "LOAD", LOCKS), bulk(b"locks"));
    let dump = payload(&cmd!(ra, "FUNCTION", "DUMP"));
    assert_eq!(cmd!(rb, "FUNCTION", "RESTORE", &dump), b"+OK\r\n");
    assert_eq!(
        cmd!(rb, "FCALL", "acquire", "1", "l", "t", "1000"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(rb, "FCALL_RO", "holder", "1", "l"), bulk(b"t"));
    assert_eq!(payload(&cmd!(rb, "FUNCTION", "DUMP")), dump);
    // Appending the same library again collides; REPLACE swaps it.
    assert_eq!(
        cmd!(rb, "FUNCTION", "RESTORE", &dump),
        b"-ERR Library locks already exists\r\n"
    );
    assert_eq!(
        cmd!(rb, "FUNCTION", "RESTORE", &dump, "REPLACE"),
        b"+OK\r\n"
    );
    let mut broken = dump.clone();
    let mid = broken.len() / 2;
    broken[mid] ^= 0x20;
    assert_eq!(
        cmd!(rb, "FUNCTION", "RESTORE", &broken, "FLUSH"),
        b"-ERR DUMP payload version or checksum are wrong\r\n"
    );
    assert_eq!(cmd!(rb, "FCALL_RO", "holder", "1", "l"), bulk(b"t"));
}

#[tokio::test]
async fn libraries_survive_script_flush_and_cached_scripts_do_not() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    cmd!(r, "FUNCTION", "LOAD", LOCKS);
    let sha = payload(&cmd!(r, "SCRIPT", "LOAD", "return 1"));
    assert_eq!(cmd!(r, "SCRIPT", "FLUSH"), b"+OK\r\n");
    assert_eq!(
        cmd!(r, "EVALSHA", &sha, "0"),
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    );
    assert_eq!(
        cmd!(r, "FCALL", "acquire", "1", "l", "t", "1000"),
        b"+OK\r\n"
    );
    let info = String::from_utf8(payload(&cmd!(r, "INFO", "memory"))).unwrap();
    assert!(info.contains("number_of_cached_scripts:0\r\n"), "{info}");
    assert!(info.contains("number_of_functions:2\r\n"), "{info}");
    assert!(info.contains("number_of_libraries:1\r\n"), "{info}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_fcalls_of_a_read_modify_write_function_lose_no_update() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let lib = "#!lua name=counter\nredis.register_function('bump', function(keys) local v = tonumber(redis.call('get', keys[1]) or '0') redis.call('set', keys[1], v + 1) return v + 1 end)";
    assert_eq!(cmd!(r, "FUNCTION", "LOAD", lib), bulk(b"counter"));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let mut c = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                let rep = cmd!(c, "FCALL", "bump", "1", "n");
                assert_eq!(rep[0], b':', "{rep:?}");
            }
        }));
    }
    for _ in 0..4 {
        let mut c = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                assert_eq!(cmd!(c, "INCR", "n")[0], b':');
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("in time")
            .expect("task ok");
    }
    assert_eq!(cmd!(r, "GET", "n"), bulk(b"2400"));
}

#[tokio::test]
async fn thousands_of_cached_scripts_leave_eval_working() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    // mlua keeps its handles on one auxiliary stack of about 8000 slots: scripts must not.
    let mut req = Vec::new();
    for i in 0..9000 {
        let body = format!("return {i}");
        req.extend_from_slice(
            format!(
                "*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n${}\r\n{body}\r\n",
                body.len()
            )
            .as_bytes(),
        );
    }
    r.send(&req).await;
    for i in 0..9000 {
        let rep = r.reply().await;
        assert_eq!(
            rep.len(),
            47,
            "script {i}: {}",
            String::from_utf8_lossy(&rep)
        );
    }
    assert_eq!(
        cmd!(r, "EVAL", "return 'still fine'", "0"),
        bulk(b"still fine")
    );
    assert_eq!(cmd!(r, "FUNCTION", "LOAD", LOCKS), bulk(b"locks"));
    assert_eq!(
        cmd!(r, "FCALL", "acquire", "1", "l", "t", "1000"),
        b"+OK\r\n"
    );
}

#[tokio::test]
async fn reloading_a_library_many_times_keeps_lua_memory_bounded() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let lib = "#!lua name=test\nredis.register_function('test', function(keys) return redis.call('incr', keys[1]) end)";
    let mut req = Vec::new();
    for _ in 0..2000 {
        req.extend_from_slice(
            format!(
                "*4\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n$7\r\nREPLACE\r\n${}\r\n{lib}\r\n",
                lib.len()
            )
            .as_bytes(),
        );
        req.extend_from_slice(b"*4\r\n$5\r\nFCALL\r\n$4\r\ntest\r\n$1\r\n1\r\n$1\r\nx\r\n");
    }
    r.send(&req).await;
    for _ in 0..4000 {
        r.reply().await;
    }
    assert_eq!(cmd!(r, "GET", "x"), bulk(b"2000"));
    let info = String::from_utf8(payload(&cmd!(r, "INFO", "memory"))).unwrap();
    let lua: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory_lua:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory_lua");
    assert!(lua < 200 * 1024, "used_memory_lua {lua}");
}

#[tokio::test]
async fn a_restored_library_that_never_returns_is_stopped() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    // A payload as FUNCTION DUMP writes it, holding a library whose body loops forever.
    let code = b"#!lua name=spin\nwhile true do end";
    let mut p = vec![245u8, code.len() as u8];
    p.extend_from_slice(code);
    p.extend_from_slice(&resplock::rdb::RDB_VERSION.to_le_bytes());
    let crc = resplock::rdb::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    let rep = tokio::time::timeout(
        Duration::from_secs(10),
        r.cmd(&[b"FUNCTION", b"RESTORE", &p]),
    )
    .await
    .expect("restore returns");
    assert_eq!(
        rep,
        b"-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n"
    );
    assert_eq!(cmd!(r, "PING"), b"+PONG\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shutdown_nosave_stops_a_function_that_wrote_and_cannot_be_killed() {
    let s = server_with(Config {
        busy_reply_threshold_ms: 100,
        ..Config::ephemeral()
    })
    .await;
    let mut r = Raw::connect(&s).await;
    let lib = "#!lua name=w\nredis.register_function('w', function() redis.call('set', 'k', 'v') while true do end end)";
    assert_eq!(cmd!(r, "FUNCTION", "LOAD", lib), bulk(b"w"));
    r.send(b"*3\r\n$5\r\nFCALL\r\n$1\r\nw\r\n$1\r\n0\r\n").await;
    until_busy(&s).await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(
        cmd!(other, "FUNCTION", "KILL"),
        b"-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n".to_vec()
    );
    assert_eq!(
        cmd!(other, "PING"),
        b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n".to_vec()
    );
    other
        .send(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n")
        .await;
    assert!(other.closed(Duration::from_secs(5)).await);
    tokio::time::timeout(Duration::from_secs(10), s.wait())
        .await
        .expect("the server stops although the function never returns by itself");
}
