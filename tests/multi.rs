//! MULTI/EXEC/WATCH beyond the recorded sessions of conformance/multi.case: isolation against
//! concurrent clients and scripts, WATCH against every path that changes a key, and cleanup
//! (RESET, QUIT, CLIENT KILL, disconnect leave nothing behind).

mod common;
use common::*;
use std::time::Duration;

fn int(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// The number of an `id` field from CLIENT ID.
async fn client_id(c: &mut Raw) -> i64 {
    int(&cmd!(c, "CLIENT", "ID"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_is_isolated_from_concurrent_clients_and_scripts() {
    let s = server().await;
    let mut setup = Raw::connect(&s).await;
    cmd!(setup, "MSET", "x", "0", "y", "0");
    const ROUNDS: usize = 1500;
    // Writers: transactions and scripts that each move x and y together.
    let mut tasks = Vec::new();
    for w in 0..2 {
        let mut c = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                if w == 0 {
                    cmd!(c, "MULTI");
                    cmd!(c, "INCR", "x");
                    cmd!(c, "INCR", "y");
                    let r = cmd!(c, "EXEC");
                    assert!(r.starts_with(b"*2\r\n:"), "{r:?}");
                } else {
                    let r = cmd!(
                        c,
                        "EVAL",
                        "redis.call('incr', KEYS[1]); return redis.call('incr', KEYS[2])",
                        "2",
                        "x",
                        "y"
                    );
                    assert!(r.starts_with(b":"), "{r:?}");
                }
            }
        }));
    }
    // Readers: a plain MGET, a transaction and a script; none may see x and y apart.
    for r in 0..3 {
        let mut c = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..ROUNDS {
                let reply = match r {
                    0 => cmd!(c, "MGET", "x", "y"),
                    1 => {
                        cmd!(c, "MULTI");
                        cmd!(c, "GET", "x");
                        cmd!(c, "GET", "y");
                        cmd!(c, "EXEC")
                    }
                    _ => cmd!(
                        c,
                        "EVAL",
                        "return {redis.call('get', KEYS[1]), redis.call('get', KEYS[2])}",
                        "2",
                        "x",
                        "y"
                    ),
                };
                let text = String::from_utf8(reply).unwrap();
                let vals: Vec<&str> = text
                    .split("\r\n")
                    .filter(|l| !l.is_empty() && !l.starts_with(['*', '$']))
                    .collect();
                assert_eq!(vals.len(), 2, "{text}");
                assert_eq!(vals[0], vals[1], "a reader saw half a transaction: {text}");
            }
        }));
    }
    tokio::time::timeout(Duration::from_secs(120), async {
        for t in tasks {
            t.await.unwrap();
        }
    })
    .await
    .expect("bounded run");
    let total = (2 * ROUNDS) as i64;
    assert_eq!(
        cmd!(setup, "MGET", "x", "y"),
        format!(
            "*2\r\n${}\r\n{total}\r\n${}\r\n{total}\r\n",
            total.to_string().len(),
            total.to_string().len()
        )
        .into_bytes()
    );
    s.shutdown().await;
}

#[tokio::test]
async fn watch_fails_exec_when_another_client_changes_the_key_through_any_path() {
    let s = server().await;
    let mut w = Raw::connect(&s).await;
    let mut o = Raw::connect(&s).await;
    // (what the other client does first, the write that must touch k)
    let writes: &[(&[&str], &[&str])] = &[
        (&[], &["SET", "k", "1"]),
        (&[], &["APPEND", "k", "x"]),
        (&[], &["DEL", "k"]),
        (&[], &["HSET", "k", "f", "v"]),
        (&[], &["EXPIRE", "k", "100"]),
        (&[], &["PERSIST", "k"]),
        (&[], &["RENAME", "k", "k2"]),
        (&["SET", "k2", "v"], &["RENAME", "k2", "k"]),
        (&["DEL", "k"], &["LPUSH", "k", "a"]),
        (&["RPUSH", "l", "x"], &["LMOVE", "l", "k", "LEFT", "LEFT"]),
        (&["RPUSH", "l", "x"], &["RPOPLPUSH", "k", "l"]),
        (&[], &["FLUSHDB"]),
    ];
    for (prep, write) in writes {
        if !prep.is_empty() {
            let args: Vec<&[u8]> = prep.iter().map(|a| a.as_bytes()).collect();
            o.cmd(&args).await;
        }
        cmd!(w, "WATCH", "k");
        let args: Vec<&[u8]> = write.iter().map(|a| a.as_bytes()).collect();
        o.cmd(&args).await;
        cmd!(w, "MULTI");
        cmd!(w, "PING");
        assert_eq!(cmd!(w, "EXEC"), b"*-1\r\n", "{write:?} did not touch k");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_key_watched_alive_that_expires_on_the_virtual_clock_fails_exec() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v", "PX", "60000");
    cmd!(c, "WATCH", "k");
    s.state().clock.advance_ms(60_001);
    cmd!(c, "MULTI");
    cmd!(c, "PING");
    assert_eq!(cmd!(c, "EXEC"), b"*-1\r\n");
    // Once watched while already stale, the same expiry changes nothing.
    cmd!(c, "SET", "k", "v", "PX", "10");
    s.state().clock.advance_ms(20);
    cmd!(c, "WATCH", "k");
    cmd!(c, "MULTI");
    cmd!(c, "PING");
    assert_eq!(cmd!(c, "EXEC"), b"*1\r\n+PONG\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn active_expiry_of_a_watched_key_fails_exec() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "SET", "k", "v", "PX", "30");
    cmd!(c, "WATCH", "k");
    s.state().clock.advance_ms(100);
    // Nobody reads k: the active expirer reclaims it within about a second.
    let mut gone = false;
    for _ in 0..100 {
        if cmd!(c, "DBSIZE") == b":0\r\n" {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    assert!(gone, "active expiry did not reclaim k");
    assert!(s.state().watches.is_dirty(client_id(&mut c).await as u64));
    cmd!(c, "MULTI");
    cmd!(c, "PING");
    assert_eq!(cmd!(c, "EXEC"), b"*-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn watching_many_keys_is_one_registry_entry_each_and_all_go_at_once() {
    let s = server().await;
    let mut w = Raw::connect(&s).await;
    let mut o = Raw::connect(&s).await;
    let id = client_id(&mut w).await as u64;
    let keys: Vec<String> = (0..20_000).map(|i| format!("key:{i}")).collect();
    let mut args: Vec<&[u8]> = vec![b"WATCH"];
    args.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(w.cmd(&args).await, b"+OK\r\n");
    assert_eq!(w.cmd(&args).await, b"+OK\r\n");
    assert_eq!(s.state().watches.watched_by(id), 20_000);
    // Writes to keys nobody watches leave the watcher alone.
    for i in 0..100 {
        cmd!(o, "SET", format!("other:{i}"), "v");
    }
    assert!(!s.state().watches.is_dirty(id));
    // One watched write: dirty, and every watch is dropped at once.
    cmd!(o, "SET", "key:19999", "v");
    assert!(s.state().watches.is_dirty(id));
    assert_eq!(s.state().watches.watched_by(id), 0);
    assert!(!s.state().watches.any());
    cmd!(w, "MULTI");
    assert_eq!(cmd!(w, "EXEC"), b"*-1\r\n");
    assert!(!s.state().watches.is_dirty(id));
    s.shutdown().await;
}

#[tokio::test]
async fn reset_quit_kill_and_disconnect_leave_no_transaction_or_watch_behind() {
    let s = server().await;
    let mut admin = Raw::connect(&s).await;
    // RESET
    let mut c = Raw::connect(&s).await;
    let id = client_id(&mut c).await as u64;
    cmd!(c, "WATCH", "a", "b");
    cmd!(c, "MULTI");
    cmd!(c, "SET", "a", "1");
    assert_eq!(cmd!(c, "RESET"), b"+RESET\r\n");
    assert_eq!(s.state().watches.watched_by(id), 0);
    assert_eq!(cmd!(c, "EXEC"), b"-ERR EXEC without MULTI\r\n");
    assert_eq!(cmd!(c, "GET", "a"), b"$-1\r\n");
    // QUIT inside MULTI
    let mut c = Raw::connect(&s).await;
    cmd!(c, "WATCH", "a");
    cmd!(c, "MULTI");
    assert_eq!(cmd!(c, "QUIT"), b"+OK\r\n");
    assert!(c.closed(Duration::from_secs(5)).await);
    // CLIENT KILL of a client in MULTI with watches
    let mut c = Raw::connect(&s).await;
    let id = client_id(&mut c).await;
    cmd!(c, "WATCH", "a", "b", "c");
    cmd!(c, "MULTI");
    cmd!(c, "SET", "a", "1");
    assert_eq!(
        cmd!(admin, "CLIENT", "KILL", "ID", id.to_string()),
        b":1\r\n"
    );
    assert!(c.closed(Duration::from_secs(5)).await);
    // A plain disconnect
    let mut c = Raw::connect(&s).await;
    cmd!(c, "WATCH", "d");
    cmd!(c, "MULTI");
    drop(c);
    let mut empty = false;
    for _ in 0..100 {
        if !s.state().watches.any()
            && cmd!(admin, "CLIENT", "LIST")
                .windows(8)
                .all(|w| w != b"flags=x ")
        {
            empty = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(empty, "watches or transactions left behind");
    assert_eq!(cmd!(admin, "GET", "a"), b"$-1\r\n");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_queued_during_a_busy_script_is_refused_and_aborts() {
    let mut config = resplock::Config::ephemeral();
    config.busy_reply_threshold_ms = 50;
    let s = server_with(config).await;
    let mut runner = Raw::connect(&s).await;
    let mut c = Raw::connect(&s).await;
    let mut killer = Raw::connect(&s).await;
    cmd!(c, "MULTI");
    let script = "local i = 0 while true do i = i + 1 end";
    runner
        .send(
            format!(
                "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                script.len()
            )
            .as_bytes(),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let queued = cmd!(c, "SET", "a", "1");
    assert!(
        queued.starts_with(b"-BUSY "),
        "{}",
        String::from_utf8_lossy(&queued)
    );
    let exec = cmd!(c, "EXEC");
    assert!(
        exec.starts_with(b"-EXECABORT Transaction discarded because of: BUSY Redis is busy"),
        "{}",
        String::from_utf8_lossy(&exec)
    );
    // DISCARD and MULTI are allowed while busy.
    assert_eq!(cmd!(c, "MULTI"), b"+OK\r\n");
    assert_eq!(cmd!(c, "DISCARD"), b"+OK\r\n");
    assert_eq!(cmd!(killer, "SCRIPT", "KILL"), b"+OK\r\n");
    let killed = runner.reply().await;
    assert!(
        killed.starts_with(b"-") && killed.windows(13).any(|w| w == b"Script killed"),
        "{}",
        String::from_utf8_lossy(&killed)
    );
    s.shutdown().await;
}
