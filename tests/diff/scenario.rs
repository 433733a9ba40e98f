//! Several connections at once: random scenarios where what one client does shows on another
//! (a transaction's WATCH broken by another client's write, a blocked pop served by another
//! client's push or CLIENT UNBLOCK, pub/sub messages, keyspace notifications, tracking
//! invalidations, CLIENT KILL/PAUSE/REPLY). Each step is one command on one connection; after
//! it, every connection that may receive something (subscribed, tracking, blocked) is read,
//! and the transcript (who got which frame, who was closed, who is still blocked) must be the
//! same on both servers. Client ids and addresses differ between the servers: commands name
//! them with placeholders filled per server, and replies carrying them are normalized.

use super::conn::{Conn, Got};
use super::gen::TableGen;
use super::resp::{case_cmd, encode, parse, show, V};
use super::spec::Spec;
use std::net::SocketAddr;
use std::time::Duration;

/// A placeholder for connection `i`'s client id in a command.
pub fn id_of(i: usize) -> Vec<u8> {
    format!("\u{1}ID{i}").into_bytes()
}

/// A placeholder for connection `i`'s address (`ip:port`) as the server sees it.
pub fn addr_of(i: usize) -> Vec<u8> {
    format!("\u{1}ADDR{i}").into_bytes()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A reply is expected at once.
    Reply,
    /// The command may block (or, after CLIENT REPLY OFF, not be answered): a short wait.
    MayBlock,
}

#[derive(Clone, Debug)]
pub struct Act {
    pub conn: usize,
    pub args: Vec<Vec<u8>>,
    pub wait: Wait,
    /// Written to the server's aclfile before the command is sent (ACL mode).
    pub write_file: Option<Vec<u8>>,
    /// After the reply, the server's aclfile is read and shown as a frame (ACL SAVE).
    pub read_file: bool,
    /// Only whether the reply is an error, and which, is compared (the command's reply is
    /// compared in full by the table-driven mode, where its normalization applies).
    pub loose: bool,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub kind: &'static str,
    /// RESP3 or not, per connection.
    pub resp3: Vec<bool>,
    pub acts: Vec<Act>,
}

/// What one step showed on one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Frame(usize, Vec<u8>),
    Closed(usize),
    /// The acting connection got no reply (blocked, paused, or replies switched off).
    Silent(usize),
}

/// One server's connections and what the executor knows about them.
pub struct Side {
    /// The server's aclfile (its path is replaced by `<aclfile>` in replies).
    aclfile: Option<std::path::PathBuf>,
    conns: Vec<Conn>,
    ids: Vec<Vec<u8>>,
    addrs: Vec<Vec<u8>>,
    pending: Vec<bool>,
    watched: Vec<bool>,
    dead: Vec<bool>,
}

fn field(info: &[u8], key: &str) -> Vec<u8> {
    let s = String::from_utf8_lossy(info);
    s.split(' ')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or("")
        .as_bytes()
        .to_vec()
}

impl Side {
    pub async fn open(
        addr: SocketAddr,
        resp3: &[bool],
        aclfile: Option<std::path::PathBuf>,
    ) -> Side {
        let mut s = Side {
            aclfile,
            conns: Vec::new(),
            ids: Vec::new(),
            addrs: Vec::new(),
            pending: vec![false; resp3.len()],
            watched: vec![false; resp3.len()],
            dead: vec![false; resp3.len()],
        };
        for &r3 in resp3 {
            let mut c = Conn::open(addr).await;
            if r3 {
                c.cmd(&["HELLO", "3"]).await;
            }
            let info = c.cmd(&["CLIENT", "INFO"]).await;
            let info = parse(&info)
                .and_then(|v| v.text().map(|t| t.to_vec()))
                .unwrap_or_default();
            s.ids.push(field(&info, "id"));
            s.addrs.push(field(&info, "addr"));
            s.conns.push(c);
        }
        s
    }

    fn subst(&self, args: &[Vec<u8>]) -> Vec<Vec<u8>> {
        args.iter()
            .map(|a| {
                if a.first() == Some(&1) {
                    let t = String::from_utf8_lossy(&a[1..]).into_owned();
                    if let Some(i) = t.strip_prefix("ID").and_then(|n| n.parse::<usize>().ok()) {
                        return self.ids.get(i).cloned().unwrap_or_default();
                    }
                    if let Some(i) = t.strip_prefix("ADDR").and_then(|n| n.parse::<usize>().ok()) {
                        return self.addrs.get(i).cloned().unwrap_or_default();
                    }
                }
                a.clone()
            })
            .collect()
    }

    /// A frame with this side's client ids and addresses replaced by their placeholders.
    fn normalize(&self, f: &[u8]) -> Vec<u8> {
        let Some(mut v) = parse(f) else {
            return f.to_vec();
        };
        fn walk(v: &mut V, ids: &[Vec<u8>], addrs: &[Vec<u8>]) {
            match v {
                V::Line(b':', t) | V::Bulk(_, Some(t)) | V::Line(b'+', t) => {
                    if let Some(i) = ids.iter().position(|id| id == t) {
                        *t = format!("<id{i}>").into_bytes();
                    } else if let Some(i) = addrs.iter().position(|a| a == t) {
                        *t = format!("<addr{i}>").into_bytes();
                    }
                }
                V::Agg(_, Some(items)) => {
                    for x in items {
                        walk(x, ids, addrs);
                    }
                }
                _ => {}
            }
        }
        walk(&mut v, &self.ids, &self.addrs);
        encode(&v)
    }

    /// Frames that arrive within `wait` (stops at the first gap of `wait`).
    async fn frames(&mut self, i: usize, wait: Duration, limit: usize) -> (Vec<Vec<u8>>, bool) {
        let mut out = Vec::new();
        for _ in 0..limit {
            match self.conns[i].frame(wait).await {
                Got::Frame(f) => out.push(f),
                Got::Nothing => return (out, false),
                Got::Closed => return (out, true),
            }
        }
        (out, false)
    }

    /// Send PING and take every frame up to its answer: what the connection was pushed.
    async fn sync(&mut self, i: usize, events: &mut Vec<Event>) {
        self.conns[i].send(&[b"PING".to_vec()]).await;
        for _ in 0..200 {
            match self.conns[i].frame(Duration::from_secs(2)).await {
                Got::Frame(f) => {
                    if f == b"+PONG\r\n" || f == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n" {
                        return;
                    }
                    events.push(Event::Frame(i, f));
                }
                Got::Nothing => {
                    events.push(Event::Silent(i));
                    return;
                }
                Got::Closed => {
                    self.dead[i] = true;
                    events.push(Event::Closed(i));
                    return;
                }
            }
        }
    }

    /// Run one step. `expect` is the reference's transcript of the same step (None when this
    /// is the reference): where it got a frame, this side waits longer for it.
    pub async fn step(&mut self, act: &Act, expect: Option<&[Event]>) -> Vec<Event> {
        let mut ev = Vec::new();
        let c = act.conn;
        if self.dead[c] || self.pending[c] {
            return ev;
        }
        let got_frame = |conn: usize| {
            expect.is_some_and(|e| {
                e.iter()
                    .any(|x| matches!(x, Event::Frame(i, _) if *i == conn))
            })
        };
        let args = self.subst(&act.args);
        if let (Some(text), Some(path)) = (&act.write_file, &self.aclfile) {
            std::fs::write(path, text).expect("aclfile written");
        }
        self.conns[c].send(&args).await;
        let short = Duration::from_millis(50);
        let wait = match (act.wait, expect) {
            (Wait::Reply, _) => Duration::from_secs(3),
            (Wait::MayBlock, Some(_)) if got_frame(c) => Duration::from_secs(3),
            (Wait::MayBlock, _) => short,
        };
        let up0 = act.args[0].to_ascii_uppercase();
        let subscribing = up0.ends_with(b"SUBSCRIBE");
        // Ids appear only in what these answer.
        let up1 = act
            .args
            .get(1)
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default();
        let ids = up0 == b"HELLO"
            || up0 == b"CLIENT"
                && matches!(
                    up1.as_slice(),
                    b"ID" | b"GETREDIR" | b"TRACKINGINFO" | b"INFO" | b"LIST"
                );
        // Channel lists come in dict order.
        let unordered = up0 == b"PUBSUB" && (up1 == b"CHANNELS" || up1 == b"SHARDCHANNELS");
        // The reply, after any RESP3 pushes that come first (a (un)subscription's answer is
        // itself a push in RESP3: its first frame is taken, the others by the sync below).
        loop {
            match self.conns[c].frame(wait).await {
                Got::Frame(f) => {
                    let push = f.first() == Some(&b'>');
                    let f = if ids { self.normalize(&f) } else { f };
                    let f = if unordered { sorted_frame(&f) } else { f };
                    let f = self.neutral(&up0, &up1, act.loose, f);
                    ev.push(Event::Frame(c, f));
                    if !push || subscribing {
                        break;
                    }
                }
                Got::Nothing => {
                    self.pending[c] = true;
                    ev.push(Event::Silent(c));
                    break;
                }
                Got::Closed => {
                    self.dead[c] = true;
                    ev.push(Event::Closed(c));
                    break;
                }
            }
        }
        self.track(c, &act.args);
        if act.read_file {
            if let Some(path) = &self.aclfile {
                let text = std::fs::read(path).unwrap_or_else(|e| e.to_string().into_bytes());
                ev.push(Event::Frame(
                    c,
                    sorted_command_rules(&encode(&V::bulk(&text))),
                ));
            }
        }
        // Blocked connections: served (or closed) now?
        for i in 0..self.conns.len() {
            if i == c || !self.pending[i] || self.dead[i] {
                continue;
            }
            let w = if got_frame(i) {
                Duration::from_secs(3)
            } else {
                Duration::from_millis(15)
            };
            let (fs, closed) = self.frames(i, w, 1).await;
            for f in fs {
                self.pending[i] = false;
                ev.push(Event::Frame(i, f));
            }
            if closed {
                self.dead[i] = true;
                ev.push(Event::Closed(i));
            }
        }
        // Connections that may have been pushed something.
        for i in 0..self.conns.len() {
            if self.watched[i] && !self.pending[i] && !self.dead[i] {
                self.sync(i, &mut ev).await;
            }
        }
        ev
    }

    /// A reply without what differs between the servers by nature: the aclfile's path, ACL
    /// LOG's ages and client details, the order of ACL CAT's commands; for a loose step only
    /// whether it failed and how.
    fn neutral(&self, up0: &[u8], up1: &[u8], loose: bool, f: Vec<u8>) -> Vec<u8> {
        if loose && f.first() != Some(&b'-') && f.first() != Some(&b'!') {
            return b"+<not an error>\r\n".to_vec();
        }
        let mut f = f;
        if let Some(p) = &self.aclfile {
            let p = p.to_string_lossy().into_owned().into_bytes();
            // Bulk lengths would be off: only error lines carry the path.
            while let Some(at) = f.windows(p.len()).position(|w| w == p.as_slice()) {
                let mut out = f[..at].to_vec();
                out.extend_from_slice(b"<aclfile>");
                out.extend_from_slice(&f[at + p.len()..]);
                f = out;
            }
        }
        if self.aclfile.is_some() {
            f = sorted_command_rules(&f);
        }
        if up0 == b"ACL" && up1 == b"LOG" {
            if let Some(mut v) = parse(&f) {
                super::norm::strip_acl_log(&mut v);
                f = encode(&v);
            }
        }
        if up0 == b"ACL" && up1 == b"CAT" {
            f = sorted_frame(&f);
        }
        f
    }

    fn track(&mut self, c: usize, args: &[Vec<u8>]) {
        let up = |i: usize| {
            args.get(i)
                .map(|a| a.to_ascii_uppercase())
                .unwrap_or_default()
        };
        match up(0).as_slice() {
            b"SUBSCRIBE" | b"PSUBSCRIBE" | b"SSUBSCRIBE" => self.watched[c] = true,
            b"CLIENT" if up(1) == b"TRACKING" && up(2) == b"ON" => self.watched[c] = true,
            b"RESET" => self.watched[c] = false,
            _ => {}
        }
    }
}

/// An array reply with its elements sorted.
fn sorted_frame(f: &[u8]) -> Vec<u8> {
    match parse(f) {
        Some(V::Agg(t, Some(mut items))) => {
            items.sort();
            encode(&V::Agg(t, Some(items)))
        }
        _ => f.to_vec(),
    }
}

/// ACL descriptions with each run of single-command rules (`+get -set +select|0`) sorted:
/// redis-server lists them in its command dict's order, which changes with every start (the
/// set of rules does not). Categories (`+@read`) and everything else keep their places.
pub fn sorted_command_rules(f: &[u8]) -> Vec<u8> {
    let delim = |c: u8| matches!(c, b' ' | b'\r' | b'\n' | b'(' | b')');
    let single = |t: &[u8]| {
        t.len() > 1 && (t[0] == b'+' || t[0] == b'-') && t[1] != b'@' && t[1].is_ascii_lowercase()
    };
    // Tokens as (start, end).
    let mut toks = Vec::new();
    let mut i = 0;
    while i < f.len() {
        if delim(f[i]) {
            i += 1;
            continue;
        }
        let st = i;
        while i < f.len() && !delim(f[i]) {
            i += 1;
        }
        toks.push((st, i));
    }
    let mut out = f.to_vec();
    let mut k = 0;
    while k < toks.len() {
        if !single(&f[toks[k].0..toks[k].1]) {
            k += 1;
            continue;
        }
        // A run: single-command tokens separated by exactly one space.
        let mut e = k + 1;
        while e < toks.len()
            && toks[e].0 == toks[e - 1].1 + 1
            && f[toks[e - 1].1] == b' '
            && single(&f[toks[e].0..toks[e].1])
        {
            e += 1;
        }
        let mut words: Vec<&[u8]> = toks[k..e].iter().map(|&(a, b)| &f[a..b]).collect();
        words.sort();
        let joined = words.join(&b' ');
        out[toks[k].0..toks[e - 1].1].copy_from_slice(&joined);
        k = e;
    }
    out
}

fn a(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

pub fn act(conn: usize, args: Vec<Vec<u8>>) -> Act {
    Act {
        conn,
        args,
        wait: Wait::Reply,
        write_file: None,
        read_file: false,
        loose: false,
    }
}

fn may_block(conn: usize, args: Vec<Vec<u8>>) -> Act {
    Act {
        wait: Wait::MayBlock,
        ..act(conn, args)
    }
}

/// A write from the table on the scenario's keys (any family), for the other clients to see.
fn table_write(g: &mut TableGen, specs: &[Spec]) -> Vec<Vec<u8>> {
    for _ in 0..50 {
        let s = g.pick_spec(specs).clone();
        if s.flag("write") && !s.flag("blocking") && !s.flag("noscript") {
            return g.invocation(specs, &s);
        }
    }
    a(&["SET", "s0", "v"])
}

fn table_read(g: &mut TableGen, specs: &[Spec]) -> Vec<Vec<u8>> {
    for _ in 0..50 {
        let s = g.pick_spec(specs).clone();
        if s.flag("readonly")
            && !s.flag("blocking")
            && super::gen::norm_of(&s) == super::classic::Norm::Exact
        {
            return g.invocation(specs, &s);
        }
    }
    a(&["GET", "s0"])
}

const BLOCKING: &[&[&str]] = &[
    &["BLPOP", "l0", "0"],
    &["BRPOP", "l0", "l1", "0"],
    &["BLMOVE", "l0", "l1", "LEFT", "RIGHT", "0"],
    &["BRPOPLPUSH", "l1", "l0", "0"],
    &["BLMPOP", "0", "2", "l0", "l1", "LEFT"],
    &["BLMPOP", "0", "1", "l1", "RIGHT", "COUNT", "2"],
    &["BZPOPMIN", "z0", "0"],
    &["BZPOPMAX", "z0", "z1", "0"],
    &["BZMPOP", "0", "2", "z0", "z1", "MIN", "COUNT", "2"],
    &["BLPOP", "l0", "0.01"],
    &["BZPOPMIN", "z1", "0.01"],
];

const FEEDS: &[&[&str]] = &[
    &["LPUSH", "l0", "a", "b"],
    &["RPUSH", "l1", "c"],
    &["LPUSH", "l0", "x"],
    &["ZADD", "z0", "1", "m1", "2", "m2"],
    &["ZADD", "z1", "5", "m5"],
    &["LMOVE", "l1", "l0", "LEFT", "LEFT"],
    &["DEL", "l0"],
    &["SET", "l0", "str"],
    &["RENAME", "l1", "l0"],
    &["LPUSH", "l9", "r"],
];

/// A random scenario of `kind` (seeded by the generator's state).
pub fn generate(g: &mut TableGen, specs: &[Spec]) -> Scenario {
    let kinds = [
        "watch",
        "blocking",
        "pubsub",
        "notifications",
        "tracking",
        "clients",
    ];
    let kind = g.rng().pick(&kinds);
    let n = 2 + g.rng().below(3) as usize;
    let resp3: Vec<bool> = (0..n).map(|_| g.rng().chance(40)).collect();
    let mut acts = Vec::new();
    let steps = 6 + g.rng().below(16);
    match kind {
        "watch" => {
            for _ in 0..steps {
                let c = g.rng().below(n as u64) as usize;
                let x = g.rng().below(10);
                let args = match x {
                    0 | 1 => {
                        let mut w = a(&["WATCH"]);
                        for _ in 0..1 + g.rng().below(2) {
                            let k = g.rng().pick(super::gen::ALL_KEYS);
                            w.push(k.to_vec());
                        }
                        w
                    }
                    2 => a(&["MULTI"]),
                    3 => a(&["EXEC"]),
                    4 => a(&[g.rng().pick(&["UNWATCH", "DISCARD", "RESET"])]),
                    5 | 6 => table_write(g, specs),
                    7 => table_read(g, specs),
                    8 => a(&["FLUSHDB"]),
                    _ => a(&["SWAPDB", "0", "1"]),
                };
                acts.push(act(c, args));
            }
        }
        "blocking" => {
            for _ in 0..steps {
                let c = g.rng().below(n as u64) as usize;
                let x = g.rng().below(10);
                let step = match x {
                    0..=2 => {
                        let b = g.rng().pick(BLOCKING);
                        // A timed wait answers by itself (when redis's timer fires, within
                        // about 100 ms): it is read as a reply, not raced against a short wait.
                        if b.last().is_some_and(|t| *t != "0") && b[0] != "BLMPOP" && b[0] != "BZMPOP" {
                            act(c, a(b))
                        } else {
                            may_block(c, a(b))
                        }
                    }
                    3..=5 => act(c, a(g.rng().pick(FEEDS))),
                    6 => {
                        let other = g.rng().below(n as u64) as usize;
                        let mut args = a(&["CLIENT", "UNBLOCK"]);
                        args.push(id_of(other));
                        if g.rng().chance(50) {
                            args.push(g.rng().pick::<[u8]>(&[b"TIMEOUT", b"ERROR"]).to_vec());
                        }
                        act(c, args)
                    }
                    7 => act(c, a(&["MULTI"])),
                    8 => act(c, a(&["EXEC"])),
                    _ => act(
                        c,
                        a(&["EVAL", "redis.call('lpush', KEYS[1], 'e') return redis.call('lpush', KEYS[1], 'f')", "1", "l0"]),
                    ),
                };
                acts.push(step);
            }
        }
        "pubsub" => {
            for _ in 0..steps {
                let c = g.rng().below(n as u64) as usize;
                let ch = |g: &mut TableGen| {
                    g.rng()
                        .pick::<str>(&["ch0", "ch1", "news.1", "news.2"])
                        .to_string()
                };
                let x = g.rng().below(12);
                let args = match x {
                    0 | 1 => {
                        let mut s = a(&["SUBSCRIBE"]);
                        for _ in 0..1 + g.rng().below(2) {
                            s.push(ch(g).into_bytes());
                        }
                        s
                    }
                    2 => {
                        let p = g.rng().pick::<str>(&["news.*", "ch?", "*"]).to_string();
                        a(&["PSUBSCRIBE", &p])
                    }
                    3 => a(&["SSUBSCRIBE", "ch0"]),
                    4 => {
                        let mut u =
                            a(&[g
                                .rng()
                                .pick(&["UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"])]);
                        if g.rng().chance(50) {
                            u.push(ch(g).into_bytes());
                        }
                        u
                    }
                    5..=7 => {
                        let chn = ch(g);
                        a(&["PUBLISH", &chn, "hello"])
                    }
                    8 => a(&["SPUBLISH", "ch0", "shard"]),
                    9 => a(&[
                        "PUBSUB",
                        g.rng().pick(&["NUMPAT", "CHANNELS", "SHARDCHANNELS"]),
                    ]),
                    10 => a(&["PUBSUB", "NUMSUB", "ch0", "ch1"]),
                    _ => a(&[
                        "EVAL",
                        "return redis.call('publish', 'ch1', 'from lua')",
                        "0",
                    ]),
                };
                acts.push(act(c, args));
            }
        }
        "notifications" => {
            let flags = g
                .rng()
                .pick::<str>(&["KEA", "Kg$lszhxe", "E$", "Kl", "KEAnm", "Egx"])
                .to_string();
            acts.push(act(
                0,
                a(&["CONFIG", "SET", "notify-keyspace-events", &flags]),
            ));
            let pat = g
                .rng()
                .pick::<str>(&["__key*__:*", "__keyspace@0__:*", "__keyevent@0__:*"])
                .to_string();
            acts.push(act(1, a(&["PSUBSCRIBE", &pat])));
            for _ in 0..steps {
                let c = if n > 2 {
                    [0, 2][g.rng().below(2) as usize]
                } else {
                    0
                };
                let args = if g.rng().chance(10) {
                    a(&["SELECT", "1"])
                } else {
                    table_write(g, specs)
                };
                acts.push(act(c, args));
            }
            acts.push(act(0, a(&["CONFIG", "SET", "notify-keyspace-events", ""])));
        }
        "tracking" => {
            // Connection 0 tracks (RESP3 pushes, or redirected to connection 1 in RESP2).
            let mut on = a(&["CLIENT", "TRACKING", "ON"]);
            let redirect = !resp3[0] || g.rng().chance(30);
            if redirect {
                acts.push(act(1, a(&["SUBSCRIBE", "__redis__:invalidate"])));
                on.push(b"REDIRECT".to_vec());
                on.push(id_of(1));
            }
            match g.rng().below(5) {
                0 => {
                    on.push(b"BCAST".to_vec());
                    if g.rng().chance(50) {
                        on.push(b"PREFIX".to_vec());
                        on.push(b"s".to_vec());
                    }
                }
                1 => on.push(b"OPTIN".to_vec()),
                2 => on.push(b"OPTOUT".to_vec()),
                3 => on.push(b"NOLOOP".to_vec()),
                _ => {}
            }
            acts.push(act(0, on));
            for _ in 0..steps {
                let x = g.rng().below(10);
                let step = match x {
                    0..=2 => act(0, table_read(g, specs)),
                    3 => act(0, a(&["CLIENT", "CACHING", g.rng().pick(&["yes", "no"])])),
                    4 => act(0, table_write(g, specs)),
                    5 => act(
                        0,
                        a(&["CLIENT", g.rng().pick(&["TRACKINGINFO", "GETREDIR"])]),
                    ),
                    6 => act(n - 1, a(&["FLUSHALL"])),
                    _ => act(n - 1, table_write(g, specs)),
                };
                acts.push(step);
            }
        }
        _ => {
            // CLIENT KILL / PAUSE / UNPAUSE / REPLY / SETNAME, QUIT, RESET.
            for _ in 0..steps {
                let c = g.rng().below(n as u64) as usize;
                let other = g.rng().below(n as u64) as usize;
                let x = g.rng().below(14);
                let step = match x {
                    0 => {
                        let mut k = a(&["CLIENT", "KILL", "ID"]);
                        k.push(id_of(other));
                        act(c, k)
                    }
                    1 => {
                        let mut k = a(&["CLIENT", "KILL"]);
                        k.push(addr_of(other));
                        act(c, k)
                    }
                    2 => {
                        let mut k = a(&["CLIENT", "KILL", "ADDR"]);
                        k.push(addr_of(other));
                        k.extend(a(&["SKIPME", g.rng().pick(&["yes", "no"])]));
                        act(c, k)
                    }
                    3 => act(
                        c,
                        a(&[
                            "CLIENT",
                            "KILL",
                            "USER",
                            g.rng().pick(&["default", "nosuch"]),
                            "SKIPME",
                            "yes",
                        ]),
                    ),
                    // Not ALL: a paused-ALL server postpones CLIENT UNPAUSE itself.
                    4 => act(c, a(&["CLIENT", "PAUSE", "100000", "WRITE"])),
                    5 => act(c, a(&["CLIENT", "UNPAUSE"])),
                    6 | 7 => may_block(c, table_write(g, specs)),
                    8 => may_block(c, table_read(g, specs)),
                    9 => {
                        let m = g.rng().pick::<str>(&["ON", "OFF", "SKIP"]).to_string();
                        may_block(c, a(&["CLIENT", "REPLY", &m]))
                    }
                    10 => act(
                        c,
                        a(&["CLIENT", "SETNAME", g.rng().pick(&["a", "b c", ""])]),
                    ),
                    11 => act(c, a(&["CLIENT", "GETNAME"])),
                    12 => act(c, a(&[g.rng().pick(&["QUIT", "RESET"])])),
                    _ => act(c, a(&["CLIENT", "NO-EVICT", g.rng().pick(&["on", "off"])])),
                };
                acts.push(step);
            }
            // Writes blocked by a pause are released before the scenario ends.
            acts.push(act(0, a(&["CLIENT", "UNPAUSE"])));
        }
    }
    // After CLIENT REPLY OFF/SKIP any command may go unanswered.
    let mut quiet = vec![false; n];
    for x in acts.iter_mut() {
        let up: Vec<Vec<u8>> = x.args.iter().map(|w| w.to_ascii_uppercase()).collect();
        if quiet[x.conn]
            || up.first().is_some_and(|w| w == b"CLIENT")
                && up.get(1).is_some_and(|w| w == b"PAUSE")
        {
            x.wait = Wait::MayBlock;
        }
        if up.len() >= 3 && up[0] == b"CLIENT" && up[1] == b"REPLY" {
            quiet[x.conn] = up[2] != b"ON";
        }
    }
    // Once anything is paused, every later command may wait.
    if let Some(p) = acts.iter().position(|x| {
        x.args.len() > 1
            && x.args[0].eq_ignore_ascii_case(b"CLIENT")
            && x.args[1].eq_ignore_ascii_case(b"PAUSE")
    }) {
        for x in acts.iter_mut().skip(p + 1) {
            x.wait = Wait::MayBlock;
        }
    }
    Scenario { kind, resp3, acts }
}

/// Run a scenario on both servers, step by step; the first step whose transcripts differ, and
/// the reference's transcripts so far.
/// The first step whose transcripts differ (and both transcripts), and the reference's
/// transcripts of every step run.
pub type Outcome = (Option<(usize, Vec<Event>, Vec<Event>)>, Vec<Vec<Event>>);

pub async fn run(
    redis: SocketAddr,
    ours: SocketAddr,
    sc: &Scenario,
    aclfiles: Option<(std::path::PathBuf, std::path::PathBuf)>,
) -> Outcome {
    let (ra, oa) = match aclfiles {
        Some((a, b)) => (Some(a), Some(b)),
        None => (None, None),
    };
    let mut r = Side::open(redis, &sc.resp3, ra).await;
    let mut o = Side::open(ours, &sc.resp3, oa).await;
    let mut log = Vec::new();
    for (i, x) in sc.acts.iter().enumerate() {
        let mut er = r.step(x, None).await;
        let mut eo = o.step(x, Some(&er)).await;
        if x.args.len() == 1 && x.args[0].to_ascii_uppercase().ends_with(b"UNSUBSCRIBE") {
            // Unsubscribing from everything goes in the server's dict order: the channels
            // are compared as a set, the counts in sequence.
            sort_unsubscribed(&mut er, x.conn);
            sort_unsubscribed(&mut eo, x.conn);
        }
        // A message matching several patterns goes to them in the pattern dict's order.
        sort_pmessages(&mut er);
        sort_pmessages(&mut eo);
        log.push(er.clone());
        if !same_events(&er, &eo) {
            return (Some((i, er, eo)), log);
        }
    }
    (None, log)
}

/// Runs of consecutive pattern messages to one connection sorted: redis-server 7.0 walks its
/// pattern dict, whose order changes with every start, to deliver one message to several
/// matching patterns.
fn sort_pmessages(ev: &mut [Event]) {
    let is_pm = |e: &Event| match e {
        Event::Frame(_, f) => {
            f.len() > 14
                && (f.starts_with(b"*4\r\n$8\r\npmessage")
                    || f.starts_with(b">4\r\n$8\r\npmessage"))
        }
        _ => false,
    };
    let conn = |e: &Event| match e {
        Event::Frame(c, _) => *c,
        _ => usize::MAX,
    };
    let mut i = 0;
    while i < ev.len() {
        if !is_pm(&ev[i]) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < ev.len() && is_pm(&ev[j]) && conn(&ev[j]) == conn(&ev[i]) {
            j += 1;
        }
        ev[i..j].sort_by(|a, b| match (a, b) {
            (Event::Frame(_, x), Event::Frame(_, y)) => x.cmp(y),
            _ => std::cmp::Ordering::Equal,
        });
        i = j;
    }
}

/// The (un)subscription frames of connection `c` with their channel names in sorted order
/// (each frame keeps its place and count).
fn sort_unsubscribed(ev: &mut [Event], c: usize) {
    let mut names = Vec::new();
    let mut slots = Vec::new();
    for (i, e) in ev.iter().enumerate() {
        if let Event::Frame(k, f) = e {
            if *k == c {
                if let Some(V::Agg(_, Some(items))) = parse(f) {
                    if items.len() == 3 {
                        names.push(items[1].clone());
                        slots.push(i);
                    }
                }
            }
        }
    }
    names.sort();
    for (i, name) in slots.into_iter().zip(names) {
        if let Event::Frame(_, f) = &mut ev[i] {
            if let Some(V::Agg(t, Some(mut items))) = parse(f) {
                items[1] = name;
                *f = encode(&V::Agg(t, Some(items)));
            }
        }
    }
}

/// Transcripts agree: the same events per connection in the same order (events of different
/// connections may interleave differently: they are read in a fixed order anyway).
fn same_events(a: &[Event], b: &[Event]) -> bool {
    if a == b {
        return true;
    }
    // A blocked connection served within the step shows its frame; if its reply came a moment
    // later on one side it is seen at the next step: not a divergence of content.
    false
}

pub fn show_events(ev: &[Event]) -> String {
    ev.iter()
        .map(|e| match e {
            Event::Frame(c, f) => format!("c{c}: {}", show(f)),
            Event::Closed(c) => format!("c{c}: <closed>"),
            Event::Silent(c) => format!("c{c}: <no reply>"),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The scenario as a `.case` (ids and addresses are placeholders the case cannot fill: the
/// printed case is for reading, to be adapted).
pub fn as_case(title: &str, sc: &Scenario, log: &[Vec<Event>]) -> String {
    let mut out = format!("### case: {title}\n");
    let name = |c: usize| {
        if c == 0 {
            "main".to_string()
        } else {
            format!("c{c}")
        }
    };
    let mut cur = 0usize;
    for (i, &r3) in sc.resp3.iter().enumerate() {
        if r3 {
            out.push_str(&format!("@conn {}\n> HELLO 3\n%7 ~any\n", name(i)));
            cur = i;
        }
    }
    let lines = |f: &[u8]| -> Vec<String> {
        let e = crate::format::Expected {
            bytes: f.to_vec(),
            matchers: Vec::new(),
        };
        crate::format::render_expected(&e).unwrap_or_else(|e| vec![e])
    };
    for (x, evs) in sc.acts.iter().zip(log) {
        if x.conn != cur {
            out.push_str(&format!("@conn {}\n", name(x.conn)));
            cur = x.conn;
        }
        let shown: Vec<Vec<u8>> = x
            .args
            .iter()
            .map(|a| {
                if a.first() == Some(&1) {
                    format!("<{}>", String::from_utf8_lossy(&a[1..])).into_bytes()
                } else {
                    a.clone()
                }
            })
            .collect();
        out.push_str(&format!("> {}\n", case_cmd(&shown)));
        let mut first = true;
        for e in evs {
            match e {
                Event::Frame(c, f) if *c == x.conn && first => {
                    first = false;
                    for l in lines(f) {
                        out.push_str(&format!("{l}\n"));
                    }
                }
                Event::Frame(c, f) => {
                    if *c != cur {
                        out.push_str(&format!("@conn {}\n", name(*c)));
                        cur = *c;
                    }
                    out.push_str("@read\n");
                    for l in lines(f) {
                        out.push_str(&format!("{l}\n"));
                    }
                }
                Event::Closed(c) => {
                    if *c != cur {
                        out.push_str(&format!("@conn {}\n", name(*c)));
                        cur = *c;
                    }
                    out.push_str("@closed\n");
                }
                Event::Silent(_) => out.push_str("# (no reply yet)\n"),
            }
        }
    }
    out
}
