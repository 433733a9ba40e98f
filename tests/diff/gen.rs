//! The table-driven generator: a random, well-formed (mostly) invocation of any command of the
//! table, built from its COMMAND DOCS grammar (tokens, optional and repeated arguments, one-of
//! choices, blocks), with values chosen by each argument's type and name from the pools the
//! hand-written grammar tuned (`classic.rs`), keys drawn by the command's family so most
//! replies are not WRONGTYPE. A few commands need values the grammar cannot express (script
//! bodies, numkeys, safe CONFIG parameters); they are overridden here by name. What cannot be
//! driven at all, or only in the several-connection scenarios, is listed with a reason by
//! [`undriven`] and counted in every report.

use super::classic::{self, Norm, Rng};
use super::spec::{Arg, Kind, Spec};

/// Why a command is not generated in the single-connection mode.
pub fn undriven(spec: &Spec) -> Option<&'static str> {
    let n = spec.name.as_str();
    Some(match n {
        "shutdown" => "stops the server",
        "monitor" => "turns the connection into a feed with timestamps and addresses",
        "sync" | "psync" | "replconf" => "replication protocol between servers",
        "failover" => "needs replicas",
        "save" | "bgsave" | "bgrewriteaof" => {
            "forks or writes the dataset to disk; its reply depends on whether the last fork ended"
        }
        "script|debug" => "starts the Lua debugger (a forked session)",
        "pfselftest" => "runs for seconds",
        "memory|malloc-stats" => {
            "its reply is the allocator's own statistics (jemalloc in redis-server)"
        }
        "debug" => "only refused (enable-debug-command no); driven by the conformance cases",
        "client|kill"
        | "client|pause"
        | "client|unpause"
        | "client|reply"
        | "client|tracking"
        | "client|caching"
        | "client|unblock"
        | "client|getredir"
        | "client|trackinginfo"
        | "quit" => "acts on connections: driven in the several-connection scenarios",
        "subscribe" | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe"
        | "sunsubscribe" => "subscribed mode: driven in the pub/sub scenarios",
        "auth" => "driven in the ACL mode (users and passwords)",
        "migrate" => "connects to another server",
        "module|load" | "module|loadex" | "module|unload" => "loads shared objects",
        "cluster|meet" | "cluster|replicate" | "cluster|failover" | "cluster|reset" => {
            "cluster administration"
        }
        _ if spec.container => "a container: its subcommands are driven",
        _ => return None,
    })
}

/// Keys by the family that uses them, so most replies are not WRONGTYPE; a key of another
/// family (or an odd key) now and then.
fn key_pool(group: &str) -> &'static [&'static [u8]] {
    match group {
        "string" | "bitmap" => &[b"s0", b"s1", b"s2"],
        "hash" => &[b"h0", b"h1", b"h2"],
        "list" => &[b"l0", b"l1", b"l2"],
        "set" => &[b"S0", b"S1", b"S2"],
        "sorted-set" => &[b"z0", b"z1", b"z2"],
        "stream" => &[b"x0", b"x1", b"x2"],
        "hyperloglog" => &[b"p0", b"p1", b"p2"],
        "geo" => &[b"g0", b"g1", b"g2"],
        _ => ALL_KEYS,
    }
}

pub const ALL_KEYS: &[&[u8]] = &[
    b"s0",
    b"s1",
    b"h0",
    b"h1",
    b"l0",
    b"l1",
    b"S0",
    b"S1",
    b"z0",
    b"z1",
    b"x0",
    b"p0",
    b"g0",
    b"k\x00\xff",
    b"",
];

const CHANNELS: &[&[u8]] = &[
    b"ch0",
    b"ch1",
    b"news.1",
    b"news.2",
    b"__keyspace@0__:s0",
    b"",
];

/// CONFIG parameters the generator may set, with values (valid and not): none of them changes
/// where the servers listen, what they write to disk or who may connect.
pub const CONFIG_SAFE: &[(&str, &[&str])] = &[
    (
        "hash-max-listpack-entries",
        &["0", "1", "4", "128", "-1", "x"],
    ),
    ("hash-max-listpack-value", &["0", "2", "64", "x"]),
    ("set-max-intset-entries", &["0", "2", "512", "x"]),
    ("set-max-listpack-entries", &["0", "2", "128"]),
    ("zset-max-listpack-entries", &["0", "2", "128", "-5"]),
    ("zset-max-listpack-value", &["0", "3", "64"]),
    ("list-max-listpack-size", &["-2", "-1", "1", "4", "-6", "0"]),
    ("list-compress-depth", &["0", "1", "2"]),
    ("stream-node-max-entries", &["1", "100", "0"]),
    ("stream-node-max-bytes", &["4096", "0", "100"]),
    ("hll-sparse-max-bytes", &["0", "3000", "100"]),
    ("lua-time-limit", &["5000", "100"]),
    ("busy-reply-threshold", &["5000", "100"]),
    ("slowlog-log-slower-than", &["10000", "-1", "0"]),
    ("slowlog-max-len", &["128", "0", "1"]),
    ("latency-monitor-threshold", &["0", "100"]),
    (
        "notify-keyspace-events",
        &["", "KEA", "Kx", "Eg$", "z", "KEAn", "xyz"],
    ),
    ("lfu-log-factor", &["10", "0", "1"]),
    ("lfu-decay-time", &["1", "0"]),
    (
        "maxmemory-policy",
        &["noeviction", "allkeys-lru", "volatile-lfu", "bogus"],
    ),
    ("active-expire-effort", &["1", "10", "11"]),
    ("lazyfree-lazy-user-del", &["yes", "no", "maybe"]),
    ("lazyfree-lazy-user-flush", &["yes", "no"]),
    ("proto-max-bulk-len", &["536870912", "1048576", "1"]),
    ("timeout", &["0"]),
    ("tracking-table-max-keys", &["1000000", "0"]),
    ("acllog-max-len", &["128", "1", "0"]),
    ("nosuch-parameter", &["1"]),
];

/// Scripts EVAL bodies are drawn from (the classic grammar adds its own).
pub const LIBRARY: &str = "#!lua name=difflib\n\
    redis.register_function('get', function(keys, args) return redis.call('GET', keys[1]) end)\n\
    redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('EXISTS', keys[1]) end, flags={'no-writes'}}\n\
    redis.register_function('call', function(keys, args) return redis.call(unpack(args)) end)\n\
    redis.register_function('pcall', function(keys, args) return redis.pcall(unpack(args)) end)\n\
    redis.register_function('check', function(keys, args) return redis.acl_check_cmd(unpack(args)) end)";

const LIBRARY2: &str = "#!lua name=difflib2\n\
    redis.register_function('echo', function(keys, args) return args[1] end)";

/// The table-driven generator.
pub struct TableGen {
    /// The hand-written grammar, for its value pools and its script templates.
    pub c: classic::Gen,
    /// Commands the generator may pick (indices into the table).
    pub pool: Vec<usize>,
    /// Users that exist (or may), for ACL subcommands and AUTH.
    pub users: Vec<String>,
    /// Whether commands are generated for a script's `redis.call` (no nested scripts...).
    pub in_script: bool,
}

impl TableGen {
    pub fn new(seed: u64, resp3: bool, pool: Vec<usize>) -> TableGen {
        TableGen {
            c: classic::Gen {
                rng: Rng(Rng(seed).next()),
                resp3,
            },
            pool,
            users: vec!["u0".into(), "u1".into(), "u2".into()],
            in_script: false,
        }
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.c.rng
    }

    fn word(&mut self, w: &str) -> Vec<u8> {
        self.c.name(w)
    }

    fn key(&mut self, spec: &Spec) -> Vec<u8> {
        let r = &mut self.c.rng;
        if r.chance(12) {
            r.pick(ALL_KEYS).to_vec()
        } else {
            r.pick(key_pool(&spec.group)).to_vec()
        }
    }

    /// One command of the pool: a family first (each about as likely, cluster and server
    /// less: their commands mostly answer errors or server state), then a command of it.
    pub fn pick_spec<'s>(&mut self, specs: &'s [Spec]) -> &'s Spec {
        let mut groups: Vec<&str> = self.pool.iter().map(|&i| specs[i].group.as_str()).collect();
        groups.dedup();
        groups.sort();
        groups.dedup();
        let weight = |g: &str| match g {
            "cluster" => 1,
            "server" => 3,
            _ => 4,
        };
        let total: u64 = groups.iter().map(|g| weight(g)).sum();
        let mut x = self.c.rng.below(total);
        let mut group = groups[0];
        for g in &groups {
            if x < weight(g) {
                group = g;
                break;
            }
            x -= weight(g);
        }
        let members: Vec<usize> = self
            .pool
            .iter()
            .copied()
            .filter(|&i| specs[i].group == group)
            .collect();
        &specs[members[self.c.rng.below(members.len() as u64) as usize]]
    }

    /// A random invocation of `spec` (its name words first).
    pub fn invocation(&mut self, specs: &[Spec], spec: &Spec) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = spec.words.iter().map(|w| self.c.name(w)).collect();
        if !self.special(specs, spec, &mut out) {
            let args = spec.args.clone();
            self.emit_list(spec, &args, &mut out);
        }
        if self.c.rng.chance(3) {
            self.mutate(&mut out, spec.words.len());
        }
        out
    }

    /// A broken invocation now and then: an argument dropped, repeated, or junk added.
    fn mutate(&mut self, out: &mut Vec<Vec<u8>>, fixed: usize) {
        let r = &mut self.c.rng;
        match r.below(4) {
            0 if out.len() > fixed => {
                let i = fixed + r.below((out.len() - fixed) as u64) as usize;
                out.remove(i);
            }
            1 if out.len() > fixed => {
                let i = fixed + r.below((out.len() - fixed) as u64) as usize;
                let a = out[i].clone();
                out.insert(i, a);
            }
            2 => out.push(
                r.pick::<[u8]>(&[b"junk", b"", b"-1", b"NX", b"COUNT", b"9223372036854775808"])
                    .to_vec(),
            ),
            _ => out.truncate(fixed.max(out.len().saturating_sub(1))),
        }
    }

    fn emit_list(&mut self, spec: &Spec, args: &[Arg], out: &mut Vec<Vec<u8>>) {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            // numkeys (and the like) counts the repeated argument that follows it.
            if a.kind == Kind::Int
                && (a.name == "numkeys" || a.name == "numitems")
                && args.get(i + 1).is_some_and(|n| n.multiple)
            {
                let n = 1 + self.c.rng.below(3) as i64;
                let shown = if self.c.rng.chance(6) {
                    *self.c.rng.pick(&[&0i64, &-1, &(n + 1), &(n - 1)])
                } else {
                    n
                };
                out.push(shown.to_string().into_bytes());
                let next = args[i + 1].clone();
                for _ in 0..n {
                    self.emit_one(spec, &next, out, true);
                }
                i += 2;
                continue;
            }
            if a.optional && !self.c.rng.chance(45) {
                i += 1;
                continue;
            }
            let reps = if a.multiple {
                1 + self.c.rng.below(3)
            } else {
                1
            };
            for r in 0..reps {
                let token = r == 0 || a.multiple_token;
                self.emit_one(spec, a, out, token);
            }
            i += 1;
        }
    }

    fn emit_one(&mut self, spec: &Spec, a: &Arg, out: &mut Vec<Vec<u8>>, token: bool) {
        if token {
            if let Some(t) = &a.token {
                let w = self.word(t);
                out.push(w);
            }
        }
        match a.kind {
            Kind::PureToken => {}
            Kind::OneOf => {
                if a.children.is_empty() {
                    return;
                }
                let c = a.children[self.c.rng.below(a.children.len() as u64) as usize].clone();
                self.emit_one(spec, &c, out, true);
            }
            Kind::Block => {
                let ch = a.children.clone();
                self.emit_list(spec, &ch, out);
            }
            Kind::Key => {
                let k = self.key(spec);
                out.push(k);
            }
            _ => {
                let v = self.value(spec, a);
                out.push(v);
            }
        }
    }

    /// A value for argument `a` of `spec`, by its type and name.
    fn value(&mut self, spec: &Spec, a: &Arg) -> Vec<u8> {
        let blocking = spec.flag("blocking");
        let name = a.name.as_str();
        let tok = a.token.as_deref().unwrap_or("");
        let g = &mut self.c;
        match (a.kind, name) {
            (Kind::Double, "timeout") | (Kind::Int, "timeout") if blocking => g
                .rng
                .pick::<[u8]>(&[b"0.01", b"0.02", b"0.05", b"-1", b"x", b"0.001"])
                .to_vec(),
            (Kind::Int, "milliseconds") if tok == "BLOCK" => {
                g.rng.pick::<[u8]>(&[b"10", b"20", b"-1", b"x"]).to_vec()
            }
            (Kind::Int, "timeout") => g.rng.range(1, 30).to_string().into_bytes(),
            (Kind::Int, "count")
            | (Kind::Int, "num-matches")
            | (Kind::Int, "len")
            | (Kind::Int, "limit") => {
                if g.rng.chance(85) {
                    g.rng.range(-3, 12).to_string().into_bytes()
                } else {
                    g.int()
                }
            }
            (Kind::Int, "cursor") => {
                if g.rng.chance(90) {
                    b"0".to_vec()
                } else {
                    g.int()
                }
            }
            (Kind::Int, "db") | (Kind::Int, "destination-db") | (Kind::Int, "index")
                if spec.group != "list" =>
            {
                g.rng
                    .pick::<[u8]>(&[b"0", b"1", b"2", b"16", b"-1", b"x"])
                    .to_vec()
            }
            (Kind::Int, "start")
            | (Kind::Int, "stop")
            | (Kind::Int, "end")
            | (Kind::Int, "index")
            | (Kind::Int, "rank")
            | (Kind::Int, "offset") => {
                if g.rng.chance(85) {
                    g.rng.range(-12, 12).to_string().into_bytes()
                } else {
                    g.int()
                }
            }
            (Kind::Int, "bit") => g.rng.pick::<[u8]>(&[b"0", b"1", b"2", b"-1"]).to_vec(),
            (Kind::Int, "seconds") | (Kind::Int, "ttl") => g.rel(false),
            (Kind::Int, "milliseconds") => g.rel(true),
            (Kind::Int, "numreplicas") => b"0".to_vec(),
            (Kind::Int, "protover") => g.rng.pick::<[u8]>(&[b"2", b"3", b"3", b"4", b"x"]).to_vec(),
            (Kind::Int, "client-id") => b"999999".to_vec(),
            (Kind::Int, _) => g.int(),
            (Kind::Double, "min") | (Kind::Double, "max") => score_bound(&mut g.rng),
            (Kind::Double, "longitude") => g
                .rng
                .pick::<[u8]>(&[b"13.361389", b"-122.4", b"180", b"-181", b"0", b"x"])
                .to_vec(),
            (Kind::Double, "latitude") => g
                .rng
                .pick::<[u8]>(&[b"38.115556", b"37.77", b"85.05112878", b"86", b"0"])
                .to_vec(),
            (Kind::Double, "radius") | (Kind::Double, "width") | (Kind::Double, "height") => g
                .rng
                .pick::<[u8]>(&[b"100", b"200000", b"0", b"-1", b"1e10"])
                .to_vec(),
            (Kind::Double, _) => g.float(),
            (Kind::UnixTime, n) => g.abs(n.contains("milliseconds")),
            (Kind::Pattern, _) if tok == "BY" || tok == "GET" => g
                .rng
                .pick::<[u8]>(&[b"#", b"s*", b"*->f0", b"nosort", b"h*->f1", b"s0"])
                .to_vec(),
            (Kind::Pattern, _) => g.pattern(),
            (_, "channel") | (_, "shardchannel") => g.rng.pick(CHANNELS).to_vec(),
            (_, "min") | (_, "max") if spec.name.contains("lex") => lex_bound(&mut g.rng),
            (_, "start") | (_, "stop") | (_, "end") | (_, "min") | (_, "max") => {
                if spec.group == "stream" {
                    stream_id(&mut g.rng, true)
                } else {
                    match g.rng.below(3) {
                        0 => g.rng.range(-5, 5).to_string().into_bytes(),
                        1 => score_bound(&mut g.rng),
                        _ => lex_bound(&mut g.rng),
                    }
                }
            }
            (_, "id") | (_, "last-id") | (_, "max_deleted_entry_id") => {
                stream_id(&mut g.rng, false)
            }
            (_, "group") | (_, "groupname") => g.rng.pick::<[u8]>(&[b"g1", b"g2", b""]).to_vec(),
            (_, "consumer") | (_, "consumername") => g.rng.pick::<[u8]>(&[b"c1", b"c2"]).to_vec(),
            (_, "field") => g.field(),
            (_, "username") => {
                let u = self.users.clone();
                let g = &mut self.c;
                if g.rng.chance(80) && !u.is_empty() {
                    u[g.rng.below(u.len() as u64) as usize].clone().into_bytes()
                } else {
                    g.rng.pick::<[u8]>(&[b"default", b"nosuch", b""]).to_vec()
                }
            }
            (_, "password") => g.rng.pick::<[u8]>(&[b"p1", b"p2", b"wrong", b""]).to_vec(),
            (_, "rule") => acl_rule(&mut g.rng).into_bytes(),
            (_, "category") | (_, "categoryname") => g
                .rng
                .pick::<[u8]>(&[
                    b"read",
                    b"write",
                    b"dangerous",
                    b"keyspace",
                    b"nosuch",
                    b"@read",
                ])
                .to_vec(),
            (_, "command") | (_, "command-name") | (_, "subcommand") => g
                .rng
                .pick::<[u8]>(&[b"get", b"SET", b"client", b"config|get", b"nosuch", b"acl"])
                .to_vec(),
            (_, "section") => g
                .rng
                .pick::<[u8]>(&[b"keyspace", b"nosuch", b"stats", b"default"])
                .to_vec(),
            (_, "type") => g
                .rng
                .pick::<[u8]>(&[
                    b"string", b"hash", b"list", b"set", b"zset", b"stream", b"foo",
                ])
                .to_vec(),
            (_, "yes/no") => g.rng.pick::<[u8]>(&[b"yes", b"no", b"maybe"]).to_vec(),
            (_, "operation") => g
                .rng
                .pick::<[u8]>(&[b"AND", b"OR", b"XOR", b"NOT", b"nand"])
                .to_vec(),
            (_, "connection-name") | (_, "clientname") => {
                g.rng.pick::<[u8]>(&[b"n1", b"bad name", b""]).to_vec()
            }
            (_, "library-name") | (_, "library-name-pattern") => g
                .rng
                .pick::<[u8]>(&[b"difflib", b"difflib2", b"nosuch", b"diff*"])
                .to_vec(),
            (_, "function") => g
                .rng
                .pick::<[u8]>(&[b"get", b"ro", b"echo", b"nosuch"])
                .to_vec(),
            (_, "sha1") => classic_sha(&mut g.rng).into_bytes(),
            (_, "ip:port") | (_, "host") | (_, "ip") | (_, "node-id") => {
                g.rng.pick::<[u8]>(&[b"127.0.0.1:1", b"x", b""]).to_vec()
            }
            (_, "event") => g.rng.pick::<[u8]>(&[b"command", b"nosuch"]).to_vec(),
            (_, "encoding") => b"string".to_vec(),
            (_, "prefix") => g.rng.pick::<[u8]>(&[b"s", b"h", b""]).to_vec(),
            (_, "threshold") => g.rng.pick::<[u8]>(&[b"10", b"0", b"~"]).to_vec(),
            (_, "serialized-value") => g.rng.pick::<[u8]>(&[b"", b"\x00\x01junk"]).to_vec(),
            (_, "parameter") => pick_config(&mut g.rng, false).into_bytes(),
            (_, "min-idle-time") => b"0".to_vec(),
            _ => g.value(),
        }
    }

    /// Commands whose arguments the grammar cannot give meaningfully; true if handled.
    fn special(&mut self, specs: &[Spec], spec: &Spec, out: &mut Vec<Vec<u8>>) -> bool {
        match spec.name.as_str() {
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" => {
                let op = self.c.eval();
                out.clear();
                out.extend(op.args);
                true
            }
            "fcall" | "fcall_ro" => {
                let f = self
                    .c
                    .rng
                    .pick::<str>(&["get", "ro", "call", "pcall", "check", "echo", "nosuch"]);
                out.push(f.as_bytes().to_vec());
                if f == "call" || f == "pcall" || f == "check" {
                    out.push(b"0".to_vec());
                    let inner = self.inner_command(specs);
                    out.extend(inner);
                } else {
                    out.push(b"1".to_vec());
                    let k = self.key(spec);
                    out.push(k);
                    out.push(self.c.value());
                }
                true
            }
            "function|load" => {
                if self.c.rng.chance(50) {
                    out.push(b"REPLACE".to_vec());
                }
                let body = self.c.rng.pick::<str>(&[
                    LIBRARY,
                    LIBRARY2,
                    "#!lua name=bad\nreturn 1",
                    "no shebang",
                ]);
                out.push(body.as_bytes().to_vec());
                true
            }
            "script|load" => {
                let op = self.c.eval();
                let body = op.args.get(1).cloned().unwrap_or_default();
                out.push(body);
                true
            }
            "config|set" => {
                for _ in 0..1 + self.c.rng.below(2) {
                    let (p, vals) =
                        CONFIG_SAFE[self.c.rng.below(CONFIG_SAFE.len() as u64) as usize];
                    out.push(p.as_bytes().to_vec());
                    out.push(self.c.rng.pick::<str>(vals).as_bytes().to_vec());
                }
                true
            }
            "config|get" => {
                for _ in 0..1 + self.c.rng.below(2) {
                    out.push(pick_config(&mut self.c.rng, true).into_bytes());
                }
                true
            }
            "replicaof" | "slaveof" => {
                out.push(b"NO".to_vec());
                out.push(self.c.rng.pick::<[u8]>(&[b"ONE", b"TWO"]).to_vec());
                true
            }
            "wait" => {
                out.push(self.c.rng.pick::<[u8]>(&[b"0", b"0", b"1", b"-1"]).to_vec());
                out.push(self.c.rng.pick::<[u8]>(&[b"1", b"5", b"-1", b"x"]).to_vec());
                true
            }
            "spop" | "srandmember" | "hrandfield" | "zrandmember" => {
                let k = self.key(spec);
                out.push(k);
                // SPOP always takes a count: a single random pop would leave the two servers
                // with different sets.
                if spec.name == "spop" || self.c.rng.chance(70) {
                    // Counts that take every element (or none), or with repetitions: the
                    // choice is random, the count and the members are not.
                    let c = self.c.rng.pick::<[u8]>(&[
                        b"1000",
                        b"0",
                        b"-5",
                        b"x",
                        b"-9223372036854775808",
                        b"1000",
                    ]);
                    out.push(c.to_vec());
                    if self.c.rng.chance(30) {
                        match spec.name.as_str() {
                            "zrandmember" => out.push(self.word("WITHSCORES")),
                            "hrandfield" => out.push(self.word("WITHVALUES")),
                            _ => {}
                        }
                    }
                }
                true
            }
            "command|getkeys" | "command|getkeysandflags" => {
                let inner = self.inner_command(specs);
                out.extend(inner);
                true
            }
            "command|info" | "command|docs" => {
                for _ in 0..self.c.rng.below(3) {
                    let s = self.pick_spec(specs);
                    let n = if self.c.rng.chance(10) {
                        b"nosuch".to_vec()
                    } else {
                        s.name.as_bytes().to_vec()
                    };
                    out.push(n);
                }
                true
            }
            "xadd" => {
                let k = self.key(spec);
                out.push(k);
                if self.c.rng.chance(20) {
                    out.push(self.word("NOMKSTREAM"));
                }
                if self.c.rng.chance(20) {
                    out.push(self.word("MAXLEN"));
                    out.push(self.c.rng.pick::<[u8]>(&[b"3", b"~", b"="]).to_vec());
                    out.push(b"3".to_vec());
                }
                out.push(stream_id(&mut self.c.rng, false));
                for _ in 0..1 + self.c.rng.below(2) {
                    out.push(self.c.field());
                    out.push(self.c.value());
                }
                true
            }
            "hello" => {
                if self.c.rng.chance(80) {
                    let p = if self.c.resp3 { "3" } else { "2" };
                    out.push(p.as_bytes().to_vec());
                    if self.c.rng.chance(30) {
                        out.push(self.word("AUTH"));
                        out.push(b"default".to_vec());
                        out.push(b"any".to_vec());
                    }
                    if self.c.rng.chance(30) {
                        out.push(self.word("SETNAME"));
                        out.push(self.c.rng.pick::<[u8]>(&[b"n1", b"bad name"]).to_vec());
                    }
                } else {
                    out.push(self.c.rng.pick::<[u8]>(&[b"1", b"4", b"x"]).to_vec());
                }
                true
            }
            "acl|setuser" => {
                let users = self.users.clone();
                let u = users[self.c.rng.below(users.len() as u64) as usize].clone();
                out.push(u.into_bytes());
                for _ in 0..self.c.rng.below(5) {
                    out.push(acl_rule(&mut self.c.rng).into_bytes());
                }
                true
            }
            "acl|deluser" => {
                let users = self.users.clone();
                for _ in 0..1 + self.c.rng.below(2) {
                    let u = users[self.c.rng.below(users.len() as u64) as usize].clone();
                    out.push(u.into_bytes());
                }
                true
            }
            "acl|dryrun" => {
                let users = self.users.clone();
                let u = if self.c.rng.chance(90) {
                    users[self.c.rng.below(users.len() as u64) as usize].clone()
                } else {
                    "nosuch".into()
                };
                out.push(u.into_bytes());
                let inner = self.inner_command(specs);
                out.extend(inner);
                true
            }
            _ => false,
        }
    }

    /// A command for inside a script or DRYRUN/GETKEYS: any command of the pool.
    pub fn inner_command(&mut self, specs: &[Spec]) -> Vec<Vec<u8>> {
        let spec = self.pick_spec(specs).clone();
        let mut out: Vec<Vec<u8>> = spec.words.iter().map(|w| self.c.name(w)).collect();
        if !matches!(
            spec.name.as_str(),
            "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
        ) && !self.special(specs, &spec, &mut out)
        {
            let args = spec.args.clone();
            self.emit_list(&spec, &args, &mut out);
        }
        out
    }
}

fn classic_sha(r: &mut Rng) -> String {
    let body = r.pick::<str>(&["return 1", "return redis.call(unpack(ARGV))", "nosuch"]);
    if r.chance(80) {
        sha1_smol::Sha1::from(body.as_bytes()).digest().to_string()
    } else {
        "ffffffffffffffffffffffffffffffffffffffff".into()
    }
}

fn pick_config(r: &mut Rng, get: bool) -> String {
    if get && r.chance(15) {
        return r
            .pick::<str>(&["*max-*-entries*", "notify*", "nosuch", "maxmemory-p*"])
            .to_string();
    }
    CONFIG_SAFE[r.below(CONFIG_SAFE.len() as u64) as usize]
        .0
        .to_string()
}

/// A score range bound: numbers, exclusive ones, infinities, junk.
pub fn score_bound(r: &mut Rng) -> Vec<u8> {
    r.pick::<[u8]>(&[
        b"-inf", b"+inf", b"inf", b"0", b"1", b"(1", b"2.5", b"(2.5", b"-1", b"10", b"(", b"x",
        b"nan", b"(-inf",
    ])
    .to_vec()
}

/// A lexicographic range bound.
pub fn lex_bound(r: &mut Rng) -> Vec<u8> {
    r.pick::<[u8]>(&[
        b"-", b"+", b"[a", b"(a", b"[f1", b"(m", b"[", b"a", b"[\xff", b"(", b"",
    ])
    .to_vec()
}

/// A stream ID: explicit ones only (an auto-generated `*` ID is the wall clock, which differs
/// between the two servers), with the partial and special forms.
pub fn stream_id(r: &mut Rng, range: bool) -> Vec<u8> {
    let special: &[&[u8]] = if range {
        &[b"-", b"+", b"(1-1", b"0", b"5"]
    } else {
        &[b"$", b">", b"0", b"0-0", b"1-*", b"x"]
    };
    if r.chance(30) {
        return r.pick(special).to_vec();
    }
    format!("{}-{}", r.range(0, 9), r.range(0, 3)).into_bytes()
}

/// One ACL rule, drawn from every form Redis documents.
pub fn acl_rule(r: &mut Rng) -> String {
    const CMDS: &[&str] = &[
        "get",
        "set",
        "del",
        "flushall",
        "keys",
        "config",
        "config|get",
        "client|id",
        "acl",
        "select",
        "eval",
        "hset",
        "lpush",
        "publish",
        "debug",
        "info",
        "ping",
        "nosuch",
    ];
    const CATS: &[&str] = &[
        "all",
        "read",
        "write",
        "keyspace",
        "dangerous",
        "admin",
        "string",
        "hash",
        "list",
        "pubsub",
        "scripting",
        "connection",
        "fast",
        "slow",
        "nosuch",
    ];
    match r.below(26) {
        0 => "on".into(),
        1 => "off".into(),
        2 => format!(">{}", r.pick::<str>(&["p1", "p2", ""])),
        3 => format!("<{}", r.pick::<str>(&["p1", "p2"])),
        4 => "nopass".into(),
        5 => "resetpass".into(),
        6 => format!("#{}", sha1_smol_256(r.pick::<str>(&["p1", "p2"]))),
        7 => "+@all".into(),
        8 => "allcommands".into(),
        9 => "-@all".into(),
        10 => "nocommands".into(),
        11 | 12 => format!("+{}", r.pick(CMDS)),
        13 | 14 => format!("-{}", r.pick(CMDS)),
        15 | 16 => format!("+@{}", r.pick(CATS)),
        17 => format!("-@{}", r.pick(CATS)),
        18 => format!("~{}", r.pick::<str>(&["*", "s*", "h?", "k[0-3]", "x"])),
        19 => format!(
            "%{}~{}",
            r.pick::<str>(&["R", "W", "RW", "X"]),
            r.pick::<str>(&["*", "s*", "h*"])
        ),
        20 => r.pick::<str>(&["allkeys", "resetkeys"]).into(),
        21 => format!("&{}", r.pick::<str>(&["*", "ch*", "news.?"])),
        22 => r.pick::<str>(&["allchannels", "resetchannels"]).into(),
        23 => "reset".into(),
        24 => format!(
            "+{}",
            r.pick::<str>(&["select|0", "client|setname", "config|get|x"])
        ),
        _ => r
            .pick::<str>(&["bogus", "~", "+", "-@", "%~x", "(+get ~x)", ">"])
            .into(),
    }
}

/// SHA-256 as ACL's `#<hash>` rule wants it (hex), of a short password.
pub fn sha1_smol_256(p: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(p.as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// How a command's reply is compared, by name first, then by its COMMAND INFO tips.
pub fn norm_of(spec: &Spec) -> Norm {
    match spec.name.as_str() {
        "ttl" | "pttl" | "expiretime" | "pexpiretime" | "object|idletime" => Norm::Ttl,
        "hgetall" | "hkeys" | "hvals" => Norm::HashOrder,
        "dbsize" => Norm::DbSize,
        "keys"
        | "smembers"
        | "sinter"
        | "sunion"
        | "sdiff"
        | "pubsub|channels"
        | "acl|cat"
        | "pubsub|shardchannels"
        | "function|list" => Norm::Unordered,
        "scan" => Norm::Scan,
        "hscan" | "sscan" | "zscan" => Norm::HScan,
        "command" | "command|list" | "command|info" | "command|docs" | "command|count" => {
            Norm::CommandTable
        }
        "hello" => Norm::Hello,
        "acl|log" => Norm::AclLog,
        "object|encoding" | "object|refcount" | "object|freq" | "xadd" => Norm::Exact,
        "dump" => Norm::DumpOrder,
        "sort" | "sort_ro" => Norm::SortOrder,
        "spop" | "srandmember" | "hrandfield" | "zrandmember" => Norm::Random,
        "config|get" => Norm::Pairs,
        "info"
        | "time"
        | "lastsave"
        | "client|list"
        | "client|info"
        | "client|id"
        | "memory|stats"
        | "memory|doctor"
        | "memory|malloc-stats"
        | "slowlog|get"
        | "slowlog|len"
        | "randomkey"
        | "acl|genpass"
        | "function|stats"
        // redis-server LZF-compresses the payload when it pays, resplock does not; each
        // restores the other's (the conformance cases check FUNCTION RESTORE).
        | "function|dump" => Norm::Type,
        _ if spec.name.starts_with("latency|") && spec.name != "latency|reset" => Norm::Type,
        _ if spec.tip("nondeterministic_output_order") => Norm::Unordered,
        _ if spec.tip("nondeterministic_output") => Norm::Type,
        _ => Norm::Exact,
    }
}
