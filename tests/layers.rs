//! The layering of src/, checked. Every path a file names (`crate::a::b`, `super::x`,
//! `self::y`, grouped `crate::{a, b::{c, d}}`, a child module named bare) is resolved to the
//! file that defines the module it reaches, and then:
//! - an arrow between top-level modules must be one of [`ARROWS`];
//! - an arrow between the layers of `cmd/` must be one of [`CMD_LAYERS`];
//! - no files import each other in a circle of more than two (a file and the one it works
//!   with closely may use each other; three or more in a ring cannot be understood one at a
//!   time).
//!
//! These tables are the one place that names the arrows (ARCHITECTURE.md draws the same
//! picture); adding a module or an import across layers means changing them on purpose.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
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
    // The process title, written over the command line's memory.
    ("proctitle", &[]),
    ("reply", &["error"]),
    ("config", &["error", "glob", "num", "version", "log"]),
    // Lock histories: their formats, the safety checker, the timeline, and the bounded
    // recorder the command layer feeds (key patterns are globs).
    ("history", &["glob"]),
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
    // Redis Cluster's data model: hash slots, a node's view of the configuration, how the
    // nodes of one process share it. No commands, sockets or keyspace.
    ("cluster", &[]),
    // Wire format, and the per-client queue of encoded frames.
    ("protocol", &["reply", "error", "num"]),
    ("outbox", &["protocol", "reply", "config", "log", "wake"]),
    // Pub/sub registry: channels -> subscribers' queues; no command table.
    ("pubsub", &["outbox", "protocol", "glob", "config", "reply"]),
    // Lua: reaches the server only through the `Host` trait the commands implement.
    (
        "script",
        &["reply", "error", "num", "version", "config", "log", "clock"],
    ),
    // Commands: the table, dispatch, the server state and every family.
    (
        "cmd",
        &[
            "keyspace",
            "types",
            "script",
            "pubsub",
            "outbox",
            "reply",
            "error",
            "num",
            "glob",
            "clock",
            "config",
            "version",
            "alloc",
            "log",
            "rdb",
            "aof",
            "repl",
            "wake",
            "history",
            "cluster",
            "proctitle",
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
            "wake",
            "history",
            "cluster",
        ],
    ),
    // The test surface for fuzz targets and tests: a server state driven without sockets.
    (
        "testkit",
        &["cmd", "config", "outbox", "protocol", "reply", "keyspace"],
    ),
];

/// The layers inside `cmd/` (each a folder) and the layers each may use, lowest first.
/// `cmd/mod.rs` assembles them and may use all; no layer uses it.
const CMD_LAYERS: &[(&str, &[&str])] = &[
    // Helpers that know no server: argument parsing, Redis's number formats, help replies,
    // the recorded COMMAND INFO/DOCS.
    ("base", &[]),
    // What every command runs on: the rows and the table, the server state and `Ctx`,
    // clients, `call`, typed access, the server lock, and the server's subsystems.
    ("runtime", &["base"]),
    // Test controls: the clock moved, snapshots, faults acted on, commands run for the
    // embedding API.
    ("testctl", &["runtime", "base"]),
    // The command families, one file each.
    ("families", &["testctl", "runtime", "base"]),
    // A request's way in: execute's checks in processCommand's order, MULTI queuing, fault
    // injection, the lock, scripts on their runner.
    ("dispatch", &["families", "testctl", "runtime", "base"]),
];

/// The crate root only declares modules and re-exports the public surface.
const ROOT: &str = "lib";

/// A module path inside the crate (`["cmd", "runtime", "state"]`), the root being empty.
type ModPath = Vec<String>;

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

/// The module a file defines, by Rust's file layout (`src/cmd/mod.rs` -> `cmd`).
fn module_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: ModPath = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("file name");
    if last != "mod.rs" && last != "lib.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `text` with comments, string and character literals blanked (same length, newlines kept),
/// so braces can be counted.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if rest.starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (rest.starts_with(b"r\"") || rest.starts_with(b"r#") || rest.starts_with(b"br"))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // Raw string: r"..", r#".."#, br"..".
            let start = i;
            let mut j = i + if rest[0] == b'b' { 2 } else { 1 };
            let mut hashes = 0;
            while j < b.len() && b[j] == b'#' {
                hashes += 1;
                j += 1;
            }
            if j >= b.len() || b[j] != b'"' {
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            j += close.len();
            blank(&mut out, start, j);
            i = j;
        } else if rest[0] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let end = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(2).position(|&c| c == b'\'').map(|p| p + 2)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, |c| c.len_utf8());
                (rest.get(1 + ch) == Some(&b'\'')).then_some(1 + ch)
            };
            match end {
                Some(e) => {
                    blank(&mut out, i, i + e + 1);
                    i += e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The inline modules of a file (`mod tests { .. }`): name and byte range of their body.
fn inline_modules(code: &[u8]) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = find(code, b"mod ", i) {
        i = p + 4;
        if p > 0 && is_ident(code[p - 1]) {
            continue;
        }
        let mut j = p + 4;
        while j < code.len() && code[j] == b' ' {
            j += 1;
        }
        let start = j;
        while j < code.len() && is_ident(code[j]) {
            j += 1;
        }
        let name = String::from_utf8_lossy(&code[start..j]).into_owned();
        while j < code.len() && code[j].is_ascii_whitespace() {
            j += 1;
        }
        if name.is_empty() || j >= code.len() || code[j] != b'{' {
            continue;
        }
        let (mut depth, mut k) = (0usize, j);
        while k < code.len() {
            match code[k] {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            k += 1;
        }
        out.push((name, j, k));
    }
    out
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Parse the path that starts at `i` (after its first segment was consumed up to `::`),
/// appending every full path it names to `out` (groups give several).
fn parse_tail(t: &[u8], mut i: usize, prefix: ModPath, out: &mut Vec<ModPath>) {
    let mut path = prefix;
    loop {
        // At the start of a segment.
        while i < t.len() && t[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < t.len() && t[i] == b'{' {
            // A group: comma-separated subpaths, each parsed with this prefix.
            let mut depth = 0usize;
            let mut j = i;
            let mut starts = vec![i + 1];
            while j < t.len() {
                match t[j] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => starts.push(j + 1),
                    _ => {}
                }
                j += 1;
            }
            for s in starts {
                let mut k = s;
                while k < t.len() && t[k].is_ascii_whitespace() {
                    k += 1;
                }
                let st = k;
                while k < t.len() && is_ident(t[k]) {
                    k += 1;
                }
                let seg = String::from_utf8_lossy(&t[st..k]).into_owned();
                if seg.is_empty() {
                    if k < t.len() && t[k] == b'{' {
                        parse_tail(t, k, path.clone(), out);
                    }
                    continue;
                }
                let mut p = path.clone();
                if seg != "self" {
                    p.push(seg);
                }
                if t[k..].starts_with(b"::") {
                    parse_tail(t, k + 2, p, out);
                } else {
                    out.push(p);
                }
            }
            return;
        }
        let st = i;
        while i < t.len() && is_ident(t[i]) {
            i += 1;
        }
        if i == st {
            // `*` or nothing: the path so far.
            out.push(path);
            return;
        }
        path.push(String::from_utf8_lossy(&t[st..i]).into_owned());
        if t[i..].starts_with(b"::") {
            i += 2;
        } else {
            out.push(path);
            return;
        }
    }
}

/// Every module path `text` names, made absolute from `module` (the file's module). Comments
/// count: a path in a doc link is an arrow too.
fn named_paths(text: &str, module: &ModPath, children: &BTreeSet<String>) -> Vec<ModPath> {
    let t = text.as_bytes();
    let code = code_only(text);
    let inline = inline_modules(&code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < t.len() {
        if !is_ident(t[i]) || (i > 0 && (is_ident(t[i - 1]) || t[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let st = i;
        while i < t.len() && is_ident(t[i]) {
            i += 1;
        }
        if !t[i..].starts_with(b"::") {
            continue;
        }
        let first = &text[st..i];
        // The module this occurrence is written in: the file's, plus the inline modules
        // around it.
        let mut here = module.clone();
        for (name, from, to) in &inline {
            if *from < st && st < *to {
                here.push(name.clone());
            }
        }
        let dollar = st > 0 && t[st - 1] == b'$';
        let (prefix, mut j): (ModPath, usize) = match first {
            "crate" => (Vec::new(), i + 2),
            "self" => (here, i + 2),
            "super" => {
                let mut p = here;
                let mut j = i;
                p.pop();
                while t[j..].starts_with(b"::super") && !is_ident(*t.get(j + 7).unwrap_or(&b' ')) {
                    p.pop();
                    j += 7;
                }
                (p, j + 2)
            }
            // A child module of this file named without a prefix (`watch::key_modified`).
            c if !dollar && here == *module && children.contains(c) => (module.clone(), st),
            _ => continue,
        };
        while j < t.len() && t[j] == b' ' {
            j += 1;
        }
        parse_tail(t, j, prefix, &mut out);
    }
    out
}

/// The file that defines the longest module prefix of `path`.
fn target<'a>(modules: &'a BTreeMap<ModPath, PathBuf>, path: &ModPath) -> Option<&'a PathBuf> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n].to_vec()))
}

struct Crate {
    src: PathBuf,
    /// Module path -> the file that defines it.
    modules: BTreeMap<ModPath, PathBuf>,
    /// File -> its module path.
    files: BTreeMap<PathBuf, ModPath>,
    /// File -> files it names.
    edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    rust_files(&src, &mut all);
    all.sort();
    let mut files: BTreeMap<PathBuf, ModPath> = all
        .iter()
        .filter(|f| !f.starts_with(src.join("bin")))
        .map(|f| (f.clone(), module_path(&src, f)))
        .collect();
    // `#[path = "x/mod.rs"] mod name;` puts a file where its declaring module says.
    let decl: Vec<(PathBuf, ModPath)> = files.iter().map(|(f, m)| (f.clone(), m.clone())).collect();
    for (f, m) in decl {
        let text = std::fs::read_to_string(&f).expect("read");
        let mut rest = text.as_str();
        while let Some(p) = rest.find("#[path = \"") {
            let after = &rest[p + 10..];
            let Some(end) = after.find('"') else { break };
            let rel = &after[..end];
            let tail = &after[end..];
            if let Some(m_at) = tail.find("mod ") {
                let name: String = tail[m_at + 4..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let file = f.parent().expect("dir").join(rel);
                let mut mp = m.clone();
                mp.push(name);
                files.insert(file, mp);
            }
            rest = after;
        }
    }
    let modules: BTreeMap<ModPath, PathBuf> =
        files.iter().map(|(f, m)| (m.clone(), f.clone())).collect();
    let mut edges = BTreeMap::new();
    for (f, m) in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|k| k.len() == m.len() + 1 && k.starts_with(m))
            .map(|k| k[m.len()].clone())
            .collect();
        let mut to = BTreeSet::new();
        for p in named_paths(&text, m, &children) {
            if let Some(t) = target(&modules, &p) {
                if t != f {
                    to.insert(t.clone());
                }
            }
        }
        edges.insert(f.clone(), to);
    }
    Crate {
        src,
        modules,
        files,
        edges,
    }
}

impl Crate {
    fn rel(&self, f: &Path) -> String {
        f.strip_prefix(&self.src).unwrap_or(f).display().to_string()
    }
}

/// The top-level module of a module path (`lib` for the root).
fn top(m: &ModPath) -> &str {
    m.first().map_or(ROOT, |s| s.as_str())
}

/// The `cmd/` layer of a module path, if it is inside one (`None` for `cmd/mod.rs`).
fn cmd_layer(m: &ModPath) -> Option<&str> {
    (m.len() >= 2 && m[0] == "cmd").then(|| m[1].as_str())
}

#[test]
fn the_arrow_tables_are_dags_over_known_modules() {
    for table in [ARROWS, CMD_LAYERS] {
        let names: BTreeSet<&str> = table.iter().map(|(m, _)| *m).collect();
        for (m, deps) in table {
            for d in *deps {
                assert!(names.contains(d), "{m} -> {d}: {d} is not in the table");
                // Lower layers come first: an arrow may only point up the table.
                let (pm, pd) = (
                    table.iter().position(|(x, _)| x == m),
                    table.iter().position(|(x, _)| x == d),
                );
                assert!(pd < pm, "{m} -> {d} points to a module listed after {m}");
            }
        }
    }
}

#[test]
fn the_binary_uses_the_public_api_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("bin"), &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read");
        assert!(
            !text.contains("crate::"),
            "{}: the binary uses the public API only",
            f.display()
        );
    }
}

#[test]
fn imports_follow_the_layers() {
    let c = read_crate();
    let allowed: BTreeMap<&str, &[&str]> = ARROWS.iter().copied().collect();
    let layers: BTreeMap<&str, &[&str]> = CMD_LAYERS.iter().copied().collect();
    let mut violations = Vec::new();
    let mut seen = BTreeSet::new();
    let mut seen_layers = BTreeSet::new();
    for (f, m) in &c.files {
        let module = top(m);
        seen.insert(module.to_string());
        if let Some(l) = cmd_layer(m) {
            if c.modules.contains_key(&m[..2]) {
                seen_layers.insert(l.to_string());
            }
        }
        if module == ROOT {
            continue;
        }
        let Some(deps) = allowed.get(module) else {
            violations.push(format!(
                "{}: module `{module}` is not in tests/layers.rs's table",
                c.rel(f)
            ));
            continue;
        };
        for t in &c.edges[f] {
            let tm = &c.files[t];
            let used = top(tm);
            if used != module && !deps.contains(&used) {
                violations.push(format!("{}: {module} -> {}", c.rel(f), c.rel(t)));
            }
            if module != "cmd" || used != "cmd" {
                continue;
            }
            // Inside cmd/: from a layer, only to itself or a layer below it.
            let Some(from) = cmd_layer(m) else { continue };
            let Some(ok) = layers.get(from) else {
                violations.push(format!(
                    "{}: cmd/{from} is not in tests/layers.rs's CMD_LAYERS",
                    c.rel(f)
                ));
                continue;
            };
            match cmd_layer(tm) {
                None => violations.push(format!(
                    "{}: the layer cmd/{from} names cmd/mod.rs ({}); name the layer that \
                     defines the item",
                    c.rel(f),
                    c.rel(t)
                )),
                Some(to) if to != from && !ok.contains(&to) => violations.push(format!(
                    "{}: cmd/{from} -> cmd/{to} ({})",
                    c.rel(f),
                    c.rel(t)
                )),
                _ => {}
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
    for (l, _) in CMD_LAYERS {
        assert!(
            seen_layers.contains(*l),
            "CMD_LAYERS names `{l}`, which src/cmd/ does not have"
        );
    }
}

/// A shortest path of arrows from `from` to `to`, both included.
fn path_between(
    edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    from: &PathBuf,
    to: &PathBuf,
    avoid: Option<&PathBuf>,
) -> Option<Vec<PathBuf>> {
    let mut prev: BTreeMap<&PathBuf, &PathBuf> = BTreeMap::new();
    let mut queue = VecDeque::from([from]);
    let mut seen = BTreeSet::from([from]);
    while let Some(n) = queue.pop_front() {
        if n == to {
            let mut path = vec![n.clone()];
            let mut cur = n;
            while let Some(p) = prev.get(cur) {
                path.push((*p).clone());
                cur = p;
            }
            path.reverse();
            return Some(path);
        }
        for m in &edges[n] {
            if Some(m) != avoid && seen.insert(m) {
                prev.insert(m, n);
                queue.push_back(m);
            }
        }
    }
    None
}

#[test]
fn no_files_import_each_other_in_a_circle_of_more_than_two() {
    let c = read_crate();
    // A graph has no simple circle longer than two exactly when, in every strongly
    // connected part, each arrow has its reverse and the pairs form a tree. So: an arrow
    // a -> b without b -> a, where b reaches a, closes a longer circle; so does a pair a <-> b
    // whose files are also connected some other way.
    let mut circles = BTreeSet::new();
    for (a, outs) in &c.edges {
        for b in outs {
            let back = c.edges[b].contains(a);
            let path = if back {
                // Another way from b back to a, not through the pair's direct arrows.
                let mut without = c.edges.clone();
                without.get_mut(a).expect("a").remove(b);
                without.get_mut(b).expect("b").remove(a);
                path_between(&without, b, a, None).filter(|p| p.len() > 2)
            } else {
                path_between(&c.edges, b, a, None)
            };
            if let Some(p) = path {
                let mut ring: Vec<String> = std::iter::once(a)
                    .chain(p.iter().take(p.len() - 1))
                    .map(|f| c.rel(f))
                    .collect();
                // One line per circle, however many of its arrows found it.
                let at = ring
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, s)| (*s).clone())
                    .map_or(0, |(i, _)| i);
                ring.rotate_left(at);
                circles.insert(ring.join(" -> "));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other in a circle of more than two:\n{}",
        circles.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_reader_understands_the_ways_a_path_is_written() {
    let m: ModPath = vec!["cmd".into(), "runtime".into(), "state".into()];
    let kids = BTreeSet::from(["sub".to_string()]);
    let got = named_paths(
        "use crate::{a, b::{c, d::e}};\nuse super::{self, x};\n\
         /// [`super::super::y::Z`]\nfn f() { sub::g(); \"crate::q\"; }\n\
         mod tests { use super::*; use super::super::w; }\n",
        &m,
        &kids,
    );
    let s: Vec<String> = got.iter().map(|p| p.join("::")).collect();
    for want in [
        "a",
        "b::c",
        "b::d::e",
        "cmd::runtime",
        "cmd::runtime::x",
        "cmd::y::Z",
        "cmd::runtime::state::sub::g",
        "q",
        "cmd::runtime::state",
        "cmd::runtime::w",
    ] {
        assert!(s.contains(&want.to_string()), "{want} missing from {s:?}");
    }
}
