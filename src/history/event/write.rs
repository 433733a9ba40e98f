//! Writing a [`History`] as JSON lines, the inverse of `read.rs`: what `resplock check`
//! reads, and what the server's recorder writes one event at a time (`write_rec`).

use super::store::{OpRec, Rec, RecKind, State, Sym};
use super::{History, Proof};
use crate::history::json::{self, ObjWriter};

impl History {
    /// The history as JSON lines (a meta line first when it names nodes or drops, then the
    /// events in order, then the client ops): what `resplock check` reads.
    ///
    /// ```
    /// use resplock::history::History;
    /// let text = b"{\"ev\":\"fault\",\"node\":\"n1\",\"seq\":1,\"t\":1,\"real\":2,\"text\":\"PAUSE 5\"}\n";
    /// let h = History::from_json_lines(text).unwrap();
    /// assert_eq!(h.to_json_lines(), text);
    /// ```
    pub fn to_json_lines(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.recs.len() * 160 + self.ops.len() * 140);
        if !self.meta_nodes.is_empty() || self.dropped > 0 {
            let mut w = ObjWriter::new(&mut out);
            w.str("ev", b"meta");
            let o = w.raw("nodes");
            o.push(b'[');
            for (i, n) in self.meta_nodes.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                json::write_str(o, self.strings.get(self.nodes[*n as usize]));
            }
            o.push(b']');
            w.int("dropped", self.dropped as i64);
            w.end();
            out.push(b'\n');
        }
        for r in &self.recs {
            self.write_rec(&mut out, r);
            out.push(b'\n');
        }
        for op in &self.ops {
            self.write_op(&mut out, op);
            out.push(b'\n');
        }
        out
    }

    fn write_client(&self, w: &mut ObjWriter<'_>, c: Option<u32>) {
        let Some(c) = c else { return };
        let c = &self.clients[c as usize].1;
        let o = w.raw("client");
        let mut cw = ObjWriter::new(o);
        cw.int("id", c.id as i64);
        if !c.name.is_empty() {
            cw.str("name", c.name.as_bytes());
        }
        if !c.addr.is_empty() {
            cw.str("addr", c.addr.as_bytes());
        }
        if !c.user.is_empty() {
            cw.str("user", c.user.as_bytes());
        }
        cw.end();
    }

    pub(crate) fn write_rec(&self, out: &mut Vec<u8>, r: &Rec) {
        let s = |x: Sym| self.strings.get(x);
        let mut w = ObjWriter::new(out);
        let ev: &[u8] = match r.kind {
            RecKind::Key { .. } => b"key",
            RecKind::Clock { .. } => b"clock",
            RecKind::Restart { .. } => b"restart",
            RecKind::Fault { .. } => b"fault",
            RecKind::Fenced { .. } => b"fenced",
        };
        w.str("ev", ev);
        let node = s(self.nodes[r.node as usize]);
        if !node.is_empty() {
            w.str("node", node);
        }
        w.int("seq", r.seq as i64).int("t", r.t).int("real", r.real);
        match &r.kind {
            RecKind::Key {
                lock,
                cause,
                client,
                command,
                script,
                function,
                state,
                ttl_ms,
                proof,
                gap,
            } => {
                let (db, key) = self.locks[*lock as usize];
                if db != 0 {
                    w.int("db", db as i64);
                }
                w.str("key", s(key));
                w.str("cause", cause.as_str().as_bytes());
                self.write_client(&mut w, *client);
                for (name, v) in [("cmd", command), ("sha", script), ("fn", function)] {
                    if !s(*v).is_empty() {
                        w.str(name, s(*v));
                    }
                }
                match state {
                    State::Gone => {
                        w.str("state", b"gone");
                    }
                    State::Str(o) => {
                        w.str("state", b"string").str("owner", s(*o));
                    }
                    State::Hash(fields) => {
                        w.str("state", b"hash");
                        let o = w.raw("fields");
                        let mut fw = ObjWriter::new(o);
                        for (f, c) in fields.iter() {
                            fw.int_named(s(*f), *c);
                        }
                        fw.end();
                    }
                    State::Other(t) => {
                        w.str("state", b"other").str("type", s(*t));
                    }
                }
                if !matches!(state, State::Gone) {
                    w.int("ttl", *ttl_ms);
                }
                match proof {
                    Proof::None => {}
                    Proof::Token => {
                        w.str("proof", b"token");
                    }
                    Proof::Watch => {
                        w.str("proof", b"watch");
                    }
                }
                if *gap {
                    w.bool("gap", true);
                }
            }
            RecKind::Clock {
                from,
                to,
                frozen,
                how,
            } => {
                w.int("from", *from).int("to", *to).bool("frozen", *frozen);
                if !s(*how).is_empty() {
                    w.str("how", s(*how));
                }
            }
            RecKind::Restart { mode } => {
                w.str("mode", s(*mode));
            }
            RecKind::Fault { text } => {
                w.str("text", s(*text));
            }
            RecKind::Fenced {
                resource,
                token,
                value,
                accepted,
                client,
            } => {
                w.str("resource", s(*resource))
                    .int("token", *token)
                    .str("value", s(*value))
                    .bool("accepted", *accepted);
                self.write_client(&mut w, *client);
            }
        }
        w.end();
    }

    fn write_op(&self, out: &mut Vec<u8>, op: &OpRec) {
        let s = |x: Sym| self.strings.get(x);
        let mut w = ObjWriter::new(out);
        w.str("op", op.op.as_str().as_bytes())
            .str("client", s(op.client));
        let (db, key) = self.locks[op.lock as usize];
        w.str("lock", s(key));
        if db != 0 {
            w.int("db", db as i64);
        }
        w.int("invoke", op.invoke);
        if op.complete != i64::MAX {
            w.int("complete", op.complete);
        }
        match op.ok {
            Some(ok) => w.bool("ok", ok),
            None => w.null("ok"),
        };
        if s(op.token) != s(op.client) {
            w.str("token", s(op.token));
        }
        if let Some(t) = op.ttl_ms {
            w.int("ttl", t);
        }
        if let Some(a) = op.add_ms {
            w.int("add", a);
        }
        if !op.nodes.is_empty() {
            let o = w.raw("nodes");
            o.push(b'[');
            for (i, n) in op.nodes.iter().enumerate() {
                if i > 0 {
                    o.push(b',');
                }
                json::write_str(o, s(self.nodes[*n as usize]));
            }
            o.push(b']');
        }
        if !s(op.resource).is_empty() {
            w.str("resource", s(op.resource));
        }
        if let Some(f) = op.fence {
            w.int("fence", f);
        }
        w.end();
    }
}
