//! The hand-written grammar of the first differential mode: strings, counters, keys, hashes,
//! bit operations and scripts over them, tuned to reach edge cases (numbers at the i64
//! limits, float spellings strtold accepts and refuses, expiry options in every order). The
//! table-driven generator (`gen.rs`) draws its values from the same pools.

/// splitmix64: small, fast and stable across crate versions, so a seed always means the same
/// command sequence.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// How a reply is compared.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Norm {
    Exact,
    /// TTL/PTTL/EXPIRETIME/PEXPIRETIME: any non-negative integer is ">= 0".
    Ttl,
    /// HGETALL/HKEYS/HVALS: order matters unless redis holds the hash as a hashtable.
    HashOrder,
    /// DBSIZE: a key SET with a past EXAT/PXAT stays counted until it is looked up or an
    /// active expiry cycle removes it, which is timing; on a mismatch both sides look every key
    /// up and count again.
    DbSize,
    /// KEYS: the same elements in any order (redis's order is its dict's).
    Unordered,
    /// SCAN 0: the same cursor and the same keys in any order.
    Scan,
    /// HSCAN 0: exact while redis holds a listpack; for a hashtable the same pairs in any
    /// order when redis finished in one call.
    HScan,
    /// The same RESP type (an error exactly): INFO, TIME, CLIENT LIST...
    Type,
    /// COMMAND, COMMAND LIST/INFO/DOCS/COUNT: the reference's reply without the commands
    /// resplock does not have (listed in the report), in any order.
    CommandTable,
    /// HELLO: its map without the connection id.
    Hello,
    /// ACL LOG: its entries without their age and client-info.
    AclLog,
    /// SPOP, SRANDMEMBER, HRANDFIELD, ZRANDMEMBER: the same type and count; a count that takes
    /// every element gives the same elements in any order.
    Random,
    /// CONFIG GET with several parameters: the same (name, value) pairs in any order.
    Pairs,
    /// SORT/SORT_RO: exact, except that a set redis holds as a hashtable and a BY pattern
    /// without `*` (no sorting) come in its dict's order: then the same elements in any order
    /// (with LIMIT, which takes a window of that order, the same count).
    SortOrder,
    /// DUMP: exact, except that a set or hash redis holds as a hashtable is serialized in its
    /// dict's order (a per-process random seed): then a payload of the same type and length.
    DumpOrder,
}

pub struct Op {
    pub args: Vec<Vec<u8>>,
    pub tag: String,
    pub norm: Norm,
}

pub const KEYS: &[&[u8]] = &[b"k0", b"k1", b"k2", b"k3", b"k4", b"k5", b"k\x00\xff"];
pub const FIELDS: &[&[u8]] = &[b"f0", b"f1", b"f2", b"f3", b"f4", b""];

/// Values: empty, numbers (canonical or not, near the i64 limits), floats, binary, long.
pub const VALUES: &[&[u8]] = &[
    b"",
    b"0",
    b"1",
    b"-1",
    b"10",
    b"007",
    b"+1",
    b" 1",
    b"1 ",
    b"-0",
    b"9223372036854775807",
    b"9223372036854775806",
    b"-9223372036854775808",
    b"-9223372036854775807",
    b"9223372036854775808",
    b"1.5",
    b"-0.0",
    b"0.1",
    b"1e3",
    b"3.0e-5",
    b"inf",
    b"-inf",
    b"nan",
    b"1.7976931348623157e308",
    b"5e-324",
    b"0x10",
    b"1.",
    b".5",
    b"5e",
    b"1e400",
    b"\x00\xff\r\n",
    b"\r\n",
    b"foo",
    b"bar",
    b"hello world",
    b"\xe2\x82\xac",
    b"\xff\xfebin",
];

pub const INTS: &[&[u8]] = &[
    b"0",
    b"1",
    b"-1",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775806",
    b"-9223372036854775807",
    b"9223372036854775808",
    b"1.5",
    b"abc",
    b"",
    b" 1",
    b"+5",
    b"007",
    b"-0",
];

pub const FLOATS: &[&[u8]] = &[
    b"0",
    b"1",
    b"-1",
    b"0.1",
    b"1.5",
    b"-2.25",
    b"1e3",
    b"3.0e-5",
    b"1.7976931348623157e308",
    b"-1.7976931348623157e308",
    b"5e-324",
    b"inf",
    b"-inf",
    b"+inf",
    b"nan",
    b"1e400",
    b"abc",
    b"",
    b" 1",
    b"1 ",
    b"0x10",
    b"1.",
    b".5",
    b"9223372036854775807",
    b"10.50",
    b"3.14159265358979323846",
];

pub struct Gen {
    pub rng: Rng,
    pub resp3: bool,
}

impl Gen {
    pub fn name(&mut self, n: &str) -> Vec<u8> {
        match self.rng.below(20) {
            0 | 1 => n.to_ascii_lowercase().into_bytes(),
            2 => n
                .bytes()
                .map(|c| {
                    if self.rng.chance(50) {
                        c.to_ascii_lowercase()
                    } else {
                        c
                    }
                })
                .collect(),
            _ => n.as_bytes().to_vec(),
        }
    }
    pub fn key(&mut self) -> Vec<u8> {
        if self.rng.chance(3) {
            Vec::new()
        } else {
            self.rng.pick(KEYS).to_vec()
        }
    }
    /// Mostly the keys strings live on (k0..k3), so that fewer replies are WRONGTYPE.
    pub fn skey(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick(&KEYS[..4]).to_vec()
        } else {
            self.key()
        }
    }
    /// Mostly the keys hashes live on (k3..k6).
    pub fn hkey(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick(&KEYS[3..]).to_vec()
        } else {
            self.key()
        }
    }
    /// A number as text: integers of every magnitude (near the i64 limits too) and floats in
    /// the shapes strtold accepts and rejects.
    pub fn number(&mut self) -> Vec<u8> {
        let r = &mut self.rng;
        match r.below(12) {
            0 => r.range(-10, 10).to_string(),
            1 => r.range(-100_000, 100_000).to_string(),
            2 => (i64::MAX - r.range(0, 1000)).to_string(),
            3 => (i64::MIN + r.range(0, 1000)).to_string(),
            4 => (r.next() as i64).to_string(),
            5 => format!("{}.{}", r.range(-1000, 1000), r.range(0, 99999)),
            6 => format!("{}e{}", r.range(-99, 99), r.range(-330, 330)),
            7 => format!(
                "{}.{:02}e{}",
                r.range(-9, 9),
                r.below(100),
                r.range(-20, 20)
            ),
            8 => format!("0.{}", r.below(1_000_000_000)),
            9 => format!("{}", (r.next() >> 11) as f64 / (1u64 << 53) as f64 * 1e6),
            10 => format!("{}", f64::from_bits(r.next() & 0x7fef_ffff_ffff_ffff)),
            _ => format!("-{}.5", r.below(1u64 << 55)),
        }
        .into_bytes()
    }
    pub fn field(&mut self) -> Vec<u8> {
        if self.rng.chance(1) {
            vec![b'F'; 70]
        } else {
            self.rng.pick(FIELDS).to_vec()
        }
    }
    pub fn value(&mut self) -> Vec<u8> {
        match self.rng.below(40) {
            0 => vec![b'x'; 100],
            1 => vec![b'y'; 65],
            2 => vec![b'z'; 64],
            3 if self.rng.chance(10) => vec![b'w'; 1000],
            4..=9 => self.rng.range(-1000, 1000).to_string().into_bytes(),
            10..=19 => self.number(),
            _ => self.rng.pick(VALUES).to_vec(),
        }
    }
    pub fn int(&mut self) -> Vec<u8> {
        if self.rng.chance(15) {
            self.number()
        } else if self.rng.chance(50) {
            self.rng.range(-100, 100).to_string().into_bytes()
        } else {
            self.rng.pick(INTS).to_vec()
        }
    }
    pub fn float(&mut self) -> Vec<u8> {
        if self.rng.chance(30) {
            self.number()
        } else if self.rng.chance(30) {
            let a = self.rng.range(-10000, 10000);
            let b = self.rng.below(1000);
            format!("{}.{:03}", a, b).into_bytes()
        } else {
            self.rng.pick(FLOATS).to_vec()
        }
    }
    /// A relative time in seconds (or ms): valid ones are far enough out that nothing expires
    /// during a run and wide enough apart that GT/LT never hinge on the wall clock.
    pub fn rel(&mut self, ms: bool) -> Vec<u8> {
        match self.rng.below(10) {
            0 => self
                .rng
                .pick::<[u8]>(&[
                    b"0",
                    b"-1",
                    b"-100",
                    b"9223372036854775807",
                    b"-9223372036854775808",
                    b"9223372036854775",
                    b"9223372036854776",
                    b"abc",
                    b"1.5",
                    b"",
                ])
                .to_vec(),
            _ => {
                let s = self.rng.range(100, 1_000_000_000);
                let v = if ms {
                    s * 1000 + self.rng.range(0, 999)
                } else {
                    s
                };
                v.to_string().into_bytes()
            }
        }
    }
    /// An absolute unix time in seconds (or ms): far future, or the past (deterministic).
    pub fn abs(&mut self, ms: bool) -> Vec<u8> {
        let m = if ms { 1000 } else { 1 };
        match self.rng.below(10) {
            0 => self
                .rng
                .pick::<[u8]>(&[b"0", b"-1", b"abc", b"9223372036854775807"])
                .to_vec(),
            1..=3 => {
                let past = [1i64, 100, 1_600_000_000][self.rng.below(3) as usize];
                (past * m).to_string().into_bytes()
            }
            _ => {
                let s = self.rng.range(4_000_000_000, 5_000_000_000);
                (s * m + if ms { self.rng.range(0, 999) } else { 0 })
                    .to_string()
                    .into_bytes()
            }
        }
    }
    pub fn keys(&mut self, lo: u64, hi: u64) -> Vec<Vec<u8>> {
        let n = lo + self.rng.below(hi - lo + 1);
        (0..n).map(|_| self.key()).collect()
    }
    /// A glob pattern for KEYS/SCAN/HSCAN MATCH: fixed edge cases or random over the key
    /// space's alphabet and the glob metacharacters.
    pub fn pattern(&mut self) -> Vec<u8> {
        if self.rng.chance(40) {
            return self
                .rng
                .pick::<[u8]>(&[
                    b"*", b"k?", b"k[0-3]", b"k[^0]", b"k[!0]", b"k\\*", b"[", b"k[", b"*\x00*",
                    b"k[a-]", b"[]]", b"k[3-1]", b"f*", b"*[", b"\\", b"k\\", b"", b"**?",
                    b"k[\\]]", b"?", b"f[0-2]", b"[k]*", b"*\xff", b"k[0-", b"k[-0]",
                ])
                .to_vec();
        }
        const ALPHA: &[u8] = b"kf0123*?[]^-\\\x00\xff";
        let n = self.rng.range(1, 6);
        (0..n)
            .map(|_| ALPHA[self.rng.below(ALPHA.len() as u64) as usize])
            .collect()
    }
    /// MATCH/COUNT/TYPE options of a scan from cursor 0. COUNT stays >= 10 so that the small
    /// key space completes in one call on redis (with fewer, which keys come first is chance).
    pub fn scan_opts(&mut self, a: &mut Vec<Vec<u8>>, with_type: bool) {
        for _ in 0..self.rng.below(3) {
            match self.rng.below(if with_type { 4 } else { 3 }) {
                0 => {
                    a.push(self.name("MATCH"));
                    let p = self.pattern();
                    a.push(p);
                }
                1 => {
                    a.push(self.name("COUNT"));
                    let c = self
                        .rng
                        .pick::<[u8]>(&[b"10", b"1000", b"0", b"-1", b"x", b"20"]);
                    a.push(c.to_vec());
                }
                2 => {
                    let o = self
                        .rng
                        .pick::<str>(&["COUNT", "MATCH", "TYPE", "NOVALUES", "FOO"]);
                    a.push(self.name(o));
                }
                _ => {
                    a.push(self.name("TYPE"));
                    let t = self
                        .rng
                        .pick::<[u8]>(&[b"string", b"hash", b"HASH", b"list", b"foo"]);
                    a.push(t.to_vec());
                }
            }
        }
    }

    /// One expiry option of SET/GETEX, with its argument unless `bare`.
    pub fn expiry_opt(&mut self, out: &mut Vec<Vec<u8>>) {
        match self.rng.below(4) {
            0 => {
                out.push(self.name("EX"));
                let v = self.rel(false);
                out.push(v);
            }
            1 => {
                out.push(self.name("PX"));
                let v = self.rel(true);
                out.push(v);
            }
            2 => {
                out.push(self.name("EXAT"));
                let v = self.abs(false);
                out.push(v);
            }
            _ => {
                out.push(self.name("PXAT"));
                let v = self.abs(true);
                out.push(v);
            }
        }
    }

    /// A command on strings, counters, keys or hashes. `in_script` leaves out what cannot be
    /// compared from inside a script (TTL-style times, hash order) or changes connection state.
    pub fn data_cmd(&mut self, in_script: bool) -> Op {
        let mut norm = Norm::Exact;
        let (n, rest): (&str, Vec<Vec<u8>>) = match self.rng.below(97) {
            0..=3 => {
                let mut a = vec![self.skey(), self.value()];
                let nopts = self.rng.below(4);
                for _ in 0..nopts {
                    match self.rng.below(9) {
                        0 => a.push(self.name("NX")),
                        1 => a.push(self.name("XX")),
                        2 | 3 => a.push(self.name("GET")),
                        4 => a.push(self.name("KEEPTTL")),
                        5 => {
                            // An option without its argument, or an unknown option.
                            let o = self.rng.pick::<str>(&["EX", "PX", "EXAT", "PXAT", "FOO"]);
                            a.push(self.name(o));
                        }
                        _ => self.expiry_opt(&mut a),
                    }
                }
                ("SET", a)
            }
            4 | 5 => ("GET", vec![self.skey()]),
            6 => ("GETSET", vec![self.skey(), self.value()]),
            7 => ("GETDEL", vec![self.skey()]),
            8 => {
                let mut a = vec![self.skey()];
                match self.rng.below(5) {
                    0 => {}
                    1 => a.push(self.name("PERSIST")),
                    2 => {
                        self.expiry_opt(&mut a);
                        if self.rng.chance(20) {
                            a.push(self.name("PERSIST"));
                        }
                    }
                    3 => {
                        self.expiry_opt(&mut a);
                        self.expiry_opt(&mut a);
                    }
                    _ => {
                        let o = self.rng.pick::<str>(&["EX", "KEEPTTL", "GET", "BAR"]);
                        a.push(self.name(o));
                    }
                }
                ("GETEX", a)
            }
            9 => ("MGET", self.keys(1, 4)),
            10 => {
                let mut a = Vec::new();
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.skey());
                    a.push(self.value());
                }
                if self.rng.chance(10) {
                    a.pop();
                }
                (
                    if self.rng.chance(50) {
                        "MSET"
                    } else {
                        "MSETNX"
                    },
                    a,
                )
            }
            11 | 12 => ("APPEND", vec![self.skey(), self.value()]),
            13 => ("STRLEN", vec![self.skey()]),
            14 => {
                let mut off = || -> Vec<u8> {
                    if self.rng.chance(80) {
                        self.rng.range(-12, 12).to_string().into_bytes()
                    } else {
                        self.rng.pick(INTS).to_vec()
                    }
                };
                let (s, e) = (off(), off());
                let n = if self.rng.chance(10) {
                    "SUBSTR"
                } else {
                    "GETRANGE"
                };
                (n, vec![self.skey(), s, e])
            }
            15 => {
                let off = if self.rng.chance(85) {
                    self.rng.range(0, 20).to_string().into_bytes()
                } else {
                    self.rng
                        .pick::<[u8]>(&[
                            b"-1",
                            b"536870912",
                            b"9223372036854775807",
                            b"abc",
                            b"1.5",
                        ])
                        .to_vec()
                };
                // Huge offsets only with a value that is refused or empty: never a real
                // 512 MB allocation.
                let v = if off.len() > 4 && self.rng.chance(50) {
                    Vec::new()
                } else {
                    self.value()
                };
                ("SETRANGE", vec![self.skey(), off, v])
            }
            16 | 17 => ("INCR", vec![self.skey()]),
            18 => ("DECR", vec![self.skey()]),
            19 | 20 => ("INCRBY", vec![self.skey(), self.int()]),
            21 => ("DECRBY", vec![self.skey(), self.int()]),
            22 | 23 => ("INCRBYFLOAT", vec![self.skey(), self.float()]),
            24 => ("SETNX", vec![self.skey(), self.value()]),
            25 => {
                if self.rng.chance(50) {
                    ("SETEX", vec![self.skey(), self.rel(false), self.value()])
                } else {
                    ("PSETEX", vec![self.skey(), self.rel(true), self.value()])
                }
            }
            26 | 27 => ("DEL", self.keys(1, 3)),
            28 => ("UNLINK", self.keys(1, 3)),
            29 => ("EXISTS", self.keys(1, 4)),
            30 => ("TYPE", vec![self.key()]),
            31..=33 => {
                let (n, t) = match self.rng.below(4) {
                    0 => ("EXPIRE", self.rel(false)),
                    1 => ("PEXPIRE", self.rel(true)),
                    2 => ("EXPIREAT", self.abs(false)),
                    _ => ("PEXPIREAT", self.abs(true)),
                };
                let mut a = vec![self.key(), t];
                for _ in 0..self.rng.below(3) {
                    let o = self
                        .rng
                        .pick::<str>(&["NX", "XX", "GT", "LT", "NX", "XX", "GT", "LT", "ZZ"]);
                    a.push(self.name(o));
                }
                (n, a)
            }
            34 => ("PERSIST", vec![self.key()]),
            35 | 36 if !in_script => {
                norm = Norm::Ttl;
                let n = self
                    .rng
                    .pick::<str>(&["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"]);
                (n, vec![self.key()])
            }
            37 => ("RENAME", vec![self.key(), self.key()]),
            38 => ("RENAMENX", vec![self.key(), self.key()]),
            39 => {
                let mut a = vec![self.key(), self.key()];
                for _ in 0..self.rng.below(3) {
                    match self.rng.below(3) {
                        0 => a.push(self.name("REPLACE")),
                        1 => {
                            a.push(self.name("DB"));
                            let d = self
                                .rng
                                .pick::<[u8]>(&[b"0", b"1", b"1", b"16", b"-1", b"x"]);
                            a.push(d.to_vec());
                        }
                        _ => a.push(self.name("NOPE")),
                    }
                }
                ("COPY", a)
            }
            40 => ("TOUCH", self.keys(1, 3)),
            41 if !in_script => {
                norm = Norm::DbSize;
                ("DBSIZE", vec![])
            }
            42 => {
                let d = self.rng.pick::<[u8]>(&[b"0", b"1", b"1", b"16", b"x"]);
                ("MOVE", vec![self.key(), d.to_vec()])
            }
            43..=45 => {
                let mut a = vec![self.hkey()];
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.field());
                    a.push(self.value());
                }
                if self.rng.chance(8) {
                    a.pop();
                }
                (if self.rng.chance(85) { "HSET" } else { "HMSET" }, a)
            }
            46 => ("HSETNX", vec![self.hkey(), self.field(), self.value()]),
            47 | 48 => ("HGET", vec![self.hkey(), self.field()]),
            49 => {
                let mut a = vec![self.hkey()];
                for _ in 0..self.rng.range(1, 4) {
                    a.push(self.field());
                }
                ("HMGET", a)
            }
            50 => {
                let mut a = vec![self.hkey()];
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.field());
                }
                ("HDEL", a)
            }
            51 => ("HEXISTS", vec![self.hkey(), self.field()]),
            52 => ("HLEN", vec![self.hkey()]),
            53 => ("HSTRLEN", vec![self.hkey(), self.field()]),
            54 | 55 => ("HINCRBY", vec![self.hkey(), self.field(), self.int()]),
            56 | 57 => (
                "HINCRBYFLOAT",
                vec![self.hkey(), self.field(), self.float()],
            ),
            62 | 63 if !in_script => {
                norm = Norm::Unordered;
                ("KEYS", vec![self.pattern()])
            }
            64 if !in_script => {
                norm = Norm::Scan;
                let mut a = vec![b"0".to_vec()];
                self.scan_opts(&mut a, true);
                ("SCAN", a)
            }
            65 if !in_script => {
                norm = Norm::HScan;
                let mut a = vec![self.hkey(), b"0".to_vec()];
                self.scan_opts(&mut a, false);
                ("HSCAN", a)
            }
            58..=61 if !in_script => {
                norm = Norm::HashOrder;
                let n = self
                    .rng
                    .pick::<str>(&["HGETALL", "HGETALL", "HKEYS", "HVALS"]);
                (n, vec![self.hkey()])
            }
            66..=75 => self.bit_cmd(),
            76..=82 => self.hll_cmd(),
            83..=89 => self.geo_cmd(),
            90..=96 => self.stream_cmd(),
            _ => ("HGET", vec![self.key(), self.field()]),
        };
        let mut args = vec![self.name(n)];
        args.extend(rest);
        Op {
            args,
            tag: n.to_string(),
            norm,
        }
    }

    /// An HLL element: a small pool, so counts change and repeat.
    fn hll_element(&mut self) -> Vec<u8> {
        match self.rng.below(10) {
            0 => Vec::new(),
            1 => self.value(),
            _ => format!("e{}", self.rng.below(40)).into_bytes(),
        }
    }

    /// PFADD, PFCOUNT, PFMERGE, PFDEBUG on the string keys (so SET, APPEND and SETRANGE
    /// corrupt them now and then).
    fn hll_cmd(&mut self) -> (&'static str, Vec<Vec<u8>>) {
        match self.rng.below(8) {
            0..=2 => {
                let mut a = vec![self.skey()];
                for _ in 0..self.rng.below(6) {
                    a.push(self.hll_element());
                }
                ("PFADD", a)
            }
            3 | 4 => {
                let a = (0..self.rng.range(1, 3)).map(|_| self.skey()).collect();
                ("PFCOUNT", a)
            }
            5 => {
                let a = (0..self.rng.range(1, 3)).map(|_| self.skey()).collect();
                ("PFMERGE", a)
            }
            _ => {
                let sub = self.rng.pick::<str>(&[
                    "ENCODING", "DECODE", "TODENSE", "ENCODING", "DECODE", "GETREG", "NOPE",
                ]);
                let sub = if sub == "GETREG" && !self.rng.chance(10) {
                    "ENCODING"
                } else {
                    sub
                };
                ("PFDEBUG", vec![self.name(sub), self.skey()])
            }
        }
    }

    /// A longitude or latitude: mostly near Sicily (so searches find members), sometimes at
    /// or past the limits, sometimes no number at all.
    fn coord(&mut self, lat: bool) -> Vec<u8> {
        match self.rng.below(20) {
            0 => self.float(),
            1 => self
                .rng
                .pick::<[u8]>(if lat {
                    &[b"85.05112878", b"-85.05112878", b"85.06", b"90", b"0"]
                } else {
                    &[b"180", b"-180", b"180.0001", b"-200", b"0"]
                })
                .to_vec(),
            _ => {
                let base = if lat { 37 } else { 13 };
                format!(
                    "{}.{:06}",
                    base + self.rng.range(0, 2),
                    self.rng.below(1_000_000)
                )
                .into_bytes()
            }
        }
    }

    fn geo_member(&mut self) -> Vec<u8> {
        if self.rng.chance(5) {
            self.value()
        } else {
            format!("m{}", self.rng.below(12)).into_bytes()
        }
    }

    fn geo_unit(&mut self) -> Vec<u8> {
        let u = self
            .rng
            .pick::<str>(&["m", "km", "mi", "ft", "KM", "km", "parsec"]);
        u.as_bytes().to_vec()
    }

    fn geo_radius(&mut self) -> Vec<u8> {
        if self.rng.chance(10) {
            self.float()
        } else {
            self.rng.range(0, 300).to_string().into_bytes()
        }
    }

    /// The options of a search: WITH*, ASC/DESC, COUNT [ANY], and for the older forms STORE.
    fn geo_options(&mut self, a: &mut Vec<Vec<u8>>, store: bool) {
        for _ in 0..self.rng.below(4) {
            match self.rng.below(9) {
                0 => a.push(self.name("WITHDIST")),
                1 => a.push(self.name("WITHCOORD")),
                2 => a.push(self.name("WITHHASH")),
                3 => a.push(self.name("ASC")),
                4 => a.push(self.name("DESC")),
                5 | 6 => {
                    a.push(self.name("COUNT"));
                    a.push(if self.rng.chance(90) {
                        self.rng.range(1, 6).to_string().into_bytes()
                    } else {
                        self.rng.pick(INTS).to_vec()
                    });
                    if self.rng.chance(30) {
                        a.push(self.name("ANY"));
                    }
                }
                7 if store => {
                    let o = if self.rng.chance(50) {
                        "STORE"
                    } else {
                        "STOREDIST"
                    };
                    a.push(self.name(o));
                    a.push(self.key());
                }
                _ => a.push(self.name("ANY")),
            }
        }
    }

    /// GEOADD, GEOPOS, GEOHASH, GEODIST, GEORADIUS[BYMEMBER][_RO], GEOSEARCH[STORE].
    fn geo_cmd(&mut self) -> (&'static str, Vec<Vec<u8>>) {
        match self.rng.below(12) {
            0..=3 => {
                let mut a = vec![self.key()];
                for _ in 0..self.rng.below(2) {
                    let o = self.rng.pick::<str>(&["NX", "XX", "CH", "CH", "GT"]);
                    a.push(self.name(o));
                }
                for _ in 0..self.rng.range(1, 4) {
                    a.push(self.coord(false));
                    a.push(self.coord(true));
                    a.push(self.geo_member());
                }
                if self.rng.chance(3) {
                    a.pop();
                }
                ("GEOADD", a)
            }
            4 => {
                let mut a = vec![self.key()];
                for _ in 0..self.rng.below(4) {
                    a.push(self.geo_member());
                }
                (self.rng.pick::<str>(&["GEOPOS", "GEOHASH"]), a)
            }
            5 => {
                let mut a = vec![self.key(), self.geo_member(), self.geo_member()];
                if self.rng.chance(70) {
                    a.push(self.geo_unit());
                }
                ("GEODIST", a)
            }
            6 | 7 => {
                let ro = self.rng.chance(30);
                let mut a = vec![self.key(), self.coord(false), self.coord(true)];
                a.push(self.geo_radius());
                a.push(self.geo_unit());
                self.geo_options(&mut a, !ro);
                (if ro { "GEORADIUS_RO" } else { "GEORADIUS" }, a)
            }
            8 => {
                let ro = self.rng.chance(30);
                let mut a = vec![self.key(), self.geo_member(), self.geo_radius()];
                a.push(self.geo_unit());
                self.geo_options(&mut a, !ro);
                (
                    if ro {
                        "GEORADIUSBYMEMBER_RO"
                    } else {
                        "GEORADIUSBYMEMBER"
                    },
                    a,
                )
            }
            _ => {
                let store = self.rng.chance(30);
                let mut a = Vec::new();
                if store {
                    a.push(self.key());
                }
                a.push(self.key());
                if self.rng.chance(50) {
                    a.push(self.name("FROMMEMBER"));
                    a.push(self.geo_member());
                } else {
                    a.push(self.name("FROMLONLAT"));
                    a.push(self.coord(false));
                    a.push(self.coord(true));
                }
                if self.rng.chance(50) {
                    a.push(self.name("BYRADIUS"));
                    a.push(self.geo_radius());
                } else {
                    a.push(self.name("BYBOX"));
                    a.push(self.geo_radius());
                    a.push(self.geo_radius());
                }
                a.push(self.geo_unit());
                self.geo_options(&mut a, false);
                if store && self.rng.chance(30) {
                    a.push(self.name("STOREDIST"));
                }
                (if store { "GEOSEARCHSTORE" } else { "GEOSEARCH" }, a)
            }
        }
    }

    /// Mostly the keys streams live on (x0..x2), else any key (WRONGTYPE, missing keys).
    fn xkey(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick::<[u8]>(&[b"x0", b"x1", b"x2"]).to_vec()
        } else {
            self.key()
        }
    }
    /// A stream ID argument: small explicit IDs (so both servers make the same ones; `*`
    /// would follow each server's clock), incomplete and special forms, and invalid ones.
    fn xid(&mut self) -> Vec<u8> {
        let r = &mut self.rng;
        match r.below(14) {
            0..=5 => format!("{}-{}", r.range(0, 30), r.range(0, 3)),
            6 | 7 => r.range(0, 30).to_string(),
            8 => format!("({}-{}", r.range(0, 30), r.range(0, 3)),
            9 => format!("({}", r.range(0, 30)),
            10 => r.pick::<str>(&["-", "+", "$", ">"]).to_string(),
            11 => r
                .pick::<str>(&["18446744073709551615-18446744073709551615", "(0-0", "0-0"])
                .to_string(),
            12 => format!("{}-*", r.range(0, 30)),
            _ => r
                .pick::<str>(&["x", "1-x", "-1", "", "1-2-3", " 5", "(-"])
                .to_string(),
        }
        .into_bytes()
    }
    fn xgroup_name(&mut self) -> Vec<u8> {
        self.rng.pick::<[u8]>(&[b"g0", b"g1", b"nog"]).to_vec()
    }
    fn xconsumer(&mut self) -> Vec<u8> {
        self.rng.pick::<[u8]>(&[b"c0", b"c1", b"c2"]).to_vec()
    }
    /// A trimming option (MAXLEN/MINID with `=`/`~` and LIMIT), sometimes malformed.
    fn xtrim_opts(&mut self, a: &mut Vec<Vec<u8>>) {
        let strategy = if self.rng.chance(50) {
            "MAXLEN"
        } else {
            "MINID"
        };
        a.push(self.name(strategy));
        let approx = self.rng.below(3);
        match approx {
            0 => a.push(b"~".to_vec()),
            1 => a.push(b"=".to_vec()),
            _ => {}
        }
        if strategy == "MAXLEN" {
            a.push(self.rng.range(-1, 12).to_string().into_bytes());
        } else {
            a.push(self.xid());
        }
        if self.rng.chance(20) {
            a.push(self.name("LIMIT"));
            a.push(self.rng.range(-1, 20).to_string().into_bytes());
        }
    }
    /// Stream commands whose replies do not depend on the clock: explicit IDs only, no idle
    /// times (XPENDING's summary, claims with JUSTID or min-idle 0, XINFO without FULL).
    fn stream_cmd(&mut self) -> (&'static str, Vec<Vec<u8>>) {
        match self.rng.below(20) {
            0..=4 => {
                let mut a = vec![self.xkey()];
                if self.rng.chance(10) {
                    a.push(self.name("NOMKSTREAM"));
                }
                if self.rng.chance(25) {
                    self.xtrim_opts(&mut a);
                }
                a.push(self.xid());
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.field());
                    a.push(self.value());
                }
                if self.rng.chance(5) {
                    a.pop();
                }
                ("XADD", a)
            }
            5 | 6 => {
                let n = if self.rng.chance(50) {
                    "XRANGE"
                } else {
                    "XREVRANGE"
                };
                let mut a = vec![self.xkey(), self.xid(), self.xid()];
                if self.rng.chance(40) {
                    a.push(self.name("COUNT"));
                    a.push(self.rng.range(-1, 5).to_string().into_bytes());
                }
                (n, a)
            }
            7 => ("XLEN", vec![self.xkey()]),
            8 => {
                let mut a = vec![self.xkey()];
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.xid());
                }
                ("XDEL", a)
            }
            9 => {
                let mut a = vec![self.xkey()];
                self.xtrim_opts(&mut a);
                ("XTRIM", a)
            }
            10 => {
                let mut a = vec![self.xkey(), self.xid()];
                if self.rng.chance(30) {
                    a.push(self.name("ENTRIESADDED"));
                    a.push(self.rng.range(-1, 40).to_string().into_bytes());
                }
                if self.rng.chance(30) {
                    a.push(self.name("MAXDELETEDID"));
                    a.push(self.xid());
                }
                ("XSETID", a)
            }
            11 => {
                let mut a = Vec::new();
                if self.rng.chance(40) {
                    a.push(self.name("COUNT"));
                    a.push(self.rng.range(-1, 4).to_string().into_bytes());
                }
                a.push(self.name("STREAMS"));
                let n = self.rng.range(1, 2);
                let keys: Vec<Vec<u8>> = (0..n).map(|_| self.xkey()).collect();
                a.extend(keys);
                for _ in 0..n {
                    a.push(self.xid());
                }
                ("XREAD", a)
            }
            12 | 13 => {
                let mut a = vec![self.name("GROUP"), self.xgroup_name(), self.xconsumer()];
                if self.rng.chance(40) {
                    a.push(self.name("COUNT"));
                    a.push(self.rng.range(0, 4).to_string().into_bytes());
                }
                if self.rng.chance(20) {
                    a.push(self.name("NOACK"));
                }
                a.push(self.name("STREAMS"));
                a.push(self.xkey());
                a.push(if self.rng.chance(60) {
                    b">".to_vec()
                } else {
                    self.xid()
                });
                ("XREADGROUP", a)
            }
            14 => {
                let sub = self.rng.pick::<str>(&[
                    "CREATE",
                    "CREATE",
                    "SETID",
                    "DESTROY",
                    "CREATECONSUMER",
                    "DELCONSUMER",
                ]);
                let mut a = vec![self.name(sub), self.xkey(), self.xgroup_name()];
                match sub {
                    "CREATE" | "SETID" => {
                        a.push(self.xid());
                        if sub == "CREATE" && self.rng.chance(50) {
                            a.push(self.name("MKSTREAM"));
                        }
                        if self.rng.chance(20) {
                            a.push(self.name("ENTRIESREAD"));
                            a.push(self.rng.range(-2, 10).to_string().into_bytes());
                        }
                    }
                    "CREATECONSUMER" | "DELCONSUMER" => a.push(self.xconsumer()),
                    _ => {}
                }
                ("XGROUP", a)
            }
            15 => {
                let mut a = vec![self.xkey(), self.xgroup_name()];
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.xid());
                }
                ("XACK", a)
            }
            16 => ("XPENDING", vec![self.xkey(), self.xgroup_name()]),
            17 => {
                let mut a = vec![
                    self.xkey(),
                    self.xgroup_name(),
                    self.xconsumer(),
                    b"0".to_vec(),
                ];
                for _ in 0..self.rng.range(1, 3) {
                    a.push(self.xid());
                }
                if self.rng.chance(50) {
                    a.push(self.name("JUSTID"));
                }
                if self.rng.chance(20) {
                    a.push(self.name("FORCE"));
                }
                if self.rng.chance(20) {
                    a.push(self.name("LASTID"));
                    a.push(self.xid());
                }
                ("XCLAIM", a)
            }
            18 => {
                let mut a = vec![
                    self.xkey(),
                    self.xgroup_name(),
                    self.xconsumer(),
                    b"0".to_vec(),
                    self.xid(),
                ];
                if self.rng.chance(40) {
                    a.push(self.name("COUNT"));
                    a.push(self.rng.range(0, 4).to_string().into_bytes());
                }
                if self.rng.chance(50) {
                    a.push(self.name("JUSTID"));
                }
                ("XAUTOCLAIM", a)
            }
            _ => {
                if self.rng.chance(50) {
                    ("XINFO", vec![self.name("STREAM"), self.xkey()])
                } else {
                    ("XINFO", vec![self.name("GROUPS"), self.xkey()])
                }
            }
        }
    }

    /// A bit offset: small ones mostly (the strings stay short), else one Redis refuses, so
    /// nothing ever allocates half a gigabyte.
    pub fn bit_offset(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.range(0, 90).to_string().into_bytes()
        } else {
            self.rng
                .pick::<[u8]>(&[
                    b"-1",
                    b"4294967296",
                    b"9223372036854775807",
                    b"x",
                    b"1.5",
                    b"",
                ])
                .to_vec()
        }
    }

    /// A BITCOUNT/BITPOS range end: small, negative, or out of range.
    pub fn bit_index(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.range(-40, 40).to_string().into_bytes()
        } else {
            self.rng.pick(INTS).to_vec()
        }
    }

    /// BIT, BYTE or something else, in any case.
    pub fn bit_unit(&mut self) -> Vec<u8> {
        let u = self
            .rng
            .pick::<str>(&["BIT", "BYTE", "BIT", "BYTE", "BITS"]);
        self.name(u)
    }

    /// A BITFIELD type: mostly valid widths, sometimes u64, i65, U8 or junk.
    pub fn bitfield_type(&mut self) -> Vec<u8> {
        if self.rng.chance(90) {
            let signed = self.rng.chance(50);
            let bits = self.rng.range(1, if signed { 64 } else { 63 });
            format!("{}{bits}", if signed { 'i' } else { 'u' }).into_bytes()
        } else {
            self.rng
                .pick::<[u8]>(&[b"u64", b"i65", b"i0", b"U8", b"x8", b"u"])
                .to_vec()
        }
    }

    /// SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO, LCS, OBJECT REFCOUNT.
    pub fn bit_cmd(&mut self) -> (&'static str, Vec<Vec<u8>>) {
        match self.rng.below(10) {
            0 | 1 => {
                let bit = self
                    .rng
                    .pick::<[u8]>(&[b"0", b"1", b"1", b"0", b"2", b"-1", b"x"]);
                ("SETBIT", vec![self.skey(), self.bit_offset(), bit.to_vec()])
            }
            2 => ("GETBIT", vec![self.skey(), self.bit_offset()]),
            3 => {
                let mut a = vec![self.skey()];
                let extra = self.rng.below(5);
                if extra >= 1 {
                    a.push(self.bit_index());
                }
                if extra >= 2 {
                    a.push(self.bit_index());
                }
                if extra >= 3 {
                    a.push(self.bit_unit());
                }
                ("BITCOUNT", a)
            }
            4 => {
                let bit = self.rng.pick::<[u8]>(&[b"0", b"1", b"0", b"1", b"2"]);
                let mut a = vec![self.skey(), bit.to_vec()];
                let extra = self.rng.below(4);
                if extra >= 1 {
                    a.push(self.bit_index());
                }
                if extra >= 2 {
                    a.push(self.bit_index());
                }
                if extra >= 3 {
                    a.push(self.bit_unit());
                }
                ("BITPOS", a)
            }
            5 => {
                let op = self
                    .rng
                    .pick::<str>(&["AND", "OR", "XOR", "NOT", "NOT", "NAND"]);
                let mut a = vec![self.name(op), self.skey()];
                a.extend(self.keys(1, 3));
                ("BITOP", a)
            }
            6 | 7 => {
                let ro = self.rng.chance(30);
                let mut a = vec![self.skey()];
                for _ in 0..self.rng.range(0, 4) {
                    match self.rng.below(if ro { 5 } else { 9 }) {
                        0..=2 => {
                            a.push(self.name("GET"));
                            a.push(self.bitfield_type());
                            a.push(self.bit_offset());
                        }
                        3 => {
                            a.push(self.name("OVERFLOW"));
                            let o = self
                                .rng
                                .pick::<str>(&["WRAP", "SAT", "FAIL", "FAIL", "BAD"]);
                            a.push(self.name(o));
                        }
                        4 => a.push(self.name("GET")),
                        5 | 6 => {
                            a.push(self.name("SET"));
                            a.push(self.bitfield_type());
                            a.push(self.bit_offset());
                            a.push(self.int());
                        }
                        _ => {
                            a.push(self.name("INCRBY"));
                            a.push(self.bitfield_type());
                            a.push(self.bit_offset());
                            a.push(self.int());
                        }
                    }
                }
                (if ro { "BITFIELD_RO" } else { "BITFIELD" }, a)
            }
            8 => {
                let mut a = vec![self.skey(), self.skey()];
                match self.rng.below(6) {
                    0 => a.push(self.name("LEN")),
                    1 => a.push(self.name("IDX")),
                    2 => {
                        a.push(self.name("IDX"));
                        a.push(self.name("MINMATCHLEN"));
                        a.push(self.bit_index());
                        a.push(self.name("WITHMATCHLEN"));
                    }
                    3 => {
                        a.push(self.name("LEN"));
                        a.push(self.name("IDX"));
                    }
                    _ => {}
                }
                ("LCS", a)
            }
            // OBJECT ENCODING is left out: a key whose TTL ends after 2042 (the generator's
            // far-future times) reads as tryObjectEncoding'd, a documented difference.
            _ => {
                let sub = self.rng.pick::<str>(&["REFCOUNT", "FOO", "HELP"]);
                ("OBJECT", vec![self.name(sub), self.key()])
            }
        }
    }

    pub fn eval(&mut self) -> Op {
        const T_CALL: &str = "return redis.call(unpack(ARGV))";
        let inner = |g: &mut Gen| g.data_cmd(true);
        let (tpl, script, numkeys, argv, inner_tag): (
            usize,
            String,
            Vec<u8>,
            Vec<Vec<u8>>,
            String,
        ) = match self.rng.below(27) {
            0..=5 => {
                let o = inner(self);
                (0, T_CALL.into(), b"0".to_vec(), o.args, o.tag)
            }
            6 | 7 => {
                let o = inner(self);
                (
                    1,
                    "return redis.pcall(unpack(ARGV))".into(),
                    b"0".to_vec(),
                    o.args,
                    o.tag,
                )
            }
            8 | 9 => {
                let o = inner(self);
                let s = "local r = redis.pcall(unpack(ARGV)) \
                             if type(r) == 'table' and r.err then return {'caught', r.err} end \
                             return {type(r), r}";
                (2, s.into(), b"0".to_vec(), o.args, o.tag)
            }
            10 => {
                let o = inner(self);
                let s = "redis.call(unpack(ARGV)) return redis.status_reply('DONE')";
                (3, s.into(), b"0".to_vec(), o.args, o.tag)
            }
            11 => {
                let o = inner(self);
                let k = o.args.get(1).cloned().unwrap_or_default();
                let mut a = vec![k];
                a.extend(o.args);
                let s = "local a = redis.call(unpack(ARGV)) \
                             return {a, redis.call('EXISTS', KEYS[1]), redis.call('TYPE', KEYS[1])}";
                (4, s.into(), b"1".to_vec(), a, o.tag)
            }
            12 => {
                let o = inner(self);
                let s = "redis.setresp(3) return redis.call(unpack(ARGV))";
                (5, s.into(), b"0".to_vec(), o.args, o.tag)
            }
            13 => {
                let which = self.rng.below(4);
                let s = [
                    "return redis.status_reply(ARGV[1])",
                    "return redis.error_reply(ARGV[1])",
                    "return {ok=ARGV[1]}",
                    "return {err=ARGV[1]}",
                ][which as usize];
                let v = self
                    .rng
                    .pick::<[u8]>(&[
                        b"",
                        b"OK",
                        b"ERR x",
                        b"MYERR y z",
                        b"-ERR dash",
                        b"plain text",
                        b"a\r\nb",
                    ])
                    .to_vec();
                (
                    6 + which as usize,
                    s.into(),
                    b"0".to_vec(),
                    vec![v],
                    String::new(),
                )
            }
            14 => {
                let v = if self.rng.chance(50) {
                    self.float()
                } else {
                    self.value()
                };
                (
                    10,
                    "return tonumber(ARGV[1])".into(),
                    b"0".to_vec(),
                    vec![v],
                    String::new(),
                )
            }
            15 => {
                let s = self.rng.pick::<str>(&[
                    "return {1, 2.5, 'x', false, true, {3, 'y', {}}}",
                    "return {1, nil, 3}",
                    "return true",
                    "return false",
                    "return nil",
                    "return 3.99",
                    "return -0.5",
                    "return {}",
                    "return {ok='fine'}",
                    "return {err='ERR mine'}",
                    "return {err='nospace'}",
                    "return {double=3.25}",
                    "return {double='1.5'}",
                    "return {map={a=1}}",
                    "return {set={a=true}}",
                    "return {big_number='12345678901234567890'}",
                    "return {map={a={double=0.5}}}",
                    "redis.setresp(3) return redis.call('HGET', 'nokey', 'f')",
                    "return {1, {ok='x'}, {err='ERR nested'}}",
                    "return redis.sha1hex('')",
                    "return 'str'",
                    "return 1e300",
                    "return {1e300, -1e300, 0/0}",
                ]);
                (11, s.into(), b"0".to_vec(), vec![], String::new())
            }
            16 => {
                let s = "local v = redis.call('GET', KEYS[1]) return v .. 'x'";
                (12, s.into(), b"1".to_vec(), vec![self.key()], String::new())
            }
            17 => {
                let s = self.rng.pick::<str>(&[
                    "return +",
                    "error('boom')",
                    "error({err='ERR custom'})",
                    "error({err='CUSTOM custom'})",
                    "return redis.call()",
                    "return redis.pcall()",
                    "return redis.call('nosuch', 'a')",
                    "return redis.pcall('nosuch', 'a')",
                    "return redis.call('EVAL', 'return 1', '0')",
                    "return redis.call('GET', {})",
                    "return redis.call('GET', 1.5)",
                    "return redis.call('SET', KEYS[1], 2.75)",
                    "x = 1",
                    "return undefined_var",
                    "return redis.call('PING')",
                    "return redis.call('ECHO', 'hi')",
                    "return redis.call('SELECT', '1')",
                ]);
                (13, s.into(), b"1".to_vec(), vec![self.key()], String::new())
            }
            18 => {
                // EVAL's own argument errors.
                let nk = self
                    .rng
                    .pick::<[u8]>(&[b"-1", b"3", b"x", b"", b"9223372036854775807", b"1"])
                    .to_vec();
                (14, "return KEYS[1]".into(), nk, vec![], String::new())
            }
            19 => {
                let s = "return {KEYS[1], ARGV[1], #KEYS, #ARGV}";
                (
                    15,
                    s.into(),
                    b"1".to_vec(),
                    vec![self.key(), self.value()],
                    String::new(),
                )
            }
            20 | 21 => {
                // A few writes then a read, in one script.
                let s = "redis.call('SET', KEYS[1], ARGV[1]) \
                             local n = redis.pcall('INCRBYFLOAT', KEYS[1], ARGV[2]) \
                             return {n, redis.call('GET', KEYS[1]), redis.call('STRLEN', KEYS[1])}";
                (
                    16,
                    s.into(),
                    b"1".to_vec(),
                    vec![self.key(), self.value(), self.float()],
                    String::new(),
                )
            }
            _ => {
                let s = "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) \
                             local n = redis.pcall('HINCRBY', KEYS[1], ARGV[1], ARGV[3]) \
                             return {n, redis.call('HGET', KEYS[1], ARGV[1]), redis.call('HLEN', KEYS[1])}";
                (
                    17,
                    s.into(),
                    b"1".to_vec(),
                    vec![self.key(), self.field(), self.value(), self.int()],
                    String::new(),
                )
            }
        };
        let ro = tpl == 0 && self.rng.chance(15);
        let sha = tpl == 0 && !ro && self.rng.chance(20);
        let mut args = if sha {
            let h = sha1_smol::Sha1::from(script.as_bytes())
                .digest()
                .to_string();
            vec![self.name("EVALSHA"), h.into_bytes()]
        } else {
            vec![
                self.name(if ro { "EVAL_RO" } else { "EVAL" }),
                script.into_bytes(),
            ]
        };
        args.push(numkeys);
        args.extend(argv);
        Op {
            args,
            tag: format!("EVAL:{}:{}", tpl, inner_tag),
            norm: Norm::Exact,
        }
    }

    pub fn garbage(&mut self) -> Op {
        match self.rng.below(3) {
            0 => {
                let n = self
                    .rng
                    .pick::<[u8]>(&[
                        b"FOO",
                        b"gett",
                        b"",
                        b"hsett",
                        b"\x00",
                        b"SET ",
                        b"incr\r\n",
                        b"\xff",
                    ])
                    .to_vec();
                let mut args = vec![n];
                for _ in 0..self.rng.below(3) {
                    args.push(self.value());
                }
                Op {
                    args,
                    tag: "UNKNOWN".into(),
                    norm: Norm::Exact,
                }
            }
            _ => {
                // Wrong arity: drop or add arguments to a well-formed command.
                let mut o = self.data_cmd(false);
                if self.rng.chance(50) && o.args.len() > 1 {
                    let keep = 1 + self.rng.below(o.args.len() as u64 - 1) as usize;
                    o.args.truncate(keep);
                } else {
                    for _ in 0..self.rng.range(1, 3) {
                        o.args.push(self.value());
                    }
                }
                if o.norm == Norm::HashOrder && o.args.len() != 2 {
                    o.norm = Norm::Exact;
                }
                o.tag = format!("ARITY:{}", o.tag);
                o
            }
        }
    }

    pub fn op(&mut self) -> Op {
        match self.rng.below(100) {
            0..=79 => self.data_cmd(false),
            80..=91 => self.eval(),
            92..=97 => self.garbage(),
            98 => {
                let d = self.rng.pick::<[u8]>(&[b"0", b"0", b"1", b"16", b"x"]);
                let args = vec![self.name("SELECT"), d.to_vec()];
                Op {
                    args,
                    tag: "SELECT".into(),
                    norm: Norm::Exact,
                }
            }
            _ => {
                let n = if self.rng.chance(70) {
                    "PING"
                } else if self.resp3 {
                    "FLUSHDB"
                } else {
                    "ECHO"
                };
                let mut args = vec![self.name(n)];
                if n == "ECHO" || self.rng.chance(30) && n == "PING" {
                    args.push(self.value());
                }
                Op {
                    tag: n.into(),
                    args,
                    norm: Norm::Exact,
                }
            }
        }
    }
}
