//! Loading the append-only log at start, as redis-server 7.0 does (loadAppendOnlyFiles and
//! loadSingleAppendOnlyFile): the manifest's base file (an RDB, or commands) then each
//! incremental file, each command handed to the caller to run; annotations skipped; an
//! unfinished MULTI at the end rolled back; a truncated last file cut back to its last whole
//! command when `aof-load-truncated` allows it. Every outcome logs redis-server's lines.

use super::manifest::Manifest;
use crate::log;
use crate::rdb::file::{self, Event, LoadOptions};
use crate::rdb::{Decoder, LoadError, StreamSource};
use bytes::Bytes;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::Instant;

/// What loading found (aof.c's AOF_* results).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything loaded.
    Ok,
    /// No AOF at all.
    NotExist,
    /// The files exist and are all empty.
    Empty,
    /// The last file was cut at its last whole command (aof-load-truncated).
    Truncated,
    /// A file could not be opened.
    OpenErr,
    /// Unusable: the server must not start (redis-server exits).
    Failed,
}

/// Why a command from the log was not run.
#[derive(Debug)]
pub enum CommandError {
    /// No such command ("Unknown command '%s' reading the append only file %s").
    Unknown,
    /// Anything else that makes the log unusable, with the line to log.
    Fatal(String),
}

/// Where loaded data goes.
pub trait Target {
    /// A key, function library or aux field from an RDB base.
    fn rdb_event(&mut self, ev: Event) -> Result<(), LoadError>;
    /// One command of the log, to run as a client with no connection would (MULTI and EXEC
    /// included: the target keeps the transaction state, as Redis's fake client does).
    fn command(&mut self, args: Vec<Bytes>) -> Result<(), CommandError>;
    /// Called after each file (and regularly while a long file loads) with the bytes read
    /// so far in this file, for INFO's loading progress.
    fn progress(&mut self, _bytes: u64) {}
}

/// Settings of a load.
#[derive(Clone, Debug)]
pub struct Options {
    /// aof-load-truncated.
    pub load_truncated: bool,
    /// How an RDB base is read (not dropping expired keys: the log after it expects them).
    pub rdb: LoadOptions,
}

/// AOF_ANNOTATION_LINE_MAX_LEN: the longest line fgets reads at once.
const LINE_MAX: usize = 1024;

/// fgets: bytes up to and including a newline, at most LINE_MAX - 1 of them; None at EOF
/// with nothing read.
fn fgets<R: BufRead>(r: &mut R, out: &mut Vec<u8>) -> std::io::Result<Option<()>> {
    out.clear();
    while out.len() < LINE_MAX - 1 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let room = LINE_MAX - 1 - out.len();
        let take = buf.len().min(room);
        match buf[..take].iter().position(|&b| b == b'\n') {
            Some(p) => {
                out.extend_from_slice(&buf[..=p]);
                r.consume(p + 1);
                return Ok(Some(()));
            }
            None => {
                out.extend_from_slice(&buf[..take]);
                r.consume(take);
            }
        }
    }
    Ok((!out.is_empty()).then_some(()))
}

/// C's atoi/strtol over the start of `b`: optional spaces and sign, then digits.
fn c_atol(b: &[u8]) -> i64 {
    let s = std::str::from_utf8(b).unwrap_or("");
    let s = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for c in rest.bytes().take_while(u8::is_ascii_digit) {
        v = v.saturating_mul(10).saturating_add((c - b'0') as i64);
    }
    if neg {
        -v
    } else {
        v
    }
}

/// How reading one file's commands ended.
enum Ended {
    /// At the end, after a whole command.
    Eof,
    /// Cut short (or an unfinished MULTI): the offset of the last whole command.
    Short(u64),
    /// Not the log's format.
    Format,
    /// The OS refused a read.
    Io(std::io::Error),
    /// The target refused a command (already logged).
    Refused,
}

/// Read and run the commands from the reader's position (`start` bytes into the file).
fn run_commands<R: BufRead>(r: &mut R, start: u64, name: &str, target: &mut dyn Target) -> Ended {
    let mut pos = start;
    let mut valid_up_to = start;
    let mut valid_before_multi = start;
    let mut in_multi = false;
    let mut line = Vec::with_capacity(LINE_MAX);
    let mut loops = 0u64;
    loop {
        loops += 1;
        if loops.is_multiple_of(1024) {
            target.progress(pos);
        }
        match fgets(r, &mut line) {
            Err(e) => return Ended::Io(e),
            Ok(None) => break,
            Ok(Some(())) => {}
        }
        pos += line.len() as u64;
        if line[0] == b'#' {
            continue;
        }
        if line[0] != b'*' {
            return Ended::Format;
        }
        if line.len() == 1 {
            return Ended::Short(valid_up_to);
        }
        let argc = c_atol(&line[1..]);
        if argc < 1 {
            return Ended::Format;
        }
        let mut args = Vec::with_capacity((argc as usize).min(1024));
        for _ in 0..argc {
            match fgets(r, &mut line) {
                Err(e) => return Ended::Io(e),
                Ok(None) => return Ended::Short(valid_up_to),
                Ok(Some(())) => {}
            }
            pos += line.len() as u64;
            if line[0] != b'$' {
                return Ended::Format;
            }
            let len = c_atol(&line[1..]).max(0) as u64;
            // Read the argument as its bytes arrive (a corrupt length hits the end, not the
            // allocator), then the CRLF, which Redis does not check.
            let mut arg = Vec::with_capacity(len.min(1 << 20) as usize);
            match r.by_ref().take(len).read_to_end(&mut arg) {
                Err(e) => return Ended::Io(e),
                Ok(n) if (n as u64) < len => return Ended::Short(valid_up_to),
                Ok(_) => {}
            }
            let mut crlf = [0u8; 2];
            if let Err(e) = r.read_exact(&mut crlf) {
                return if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Ended::Short(valid_up_to)
                } else {
                    Ended::Io(e)
                };
            }
            pos += len + 2;
            args.push(Bytes::from(arg));
        }
        let cmd_name = args[0].to_ascii_lowercase();
        let is_multi = cmd_name == b"multi";
        if is_multi {
            valid_before_multi = valid_up_to;
        }
        let first = String::from_utf8_lossy(&args[0]).into_owned();
        match target.command(args) {
            Ok(()) => {}
            Err(CommandError::Unknown) => {
                log::warning(&format!(
                    "Unknown command '{first}' reading the append only file {name}"
                ));
                return Ended::Refused;
            }
            Err(CommandError::Fatal(msg)) => {
                log::warning(&msg);
                return Ended::Refused;
            }
        }
        if is_multi {
            in_multi = true;
        } else if cmd_name == b"exec" || cmd_name == b"discard" {
            in_multi = false;
        }
        valid_up_to = pos;
    }
    if in_multi {
        log::warning(&format!(
            "Revert incomplete MULTI/EXEC transaction in AOF file {name}"
        ));
        return Ended::Short(valid_before_multi);
    }
    target.progress(pos);
    Ended::Eof
}

/// loadSingleAppendOnlyFile: one file of the log (an RDB base or preamble, then commands).
pub fn load_file(
    dir: &Path,
    name: &str,
    old_style: bool,
    opts: &Options,
    target: &mut dyn Target,
) -> Status {
    let path = dir.join(name);
    let f = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            log::warning(&format!(
                "The append log file {name} doesn't exist: {}",
                crate::config::strerror(&e)
            ));
            return Status::NotExist;
        }
        Err(e) => {
            log::warning(&format!(
                "Fatal error: can't open the append log file {name} for reading: {}",
                crate::config::strerror(&e)
            ));
            return Status::OpenErr;
        }
    };
    if f.metadata().map(|m| m.len() == 0).unwrap_or(false) {
        return Status::Empty;
    }
    let mut r = BufReader::with_capacity(1 << 16, f);
    let is_rdb = r
        .fill_buf()
        .map(|b| b.starts_with(b"REDIS"))
        .unwrap_or(false);
    let mut start = 0;
    let ended = if is_rdb {
        log::notice(if old_style {
            "Reading RDB preamble from AOF file..."
        } else {
            "Reading RDB base file on AOF loading..."
        });
        let mut d = Decoder::from_source(StreamSource::new(r));
        let loaded = file::read_header(&mut d, true)
            .and_then(|v| file::load_body(&mut d, v, &opts.rdb, &mut |ev| target.rdb_event(ev)));
        if let Err(e) = loaded {
            for line in e.log_lines(d.consumed()) {
                log::warning(&line);
            }
            log::warning(&if old_style {
                format!(
                    "Error reading the RDB preamble of the AOF file {name}, AOF loading aborted"
                )
            } else {
                format!("Error reading the RDB base file {name}, AOF loading aborted")
            });
            return Status::Failed;
        }
        start = d.consumed();
        if old_style {
            log::notice("Reading the remaining AOF tail...");
        }
        let mut r = d.into_source().into_inner();
        run_commands(&mut r, start, name, target)
    } else {
        run_commands(&mut r, start, name, target)
    };
    match ended {
        Ended::Eof => Status::Ok,
        Ended::Refused => Status::Failed,
        Ended::Io(e) => {
            log::warning(&format!(
                "Unrecoverable error reading the append only file {name}: {}",
                crate::config::strerror(&e)
            ));
            Status::Failed
        }
        Ended::Format => {
            log::warning(&format!(
                "Bad file format reading the append only file {name}: make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
            ));
            Status::Failed
        }
        Ended::Short(valid_up_to) => {
            if opts.load_truncated {
                log::warning(&format!(
                    "!!! Warning: short read while loading the AOF file {name}!!!"
                ));
                log::warning(&format!(
                    "!!! Truncating the AOF {name} at offset {valid_up_to} !!!"
                ));
                let cut = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_len(valid_up_to));
                match cut {
                    Ok(()) => {
                        log::warning(&format!(
                            "AOF {name} loaded anyway because aof-load-truncated is enabled"
                        ));
                        return Status::Truncated;
                    }
                    Err(e) => log::warning(&format!(
                        "Error truncating the AOF file {name}: {}",
                        crate::config::strerror(&e)
                    )),
                }
            }
            log::warning(&format!(
                "Unexpected end of file reading the append only file {name}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
            ));
            Status::Failed
        }
    }
}

/// loadAppendOnlyFiles: every file of `manifest` in `dir`, in order, with the per-file
/// notices. The caller turns Failed and OpenErr into an exit, as redis-server does.
pub fn load_all(
    dir: &Path,
    manifest: &Manifest,
    opts: &Options,
    target: &mut dyn Target,
) -> Status {
    let files: Vec<_> = manifest.load_order().collect();
    if files.is_empty() {
        return Status::NotExist;
    }
    let mut total = 0u64;
    for f in &files {
        match std::fs::metadata(dir.join(&f.name)) {
            Ok(m) => total += m.len(),
            Err(e) => {
                log::warning(&format!(
                    "Unable to obtain the AOF file {} length. stat: {}",
                    f.name,
                    crate::config::strerror(&e)
                ));
                return if e.kind() == std::io::ErrorKind::NotFound {
                    Status::Failed
                } else {
                    Status::OpenErr
                };
            }
        }
    }
    if total == 0 {
        return Status::Empty;
    }
    let mut result = Status::Ok;
    for (i, f) in files.iter().enumerate() {
        let last = i + 1 == files.len();
        let started = Instant::now();
        let mut st = load_file(dir, &f.name, false, opts, target);
        let kind = if manifest.base.as_ref() == Some(*f) {
            "base"
        } else {
            "incr"
        };
        if st == Status::Ok || (st == Status::Truncated && last) {
            log::notice(&format!(
                "DB loaded from {kind} file {}: {:.3} seconds",
                f.name,
                started.elapsed().as_secs_f64()
            ));
        }
        if kind == "incr" && st == Status::Empty {
            st = Status::Ok;
        }
        if st == Status::Truncated && !last {
            log::warning("Fatal error: the truncated file is not the last file");
            return Status::Failed;
        }
        if matches!(st, Status::OpenErr | Status::Failed) {
            return st;
        }
        result = st;
    }
    if result == Status::Empty {
        Status::Ok
    } else {
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aof::encode::command;

    /// Collects what a load runs.
    #[derive(Default)]
    struct Collect {
        keys: Vec<Vec<u8>>,
        commands: Vec<Vec<Vec<u8>>>,
    }

    impl Target for Collect {
        fn rdb_event(&mut self, ev: Event) -> Result<(), LoadError> {
            if let Event::Key { key, .. } = ev {
                self.keys.push(key);
            }
            Ok(())
        }
        fn command(&mut self, args: Vec<Bytes>) -> Result<(), CommandError> {
            if args[0].eq_ignore_ascii_case(b"nosuchcmd") {
                return Err(CommandError::Unknown);
            }
            self.commands
                .push(args.into_iter().map(|a| a.to_vec()).collect());
            Ok(())
        }
    }

    fn opts(truncated: bool) -> Options {
        Options {
            load_truncated: truncated,
            rdb: LoadOptions {
                drop_expired: false,
                ..Default::default()
            },
        }
    }

    fn dir() -> tempdir::Dir {
        tempdir::Dir::new()
    }

    mod tempdir {
        /// A directory removed when dropped.
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                let p = std::env::temp_dir().join(format!(
                    "resplock-aof-test-{}-{}",
                    std::process::id(),
                    fastrand::u64(..)
                ));
                std::fs::create_dir_all(&p).expect("temp dir");
                Dir(p)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn log_of(cmds: &[&[&str]]) -> Vec<u8> {
        let mut out = Vec::new();
        for c in cmds {
            let args: Vec<&[u8]> = c.iter().map(|s| s.as_bytes()).collect();
            command(&mut out, &args);
        }
        out
    }

    #[test]
    fn commands_and_annotations_load_in_order() {
        let d = dir();
        let mut data = b"#TS:1700000000\r\n".to_vec();
        data.extend(log_of(&[
            &["SELECT", "0"],
            &["SET", "k", "v"],
            &["DEL", "k"],
        ]));
        std::fs::write(d.0.join("a.aof"), &data).expect("write");
        let mut c = Collect::default();
        assert_eq!(
            load_file(&d.0, "a.aof", false, &opts(true), &mut c),
            Status::Ok
        );
        assert_eq!(c.commands.len(), 3);
        assert_eq!(
            c.commands[1],
            [b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()]
        );
    }

    #[test]
    fn a_cut_tail_is_truncated_back_to_the_last_whole_command_when_allowed() {
        let whole = log_of(&[&["SET", "a", "1"], &["SET", "b", "2"]]);
        for cut in 1..whole.len() {
            let d = dir();
            let p = d.0.join("x.aof");
            std::fs::write(&p, &whole[..cut]).expect("write");
            let first_len = log_of(&[&["SET", "a", "1"]]).len();
            let mut c = Collect::default();
            let st = load_file(&d.0, "x.aof", false, &opts(true), &mut c);
            if cut == first_len {
                assert_eq!(st, Status::Ok);
                continue;
            }
            assert_eq!(st, Status::Truncated, "cut {cut}");
            let kept = std::fs::metadata(&p).expect("file").len() as usize;
            assert_eq!(
                kept,
                if cut > first_len { first_len } else { 0 },
                "cut {cut}"
            );
            std::fs::write(&p, &whole[..cut]).expect("write");
            let mut c = Collect::default();
            assert_eq!(
                load_file(&d.0, "x.aof", false, &opts(false), &mut c),
                Status::Failed
            );
        }
    }

    #[test]
    fn an_unfinished_multi_is_rolled_back_and_garbage_is_a_format_error() {
        let d = dir();
        let p = d.0.join("m.aof");
        let before = log_of(&[&["SET", "a", "1"]]);
        let mut data = before.clone();
        data.extend(log_of(&[&["MULTI"], &["SET", "b", "2"]]));
        std::fs::write(&p, &data).expect("write");
        let mut c = Collect::default();
        assert_eq!(
            load_file(&d.0, "m.aof", false, &opts(true), &mut c),
            Status::Truncated
        );
        assert_eq!(
            std::fs::metadata(&p).expect("file").len() as usize,
            before.len()
        );
        std::fs::write(&p, b"*1\r\n$4\r\nPING\r\nhello\r\n").expect("write");
        assert_eq!(
            load_file(&d.0, "m.aof", false, &opts(true), &mut c),
            Status::Failed
        );
        std::fs::write(&p, log_of(&[&["NOSUCHCMD"]])).expect("write");
        assert_eq!(
            load_file(&d.0, "m.aof", false, &opts(true), &mut c),
            Status::Failed
        );
    }

    #[test]
    fn a_manifest_loads_its_rdb_base_then_its_incr_files_and_only_the_last_may_be_cut() {
        use crate::keyspace::{Entry, Value};
        use crate::rdb::file::{put_key, AccessSave, Aux, FileWriter, KeyFormat};
        let d = dir();
        let mut m = Manifest::default();
        let base = m.new_base("appendonly.aof", true);
        let incr1 = m.new_incr("appendonly.aof");
        let incr2 = m.new_incr("appendonly.aof");
        let aux = Aux {
            aof_base: true,
            ..Default::default()
        };
        let mut w = FileWriter::begin(Vec::new(), &aux, true).expect("vec");
        w.select_db(0, 1, 0).expect("vec");
        let mut rec = Vec::new();
        let f = KeyFormat {
            compress: true,
            access: AccessSave::None,
            now_ms: 0,
        };
        put_key(
            &mut rec,
            b"from-base",
            &Entry::new(Value::Str(Bytes::from_static(b"x"))),
            &f,
        );
        w.write(&rec).expect("vec");
        std::fs::write(d.0.join(&base), w.finish().expect("vec")).expect("write");
        std::fs::write(d.0.join(&incr1), log_of(&[&["SET", "one", "1"]])).expect("write");
        std::fs::write(d.0.join(&incr2), b"").expect("write");
        let mut c = Collect::default();
        assert_eq!(load_all(&d.0, &m, &opts(true), &mut c), Status::Ok);
        assert_eq!(c.keys, [b"from-base".to_vec()]);
        assert_eq!(c.commands.len(), 1);
        // A cut in a file that is not the last is fatal.
        std::fs::write(d.0.join(&incr1), b"*3\r\n$3\r\nSET").expect("write");
        std::fs::write(d.0.join(&incr2), log_of(&[&["SET", "two", "2"]])).expect("write");
        let mut c = Collect::default();
        assert_eq!(load_all(&d.0, &m, &opts(true), &mut c), Status::Failed);
        // A file the manifest names but the directory lacks is fatal too.
        std::fs::remove_file(d.0.join(&incr2)).expect("rm");
        let mut c = Collect::default();
        assert_eq!(load_all(&d.0, &m, &opts(true), &mut c), Status::Failed);
        assert_eq!(
            load_all(&d.0, &Manifest::default(), &opts(true), &mut c),
            Status::NotExist
        );
    }
}
