//! The layering of src/, checked: every `crate::<module>` path a file mentions must be an
//! arrow of [`ARROWS`], the one place that names them (ARCHITECTURE.md draws the same
//! picture). Adding a top-level module, or an import across layers, means changing this
//! table on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of src/ and the modules it may use, lowest layers first.
const ARROWS: &[(&str, &[&str])] = &[
    // Foundation: leaves every layer may use.
    ("error", &[]),
    ("alloc", &[]),
    ("num", &[]),
    ("glob", &[]),
    ("clock", &[]),
    // Lock-free wake-ups a connection waits on (CLIENT KILL, shutdown, pushes).
    ("wake", &[]),
    ("version", &[]),
    ("log", &[]),
    ("reply", &["error"]),
    ("config", &["error", "glob", "num", "version", "log"]),
    // TLS settings -> a rustls acceptor for the listeners.
    ("tls", &["config"]),
    // Data: values and the keyspace that stores them; no clients, sockets or wire.
    ("types", &["num", "error"]),
    ("keyspace", &["types", "num", "clock", "error"]),
    // Redis's RDB format: values and whole files in both directions, DUMP payloads.
    ("rdb", &["keyspace", "types", "num", "log", "version"]),
    // The append-only log: manifest, records, the live appender, loading.
    ("aof", &["rdb", "keyspace", "types", "num", "log", "config"]),
    // Replication's history (id, offset, backlog).
    ("repl", &[]),
    // Wire format, and the per-client queue of encoded frames.
    ("protocol", &["reply", "error", "num"]),
    ("outbox", &["protocol", "reply", "config", "log", "wake"]),
    // Pub/sub registry: channels -> subscribers' queues; no command table.
    ("pubsub", &["outbox", "protocol", "glob", "config", "reply"]),
    // Lua: reaches the server only through the `Host` trait the commands implement.
    (
        "script",
        &["reply", "error", "num", "version", "config", "log"],
    ),
    // Commands: the table, dispatch, the server state and every family.
    (
        "cmd",
        &[
            "keyspace", "types", "script", "pubsub", "outbox", "reply", "error", "num", "glob",
            "clock", "config", "version", "alloc", "log", "rdb", "wake",
        ],
    ),
    // One task per client: bytes in, requests to the commands, replies out.
    (
        "connection",
        &["cmd", "protocol", "outbox", "reply", "error", "log", "wake"],
    ),
    // Listeners, lifecycle and the embedding API.
    (
        "server",
        &[
            "connection",
            "cmd",
            "config",
            "error",
            "log",
            "version",
            "keyspace",
            "reply",
            "clock",
            "tls",
        ],
    ),
    // The test surface for fuzz targets and tests: a server state driven without sockets.
    (
        "testkit",
        &["cmd", "config", "outbox", "protocol", "reply", "keyspace"],
    ),
];

/// The crate root only declares modules and re-exports the public surface.
const ROOT: &str = "lib";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of src/ belongs to (`src/cmd/exec.rs` -> `cmd`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let first = rel.components().next().expect("non-empty");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::<name>` a file mentions, comments included (a path in a doc link is an
/// arrow too).
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let preceded_by_ident = rest[..i]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if !name.is_empty() && !preceded_by_ident {
            out.insert(name);
        }
        rest = after;
    }
    out
}

#[test]
fn the_arrow_table_is_a_dag_over_known_modules() {
    let names: BTreeSet<&str> = ARROWS.iter().map(|(m, _)| *m).collect();
    for (m, deps) in ARROWS {
        for d in *deps {
            assert!(names.contains(d), "{m} -> {d}: {d} is not in the table");
            // Lower layers come first: an arrow may only point up the table.
            let (pm, pd) = (
                ARROWS.iter().position(|(x, _)| x == m),
                ARROWS.iter().position(|(x, _)| x == d),
            );
            assert!(pd < pm, "{m} -> {d} points to a module listed after {m}");
        }
    }
}

#[test]
fn imports_follow_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let allowed: BTreeMap<&str, &[&str]> = ARROWS.iter().copied().collect();
    let mut violations = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &files {
        let module = module_of(&src, f);
        if module == "bin" {
            // The binary is a user of the library: `resplock::...` only.
            let text = std::fs::read_to_string(f).expect("read");
            assert!(
                !text.contains("crate::"),
                "{}: the binary uses the public API only",
                f.display()
            );
            continue;
        }
        seen.insert(module.clone());
        if module == ROOT {
            continue;
        }
        let Some(deps) = allowed.get(module.as_str()) else {
            violations.push(format!(
                "{}: module `{module}` is not in tests/layers.rs's table",
                f.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read");
        for used in crate_paths(&text) {
            if used != module && !deps.contains(&used.as_str()) {
                violations.push(format!("{}: {module} -> {used}", f.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports outside the allowed arrows:\n{}",
        violations.join("\n")
    );
    for (m, _) in ARROWS {
        assert!(
            seen.contains(*m),
            "the table names `{m}`, which src/ does not have"
        );
    }
}
