//! `stop-writes-after-restart no|auto|<ms>`, resplock's own "delayed restart" for Redlock: a
//! server that restarted (here without persistence, the case it is for) refuses every write
//! (commands, scripts, transactions) for the longest TTL it gave before the restart
//! (`auto`) or a fixed time, while reads go on; the server clock is moved instead of
//! sleeping. A Redlock client cannot then take a lock another client may still hold.

mod common;
use common::*;
use resplock::{Config, ServerHandle};

const REFUSED: &[u8] = b"-RESTARTED Writes are refused for a while after a restart, until the locks granted before it have expired (stop-writes-after-restart).\r\n";

/// A directory that outlives the servers started in it (an ephemeral one goes with its
/// server), removed on drop.
struct Dir(std::path::PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let d = std::env::temp_dir()
            .join(format!("resplock-restart-delay-{}", std::process::id()))
            .join(name);
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    /// A server without persistence in this directory, on `port` (0: any).
    fn config(&self, port: u16, setting: &str) -> Config {
        let mut c = Config::ephemeral();
        c.dir = Some(self.0.clone());
        c.port = port;
        c.set_many(&[
            (b"appendonly", b"no"),
            (b"stop-writes-after-restart", setting.as_bytes()),
        ])
        .unwrap();
        c
    }

    fn longest_ttl_file(&self) -> Option<String> {
        std::fs::read_to_string(self.0.join("dump.rdb.longest-ttl")).ok()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        let _ = std::fs::remove_dir(self.0.parent().unwrap());
    }
}

/// Stop `s` and start it again from `dir` on the same port, its clock frozen from the start
/// (so the delay left is exact) if `frozen`.
async fn restart(s: ServerHandle, dir: &Dir, setting: &str, frozen: bool) -> ServerHandle {
    let port = s.local_addr().port();
    s.shutdown().await;
    let config = dir.config(port, setting);
    server_with(if frozen { config.frozen() } else { config }).await
}

fn remaining_ms(info: &[u8]) -> i64 {
    info_field(info, "stop_writes_after_restart_remaining_ms")
        .expect("the field is there while the parameter is on")
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_refuses_writes_for_the_longest_ttl_given_before_the_restart() {
    let dir = Dir::new("auto");
    let s = server_with(dir.config(0, "auto")).await;
    let mut c = Raw::connect(&s).await;
    // Nothing given before this first start: no delay.
    assert_eq!(cmd!(c, "SET", "lock", "A", "NX", "PX", "30000"), b"+OK\r\n");
    assert_eq!(dir.longest_ttl_file().as_deref(), Some("30000\n"));
    // Shorter TTLs, from a script and EXPIRE, leave the file alone; a longer one grows it.
    cmd!(
        c,
        "EVAL",
        "return redis.call('set', KEYS[1], 'x', 'px', 5000)",
        "1",
        "short"
    );
    cmd!(c, "SET", "plain", "v");
    cmd!(c, "EXPIRE", "plain", "20");
    assert_eq!(dir.longest_ttl_file().as_deref(), Some("30000\n"));
    cmd!(
        c,
        "EVAL",
        "return redis.call('pexpire', KEYS[1], 45000)",
        "1",
        "plain"
    );
    assert_eq!(dir.longest_ttl_file().as_deref(), Some("45000\n"));
    let info = cmd!(c, "INFO", "persistence");
    assert_eq!(remaining_ms(&info), 0);
    assert_eq!(
        info_field(&info, "stop_writes_after_restart_longest_ttl_ms").as_deref(),
        Some("45000")
    );

    let s = restart(s, &dir, "auto", true).await;
    let mut c = Raw::connect(&s).await;
    // The locks are gone (no persistence), and none can be taken again yet.
    assert_eq!(cmd!(c, "GET", "lock"), b"$-1\r\n");
    assert_eq!(cmd!(c, "SET", "lock", "B", "NX", "PX", "30000"), REFUSED);
    assert_eq!(cmd!(c, "DEL", "lock"), REFUSED);
    assert_eq!(remaining_ms(&cmd!(c, "INFO", "persistence")), 45_000);
    // Reads and the rest go on.
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(c, "EXISTS", "lock"), b":0\r\n");
    assert_eq!(cmd!(c, "DBSIZE"), b":0\r\n");
    // Scripts: the Redlock release and acquire scripts get the refusal as their error.
    let acquire = cmd!(
        c,
        "EVAL",
        "return redis.call('set', KEYS[1], ARGV[1], 'nx', 'px', 30000)",
        "1",
        "lock",
        "B"
    );
    assert!(
        acquire.starts_with(&REFUSED[..REFUSED.len() - 2]),
        "{}",
        String::from_utf8_lossy(&acquire)
    );
    // redis.pcall hands the script the refusal as an error table.
    let caught = cmd!(
        c,
        "EVAL",
        "return redis.pcall('set', KEYS[1], 'x')['err']",
        "1",
        "k"
    );
    let text = String::from_utf8_lossy(&caught);
    assert!(text.contains("RESTARTED Writes are refused"), "{text}");
    assert_eq!(
        cmd!(
            c,
            "EVAL",
            "#!lua\nreturn redis.call('set', KEYS[1], 'x')",
            "1",
            "k"
        ),
        REFUSED
    );
    assert_eq!(
        cmd!(
            c,
            "EVAL",
            "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
            "1",
            "k"
        ),
        b"$-1\r\n"
    );
    assert_eq!(
        cmd!(c, "EVAL", "return redis.call('get', KEYS[1])", "1", "k"),
        b"$-1\r\n"
    );
    // A transaction with a write is refused while it is queued, and EXEC aborts.
    assert_eq!(cmd!(c, "MULTI"), b"+OK\r\n");
    assert_eq!(cmd!(c, "GET", "lock"), b"+QUEUED\r\n");
    assert_eq!(cmd!(c, "SET", "lock", "B"), REFUSED);
    assert_eq!(
        cmd!(c, "EXEC"),
        b"-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
    // Past the longest TTL, every lease from before the restart has run out.
    s.state().clock.advance_ms(44_999);
    assert_eq!(cmd!(c, "SET", "lock", "B", "NX", "PX", "30000"), REFUSED);
    s.state().clock.advance_ms(1);
    assert_eq!(cmd!(c, "SET", "lock", "B", "NX", "PX", "10000"), b"+OK\r\n");
    assert_eq!(remaining_ms(&cmd!(c, "INFO", "persistence")), 0);
    // The file comes down to what this run gave (the background check, bounded wait).
    for _ in 0..200 {
        if dir.longest_ttl_file().as_deref() == Some("10000\n") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(dir.longest_ttl_file().as_deref(), Some("10000\n"));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixed_delay_refuses_writes_for_that_long_after_every_start() {
    let dir = Dir::new("fixed");
    let s = server_with(dir.config(0, "5000").frozen()).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "k", "v"), REFUSED);
    assert_eq!(remaining_ms(&cmd!(c, "INFO", "persistence")), 5000);
    assert_eq!(
        info_field(
            &cmd!(c, "INFO", "persistence"),
            "stop_writes_after_restart_longest_ttl_ms"
        ),
        None
    );
    s.state().clock.advance_ms(5000);
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    assert!(dir.longest_ttl_file().is_none(), "only `auto` keeps a file");
    // CONFIG SET counts from the same start: a longer delay refuses again, `no` ends it.
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "stop-writes-after-restart", "60000"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "SET", "k", "v"), REFUSED);
    assert_eq!(
        cmd!(c, "CONFIG", "SET", "stop-writes-after-restart", "no"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    assert_eq!(
        info_field(
            &cmd!(c, "INFO", "persistence"),
            "stop_writes_after_restart_remaining_ms"
        ),
        None
    );
    s.shutdown().await;
}

#[tokio::test]
async fn the_parameter_is_off_by_default_and_round_trips_through_config_and_the_command_line() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let get = |v: &str| {
        format!(
            "*2\r\n$25\r\nstop-writes-after-restart\r\n${}\r\n{v}\r\n",
            v.len()
        )
        .into_bytes()
    };
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "stop-writes-after-restart"),
        get("no")
    );
    // Hidden from patterns, so `CONFIG GET *` stays redis-server's list.
    assert_eq!(cmd!(c, "CONFIG", "GET", "*after-restart*"), b"*0\r\n");
    for v in ["auto", "1500", "no"] {
        assert_eq!(
            cmd!(c, "CONFIG", "SET", "stop-writes-after-restart", v),
            b"+OK\r\n"
        );
        assert_eq!(
            cmd!(c, "CONFIG", "GET", "stop-writes-after-restart"),
            get(v)
        );
    }
    for bad in ["yes", "-1", "1.5", ""] {
        assert_eq!(
            cmd!(c, "CONFIG", "SET", "stop-writes-after-restart", bad),
            &b"-ERR CONFIG SET failed (possibly related to argument 'stop-writes-after-restart') - argument must be 'no', 'auto' or a number of milliseconds\r\n"[..],
            "{bad}"
        );
    }
    assert_eq!(cmd!(c, "SET", "k", "v"), b"+OK\r\n");
    s.shutdown().await;

    let s = server_with_args(&["--stop-writes-after-restart", "2500"]).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "CONFIG", "GET", "stop-writes-after-restart"),
        get("2500")
    );
    assert_eq!(cmd!(c, "SET", "k", "v"), REFUSED);
    s.shutdown().await;

    let file = std::env::temp_dir().join(format!(
        "resplock-restart-delay-{}.conf",
        std::process::id()
    ));
    std::fs::write(&file, "stop-writes-after-restart auto\n").unwrap();
    let argv: Vec<String> = ["resplock".to_string(), file.display().to_string()].into();
    let parsed =
        resplock::config::parse_command_line(&argv, std::io::empty(), resplock::command_exists)
            .expect("the file parses");
    assert_eq!(
        parsed.config.get("stop-writes-after-restart").as_deref(),
        Some("auto")
    );
    let _ = std::fs::remove_file(&file);
}

/// Redlock over three servers: client A holds a majority (nodes 0 and 1; node 2 was out of
/// its reach), node 1 restarts without persistence, and client B tries all three.
async fn second_client_majority(setting: &str) -> usize {
    let dirs = [
        Dir::new(&format!("n0-{setting}")),
        Dir::new(&format!("n1-{setting}")),
        Dir::new(&format!("n2-{setting}")),
    ];
    let mut nodes = Vec::new();
    for d in &dirs {
        nodes.push(server_with(d.config(0, setting)).await);
    }
    for n in &nodes[..2] {
        let mut a = Raw::connect(n).await;
        assert_eq!(cmd!(a, "SET", "lock", "A", "NX", "PX", "30000"), b"+OK\r\n");
    }
    let n1 = nodes.remove(1);
    nodes.insert(1, restart(n1, &dirs[1], setting, false).await);
    let mut got = 0;
    for n in &nodes {
        let mut b = Raw::connect(n).await;
        if cmd!(b, "SET", "lock", "B", "NX", "PX", "30000") == b"+OK\r\n" {
            got += 1;
        }
    }
    for n in nodes {
        n.shutdown().await;
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redlock_majority_is_not_granted_twice_across_a_restart_without_persistence() {
    // Without the delay the restarted node hands B the lock A still holds there: two
    // majorities at once.
    assert_eq!(second_client_majority("no").await, 2);
    assert_eq!(
        second_client_majority("auto").await,
        1,
        "B gets node 2 only"
    );
}

#[tokio::test]
async fn a_simulated_restart_starts_the_delay_again() {
    let dir = Dir::new("simulated");
    let mut config = dir.config(0, "auto").frozen();
    config.enable_test_commands = true;
    let s = server_with(config).await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "lock", "A", "NX", "PX", "30000"), b"+OK\r\n");
    assert_eq!(cmd!(c, "RESPLOCK.RESTART", "EMPTY"), b"+OK\r\n");
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "SET", "lock", "B", "NX", "PX", "30000"), REFUSED);
    assert_eq!(remaining_ms(&cmd!(c, "INFO", "persistence")), 30_000);
    assert_eq!(
        cmd!(c, "RESPLOCK.CLOCK", "ADVANCE", "30000").first(),
        Some(&b':')
    );
    assert_eq!(cmd!(c, "SET", "lock", "B", "NX", "PX", "30000"), b"+OK\r\n");
    s.shutdown().await;
}
