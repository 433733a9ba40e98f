//! BUSY stays prompt when the machine is loaded: while every core is held by spinning threads,
//! a client arriving after a script has run past busy-reply-threshold gets `-BUSY` while the
//! script still runs (the script never ends on its own, so any other reply would come only
//! after SCRIPT KILL), on a runtime of one worker and of two.

#[macro_use]
mod common;

use common::{server_with, Raw};
use resplock::Config;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BUSY: &[u8] =
    b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";

/// Threads that keep every core busy until dropped (at most 60 s, so a failed test cannot
/// leave them spinning).
struct Spinners {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Spinners {
    fn start() -> Spinners {
        let stop = Arc::new(AtomicBool::new(false));
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let until = Instant::now() + Duration::from_secs(60);
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Spinners { stop, threads }
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Five rounds: a never-ending script, then another client after the threshold, which must
/// get BUSY; SCRIPT KILL ends the script. Prints how long the BUSY reply took.
async fn busy_reply_while_cores_are_held() {
    let s = server_with(Config {
        busy_reply_threshold_ms: 100,
        ..Config::ephemeral()
    })
    .await;
    let _load = Spinners::start();
    let script = "local i = 0 while true do i = i + 1 end";
    let eval = format!(
        "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
        script.len()
    );
    let mut waits = Vec::new();
    for _ in 0..5 {
        let mut runner = Raw::connect(&s).await;
        let mut other = Raw::connect(&s).await;
        assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
        runner.send(eval.as_bytes()).await;
        tokio::time::sleep(Duration::from_millis(150)).await;
        let asked = Instant::now();
        // `cmd!` waits 5 s at most: a reply held until the script ends would never come.
        assert_eq!(cmd!(other, "GET", "k"), BUSY);
        waits.push(asked.elapsed());
        assert_eq!(cmd!(other, "SCRIPT", "KILL"), b"+OK\r\n");
        let killed = runner.reply().await;
        assert!(
            killed.starts_with(b"-ERR Script killed by user"),
            "{killed:?}"
        );
        assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
    }
    println!("BUSY replies with every core held: {waits:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn busy_is_answered_on_one_worker_while_every_core_is_held() {
    busy_reply_while_cores_are_held().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_is_answered_on_two_workers_while_every_core_is_held() {
    busy_reply_while_cores_are_held().await;
}
