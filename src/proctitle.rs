//! The process title `ps` and /proc/PID/cmdline show, set from `proc-title-template` as
//! redis-server's setproctitle does: the title is written over the memory that held the
//! command line, extended over the environment strings after it once those have been copied
//! elsewhere (the kernel then reads the title from there).
//!
//! Only resplock's binary takes the command line over ([`enable`], first thing in `main`,
//! while it is the only thread): a process embedding the library keeps its own title, and
//! [`set`] does nothing there.

use std::sync::{Mutex, OnceLock};

/// Where the title may be written: the address of the command line's first byte and how
/// many bytes follow it that are ours.
struct Area {
    start: usize,
    len: usize,
}

static AREA: Mutex<Option<Area>> = Mutex::new(None);
static EXEC_ARGV0: OnceLock<String> = OnceLock::new();

/// The command line's first word as the process started (Redis's `{title}` by default).
pub fn argv0() -> Option<&'static str> {
    EXEC_ARGV0.get().map(String::as_str)
}

/// Take over the command line's memory for [`set`]. Call once, first thing in `main`, before
/// any other thread exists (the environment's strings move).
pub fn enable() {
    #[cfg(target_os = "linux")]
    linux::enable();
}

/// Show `title` as the process's command line (cut to the room there is); nothing when
/// [`enable`] was not called.
pub fn set(title: &str) {
    let area = AREA.lock().unwrap_or_else(|e| e.into_inner());
    let Some(a) = area.as_ref() else {
        return;
    };
    let n = title.len().min(a.len.saturating_sub(1));
    // SAFETY: [start, start + len) is this process's command line and environment strings
    // (from /proc/self/stat), which nothing reads as Rust data: the environment was copied
    // away in `enable`, and the lock keeps two writers apart.
    unsafe {
        let p = a.start as *mut u8;
        std::ptr::copy_nonoverlapping(title.as_ptr(), p, n);
        std::ptr::write_bytes(p.add(n), 0, a.len - n);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::{Area, AREA, EXEC_ARGV0};

    extern "C" {
        static mut environ: *mut *mut libc::c_char;
    }

    /// arg_start, arg_end, env_start, env_end: fields 48 to 51 of /proc/self/stat.
    fn bounds() -> Option<[usize; 4]> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // After the command name, which may hold spaces: field 3 onwards.
        let rest = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let mut out = [0usize; 4];
        for (i, o) in out.iter_mut().enumerate() {
            *o = fields.get(45 + i)?.parse().ok()?;
        }
        (out[0] != 0 && out[1] > out[0]).then_some(out)
    }

    pub(super) fn enable() {
        let mut area = AREA.lock().unwrap_or_else(|e| e.into_inner());
        if area.is_some() {
            return;
        }
        let Some([arg_start, arg_end, env_start, env_end]) = bounds() else {
            return;
        };
        if let Ok(cmdline) = std::fs::read("/proc/self/cmdline") {
            let first = cmdline.split(|&b| b == 0).next().unwrap_or_default();
            let _ = EXEC_ARGV0.set(String::from_utf8_lossy(first).into_owned());
        }
        let mut end = arg_end;
        // The environment's strings right after the command line are room too, once every
        // variable that points into them points to a copy.
        if env_start == arg_end && env_end > env_start {
            // SAFETY: the process is single-threaded here (the caller's contract), so no one
            // reads `environ` while its pointers are swapped for copies of the same strings.
            unsafe {
                let mut p = environ;
                let mut moved = true;
                while !p.is_null() && !(*p).is_null() {
                    let s = *p as usize;
                    if s >= env_start && s < env_end {
                        let copy = libc::strdup(*p);
                        if copy.is_null() {
                            moved = false;
                            break;
                        }
                        *p = copy;
                    }
                    p = p.add(1);
                }
                if moved {
                    end = env_end;
                }
            }
        }
        *area = Some(Area {
            start: arg_start,
            len: end - arg_start,
        });
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn without_enable_setting_the_title_changes_nothing() {
        let before = std::fs::read("/proc/self/cmdline").unwrap_or_default();
        super::set("something else");
        assert_eq!(
            std::fs::read("/proc/self/cmdline").unwrap_or_default(),
            before
        );
        assert_eq!(super::argv0(), None);
    }
}
