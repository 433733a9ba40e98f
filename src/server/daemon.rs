//! Daemon mode and the pid file, as redis-server's `daemonize()` and `createPidFile()`.

use std::path::{Path, PathBuf};

/// Redis's default pid file, used when `daemonize yes` names none.
pub const DEFAULT_PIDFILE: &str = "/var/run/redis.pid";

/// Detach as Redis does: fork (the parent exits 0 at once), start a new session, and point
/// standard input, output and error at /dev/null. Must run before any thread is started:
/// only the calling thread survives a fork.
pub fn daemonize() {
    // SAFETY: called from the binary's main thread before the runtime (or any other thread)
    // exists, so the child is a complete copy of a single-threaded process.
    unsafe {
        match libc::fork() {
            -1 => {
                // Redis ignores a failed fork too and runs in the foreground.
                return;
            }
            0 => {}
            _ => libc::_exit(0),
        }
        libc::setsid();
        let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0);
        if fd != -1 {
            libc::dup2(fd, libc::STDIN_FILENO);
            libc::dup2(fd, libc::STDOUT_FILENO);
            libc::dup2(fd, libc::STDERR_FILENO);
            if fd > libc::STDERR_FILENO {
                libc::close(fd);
            }
        }
    }
}

/// Write this process's pid and a newline to `path`, best effort, as Redis (a pid file that
/// cannot be written is not an error).
pub fn write_pidfile(path: &Path) {
    let _ = std::fs::write(path, format!("{}\n", std::process::id()));
}

/// The pid file to write: the configured one, or Redis's default in daemon mode; None when
/// neither applies.
pub fn pidfile_for(pidfile: Option<&str>, daemonize: bool) -> Option<PathBuf> {
    match pidfile.filter(|p| !p.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None if daemonize => Some(PathBuf::from(DEFAULT_PIDFILE)),
        None => None,
    }
}
