//! Blocking pops beyond the recorded sessions of conformance/blocking.case: exactly-once
//! delivery under concurrency, timeouts on the virtual clock, CLIENT UNBLOCK, disconnects and
//! CLIENT KILL of blocked clients, and the lock libraries' wake-up (python-redis-lock's
//! BLPOP/LPUSH signal) through MULTI/EXEC and through a script.

mod common;
use common::*;
use std::collections::HashSet;
use std::time::Duration;

fn int(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

async fn client_id(c: &mut Raw) -> i64 {
    int(&cmd!(c, "CLIENT", "ID"))
}

/// The two bulk strings of a `[key, element]` reply.
fn key_and_element(reply: &[u8]) -> (String, String) {
    let text = String::from_utf8(reply.to_vec()).unwrap();
    let parts: Vec<&str> = text.split("\r\n").collect();
    assert_eq!(parts[0], "*2", "{text}");
    (parts[2].to_string(), parts[4].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pushed_element_reaches_exactly_one_of_many_blocked_poppers() {
    const POPPERS: usize = 16;
    const PUSHERS: usize = 4;
    const PER_PUSHER: usize = 400;
    let s = server().await;
    let mut poppers = Vec::new();
    for p in 0..POPPERS {
        let mut c = Raw::connect(&s).await;
        poppers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            loop {
                // A long timeout: a popper left blocked while the list has data would hang
                // here until the test's own bound fails it.
                let r = if p % 2 == 0 {
                    cmd!(c, "BLPOP", "q", "other", "30")
                } else {
                    cmd!(c, "BRPOP", "other", "q", "30")
                };
                assert_ne!(r, b"*-1\r\n", "timed out while elements were pushed");
                let (key, v) = key_and_element(&r);
                assert_eq!(key, "q");
                if v == "STOP" {
                    return got;
                }
                got.push(v);
            }
        }));
    }
    let mut watcher = Raw::connect(&s).await;
    until_blocked(&mut watcher, POPPERS as i64).await;
    let mut pushers = Vec::new();
    for m in 0..PUSHERS {
        let mut c = Raw::connect(&s).await;
        pushers.push(tokio::spawn(async move {
            let mut i = 0;
            while i < PER_PUSHER {
                // Every path that can push: one command, several elements, a transaction,
                // a script.
                match i % 4 {
                    0 => {
                        cmd!(c, "RPUSH", "q", format!("{m}-{i}"));
                        i += 1;
                    }
                    1 => {
                        cmd!(
                            c,
                            "LPUSH",
                            "q",
                            format!("{m}-{i}"),
                            format!("{m}-{}", i + 1)
                        );
                        i += 2;
                    }
                    2 => {
                        cmd!(c, "MULTI");
                        cmd!(c, "RPUSH", "q", format!("{m}-{i}"));
                        cmd!(c, "EXEC");
                        i += 1;
                    }
                    _ => {
                        cmd!(
                            c,
                            "EVAL",
                            "return redis.call('rpush', KEYS[1], ARGV[1])",
                            "1",
                            "q",
                            format!("{m}-{i}")
                        );
                        i += 1;
                    }
                }
            }
        }));
    }
    let all = tokio::time::timeout(Duration::from_secs(120), async {
        for p in pushers {
            p.await.unwrap();
        }
        let mut c = Raw::connect(&s).await;
        for _ in 0..POPPERS {
            cmd!(c, "RPUSH", "q", "STOP");
        }
        let mut all = Vec::new();
        for p in poppers {
            all.extend(p.await.unwrap());
        }
        all
    })
    .await
    .expect("bounded run");
    let unique: HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), all.len(), "an element was delivered twice");
    let expected: HashSet<String> = (0..PUSHERS)
        .flat_map(|m| {
            (0..PER_PUSHER)
                .map(move |i| format!("{m}-{i}"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(unique.len(), expected.len(), "an element was lost");
    assert!(all.iter().all(|v| expected.contains(v)));
    assert_eq!(cmd!(watcher, "EXISTS", "q"), b":0\r\n");
    assert_eq!(blocked_clients(&mut watcher).await, 0);
    s.shutdown().await;
}

#[tokio::test]
async fn blocked_clients_on_one_key_are_served_in_arrival_order() {
    let s = server().await;
    let mut clients = Vec::new();
    let mut admin = Raw::connect(&s).await;
    for i in 0..5 {
        let mut c = Raw::connect(&s).await;
        c.send(b"BLPOP q 0\r\n").await;
        until_blocked(&mut admin, i + 1).await;
        clients.push(c);
    }
    cmd!(admin, "RPUSH", "q", "0", "1", "2", "3", "4");
    for (i, c) in clients.iter_mut().enumerate() {
        assert_eq!(
            key_and_element(&c.reply().await),
            ("q".into(), i.to_string())
        );
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_timeout_passes_when_the_virtual_clock_moves() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    c.send(b"BLPOP q 3600\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert!(c.try_reply(Duration::from_millis(100)).await.is_none());
    s.state().clock.advance_ms(3_600_000 + 5);
    let r = c
        .try_reply(Duration::from_secs(5))
        .await
        .expect("timed out on the moved clock");
    assert_eq!(r, b"*-1\r\n");
    assert_eq!(blocked_clients(&mut admin).await, 0);
    // BLMOVE's timeout is a null array too (Redis's replyToBlockedClientTimedOut).
    c.send(b"BLMOVE a b LEFT LEFT 10\r\n").await;
    until_blocked(&mut admin, 1).await;
    s.state().clock.advance_ms(10_005);
    assert_eq!(c.reply().await, b"*-1\r\n");
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn a_fractional_timeout_passes_in_real_time() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let started = std::time::Instant::now();
    assert_eq!(cmd!(c, "BRPOP", "q", "0.05"), b"*-1\r\n");
    assert!(started.elapsed() >= Duration::from_millis(50));
    s.shutdown().await;
}

#[tokio::test]
async fn client_unblock_answers_the_blocked_client_as_timeout_or_error() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    let id = client_id(&mut c).await.to_string();
    c.send(b"BLPOP q 0\r\nPING\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert!(String::from_utf8(cmd!(admin, "CLIENT", "LIST"))
        .unwrap()
        .contains(" flags=b "));
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id), b":1\r\n");
    assert_eq!(c.reply().await, b"*-1\r\n");
    assert_eq!(c.reply().await, b"+PONG\r\n");
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id), b":0\r\n");
    c.send(b"BLMPOP 0 1 q LEFT\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "UNBLOCK", &id, "ERROR"), b":1\r\n");
    assert_eq!(
        c.reply().await,
        b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    );
    // Nothing pushed afterwards is taken by the unblocked client.
    cmd!(admin, "RPUSH", "q", "x");
    assert_eq!(cmd!(admin, "LLEN", "q"), b":1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn a_blocked_client_that_disconnects_or_is_killed_is_forgotten() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let c = {
        let mut c = Raw::connect(&s).await;
        c.send(b"BLPOP q 0\r\n").await;
        c
    };
    until_blocked(&mut admin, 1).await;
    drop(c);
    until_blocked(&mut admin, 0).await;
    let mut k = Raw::connect(&s).await;
    let id = client_id(&mut k).await.to_string();
    k.send(b"BRPOPLPUSH q d 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "CLIENT", "KILL", "ID", &id), b":1\r\n");
    assert!(k.closed(Duration::from_secs(5)).await);
    until_blocked(&mut admin, 0).await;
    // The element stays for whoever asks next: nobody dead took it.
    cmd!(admin, "RPUSH", "q", "kept");
    assert_eq!(
        cmd!(admin, "LRANGE", "q", "0", "-1"),
        b"*1\r\n$4\r\nkept\r\n"
    );
    assert_eq!(cmd!(admin, "EXISTS", "d"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn a_blocked_client_keeps_its_later_requests_until_it_is_served() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    c.send(b"BLPOP q 0\r\nSET after 1\r\nGET after\r\n").await;
    until_blocked(&mut admin, 1).await;
    assert_eq!(cmd!(admin, "EXISTS", "after"), b":0\r\n");
    cmd!(admin, "LPUSH", "q", "go");
    assert_eq!(c.reply().await, b"*2\r\n$1\r\nq\r\n$2\r\ngo\r\n");
    assert_eq!(c.reply().await, b"+OK\r\n");
    assert_eq!(c.reply().await, b"$1\r\n1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn swapdb_serves_clients_blocked_in_either_database() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SELECT", "1");
    c.send(b"BLPOP q 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    cmd!(admin, "RPUSH", "q", "from-db0");
    // db 0's list moves to db 1, where the client waits.
    assert_eq!(cmd!(admin, "SWAPDB", "0", "1"), b"+OK\r\n");
    assert_eq!(c.reply().await, b"*2\r\n$1\r\nq\r\n$8\r\nfrom-db0\r\n");
    s.shutdown().await;
}

/// python-redis-lock: acquire is `SET name token NX EX t`, a waiter that fails blocks on
/// `BLPOP signal t`, and release is a script (or a transaction) that deletes the lock and
/// LPUSHes the signal in one step.
const RELEASE: &str = r#"
if redis.call("get", KEYS[1]) ~= ARGV[1] then
    return 1
else
    redis.call("del", KEYS[2])
    redis.call("lpush", KEYS[2], 1)
    redis.call("pexpire", KEYS[2], ARGV[2])
    redis.call("del", KEYS[1])
    return 0
end"#;

#[tokio::test]
async fn a_lock_waiter_blocked_on_blpop_is_woken_by_a_release_script() {
    let s = server().await;
    let url = format!("redis://{}", s.local_addr());
    let client = redis::Client::open(url).unwrap();
    let mut holder = client.get_multiplexed_async_connection().await.unwrap();
    let acquired: Option<String> = redis::cmd("SET")
        .arg("lock:job")
        .arg("holder-token")
        .arg("NX")
        .arg("EX")
        .arg(30)
        .query_async(&mut holder)
        .await
        .unwrap();
    assert_eq!(acquired.as_deref(), Some("OK"));
    let waiter_client = client.clone();
    let waiter = tokio::spawn(async move {
        let mut w = waiter_client
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        loop {
            let got: Option<String> = redis::cmd("SET")
                .arg("lock:job")
                .arg("waiter-token")
                .arg("NX")
                .arg("EX")
                .arg(30)
                .query_async(&mut w)
                .await
                .unwrap();
            if got.is_some() {
                return true;
            }
            let woke: Option<(String, String)> = redis::cmd("BLPOP")
                .arg("lock-signal:job")
                .arg(20)
                .query_async(&mut w)
                .await
                .unwrap();
            if woke.is_none() {
                return false;
            }
        }
    });
    let mut admin = Raw::connect(&s).await;
    until_blocked(&mut admin, 1).await;
    let released: i64 = redis::cmd("EVAL")
        .arg(RELEASE)
        .arg(2)
        .arg("lock:job")
        .arg("lock-signal:job")
        .arg("holder-token")
        .arg(1000)
        .query_async(&mut holder)
        .await
        .unwrap();
    assert_eq!(released, 0);
    let woke = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter was woken")
        .unwrap();
    assert!(woke, "the waiter timed out instead of being woken");
    assert_eq!(cmd!(admin, "GET", "lock:job"), b"$12\r\nwaiter-token\r\n");
    // The script deleted the signal list before pushing, and the waiter popped the push.
    assert_eq!(cmd!(admin, "EXISTS", "lock-signal:job"), b":0\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn a_lock_waiter_blocked_on_blpop_is_woken_by_a_release_transaction() {
    let s = server().await;
    let url = format!("redis://{}", s.local_addr());
    let client = redis::Client::open(url).unwrap();
    let mut holder = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("SET")
        .arg("lock:job")
        .arg("t1")
        .query_async(&mut holder)
        .await
        .unwrap();
    let waiter_client = client.clone();
    let waiter = tokio::spawn(async move {
        let mut w = waiter_client
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let woke: Option<(String, String)> = redis::cmd("BLPOP")
            .arg("lock-signal:job")
            .arg(20)
            .query_async(&mut w)
            .await
            .unwrap();
        let exists: i64 = redis::cmd("EXISTS")
            .arg("lock:job")
            .query_async(&mut w)
            .await
            .unwrap();
        (woke, exists)
    });
    let mut admin = Raw::connect(&s).await;
    until_blocked(&mut admin, 1).await;
    // The redis crate's atomic pipeline sends MULTI ... EXEC, as redis-py's pipeline does.
    let (deleted, pushed): (i64, i64) = redis::pipe()
        .atomic()
        .cmd("DEL")
        .arg("lock:job")
        .cmd("LPUSH")
        .arg("lock-signal:job")
        .arg(1)
        .query_async(&mut holder)
        .await
        .unwrap();
    assert_eq!((deleted, pushed), (1, 1));
    let (woke, exists) = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .expect("the waiter was woken")
        .unwrap();
    assert_eq!(woke, Some(("lock-signal:job".into(), "1".into())));
    // Woken after the whole transaction: the lock was already gone.
    assert_eq!(exists, 0);
    s.shutdown().await;
}

/// The `args` array of the newest SLOWLOG entry, as RESP bytes (`SLOWLOG GET 1`).
async fn newest_slowlog_args(c: &mut Raw) -> String {
    let r = String::from_utf8(cmd!(c, "SLOWLOG", "GET", "1")).unwrap();
    // *1 / *6 / :id / :time / :duration / then the args array up to the peer's bulk.
    let lines: Vec<&str> = r.split("\r\n").collect();
    assert_eq!(&lines[..2], ["*1", "*6"], "{r}");
    let n: usize = lines[5][1..].parse().unwrap();
    lines[5..6 + 2 * n].join("\r\n")
}

#[tokio::test]
async fn a_blocked_pop_is_slow_logged_with_its_own_arguments_when_served() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    cmd!(admin, "CONFIG", "SET", "slowlog-log-slower-than", "0");
    let mut c = Raw::connect(&s).await;
    c.send(b"BLPOP l 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    // Served inside EXEC after the log was emptied: logged then, after the EXEC.
    cmd!(admin, "MULTI");
    cmd!(admin, "LPUSH", "l", "foo");
    cmd!(admin, "SLOWLOG", "RESET");
    assert_eq!(cmd!(admin, "EXEC"), b"*2\r\n:1\r\n+OK\r\n".to_vec());
    assert_eq!(c.reply().await, b"*2\r\n$1\r\nl\r\n$3\r\nfoo\r\n");
    assert_eq!(
        newest_slowlog_args(&mut admin).await,
        "*3\r\n$5\r\nBLPOP\r\n$1\r\nl\r\n$1\r\n0"
    );
    // Unblocked with an error: logged without arguments, as Redis (which has already
    // dropped them) does.
    let id = client_id(&mut c).await.to_string();
    c.send(b"BLPOP l 0\r\n").await;
    until_blocked(&mut admin, 1).await;
    cmd!(admin, "CLIENT", "UNBLOCK", &id, "ERROR");
    c.reply().await;
    let r = String::from_utf8(cmd!(admin, "SLOWLOG", "GET", "2")).unwrap();
    assert!(r.contains("\r\n*0\r\n"), "{r}");
    s.shutdown().await;
}
