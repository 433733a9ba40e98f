//! The conformance suite: every case in conformance/*.case was recorded from a real
//! redis-server 7.0 and is replayed here against resplock, byte for byte (with the matchers the
//! case file states). See conformance/README.md.
//!
//! - `cargo test --test conformance`: replay against an in-process resplock (no Redis needed).
//! - `CONFORMANCE_REDIS=127.0.0.1:PORT cargo test --test conformance`: live mode, every case
//!   runs against that redis-server and resplock side by side; both must match the file.
//! - `CONFORMANCE_RECORD=127.0.0.1:PORT cargo test --test conformance -- --nocapture`:
//!   re-record every reply from that redis-server and rewrite the files in place.
//! - `CONFORMANCE_FILTER=text`: only cases whose file name or case name contains `text`.

/// Count allocations as the binary does, so maxmemory (conformance/maxmemory.case) applies to
/// the in-process servers too.
#[global_allocator]
static ALLOC: resplock::alloc::Counting<std::alloc::System> =
    resplock::alloc::Counting(std::alloc::System);

#[path = "conformance/format.rs"]
mod format;

use format::{check, show, Doc, Entry, Expected, StepKind};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GROUPS: &[&str] = &[
    "strings",
    "counters",
    "keys",
    "expiry",
    "hashes",
    "connection",
    "server",
    "locks",
    "protocol",
    "scripting",
    "scripting_libs",
    "scripting_flags",
    "scripting_debug",
    "scripting_resp3",
    "scripting_sandbox",
    "functions",
    "pubsub",
    "notifications",
    "command",
    "lua_hardening",
    "maxmemory",
    "acl",
    "dropin",
    "tracking",
    "cluster",
    "sets",
    "zsets",
    "sort",
    "redisson_scripts",
    "redisson_fairlock",
    "zset_blocking",
    "multi",
    "lists",
    "blocking",
    "test_control",
    "bitops",
    "object",
    "debug",
    "debug_enabled",
    "dump",
    "migrate",
    "hyperloglog",
    "geo",
    "server_rest",
    "streams",
    "lookups",
    "replication",
];

/// Groups that need a server started with settings Redis cannot change at run time
/// (`--name value` pairs): replay starts resplock with them; record and live mode first check
/// the reference with CONFIG GET and skip the group, saying so, when it runs without them
/// (record such a group with CONFORMANCE_FILTER against a server started that way).
const STARTUP: &[(&str, &[(&str, &str)])] =
    &[("debug_enabled", &[("enable-debug-command", "local")])];

/// The startup settings `group` needs (empty for most).
fn startup_of(group: &str) -> &'static [(&'static str, &'static str)] {
    STARTUP
        .iter()
        .find(|(g, _)| *g == group)
        .map_or(&[], |(_, s)| s)
}

/// How long a reply may take before the step counts as unanswered.
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);
/// Recording a raw send or an `@read`: replies are collected until the server stays quiet this
/// long. Replaying an `@read` that recorded nothing waits this long for a frame that must not come.
const RAW_QUIET: Duration = Duration::from_millis(150);

/// How the replies to one step are collected.
enum Collect {
    /// Exactly this many frames, each within REPLY_TIMEOUT.
    Exactly(usize),
    /// Every frame until the server stays quiet for RAW_QUIET.
    UntilQuiet,
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// No further steps run on it (it timed out or closed unexpectedly).
    dead: bool,
}

enum Read {
    Frame(Vec<u8>),
    Timeout,
    Closed,
}

impl Conn {
    async fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
            dead: false,
        })
    }

    async fn send(&mut self, b: &[u8]) -> bool {
        self.stream.write_all(b).await.is_ok()
    }

    async fn read(&mut self, wait: Duration) -> Read {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match format::parse_frame(&self.buf, 0) {
                Ok(n) => return Read::Frame(self.buf.drain(..n.end).collect()),
                Err(format::ParseErr::Invalid(_)) => {
                    // Not RESP: hand back everything so the mismatch shows it.
                    return Read::Frame(std::mem::take(&mut self.buf));
                }
                Err(format::ParseErr::Incomplete) => {}
            }
            let mut chunk = [0u8; 65536];
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    if self.buf.is_empty() {
                        return Read::Closed;
                    }
                    return Read::Frame(std::mem::take(&mut self.buf));
                }
                Err(_) => return Read::Timeout,
                Ok(Ok(n)) => self.buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    /// Move whatever the server has already sent into `buf`, without waiting, so bytes nobody
    /// read (an extra pub/sub message) show up at the end of a case.
    fn drain_ready(&mut self) {
        let mut chunk = [0u8; 65536];
        // Bounded: a server cannot have sent more than this before the case ended.
        for _ in 0..64 {
            match self.stream.try_read(&mut chunk) {
                Ok(n) if n > 0 => self.buf.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
    }

    /// True if the server closes the connection (with nothing more to read) within `wait`.
    async fn closed(&mut self, wait: Duration) -> Result<(), String> {
        if !self.buf.is_empty() {
            return Err(format!("unread bytes {}", show(&self.buf)));
        }
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(wait, self.stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => Ok(()),
            Ok(Ok(n)) => Err(format!("still open, sent {}", show(&chunk[..n]))),
            Err(_) => Err("still open".into()),
        }
    }
}

fn request(args: &[Vec<u8>]) -> Vec<u8> {
    let mut r = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        r.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        r.extend_from_slice(a);
        r.extend_from_slice(b"\r\n");
    }
    r
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Redis,
    Resplock,
}

/// A server a case runs against, with the case's named connections.
struct Target {
    kind: Kind,
    label: String,
    addr: SocketAddr,
    /// For resplock: a fresh in-process server per case.
    server: Option<resplock::ServerHandle>,
    /// For redis: the connection that resets state between cases.
    control: Option<Conn>,
    conns: HashMap<String, Conn>,
}

impl Target {
    async fn redis(addr: &str) -> Target {
        let addr: SocketAddr = addr.parse().expect("address like 127.0.0.1:6379");
        let mut control = Conn::open(addr)
            .await
            .unwrap_or_else(|e| panic!("cannot reach redis-server at {addr}: {e}"));
        control
            .send(&request(&[b"INFO".to_vec(), b"server".to_vec()]))
            .await;
        let Read::Frame(info) = control.read(REPLY_TIMEOUT).await else {
            panic!("redis-server at {addr} does not answer INFO");
        };
        let info = String::from_utf8_lossy(&info).to_string();
        let version = info
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("?")
            .trim()
            .to_string();
        assert!(
            version.starts_with("7.0."),
            "the reference must be redis-server 7.0, {addr} runs {version}"
        );
        Target {
            kind: Kind::Redis,
            label: format!("redis-server {version} at {addr}"),
            addr,
            server: None,
            control: Some(control),
            conns: HashMap::new(),
        }
    }

    fn resplock() -> Target {
        Target {
            kind: Kind::Resplock,
            label: "resplock".into(),
            addr: "127.0.0.1:0".parse().unwrap(),
            server: None,
            control: None,
            conns: HashMap::new(),
        }
    }

    /// Fresh state: no connections, empty keyspace; resplock started with `startup`.
    async fn begin_case(&mut self, startup: &[(&str, &str)]) {
        self.conns.clear();
        match self.kind {
            Kind::Resplock => {
                // As the recording redis-server runs: no save points, on loopback.
                let mut argv: Vec<String> = ["resplock", "--port", "0", "--bind", "127.0.0.1"]
                    .iter()
                    .chain(&["--save", ""])
                    .map(|s| s.to_string())
                    .collect();
                for (name, value) in startup {
                    argv.push(format!("--{name}"));
                    argv.push(value.to_string());
                }
                let mut config =
                    resplock::config::parse_command_line(&argv, std::io::empty(), |_| true)
                        .unwrap_or_else(|e| panic!("startup settings {startup:?}: {e:?}"))
                        .config;
                // Files a case saves (SAVE, DEBUG RELOAD) go to a directory of the server's
                // own, never the working directory another case's server would load from.
                config.dir = resplock::Config::ephemeral().dir;
                let s = resplock::start(config).await.expect("resplock starts");
                self.addr = s.local_addr();
                self.server = Some(s);
            }
            Kind::Redis => {
                let c = self.control.as_mut().unwrap();
                // Config a case may change (a case resets it too; this covers a failed case).
                c.send(&request(&[
                    b"CONFIG".to_vec(),
                    b"SET".to_vec(),
                    b"notify-keyspace-events".to_vec(),
                    Vec::new(),
                ]))
                .await;
                match c.read(REPLY_TIMEOUT).await {
                    Read::Frame(f) if f == b"+OK\r\n" => {}
                    _ => panic!("CONFIG SET notify-keyspace-events failed on {}", self.label),
                }
                c.send(&request(&[b"FLUSHALL".to_vec()])).await;
                match c.read(REPLY_TIMEOUT).await {
                    Read::Frame(f) if f == b"+OK\r\n" => {}
                    _ => panic!("FLUSHALL failed on {}", self.label),
                }
                // The previous case's connections are closed, but redis may not have freed
                // them yet: wait until their subscriptions are gone, so PUBLISH counts and
                // PUBSUB replies only see this case's subscribers.
                let probes: [(&[&[u8]], &[u8]); 3] = [
                    (&[b"PUBSUB", b"CHANNELS"], b"*0\r\n"),
                    (&[b"PUBSUB", b"SHARDCHANNELS"], b"*0\r\n"),
                    (&[b"PUBSUB", b"NUMPAT"], b":0\r\n"),
                ];
                for _ in 0..200 {
                    let mut clean = true;
                    for (args, want) in probes {
                        let args: Vec<Vec<u8>> = args.iter().map(|a| a.to_vec()).collect();
                        c.send(&request(&args)).await;
                        match c.read(REPLY_TIMEOUT).await {
                            Read::Frame(f) => clean &= f == want,
                            _ => panic!("PUBSUB failed on {}", self.label),
                        }
                    }
                    if clean {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    }

    async fn end_case(&mut self) {
        self.conns.clear();
        if let Some(s) = self.server.take() {
            s.shutdown().await;
        }
    }

    async fn conn(&mut self, name: &str) -> Option<&mut Conn> {
        if !self.conns.contains_key(name) {
            let c = Conn::open(self.addr).await.ok()?;
            self.conns.insert(name.to_string(), c);
        }
        self.conns.get_mut(name)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Replay,
    Live,
    Record,
}

struct Failure {
    group: String,
    case: String,
    line: usize,
    target: String,
    step: String,
    why: String,
    expected: Option<Vec<u8>>,
    got: Option<Vec<u8>>,
}

#[derive(Default)]
struct Totals {
    cases: usize,
    commands: usize,
    failures: Vec<Failure>,
}

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

fn filter_matches(filter: &Option<String>, group: &str, case: &str) -> bool {
    match filter {
        None => true,
        Some(f) => group.contains(f.as_str()) || case.contains(f.as_str()),
    }
}

/// Run (or record) one case. Steps run on every target in lockstep.
async fn run_case(
    mode: Mode,
    group: &str,
    case: &str,
    steps: &mut [&mut format::Step],
    targets: &mut [Target],
    totals: &mut Totals,
) {
    for t in targets.iter_mut() {
        t.begin_case(startup_of(group)).await;
    }
    let mut conn_name = "main".to_string();
    for step in steps.iter_mut() {
        if step.kind.is_request() {
            totals.commands += 1;
        }
        if let StepKind::Sleep(ms) = step.kind {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            continue;
        }
        let mut recorded: Option<Vec<Expected>> = None;
        for t in targets.iter_mut() {
            let label = t.label.clone();
            let fail = |why: String, expected: Option<Vec<u8>>, got: Option<Vec<u8>>| Failure {
                group: group.to_string(),
                case: case.to_string(),
                line: step.line,
                target: label.clone(),
                step: step.text.clone(),
                why,
                expected,
                got,
            };
            if let StepKind::Conn(name) = &step.kind {
                conn_name = name.clone();
                continue;
            }
            let Some(c) = t.conn(&conn_name).await else {
                totals
                    .failures
                    .push(fail("cannot connect".into(), None, None));
                continue;
            };
            if c.dead {
                continue;
            }
            let (bytes, want) = match &step.kind {
                StepKind::Conn(_) | StepKind::Sleep(_) => unreachable!(),
                StepKind::Closed => {
                    if let Err(e) = c.closed(REPLY_TIMEOUT).await {
                        totals.failures.push(fail(
                            format!("expected the connection closed: {e}"),
                            None,
                            None,
                        ));
                        c.dead = true;
                    }
                    continue;
                }
                StepKind::Cmd(args) => (Some(request(args)), Collect::Exactly(1)),
                StepKind::Raw(b) => (
                    Some(b.clone()),
                    if mode == Mode::Record {
                        Collect::UntilQuiet
                    } else {
                        Collect::Exactly(step.frames.len())
                    },
                ),
                // Nothing is sent; replaying an @read that recorded no frame checks that
                // none comes.
                StepKind::Read => (
                    None,
                    if mode == Mode::Record || step.frames.is_empty() {
                        Collect::UntilQuiet
                    } else {
                        Collect::Exactly(step.frames.len())
                    },
                ),
            };
            if let Some(bytes) = &bytes {
                if !c.send(bytes).await {
                    totals
                        .failures
                        .push(fail("write failed".into(), None, None));
                    c.dead = true;
                    continue;
                }
            }
            let mut got = Vec::new();
            match want {
                Collect::Exactly(n) => {
                    for _ in 0..n {
                        match c.read(REPLY_TIMEOUT).await {
                            Read::Frame(f) => got.push(f),
                            Read::Timeout => {
                                c.dead = true;
                                break;
                            }
                            Read::Closed => {
                                c.dead = true;
                                break;
                            }
                        }
                    }
                }
                Collect::UntilQuiet => {
                    // Bounded: a recording never needs more frames than this.
                    for _ in 0..10_000 {
                        match c.read(RAW_QUIET).await {
                            Read::Frame(f) => got.push(f),
                            _ => break,
                        }
                    }
                }
            }
            if mode == Mode::Record {
                if c.dead && matches!(step.kind, StepKind::Cmd(_)) {
                    panic!(
                        "{group}: case {case:?} line {}: {} gave no reply",
                        step.line, t.label
                    );
                }
                // A reply that the old recording still matches (under its matchers) keeps the
                // old bytes, so re-recording only changes what really changed.
                let frames = got
                    .into_iter()
                    .enumerate()
                    .map(|(i, bytes)| match step.frames.get(i) {
                        Some(old)
                            if check(old, &bytes).is_ok() && check(old, &old.bytes).is_ok() =>
                        {
                            old.clone()
                        }
                        Some(old) => Expected {
                            matchers: old.matchers.clone(),
                            bytes,
                        },
                        None => Expected {
                            matchers: Vec::new(),
                            bytes,
                        },
                    })
                    .collect::<Vec<_>>();
                for (i, f) in frames.iter().enumerate() {
                    if let Err(why) = check(f, &f.bytes.clone()) {
                        panic!(
                            "{group}: case {case:?} line {}: the matchers reject the new \
                             recording of reply {i}: {why}",
                            step.line
                        );
                    }
                }
                recorded = Some(frames);
                continue;
            }
            if step.kind.is_request()
                && step.frames.is_empty()
                && matches!(step.kind, StepKind::Cmd(_))
            {
                totals.failures.push(fail(
                    "no recorded reply: run the recorder (CONFORMANCE_RECORD)".into(),
                    None,
                    got.into_iter().next(),
                ));
                continue;
            }
            for (i, exp) in step.frames.iter().enumerate() {
                match got.get(i) {
                    None => {
                        totals.failures.push(fail(
                            if c.dead {
                                "no reply (timeout or connection closed)".into()
                            } else {
                                "no reply".into()
                            },
                            Some(exp.bytes.clone()),
                            None,
                        ));
                        break;
                    }
                    Some(g) => {
                        if let Err(why) = check(exp, g) {
                            totals.failures.push(fail(
                                why,
                                Some(exp.bytes.clone()),
                                Some(g.clone()),
                            ));
                        }
                    }
                }
            }
            if let Some(extra) = got.get(step.frames.len()) {
                totals.failures.push(fail(
                    format!(
                        "{} more frame(s) than recorded",
                        got.len() - step.frames.len()
                    ),
                    None,
                    Some(extra.clone()),
                ));
            }
        }
        if let Some(frames) = recorded {
            step.frames = frames;
        }
    }
    // Replies nobody asked for (e.g. to a raw send that should get none) must not pass
    // unnoticed at the end of a case.
    if mode != Mode::Record {
        for t in targets.iter_mut() {
            for c in t.conns.values_mut() {
                if !c.dead {
                    c.drain_ready();
                }
            }
            for (name, c) in t.conns.iter() {
                if !c.dead && !c.buf.is_empty() {
                    totals.failures.push(Failure {
                        group: group.to_string(),
                        case: case.to_string(),
                        line: steps.last().map_or(0, |s| s.line),
                        target: t.label.clone(),
                        step: format!("(end of case, connection {name})"),
                        why: "unexpected extra reply bytes".into(),
                        expected: None,
                        got: Some(c.buf.clone()),
                    });
                }
            }
        }
    }
    for t in targets.iter_mut() {
        t.end_case().await;
    }
}

fn report(totals: &Totals, mode: Mode) -> bool {
    if totals.failures.is_empty() {
        println!(
            "conformance: {} cases, {} commands, all matched redis 7.0",
            totals.cases, totals.commands
        );
        return true;
    }
    let mut failed_cases: Vec<(String, String)> = Vec::new();
    let mut last = None;
    for f in &totals.failures {
        let key = (f.group.clone(), f.case.clone());
        if last.as_ref() != Some(&key) {
            println!("\nFAIL {}.case: {}", f.group, f.case);
            failed_cases.push(key.clone());
            last = Some(key);
        }
        let who = if mode == Mode::Live {
            format!(" [{}]", f.target)
        } else {
            String::new()
        };
        println!(
            "  conformance/{}.case:{}{}: {}",
            f.group, f.line, who, f.step
        );
        println!("    {}", f.why);
        if let Some(e) = &f.expected {
            println!("    expected (redis 7.0):");
            for l in format::show_lines(e, 12) {
                println!("      {l}");
            }
        }
        if let Some(g) = &f.got {
            println!(
                "    got ({}):",
                if mode == Mode::Live {
                    "this server"
                } else {
                    "resplock"
                }
            );
            for l in format::show_lines(g, 12) {
                println!("      {l}");
            }
        }
    }
    let mut per_group: Vec<(String, usize)> = Vec::new();
    for (g, _) in &failed_cases {
        match per_group.iter_mut().find(|(n, _)| n == g) {
            Some((_, c)) => *c += 1,
            None => per_group.push((g.clone(), 1)),
        }
    }
    let groups: Vec<String> = per_group.iter().map(|(g, n)| format!("{g} {n}")).collect();
    println!(
        "\nconformance: {} cases, {} commands, {} cases ({} commands) did not match redis 7.0 [{}]",
        totals.cases,
        totals.commands,
        failed_cases.len(),
        totals.failures.len(),
        groups.join(", ")
    );
    false
}

/// Whether the reference redis-server runs with every `(name, value)` setting (CONFIG GET).
async fn reference_has(t: &mut Target, settings: &[(&str, &str)]) -> bool {
    for (name, value) in settings {
        let c = t
            .control
            .as_mut()
            .expect("a reference has a control connection");
        c.send(&request(&[
            b"CONFIG".to_vec(),
            b"GET".to_vec(),
            name.as_bytes().to_vec(),
        ]))
        .await;
        let want = format!(
            "*2\r\n${}\r\n{name}\r\n${}\r\n{value}\r\n",
            name.len(),
            value.len()
        );
        match c.read(REPLY_TIMEOUT).await {
            Read::Frame(f) if f == want.as_bytes() => {}
            _ => return false,
        }
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance() {
    let record = std::env::var("CONFORMANCE_RECORD")
        .ok()
        .filter(|s| !s.is_empty());
    let live = std::env::var("CONFORMANCE_REDIS")
        .ok()
        .filter(|s| !s.is_empty());
    let filter = std::env::var("CONFORMANCE_FILTER")
        .ok()
        .filter(|s| !s.is_empty());
    let (mode, mut targets) = match (&record, &live) {
        (Some(addr), _) => (Mode::Record, vec![Target::redis(addr).await]),
        (None, Some(addr)) => (
            Mode::Live,
            vec![Target::redis(addr).await, Target::resplock()],
        ),
        (None, None) => (Mode::Replay, vec![Target::resplock()]),
    };
    if mode != Mode::Replay {
        let what = if mode == Mode::Record {
            "recording from"
        } else {
            "live against resplock and"
        };
        println!("conformance: {what} {}", targets[0].label);
    }
    let mut totals = Totals::default();
    for group in GROUPS {
        let path = case_dir().join(format!("{group}.case"));
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut doc = Doc::parse(&format!("conformance/{group}.case"), &src)
            .unwrap_or_else(|e| panic!("{e}"));
        if mode != Mode::Replay && !reference_has(&mut targets[0], startup_of(group)).await {
            println!(
                "conformance: skipping {group}.case: {} does not run with {:?}",
                targets[0].label,
                startup_of(group)
            );
            continue;
        }
        // Group the steps by case.
        let mut cases: Vec<(String, Vec<&mut format::Step>)> = Vec::new();
        for e in doc.entries.iter_mut() {
            match e {
                Entry::Header { name, .. } => cases.push((name.clone(), Vec::new())),
                Entry::Step(s) => cases.last_mut().expect("steps follow a header").1.push(s),
                Entry::Text(_) => {}
            }
        }
        for (name, mut steps) in cases {
            if !filter_matches(&filter, group, &name) {
                continue;
            }
            totals.cases += 1;
            run_case(mode, group, &name, &mut steps, &mut targets, &mut totals).await;
        }
        if mode == Mode::Record {
            let out = doc.render().unwrap_or_else(|e| panic!("{e}"));
            if out != src {
                std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                println!("conformance: rewrote {}", path.display());
            }
        }
    }
    if mode == Mode::Record {
        println!(
            "conformance: recorded {} cases, {} commands from {}",
            totals.cases, totals.commands, targets[0].label
        );
        if !totals.failures.is_empty() {
            report(&totals, mode);
            panic!("recording failed");
        }
        return;
    }
    if !report(&totals, mode) {
        panic!(
            "{} conformance mismatches (details above)",
            totals.failures.len()
        );
    }
}

#[test]
fn format_roundtrip_and_matchers() {
    let src = "### case: t\n> SET k \"a b\\x00\"\n+OK\n> GET k\n$3\na b\n> TTL k\n:5 ~int 0..10\n> HGETALL h\n%2 ~unordered\n$1\na\n$1\n1\n$1\nb\n$1\n2\n> GET e\n$0\n\n";
    let doc = Doc::parse("t", src).unwrap();
    assert_eq!(doc.render().unwrap(), src);
    let Entry::Step(s) = &doc.entries[1] else {
        panic!()
    };
    let StepKind::Cmd(args) = &s.kind else {
        panic!()
    };
    assert_eq!(args[2], b"a b\0");
    let Entry::Step(ttl) = &doc.entries[3] else {
        panic!()
    };
    assert!(check(&ttl.frames[0], b":7\r\n").is_ok());
    assert!(check(&ttl.frames[0], b":11\r\n").is_err());
    assert!(check(&ttl.frames[0], b"$1\r\n7\r\n").is_err());
    let Entry::Step(h) = &doc.entries[4] else {
        panic!()
    };
    assert!(check(
        &h.frames[0],
        b"%2\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"
    )
    .is_ok());
    assert!(check(
        &h.frames[0],
        b"%2\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\na\r\n$1\r\n2\r\n"
    )
    .is_err());
    let Entry::Step(g) = &doc.entries[2] else {
        panic!()
    };
    assert!(check(&g.frames[0], b"$3\r\na b\r\n").is_ok());
    assert!(check(&g.frames[0], b"$3\r\na c\r\n").is_err());
    assert!(format::glob(b"id=* name=x *", b"id=3 addr=1 name=x age=0"));
    assert!(!format::glob(b"id=* name=x *", b"id=3 name=y age=0"));
    for b in [&b"a \x7e~ \\\r\n\xff "[..], b"", b"~x"] {
        assert_eq!(format::unescape(&format::escape(b)).unwrap(), b);
    }
    assert_eq!(
        format::split_args("\"ab\"*3 'c d' e").unwrap(),
        vec![b"ababab".to_vec(), b"c d".to_vec(), b"e".to_vec()]
    );
}
