//! Background jobs' files written by a child process, as redis-server's fork child writes
//! them: BGSAVE's and BGREWRITEAOF's temp file is named after the child's pid
//! (`temp-<pid>.rdb`, `temp-rewriteaof-bg-<pid>.aof`), the job is a child process that tools
//! see (`pgrep -P`) and that a signal ends, and the job's end is its exit status.
//!
//! resplock does not fork: a fork of a multi-threaded process keeps only the forking thread,
//! and any lock another thread held at that moment stays held in the child forever. The
//! dataset is serialized by the job's thread from the keyspace's snapshot
//! (`crate::rdb::snapshot`), and the bytes go through a pipe to a child that is this same
//! binary started in writer mode ([`child_main`]): it creates the temp file, writes it, syncs
//! it and, for an RDB, renames it over `dbfilename`, with redis-server's error lines. A
//! process that embeds resplock is not resplock's binary: its jobs write their file from the
//! thread ([`available`] is false).
//!
//! The pipe carries frames (a 4-byte little-endian length, then the bytes); an empty frame
//! says the file is complete. A child whose input ends without it (the server gave up or
//! died) removes its temp file and exits: no half-written file is ever renamed into place.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The first argument that starts the binary as a writer child.
const ARG: &str = "--background-writer";
/// Bytes gathered before a frame goes down the pipe.
const FRAME: usize = 64 * 1024;
/// How often a job's thread looks whether its child was killed.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(10);

static AVAILABLE: AtomicBool = AtomicBool::new(false);

/// Jobs may start writer children: this process is resplock's binary (its `main` says so).
pub fn enable() {
    AVAILABLE.store(true, Ordering::Relaxed);
}

/// Whether jobs write through a child.
pub fn available() -> bool {
    AVAILABLE.load(Ordering::Relaxed)
}

/// What a child writes, which decides its temp file's name, what it does once the file is
/// complete, and its error lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// BGSAVE's RDB: renamed over its destination by the child (rdbSave).
    Rdb,
    /// BGREWRITEAOF's base file: left for the server to rename (rewriteAppendOnlyFile).
    AofBase,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Rdb => "rdb",
            Kind::AofBase => "aof",
        }
    }

    /// The temp file a child with this pid writes.
    pub fn temp_name(self, pid: u32) -> String {
        match self {
            Kind::Rdb => format!("temp-{pid}.rdb"),
            Kind::AofBase => format!("temp-rewriteaof-bg-{pid}.aof"),
        }
    }
}

/// How a child ended, when not with its file complete.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// It failed and said why (the line redis-server logs).
    Error(String),
    /// A signal ended it (`kill`, or the server cancelling the job).
    Signal(i32),
}

/// A running child: what the job's thread writes into.
pub struct Writer {
    child: Child,
    stdin: Option<ChildStdin>,
    buf: Vec<u8>,
    /// The child's pid.
    pub pid: u32,
    /// Its temp file.
    pub temp: PathBuf,
    /// How long starting it took, in microseconds (INFO's latest_fork_usec).
    pub start_us: u64,
    /// When the job's thread last looked whether the child still runs.
    checked: Instant,
}

/// Start a child writing a `kind` file in `dir` (renamed to `dest` for an RDB). Returns once
/// the child has created its temp file, or with the line redis-server logs when it could
/// not.
pub fn spawn(kind: Kind, dir: &Path, dest: &Path) -> Result<Writer, String> {
    let started = Instant::now();
    // /proc/self/exe runs this very binary even if its file was replaced or removed since
    // the server started (an upgrade, a rebuild); the child's name says what it does, as
    // Redis's child process titles do.
    let proc_exe = Path::new("/proc/self/exe");
    let exe = if proc_exe.exists() {
        proc_exe.to_path_buf()
    } else {
        std::env::current_exe().map_err(|e| crate::config::strerror(&e))?
    };
    let mut child = Command::new(exe);
    child.arg0(match kind {
        Kind::Rdb => "resplock-rdb-bgsave",
        Kind::AofBase => "resplock-aof-rewrite",
    });
    let mut child = child
        .arg(ARG)
        .arg(kind.name())
        .arg(dir)
        .arg(dest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| crate::config::strerror(&e))?;
    let pid = child.id();
    // The child says "ok" once its file exists, or fails and says why.
    let mut line = String::new();
    let ready = child
        .stdout
        .take()
        .map(|o| BufReader::new(o).read_line(&mut line));
    if !matches!(ready, Some(Ok(_))) || line.trim_end() != "ok" {
        let mut why = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut why);
        }
        let _ = child.kill();
        let _ = child.wait();
        return Err(why.trim_end().to_string());
    }
    Ok(Writer {
        start_us: started.elapsed().as_micros() as u64,
        stdin: child.stdin.take(),
        child,
        buf: Vec::with_capacity(FRAME),
        checked: Instant::now(),
        pid,
        temp: dir.join(kind.temp_name(pid)),
    })
}

impl Writer {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let stdin = self.stdin.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
        stdin.write_all(&(self.buf.len() as u32).to_le_bytes())?;
        stdin.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Send the end of the file and wait for the child to sync (and rename) it.
    pub fn finish(mut self) -> Result<(), Failure> {
        let sent = self.send().and_then(|_| {
            let stdin = self.stdin.as_mut().ok_or(io::ErrorKind::BrokenPipe)?;
            stdin.write_all(&0u32.to_le_bytes())?;
            stdin.flush()
        });
        self.stdin = None;
        let ended = self.end();
        match (sent, ended) {
            (_, Err(f)) => Err(f),
            // It exited well without the whole file: cannot be, but never call it saved.
            (Err(e), Ok(())) => Err(Failure::Error(crate::config::strerror(&e))),
            (Ok(()), Ok(())) => Ok(()),
        }
    }

    /// Wait for the child; its failure with what it said.
    fn end(&mut self) -> Result<(), Failure> {
        let mut why = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut why);
        }
        let status = self
            .child
            .wait()
            .map_err(|e| Failure::Error(crate::config::strerror(&e)))?;
        if let Some(sig) = status.signal() {
            return Err(Failure::Signal(sig));
        }
        if status.success() {
            Ok(())
        } else {
            Err(Failure::Error(why.trim_end().to_string()))
        }
    }

    /// The job gave up (its snapshot failed or it was cancelled): stop the child, which
    /// leaves no file, and say how it ended.
    pub fn abandon(mut self) -> Failure {
        self.stdin = None;
        match self.end() {
            Err(f) => f,
            Ok(()) => Failure::Error("the writer child exited early".into()),
        }
    }
}

impl Write for Writer {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        // A child killed from outside ends the job soon, not when the next frame goes out
        // (a slow save may take long to fill one).
        if self.checked.elapsed() >= CHECK_EVERY {
            self.checked = Instant::now();
            if !matches!(self.child.try_wait(), Ok(None)) {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
        }
        if self.buf.len() + data.len() > FRAME {
            self.send()?;
        }
        if data.len() >= FRAME {
            self.buf.extend_from_slice(data);
            self.send()?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Not finished: closing its input makes the child remove its file and exit; wait
        // for it so that no zombie stays behind.
        self.stdin = None;
        let _ = self.child.wait();
    }
}

/// Send `signal` to a job's child (killRDBChild sends SIGUSR1: an end that is not an error).
pub fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) with a pid this process started and has not reaped yet (the job's
    // Writer reaps it), so the pid names that child.
    unsafe {
        libc::kill(pid as libc::pid_t, signal);
    }
}

/// The writer child's `main`: `Some(exit code)` when `argv` starts it (`argv[1]` is the
/// writer argument), `None` for any other command line.
pub fn child_main(argv: &[String]) -> Option<i32> {
    if argv.get(1).map(String::as_str) != Some(ARG) || argv.len() != 5 {
        return None;
    }
    let kind = match argv[2].as_str() {
        "rdb" => Kind::Rdb,
        "aof" => Kind::AofBase,
        _ => return Some(1),
    };
    let (dir, dest) = (Path::new(&argv[3]), Path::new(&argv[4]));
    let mut err = io::stderr().lock();
    match write_child(kind, dir, dest) {
        Ok(()) => Some(0),
        Err(Some(msg)) => {
            let _ = writeln!(err, "{msg}");
            Some(1)
        }
        // The server gave up: nothing to say.
        Err(None) => Some(2),
    }
}

fn cwd() -> String {
    std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Receive the file and put it in place. Err(None): the input ended before the file did.
fn write_child(kind: Kind, dir: &Path, dest: &Path) -> Result<(), Option<String>> {
    let pid = std::process::id();
    let name = kind.temp_name(pid);
    let temp = dir.join(&name);
    let f = std::fs::File::create(&temp).map_err(|e| {
        Some(match kind {
            Kind::Rdb => format!(
                "Failed opening the temp RDB file {name} (in server root dir {}) for saving: {}",
                cwd(),
                crate::config::strerror(&e)
            ),
            Kind::AofBase => format!(
                "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): {}",
                crate::config::strerror(&e)
            ),
        })
    })?;
    let werr = |op: &str, e: io::Error| {
        let _ = std::fs::remove_file(&temp);
        Some(match kind {
            Kind::Rdb => format!(
                "Write error saving DB on disk({op}): {}",
                crate::config::strerror(&e)
            ),
            Kind::AofBase => format!(
                "Write error writing append only file on disk: {}",
                crate::config::strerror(&e)
            ),
        })
    };
    {
        let mut out = io::stdout().lock();
        let _ = out.write_all(b"ok\n").and_then(|_| out.flush());
    }
    let mut input = io::stdin().lock();
    let mut w = io::BufWriter::with_capacity(FRAME, f);
    let mut len = [0u8; 4];
    let mut chunk = Vec::new();
    loop {
        if input.read_exact(&mut len).is_err() {
            let _ = std::fs::remove_file(&temp);
            return Err(None);
        }
        let n = u32::from_le_bytes(len) as usize;
        if n == 0 {
            break;
        }
        chunk.resize(n, 0);
        if input.read_exact(&mut chunk).is_err() {
            let _ = std::fs::remove_file(&temp);
            return Err(None);
        }
        w.write_all(&chunk).map_err(|e| werr("rdbSaveRio", e))?;
    }
    let f = w.into_inner().map_err(|e| werr("fflush", e.into_error()))?;
    f.sync_all().map_err(|e| werr("fsync", e))?;
    drop(f);
    if kind == Kind::AofBase {
        return Ok(());
    }
    if let Err(e) = std::fs::rename(&temp, dest) {
        let _ = std::fs::remove_file(&temp);
        return Err(Some(format!(
            "Error moving temp DB file {name} on the final destination {} (in server root dir {}): {}",
            dest.strip_prefix(dir).unwrap_or(dest).display(),
            cwd(),
            crate::config::strerror(&e)
        )));
    }
    let d = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::File::open(d)
        .and_then(|d| d.sync_all())
        .map_err(|e| werr("fsyncFileDir", e))
}
