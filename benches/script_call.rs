//! The cost of one FCALL against one EVALSHA of the same lock script, in process: the script
//! path alone (argument tables, the Lua call, `redis.call`s, the reply), without the socket
//! work that dominates a redis-benchmark run and without its noise on a shared machine.
//!
//! Usage: `cargo bench --bench script_call [-- CALLS_PER_BLOCK ROUNDS]` (defaults 20000, 10).
//! Without `--bench` (as `cargo test --benches` runs it) it prints this usage and exits.
//!
//! One embedded server; the compare-and-delete unlock and Redisson's reentrant acquire are
//! loaded once with SCRIPT LOAD and once as functions whose bodies are the scripts' text. Each
//! round runs a block of EVALSHA calls then a block of FCALL calls per script (keys cycle over
//! 1000 names), each holding the server lock as a client's command does, and measures the
//! calling thread's CPU time (/proc/thread-self/schedstat, nanoseconds). Prints the median
//! nanoseconds per call of each form and the ratio FCALL/EVALSHA. Every loop is bounded by
//! CALLS_PER_BLOCK x ROUNDS.

use bytes::Bytes;
use resplock::cmd::runtime::script_runner::run_script_row;
use resplock::{BlockingServer, Config};

const UNLOCK: &str =
    "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) else return 0 end";
const ACQUIRE: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";

/// This thread's CPU time in nanoseconds.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` does not, and then nothing runs.
    if !std::env::args().any(|a| a == "--bench") {
        println!("usage: cargo bench --bench script_call [-- CALLS_PER_BLOCK ROUNDS]");
        return;
    }
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    let calls: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rounds: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let server = BlockingServer::start(Config::ephemeral()).expect("server starts");
    let state = server.state().clone();
    let s = &state.scripting;
    let sha_unlock = s.load(UNLOCK.as_bytes()).expect("unlock loads");
    let sha_acquire = s.load(ACQUIRE.as_bytes()).expect("acquire loads");
    let lib = format!(
        "#!lua name=locks\nredis.register_function('unlock', function(KEYS, ARGV) {UNLOCK} end)\nredis.register_function('acquire', function(KEYS, ARGV) {ACQUIRE} end)"
    );
    s.function_load(&Bytes::from(lib), true)
        .expect("library loads");
    let evalsha = resplock::cmd::lookup(b"evalsha").expect("evalsha row");
    let fcall = resplock::cmd::lookup(b"fcall").expect("fcall row");
    let keys: Vec<Bytes> = (0..1000)
        .map(|i| Bytes::from(format!("lock:{i}")))
        .collect();
    let b = |s: &str| Bytes::copy_from_slice(s.as_bytes());

    // (workload, form) -> ns per call of each round.
    let mut results: Vec<(&str, &str, Vec<f64>)> = Vec::new();
    for (workload, sha, name, argv) in [
        ("unlock", &sha_unlock, "unlock", vec![b("token")]),
        (
            "acquire",
            &sha_acquire,
            "acquire",
            vec![b("30000"), b("client-id:1")],
        ),
    ] {
        let mut per = [Vec::new(), Vec::new()];
        for _ in 0..rounds {
            for (i, (cmd, head)) in [(evalsha, b(sha)), (fcall, b(name))]
                .into_iter()
                .enumerate()
            {
                let t0 = cpu_ns();
                for n in 0..calls {
                    let mut args = vec![b(cmd.name), head.clone(), b("1"), keys[n % 1000].clone()];
                    args.extend(argv.iter().cloned());
                    let _held = state.lock.lock_blocking();
                    let reply = run_script_row(&state, 0, cmd, &args);
                    assert!(!reply.is_error(), "{reply:?}");
                }
                per[i].push((cpu_ns() - t0) as f64 / calls as f64);
            }
        }
        let [e, f] = per;
        results.push((workload, "evalsha", e));
        results.push((workload, "fcall", f));
    }
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    println!("{calls} calls per block, {rounds} rounds; median CPU ns per call");
    println!(
        "{:10} {:>12} {:>10} {:>7}",
        "workload", "evalsha ns", "fcall ns", "ratio"
    );
    for pair in results.chunks(2) {
        let (e, f) = (median(&pair[0].2), median(&pair[1].2));
        println!("{:10} {:12.0} {:10.0} {:7.3}", pair[0].0, e, f, f / e);
    }
    server.shutdown();
}
