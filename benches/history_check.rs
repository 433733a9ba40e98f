//! The history checker's speed (not a unit test): simulated runs of a correct lease server
//! with many clients (see tests/common_history), written as JSON lines, read back and
//! checked. Prints, per run: operations, events, the file's size, the time to read it, the
//! history's memory, and the check's time (linearizability included).
//!
//! ```sh
//! cargo bench --bench history_check                       # 100,000 ops on one lock; 1,000,000 on 64
//! HISTORY_BENCH=20,1,100000 cargo bench --bench history_check   # clients,locks,ops
//! ```

#[path = "../tests/common_history/mod.rs"]
mod common_history;

use common_history::{simulate, Sim};
use resplock::history::{CheckOptions, History};
use std::time::Instant;

fn main() {
    let runs: Vec<(usize, usize, usize)> = match std::env::var("HISTORY_BENCH") {
        Ok(s) => {
            let v: Vec<usize> = s.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            assert_eq!(v.len(), 3, "HISTORY_BENCH=clients,locks,ops");
            vec![(v[0], v[1], v[2])]
        }
        Err(_) => vec![(20, 1, 100_000), (200, 64, 1_000_000)],
    };
    for (clients, locks, ops) in runs {
        let (h, stats) = simulate(&Sim {
            seed: 3,
            clients,
            locks,
            ops,
            ..Sim::default()
        });
        let text = h.to_json_lines();
        drop(h);
        let t = Instant::now();
        let h = History::from_json_lines(&text).expect("reads back");
        let read = t.elapsed();
        let report = h.check(&CheckOptions::default());
        println!(
            "{clients} clients, {locks} locks: {} client ops, {} server events ({} leases), {:.1} MB of JSON lines read in {:.2} s, {:.1} MB in memory; {}",
            stats.ops,
            stats.events,
            report.leases,
            text.len() as f64 / 1e6,
            read.as_secs_f64(),
            h.memory_bytes() as f64 / 1e6,
            report.summary()
        );
        assert!(report.is_clean(), "{report}");
    }
}
