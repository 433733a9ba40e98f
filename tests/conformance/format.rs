//! The `.case` file format of the conformance suite: parsing, writing back (for the recorder),
//! RESP frame trees and the reply matchers. See conformance/README.md for the format itself.

use std::fmt::Write as _;

/// One parsed `.case` file, kept line for line so the recorder can write it back unchanged
/// except for the replies.
pub struct Doc {
    pub path: String,
    pub entries: Vec<Entry>,
}

pub enum Entry {
    /// Comments and blank lines, written back verbatim.
    Text(String),
    /// `### case: name`
    Header {
        name: String,
        line: usize,
    },
    Step(Step),
}

pub struct Step {
    /// 1-based line number of the step in its file.
    pub line: usize,
    /// The step line as written (kept verbatim by the recorder).
    pub text: String,
    pub kind: StepKind,
    /// The recorded replies: one for a command, any number for a raw send.
    pub frames: Vec<Expected>,
}

pub enum StepKind {
    /// `> CMD arg ...`: sent as a multibulk request, one reply.
    Cmd(Vec<Vec<u8>>),
    /// `>raw "bytes"`: sent as is, zero or more replies.
    Raw(Vec<u8>),
    /// `@conn name`: later steps use this connection (opened on first use).
    Conn(String),
    /// `@closed`: the server has closed the current connection.
    Closed,
    /// `@read`: the frames the server pushes on the current connection without a request
    /// (pub/sub messages, the later confirmations of a multi-channel SUBSCRIBE); zero or more.
    Read,
    /// `@sleep MS`: wait (e.g. for a key to expire).
    Sleep(u64),
}

impl StepKind {
    pub fn is_request(&self) -> bool {
        matches!(self, StepKind::Cmd(_) | StepKind::Raw(_))
    }
}

/// A recorded reply: its exact bytes and the matchers annotated on its lines.
#[derive(Clone, Debug)]
pub struct Expected {
    pub bytes: Vec<u8>,
    pub matchers: Vec<(Vec<usize>, Matcher)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    /// Any single frame.
    Any,
    /// Same RESP type (first byte) only.
    Type,
    /// Same type, and its text is an integer, optionally within lo..hi (inclusive).
    Int(Option<(i64, i64)>),
    /// Same aggregate type and length, elements (pairs for maps) in any order.
    Unordered,
    /// Same aggregate type and length, elements not checked.
    Len,
    /// Like Unordered, but the elements are taken two by two (field, value) even in a flat
    /// RESP2 array, so pairs stay paired.
    Pairs,
    /// Same type, and the payload (bulk content or status/error line) matches the glob.
    Glob(Vec<u8>),
}

impl Matcher {
    fn parse(s: &str) -> Result<Matcher, String> {
        let s = s.trim_end();
        let (name, rest) = match s.split_once(' ') {
            Some((n, r)) => (n, r.trim()),
            None => (s, ""),
        };
        let no_args = |m: Matcher| {
            if rest.is_empty() {
                Ok(m)
            } else {
                Err(format!("matcher ~{name} takes no argument"))
            }
        };
        match name {
            "any" => no_args(Matcher::Any),
            "type" => no_args(Matcher::Type),
            "unordered" => no_args(Matcher::Unordered),
            "len" => no_args(Matcher::Len),
            "pairs" => no_args(Matcher::Pairs),
            "int" if rest.is_empty() => Ok(Matcher::Int(None)),
            "int" => {
                let (lo, hi) = rest
                    .split_once("..")
                    .ok_or_else(|| format!("~int wants LO..HI, got {rest:?}"))?;
                let lo: i64 = lo
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad ~int low {lo:?}"))?;
                let hi: i64 = hi
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad ~int high {hi:?}"))?;
                Ok(Matcher::Int(Some((lo, hi))))
            }
            "glob" => Ok(Matcher::Glob(unescape(rest)?)),
            _ => Err(format!("unknown matcher ~{name}")),
        }
    }

    fn render(&self) -> String {
        match self {
            Matcher::Any => "~any".into(),
            Matcher::Type => "~type".into(),
            Matcher::Unordered => "~unordered".into(),
            Matcher::Len => "~len".into(),
            Matcher::Pairs => "~pairs".into(),
            Matcher::Int(None) => "~int".into(),
            Matcher::Int(Some((lo, hi))) => format!("~int {lo}..{hi}"),
            Matcher::Glob(p) => format!("~glob {}", escape(p)),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Escaping

/// Visible form of bytes on one line: printable ASCII as is, `\\`, `\r`, `\n`, `\t`, `\xHH`;
/// a trailing space and a `~` after a space are escaped so annotations stay unambiguous.
pub fn escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b' ' if i + 1 == b.len() => s.push_str("\\x20"),
            b'~' if s.ends_with(' ') => s.push_str("\\x7e"),
            0x20..=0x7e => s.push(c as char),
            _ => {
                let _ = write!(s, "\\x{c:02x}");
            }
        }
    }
    s
}

pub fn unescape(s: &str) -> Result<Vec<u8>, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'"') => out.push(b'"'),
            Some(b'x') => {
                let h = s
                    .get(i + 2..i + 4)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("bad \\x escape in {s:?}"))?;
                out.push(h);
                i += 4;
                continue;
            }
            _ => return Err(format!("bad escape in {s:?}")),
        }
        i += 2;
    }
    Ok(out)
}

/// Split a command line the way redis-cli does (sdssplitargs): bare words, "double quoted"
/// with \xHH \n \r \t \a \b \" \\ escapes, 'single quoted' with \' only. Extension: a quoted
/// argument followed directly by `*N` is repeated N times (for long arguments).
pub fn split_args(line: &str) -> Result<Vec<Vec<u8>>, String> {
    let b = line.as_bytes();
    let mut args = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Ok(args);
        }
        let mut cur = Vec::new();
        let quoted = b[i] == b'"' || b[i] == b'\'';
        if b[i] == b'"' {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(format!("unbalanced quotes in {line:?}")),
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let e = *b.get(i + 1).ok_or("dangling backslash")?;
                        match e {
                            b'x' => {
                                let h = line
                                    .get(i + 2..i + 4)
                                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                                    .ok_or_else(|| format!("bad \\x escape in {line:?}"))?;
                                cur.push(h);
                                i += 4;
                                continue;
                            }
                            b'n' => cur.push(b'\n'),
                            b'r' => cur.push(b'\r'),
                            b't' => cur.push(b'\t'),
                            b'b' => cur.push(8),
                            b'a' => cur.push(7),
                            other => cur.push(other),
                        }
                        i += 2;
                    }
                    Some(&c) => {
                        cur.push(c);
                        i += 1;
                    }
                }
            }
        } else if b[i] == b'\'' {
            i += 1;
            loop {
                match b.get(i) {
                    None => return Err(format!("unbalanced quotes in {line:?}")),
                    Some(b'\'') => {
                        i += 1;
                        break;
                    }
                    Some(b'\\') if b.get(i + 1) == Some(&b'\'') => {
                        cur.push(b'\'');
                        i += 2;
                    }
                    Some(&c) => {
                        cur.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while i < b.len() && !b[i].is_ascii_whitespace() {
                cur.push(b[i]);
                i += 1;
            }
        }
        if quoted && b.get(i) == Some(&b'*') {
            let start = i + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            let n: usize = line[start..end]
                .parse()
                .map_err(|_| format!("bad repeat count in {line:?}"))?;
            if n > 1 << 20 {
                return Err("repeat count too large".into());
            }
            cur = cur.repeat(n);
            i = end;
        }
        if quoted && i < b.len() && !b[i].is_ascii_whitespace() {
            return Err(format!(
                "closing quote must be followed by a space in {line:?}"
            ));
        }
        args.push(cur);
    }
}

// ---------------------------------------------------------------------------------------------
// RESP frame trees

/// One RESP2/RESP3 frame inside a byte buffer.
#[derive(Debug)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub ty: u8,
    /// The header line without the type byte.
    pub head: (usize, usize),
    /// The payload of $ = ! frames.
    pub payload: Option<(usize, usize)>,
    pub children: Vec<Node>,
}

pub enum ParseErr {
    Incomplete,
    Invalid(String),
}

pub fn parse_frame(b: &[u8], pos: usize) -> Result<Node, ParseErr> {
    let ty = *b.get(pos).ok_or(ParseErr::Incomplete)?;
    let eol = b[pos + 1..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| pos + 1 + p)
        .ok_or(ParseErr::Incomplete)?;
    let head = (pos + 1, eol);
    let text = std::str::from_utf8(&b[pos + 1..eol]).unwrap_or("");
    let next = eol + 2;
    let count = || -> Result<i64, ParseErr> {
        text.parse()
            .map_err(|_| ParseErr::Invalid(format!("bad length {text:?}")))
    };
    let mut node = Node {
        start: pos,
        end: next,
        ty,
        head,
        payload: None,
        children: Vec::new(),
    };
    match ty {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => {}
        b'$' | b'=' | b'!' => {
            let n = count()?;
            if n >= 0 {
                let n = n as usize;
                if b.len() < next + n + 2 {
                    return Err(ParseErr::Incomplete);
                }
                if &b[next + n..next + n + 2] != b"\r\n" {
                    return Err(ParseErr::Invalid(format!(
                        "bulk of declared length {n} not followed by CRLF"
                    )));
                }
                node.payload = Some((next, next + n));
                node.end = next + n + 2;
            }
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = count()?;
            let n = if ty == b'%' || ty == b'|' { n * 2 } else { n };
            // An attribute (`|`) is not a reply by itself: the reply it describes follows,
            // and is kept as its last child.
            let n = if ty == b'|' { n + 1 } else { n };
            let mut p = next;
            for _ in 0..n.max(0) {
                let c = parse_frame(b, p)?;
                p = c.end;
                node.children.push(c);
            }
            node.end = p;
        }
        _ => {
            return Err(ParseErr::Invalid(format!(
                "unknown RESP type byte {:?}",
                ty as char
            )))
        }
    }
    Ok(node)
}

fn is_aggregate(ty: u8) -> bool {
    matches!(ty, b'*' | b'~' | b'>' | b'%' | b'|')
}

/// The lines a frame is written as, each with the path of the frame that starts on it.
fn frame_lines(b: &[u8]) -> Vec<(String, Option<Vec<usize>>)> {
    fn walk(
        b: &[u8],
        n: &Node,
        path: &mut Vec<usize>,
        out: &mut Vec<(String, Option<Vec<usize>>)>,
    ) {
        out.push((escape(&b[n.start..n.head.1]), Some(path.clone())));
        if let Some((s, e)) = n.payload {
            out.push((escape(&b[s..e]), None));
        }
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            walk(b, c, path, out);
            path.pop();
        }
    }
    match parse_frame(b, 0) {
        Ok(n) if n.end == b.len() => {
            let mut out = Vec::new();
            walk(b, &n, &mut Vec::new(), &mut out);
            out
        }
        _ => {
            // Not a single frame (cannot come from a server): split at CRLF.
            let body = b.strip_suffix(b"\r\n").unwrap_or(b);
            let mut out: Vec<_> = split_crlf(body).map(|l| (escape(l), None)).collect();
            if let Some(first) = out.first_mut() {
                first.1 = Some(Vec::new());
            }
            out
        }
    }
}

fn split_crlf(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(b);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(2).position(|w| w == b"\r\n") {
            Some(p) => {
                rest = Some(&r[p + 2..]);
                Some(&r[..p])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Render a reply and its matchers as the lines of a `.case` file.
pub fn render_expected(e: &Expected) -> Result<Vec<String>, String> {
    let mut lines = frame_lines(&e.bytes);
    for (path, m) in &e.matchers {
        let line = lines
            .iter_mut()
            .find(|(_, p)| p.as_deref() == Some(path.as_slice()))
            .ok_or_else(|| {
                format!(
                    "matcher {} at element {:?} has no element to sit on in the new reply {:?}",
                    m.render(),
                    path,
                    show(&e.bytes)
                )
            })?;
        line.0.push(' ');
        line.0.push_str(&m.render());
    }
    Ok(lines.into_iter().map(|(l, _)| l).collect())
}

/// The reply as the lines of a `.case` file (for failure messages): at most `max` lines, each
/// cut at 160 characters.
pub fn show_lines(b: &[u8], max: usize) -> Vec<String> {
    let all = frame_lines(b);
    let mut out: Vec<String> = all
        .iter()
        .take(max)
        .map(|(l, _)| {
            if l.len() > 160 {
                let cut = (0..=160)
                    .rev()
                    .find(|&i| l.is_char_boundary(i))
                    .unwrap_or(0);
                format!("{}...", &l[..cut])
            } else {
                l.clone()
            }
        })
        .collect();
    if all.len() > max {
        out.push(format!("... ({} more lines)", all.len() - max));
    }
    out
}

/// One-line visible form of reply bytes for messages, shortened when long.
pub fn show(b: &[u8]) -> String {
    let s = escape(b)
        .replace("\\r\\n", "\\r\\n ")
        .trim_end()
        .to_string();
    if s.len() > 400 {
        let cut = (0..=400)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}... ({} bytes)", &s[..cut], b.len())
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing a reply with a recording

/// Ok if `got` matches the recorded reply under its matchers; else why not.
pub fn check(exp: &Expected, got: &[u8]) -> Result<(), String> {
    let en = match parse_frame(&exp.bytes, 0) {
        Ok(n) => n,
        Err(_) => {
            return if got == exp.bytes.as_slice() {
                Ok(())
            } else {
                Err("bytes differ".into())
            }
        }
    };
    let gn = match parse_frame(got, 0) {
        Ok(n) if n.end == got.len() => n,
        _ => return Err("reply is not one RESP frame".into()),
    };
    let mut path = Vec::new();
    cmp(exp, &en, got, &gn, &mut path)
}

fn matcher_at<'a>(exp: &'a Expected, path: &[usize]) -> Option<&'a Matcher> {
    exp.matchers
        .iter()
        .find(|(p, _)| p.as_slice() == path)
        .map(|(_, m)| m)
}

fn at(path: &[usize]) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("at element {path:?}: ")
    }
}

fn cmp(
    exp: &Expected,
    en: &Node,
    got: &[u8],
    gn: &Node,
    path: &mut Vec<usize>,
) -> Result<(), String> {
    let eb = &exp.bytes;
    let same_type = || -> Result<(), String> {
        if en.ty == gn.ty {
            Ok(())
        } else {
            Err(format!(
                "{}expected type {:?}, got {:?}",
                at(path),
                en.ty as char,
                gn.ty as char
            ))
        }
    };
    let text = |b: &[u8], n: &Node| -> Vec<u8> {
        match n.payload {
            Some((s, e)) => b[s..e].to_vec(),
            None => b[n.head.0..n.head.1].to_vec(),
        }
    };
    let same_len = || -> Result<(), String> {
        same_type()?;
        if eb[en.head.0..en.head.1] == got[gn.head.0..gn.head.1] {
            Ok(())
        } else {
            Err(format!(
                "{}expected {} elements, got {}",
                at(path),
                String::from_utf8_lossy(&eb[en.head.0..en.head.1]),
                String::from_utf8_lossy(&got[gn.head.0..gn.head.1])
            ))
        }
    };
    match matcher_at(exp, path) {
        Some(Matcher::Any) => return Ok(()),
        Some(Matcher::Type) => return same_type(),
        Some(Matcher::Len) => return same_len(),
        Some(Matcher::Int(range)) => {
            same_type()?;
            let t = text(got, gn);
            let v: i64 = std::str::from_utf8(&t)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("{}expected an integer, got {:?}", at(path), show(&t)))?;
            if let Some((lo, hi)) = range {
                if v < *lo || v > *hi {
                    return Err(format!("{}integer {v} not in {lo}..{hi}", at(path)));
                }
            }
            return Ok(());
        }
        Some(Matcher::Glob(p)) => {
            same_type()?;
            let t = text(got, gn);
            return if glob(p, &t) {
                Ok(())
            } else {
                Err(format!(
                    "{}{:?} does not match the glob",
                    at(path),
                    show(&t)
                ))
            };
        }
        Some(m @ (Matcher::Unordered | Matcher::Pairs)) => {
            same_len()?;
            let pairs = *m == Matcher::Pairs || matches!(en.ty, b'%' | b'|');
            let step = if pairs { 2 } else { 1 };
            if !en.children.len().is_multiple_of(step) {
                return Err(format!("{}~pairs on an odd number of elements", at(path)));
            }
            let unit = |b: &[u8], n: &Node, i: usize| -> Vec<u8> {
                b[n.children[i].start..n.children[i + step - 1].end].to_vec()
            };
            let mut want: Vec<Vec<u8>> = (0..en.children.len())
                .step_by(step)
                .map(|i| unit(eb, en, i))
                .collect();
            let mut have: Vec<Vec<u8>> = (0..gn.children.len())
                .step_by(step)
                .map(|i| unit(got, gn, i))
                .collect();
            want.sort();
            have.sort();
            return if want == have {
                Ok(())
            } else {
                Err(format!("{}elements differ (order ignored)", at(path)))
            };
        }
        None => {}
    }
    if is_aggregate(en.ty) && is_aggregate(gn.ty) && en.children.len() == gn.children.len() {
        same_len()?;
        for (i, (ec, gc)) in en.children.iter().zip(&gn.children).enumerate() {
            path.push(i);
            cmp(exp, ec, got, gc, path)?;
            path.pop();
        }
        return Ok(());
    }
    if eb[en.start..en.end] == got[gn.start..gn.end] {
        Ok(())
    } else if path.is_empty() {
        Err("bytes differ".into())
    } else {
        Err(format!(
            "{}expected {}, got {}",
            at(path),
            show(&eb[en.start..en.end]),
            show(&got[gn.start..gn.end])
        ))
    }
}

/// `*` any bytes, `?` one byte; everything else literal.
pub fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == b'*' {
        pi += 1;
    }
    pi == p.len()
}

// ---------------------------------------------------------------------------------------------
// Reading and writing files

enum LineKind {
    Header(String),
    Step,
    Frame,
    Text,
}

fn classify(line: &str) -> Result<LineKind, String> {
    if let Some(name) = line.strip_prefix("### case:") {
        return Ok(LineKind::Header(name.trim().to_string()));
    }
    if line.starts_with("> ") || line.starts_with(">raw ") || line.starts_with('@') {
        return Ok(LineKind::Step);
    }
    let b = line.as_bytes();
    if line.trim().is_empty() {
        return Ok(LineKind::Text);
    }
    if line == "#t" || line == "#f" || line.starts_with("#t ") || line.starts_with("#f ") {
        return Ok(LineKind::Frame);
    }
    if b[0] == b'#' {
        return Ok(LineKind::Text);
    }
    if b"+-:$*_,(=!%~|".contains(&b[0])
        || (b[0] == b'>' && b.get(1).is_some_and(|c| c.is_ascii_digit() || *c == b'-'))
    {
        return Ok(LineKind::Frame);
    }
    Err(format!("cannot tell what this line is: {line:?}"))
}

fn parse_step(text: &str, line: usize) -> Result<StepKind, String> {
    if let Some(rest) = text.strip_prefix(">raw ") {
        let parts = split_args(rest)?;
        return Ok(StepKind::Raw(parts.concat()));
    }
    if let Some(rest) = text.strip_prefix("> ") {
        let args = split_args(rest)?;
        if args.is_empty() {
            return Err(format!("line {line}: empty command"));
        }
        return Ok(StepKind::Cmd(args));
    }
    let d = text.trim_end();
    if let Some(name) = d.strip_prefix("@conn ") {
        return Ok(StepKind::Conn(name.trim().to_string()));
    }
    if d == "@closed" {
        return Ok(StepKind::Closed);
    }
    if d == "@read" {
        return Ok(StepKind::Read);
    }
    if let Some(ms) = d.strip_prefix("@sleep ") {
        let ms: u64 = ms
            .trim()
            .parse()
            .map_err(|_| format!("line {line}: @sleep wants milliseconds, got {ms:?}"))?;
        if ms > 10_000 {
            return Err(format!("line {line}: @sleep longer than 10 s"));
        }
        return Ok(StepKind::Sleep(ms));
    }
    Err(format!("unknown directive {d:?}"))
}

/// Split a reply line into its escaped text and its matcher annotation.
fn split_annotation(line: &str) -> Result<(&str, Option<Matcher>), String> {
    match line.find(" ~") {
        Some(p) => Ok((&line[..p], Some(Matcher::parse(&line[p + 2..])?))),
        None => Ok((line, None)),
    }
}

impl Doc {
    pub fn parse(path: &str, src: &str) -> Result<Doc, String> {
        let lines: Vec<&str> = src.lines().collect();
        let mut entries = Vec::new();
        let mut i = 0;
        let mut in_case = false;
        let err = |n: usize, m: String| format!("{path}:{n}: {m}");
        while i < lines.len() {
            let line = lines[i];
            let lineno = i + 1;
            match classify(line).map_err(|e| err(lineno, e))? {
                LineKind::Text => {
                    entries.push(Entry::Text(line.to_string()));
                    i += 1;
                }
                LineKind::Header(name) => {
                    if name.is_empty() {
                        return Err(err(lineno, "case without a name".into()));
                    }
                    in_case = true;
                    entries.push(Entry::Header { name, line: lineno });
                    i += 1;
                }
                LineKind::Frame => {
                    return Err(err(lineno, "a reply line with no command before it".into()))
                }
                LineKind::Step => {
                    if !in_case {
                        return Err(err(lineno, "a step before the first ### case:".into()));
                    }
                    let kind = parse_step(line, lineno).map_err(|e| err(lineno, e))?;
                    i += 1;
                    let mut frames = Vec::new();
                    while i < lines.len() && matches!(classify(lines[i]), Ok(LineKind::Frame)) {
                        let (e, next) = read_frame(&lines, i).map_err(|e| err(i + 1, e))?;
                        frames.push(e);
                        i = next;
                    }
                    match &kind {
                        StepKind::Cmd(_) if frames.len() > 1 => {
                            return Err(err(lineno, "a command has one reply".into()))
                        }
                        StepKind::Conn(_) | StepKind::Closed | StepKind::Sleep(_)
                            if !frames.is_empty() =>
                        {
                            return Err(err(lineno, "a directive has no reply".into()))
                        }
                        _ => {}
                    }
                    entries.push(Entry::Step(Step {
                        line: lineno,
                        text: line.to_string(),
                        kind,
                        frames,
                    }));
                }
            }
        }
        let mut names = std::collections::HashSet::new();
        for e in &entries {
            if let Entry::Header { name, line } = e {
                if !names.insert(name.clone()) {
                    return Err(err(*line, format!("duplicate case name {name:?}")));
                }
            }
        }
        Ok(Doc {
            path: path.to_string(),
            entries,
        })
    }

    pub fn render(&self) -> Result<String, String> {
        let mut out = String::new();
        for e in &self.entries {
            match e {
                Entry::Text(t) => {
                    out.push_str(t);
                    out.push('\n');
                }
                Entry::Header { name, .. } => {
                    let _ = writeln!(out, "### case: {name}");
                }
                Entry::Step(s) => {
                    out.push_str(&s.text);
                    out.push('\n');
                    for f in &s.frames {
                        for l in render_expected(f)
                            .map_err(|m| format!("{}:{}: {m}", self.path, s.line))?
                        {
                            out.push_str(&l);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Read one reply frame starting at `lines[i]`: lines are unescaped and joined with CRLF until
/// they form one complete RESP frame. Returns the reply and the index of the next line.
fn read_frame(lines: &[&str], mut i: usize) -> Result<(Expected, usize), String> {
    let mut bytes = Vec::new();
    let mut notes: Vec<(usize, Matcher)> = Vec::new();
    loop {
        let Some(line) = lines.get(i) else {
            return Err("the file ends inside a reply".into());
        };
        let (text, m) = split_annotation(line)?;
        if let Some(m) = m {
            notes.push((bytes.len(), m));
        }
        bytes.extend_from_slice(&unescape(text)?);
        bytes.extend_from_slice(b"\r\n");
        i += 1;
        match parse_frame(&bytes, 0) {
            Ok(n) if n.end == bytes.len() => {
                let mut matchers = Vec::new();
                for (off, m) in notes {
                    let path = path_at(&n, off, &mut Vec::new())
                        .ok_or("a matcher on a line where no reply element starts")?;
                    matchers.push((path, m));
                }
                return Ok((Expected { bytes, matchers }, i));
            }
            Ok(_) => return Err("reply lines do not form one RESP frame (check lengths)".into()),
            Err(ParseErr::Invalid(m)) => return Err(m),
            Err(ParseErr::Incomplete) => {}
        }
    }
}

fn path_at(n: &Node, off: usize, path: &mut Vec<usize>) -> Option<Vec<usize>> {
    if n.start == off {
        return Some(path.clone());
    }
    for (i, c) in n.children.iter().enumerate() {
        if off >= c.start && off < c.end {
            path.push(i);
            return path_at(c, off, path);
        }
    }
    None
}
