//! `stop-writes-after-restart no|auto|<ms>` (resplock's own; redis-server has none): the
//! "delayed restart" of the Redlock analysis. A lock server that lost its locks in a crash
//! (no persistence, or a log not fsynced before the reply) must not grant them again while
//! the clients that held them may still believe they do: for a while after every start it
//! refuses writes (-RESTARTED), reads keep working.
//!
//! - `<ms>`: writes are refused for that many milliseconds after the start.
//! - `auto`: for the longest TTL the previous run gave a key (SET EX/PX, EXPIRE and kin,
//!   scripts' and transactions' commands alike). The server keeps it in a small file next to
//!   its RDB file (`<dbfilename>.longest-ttl` in `dir`), written atomically and fsynced
//!   before the reply of the command that made it grow, so nothing is written while the
//!   longest TTL stays the same; this works with persistence off. Once the delay is over,
//!   every lease granted before the start has run out, and the file goes down to what this
//!   run gave.
//!
//! The delay is measured on the server clock, from the moment the dataset is loaded (so the
//! time the server was down only adds to the margin). `CONFIG SET` changes the delay counted
//! from that same start: `no` ends a delay in progress.

use crate::config::Config;
use parking_lot::Mutex;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// A parsed `stop-writes-after-restart`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// `no`: writes are never refused (the default).
    Off,
    /// `auto`: the longest TTL given before the restart, kept on disk.
    Auto,
    /// `<ms>`: a fixed time.
    Fixed(i64),
}

/// The parameter's name.
pub const PARAM: &str = "stop-writes-after-restart";

impl Setting {
    /// `no`, `auto` (any case) or a number of milliseconds written with digits only.
    ///
    /// ```
    /// use resplock::cmd::runtime::restart_delay::Setting;
    /// assert_eq!(Setting::parse("no"), Some(Setting::Off));
    /// assert_eq!(Setting::parse("AUTO"), Some(Setting::Auto));
    /// assert_eq!(Setting::parse("30000"), Some(Setting::Fixed(30_000)));
    /// assert_eq!(Setting::parse("-1"), None);
    /// assert_eq!(Setting::parse(""), None);
    /// ```
    pub fn parse(v: &str) -> Option<Setting> {
        if v.eq_ignore_ascii_case("no") {
            return Some(Setting::Off);
        }
        if v.eq_ignore_ascii_case("auto") {
            return Some(Setting::Auto);
        }
        if v.is_empty() || v.len() > 15 || !v.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        v.parse().ok().map(Setting::Fixed)
    }

    /// The setting in `config` (Off when unset or not understood).
    pub fn of(config: &Config) -> Setting {
        config
            .get(PARAM)
            .and_then(|v| Setting::parse(&v))
            .unwrap_or(Setting::Off)
    }
}

/// Not recording: the longest TTL is compared with this and never exceeds it.
const NOT_RECORDING: i64 = i64::MAX;

/// The delay's state. The request path reads `until_ms` (one relaxed load per write) and,
/// after a command that gave a key a TTL, compares it with `seen_ms` and `recorded_ms`.
#[derive(Debug)]
pub struct RestartDelay {
    /// Server time (ms) until which writes are refused; 0 when they are not.
    until_ms: AtomicI64,
    /// Server time (ms) the dataset was loaded at (0 before): the delay counts from here.
    started_ms: AtomicI64,
    /// The longest TTL the file held at start (the `auto` delay).
    loaded_ms: AtomicI64,
    /// The longest TTL given to a key since the start.
    seen_ms: AtomicI64,
    /// What the file holds ([`NOT_RECORDING`] unless `auto` is on and the server started).
    recorded_ms: AtomicI64,
    /// The delay in progress has ended and the file was brought down to `seen_ms`.
    ended: AtomicBool,
    /// The setting and the file's path; the lock also keeps two writes of the file apart.
    settings: Mutex<Settings>,
}

/// What [`RestartDelay`] keeps behind its lock.
#[derive(Debug)]
struct Settings {
    setting: Setting,
    /// The file, in `dir` (None: no `dir`).
    path: Option<PathBuf>,
    /// When the last write of the file failed: the next try waits a second, so a failing
    /// disk costs the request path a lock, not a write per command.
    failed_at: Option<std::time::Instant>,
}

impl Default for RestartDelay {
    fn default() -> Self {
        RestartDelay {
            until_ms: AtomicI64::new(0),
            started_ms: AtomicI64::new(0),
            loaded_ms: AtomicI64::new(0),
            seen_ms: AtomicI64::new(0),
            recorded_ms: AtomicI64::new(NOT_RECORDING),
            ended: AtomicBool::new(false),
            settings: Mutex::new(Settings {
                setting: Setting::Off,
                path: None,
                failed_at: None,
            }),
        }
    }
}

/// The file that keeps the longest TTL: `<dbfilename>.longest-ttl` in `dir`, so the servers
/// of `--instances N` (numbered file names) keep one each.
fn file_path(config: &Config) -> Option<PathBuf> {
    let dir = config.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let name = config.get("dbfilename").unwrap_or_else(|| "dump.rdb".into());
    Some(dir.join(format!("{name}.longest-ttl")))
}

/// Read the file: Ok(0) when there is none.
fn read_file(path: &Path) -> std::io::Result<i64> {
    match std::fs::read_to_string(path) {
        Ok(text) => text.trim().parse::<i64>().map(|v| v.max(0)).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not a number of milliseconds")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e),
    }
}

/// Replace the file with `ms`, atomically (a temporary file fsynced, renamed over it, the
/// directory fsynced), so a crash leaves the old value or the new one.
fn write_file(path: &Path, ms: i64) -> std::io::Result<()> {
    let tmp = path.with_extension("longest-ttl.tmp");
    let mut f = std::fs::File::create(&tmp)?;
    writeln!(f, "{ms}")?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

impl RestartDelay {
    /// Take the setting and the file's place from `config` (at creation and after CONFIG
    /// SET). A server that started already counts its delay from its start with the new
    /// setting; turned to `auto`, it records from now on what this run gave.
    pub fn refresh(&self, config: &Config) {
        let setting = Setting::of(config);
        let path = file_path(config);
        let mut s = self.settings.lock();
        let was = s.setting;
        s.setting = setting;
        s.path = path;
        let started = self.started_ms.load(Ordering::Relaxed);
        if started == 0 {
            return;
        }
        if !self.ended.load(Ordering::Relaxed) {
            self.until_ms
                .store(self.deadline(setting, started), Ordering::Relaxed);
        }
        match (was == Setting::Auto, setting == Setting::Auto) {
            (true, false) => self.recorded_ms.store(NOT_RECORDING, Ordering::Relaxed),
            (false, true) => {
                // What this run gave so far: the file holds it from now on.
                self.recorded_ms.store(0, Ordering::Relaxed);
                let seen = self.seen_ms.load(Ordering::Relaxed);
                self.write_locked(&mut s, seen);
            }
            _ => {}
        }
    }

    /// When writes may resume for `setting`, counted from `started` (0: no delay).
    fn deadline(&self, setting: Setting, started: i64) -> i64 {
        let delay = match setting {
            Setting::Off => 0,
            Setting::Auto => self.loaded_ms.load(Ordering::Relaxed),
            Setting::Fixed(ms) => ms,
        };
        if delay > 0 {
            started.saturating_add(delay)
        } else {
            0
        }
    }

    /// The dataset is loaded at server time `now_ms`: the delay starts (with `auto`, as
    /// long as the file says). Returns the delay, for the log.
    pub fn begin(&self, now_ms: i64) -> i64 {
        let s = self.settings.lock();
        let mut loaded = 0;
        if s.setting == Setting::Auto {
            if let Some(p) = &s.path {
                loaded = match read_file(p) {
                    Ok(v) => v,
                    Err(e) => {
                        crate::log::warning(&format!(
                            "Can't read the longest TTL from {}: {e}; no delay after this restart",
                            p.display()
                        ));
                        0
                    }
                };
            }
            self.recorded_ms.store(loaded, Ordering::Relaxed);
        }
        self.loaded_ms.store(loaded, Ordering::Relaxed);
        self.seen_ms.store(0, Ordering::Relaxed);
        self.started_ms.store(now_ms.max(1), Ordering::Relaxed);
        let until = self.deadline(s.setting, now_ms.max(1));
        self.until_ms.store(until, Ordering::Relaxed);
        self.ended.store(until == 0, Ordering::Relaxed);
        if until == 0 {
            0
        } else {
            until - now_ms
        }
    }

    /// Milliseconds writes stay refused at server time `now_ms` (0: they are accepted).
    #[inline]
    pub fn remaining_ms(&self, now_ms: i64) -> i64 {
        let until = self.until_ms.load(Ordering::Relaxed);
        if until == 0 {
            return 0;
        }
        (until - now_ms).max(0)
    }

    /// Whether a write is refused now (-RESTARTED): one load while no delay runs, the clock
    /// read only while one does.
    #[inline]
    pub fn refuses(&self, clock: &crate::clock::Clock) -> bool {
        self.running() && self.remaining_ms(clock.now_ms()) > 0
    }

    /// Whether a delay is running (its end not yet seen by [`RestartDelay::end_if_over`]):
    /// the one load the write path takes.
    #[inline]
    pub fn running(&self) -> bool {
        self.until_ms.load(Ordering::Relaxed) != 0
    }

    /// Whether [`RestartDelay::end_if_over`] has something to do at `now_ms`.
    pub fn due(&self, now_ms: i64) -> bool {
        let until = self.until_ms.load(Ordering::Relaxed);
        self.started_ms.load(Ordering::Relaxed) != 0
            && !self.ended.load(Ordering::Relaxed)
            && (until == 0 || now_ms >= until)
    }

    /// The background check (the caller holds the server lock, so no command gives a TTL
    /// meanwhile): once the delay is over, writes are accepted and, with `auto`, the file
    /// comes down to the longest TTL this run gave, since every earlier lease has run out.
    pub fn end_if_over(&self, now_ms: i64) {
        let until = self.until_ms.load(Ordering::Relaxed);
        if self.ended.load(Ordering::Relaxed) || (until != 0 && now_ms < until) {
            return;
        }
        let mut s = self.settings.lock();
        self.until_ms.store(0, Ordering::Relaxed);
        self.ended.store(true, Ordering::Relaxed);
        let seen = self.seen_ms.load(Ordering::Relaxed);
        if s.setting == Setting::Auto && seen < self.recorded_ms.load(Ordering::Relaxed) {
            self.write_locked(&mut s, seen);
        }
    }

    /// A command gave a key a TTL of `ms` at the longest (the caller holds the server lock).
    /// Free unless it is the longest so far; a longer one than the file holds is written
    /// before the command's reply leaves.
    #[inline]
    pub fn ttl_given(&self, ms: i64) {
        if ms > self.seen_ms.load(Ordering::Relaxed) {
            self.seen_ms.fetch_max(ms, Ordering::Relaxed);
        }
        if ms > self.recorded_ms.load(Ordering::Relaxed) {
            self.record(ms);
        }
    }

    #[cold]
    fn record(&self, ms: i64) {
        let mut s = self.settings.lock();
        if s.setting != Setting::Auto || ms <= self.recorded_ms.load(Ordering::Relaxed) {
            return;
        }
        if s
            .failed_at
            .is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(1))
        {
            return;
        }
        self.write_locked(&mut s, ms);
    }

    /// Write `ms` to the file (its lock held) and remember it; a failure is logged, and a
    /// command that gives a TTL longer than the file holds tries again a second later.
    fn write_locked(&self, s: &mut Settings, ms: i64) {
        let Some(path) = &s.path else {
            return;
        };
        match write_file(path, ms) {
            Ok(()) => {
                s.failed_at = None;
                self.recorded_ms.store(ms, Ordering::Relaxed);
            }
            Err(e) => {
                s.failed_at = Some(std::time::Instant::now());
                crate::log::warning(&format!(
                    "Can't record the longest TTL ({ms} ms) in {}: {e}; a restart now would \
                     not wait for the leases it gave",
                    path.display()
                ));
            }
        }
    }

    /// INFO persistence's lines while the parameter is on (none otherwise, so INFO stays
    /// redis-server's): the delay left and, with `auto`, what the file holds.
    pub fn info(&self, now_ms: i64, kv: &mut dyn FnMut(&str, &dyn std::fmt::Display)) {
        let setting = self.settings.lock().setting;
        if setting == Setting::Off {
            return;
        }
        kv("stop_writes_after_restart_remaining_ms", &self.remaining_ms(now_ms));
        if setting == Setting::Auto {
            let recorded = self.recorded_ms.load(Ordering::Relaxed);
            kv(
                "stop_writes_after_restart_longest_ttl_ms",
                &if recorded == NOT_RECORDING { 0 } else { recorded },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &Path, setting: &str) -> Config {
        let mut c = Config {
            dir: Some(dir.to_path_buf()),
            ..Config::default()
        };
        c.set_many(&[(b"stop-writes-after-restart", setting.as_bytes())])
            .unwrap();
        c
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("resplock-rd-unit-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn auto_records_only_a_longer_ttl_and_lowers_the_file_after_the_delay() {
        let dir = scratch("auto");
        let file = dir.join("dump.rdb.longest-ttl");
        let d = RestartDelay::default();
        d.refresh(&config(&dir, "auto"));
        assert_eq!(d.begin(1_000), 0, "no file: no delay");
        d.ttl_given(30_000);
        d.ttl_given(10_000);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "30000\n");
        // The next start waits that long, from its own start.
        let d = RestartDelay::default();
        d.refresh(&config(&dir, "auto"));
        assert_eq!(d.begin(500_000), 30_000);
        assert_eq!(d.remaining_ms(500_000), 30_000);
        assert!(!d.due(529_999));
        d.ttl_given(5_000);
        d.end_if_over(529_999);
        assert_eq!(d.remaining_ms(529_999), 1);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "30000\n");
        assert!(d.due(530_000));
        d.end_if_over(530_000);
        assert!(!d.running());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "5000\n");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn config_changes_count_from_the_same_start_until_the_delay_ended() {
        let dir = scratch("fixed");
        let d = RestartDelay::default();
        d.refresh(&config(&dir, "10000"));
        assert_eq!(d.begin(1_000), 10_000);
        d.refresh(&config(&dir, "20000"));
        assert_eq!(d.remaining_ms(5_000), 16_000);
        d.refresh(&config(&dir, "no"));
        assert_eq!(d.remaining_ms(5_000), 0);
        d.end_if_over(5_000);
        d.refresh(&config(&dir, "20000"));
        assert_eq!(d.remaining_ms(5_000), 0, "an ended delay stays ended");
        // Turned to auto at run time, it records what this run gave from then on.
        d.ttl_given(7_000);
        assert!(!dir.join("dump.rdb.longest-ttl").exists());
        d.refresh(&config(&dir, "auto"));
        assert_eq!(
            std::fs::read_to_string(dir.join("dump.rdb.longest-ttl")).unwrap(),
            "7000\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
