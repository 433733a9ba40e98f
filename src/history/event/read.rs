//! Reading JSON lines into a [`History`]: one pass over each line's members (no tree), a
//! connection's client object read once however often it recurs, and the error that names
//! the file and line of a bad one.

use super::store::{Interner, OpRec, Rec, RecKind, State, Sym};
use super::{Cause, ClientRef, History, HistoryError, OpKind, Proof};
use crate::history::json::{self, Val};
use std::borrow::Cow;
use std::path::Path;

impl History {
    /// Reads JSON lines: server events (lines with `"ev"`) and client ops (lines with
    /// `"op"`), in any mix; blank lines are skipped.
    ///
    /// ```
    /// let h = resplock::history::History::from_json_lines(
    ///     b"{\"op\":\"acquire\",\"client\":\"w1\",\"lock\":\"l\",\"invoke\":1,\"complete\":2,\"ok\":true}\n").unwrap();
    /// assert_eq!(h.op_count(), 1);
    /// ```
    pub fn from_json_lines(text: &[u8]) -> Result<History, HistoryError> {
        let mut h = History::new();
        h.add_json_lines(text)?;
        Ok(h)
    }

    /// Reads the files (JSON lines each) into one history.
    ///
    /// ```
    /// let dir = std::env::temp_dir().join(format!("resplock-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let f = dir.join("h.jsonl");
    /// std::fs::write(&f, "{\"ev\":\"fault\",\"t\":1,\"real\":1,\"text\":\"PAUSE 5\"}\n").unwrap();
    /// let h = resplock::history::History::load(&[&f]).unwrap();
    /// assert_eq!(h.len(), 1);
    /// std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<History, HistoryError> {
        let mut h = History::new();
        for p in paths {
            let p = p.as_ref();
            let text = std::fs::read(p).map_err(|e| HistoryError {
                file: p.display().to_string(),
                line: 0,
                message: e.to_string(),
            })?;
            h.add_json_lines(&text).map_err(|mut e| {
                e.file = p.display().to_string();
                e
            })?;
        }
        Ok(h)
    }

    /// Adds the JSON lines of `text` (see [`History::from_json_lines`]).
    ///
    /// ```
    /// let mut h = resplock::history::History::new();
    /// h.add_json_lines(b"{\"ev\":\"fault\",\"t\":1,\"real\":1,\"text\":\"CLEAR\"}").unwrap();
    /// assert_eq!(h.len(), 1);
    /// ```
    pub fn add_json_lines(&mut self, text: &[u8]) -> Result<(), HistoryError> {
        for (n, line) in text.split(|&c| c == b'\n').enumerate() {
            let trimmed = line.trim_ascii();
            if trimmed.is_empty() {
                continue;
            }
            let fail = |message: String| HistoryError {
                file: String::new(),
                line: n + 1,
                message,
            };
            self.add_json(trimmed).map_err(fail)?;
        }
        Ok(())
    }

    fn add_json(&mut self, text: &[u8]) -> Result<(), String> {
        let mut l = Line::default();
        json::members(text, |name, v| {
            l.set(name, v);
            Ok(())
        })?;
        if l.op.is_some() {
            return self.add_op_line(&l);
        }
        let ev =
            l.ev.take()
                .ok_or("neither \"ev\" (a server event) nor \"op\" (a client op)")?;
        let node = self.node_index(l.node.as_deref().unwrap_or_default());
        if &*ev == b"meta" {
            if let Some(raw) = l.nodes {
                let mut names = Vec::new();
                json::items(raw, |v| {
                    if let Some(b) = v.bytes() {
                        names.push(b.to_vec());
                    }
                    Ok(())
                })?;
                for n in names {
                    let i = self.node_index(&n);
                    if !self.meta_nodes.contains(&i) {
                        self.meta_nodes.push(i);
                    }
                }
            }
            self.dropped += l.dropped.unwrap_or(0).max(0) as u64;
            return Ok(());
        }
        let t = l.t.ok_or("an event without \"t\" (server time, µs)")?;
        let real = l.real.ok_or("an event without \"real\" (real time, µs)")?;
        let kind = match &*ev {
            b"key" => {
                let state = match (l.state.as_deref(), &l.owner) {
                    (Some(b"gone"), _) | (None, None) if l.fields.is_none() => State::Gone,
                    (Some(b"string") | None, Some(_)) => {
                        State::Str(sym(&mut self.strings, &l.owner))
                    }
                    (Some(b"string"), None) => {
                        return Err("a string state without \"owner\"".into())
                    }
                    (Some(b"hash") | None, _) => {
                        let mut f = Vec::new();
                        if let Some(raw) = l.fields {
                            let strings = &mut self.strings;
                            json::members(raw, |k, v| {
                                f.push((strings.intern(k), v.int().unwrap_or(0)));
                                Ok(())
                            })?;
                        }
                        State::Hash(f.into_boxed_slice())
                    }
                    (Some(b"other"), _) => State::Other(sym(&mut self.strings, &l.type_)),
                    (Some(x), _) => {
                        return Err(format!("unknown state \"{}\"", String::from_utf8_lossy(x)))
                    }
                };
                let cause = match l.cause.as_deref() {
                    None => Cause::Client,
                    Some(c) => Cause::parse(c).ok_or_else(|| {
                        format!("unknown cause \"{}\"", String::from_utf8_lossy(c))
                    })?,
                };
                let proof = match l.proof.as_deref() {
                    None => Proof::None,
                    Some(b"token") => Proof::Token,
                    Some(b"watch") => Proof::Watch,
                    Some(p) => {
                        return Err(format!("unknown proof \"{}\"", String::from_utf8_lossy(p)))
                    }
                };
                let key = l.key.as_deref().ok_or("a key event without \"key\"")?;
                let (command, script, function) = (
                    sym(&mut self.strings, &l.cmd),
                    sym(&mut self.strings, &l.sha),
                    sym(&mut self.strings, &l.fn_),
                );
                let lock = self.lock_id(l.db.unwrap_or(0).max(0) as u32, key);
                let client = self.client_val(node, l.client.as_ref())?;
                RecKind::Key {
                    lock,
                    cause,
                    client,
                    command,
                    script,
                    function,
                    state,
                    ttl_ms: l.ttl.unwrap_or(-1),
                    proof,
                    gap: l.gap.unwrap_or(false),
                }
            }
            b"clock" => RecKind::Clock {
                from: l.from.ok_or("a clock event without \"from\"")?,
                to: l.to.ok_or("a clock event without \"to\"")?,
                frozen: l.frozen.unwrap_or(false),
                how: sym(&mut self.strings, &l.how),
            },
            b"restart" => RecKind::Restart {
                mode: sym(&mut self.strings, &l.mode),
            },
            b"fault" => RecKind::Fault {
                text: sym(&mut self.strings, &l.text),
            },
            b"fenced" => {
                if l.resource.is_none() {
                    return Err("a fenced write without \"resource\"".into());
                }
                let (resource, value) = (
                    sym(&mut self.strings, &l.resource),
                    sym(&mut self.strings, &l.value),
                );
                RecKind::Fenced {
                    resource,
                    token: l
                        .token
                        .as_ref()
                        .and_then(Val::int)
                        .ok_or("a fenced write without \"token\"")?,
                    value,
                    accepted: l.accepted.unwrap_or(true),
                    client: self.client_val(node, l.client.as_ref())?,
                }
            }
            other => {
                return Err(format!(
                    "unknown event \"{}\"",
                    String::from_utf8_lossy(other)
                ))
            }
        };
        let seq = self.seq_for(node, l.seq.unwrap_or(0).max(0) as u64);
        self.recs.push(Rec {
            node,
            seq,
            t,
            real,
            kind,
        });
        Ok(())
    }

    /// A `client` member: an id, or `{"id", "name", "addr", "user"}`.
    fn client_val(&mut self, node: u16, v: Option<&Val<'_>>) -> Result<Option<u32>, String> {
        let c = match v {
            None | Some(Val::Null) => return Ok(None),
            Some(Val::Int(id)) => ClientRef {
                id: (*id).max(0) as u64,
                ..ClientRef::default()
            },
            Some(Val::Obj(raw)) => {
                // Each connection's object recurs on every event it made: read it once.
                let text = self.strings.intern(raw);
                if let Some(&c) = self.raw_clients.get(&(node, text)) {
                    return Ok(Some(c));
                }
                let mut c = ClientRef::default();
                json::members(raw, |k, v| {
                    let text =
                        || String::from_utf8_lossy(v.bytes().unwrap_or_default()).into_owned();
                    match k {
                        b"id" => c.id = v.int().unwrap_or(0).max(0) as u64,
                        b"name" => c.name = text(),
                        b"addr" => c.addr = text(),
                        b"user" => c.user = text(),
                        _ => {}
                    }
                    Ok(())
                })?;
                let id = self.client_id(node, c);
                self.raw_clients.insert((node, text), id);
                return Ok(Some(id));
            }
            Some(_) => return Err("\"client\" is neither an id nor an object".into()),
        };
        Ok(Some(self.client_id(node, c)))
    }

    fn add_op_line(&mut self, l: &Line<'_>) -> Result<(), String> {
        let op = match l.op.as_deref() {
            Some(b"acquire") => OpKind::Acquire,
            Some(b"release") => OpKind::Release,
            Some(b"extend") => OpKind::Extend,
            Some(b"use") | Some(b"use-resource") => OpKind::Use,
            Some(o) => return Err(format!("unknown op \"{}\"", String::from_utf8_lossy(o))),
            None => return Err("\"op\" is not a string".into()),
        };
        let invoke = l.invoke.ok_or("an op without \"invoke\" (real time, µs)")?;
        let complete = l.complete.as_ref().and_then(Val::int);
        if complete.is_some_and(|c| c < invoke) {
            return Err("an op that completed before it was invoked".into());
        }
        let client = match &l.client {
            Some(Val::Str(s)) => s,
            _ => return Err("an op without \"client\" (a name)".into()),
        };
        let lock = l.lock.as_deref().ok_or("an op without \"lock\"")?;
        let mut nodes = Vec::new();
        if let Some(raw) = l.nodes {
            let mut names = Vec::new();
            json::items(raw, |v| {
                if let Some(b) = v.bytes() {
                    names.push(b.to_vec());
                }
                Ok(())
            })?;
            nodes = names.iter().map(|n| self.node_index(n)).collect();
        } else if let Some(n) = &l.node {
            nodes.push(self.node_index(n));
        }
        let token = match &l.token {
            Some(Val::Str(t)) if !t.is_empty() => self.strings.intern(t),
            _ => self.strings.intern(client),
        };
        let rec = OpRec {
            client: self.strings.intern(client),
            lock: self.lock_id(l.db.unwrap_or(0).max(0) as u32, lock),
            op,
            invoke,
            complete: complete.unwrap_or(i64::MAX),
            ok: l.ok.as_ref().and_then(Val::bool),
            token,
            ttl_ms: l.ttl,
            add_ms: l.add,
            nodes,
            resource: self
                .strings
                .intern(l.resource.as_deref().unwrap_or_default()),
            fence: l.fence,
        };
        self.ops.push(rec);
        Ok(())
    }
}

fn sym(strings: &mut Interner, b: &Option<Cow<'_, [u8]>>) -> Sym {
    strings.intern(b.as_deref().unwrap_or_default())
}

/// The members of one line, as read.
#[derive(Default)]
struct Line<'a> {
    ev: Option<Cow<'a, [u8]>>,
    op: Option<Cow<'a, [u8]>>,
    node: Option<Cow<'a, [u8]>>,
    seq: Option<i64>,
    t: Option<i64>,
    real: Option<i64>,
    db: Option<i64>,
    key: Option<Cow<'a, [u8]>>,
    cause: Option<Cow<'a, [u8]>>,
    client: Option<Val<'a>>,
    cmd: Option<Cow<'a, [u8]>>,
    sha: Option<Cow<'a, [u8]>>,
    fn_: Option<Cow<'a, [u8]>>,
    state: Option<Cow<'a, [u8]>>,
    owner: Option<Cow<'a, [u8]>>,
    fields: Option<&'a [u8]>,
    type_: Option<Cow<'a, [u8]>>,
    ttl: Option<i64>,
    proof: Option<Cow<'a, [u8]>>,
    gap: Option<bool>,
    from: Option<i64>,
    to: Option<i64>,
    frozen: Option<bool>,
    how: Option<Cow<'a, [u8]>>,
    mode: Option<Cow<'a, [u8]>>,
    text: Option<Cow<'a, [u8]>>,
    resource: Option<Cow<'a, [u8]>>,
    token: Option<Val<'a>>,
    value: Option<Cow<'a, [u8]>>,
    accepted: Option<bool>,
    nodes: Option<&'a [u8]>,
    dropped: Option<i64>,
    lock: Option<Cow<'a, [u8]>>,
    invoke: Option<i64>,
    complete: Option<Val<'a>>,
    ok: Option<Val<'a>>,
    add: Option<i64>,
    fence: Option<i64>,
}

impl<'a> Line<'a> {
    fn set(&mut self, name: &[u8], v: Val<'a>) {
        let s = |v: Val<'a>| match v {
            Val::Str(s) => Some(s),
            _ => None,
        };
        match name {
            b"ev" => self.ev = s(v),
            b"op" => self.op = s(v),
            b"node" => self.node = s(v),
            b"seq" => self.seq = v.int(),
            b"t" => self.t = v.int(),
            b"real" => self.real = v.int(),
            b"db" => self.db = v.int(),
            b"key" => self.key = s(v),
            b"cause" => self.cause = s(v),
            b"client" => self.client = Some(v),
            b"cmd" => self.cmd = s(v),
            b"sha" => self.sha = s(v),
            b"fn" => self.fn_ = s(v),
            b"state" => self.state = s(v),
            b"owner" => self.owner = s(v),
            b"fields" => {
                if let Val::Obj(raw) = v {
                    self.fields = Some(raw)
                }
            }
            b"type" => self.type_ = s(v),
            b"ttl" => self.ttl = v.int(),
            b"proof" => self.proof = s(v),
            b"gap" => self.gap = v.bool(),
            b"from" => self.from = v.int(),
            b"to" => self.to = v.int(),
            b"frozen" => self.frozen = v.bool(),
            b"how" => self.how = s(v),
            b"mode" => self.mode = s(v),
            b"text" => self.text = s(v),
            b"resource" => self.resource = s(v),
            b"token" => self.token = Some(v),
            b"value" => self.value = s(v),
            b"accepted" => self.accepted = v.bool(),
            b"nodes" => {
                if let Val::Arr(raw) = v {
                    self.nodes = Some(raw)
                }
            }
            b"dropped" => self.dropped = v.int(),
            b"lock" => self.lock = s(v),
            b"invoke" => self.invoke = v.int(),
            b"complete" => self.complete = Some(v),
            b"ok" => self.ok = Some(v),
            b"add" => self.add = v.int(),
            b"fence" => self.fence = v.int(),
            _ => {}
        }
    }
}
