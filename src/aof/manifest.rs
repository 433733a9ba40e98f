//! Redis 7.0's AOF manifest: the list of files that make up the append-only log, kept in
//! `<appenddirname>/<appendfilename>.manifest`, one line per file:
//!
//! ```text
//! file appendonly.aof.2.base.rdb seq 2 type b
//! file appendonly.aof.1.incr.aof seq 1 type h
//! file appendonly.aof.3.incr.aof seq 3 type i
//! ```
//!
//! The base (`b`, at most one: a snapshot as RDB or as commands) comes first, then history
//! files (`h`, left over from a rewrite, deleted in the background), then the incremental
//! files (`i`, commands since the base, in increasing sequence). Parsed and written as
//! aof.c does, with its fatal errors.

use crate::config::{repr, split_args};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// What an entry of the manifest is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    /// The snapshot the log starts from.
    Base,
    /// A file superseded by a rewrite, waiting to be deleted.
    History,
    /// Commands after the base.
    Incr,
}

impl FileType {
    fn letter(self) -> char {
        match self {
            FileType::Base => 'b',
            FileType::History => 'h',
            FileType::Incr => 'i',
        }
    }
}

/// One file of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AofFile {
    /// Its name inside the AOF directory.
    pub name: String,
    /// Its sequence number.
    pub seq: i64,
    /// Its role.
    pub kind: FileType,
}

/// The manifest (aofManifest).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The base file, if any.
    pub base: Option<AofFile>,
    /// Incremental files, in sequence order.
    pub incr: Vec<AofFile>,
    /// History files, to delete.
    pub history: Vec<AofFile>,
    /// The last base sequence number used.
    pub base_seq: i64,
    /// The last incremental sequence number used.
    pub incr_seq: i64,
}

/// A manifest that cannot be used; redis-server logs these lines and exits.
#[derive(Debug, PartialEq, Eq)]
pub struct ManifestError {
    /// The line number and its text, when the error is about a line.
    pub line: Option<(usize, String)>,
    /// What is wrong.
    pub reason: &'static str,
}

impl ManifestError {
    /// The warning lines redis-server logs (aofLoadManifestFromFile's `loaderr`).
    pub fn log_lines(&self) -> Vec<String> {
        let mut out = vec!["\n*** FATAL AOF MANIFEST FILE ERROR ***\n".to_string()];
        if let Some((n, text)) = &self.line {
            out.push(format!("Reading the manifest file, at line {n}\n"));
            out.push(format!(">>> '{text}'\n"));
        }
        out.push(format!("{}\n", self.reason));
        out
    }
}

/// The longest manifest line redis-server reads (MANIFEST_MAX_LINE).
const MAX_LINE: usize = 1024;

/// C's atoll: optional spaces and sign, then digits.
fn atoll(s: &[u8]) -> i64 {
    let s = std::str::from_utf8(s).unwrap_or("").trim_start();
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v = digits.parse::<i64>().unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// sds.c's sdsneedsrepr: whether a file name must be quoted in the manifest.
fn needs_repr(s: &str) -> bool {
    s.bytes().any(|c| {
        matches!(c, b'\\' | b'"' | b'\n' | b'\r' | b'\t' | 0x07 | 0x08)
            || !(0x20..=0x7e).contains(&c)
            || c == b' '
    })
}

impl Manifest {
    /// Parse a manifest's text (aofLoadManifestFromFile).
    pub fn parse(text: &[u8]) -> Result<Manifest, ManifestError> {
        let mut am = Manifest::default();
        let mut maxseq = 0i64;
        let err = |line: Option<(usize, String)>, reason| Err(ManifestError { line, reason });
        if text.is_empty() {
            return err(None, "Found an empty AOF manifest");
        }
        let mut rest = text;
        let mut linenum = 0usize;
        while !rest.is_empty() {
            // fgets: up to the newline, or MAX_LINE bytes.
            let cut = rest
                .iter()
                .take(MAX_LINE)
                .position(|&b| b == b'\n')
                .map(|p| p + 1)
                .unwrap_or(rest.len().min(MAX_LINE));
            let (raw, tail) = rest.split_at(cut);
            rest = tail;
            linenum += 1;
            if raw.first() == Some(&b'#') {
                continue;
            }
            if !raw.contains(&b'\n') {
                return err(None, "The AOF manifest file contains too long line");
            }
            let trimmed: &[u8] = {
                let is_trim = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
                let start = raw.iter().position(|b| !is_trim(b)).unwrap_or(raw.len());
                let end = raw
                    .iter()
                    .rposition(|b| !is_trim(b))
                    .map_or(start, |e| e + 1);
                &raw[start..end.max(start)]
            };
            let line = String::from_utf8_lossy(trimmed).into_owned();
            let here = Some((linenum, line.clone()));
            if trimmed.is_empty() {
                return err(here, "Invalid AOF manifest file format");
            }
            let argv = match split_args(trimmed) {
                Some(a) if a.len() >= 6 && a.len() % 2 == 0 => a,
                _ => return err(here, "Invalid AOF manifest file format"),
            };
            let (mut name, mut seq, mut kind) = (None, 0i64, 0u8);
            for pair in argv.chunks_exact(2) {
                let k = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
                match k.as_str() {
                    "file" => {
                        let n = String::from_utf8_lossy(&pair[1]).into_owned();
                        if n.contains('/') {
                            return err(here, "File can't be a path, just a filename");
                        }
                        name = Some(n);
                    }
                    "seq" => seq = atoll(&pair[1]),
                    "type" => kind = pair[1].first().copied().unwrap_or(0),
                    _ => {}
                }
            }
            let (Some(name), true, true) = (name, seq != 0, kind != 0) else {
                return err(here, "Invalid AOF manifest file format");
            };
            match kind {
                b'b' => {
                    if am.base.is_some() {
                        return err(here, "Found duplicate base file information");
                    }
                    am.base = Some(AofFile {
                        name,
                        seq,
                        kind: FileType::Base,
                    });
                    am.base_seq = seq;
                }
                b'h' => am.history.push(AofFile {
                    name,
                    seq,
                    kind: FileType::History,
                }),
                b'i' => {
                    if seq <= maxseq {
                        return err(here, "Found a non-monotonic sequence number");
                    }
                    am.incr.push(AofFile {
                        name,
                        seq,
                        kind: FileType::Incr,
                    });
                    am.incr_seq = seq;
                    maxseq = seq;
                }
                _ => return err(here, "Unknown AOF file type"),
            }
        }
        Ok(am)
    }

    /// The manifest's text (getAofManifestAsString): base, history, incremental files.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for f in self
            .base
            .iter()
            .chain(self.history.iter())
            .chain(self.incr.iter())
        {
            let name = if needs_repr(&f.name) {
                repr(f.name.as_bytes())
            } else {
                f.name.clone()
            };
            let _ = writeln!(out, "file {name} seq {} type {}", f.seq, f.kind.letter());
        }
        out
    }

    /// A new base file's name for `appendfilename`, the old base becoming history
    /// (getNewBaseFileNameAndMarkPreAsHistory): `<name>.<seq>.base.rdb` (or `.aof` without
    /// the RDB preamble).
    pub fn new_base(&mut self, appendfilename: &str, rdb: bool) -> String {
        if let Some(mut old) = self.base.take() {
            old.kind = FileType::History;
            self.history.insert(0, old);
        }
        self.base_seq += 1;
        let name = format!(
            "{appendfilename}.{}.base.{}",
            self.base_seq,
            if rdb { "rdb" } else { "aof" }
        );
        self.base = Some(AofFile {
            name: name.clone(),
            seq: self.base_seq,
            kind: FileType::Base,
        });
        name
    }

    /// A new incremental file's name, appended to the list (getNewIncrAofName):
    /// `<name>.<seq>.incr.aof`.
    pub fn new_incr(&mut self, appendfilename: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{appendfilename}.{}.incr.aof", self.incr_seq);
        self.incr.push(AofFile {
            name: name.clone(),
            seq: self.incr_seq,
            kind: FileType::Incr,
        });
        name
    }

    /// The incremental file to append to (the last one), creating one if there is none
    /// (getLastIncrAofName).
    pub fn last_incr(&mut self, appendfilename: &str) -> String {
        match self.incr.last() {
            Some(f) => f.name.clone(),
            None => self.new_incr(appendfilename),
        }
    }

    /// After a rewrite, every incremental file but the one being written (the last, when
    /// `keep_last`) becomes history (markRewrittenIncrAofAsHistory).
    pub fn mark_rewritten_incr_as_history(&mut self, keep_last: bool) {
        let keep = if keep_last && !self.incr.is_empty() {
            self.incr.pop()
        } else {
            None
        };
        for mut f in self.incr.drain(..).rev() {
            f.kind = FileType::History;
            self.history.insert(0, f);
        }
        self.incr.extend(keep);
    }

    /// Every base and incremental file, in load order.
    pub fn load_order(&self) -> impl Iterator<Item = &AofFile> {
        self.base.iter().chain(self.incr.iter())
    }
}

/// Write `text` as the manifest `name` in `dir` atomically (writeAofManifestFile): a temp
/// file, fsync, rename, fsync of the directory.
pub fn write_manifest(dir: &Path, name: &str, text: &str) -> io::Result<()> {
    let tmp = dir.join(format!("temp-{name}"));
    let path = dir.join(name);
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_data()?;
    }
    std::fs::rename(&tmp, &path)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDIS: &str = "file appendonly.aof.2.base.rdb seq 2 type b\n\
                         file appendonly.aof.1.incr.aof seq 1 type h\n\
                         file appendonly.aof.2.incr.aof seq 2 type h\n\
                         file appendonly.aof.3.incr.aof seq 3 type i\n\
                         file appendonly.aof.4.incr.aof seq 4 type i\n";

    #[test]
    fn a_manifest_as_redis_writes_it_parses_and_prints_back_the_same() {
        let m = Manifest::parse(REDIS.as_bytes()).expect("parses");
        assert_eq!(m.base.as_ref().map(|b| b.seq), Some(2));
        assert_eq!(m.history.len(), 2);
        assert_eq!(
            m.incr.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
            ["appendonly.aof.3.incr.aof", "appendonly.aof.4.incr.aof"]
        );
        assert_eq!((m.base_seq, m.incr_seq), (2, 4));
        assert_eq!(m.to_text(), REDIS);
        let loaded: Vec<_> = m.load_order().map(|f| f.seq).collect();
        assert_eq!(loaded, [2, 3, 4]);
    }

    #[test]
    fn a_rewrite_moves_the_old_base_and_incr_files_to_history() {
        let mut m = Manifest::default();
        assert_eq!(
            m.new_base("appendonly.aof", true),
            "appendonly.aof.1.base.rdb"
        );
        assert_eq!(m.last_incr("appendonly.aof"), "appendonly.aof.1.incr.aof");
        // BGREWRITEAOF: a new incr file for the writes from now on, then the new base.
        assert_eq!(m.new_incr("appendonly.aof"), "appendonly.aof.2.incr.aof");
        assert_eq!(
            m.new_base("appendonly.aof", false),
            "appendonly.aof.2.base.aof"
        );
        m.mark_rewritten_incr_as_history(true);
        assert_eq!(
            m.to_text(),
            // As redis-server 7.0.15 writes it after a rewrite: each file moved to history
            // goes to the front of the history list, the old base first.
            "file appendonly.aof.2.base.aof seq 2 type b\n\
             file appendonly.aof.1.incr.aof seq 1 type h\n\
             file appendonly.aof.1.base.rdb seq 1 type h\n\
             file appendonly.aof.2.incr.aof seq 2 type i\n"
        );
        assert_eq!(Manifest::parse(m.to_text().as_bytes()), Ok(m));
    }

    #[test]
    fn names_that_need_quoting_are_quoted_and_read_back() {
        let mut m = Manifest::default();
        m.new_base("my aof", true);
        let text = m.to_text();
        assert_eq!(text, "file \"my aof.1.base.rdb\" seq 1 type b\n");
        assert_eq!(Manifest::parse(text.as_bytes()), Ok(m));
    }

    #[test]
    fn bad_manifests_get_redis_fatal_errors() {
        let reason = |t: &str| Manifest::parse(t.as_bytes()).map_err(|e| e.reason);
        assert_eq!(reason(""), Err("Found an empty AOF manifest"));
        assert_eq!(reason("\n"), Err("Invalid AOF manifest file format"));
        assert_eq!(
            reason("file a seq 1\n"),
            Err("Invalid AOF manifest file format")
        );
        assert_eq!(
            reason("file a seq 1 type i\nfile b seq 1 type i\n"),
            Err("Found a non-monotonic sequence number")
        );
        assert_eq!(
            reason("file a seq 1 type b\nfile b seq 2 type b\n"),
            Err("Found duplicate base file information")
        );
        assert_eq!(
            reason("file a seq 1 type x\n"),
            Err("Unknown AOF file type")
        );
        assert_eq!(
            reason("file d/a seq 1 type b\n"),
            Err("File can't be a path, just a filename")
        );
        assert_eq!(
            reason("file a seq 0 type b\n"),
            Err("Invalid AOF manifest file format")
        );
        assert_eq!(
            reason(&format!("file {} seq 1 type b\n", "x".repeat(2000))),
            Err("The AOF manifest file contains too long line")
        );
        assert_eq!(
            reason("# a comment\nfile a seq 1 type b\n").map(|_| ()),
            Ok(())
        );
        let e = Manifest::parse(b"file a seq 1 type x\n").unwrap_err();
        assert_eq!(
            e.log_lines(),
            [
                "\n*** FATAL AOF MANIFEST FILE ERROR ***\n",
                "Reading the manifest file, at line 1\n",
                ">>> 'file a seq 1 type x'\n",
                "Unknown AOF file type\n"
            ]
        );
    }
}
