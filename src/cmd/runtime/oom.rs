//! `oom-score-adj`: the process's `/proc/self/oom_score_adj` follows the configuration, as
//! redis-server's setOOMScoreAdj sets it, so an operator's choice of which process the kernel
//! kills first under memory pressure holds for resplock too. The value is per process: with
//! `--instances`, the node configured last decides. resplock forks no background child, so
//! the third class of `oom-score-adj-values` (bgchild) has nothing to apply to.

use crate::config::Config;
use parking_lot::Mutex;

const PATH: &str = "/proc/self/oom_score_adj";

/// The score the process had before resplock first adjusted it (None: not adjusted now), to
/// go back to when `oom-score-adj no` is set again.
static BASE: Mutex<Option<i32>> = Mutex::new(None);

/// setOOMScoreAdj for the master class (resplock is never a replica): write the configured
/// score (relative to the base, or absolute, clamped to -1000..1000), or restore the base when
/// adjusting was turned off. Err carries the reason for the log.
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
        let master: i32 = config
            .get("oom-score-adj-values")
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        let v = if mode == "absolute" {
            master
        } else {
            master + b
        };
        v.clamp(-1000, 1000)
    } else if let Some(b) = base.take() {
        b
    } else {
        return Ok(());
    };
    std::fs::write(PATH, format!("{val}\n"))
        .map_err(|e| format!("Unable to write oom_score_adj: {e}"))
}
