//! The history checker on synthetic histories: each scenario of the Redlock critique and of
//! broken lock code plants one violation the checker must find (and explain), and correct
//! runs (releases, expiries, renewals, every node's clock moved together, faults) must
//! check clean.

use resplock::history::{
    Cause, CheckOptions, ClientOp, ClientRef, ClockMove, Event, FencedWrite, History, KeyChange,
    KeyState, OpKind, Proof, Report, ViolationKind, What,
};

mod common_history;
use common_history::{simulate, Sim};

/// Builds histories in milliseconds of real time; every node's clock starts equal to it.
struct B {
    h: History,
}

const T0: i64 = 1_750_000_000_000_000;

fn us(ms: f64) -> i64 {
    T0 + (ms * 1000.0) as i64
}

fn client(id: u64, name: &str) -> Option<ClientRef> {
    Some(ClientRef {
        id,
        name: name.into(),
        addr: format!("127.0.0.1:{}", 50_000 + id),
        user: "default".into(),
    })
}

impl B {
    fn new() -> B {
        B { h: History::new() }
    }

    /// A key change on `node` at real `ms`, the node's clock `skew_ms` ahead of real time.
    #[allow(clippy::too_many_arguments)]
    fn key(
        &mut self,
        node: &str,
        ms: f64,
        skew_ms: f64,
        key: &str,
        state: KeyState,
        ttl_ms: i64,
        by: Option<ClientRef>,
        cause: Cause,
        proof: Proof,
        command: &str,
    ) {
        self.h.push(Event::new(
            node,
            us(ms + skew_ms),
            us(ms),
            What::Key(KeyChange {
                key: key.as_bytes().to_vec(),
                cause,
                client: by,
                command: command.into(),
                state,
                ttl_ms,
                proof,
                ..KeyChange::default()
            }),
        ));
    }

    fn set(
        &mut self,
        node: &str,
        ms: f64,
        key: &str,
        owner: &str,
        ttl: i64,
        by: Option<ClientRef>,
    ) {
        self.key(
            node,
            ms,
            0.0,
            key,
            KeyState::Str(owner.into()),
            ttl,
            by,
            Cause::Client,
            Proof::None,
            "set",
        );
    }

    fn release(&mut self, node: &str, ms: f64, key: &str, by: Option<ClientRef>) {
        self.key(
            node,
            ms,
            0.0,
            key,
            KeyState::Gone,
            -1,
            by,
            Cause::Client,
            Proof::Token,
            "del",
        );
    }

    fn expired(&mut self, node: &str, ms: f64, skew: f64, key: &str, cause: Cause) {
        self.key(
            node,
            ms,
            skew,
            key,
            KeyState::Gone,
            -1,
            None,
            cause,
            Proof::None,
            "",
        );
    }

    fn clock(&mut self, node: &str, ms: f64, from_skew: f64, to_skew: f64) {
        self.h.push(Event::new(
            node,
            us(ms + to_skew),
            us(ms),
            What::Clock(ClockMove {
                from_us: us(ms + from_skew),
                to_us: us(ms + to_skew),
                frozen: false,
                how: "advance".into(),
            }),
        ));
    }

    fn restart(&mut self, node: &str, ms: f64, mode: &str) {
        self.h.push(Event::new(
            node,
            us(ms),
            us(ms),
            What::Restart { mode: mode.into() },
        ));
    }

    fn fault(&mut self, node: &str, ms: f64, text: &str) {
        self.h.push(Event::new(
            node,
            us(ms),
            us(ms),
            What::Fault { text: text.into() },
        ));
    }

    fn fenced(&mut self, node: &str, ms: f64, token: i64, accepted: bool, by: Option<ClientRef>) {
        self.h.push(Event::new(
            node,
            us(ms),
            us(ms),
            What::Fenced(FencedWrite {
                resource: b"storage".to_vec(),
                token,
                value: format!("written with {token}").into_bytes(),
                accepted,
                client: by,
            }),
        ));
    }

    #[allow(clippy::too_many_arguments)]
    fn op(
        &mut self,
        name: &str,
        op: OpKind,
        from_ms: f64,
        to_ms: f64,
        ok: Option<bool>,
        ttl: Option<i64>,
        token: &str,
    ) {
        self.h.push_op(ClientOp {
            client: name.into(),
            lock: b"lock:res".to_vec(),
            op,
            invoke_us: us(from_ms),
            complete_us: Some(us(to_ms)),
            ok,
            token: token.as_bytes().to_vec(),
            ttl_ms: ttl,
            resource: if op == OpKind::Use {
                b"storage".to_vec()
            } else {
                Vec::new()
            },
            ..ClientOp::default()
        });
    }

    fn check(&self) -> Report {
        // Through the JSON lines, as `resplock check` reads them.
        let text = self.h.to_json_lines();
        let h = History::from_json_lines(&text).expect("the history reads back");
        assert_eq!(h.to_json_lines(), text, "JSON lines round-trip");
        h.check(&CheckOptions::default())
    }
}

fn first(r: &Report) -> &resplock::history::Violation {
    r.first()
        .unwrap_or_else(|| panic!("expected a violation, the report is clean: {r}"))
}

fn assert_clean(r: &Report) {
    assert!(r.is_clean(), "expected no violation:\n{r}");
}

#[test]
fn redlock_failover_lost_write_plus_clock_jump_gives_a_second_majority() {
    // Five nodes. Client 1 takes n1..n4 (TTL 10 s); n5 did not answer it.
    let mut b = B::new();
    let nodes = ["n1", "n2", "n3", "n4", "n5"];
    for (i, n) in nodes.iter().enumerate().take(4) {
        b.set(
            n,
            1.0 + i as f64,
            "lock:res",
            "c1-token",
            10_000,
            client(7, "c1"),
        );
    }
    // n3 fails over: its replica had not received the write (a restart from a snapshot taken
    // before it), so the key is lost.
    b.restart("n3", 1_000.0, "from before-c1");
    b.key(
        "n3",
        1_000.0,
        0.0,
        "lock:res",
        KeyState::Gone,
        -1,
        None,
        Cause::Restart,
        Proof::None,
        "",
    );
    // n4's clock jumps 20 s ahead: client 1's key expires there.
    b.clock("n4", 2_000.0, 0.0, 20_000.0);
    b.expired("n4", 2_000.0, 20_000.0, "lock:res", Cause::ClockJump);
    // Client 2 now gets n3, n4 and n5: a majority, while client 1 still counts on its lease.
    b.set(
        "n3",
        2_500.0,
        "lock:res",
        "c2-token",
        10_000,
        client(9, "c2"),
    );
    b.key(
        "n4",
        2_501.0,
        20_000.0,
        "lock:res",
        KeyState::Str("c2-token".into()),
        10_000,
        client(9, "c2"),
        Cause::Client,
        Proof::None,
        "set",
    );
    b.set(
        "n5",
        2_502.0,
        "lock:res",
        "c2-token",
        10_000,
        client(9, "c2"),
    );
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::TwoHolders, "{r}");
    assert_eq!(v.real_us, us(2_502.0));
    assert_eq!(v.lock, "lock:res");
    for needle in [
        "majority (3 of 5 nodes)",
        "\"c1-token\"",
        "\"c2-token\"",
        "lost in a restart",
        "RESTART from before-c1",
        "the node's clock jumped past the lease's end",
        "CLOCK advance +20.000 s",
        "client 9 \"c2\"",
    ] {
        assert!(
            v.story.contains(needle),
            "story lacks {needle:?}:\n{}",
            v.story
        );
    }
    // Without either fault client 2 has no majority: n3 and n4 stay client 1's.
    let mut b = B::new();
    for (i, n) in nodes.iter().enumerate().take(4) {
        b.set(
            n,
            1.0 + i as f64,
            "lock:res",
            "c1-token",
            10_000,
            client(7, "c1"),
        );
    }
    b.set(
        "n5",
        2_502.0,
        "lock:res",
        "c2-token",
        10_000,
        client(9, "c2"),
    );
    assert_clean(&b.check());
}

#[test]
fn redlock_clock_jump_on_one_node_of_five_is_kleppmanns_scenario() {
    let mut b = B::new();
    for (i, n) in ["a", "b", "c"].iter().enumerate() {
        b.set(n, i as f64, "lock:res", "c1", 10_000, client(1, "c1"));
    }
    for n in ["d", "e"] {
        b.fault(n, 0.0, "DROP CLIENT 1");
    }
    b.clock("c", 1_000.0, 0.0, 15_000.0);
    b.expired("c", 1_000.0, 15_000.0, "lock:res", Cause::ClockJump);
    b.key(
        "c",
        1_100.0,
        15_000.0,
        "lock:res",
        KeyState::Str("c2".into()),
        10_000,
        client(2, "c2"),
        Cause::Client,
        Proof::None,
        "set",
    );
    b.set("d", 1_101.0, "lock:res", "c2", 10_000, client(2, "c2"));
    b.set("e", 1_102.0, "lock:res", "c2", 10_000, client(2, "c2"));
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::TwoHolders, "{r}");
    assert!(v.summary.contains("two majorities"), "{}", v.summary);
    assert!(
        v.story
            .contains("on c the first holder's lease ended at +1.000s"),
        "{}",
        v.story
    );
}

#[test]
fn every_node_clock_moved_together_is_time_passing_not_a_fault() {
    // The clients' tests expire leases by moving every node's clock: on the nodes' clocks
    // the lease is over, so a new holder is fine.
    let mut b = B::new();
    for n in ["n1", "n2", "n3"] {
        b.set(n, 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    }
    for n in ["n1", "n2", "n3"] {
        b.clock(n, 100.0, 0.0, 11_000.0);
        b.expired(n, 100.0, 11_000.0, "lock:res", Cause::ClockJump);
    }
    for n in ["n1", "n2", "n3"] {
        b.key(
            n,
            200.0,
            11_000.0,
            "lock:res",
            KeyState::Str("c2".into()),
            10_000,
            client(2, "c2"),
            Cause::Client,
            Proof::None,
            "set",
        );
    }
    // A stopped node and a paused one.
    b.fault("n3", 300.0, "PAUSE 500");
    for n in ["n1", "n2"] {
        b.key(
            n,
            400.0,
            11_000.0,
            "lock:res",
            KeyState::Gone,
            -1,
            client(2, "c2"),
            Cause::Client,
            Proof::Token,
            "del",
        );
    }
    assert_clean(&b.check());
}

#[test]
fn gc_pause_past_the_lease_then_a_stale_fencing_token() {
    let mut b = B::new();
    // Client 1 takes the lock (TTL 10 s, fencing token 33), then stalls 15 s.
    b.set("", 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    b.op(
        "c1",
        OpKind::Acquire,
        -1.0,
        1.0,
        Some(true),
        Some(10_000),
        "c1",
    );
    b.expired("", 10_000.5, 0.0, "lock:res", Cause::Expired);
    // Client 2 takes it (token 34) and writes.
    b.set("", 10_500.0, "lock:res", "c2", 10_000, client(2, "c2"));
    b.op(
        "c2",
        OpKind::Acquire,
        10_499.0,
        10_501.0,
        Some(true),
        Some(10_000),
        "c2",
    );
    b.fenced("", 10_600.0, 34, true, client(2, "c2"));
    b.op(
        "c2",
        OpKind::Use,
        10_550.0,
        10_650.0,
        Some(true),
        None,
        "c2",
    );
    // Client 1 wakes up and writes with token 33: a resource that does not check accepts it.
    b.fenced("", 15_000.0, 33, true, client(1, "c1"));
    b.op("c1", OpKind::Use, 2.0, 15_001.0, Some(true), None, "c1");
    let r = b.check();
    let v = first(&r);
    // The use began in the lease but outlived it; then the stale write.
    assert_eq!(v.kind, ViolationKind::UseOutsideLease, "{r}");
    let stale = r
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::StaleFence)
        .unwrap_or_else(|| panic!("no stale-token violation:\n{r}"));
    assert_eq!(stale.lock, "storage");
    assert!(stale.story.contains("fencing token 33"), "{}", stale.story);
    assert!(
        stale.story.contains("after it had accepted token 34"),
        "{}",
        stale.story
    );
    assert!(stale.story.contains("its TTL ran out"), "{}", stale.story);
    assert!(
        stale.story.contains("after that lease had ended"),
        "{}",
        stale.story
    );
}

#[test]
fn a_stale_token_the_resource_rejected_is_fencing_working() {
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    b.fenced("", 5.0, 33, true, client(1, "c1"));
    b.expired("", 10_000.5, 0.0, "lock:res", Cause::Expired);
    b.set("", 10_500.0, "lock:res", "c2", 10_000, client(2, "c2"));
    b.fenced("", 10_600.0, 34, true, client(2, "c2"));
    b.fenced("", 15_000.0, 33, false, client(1, "c1"));
    b.release("", 11_000.0, "lock:res", client(2, "c2"));
    assert_clean(&b.check());
}

#[test]
fn the_fenced_write_alone_reveals_the_pause() {
    // Without client ops: only the server's records of the lock and the resource.
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    b.fenced("", 5.0, 33, true, client(1, "c1"));
    b.expired("", 10_001.0, 0.0, "lock:res", Cause::Expired);
    b.fenced("", 12_000.0, 34, true, client(1, "c1"));
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::UseOutsideLease, "{r}");
    assert!(v.story.contains("its TTL ran out"), "{}", v.story);
}

#[test]
fn an_unlock_script_that_deletes_without_checking_the_owner() {
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 5_000, client(1, "c1"));
    b.expired("", 5_001.0, 0.0, "lock:res", Cause::Expired);
    b.set("", 6_000.0, "lock:res", "c2", 5_000, client(2, "c2"));
    // Client 1, done at last, runs `redis.call('del', KEYS[1])`: client 2's lock goes.
    b.key(
        "",
        7_000.0,
        0.0,
        "lock:res",
        KeyState::Gone,
        -1,
        client(1, "c1"),
        Cause::Client,
        Proof::None,
        "del",
    );
    // Client 3 takes the lock while client 2 still counts on it.
    b.set("", 7_100.0, "lock:res", "c3", 5_000, client(3, "c3"));
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::NonOwnerRelease, "{r}");
    assert_eq!(v.real_us, us(7_000.0));
    assert!(
        v.story.contains("deleted at +7.000s by client 1 \"c1\""),
        "{}",
        v.story
    );
    assert!(
        v.story.contains("That client had held the lock before"),
        "{}",
        v.story
    );
    let two = r
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::TwoHolders)
        .expect("then two holders");
    assert!(
        two.story
            .contains("a request that was not the owner's removed it"),
        "{}",
        two.story
    );
    // The same connection deleting its own lock (a sloppy but correct release) is fine.
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 5_000, client(1, "c1"));
    b.key(
        "",
        100.0,
        0.0,
        "lock:res",
        KeyState::Gone,
        -1,
        client(1, "c1"),
        Cause::Client,
        Proof::None,
        "del",
    );
    b.set("", 200.0, "lock:res", "c2", 5_000, client(2, "c2"));
    assert_clean(&b.check());
}

#[test]
fn a_watchdog_extending_someone_elses_lease() {
    let field = |s: &str| KeyState::Hash(vec![(s.as_bytes().to_vec(), 1)]);
    let mut b = B::new();
    // Redisson-style hash locks: client 1's watchdog renews its own lease (naming its field).
    b.key(
        "",
        0.0,
        0.0,
        "lock:res",
        field("uuid-1:1"),
        30_000,
        client(1, "c1"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.key(
        "",
        10_000.0,
        0.0,
        "lock:res",
        field("uuid-1:1"),
        30_000,
        client(1, "c1"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.expired("", 40_001.0, 0.0, "lock:res", Cause::Expired);
    b.key(
        "",
        41_000.0,
        0.0,
        "lock:res",
        field("uuid-2:1"),
        30_000,
        client(2, "c2"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    // Client 1's watchdog wakes up and renews without checking whose lock it is.
    b.key(
        "",
        55_000.0,
        0.0,
        "lock:res",
        field("uuid-2:1"),
        30_000,
        client(1, "c1"),
        Cause::Client,
        Proof::None,
        "pexpire",
    );
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::TtlGrown, "{r}");
    assert_eq!(v.real_us, us(55_000.0));
    assert!(
        v.story.contains("grew from 16000 ms left to 30000 ms left"),
        "{}",
        v.story
    );
    assert!(v.story.contains("\"uuid-2:1\""), "{}", v.story);
    assert!(
        v.story
            .contains("The extending client had held the lock before"),
        "{}",
        v.story
    );
}

#[test]
fn a_set_without_nx_overwriting_a_live_lock() {
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    b.set("", 1_000.0, "lock:res", "c2", 10_000, client(2, "c2"));
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::NonOwnerRelease, "{r}");
    assert!(v.summary.contains("taken over by \"c2\""), "{}", v.summary);
}

#[test]
fn a_lock_lost_in_a_restart_and_retaken_is_two_holders_on_one_node() {
    let mut b = B::new();
    b.set("", 0.0, "lock:res", "c1", 10_000, client(1, "c1"));
    b.restart("", 1_000.0, "empty");
    b.key(
        "",
        1_000.0,
        0.0,
        "lock:res",
        KeyState::Gone,
        -1,
        None,
        Cause::Restart,
        Proof::None,
        "",
    );
    b.set("", 2_000.0, "lock:res", "c2", 10_000, client(2, "c2"));
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::TwoHolders, "{r}");
    assert!(v.story.contains("a restart lost the key"), "{}", v.story);
}

#[test]
fn reentry_renewals_releases_and_expiry_check_clean() {
    let field = |n: i64| KeyState::Hash(vec![(b"uuid-1:1".to_vec(), n)]);
    let mut b = B::new();
    b.key(
        "",
        0.0,
        0.0,
        "lock:r",
        field(1),
        30_000,
        client(1, "c1"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.key(
        "",
        5.0,
        0.0,
        "lock:r",
        field(2),
        30_000,
        client(4, "c1"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.key(
        "",
        10_000.0,
        0.0,
        "lock:r",
        field(2),
        30_000,
        client(5, "watchdog"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.key(
        "",
        12_000.0,
        0.0,
        "lock:r",
        field(1),
        30_000,
        client(1, "c1"),
        Cause::Client,
        Proof::Token,
        "pexpire",
    );
    b.key(
        "",
        13_000.0,
        0.0,
        "lock:r",
        KeyState::Gone,
        -1,
        client(1, "c1"),
        Cause::Client,
        Proof::Token,
        "del",
    );
    b.set("", 13_001.0, "lock:s", "t1", 1_000, client(2, "c2"));
    b.expired("", 14_500.0, 0.0, "lock:s", Cause::Expired);
    b.set("", 14_600.0, "lock:s", "t2", 1_000, client(3, "c3"));
    // A counter is not a lock.
    b.key(
        "",
        15_000.0,
        0.0,
        "fence:s",
        KeyState::Str("1".into()),
        -1,
        client(2, "c2"),
        Cause::Client,
        Proof::None,
        "incr",
    );
    b.key(
        "",
        15_001.0,
        0.0,
        "fence:s",
        KeyState::Str("2".into()),
        -1,
        client(3, "c3"),
        Cause::Client,
        Proof::None,
        "incr",
    );
    // A flush between a test's steps ends the leases for good: the next step's lock is not
    // a second holder.
    b.key(
        "",
        20_000.0,
        0.0,
        "lock:s",
        KeyState::Gone,
        -1,
        client(9, "test"),
        Cause::Flushed,
        Proof::None,
        "flushall",
    );
    b.set("", 20_001.0, "lock:s", "t3", 1_000, client(3, "c3"));
    assert_clean(&b.check());
}

#[test]
fn client_ops_alone_two_acquires_inside_one_lease_are_not_linearizable() {
    let mut b = B::new();
    b.op(
        "w1",
        OpKind::Acquire,
        0.0,
        2.0,
        Some(true),
        Some(1_000),
        "t1",
    );
    b.op(
        "w2",
        OpKind::Acquire,
        100.0,
        102.0,
        Some(false),
        Some(1_000),
        "t2",
    );
    b.op(
        "w2",
        OpKind::Acquire,
        500.0,
        502.0,
        Some(true),
        Some(1_000),
        "t2",
    );
    let r = b.check();
    let v = first(&r);
    assert_eq!(v.kind, ViolationKind::NotLinearizable, "{r}");
    assert!(v.story.contains("w2 acquire"), "{}", v.story);
    assert!(v.story.contains("\"t1\" held it"), "{}", v.story);
    // After the TTL it is fine.
    let mut b = B::new();
    b.op(
        "w1",
        OpKind::Acquire,
        0.0,
        2.0,
        Some(true),
        Some(1_000),
        "t1",
    );
    b.op(
        "w2",
        OpKind::Acquire,
        100.0,
        102.0,
        Some(false),
        Some(1_000),
        "t2",
    );
    b.op(
        "w2",
        OpKind::Acquire,
        1_003.0,
        1_005.0,
        Some(true),
        Some(1_000),
        "t2",
    );
    b.op("w2", OpKind::Use, 1_006.0, 1_500.0, Some(true), None, "t2");
    b.op(
        "w2",
        OpKind::Release,
        1_600.0,
        1_601.0,
        Some(true),
        None,
        "t2",
    );
    assert_clean(&b.check());
}

#[test]
fn a_client_using_the_resource_after_its_own_lease_by_its_own_clock() {
    let mut b = B::new();
    b.op(
        "w1",
        OpKind::Acquire,
        0.0,
        2.0,
        Some(true),
        Some(1_000),
        "t1",
    );
    b.op("w1", OpKind::Use, 3.0, 1_500.0, Some(true), None, "t1");
    let r = b.check();
    assert_eq!(first(&r).kind, ViolationKind::UseOutsideLease, "{r}");
    assert!(
        first(&r)
            .story
            .contains("lasted until +1.000s at the latest"),
        "{}",
        first(&r).story
    );
}

#[test]
fn simulated_runs_of_many_clients_check_clean() {
    // Correct lease servers, clients with random delays, expiries, extensions and fenced
    // writes: server events and client ops must agree and check clean.
    for seed in 1..=4 {
        let (h, stats) = simulate(&Sim {
            seed,
            clients: 12,
            locks: 3,
            ops: 4_000,
            ..Sim::default()
        });
        let r = h.check(&CheckOptions::default());
        assert!(r.is_clean(), "seed {seed} ({stats:?}):\n{r}");
        assert!(r.linearized_ops > 2_000, "{}", r.summary());
        assert!(r.inconclusive_locks.is_empty(), "{}", r.summary());
    }
}

#[test]
fn simulated_runs_with_a_planted_double_grant_are_caught() {
    let (h, _) = simulate(&Sim {
        seed: 7,
        clients: 10,
        locks: 2,
        ops: 3_000,
        bug_at: Some(1_500),
        ..Sim::default()
    });
    let r = h.check(&CheckOptions::default());
    let kinds: Vec<ViolationKind> = r.violations.iter().map(|v| v.kind).collect();
    assert!(kinds.contains(&ViolationKind::NonOwnerRelease), "{r}");
    assert!(kinds.contains(&ViolationKind::NotLinearizable), "{r}");
}

#[test]
fn history_files_report_their_bad_lines() {
    let e = History::from_json_lines(b"{\"ev\":\"key\",\"t\":1,\"real\":1,\"key\":\"k\"}\n{\"ev\":\"nope\",\"t\":1,\"real\":1}\n").unwrap_err();
    assert_eq!((e.line, e.message.as_str()), (2, "unknown event \"nope\""));
    let e = History::from_json_lines(
        b"\n\n{\"op\":\"acquire\",\"client\":\"a\",\"lock\":\"l\",\"invoke\":5,\"complete\":4}",
    )
    .unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("completed before it was invoked"));
    let e = History::from_json_lines(b"[1,2]").unwrap_err();
    assert!(e.message.contains("expected an object"), "{}", e.message);
    let e = History::from_json_lines(b"{\"t\":1}").unwrap_err();
    assert!(e.message.contains("neither"), "{}", e.message);
}

#[test]
fn the_python_recorder_writes_what_the_checker_reads() {
    let script = r#"
import sys, lock_history
r = lock_history.Recorder()
tok = b"t\xff1"
with r.op("w1", "acquire", "lock:a", token=tok, ttl_ms=1000) as res:
    res.ok = True
with r.op("w1", "use", "lock:a", token=tok, resource="file", fence=3):
    pass
with r.op("w1", "release", "lock:a", token=tok) as res:
    res.ok = True
try:
    with r.op("w2", "acquire", "lock:a", ttl_ms=1000) as res:
        raise TimeoutError()
except TimeoutError:
    pass
sys.stdout.buffer.write(r.lines().encode("utf-8", "surrogateescape"))
"#;
    let out = match std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .env(
            "PYTHONPATH",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/python"),
        )
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("SKIPPED: python3 is not available ({e})");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h = History::from_json_lines(&out.stdout).expect("the recorder's lines read");
    assert_eq!(h.op_count(), 4);
    let lines = String::from_utf8(h.to_json_lines()).unwrap();
    assert!(lines.contains(r#""token":"t\udcff1""#), "{lines}");
    assert!(
        lines.contains(r#""op":"acquire","client":"w2","lock":"lock:a""#),
        "{lines}"
    );
    assert!(lines.contains(r#""ok":null"#), "{lines}");
    assert_clean(&h.check(&CheckOptions::default()));
}

#[test]
fn the_rust_recorder_records_calls_and_crashes() {
    let rec = resplock::history::ClientRecorder::new();
    rec.begin("w1", OpKind::Acquire, "lock:a")
        .token("t1")
        .ttl_ms(1_000)
        .end(Some(true));
    rec.begin("w1", OpKind::Use, "lock:a")
        .token("t1")
        .end(Some(true));
    drop(
        rec.begin("w2", OpKind::Acquire, "lock:a")
            .token("t2")
            .ttl_ms(1_000),
    );
    let h = History::from_json_lines(&rec.to_json_lines()).unwrap();
    assert_eq!(h.op_count(), 3);
    // w2's acquire never returned: it may or may not have happened, and nothing is violated.
    assert_clean(&h.check(&CheckOptions::default()));
}

/// Waiters that gave up without learning whether they got the lock, and whose token never
/// owned it on the server, had no effect: they are left out of the linearizability search,
/// where each, open until the end of the run, could go anywhere.
#[test]
fn unknown_acquires_that_never_owned_the_lock_are_left_out_of_the_search() {
    let mut b = B::new();
    for w in 0..40 {
        b.op(
            &format!("waiter{w}"),
            OpKind::Acquire,
            w as f64,
            10_000.0,
            None,
            Some(1_000),
            &format!("gave-up-{w}"),
        );
    }
    for i in 0..300 {
        let (t, name, token) = (100.0 + 20.0 * i as f64, format!("c{i}"), format!("t{i}"));
        let who = client(i as u64 + 1, &name);
        b.op(
            &name,
            OpKind::Acquire,
            t,
            t + 2.0,
            Some(true),
            Some(1_000),
            &token,
        );
        b.set("", t + 1.0, "lock:res", &token, 1_000, who.clone());
        b.op(
            &name,
            OpKind::Release,
            t + 5.0,
            t + 7.0,
            Some(true),
            None,
            &token,
        );
        b.release("", t + 6.0, "lock:res", who);
    }
    let text = b.h.to_json_lines();
    let h = History::from_json_lines(&text).expect("the history reads back");
    let r = h.check(&CheckOptions {
        max_steps: 100_000,
        ..CheckOptions::default()
    });
    assert_clean(&r);
    assert!(r.inconclusive_locks.is_empty(), "{r}");
    assert_eq!(r.linearized_ops, 600, "{r}");
}
