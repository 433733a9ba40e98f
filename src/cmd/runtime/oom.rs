//! `oom-score-adj`: the process's `/proc/self/oom_score_adj` follows the configuration, as
//! redis-server's setOOMScoreAdj sets it, so an operator's choice of which process the kernel
//! kills first under memory pressure holds for resplock too. The class (the position in
//! `oom-score-adj-values`) follows the role: master, or replica while `replicaof` is set; a
//! background save's child process gets the third class (bgchild). The value is per process:
//! with `--instances`, the node configured last decides.

use crate::config::Config;
use parking_lot::Mutex;

const PATH: &str = "/proc/self/oom_score_adj";

/// The score the process had before resplock first adjusted it (None: not adjusted now), to
/// go back to when `oom-score-adj no` is set again.
static BASE: Mutex<Option<i32>> = Mutex::new(None);

/// Which of the three scores of `oom-score-adj-values` applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Master = 0,
    Replica = 1,
    BgChild = 2,
}

/// The configured score of `class` (relative to `base`, or absolute, clamped to
/// -1000..1000).
fn score(config: &Config, class: Class, mode: &str, base: i32) -> i32 {
    let v: i32 = config
        .get("oom-score-adj-values")
        .and_then(|v| v.split_whitespace().nth(class as usize)?.parse().ok())
        .unwrap_or(0);
    let v = if mode == "absolute" { v } else { v + base };
    v.clamp(-1000, 1000)
}

/// setOOMScoreAdj(-1): write the score of the server's class (replica while `replicaof` is
/// set, else master), or restore the base when adjusting was turned off. Called at start, on
/// CONFIG SET of either parameter and when the role changes. Err carries the reason for the
/// log.
pub fn apply(config: &Config) -> Result<(), String> {
    let mode = config.get("oom-score-adj").unwrap_or_else(|| "no".into());
    let mut base = BASE.lock();
    let val = if mode != "no" {
        let b = match *base {
            Some(b) => b,
            None => {
                let b = std::fs::read_to_string(PATH)
                    .map_err(|e| format!("Unable to read oom_score_adj: {e}"))?
                    .trim()
                    .parse()
                    .unwrap_or(0);
                *base = Some(b);
                b
            }
        };
        let replica = config.get("replicaof").is_some_and(|v| !v.is_empty());
        let class = if replica {
            Class::Replica
        } else {
            Class::Master
        };
        score(config, class, &mode, b)
    } else if let Some(b) = base.take() {
        b
    } else {
        return Ok(());
    };
    std::fs::write(PATH, format!("{val}\n"))
        .map_err(|e| format!("Unable to write oom_score_adj: {e}"))
}

/// setOOMScoreAdj(-1) after a role change, logging a failure as Redis does.
pub fn apply_after_role_change(config: &Config) {
    if let Err(e) = apply(config) {
        crate::log::warning(&e);
    }
}

/// setOOMScoreAdj(CONFIG_OOM_BGCHILD), which Redis's fork child runs on itself: written by
/// the parent for child `pid` right after spawning it, when scores are adjusted.
pub fn apply_to_child(config: &Config, pid: u32) {
    let mode = config.get("oom-score-adj").unwrap_or_else(|| "no".into());
    if mode == "no" {
        return;
    }
    let base = BASE.lock().unwrap_or(0);
    let val = score(config, Class::BgChild, &mode, base);
    if let Err(e) = std::fs::write(format!("/proc/{pid}/oom_score_adj"), format!("{val}\n")) {
        crate::log::warning(&format!("Unable to write oom_score_adj: {e}"));
    }
}
