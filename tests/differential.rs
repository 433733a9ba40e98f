//! Differential test: the same random command sequences go to a live redis-server 7.0 (the
//! spec) and to an in-process resplock, and the raw replies are compared byte for byte, to find
//! divergences the hand-written cases miss.
//!
//! - `cargo test --test differential`: skipped (passes) unless a reference server is given.
//! - `CONFORMANCE_REDIS=127.0.0.1:PORT cargo test --test differential -- --nocapture`: runs.
//! - `DIFF_SEED=N` (default 1) or `DIFF_SEED=A..B` (seeds A to B-1); `DIFF_OPS=N` operations
//!   per seed (default 20000, split between a RESP2 and a RESP3 phase).
//! - `DIFF_EXCLUDE=TAG,TAG`: locally skip generated commands whose tag (command name, or
//!   `EVAL:<template>:<inner command>`, `ARITY:<command>`, `UNKNOWN`) contains one of these,
//!   to look past a known divergence. `DIFF_TRACE=N` prints the first N commands and replies.
//!
//! Nondeterminism is kept out of the grammar: no RANDOMKEY/HRANDFIELD/TIME/INFO/CLIENT, scans
//! only from cursor 0; relative expiry times are >= 100 s and drawn from a wide range (so GT/LT
//! never compare two times that differ only by the wall clock between the servers); absolute
//! ones are far in the future or in the past. TTL-style replies compare as -2, -1 or ">= 0".
//! HGETALL/HKEYS/HVALS compare in order, except when redis reports the hash as
//! hashtable-encoded (its order is then a hash-seed accident), where they compare as
//! multisets; KEYS as a multiset; SCAN 0 by
//! cursor and key set while the database holds fewer keys than COUNT (by shape otherwise);
//! DBSIZE after both sides have looked up every argument sent (a key SET with a past EXAT
//! stays counted until then or until an active expiry cycle, which is timing).

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// splitmix64: small, fast and stable across crate versions, so a seed always means the same
/// command sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// How a reply is compared.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Norm {
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
}

struct Op {
    args: Vec<Vec<u8>>,
    tag: String,
    norm: Norm,
}

const KEYS: &[&[u8]] = &[b"k0", b"k1", b"k2", b"k3", b"k4", b"k5", b"k\x00\xff"];
const FIELDS: &[&[u8]] = &[b"f0", b"f1", b"f2", b"f3", b"f4", b""];

/// Values: empty, numbers (canonical or not, near the i64 limits), floats, binary, long.
const VALUES: &[&[u8]] = &[
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

const INTS: &[&[u8]] = &[
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

const FLOATS: &[&[u8]] = &[
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

struct Gen {
    rng: Rng,
    resp3: bool,
}

impl Gen {
    fn name(&mut self, n: &str) -> Vec<u8> {
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
    fn key(&mut self) -> Vec<u8> {
        if self.rng.chance(3) {
            Vec::new()
        } else {
            self.rng.pick(KEYS).to_vec()
        }
    }
    /// Mostly the keys strings live on (k0..k3), so that fewer replies are WRONGTYPE.
    fn skey(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick(&KEYS[..4]).to_vec()
        } else {
            self.key()
        }
    }
    /// Mostly the keys hashes live on (k3..k6).
    fn hkey(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.pick(&KEYS[3..]).to_vec()
        } else {
            self.key()
        }
    }
    /// A number as text: integers of every magnitude (near the i64 limits too) and floats in
    /// the shapes strtold accepts and rejects.
    fn number(&mut self) -> Vec<u8> {
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
    fn field(&mut self) -> Vec<u8> {
        if self.rng.chance(1) {
            vec![b'F'; 70]
        } else {
            self.rng.pick(FIELDS).to_vec()
        }
    }
    fn value(&mut self) -> Vec<u8> {
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
    fn int(&mut self) -> Vec<u8> {
        if self.rng.chance(15) {
            self.number()
        } else if self.rng.chance(50) {
            self.rng.range(-100, 100).to_string().into_bytes()
        } else {
            self.rng.pick(INTS).to_vec()
        }
    }
    fn float(&mut self) -> Vec<u8> {
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
    fn rel(&mut self, ms: bool) -> Vec<u8> {
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
    fn abs(&mut self, ms: bool) -> Vec<u8> {
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
    fn keys(&mut self, lo: u64, hi: u64) -> Vec<Vec<u8>> {
        let n = lo + self.rng.below(hi - lo + 1);
        (0..n).map(|_| self.key()).collect()
    }
    /// A glob pattern for KEYS/SCAN/HSCAN MATCH: fixed edge cases or random over the key
    /// space's alphabet and the glob metacharacters.
    fn pattern(&mut self) -> Vec<u8> {
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
    fn scan_opts(&mut self, a: &mut Vec<Vec<u8>>, with_type: bool) {
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
    fn expiry_opt(&mut self, out: &mut Vec<Vec<u8>>) {
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
    fn data_cmd(&mut self, in_script: bool) -> Op {
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
    fn bit_offset(&mut self) -> Vec<u8> {
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
    fn bit_index(&mut self) -> Vec<u8> {
        if self.rng.chance(85) {
            self.rng.range(-40, 40).to_string().into_bytes()
        } else {
            self.rng.pick(INTS).to_vec()
        }
    }

    /// BIT, BYTE or something else, in any case.
    fn bit_unit(&mut self) -> Vec<u8> {
        let u = self
            .rng
            .pick::<str>(&["BIT", "BYTE", "BIT", "BYTE", "BITS"]);
        self.name(u)
    }

    /// A BITFIELD type: mostly valid widths, sometimes u64, i65, U8 or junk.
    fn bitfield_type(&mut self) -> Vec<u8> {
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
    fn bit_cmd(&mut self) -> (&'static str, Vec<Vec<u8>>) {
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

    fn eval(&mut self) -> Op {
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

    fn garbage(&mut self) -> Op {
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

    fn op(&mut self) -> Op {
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

/// Length of the first complete RESP2/RESP3 frame in `b`, if complete. Unlike the shared
/// helper it accepts any bytes on a status or error line (Redis sends arguments raw there).
fn frame_len(b: &[u8]) -> Option<usize> {
    fn one(b: &[u8], pos: usize) -> Option<usize> {
        let t = *b.get(pos)?;
        let eol = pos + b[pos..].windows(2).position(|w| w == b"\r\n")?;
        let next = eol + 2;
        let num = || -> Option<i64> { std::str::from_utf8(&b[pos + 1..eol]).ok()?.parse().ok() };
        match t {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(next),
            b'$' | b'=' | b'!' => {
                let n = num()?;
                if n < 0 {
                    return Some(next);
                }
                let end = next + n as usize + 2;
                (b.len() >= end).then_some(end)
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = num()?;
                let n = if t == b'%' || t == b'|' { n * 2 } else { n };
                let mut p = next;
                for _ in 0..n.max(0) {
                    p = one(b, p)?;
                }
                Some(p)
            }
            _ => None,
        }
    }
    one(b, 0)
}

struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_nodelay(true).unwrap();
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    async fn send(&mut self, args: &[Vec<u8>]) {
        let mut req = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            req.extend_from_slice(a);
            req.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&req).await.expect("write");
    }

    /// The next reply frame, or a description of why there is none.
    async fn reply(&mut self) -> Vec<u8> {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(n) = frame_len(&self.buf) {
                return self.buf.drain(..n).collect();
            }
            self.buf.reserve(65536);
            match tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    let mut v = b"<connection closed> ".to_vec();
                    v.append(&mut self.buf);
                    return v;
                }
                Err(_) => {
                    let mut v = b"<no reply in 5 s> ".to_vec();
                    v.append(&mut self.buf);
                    return v;
                }
                Ok(Ok(_)) => {}
            }
        }
    }

    async fn call(&mut self, args: &[Vec<u8>]) -> Vec<u8> {
        self.send(args).await;
        self.reply().await
    }
}

fn show(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s
}

fn show_cmd(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| format!("\"{}\"", show(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn normalize_ttl(r: &[u8]) -> Vec<u8> {
    if r.first() == Some(&b':') {
        if let Ok(n) = std::str::from_utf8(&r[1..r.len().saturating_sub(2)])
            .unwrap_or("")
            .parse::<i64>()
        {
            if n >= 0 {
                return b":>=0\r\n".to_vec();
            }
        }
    }
    r.to_vec()
}

/// The elements of a top-level aggregate reply (map entries as key+value pairs), sorted.
fn sorted_elements(r: &[u8], pairs: bool) -> Option<Vec<Vec<u8>>> {
    let t = *r.first()?;
    if !matches!(t, b'*' | b'%' | b'~') {
        return None;
    }
    let eol = r.windows(2).position(|w| w == b"\r\n")?;
    let mut pos = eol + 2;
    let mut items = Vec::new();
    while pos < r.len() {
        let n = frame_len(&r[pos..])?;
        items.push(r[pos..pos + n].to_vec());
        pos += n;
    }
    let mut out: Vec<Vec<u8>> = if t == b'%' || pairs {
        items.chunks(2).map(|c| c.concat()).collect()
    } else {
        items
    };
    out.sort();
    Some(out)
}

/// The COUNT a SCAN asked for (10 when absent).
fn scan_count(args: &[Vec<u8>]) -> u64 {
    let mut count = 10;
    for w in args.windows(2) {
        if w[0].eq_ignore_ascii_case(b"COUNT") {
            if let Some(n) = std::str::from_utf8(&w[1]).ok().and_then(|s| s.parse().ok()) {
                count = n;
            }
        }
    }
    count
}

fn first_line(r: &[u8]) -> &[u8] {
    r.split(|&c| c == b'\n').next().unwrap_or(r)
}

/// A scan reply as (cursor frame, sorted elements).
fn scan_parts(r: &[u8], pairs: bool) -> Option<(Vec<u8>, Vec<Vec<u8>>)> {
    let rest = r.strip_prefix(b"*2\r\n")?;
    let n = frame_len(rest)?;
    let inner = &rest[n..];
    (frame_len(inner)? == inner.len()).then_some(())?;
    Some((rest[..n].to_vec(), sorted_elements(inner, pairs)?))
}

struct Divergence {
    index: usize,
    history: Vec<String>,
    cmd: String,
    redis: Vec<u8>,
    resplock: Vec<u8>,
}

/// Runs one phase (RESP2 or RESP3) of `ops` operations; the first divergence, if any.
async fn phase(
    redis_addr: SocketAddr,
    ours_addr: SocketAddr,
    seed: u64,
    resp3: bool,
    ops: usize,
    exclude: &[String],
) -> Option<Divergence> {
    let mut a = Conn::open(redis_addr).await;
    let mut b = Conn::open(ours_addr).await;
    let mut side = Conn::open(redis_addr).await;
    let mut side_ours = Conn::open(ours_addr).await;
    let setup: Vec<Vec<Vec<u8>>> = vec![
        vec![b"FLUSHALL".to_vec()],
        vec![b"SCRIPT".to_vec(), b"FLUSH".to_vec()],
    ];
    for s in &setup {
        let (ra, rb) = (a.call(s).await, b.call(s).await);
        assert_eq!(ra, b"+OK\r\n", "redis setup {}", show_cmd(s));
        assert_eq!(rb, b"+OK\r\n", "resplock setup {}", show_cmd(s));
    }
    if resp3 {
        let hello = vec![b"HELLO".to_vec(), b"3".to_vec()];
        let (ra, rb) = (a.call(&hello).await, b.call(&hello).await);
        assert!(ra.starts_with(b"%"), "redis HELLO 3: {}", show(&ra));
        assert!(rb.starts_with(b"%"), "resplock HELLO 3: {}", show(&rb));
    }
    let mut gen = Gen {
        rng: Rng(Rng(seed.wrapping_mul(2).wrapping_add(resp3 as u64)).next()),
        resp3,
    };
    let mut history: Vec<String> = Vec::new();
    let mut db: u8 = 0;
    let trace = env_usize("DIFF_TRACE", 0);
    let mut seen: std::collections::BTreeSet<Vec<u8>> = std::collections::BTreeSet::new();
    for index in 0..ops {
        let op = loop {
            let op = gen.op();
            if !exclude.iter().any(|x| op.tag.contains(x.as_str())) {
                break op;
            }
        };
        seen.extend(op.args.iter().filter(|a| a.len() <= 128).cloned());
        a.send(&op.args).await;
        b.send(&op.args).await;
        let (ra, rb) = tokio::join!(a.reply(), b.reply());
        let line = format!("[{index}] {}", show_cmd(&op.args));
        if index < trace {
            println!("{line}\n    -> \"{}\"", show(&ra));
        }
        history.push(line.clone());
        if history.len() > 20 {
            history.remove(0);
        }
        if op.tag == "SELECT" && ra == b"+OK\r\n" {
            db = op.args[1][0] - b'0';
        }
        let same = match op.norm {
            Norm::Exact => ra == rb,
            Norm::Ttl => normalize_ttl(&ra) == normalize_ttl(&rb),
            Norm::DbSize => {
                ra == rb || {
                    // Look up every argument sent so far on both sides (lazy expiry removes
                    // what has expired), then count again.
                    let mut counts = Vec::new();
                    for c in [&mut side, &mut side_ours] {
                        c.call(&[b"SELECT".to_vec(), vec![b'0' + db]]).await;
                        let mut exists = vec![b"EXISTS".to_vec()];
                        exists.extend(seen.iter().cloned());
                        c.call(&exists).await;
                        counts.push(c.call(&[b"DBSIZE".to_vec()]).await);
                    }
                    counts[0] == counts[1]
                }
            }
            Norm::Unordered => {
                ra == rb
                    || (first_line(&ra) == first_line(&rb)
                        && sorted_elements(&ra, false).is_some()
                        && sorted_elements(&ra, false) == sorted_elements(&rb, false))
            }
            Norm::Scan => {
                // Redis finishes in one call while the database holds fewer keys than COUNT;
                // with more, where the first page ends is its dict's layout: then only the
                // shape is compared.
                ra == rb || {
                    let count = scan_count(&op.args);
                    side.call(&[b"SELECT".to_vec(), vec![b'0' + db]]).await;
                    let size = side.call(&[b"DBSIZE".to_vec()]).await;
                    let size: u64 = std::str::from_utf8(&size[1..size.len() - 2])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(u64::MAX);
                    // A page that redis ended (cursor 0) must be the whole set on both
                    // sides; one it did not end (a logically expired key still in its dict,
                    // a rehash) only has the shape to compare.
                    match (scan_parts(&ra, false), scan_parts(&rb, false)) {
                        (Some(x), Some(y)) if size < count && x.0 == b"$1\r\n0\r\n" => x == y,
                        (Some(_), Some(_)) => true,
                        _ => false,
                    }
                }
            }
            Norm::HScan => {
                ra == rb || {
                    side.call(&[b"SELECT".to_vec(), vec![b'0' + db]]).await;
                    let enc = side
                        .call(&[b"OBJECT".to_vec(), b"ENCODING".to_vec(), op.args[1].clone()])
                        .await;
                    enc == b"$9\r\nhashtable\r\n"
                        && match scan_parts(&ra, true) {
                            Some((cursor, items)) if cursor == b"$1\r\n0\r\n" => {
                                scan_parts(&rb, true) == Some((cursor, items))
                            }
                            Some(_) => rb.starts_with(b"*2\r\n"),
                            None => false,
                        }
                }
            }
            Norm::HashOrder => {
                let pairs = op.args[0].eq_ignore_ascii_case(b"HGETALL");
                ra == rb || {
                    // Order only counts while redis keeps the hash as a listpack.
                    let sel = vec![b"SELECT".to_vec(), vec![b'0' + db]];
                    side.call(&sel).await;
                    let enc = side
                        .call(&[b"OBJECT".to_vec(), b"ENCODING".to_vec(), op.args[1].clone()])
                        .await;
                    enc == b"$9\r\nhashtable\r\n"
                        && ra.len() == rb.len()
                        && ra.split(|&c| c == b'\n').next() == rb.split(|&c| c == b'\n').next()
                        && sorted_elements(&ra, pairs).is_some()
                        && sorted_elements(&ra, pairs) == sorted_elements(&rb, pairs)
                }
            }
        };
        if !same {
            return Some(Divergence {
                index,
                history,
                cmd: line,
                redis: ra,
                resplock: rb,
            });
        }
    }
    None
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(default)
}

/// `N` or `A..B`.
fn seeds() -> Vec<u64> {
    let s = std::env::var("DIFF_SEED").unwrap_or_default();
    let s = s.trim();
    if s.is_empty() {
        return vec![1];
    }
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (u64, u64) = (a.parse().expect("DIFF_SEED"), b.parse().expect("DIFF_SEED"));
        return (a..b).collect();
    }
    vec![s.parse().expect("DIFF_SEED: a number or A..B")]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_command_sequences_match_redis() {
    let Some(target) = std::env::var("CONFORMANCE_REDIS")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        println!("differential test skipped: no reference server given (set CONFORMANCE_REDIS=host:port)");
        return;
    };
    let redis_addr = tokio::net::lookup_host(target.as_str())
        .await
        .expect("CONFORMANCE_REDIS resolves")
        .next()
        .expect("CONFORMANCE_REDIS has an address");
    let ops = env_usize("DIFF_OPS", 20_000);
    let exclude: Vec<String> = std::env::var("DIFF_EXCLUDE")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let server = common::server().await;
    let ours = server.local_addr();
    let mut failures = Vec::new();
    for seed in seeds() {
        let started = Instant::now();
        let mut found = None;
        for resp3 in [false, true] {
            let n = if resp3 { ops - ops / 2 } else { ops / 2 };
            if let Some(d) = phase(redis_addr, ours, seed, resp3, n, &exclude).await {
                found = Some((resp3, d));
                break;
            }
        }
        match found {
            None => println!(
                "seed {seed}: {ops} ops match ({:.1} s)",
                started.elapsed().as_secs_f64()
            ),
            Some((resp3, d)) => {
                let proto = if resp3 { "RESP3" } else { "RESP2" };
                let mut msg = format!(
                    "DIVERGENCE: seed {seed}, {proto} phase, command index {}\nlast commands:\n",
                    d.index
                );
                for h in &d.history {
                    msg.push_str(&format!("  {h}\n"));
                }
                msg.push_str(&format!(
                    "command:  {}\nredis:    \"{}\"\nresplock: \"{}\"\n(rerun: DIFF_SEED={seed})\n",
                    d.cmd,
                    show(&d.redis),
                    show(&d.resplock)
                ));
                println!("{msg}");
                failures.push(msg);
            }
        }
    }
    server.shutdown().await;
    assert!(
        failures.is_empty(),
        "{} seed(s) diverged from redis (details printed above)",
        failures.len()
    );
}

mod hardening;

/// A redis-server of its own for the limit scenarios, which change requirepass and limits
/// that the other differential tests' connections must not see.
struct OwnRedis {
    child: std::process::Child,
    addr: SocketAddr,
    dir: std::path::PathBuf,
}

impl OwnRedis {
    fn start() -> Option<OwnRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let dir = std::env::temp_dir().join(format!("resplock-limits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--dir"])
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().ok()?;
        let until = Instant::now() + Duration::from_secs(5);
        while std::net::TcpStream::connect(addr).is_err() {
            if Instant::now() > until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(OwnRedis { child, addr, dir })
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_limits_match_redis() {
    if std::env::var("CONFORMANCE_REDIS").map_or(true, |s| s.is_empty()) {
        println!("limit scenarios skipped: no reference server given (set CONFORMANCE_REDIS)");
        return;
    }
    let redis = OwnRedis::start().expect("redis-server starts on a free port");
    let server = common::server().await;
    let mut failures = Vec::new();
    for sc in hardening::scenarios() {
        let theirs = hardening::run(redis.addr, &sc).await;
        let ours = hardening::run(server.local_addr(), &sc).await;
        if theirs != ours || theirs != sc.redis {
            failures.push(format!(
                "{}:\n  redis now: {}\n  recorded:  {}\n  resplock:  {}",
                sc.name,
                hardening::show(&theirs),
                hardening::show(sc.redis),
                hardening::show(&ours)
            ));
        }
    }
    server.shutdown().await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
