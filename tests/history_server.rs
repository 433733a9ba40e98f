//! The lock history recorded by a real server (`lock-history yes`): what each command,
//! script, transaction, expiry, clock move, restart and fenced write leaves in it, read back
//! over the wire (`RESPLOCK.HISTORY`) and from the embedding API, and the checker run on it:
//! correct lock code checks clean, each broken lock pattern is caught from the commands it
//! really sends.

mod common;

use common::Raw;
use resplock::history::{CheckOptions, ClientRecorder, History, OpKind, ViolationKind};
use resplock::Config;

fn config() -> Config {
    Config {
        lock_history: true,
        enable_test_commands: true,
        ..Config::ephemeral()
    }
}

const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const REDISSON_LOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
const REDISSON_RENEW: &str = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;";

async fn named(s: &resplock::ServerHandle, name: &str) -> Raw {
    let mut c = Raw::connect(s).await;
    assert_eq!(
        c.cmd(&[b"CLIENT", b"SETNAME", name.as_bytes()]).await,
        b"+OK\r\n"
    );
    c
}

fn lines(h: &History) -> Vec<String> {
    String::from_utf8(h.to_json_lines())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_lock_taken_released_and_expired_is_recorded_once_per_change_and_checks_clean() {
    let s = common::server_with(config()).await;
    let mut a = named(&s, "a").await;
    let mut b = named(&s, "b").await;
    let rec = ClientRecorder::new();
    let op = rec
        .begin("a", OpKind::Acquire, "lock:a")
        .token("t1")
        .ttl_ms(10_000);
    assert_eq!(
        a.cmd(&[b"SET", b"lock:a", b"t1", b"NX", b"PX", b"10000"])
            .await,
        b"+OK\r\n"
    );
    op.end(Some(true));
    let op = rec
        .begin("b", OpKind::Acquire, "lock:a")
        .token("t2")
        .ttl_ms(1000);
    assert_eq!(
        b.cmd(&[b"SET", b"lock:a", b"t2", b"NX", b"PX", b"1000"])
            .await,
        b"$-1\r\n"
    );
    op.end(Some(false));
    let op = rec.begin("a", OpKind::Release, "lock:a").token("t1");
    let r = a
        .cmd(&[b"EVAL", RELEASE.as_bytes(), b"1", b"lock:a", b"t1"])
        .await;
    assert_eq!(r, b":1\r\n");
    op.end(Some(true));
    // B takes it, the test moves the clock past its lease.
    let op = rec
        .begin("b", OpKind::Acquire, "lock:a")
        .token("t2")
        .ttl_ms(1000);
    assert_eq!(
        b.cmd(&[b"SET", b"lock:a", b"t2", b"NX", b"PX", b"1000"])
            .await,
        b"+OK\r\n"
    );
    op.end(Some(true));
    b.cmd(&[b"RESPLOCK.CLOCK", b"ADVANCE", b"1500"]).await;
    // A plain key is not a lock.
    assert_eq!(a.cmd(&[b"SET", b"plain", b"v"]).await, b"+OK\r\n");
    // A Redisson lock: one change for the whole script, with its final TTL.
    let r = a
        .cmd(&[
            b"EVAL",
            REDISSON_LOCK.as_bytes(),
            b"1",
            b"{r}",
            b"30000",
            b"uuid-a:1",
        ])
        .await;
    assert_eq!(r, b"$-1\r\n");

    let h = s.history();
    let l = lines(&h);
    assert_eq!(l.len(), 6, "{l:#?}");
    assert!(
        l[0].contains(r#""key":"lock:a","cause":"client","client":{"id":"#),
        "{}",
        l[0]
    );
    assert!(
        l[0].contains(r#""name":"a""#)
            && l[0].contains(r#""cmd":"set","state":"string","owner":"t1","ttl":10000"#),
        "{}",
        l[0]
    );
    let sha = sha1_hex(RELEASE);
    assert!(
        l[1].contains(&format!(
            r#""cmd":"del","sha":"{sha}","state":"gone","proof":"token""#
        )),
        "{}",
        l[1]
    );
    assert!(l[2].contains(r#""owner":"t2","ttl":1000"#), "{}", l[2]);
    assert!(
        l[3].starts_with(r#"{"ev":"clock","#) && l[3].contains(r#""how":"advance""#),
        "{}",
        l[3]
    );
    assert!(
        l[4].contains(r#""key":"lock:a","cause":"clock","state":"gone""#),
        "{}",
        l[4]
    );
    assert!(
        l[5].contains(r#""key":"{r}""#)
            && l[5].contains(r#""state":"hash","fields":{"uuid-a:1":1},"ttl":30000"#),
        "{}",
        l[5]
    );
    let report = h.check(&CheckOptions::default());
    assert!(report.is_clean(), "{report}");
    // With the clients' own records: linearizable on the server's clock, which jumped.
    let mut both = History::from_json_lines(&h.to_json_lines()).unwrap();
    both.add_json_lines(&rec.to_json_lines()).unwrap();
    let report = both.check(&CheckOptions::default());
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.linearized_ops, 4);
}

fn sha1_hex(s: &str) -> String {
    let mut c = std::process::Command::new("sha1sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha1sum");
    use std::io::Write;
    c.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..40].to_string()
}

#[tokio::test]
async fn an_unlock_that_deletes_without_checking_the_owner_is_caught() {
    let s = common::server_with(config()).await;
    let mut a = named(&s, "worker-a").await;
    let mut b = named(&s, "worker-b").await;
    let mut c = named(&s, "worker-c").await;
    a.cmd(&[b"SET", b"lock:job", b"ta", b"NX", b"PX", b"1000"])
        .await;
    a.cmd(&[b"RESPLOCK.CLOCK", b"ADVANCE", b"1500"]).await;
    assert_eq!(
        b.cmd(&[b"SET", b"lock:job", b"tb", b"NX", b"PX", b"10000"])
            .await,
        b"+OK\r\n"
    );
    // A, done at last, deletes "its" lock without looking whose it is.
    let r = a
        .cmd(&[
            b"EVAL",
            b"return redis.call('del', KEYS[1])",
            b"1",
            b"lock:job",
            b"ta",
        ])
        .await;
    assert_eq!(r, b":1\r\n");
    assert_eq!(
        c.cmd(&[b"SET", b"lock:job", b"tc", b"NX", b"PX", b"10000"])
            .await,
        b"+OK\r\n"
    );
    let report = s.history().check(&CheckOptions::default());
    let v = report.first().expect("a violation");
    assert_eq!(v.kind, ViolationKind::NonOwnerRelease, "{report}");
    assert!(v.story.contains("\"worker-a\""), "{}", v.story);
    assert!(
        v.story.contains("did not name the owner's token \"tb\""),
        "{}",
        v.story
    );
    assert!(
        report
            .violations
            .iter()
            .any(|v| v.kind == ViolationKind::TwoHolders && v.story.contains("\"tc\"")),
        "{report}"
    );
}

#[tokio::test]
async fn a_watchdog_renewing_a_lease_no_longer_its_own_is_caught() {
    let s = common::server_with(config()).await;
    let mut a = named(&s, "a").await;
    let mut b = named(&s, "b").await;
    a.cmd(&[b"RESPLOCK.CLOCK", b"FREEZE"]).await;
    let lock = |c: &'static [u8]| {
        [
            b"EVAL".as_slice(),
            REDISSON_LOCK.as_bytes(),
            b"1",
            b"{res}",
            b"30000",
            c,
        ]
    };
    assert_eq!(a.cmd(&lock(b"uuid-a:1")).await, b"$-1\r\n");
    // A's watchdog renews properly, naming its field.
    let renew = |c: &'static [u8]| {
        [
            b"EVAL".as_slice(),
            REDISSON_RENEW.as_bytes(),
            b"1",
            b"{res}",
            b"30000",
            c,
        ]
    };
    assert_eq!(a.cmd(&renew(b"uuid-a:1")).await, b":1\r\n");
    // A stalls past its lease; B takes the lock.
    a.cmd(&[b"RESPLOCK.CLOCK", b"ADVANCE", b"31000"]).await;
    assert_eq!(b.cmd(&lock(b"uuid-b:1")).await, b"$-1\r\n");
    b.cmd(&[b"RESPLOCK.CLOCK", b"ADVANCE", b"20000"]).await;
    // A's watchdog, unaware, renews whatever is there.
    let r = a
        .cmd(&[
            b"EVAL",
            b"return redis.call('pexpire', KEYS[1], ARGV[1])",
            b"1",
            b"{res}",
            b"30000",
        ])
        .await;
    assert_eq!(r, b":1\r\n");
    let report = s.history().check(&CheckOptions::default());
    let v = report.first().expect("a violation");
    assert_eq!(v.kind, ViolationKind::TtlGrown, "{report}");
    assert!(
        v.story.contains("grew from 10000 ms left to 30000 ms left"),
        "{}",
        v.story
    );
    assert!(v.story.contains("\"uuid-b:1\""), "{}", v.story);
}

#[tokio::test]
async fn redlock_with_a_lost_write_in_a_failover_gives_two_majorities() {
    let nodes = resplock::start_many(config(), 3).await.unwrap();
    let mut c1: Vec<Raw> = Vec::new();
    let mut c2: Vec<Raw> = Vec::new();
    for n in &nodes {
        c1.push(named(n, "c1").await);
        c2.push(named(n, "c2").await);
    }
    // n1's replica: a copy taken before client 1's write reaches it.
    c1[1].cmd(&[b"RESPLOCK.SNAPSHOT", b"replica"]).await;
    for c in &mut c1[..2] {
        assert_eq!(
            c.cmd(&[b"SET", b"lock:r", b"c1", b"NX", b"PX", b"10000"])
                .await,
            b"+OK\r\n"
        );
    }
    // n1 fails over to its replica: client 1's key is lost there.
    let mut ctl = Raw::connect(&nodes[1]).await;
    assert_eq!(
        ctl.cmd(&[b"RESPLOCK.RESTART", b"FROM", b"replica"]).await,
        b"+OK\r\n"
    );
    let mut again = named(&nodes[1], "c2").await;
    assert_eq!(
        again
            .cmd(&[b"SET", b"lock:r", b"c2", b"NX", b"PX", b"10000"])
            .await,
        b"+OK\r\n"
    );
    assert_eq!(
        c2[2]
            .cmd(&[b"SET", b"lock:r", b"c2", b"NX", b"PX", b"10000"])
            .await,
        b"+OK\r\n"
    );
    let h = nodes[0].history();
    // One history for the three nodes, each named by its address.
    let text = String::from_utf8(h.to_json_lines()).unwrap();
    for n in &nodes {
        assert!(
            text.contains(&format!("\"node\":\"{}\"", n.local_addr())),
            "{text}"
        );
    }
    let report = h.check(&CheckOptions::default());
    let v = report.first().expect("a violation");
    assert_eq!(v.kind, ViolationKind::TwoHolders, "{report}");
    assert!(v.story.contains("majority (2 of 3 nodes)"), "{}", v.story);
    assert!(v.story.contains("RESTART from replica"), "{}", v.story);
    assert!(v.story.contains("a restart lost the key"), "{}", v.story);
}

#[tokio::test]
async fn fenced_writes_are_refused_when_stale_on_request_and_checked_otherwise() {
    let s = common::server_with(config()).await;
    let mut c = named(&s, "w").await;
    let w = |t: &'static [u8], v: &'static [u8]| {
        [b"RESPLOCK.FENCED.WRITE".as_slice(), b"storage", t, v]
    };
    assert_eq!(c.cmd(&w(b"33", b"one")).await, b"+OK\r\n");
    assert_eq!(c.cmd(&w(b"34", b"two")).await, b"+OK\r\n");
    let r = c
        .cmd(&[
            b"RESPLOCK.FENCED.WRITE",
            b"storage",
            b"33",
            b"late",
            b"CHECK",
        ])
        .await;
    assert_eq!(
        r,
        b"-STALE fencing token 33 is not above 34, the last this resource accepted\r\n"
    );
    let read = c.cmd(&[b"RESPLOCK.FENCED.READ", b"storage"]).await;
    assert_eq!(read, b"*2\r\n:34\r\n$3\r\ntwo\r\n");
    // Checked, the refused write broke nothing.
    assert!(s.history().check(&CheckOptions::default()).is_clean());
    // A resource that does not check takes the stale write: the checker reports it.
    assert_eq!(c.cmd(&w(b"33", b"late")).await, b"+OK\r\n");
    let read = c.cmd(&[b"RESPLOCK.FENCED.READ", b"storage"]).await;
    assert_eq!(read, b"*2\r\n:34\r\n$4\r\nlate\r\n");
    let report = s.history().check(&CheckOptions::default());
    assert_eq!(
        report.first().map(|v| v.kind),
        Some(ViolationKind::StaleFence),
        "{report}"
    );
    assert_eq!(
        c.cmd(&[b"RESPLOCK.FENCED.READ", b"other"]).await,
        b"$-1\r\n"
    );
    assert_eq!(
        c.cmd(&[b"RESPLOCK.FENCED.WRITE", b"storage", b"x", b"v"])
            .await,
        b"-ERR value is not an integer or out of range\r\n"
    );
}

#[tokio::test]
async fn resplock_history_reads_a_key_exports_everything_and_resets() {
    let s = common::server_with(config()).await;
    let mut c = named(&s, "w").await;
    for i in 0..3 {
        let tok = format!("t{i}");
        c.cmd(&[b"SET", b"lock:k", tok.as_bytes(), b"NX", b"PX", b"100"])
            .await;
        c.cmd(&[b"DEL", b"lock:k"]).await;
    }
    c.cmd(&[b"RESPLOCK.FAULT", b"DELAY", b"1", b"COMMAND", b"ping"])
        .await;
    let all = c.cmd(&[b"RESPLOCK.HISTORY", b"lock:k"]).await;
    assert!(
        all.starts_with(b"*6\r\n"),
        "{}",
        String::from_utf8_lossy(&all)
    );
    let last = c
        .cmd(&[b"RESPLOCK.HISTORY", b"KEY", b"lock:k", b"COUNT", b"1"])
        .await;
    let text = String::from_utf8_lossy(&last);
    assert!(
        text.starts_with("*1\r\n$") && text.contains(r#""state":"gone""#),
        "{text}"
    );
    assert_eq!(c.cmd(&[b"RESPLOCK.HISTORY", b"nosuchkey"]).await, b"*0\r\n");
    let export = c.cmd(&[b"RESPLOCK.HISTORY", b"EXPORT"]).await;
    let body = &export[export.iter().position(|&b| b == b'\n').unwrap() + 1..export.len() - 2];
    let h = History::from_json_lines(body).unwrap();
    assert_eq!(h.len(), 7);
    assert!(String::from_utf8_lossy(body).contains(r#""ev":"fault""#));
    let stats = c.cmd(&[b"RESPLOCK.HISTORY", b"STATS"]).await;
    let text = String::from_utf8_lossy(&stats);
    assert!(
        text.contains("recording\r\n:1\r\n$6\r\nevents\r\n:7\r\n"),
        "{text}"
    );
    assert!(text.contains("dropped\r\n:0\r\n"), "{text}");
    assert_eq!(c.cmd(&[b"RESPLOCK.HISTORY", b"RESET"]).await, b"+OK\r\n");
    assert_eq!(c.cmd(&[b"RESPLOCK.HISTORY", b"lock:k"]).await, b"*0\r\n");
    assert_eq!(
        c.cmd(&[b"RESPLOCK.HISTORY", b"lock:k", b"COUNT", b"0"])
            .await,
        b"-ERR value is out of range, must be positive\r\n"
    );
    assert_eq!(
        c.cmd(&[b"RESPLOCK.HISTORY", b"lock:k", b"LIMIT", b"1"])
            .await,
        b"-ERR syntax error\r\n"
    );
}

#[tokio::test]
async fn recording_follows_config_set_and_is_off_by_default() {
    let s = common::server_with(Config {
        enable_test_commands: true,
        ..Config::ephemeral()
    })
    .await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        c.cmd(&[b"CONFIG", b"GET", b"lock-history"]).await,
        b"*2\r\n$12\r\nlock-history\r\n$2\r\nno\r\n"
    );
    // Hidden from CONFIG GET *, as redis-server's own test-only parameters are.
    let star = c.cmd(&[b"CONFIG", b"GET", b"*"]).await;
    assert!(!String::from_utf8_lossy(&star).contains("lock-history"));
    c.cmd(&[b"SET", b"lock:a", b"t", b"NX"]).await;
    assert!(s.history().is_empty());
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"lock-history", b"yes"]).await,
        b"+OK\r\n"
    );
    c.cmd(&[b"DEL", b"lock:a"]).await;
    c.cmd(&[b"SET", b"lock:a", b"t", b"NX"]).await;
    assert_eq!(s.history().len(), 1, "{:?}", lines(&s.history()));
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"lock-history-keys", b"res:*"])
            .await,
        b"+OK\r\n"
    );
    c.cmd(&[b"SET", b"res:1", b"v"]).await;
    c.cmd(&[b"SET", b"other", b"t", b"NX"]).await;
    let l = lines(&s.history());
    assert_eq!(l.len(), 2, "{l:#?}");
    assert!(l[1].contains(r#""key":"res:1""#));
    assert_eq!(
        c.cmd(&[b"CONFIG", b"SET", b"lock-history", b"no"]).await,
        b"+OK\r\n"
    );
    c.cmd(&[b"SET", b"res:2", b"v"]).await;
    assert_eq!(s.history().len(), 2);
}

#[tokio::test]
async fn transactions_and_watch_based_releases_are_recorded_as_their_result() {
    let s = common::server_with(config()).await;
    let mut a = named(&s, "a").await;
    let mut b = named(&s, "b").await;
    // Taken in a transaction: one change, with the TTL set by the second command.
    a.cmd(&[b"MULTI"]).await;
    a.cmd(&[b"SET", b"lock:t", b"ta", b"NX"]).await;
    a.cmd(&[b"PEXPIRE", b"lock:t", b"5000"]).await;
    assert_eq!(a.cmd(&[b"EXEC"]).await, b"*2\r\n+OK\r\n:1\r\n");
    // Released by another connection with check-and-set (WATCH, GET, MULTI, DEL, EXEC).
    b.cmd(&[b"WATCH", b"lock:t"]).await;
    assert_eq!(b.cmd(&[b"GET", b"lock:t"]).await, b"$2\r\nta\r\n");
    b.cmd(&[b"MULTI"]).await;
    b.cmd(&[b"DEL", b"lock:t"]).await;
    assert_eq!(b.cmd(&[b"EXEC"]).await, b"*1\r\n:1\r\n");
    let l = lines(&s.history());
    assert_eq!(l.len(), 2, "{l:#?}");
    assert!(l[0].contains(r#""owner":"ta","ttl":5000"#), "{}", l[0]);
    assert!(
        l[1].contains(r#""state":"gone","proof":"watch""#),
        "{}",
        l[1]
    );
    assert!(s.history().check(&CheckOptions::default()).is_clean());
}

#[test]
fn the_history_file_is_written_when_the_server_stops() {
    let dir = std::env::temp_dir().join(format!("resplock-histfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("history.jsonl");
    let server = resplock::BlockingServer::start(Config {
        lock_history: true,
        lock_history_file: path.display().to_string(),
        ..Config::ephemeral()
    })
    .unwrap();
    server
        .db(0)
        .command(&["SET", "lock:a", "t1", "NX", "PX", "1000"]);
    server.freeze();
    server.advance(std::time::Duration::from_secs(2));
    server.restart(resplock::Restart::Empty);
    server.shutdown();
    let h = History::load(&[&path]).unwrap();
    let l = lines(&h);
    let kinds: Vec<&str> = l
        .iter()
        .map(|x| &x[7..x[7..].find('"').unwrap() + 7])
        .collect();
    assert_eq!(kinds, ["key", "clock", "clock", "key", "restart"], "{l:#?}");
    assert!(h.check(&CheckOptions::default()).is_clean());
    std::fs::remove_dir_all(dir).unwrap();
}
