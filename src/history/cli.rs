//! `resplock check`: the checker from the command line.

use super::check::CheckOptions;
use super::event::History;
use super::html;
use std::io::Write;

/// The usage text of `resplock check`.
pub const USAGE: &str = "\
Usage: resplock check HISTORY [CLIENT-OPS...] [--html OUT.html] [--quorum N] [--no-linearizability]

Checks a lock history (JSON lines from a server run with --lock-history yes, RESPLOCK.HISTORY
EXPORT or the embedding API) and, optionally, the clients' own records of their lock
operations: at most one holder per lock at a time (a majority for Redlock), releases and
extensions only by the owner, fencing tokens increasing, resource use inside a lease, and the
client operations linearizable against a lease. Prints the first violation as a story.

  --html OUT.html        also draw the run as a timeline (one self-contained file)
  --quorum N             the majority of a lock held over several nodes (default: more than half)
  --no-linearizability   skip the linearizability search of the client operations

Exit status: 0 no violation, 1 a violation, 2 the files could not be read.
";

/// Runs `resplock check` with the arguments after `check`; returns the exit status. Prints
/// the report on `out` and problems on `err`.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("resplock-cli-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let f = dir.join("h.jsonl");
/// std::fs::write(&f, "{\"ev\":\"key\",\"t\":0,\"real\":0,\"key\":\"l\",\"owner\":\"a\",\"ttl\":100,\"client\":{\"id\":1}}\n").unwrap();
/// let (mut out, mut err) = (Vec::new(), Vec::new());
/// let code = resplock::history::cli::run(&[f.display().to_string()], &mut out, &mut err);
/// assert_eq!(code, 0);
/// assert!(String::from_utf8(out).unwrap().starts_with("no violation"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut files = Vec::new();
    let mut html_out = None;
    let mut opts = CheckOptions::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = |i: usize| args.get(i + 1).cloned();
        match a {
            "-h" | "--help" => {
                let _ = write!(out, "{USAGE}");
                return 0;
            }
            "--html" => match value(i) {
                Some(v) => {
                    html_out = Some(v);
                    i += 1;
                }
                None => {
                    let _ = write!(err, "resplock check: --html needs a file name\n\n{USAGE}");
                    return 2;
                }
            },
            "--quorum" => match value(i)
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&q| q > 0)
            {
                Some(q) => {
                    opts.quorum = Some(q);
                    i += 1;
                }
                None => {
                    let _ = write!(
                        err,
                        "resplock check: --quorum needs a positive number\n\n{USAGE}"
                    );
                    return 2;
                }
            },
            "--no-linearizability" => opts.linearizability = false,
            _ if a.starts_with("--") => {
                let _ = write!(err, "resplock check: unknown option {a}\n\n{USAGE}");
                return 2;
            }
            _ => files.push(a.to_string()),
        }
        i += 1;
    }
    if files.is_empty() {
        let _ = write!(err, "{USAGE}");
        return 2;
    }
    let history = match History::load(&files) {
        Ok(h) => h,
        Err(e) => {
            let _ = writeln!(err, "resplock check: {e}");
            return 2;
        }
    };
    let report = history.check(&opts);
    let _ = write!(out, "{report}");
    if let Some(path) = html_out {
        let page = html::render(&history, &report);
        if let Err(e) = std::fs::write(&path, page) {
            let _ = writeln!(err, "resplock check: cannot write {path}: {e}");
            return 2;
        }
        let _ = writeln!(out, "timeline: {path}");
    }
    if report.is_clean() {
        0
    } else {
        1
    }
}
