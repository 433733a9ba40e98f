//! The server log, in redis-server's format, because harnesses wait for its lines
//! (`Ready to accept connections`, `Server initialized`) and people grep it:
//!
//! `PID:M DD Mon YYYY HH:MM:SS.mmm * message`
//!
//! The level character is Redis's (`.` debug, `-` verbose, `*` notice, `#` warning), the time
//! is local time as Redis prints it. As Redis's `serverLogRaw`, a log file is opened, appended
//! to and closed for every line, so logrotate can move it away under a running server; with no
//! log file the lines go to standard output.
//!
//! Nothing is written until [`init`] is called: the binary does, an embedding program (tests)
//! gets a silent server unless it asks for the log.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::RwLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// Redis's log levels, least to most important; a line is written when its level is at least
/// the configured one (`loglevel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// `loglevel debug`.
    Debug = 0,
    /// `loglevel verbose`.
    Verbose = 1,
    /// `loglevel notice`, the default.
    Notice = 2,
    /// `loglevel warning`.
    Warning = 3,
}

impl Level {
    /// From the numeric value of Redis's `loglevel` enum (0 debug ... 3 warning).
    pub fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Debug,
            1 => Level::Verbose,
            3 => Level::Warning,
            _ => Level::Notice,
        }
    }

    fn mark(self) -> char {
        ['.', '-', '*', '#'][self as usize]
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static LEVEL: AtomicU8 = AtomicU8::new(Level::Notice as u8);
/// None: standard output.
static FILE: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Start logging at `level`, to `file` (None or an empty path: standard output).
pub fn init(level: Level, file: Option<PathBuf>) {
    // Local time as Redis prints it: the zone is read once, as Redis's tzset() at start.
    // SAFETY: tzset only reads the environment and fills libc's globals; it runs before any
    // other thread formats a time stamp.
    unsafe { tzset() };
    set_level(level);
    set_file(file);
    ENABLED.store(true, Ordering::Release);
}

/// Change the level (CONFIG SET loglevel).
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Change where lines go (None or an empty path: standard output).
pub fn set_file(file: Option<PathBuf>) {
    let file = file.filter(|f| !f.as_os_str().is_empty());
    *FILE.write().unwrap_or_else(|e| e.into_inner()) = file;
}

/// Whether a line of `level` would be written now (callers skip formatting otherwise).
pub fn enabled(level: Level) -> bool {
    ENABLED.load(Ordering::Acquire) && level as u8 >= LEVEL.load(Ordering::Relaxed)
}

/// Write one line at `level`, as the master process (`M`).
pub fn log(level: Level, msg: &str) {
    log_as('M', level, msg);
}

/// Write one line at `level` with Redis's role character: `C` before the server is
/// initialised (Redis has not recorded its pid yet then), `M` afterwards.
pub fn log_as(role: char, level: Level, msg: &str) {
    if !enabled(level) {
        return;
    }
    let line = format_line(std::process::id(), role, SystemTime::now(), level, msg);
    write_out(&line);
}

fn write_out(line: &str) {
    let file = FILE.read().unwrap_or_else(|e| e.into_inner()).clone();
    match file {
        None => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line.as_bytes());
            let _ = out.flush();
        }
        Some(path) => {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
    }
}

/// A warning as Redis's signal handler writes it (serverLogFromHandler), with no date:
/// `PID:signal-handler (UNIX-SECONDS) msg`.
pub fn from_signal_handler(msg: &str) {
    if !enabled(Level::Warning) {
        return;
    }
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    write_out(&format!(
        "{}:signal-handler ({secs}) {msg}\n",
        std::process::id()
    ));
}

/// Write `text` as it is, without the line prefix (Redis's LL_RAW: the ASCII logo).
pub fn raw(level: Level, text: &str) {
    if !enabled(level) {
        return;
    }
    write_out(text);
}

/// Whether the log goes to standard output.
pub fn to_stdout() -> bool {
    FILE.read().unwrap_or_else(|e| e.into_inner()).is_none()
}

/// [`log`] at warning level.
pub fn warning(msg: &str) {
    log(Level::Warning, msg);
}

/// [`log`] at notice level.
pub fn notice(msg: &str) {
    log(Level::Notice, msg);
}

/// [`log`] at verbose level.
pub fn verbose(msg: &str) {
    log(Level::Verbose, msg);
}

/// One log line, final newline included: `PID:R DD Mon YYYY HH:MM:SS.mmm M message`.
pub fn format_line(pid: u32, role: char, t: SystemTime, level: Level, msg: &str) -> String {
    format!("{pid}:{role} {} {} {msg}\n", timestamp(t), level.mark())
}

/// Redis's log time stamp, `%d %b %Y %H:%M:%S.mmm` in local time.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let local = secs + utc_offset(secs);
    let (days, rem) = (local.div_euclid(86400), local.rem_euclid(86400));
    let (year, month, day) = civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{day:02} {} {year} {:02}:{:02}:{:02}.{:03}",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// (year, month 1-12, day 1-31) of a count of days since 1970-01-01 (Howard Hinnant's
/// civil_from_days).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Seconds east of UTC of the local zone at `secs` (0 when the C library cannot tell).
fn utc_offset(secs: i64) -> i64 {
    let t: libc::time_t = secs as libc::time_t;
    // SAFETY: localtime_r writes only into `tm`, which lives on this stack frame.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if ok {
        tm.tm_gmtoff
    } else {
        0
    }
}

extern "C" {
    fn tzset();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn log_line_has_redis_fields_in_order() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        let line = format_line(42, 'M', t, Level::Notice, "Server initialized");
        let (pid, rest) = line.split_once(':').unwrap();
        assert_eq!(pid, "42");
        assert!(rest.starts_with("M "), "{line}");
        assert!(line.ends_with(" * Server initialized\n"), "{line}");
        // DD Mon YYYY HH:MM:SS.mmm
        let stamp = &rest[2..rest.len() - " * Server initialized\n".len()];
        let parts: Vec<&str> = stamp.split(' ').collect();
        assert_eq!(parts.len(), 4, "{stamp}");
        assert_eq!(parts[0].len(), 2);
        assert_eq!(parts[1].len(), 3);
        assert_eq!(parts[2], "2023");
        assert!(parts[3].ends_with(".123"), "{stamp}");
    }

    #[test]
    fn level_marks_are_redis_characters() {
        let t = UNIX_EPOCH;
        for (l, c) in [
            (Level::Debug, '.'),
            (Level::Verbose, '-'),
            (Level::Notice, '*'),
            (Level::Warning, '#'),
        ] {
            assert!(format_line(1, 'M', t, l, "x").ends_with(&format!(" {c} x\n")));
        }
    }

    #[test]
    fn civil_dates_round_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19723), (2024, 1, 1));
        assert_eq!(civil_from_days(19782), (2024, 2, 29));
    }
}
