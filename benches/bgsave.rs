//! What a background snapshot (BGSAVE) of a million locks costs, in process: the keyspace's
//! shard captures plus the RDB writer, to a file, idle and while a writer thread keeps
//! changing random locks (every shard is then captured by the writes, ahead of the file
//! writer, which is the worst case for memory).
//!
//! Usage: `cargo bench --bench bgsave [-- KEYS DIR]` (defaults 1000000, the system temp dir).
//! Without `--bench` (as `cargo test --benches` runs it) it prints this usage and exits.
//!
//! Prints per mode: the save's wall time and file size, the resident memory it added at its
//! peak (sampled every 2 ms), the serialized records that waited in memory at most, how many
//! shards a write serialized and the longest such pause, and the writes done meanwhile with
//! the slowest one. Bounded: one save per mode, the load stops when the save does.

use bytes::Bytes;
use resplock::keyspace::{Entry, Keyspace, Value};
use resplock::rdb::file::{AccessSave, Aux, KeyFormat};
use resplock::rdb::snapshot::{self, Plan};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn token(i: usize) -> Bytes {
    Bytes::from(format!("{:08x}-4a5b-4c6d-8e9f-{:012x}:1", i, i * 7919))
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("usage: cargo bench --bench bgsave [-- KEYS DIR]");
        return;
    }
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    let keys: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dir = it
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let ks = Arc::new(Keyspace::new(16));
    for i in 0..keys {
        let key = format!("lock:{i}");
        let e = Entry::with_expiry(Value::Str(token(i)), now + 3_600_000);
        ks.db(0).lock(key.as_bytes()).insert(key.as_bytes(), e);
    }
    println!(
        "{keys} locks (SET lock:N <uuid:thread> PX 3600000), RSS {:.1} MB",
        rss() as f64 / 1e6
    );
    for loaded in [false, true] {
        let path = dir.join(format!("bgsave-bench-{}.rdb", std::process::id()));
        let plan = Plan {
            aux: Aux {
                ctime: now / 1000,
                ..Default::default()
            },
            checksum: true,
            format: KeyFormat {
                compress: true,
                access: AccessSave::None,
                now_ms: now,
            },
            functions: Vec::new(),
            sizes: snapshot::sizes(&ks),
            key_delay_us: 0,
        };
        let base = rss();
        let peak = Arc::new(AtomicU64::new(base));
        let done = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, done) = (peak.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    peak.fetch_max(rss(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                }
            })
        };
        let started = Instant::now();
        let sink = snapshot::begin(&ks, &plan).expect("no capture running");
        let writer = {
            let (ks, sink, plan, path) = (ks.clone(), sink.clone(), plan.clone(), path.clone());
            std::thread::spawn(move || {
                let f = std::fs::File::create(&path).expect("create");
                let (w, n) =
                    snapshot::write(&ks, &sink, &plan, std::io::BufWriter::new(f), &|| false)
                        .expect("write");
                let f = w.into_inner().expect("flush");
                f.sync_all().expect("fsync");
                (n, started.elapsed())
            })
        };
        let (mut writes, mut slowest) = (0u64, Duration::ZERO);
        if loaded {
            let mut x = 88172645463325252u64;
            while !writer.is_finished() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x % keys as u64) as usize;
                let key = format!("lock:{i}");
                let t = Instant::now();
                ks.db(0).lock(key.as_bytes()).insert(
                    key.as_bytes(),
                    Entry::with_expiry(Value::Str(token(i + 1)), now + 3_600_000),
                );
                slowest = slowest.max(t.elapsed());
                writes += 1;
            }
        }
        let (bytes, took) = writer.join().expect("writer");
        done.store(true, Ordering::Relaxed);
        sampler.join().expect("sampler");
        let s = &sink.stats;
        println!(
            "{}: {:.0} ms, file {:.1} MB, RSS +{:.1} MB at peak, records waiting in memory at \
             most {:.1} MB, {} shards serialized by writes (longest {:.2} ms){}",
            if loaded { "under writes" } else { "idle" },
            took.as_secs_f64() * 1e3,
            bytes as f64 / 1e6,
            peak.load(Ordering::Relaxed).saturating_sub(base) as f64 / 1e6,
            s.peak_buffered.load(Ordering::Relaxed) as f64 / 1e6,
            s.foreground_captures.load(Ordering::Relaxed),
            s.longest_foreground_us.load(Ordering::Relaxed) as f64 / 1e3,
            if loaded {
                format!(
                    ", {writes} writes meanwhile, slowest {:.2} ms",
                    slowest.as_secs_f64() * 1e3
                )
            } else {
                String::new()
            }
        );
        let _ = std::fs::remove_file(&path);
        std::io::stdout().flush().ok();
    }
}
