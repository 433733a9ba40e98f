//! How long inserting into a growing keyspace stalls, in process: a million lock keys written
//! one at a time into one database (64 shards), each insert timed. A shard's hash index grows
//! by doubling, all at once, and with keys spread evenly all 64 shards double within moments
//! of each other; every client waits meanwhile. Redis rehashes incrementally instead, so this
//! is where a run that creates many keys gets a worse tail latency than redis-server.
//!
//! Usage: `cargo bench --bench keyspace_growth [-- KEYS ROUNDS]` (defaults 1000000, 3).
//! Without `--bench` (as `cargo test --benches` runs it) it prints this usage and exits.
//!
//! Prints per round: the total insert time, the worst single insert, and how many inserts took
//! over 100 us with the time they took together (the stalls). Bounded by KEYS x ROUNDS.

use bytes::Bytes;
use resplock::keyspace::{Entry, Keyspace, Value};
use std::time::{Duration, Instant};

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("usage: cargo bench --bench keyspace_growth [-- KEYS ROUNDS]");
        return;
    }
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    let keys: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let token = Bytes::from_static(b"6f1c2b0e-4a5b-4c6d-8e9f-0123456789ab");
    for round in 1..=rounds {
        let ks = Keyspace::new(1);
        let db = ks.db(0);
        let (mut total, mut worst, mut stalled, mut stalls) =
            (Duration::ZERO, Duration::ZERO, Duration::ZERO, 0usize);
        for i in 0..keys {
            let key = format!("lock:{i}");
            let entry = Entry::with_expiry(Value::Str(token.clone()), i64::MAX);
            let t = Instant::now();
            db.lock(key.as_bytes()).insert(key.as_bytes(), entry);
            let d = t.elapsed();
            total += d;
            worst = worst.max(d);
            if d > Duration::from_micros(100) {
                stalls += 1;
                stalled += d;
            }
        }
        println!(
            "round {round}: {keys} inserts in {:.1} ms, worst {:.0} us, {stalls} over 100 us \
             taking {:.1} ms together",
            total.as_secs_f64() * 1e3,
            worst.as_secs_f64() * 1e6,
            stalled.as_secs_f64() * 1e3
        );
    }
}
