//! Running generated steps against both servers: one session (a connection to each, plus an
//! auxiliary one for the lookups some comparisons need), the fresh state every seed and every
//! replay starts from, shrinking a divergence to a minimal sequence, and printing it as a
//! conformance case.

use super::classic::Norm;
use super::conn::Conn;
use super::norm::{same, Facts};
use super::resp::{case_cmd, parse, show, show_cmd, V};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

/// One generated command and how its reply is compared.
#[derive(Clone, Debug)]
pub struct Step {
    pub args: Vec<Vec<u8>>,
    pub norm: Norm,
    /// The family it counts in (COMMAND DOCS's group).
    pub family: String,
    /// What DIFF_EXCLUDE matches: the command's name, or the classic grammar's tag.
    pub tag: String,
}

/// Where a step's replies disagreed.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub index: usize,
    pub redis: Vec<u8>,
    pub ours: Vec<u8>,
}

/// The reference's defaults of the CONFIG parameters the generator may set, restored before
/// every seed and replay.
pub async fn config_defaults(redis: &mut Conn) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (p, _) in super::gen::CONFIG_SAFE {
        let r = parse(&redis.cmd(&["CONFIG", "GET", p]).await);
        if let Some(v) = r.as_ref().and_then(|r| r.items()).and_then(|i| i.get(1)) {
            out.push((p.to_string(), v.text().unwrap_or_default().to_vec()));
        }
    }
    out
}

/// Back to the state a seed starts from: no keys, scripts, functions, extra users, logs, and
/// the default configuration. Returns the replies that were not OK (none expected).
pub async fn reset(c: &mut Conn, defaults: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut bad = Vec::new();
    let mut cmds: Vec<Vec<Vec<u8>>> = vec![
        vec![b"CLIENT".to_vec(), b"UNPAUSE".to_vec()],
        vec![b"FLUSHALL".to_vec()],
        vec![b"SCRIPT".to_vec(), b"FLUSH".to_vec()],
        vec![b"FUNCTION".to_vec(), b"FLUSH".to_vec()],
        vec![b"ACL".to_vec(), b"LOG".to_vec(), b"RESET".to_vec()],
        vec![b"SLOWLOG".to_vec(), b"RESET".to_vec()],
        vec![b"CONFIG".to_vec(), b"RESETSTAT".to_vec()],
    ];
    for (p, v) in defaults {
        cmds.push(vec![
            b"CONFIG".to_vec(),
            b"SET".to_vec(),
            p.as_bytes().to_vec(),
            v.clone(),
        ]);
    }
    for cmd in &cmds {
        let r = c.call(cmd).await;
        if r != b"+OK\r\n" {
            bad.push(format!("{} -> {}", show_cmd(cmd), show(&r)));
        }
    }
    // Every user but default goes; default gets its initial rules back.
    if let Some(users) = parse(&c.cmd(&["ACL", "USERS"]).await) {
        for u in users.items().unwrap_or_default() {
            if let Some(name) = u.text().filter(|n| *n != b"default") {
                c.call(&[b"ACL".to_vec(), b"DELUSER".to_vec(), name.to_vec()])
                    .await;
            }
        }
    }
    let r = c
        .cmd(&[
            "ACL", "SETUSER", "default", "reset", "on", "nopass", "~*", "&*", "+@all",
        ])
        .await;
    if r != b"+OK\r\n" {
        bad.push(format!("ACL SETUSER default reset -> {}", show(&r)));
    }
    bad
}

/// A connection to each server and what the comparisons track about them.
pub struct Session {
    pub r: Conn,
    pub o: Conn,
    r_aux: Conn,
    o_aux: Conn,
    pub db: u8,
    pub resp3: bool,
    /// Arguments sent so far (for DBSIZE's recount).
    seen: BTreeSet<Vec<u8>>,
    /// Inside MULTI: the norms of the queued commands, for EXEC's reply.
    multi: Option<Vec<(Vec<Vec<u8>>, Norm)>>,
}

impl Session {
    pub async fn open(redis: SocketAddr, ours: SocketAddr, resp3: bool) -> Session {
        let mut s = Session {
            r: Conn::open(redis).await,
            o: Conn::open(ours).await,
            r_aux: Conn::open(redis).await,
            o_aux: Conn::open(ours).await,
            db: 0,
            resp3,
            seen: BTreeSet::new(),
            multi: None,
        };
        if resp3 {
            s.r.cmd(&["HELLO", "3"]).await;
            s.o.cmd(&["HELLO", "3"]).await;
        }
        s
    }

    /// Whether the reference has a transaction open on the main connection.
    pub fn in_multi(&self) -> bool {
        self.multi.is_some()
    }

    /// Reopen a connection the server closed, in the session's protocol and database.
    async fn heal(&mut self) {
        for (c, main) in [
            (&mut self.r, true),
            (&mut self.o, true),
            (&mut self.r_aux, false),
            (&mut self.o_aux, false),
        ] {
            if c.is_closed() {
                *c = Conn::open(c.addr).await;
                if main && self.resp3 {
                    c.cmd(&["HELLO", "3"]).await;
                }
                if main && self.db != 0 {
                    c.cmd(&["SELECT", &self.db.to_string()]).await;
                }
            }
        }
    }

    /// The reply to the command just sent: pushes (RESP3 `>`) that come first are kept with it.
    async fn reply(c: &mut Conn) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..16 {
            let f = c.reply().await;
            let push = f.first() == Some(&b'>');
            out.extend_from_slice(&f);
            if !push {
                break;
            }
        }
        out
    }

    /// Run one step on both servers; the two replies and whether they agree.
    pub async fn exec(
        &mut self,
        step: &Step,
        missing: &BTreeSet<String>,
    ) -> (Vec<u8>, Vec<u8>, bool) {
        for a in &step.args {
            if a.len() <= 128 {
                self.seen.insert(a.clone());
            }
        }
        self.r.send(&step.args).await;
        self.o.send(&step.args).await;
        let (ra, rb) = tokio::join!(Self::reply(&mut self.r), Self::reply(&mut self.o));
        let ok = self.judge(step, &ra, &rb, missing).await;
        self.track(step, &ra);
        self.heal().await;
        self.resync_random_pop(step, &ra).await;
        (ra, rb, ok)
    }

    /// SPOP removes members picked at random (redis-server's random, not resplock's): the two
    /// sets then differ by chance, and every later command on the key would diverge (seed 39:
    /// SINTER after SPOP). The popped key is copied from the reference to resplock (DUMP, PTTL,
    /// RESTORE REPLACE), so the rest of the run compares what the grammar did, not the dice.
    async fn resync_random_pop(&mut self, step: &Step, ra: &[u8]) {
        let (Some(name), Some(key)) = (step.args.first(), step.args.get(1)) else {
            return;
        };
        // Only a pop that ran (not one queued, nor an error: the key is then as it was).
        if !name.eq_ignore_ascii_case(b"SPOP") || self.multi.is_some() || ra.first() == Some(&b'-')
        {
            return;
        }
        let db = self.db.to_string();
        self.r_aux.cmd(&["SELECT", &db]).await;
        self.o_aux.cmd(&["SELECT", &db]).await;
        let dump = self.r_aux.call(&[b"DUMP".to_vec(), key.clone()]).await;
        let payload = match parse(&dump) {
            Some(v) => v.text().map(|t| t.to_vec()),
            None => return,
        };
        let Some(payload) = payload else {
            self.o_aux.call(&[b"DEL".to_vec(), key.clone()]).await;
            return;
        };
        let pttl = parse(&self.r_aux.call(&[b"PTTL".to_vec(), key.clone()]).await)
            .as_ref()
            .and_then(super::resp::int_of)
            .unwrap_or(-1)
            .max(0);
        self.o_aux
            .call(&[
                b"RESTORE".to_vec(),
                key.clone(),
                pttl.to_string().into_bytes(),
                payload,
                b"REPLACE".to_vec(),
            ])
            .await;
    }

    /// What a successful command changed in the connection's state.
    fn track(&mut self, step: &Step, ra: &[u8]) {
        let name = step
            .args
            .first()
            .map(|n| n.to_ascii_uppercase())
            .unwrap_or_default();
        let ok = ra == b"+OK\r\n";
        match name.as_slice() {
            b"SELECT" | b"HELLO" if self.multi.is_none() => self.took_effect(&step.args, ra),
            b"RESET" => {
                self.db = 0;
                self.resp3 = false;
                self.multi = None;
            }
            b"MULTI" if ok => self.multi = Some(Vec::new()),
            b"EXEC" => {
                // A SELECT or HELLO the transaction ran changes the connection from then on.
                if let (Some(q), Some(v)) = (self.multi.take(), parse(ra)) {
                    for ((args, _), e) in q.iter().zip(v.items().unwrap_or_default()) {
                        self.took_effect(args, &super::resp::encode(e));
                    }
                }
            }
            b"DISCARD" => self.multi = None,
            _ => {
                if let Some(q) = self.multi.as_mut() {
                    if ra == b"+QUEUED\r\n" {
                        q.push((step.args.clone(), step.norm));
                    } else if name != b"WATCH" && name != b"MULTI" {
                        // A refused command flags the transaction; EXEC will abort it.
                    }
                }
            }
        }
    }

    /// A SELECT or HELLO that succeeded (reply `ra`, also as an element of EXEC's reply)
    /// changes the database or protocol the later commands see.
    fn took_effect(&mut self, args: &[Vec<u8>], ra: &[u8]) {
        let name = args
            .first()
            .map(|n| n.to_ascii_uppercase())
            .unwrap_or_default();
        if name == b"SELECT" && ra == b"+OK\r\n" {
            // Databases 10..15 too (not just the first digit).
            self.db = args
                .get(1)
                .and_then(|d| std::str::from_utf8(d).ok()?.trim().parse().ok())
                .unwrap_or(0);
        } else if name == b"HELLO" && (ra.first() == Some(&b'%') || ra.first() == Some(&b'*')) {
            if let Some(p) = args.get(1) {
                self.resp3 = p == b"3";
            }
        }
    }

    async fn judge(
        &mut self,
        step: &Step,
        ra: &[u8],
        rb: &[u8],
        missing: &BTreeSet<String>,
    ) -> bool {
        if ra == rb {
            return true;
        }
        let name = step.args[0].to_ascii_uppercase();
        if name == b"EXEC" {
            if let Some(q) = self.multi.clone() {
                return self.judge_exec(&q, ra, rb, missing).await;
            }
        }
        self.judge_one(&step.args, step.norm, ra, rb, missing, false)
            .await
    }

    /// One reply under its norm; `in_exec`: an element of EXEC's reply, judged after the whole
    /// transaction ran.
    async fn judge_one(
        &mut self,
        args: &[Vec<u8>],
        norm: Norm,
        ra: &[u8],
        rb: &[u8],
        missing: &BTreeSet<String>,
        in_exec: bool,
    ) -> bool {
        let mut facts = Facts {
            unshared: missing,
            encoding: None,
        };
        match norm {
            Norm::DbSize => return self.recount().await,
            Norm::Scan => return self.scan_agrees(args, ra, rb).await,
            Norm::HashOrder | Norm::HScan | Norm::SortOrder | Norm::DumpOrder => {
                if let Some(k) = args.get(1) {
                    self.r_aux.cmd(&["SELECT", &self.db.to_string()]).await;
                    let e = self
                        .r_aux
                        .call(&[b"OBJECT".to_vec(), b"ENCODING".to_vec(), k.clone()])
                        .await;
                    facts.encoding = parse(&e).and_then(|v| v.text().map(|t| t.to_vec()));
                    // A later command of the same transaction deleted the key (HSCAN h 0, then
                    // FLUSHDB, in seed 17): its encoding when the command ran is unknown, so
                    // its order is not held against resplock.
                    if in_exec && facts.encoding.is_none() {
                        facts.encoding = Some(b"hashtable".to_vec());
                    }
                }
            }
            _ => {}
        }
        same(norm, args, ra, rb, &facts)
    }

    /// EXEC: element by element, each under its queued command's norm.
    async fn judge_exec(
        &mut self,
        queued: &[(Vec<Vec<u8>>, Norm)],
        ra: &[u8],
        rb: &[u8],
        missing: &BTreeSet<String>,
    ) -> bool {
        let (Some(a), Some(b)) = (parse(ra), parse(rb)) else {
            return false;
        };
        match (a.items(), b.items()) {
            (Some(x), Some(y))
                if x.len() == y.len() && x.len() == queued.len() && a.ty() == b.ty() =>
            {
                // Each element is judged in the database its command ran in (a SELECT
                // queued earlier changed it); `track` then settles the state after EXEC.
                let (db, resp3) = (self.db, self.resp3);
                let mut agree = true;
                for ((args, norm), (ea, eb)) in queued.iter().zip(x.iter().zip(y.iter())) {
                    let (ea, eb) = (super::resp::encode(ea), super::resp::encode(eb));
                    if ea != eb && !self.judge_one(args, *norm, &ea, &eb, missing, true).await {
                        agree = false;
                        break;
                    }
                    self.took_effect(args, &ea);
                }
                (self.db, self.resp3) = (db, resp3);
                agree
            }
            _ => false,
        }
    }

    /// SCAN 0: redis finishes in one call while the database holds fewer keys than COUNT, so
    /// then the keys (in any order) must agree, resplock's later pages included if a key
    /// past its TTL ended its first page early; with more, which keys come first is its
    /// dict's layout and only the shape is compared.
    async fn scan_agrees(&mut self, args: &[Vec<u8>], ra: &[u8], rb: &[u8]) -> bool {
        let mut count = 10u64;
        for w in args.windows(2) {
            if w[0].eq_ignore_ascii_case(b"COUNT") {
                if let Some(n) = std::str::from_utf8(&w[1]).ok().and_then(|s| s.parse().ok()) {
                    count = n;
                }
            }
        }
        self.r_aux.cmd(&["SELECT", &self.db.to_string()]).await;
        let size = parse(&self.r_aux.cmd(&["DBSIZE"]).await)
            .as_ref()
            .and_then(super::resp::int_of)
            .unwrap_or(i64::MAX);
        let (Some(a), Some(b)) = (parse(ra), parse(rb)) else {
            return false;
        };
        match (a.items(), b.items()) {
            // A page that redis ended (cursor 0) must be the whole set on both sides; one it
            // did not end (a logically expired key still in its dict, a rehash) only has the
            // shape to compare.
            // A scan from another cursor sees the keys of the buckets after it: the dict's
            // layout, random per start of redis-server (see `scan_same`).
            (Some([ca, ea]), Some([cb, eb]))
                if (size as u64) < count
                    && ca.text() == Some(&b"0"[..])
                    && args.get(1).is_some_and(|c| c == b"0") =>
            {
                let (Some(x), Some(y)) = (ea.items(), eb.items()) else {
                    return false;
                };
                let mut x = x.to_vec();
                let mut y = y.to_vec();
                // resplock's page may end before the last key when a key past its TTL, not
                // reclaimed yet, filled a place of COUNT (as in Redis's scan loop; whether
                // redis's did is its dict's order, seed 6): its whole iteration must then
                // give the same keys.
                if cb.text() != Some(&b"0"[..]) {
                    let Some(rest) = self.scan_rest(args, cb).await else {
                        return false;
                    };
                    y.extend(rest);
                }
                x.sort();
                y.sort();
                x == y
            }
            (Some([_, _]), Some([_, _])) => true,
            _ => false,
        }
    }

    /// The keys of resplock's later pages of the scan `args` from `cursor` to its end (at
    /// most 64 pages), or None if a reply is not a page.
    async fn scan_rest(
        &mut self,
        args: &[Vec<u8>],
        cursor: &super::resp::V,
    ) -> Option<Vec<super::resp::V>> {
        let mut cursor = cursor.text()?.to_vec();
        let mut keys = Vec::new();
        self.o_aux.cmd(&["SELECT", &self.db.to_string()]).await;
        for _ in 0..64 {
            let mut next = args.to_vec();
            next[1] = cursor;
            let page = parse(&self.o_aux.call(&next).await)?;
            let [c, items] = page.items()? else {
                return None;
            };
            keys.extend(items.items()?.iter().cloned());
            cursor = c.text()?.to_vec();
            if cursor == b"0" {
                return Some(keys);
            }
        }
        None
    }

    /// DBSIZE disagreed: a key SET with a past time stays counted until looked up; look every
    /// argument sent up on both sides, then count again.
    async fn recount(&mut self) -> bool {
        let mut counts = Vec::new();
        let db = self.db.to_string();
        for c in [&mut self.r_aux, &mut self.o_aux] {
            c.cmd(&["SELECT", &db]).await;
            let mut exists = vec![b"EXISTS".to_vec()];
            exists.extend(self.seen.iter().cloned());
            c.call(&exists).await;
            counts.push(c.cmd(&["DBSIZE"]).await);
        }
        counts[0] == counts[1]
    }
}

/// Run `steps` from a fresh state (the reference reset, resplock `ours` new); the first step
/// whose replies disagree.
pub async fn replay(
    redis: SocketAddr,
    ours: SocketAddr,
    defaults: &[(String, Vec<u8>)],
    resp3: bool,
    steps: &[Step],
    missing: &BTreeSet<String>,
) -> (Option<Mismatch>, Vec<Vec<u8>>) {
    let mut rc = Conn::open(redis).await;
    reset(&mut rc, defaults).await;
    let mut oc = Conn::open(ours).await;
    reset(&mut oc, defaults).await;
    let mut s = Session::open(redis, ours, resp3).await;
    let mut replies = Vec::new();
    for (i, st) in steps.iter().enumerate() {
        let (ra, rb, ok) = s.exec(st, missing).await;
        replies.push(ra.clone());
        if !ok {
            return (
                Some(Mismatch {
                    index: i,
                    redis: ra,
                    ours: rb,
                }),
                replies,
            );
        }
    }
    (None, replies)
}

/// Delta debugging (ddmin) of `steps` down to a short sequence that still diverges, within
/// `budget` replays. `diverges` replays a candidate and says where it diverged.
pub async fn shrink<F, Fut>(steps: Vec<Step>, budget: usize, mut diverges: F) -> Vec<Step>
where
    F: FnMut(Vec<Step>) -> Fut,
    Fut: std::future::Future<Output = Option<usize>>,
{
    let mut cur = steps;
    let mut runs = 0;
    let mut n = 2usize;
    while cur.len() >= 2 && runs < budget {
        let chunk = cur.len().div_ceil(n);
        let mut reduced = false;
        let mut start = 0;
        while start < cur.len() && runs < budget {
            let end = (start + chunk).min(cur.len());
            let mut cand: Vec<Step> = cur[..start].to_vec();
            cand.extend_from_slice(&cur[end..]);
            if cand.is_empty() {
                start = end;
                continue;
            }
            runs += 1;
            if let Some(at) = diverges(cand.clone()).await {
                cand.truncate(at + 1);
                cur = cand;
                n = (n - 1).max(2);
                reduced = true;
                break;
            }
            start = end;
        }
        if !reduced {
            if n >= cur.len() {
                break;
            }
            n = (n * 2).min(cur.len());
        }
    }
    cur
}

/// The steps as a `.case` file's case, with the reference's replies (matchers where they
/// vary).
pub fn as_case(title: &str, resp3: bool, steps: &[Step], replies: &[Vec<u8>]) -> String {
    let mut out = format!("### case: {title}\n");
    if resp3 {
        out.push_str("> HELLO 3\n%7 ~any\n");
    }
    for (st, r) in steps.iter().zip(replies) {
        out.push_str(&format!("> {}\n", case_cmd(&st.args)));
        let matcher = match st.norm {
            Norm::Exact | Norm::DbSize => None,
            Norm::Ttl => Some("~int"),
            Norm::Unordered | Norm::HashOrder | Norm::CommandTable => Some("~unordered"),
            _ => Some("~any"),
        };
        for (i, frame) in super::norm::frames(r).iter().enumerate() {
            let e = crate::format::Expected {
                bytes: frame.clone(),
                matchers: Vec::new(),
            };
            let lines = crate::format::render_expected(&e).unwrap_or_else(|e| vec![e]);
            for (j, l) in lines.iter().enumerate() {
                match (i, j, matcher) {
                    (0, 0, Some(m)) => out.push_str(&format!("{l} {m}\n")),
                    _ => out.push_str(&format!("{l}\n")),
                }
            }
        }
    }
    out
}

/// The shape of a reply for the report (its first line).
pub fn head(b: &[u8]) -> String {
    let s = show(b);
    if s.len() > 300 {
        format!("{}... ({} bytes)", &s[..300], b.len())
    } else {
        s
    }
}

/// A short description of a step for the report.
pub fn describe(st: &Step) -> String {
    let s = show_cmd(&st.args);
    if s.len() > 300 {
        format!("{}... ({} args)", &s[..300], st.args.len())
    } else {
        s
    }
}

pub fn wait_ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// A reply's frame tree, if it parses.
pub fn tree(b: &[u8]) -> Option<V> {
    parse(b)
}
