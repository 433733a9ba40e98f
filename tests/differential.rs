//! Differential tests: the same random command sequences go to a redis-server 7.0 of the
//! test's own (the spec) and to an in-process resplock, and the replies are compared, to find
//! divergences the hand-written cases miss. Modes:
//!
//! - `random_command_sequences_match_redis`: the hand-written grammar (`diff/classic.rs`) of
//!   strings, counters, keys, hashes, bit operations and scripts over them, tuned for edge cases.
//! - `every_command_of_the_table_matches_redis`: every command and subcommand of the table,
//!   generated from the reference's COMMAND DOCS grammar (`diff/gen.rs`), so a command added to
//!   resplock is covered the day its name appears in COMMAND LIST; what cannot be driven is
//!   listed with the reason and counted in the report.
//! - `several_connections_match_redis` (`diff/scenario.rs`): WATCH/MULTI/EXEC against another
//!   client's writes, blocking pops served by another client, pub/sub, keyspace notifications,
//!   tracking invalidations, CLIENT KILL/PAUSE/UNBLOCK/REPLY.
//! - `acl_users_match_redis` (`diff/acl.rs`): random users from every rule form (selectors
//!   and first-arg rules included), made through several ACL SETUSER calls or an aclfile both
//!   servers load, then commands of the table as them (plain, in MULTI, from scripts through
//!   `redis.call`/`redis.pcall`/functions, `redis.acl_check_cmd`, ACL DRYRUN), and ACL
//!   GETUSER/LIST/LOG and the saved aclfile compared; a NOPERM where Redis runs the command
//!   (or the reverse) is a divergence like any other.
//!
//! A divergence is shrunk (ddmin over the steps, replayed on fresh servers) and printed as a
//! ready-to-paste `.case` with the reference's replies.
//!
//! Running:
//! - `cargo test --test differential`: skipped (passes) unless `CONFORMANCE_REDIS` is set; the
//!   modes start their own `redis-server` (it must be on PATH).
//! - CI (`.ci/run`): `CONFORMANCE_REDIS=... cargo test --test differential`: fixed seeds, each
//!   mode time-boxed (`DIFF_SECONDS`, default 12: about a minute over the five modes).
//! - A long campaign: `scripts/diff_campaign.sh 1 51` runs seeds 1..51 with `DIFF_OPS=5000`
//!   (about 20 000 commands per seed over the four counted modes, so about 10^6) in chunks of
//!   5 seeds, each chunk `DIFF_SEED=A..B DIFF_OPS=5000 DIFF_SECONDS=0 cargo test --release
//!   --test differential -- --nocapture --test-threads 1` with its own log, and sums the
//!   commands per mode and per family over the chunks, listing every divergence. In the
//!   classic mode, family `unknown` counts its deliberately unknown command names.
//! - `DIFF_SEED=N` or `A..B`; `DIFF_OPS=N` steps per seed (split between a RESP2 and a RESP3
//!   phase); `DIFF_SECONDS=S` per mode (0: no limit); `DIFF_EXCLUDE=TAG,TAG` skips generated
//!   commands whose tag contains one of these (to look past a known divergence);
//!   `DIFF_TRACE=N` prints the first N steps with the reference's replies; `DIFF_SHRINK=N`
//!   replays at most N candidates when shrinking (default 400, 0: no shrinking).
//!
//! Nondeterminism is kept out of the grammar or normalized (`diff/norm.rs`): relative expiry
//! times are >= 100 s and drawn from a wide range; absolute ones are before 2038 or in the past;
//! TTL-style replies compare as -2, -1 or ">= 0"; hashes and sets in dict order compare as
//! multisets when redis reports a hashtable; SCAN 0 by cursor and keys while the database holds
//! fewer keys than COUNT; DBSIZE after both sides looked every argument up; random picks by
//! count; INFO, TIME, CLIENT LIST and the like by type; HELLO without its id; ACL LOG without
//! age and client-info; the COMMAND table without the commands resplock does not have.

mod common;
mod diff;
#[path = "conformance/format.rs"]
#[allow(dead_code)]
mod format;

use diff::classic::Norm;
use diff::conn::Conn;
use diff::gen::{norm_of, undriven, TableGen};
use diff::run::{self, Step};
use diff::spec::{self, Spec};
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// `N` or `A..B`.
fn seeds() -> Vec<u64> {
    let s = std::env::var("DIFF_SEED").unwrap_or_default();
    let s = s.trim();
    if s.is_empty() {
        return vec![1, 2];
    }
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (u64, u64) = (a.parse().expect("DIFF_SEED"), b.parse().expect("DIFF_SEED"));
        return (a..b).collect();
    }
    vec![s.parse().expect("DIFF_SEED: a number or A..B")]
}

fn enabled(mode: &str) -> bool {
    if std::env::var("CONFORMANCE_REDIS").map_or(true, |s| s.is_empty()) {
        println!("{mode} skipped: no reference given (set CONFORMANCE_REDIS; the test starts its own redis-server)");
        return false;
    }
    true
}

fn excluded() -> Vec<String> {
    std::env::var("DIFF_EXCLUDE")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The mode's time box (None: none).
fn budget() -> Option<Duration> {
    match env_usize("DIFF_SECONDS", 12) {
        0 => None,
        s => Some(Duration::from_secs(s as u64)),
    }
}

/// Commands executed per family, and what the report says about the table.
#[derive(Default)]
pub struct Report {
    pub per_family: BTreeMap<String, u64>,
    pub failures: Vec<String>,
    /// Divergences per command tag (only the first of each is shrunk and printed).
    pub seen: BTreeMap<String, u64>,
}

impl Report {
    pub fn count(&mut self, family: &str) {
        *self.per_family.entry(family.to_string()).or_default() += 1;
    }

    pub fn print(&self, mode: &str, started: Instant) {
        let total: u64 = self.per_family.values().sum();
        println!(
            "{mode}: {total} commands in {:.1} s, per family: {}",
            started.elapsed().as_secs_f64(),
            self.per_family
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !self.seen.is_empty() {
            println!(
                "{mode}: divergences per command: {}",
                self.seen
                    .iter()
                    .map(|(t, n)| format!("{t} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
}

/// The table loaded from both servers, and what the report lists about it.
pub struct Table {
    pub specs: Vec<Spec>,
    /// Commands resplock does not list (the reference's names), and the ones only resplock
    /// lists (README: CLIENT SETINFO and NO-TOUCH on purpose): the COMMAND table's replies are
    /// compared without them.
    pub missing: BTreeSet<String>,
    /// Drivable in the single-connection modes (indices into `specs`).
    pub pool: Vec<usize>,
}

pub async fn load_table(redis: SocketAddr, ours: SocketAddr, mode: &str) -> Table {
    let mut rc = Conn::open(redis).await;
    let mut oc = Conn::open(ours).await;
    let specs = spec::load(&mut rc, &mut oc).await;
    let extra = spec::only_in_resplock(&specs, &mut oc).await;
    let mut missing: BTreeSet<String> = specs
        .iter()
        .filter(|s| !s.in_resplock)
        .map(|s| s.name.clone())
        .collect();
    let mut undriven_list = Vec::new();
    let mut pool = Vec::new();
    for (i, s) in specs.iter().enumerate() {
        if !s.in_resplock {
            continue;
        }
        match undriven(s) {
            Some(why) if !s.container => undriven_list.push(format!("{} ({why})", s.name)),
            Some(_) => {}
            None => pool.push(i),
        }
    }
    println!(
        "{mode}: table of {} commands and subcommands; {} driven here; {} not in resplock: {}",
        specs.iter().filter(|s| !s.container).count(),
        pool.len(),
        missing.len(),
        missing.iter().cloned().collect::<Vec<_>>().join(" ")
    );
    println!(
        "{mode}: {} not driven in this mode: {}",
        undriven_list.len(),
        undriven_list.join("; ")
    );
    if !extra.is_empty() {
        println!(
            "{mode}: resplock lists {} the reference does not have: {}",
            extra.len(),
            extra.join(" ")
        );
    }
    let absent = missing.len();
    missing.extend(extra.iter().cloned());
    let _ = absent;
    Table {
        specs,
        missing,
        pool,
    }
}

/// The family of a command by its name (for the classic grammar's steps).
fn family_of(specs: &[Spec], name: &[u8]) -> String {
    let n = String::from_utf8_lossy(name).to_ascii_lowercase();
    specs
        .iter()
        .find(|s| s.name == n)
        .map_or_else(|| "unknown".to_string(), |s| s.group.clone())
}

/// A divergence, shrunk and printed; its description for the final assertion.
#[allow(clippy::too_many_arguments)]
async fn report_divergence(
    mode: &str,
    seed: u64,
    resp3: bool,
    redis: SocketAddr,
    defaults: Arc<Vec<(String, Vec<u8>)>>,
    missing: Arc<BTreeSet<String>>,
    history: Vec<Step>,
    first: (Vec<u8>, Vec<u8>),
) -> String {
    let proto = if resp3 { "RESP3" } else { "RESP2" };
    let last = history.last().cloned().expect("a step diverged");
    let mut msg = format!(
        "DIVERGENCE ({mode}): seed {seed}, {proto} phase, step {}\n  command:  {}\n  redis:    {}\n  resplock: {}\n",
        history.len() - 1,
        run::describe(&last),
        run::head(&first.0),
        run::head(&first.1)
    );
    let budget = env_usize("DIFF_SHRINK", 400);
    let shrunk = run::shrink(history, budget, |cand| {
        let (defaults, missing) = (defaults.clone(), missing.clone());
        async move {
            let srv = common::server().await;
            let (m, _) =
                run::replay(redis, srv.local_addr(), &defaults, resp3, &cand, &missing).await;
            srv.shutdown().await;
            m.map(|m| m.index)
        }
    })
    .await;
    let srv = common::server().await;
    let (m, replies) =
        run::replay(redis, srv.local_addr(), &defaults, resp3, &shrunk, &missing).await;
    srv.shutdown().await;
    match m {
        Some(m) => {
            let steps = &shrunk[..=m.index];
            msg.push_str(&format!(
                "  shrunk to {} step(s); the last one gives\n  redis:    {}\n  resplock: {}\n  as a case (the reference's replies):\n\n{}\n",
                steps.len(),
                run::head(&m.redis),
                run::head(&m.ours),
                run::as_case(
                    &format!("differential {mode} seed {seed} {proto}"),
                    resp3,
                    steps,
                    &replies[..=m.index]
                )
            ));
        }
        None => msg.push_str("  (did not reproduce from a fresh state: timing or earlier state)\n"),
    }
    msg.push_str(&format!("  rerun: DIFF_SEED={seed}\n"));
    println!("{msg}");
    msg
}

/// The single-connection modes: `make` draws one step; each seed runs a RESP2 then a RESP3
/// phase from a fresh state.
async fn single_mode(mode: &str, make: fn(&mut TableGen, &Table) -> Step) -> Report {
    let mut report = Report::default();
    let started = Instant::now();
    let redis = diff::proc::OwnRedis::start().expect("redis-server starts (is it on PATH?)");
    let server = common::server().await;
    let ours = server.local_addr();
    let table = load_table(redis.addr, ours, mode).await;
    let defaults = Arc::new(run::config_defaults(&mut Conn::open(redis.addr).await).await);
    let missing = Arc::new(table.missing.clone());
    let exclude = excluded();
    let ops = env_usize("DIFF_OPS", 20_000);
    let trace = env_usize("DIFF_TRACE", 0);
    let deadline = budget().map(|b| started + b);
    'seeds: for seed in seeds() {
        for resp3 in [false, true] {
            let n = if resp3 { ops - ops / 2 } else { ops / 2 };
            for c in [redis.addr, ours] {
                let bad = run::reset(&mut Conn::open(c).await, &defaults).await;
                assert!(bad.is_empty(), "reset of {c}: {bad:?}");
            }
            let mut session = run::Session::open(redis.addr, ours, resp3).await;
            let mut g = TableGen::new(
                seed.wrapping_mul(2).wrapping_add(resp3 as u64),
                resp3,
                table.pool.clone(),
            );
            let mut history: Vec<Step> = Vec::new();
            for i in 0..n {
                if deadline.is_some_and(|d| Instant::now() > d) {
                    break 'seeds;
                }
                let step = loop {
                    // A transaction is ended soon after it starts, so most commands run.
                    let st = if session.in_multi() && g.rng().chance(12) {
                        let end = if g.rng().chance(80) {
                            "EXEC"
                        } else {
                            "DISCARD"
                        };
                        Step {
                            args: vec![end.as_bytes().to_vec()],
                            norm: Norm::Exact,
                            family: "transactions".into(),
                            tag: end.to_ascii_lowercase(),
                        }
                    } else {
                        make(&mut g, &table)
                    };
                    if !exclude.iter().any(|x| st.tag.contains(x.as_str())) {
                        break st;
                    }
                };
                let (ra, rb, ok) = session.exec(&step, &table.missing).await;
                if i < trace {
                    println!("[{i}] {}\n    -> {}", run::describe(&step), run::head(&ra));
                }
                report.count(&step.family);
                let tag = step.tag.clone();
                history.push(step);
                if ok {
                    continue;
                }
                // Each command's first divergence is shrunk and printed; later ones are
                // counted. Both servers then start over, so one divergence does not hide the
                // rest of the run.
                *report.seen.entry(tag.clone()).or_default() += 1;
                if report.seen[&tag] == 1 && report.failures.len() < 40 {
                    let msg = report_divergence(
                        mode,
                        seed,
                        resp3,
                        redis.addr,
                        defaults.clone(),
                        missing.clone(),
                        std::mem::take(&mut history),
                        (ra, rb),
                    )
                    .await;
                    report.failures.push(msg);
                }
                history.clear();
                for c in [redis.addr, ours] {
                    run::reset(&mut Conn::open(c).await, &defaults).await;
                }
                session = run::Session::open(redis.addr, ours, resp3).await;
            }
        }
    }
    report.print(mode, started);
    server.shutdown().await;
    report
}

fn classic_step(g: &mut TableGen, table: &Table) -> Step {
    let op = g.c.op();
    let family = match op.tag.split(':').next() {
        Some("EVAL") => "scripting".to_string(),
        _ => family_of(&table.specs, &op.args[0]),
    };
    Step {
        args: op.args,
        norm: op.norm,
        family,
        tag: op.tag,
    }
}

fn table_step(g: &mut TableGen, table: &Table) -> Step {
    let spec = g.pick_spec(&table.specs).clone();
    let args = g.invocation(&table.specs, &spec);
    Step {
        args,
        norm: norm_of(&spec),
        family: spec.group.clone(),
        tag: spec.name.clone(),
    }
}

/// The reference back to a fresh state for a scenario: reset, and no subscriber of an earlier
/// scenario left (its connections are closed but maybe not yet freed).
async fn fresh_reference(redis: SocketAddr, defaults: &[(String, Vec<u8>)]) {
    let mut c = Conn::open(redis).await;
    let bad = run::reset(&mut c, defaults).await;
    assert!(bad.is_empty(), "reset of the reference: {bad:?}");
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let ch = c.cmd(&["PUBSUB", "CHANNELS"]).await;
        let sh = c.cmd(&["PUBSUB", "SHARDCHANNELS"]).await;
        let np = c.cmd(&["PUBSUB", "NUMPAT"]).await;
        if ch == b"*0\r\n" && sh == b"*0\r\n" && np == b":0\r\n" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Where a scenario mode's servers keep their aclfiles (ACL mode only).
struct AclFiles {
    redis: std::path::PathBuf,
    ours: std::path::PathBuf,
}

/// A scratch directory removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("resplock-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh resplock for one scenario (with the aclfile, emptied first, in ACL mode).
async fn fresh_ours(acl: Option<&AclFiles>) -> resplock::ServerHandle {
    match acl {
        Some(f) => {
            std::fs::write(&f.ours, b"").expect("aclfile emptied");
            common::server_with(resplock::Config {
                aclfile: Some(f.ours.to_string_lossy().into_owned()),
                ..resplock::Config::ephemeral()
            })
            .await
        }
        None => common::server().await,
    }
}

/// One scenario on fresh servers.
async fn run_scenario(
    redis: SocketAddr,
    defaults: &[(String, Vec<u8>)],
    acl: Option<&AclFiles>,
    sc: &diff::scenario::Scenario,
) -> diff::scenario::Outcome {
    fresh_reference(redis, defaults).await;
    if let Some(f) = acl {
        // An empty aclfile loaded gives the default user of a fresh start (the reset above
        // leaves it flagged sanitize-payload).
        std::fs::write(&f.redis, b"").expect("aclfile emptied");
        let mut c = Conn::open(redis).await;
        assert_eq!(
            c.cmd(&["ACL", "LOAD"]).await,
            b"+OK\r\n",
            "ACL LOAD of the reference"
        );
    }
    let srv = fresh_ours(acl).await;
    let files = acl.map(|f| (f.redis.clone(), f.ours.clone()));
    let out = diff::scenario::run(redis, srv.local_addr(), sc, files).await;
    srv.shutdown().await;
    out
}

/// The several-connection modes: `generate` draws a scenario; each runs on fresh servers; a
/// divergence is shrunk by dropping steps.
async fn scenario_mode(
    mode: &str,
    generate: fn(&mut TableGen, &Table) -> diff::scenario::Scenario,
    with_aclfile: bool,
) -> Report {
    let mut report = Report::default();
    let started = Instant::now();
    let tmp = TempDir::new(mode);
    let redis = if with_aclfile {
        diff::proc::OwnRedis::start_with(&["--aclfile", "{dir}/users.acl"], |d| {
            std::fs::write(d.join("users.acl"), b"").expect("aclfile");
        })
    } else {
        diff::proc::OwnRedis::start()
    }
    .expect("redis-server starts (is it on PATH?)");
    let acl = with_aclfile.then(|| AclFiles {
        redis: redis.dir.join("users.acl"),
        ours: tmp.0.join("ours.acl"),
    });
    let probe = common::server().await;
    let table = load_table(redis.addr, probe.local_addr(), mode).await;
    probe.shutdown().await;
    let defaults = run::config_defaults(&mut Conn::open(redis.addr).await).await;
    let deadline = budget().map(|b| started + b);
    let ops = env_usize("DIFF_OPS", 20_000);
    let exclude = excluded();
    'seeds: for seed in seeds() {
        let mut g = TableGen::new(
            seed.wrapping_mul(7).wrapping_add(3),
            false,
            table.pool.clone(),
        );
        let mut done = 0;
        while done < ops {
            if deadline.is_some_and(|d| Instant::now() > d) {
                break 'seeds;
            }
            let sc = generate(&mut g, &table);
            if exclude.iter().any(|x| sc.kind.contains(x.as_str())) {
                continue;
            }
            done += sc.acts.len();
            let (m, _) = run_scenario(redis.addr, &defaults, acl.as_ref(), &sc).await;
            for x in &sc.acts {
                report.count(&family_of(&table.specs, &x.args[0]));
            }
            let Some((at, er, eo)) = m else { continue };
            let tag = format!(
                "{}:{}",
                sc.kind,
                String::from_utf8_lossy(&sc.acts[at].args[0]).to_ascii_lowercase()
            );
            *report.seen.entry(tag.clone()).or_default() += 1;
            if report.seen[&tag] > 1 || report.failures.len() >= 40 {
                continue;
            }
            let mut msg = format!(
                "DIVERGENCE ({mode}): seed {seed}, a {} scenario of {} connections, step {at}\n  command: c{} {}\n  redis:    {}\n  resplock: {}\n",
                sc.kind,
                sc.resp3.len(),
                sc.acts[at].conn,
                diff::resp::show_cmd(&sc.acts[at].args),
                diff::scenario::show_events(&er),
                diff::scenario::show_events(&eo)
            );
            // Shrink by dropping steps, each candidate on fresh servers.
            let mut cur: Vec<diff::scenario::Act> = sc.acts[..=at].to_vec();
            let budget_runs = env_usize("DIFF_SHRINK", 400);
            let mut runs = 0;
            let mut progress = true;
            while progress && runs < budget_runs {
                progress = false;
                for i in (0..cur.len()).rev() {
                    if runs >= budget_runs {
                        break;
                    }
                    let mut cand = cur.clone();
                    cand.remove(i);
                    if cand.is_empty() {
                        continue;
                    }
                    runs += 1;
                    let trial = diff::scenario::Scenario {
                        acts: cand.clone(),
                        ..sc.clone()
                    };
                    if let (Some((at2, _, _)), _) =
                        run_scenario(redis.addr, &defaults, acl.as_ref(), &trial).await
                    {
                        cand.truncate(at2 + 1);
                        cur = cand;
                        progress = true;
                        break;
                    }
                }
            }
            let shrunk = diff::scenario::Scenario {
                acts: cur,
                ..sc.clone()
            };
            match run_scenario(redis.addr, &defaults, acl.as_ref(), &shrunk).await {
                (Some((at2, er2, eo2)), log) => msg.push_str(&format!(
                    "  shrunk to {} step(s); the last one gives\n  redis:    {}\n  resplock: {}\n  as a case (the reference's replies; <ID1>/<ADDR1> stand for connection 1's id and address):\n\n{}\n",
                    at2 + 1,
                    diff::scenario::show_events(&er2),
                    diff::scenario::show_events(&eo2),
                    diff::scenario::as_case(&format!("differential {mode} seed {seed}"), &shrunk, &log)
                )),
                (None, _) => msg.push_str("  (did not reproduce from a fresh state: timing)\n"),
            }
            msg.push_str(&format!("  rerun: DIFF_SEED={seed}\n"));
            println!("{msg}");
            report.failures.push(msg);
        }
    }
    report.print(mode, started);
    report
}

fn connection_scenario(g: &mut TableGen, t: &Table) -> diff::scenario::Scenario {
    diff::scenario::generate(g, &t.specs)
}

fn acl_scenario(g: &mut TableGen, t: &Table) -> diff::scenario::Scenario {
    diff::acl::generate(g, &t.specs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_connections_match_redis() {
    if !enabled("scenarios") {
        return;
    }
    let r = scenario_mode("scenarios", connection_scenario, false).await;
    assert!(
        r.failures.is_empty(),
        "{} divergence(s), printed above",
        r.failures.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_users_match_redis() {
    if !enabled("acl") {
        return;
    }
    let r = scenario_mode("acl", acl_scenario, true).await;
    assert!(
        r.failures.is_empty(),
        "{} divergence(s), printed above",
        r.failures.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_command_sequences_match_redis() {
    if !enabled("classic grammar") {
        return;
    }
    let r = single_mode("classic", classic_step).await;
    assert!(
        r.failures.is_empty(),
        "{} divergence(s), printed above",
        r.failures.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_of_the_table_matches_redis() {
    if !enabled("table-driven") {
        return;
    }
    let r = single_mode("table", table_step).await;
    assert!(
        r.failures.is_empty(),
        "{} divergence(s), printed above",
        r.failures.len()
    );
}

mod hardening;

use diff::proc::OwnRedis;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_limits_match_redis() {
    if std::env::var("CONFORMANCE_REDIS").map_or(true, |s| s.is_empty()) {
        println!("limit scenarios skipped: no reference server given (set CONFORMANCE_REDIS)");
        return;
    }
    let redis = OwnRedis::start().expect("redis-server starts on a free port");
    let server = common::server().await;
    let mut failures = Vec::new();
    for sc in hardening::scenarios() {
        let theirs = hardening::run(redis.addr, &sc).await;
        let ours = hardening::run(server.local_addr(), &sc).await;
        if theirs != ours || theirs != sc.redis {
            failures.push(format!(
                "{}:\n  redis now: {}\n  recorded:  {}\n  resplock:  {}",
                sc.name,
                hardening::show(&theirs),
                hardening::show(sc.redis),
                hardening::show(&ours)
            ));
        }
    }
    server.shutdown().await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
