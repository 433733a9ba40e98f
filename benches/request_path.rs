//! The server's own work per request, in process: parsing a pipelined batch, one request
//! through the dispatch a client's request takes, and sorted-set operations on a
//! 1,000,000-member set. No socket, so none of the kernel's TCP work (most of a request's
//! cost over loopback) and none of redis-benchmark's noise: a regression in the parser, the
//! dispatch or the sorted-set structure shows here without a server.
//!
//! Usage: `cargo bench --bench request_path [-- REQUESTS ROUNDS]` (defaults 200000, 7).
//! Without `--bench` (as `cargo test --benches` runs it) it prints this usage and exits.
//!
//! Each round times a block of REQUESTS requests per row by the calling thread's CPU time
//! (CLOCK_THREAD_CPUTIME_ID) and the median per row is printed. Rows:
//! `parse` (16 pipelined GETs parsed from one buffer, per request), `get` and `set` (through
//! `testkit::Harness`, which runs `dispatch::execute::execute` as a connection does and
//! encodes the reply), and `zscore`, `zrank`, `zrangebyscore` (LIMIT 0 10) and `zadd` (an
//! existing member to a new score) on random members of a 1,000,000-member set
//! (`m:%012d`, score i, as benches/zset_interleaved.sh loads). Every loop is bounded by
//! REQUESTS x ROUNDS.

use bytes::{Bytes, BytesMut};
use resplock::protocol::{encode_bulks, parse_request, Limits, ParseState};
use resplock::testkit::Harness;
use resplock::Config;

/// This thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID: exact, where
/// /proc/thread-self/schedstat moves by scheduler ticks, too coarse for the parser's row).
fn cpu_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn args(parts: &[&[u8]]) -> Vec<Bytes> {
    parts.iter().map(|p| Bytes::copy_from_slice(p)).collect()
}

/// ns per request of parsing `n` requests, 16 per buffer as a pipelining client sends them.
fn parse_block(n: usize) -> f64 {
    let batch: Vec<u8> = (0..16)
        .flat_map(|i| encode_bulks(&[b"GET", format!("lock:{:012}", i * 7919).as_bytes()]))
        .collect();
    let limits = Limits::default();
    let mut state = ParseState::default();
    let mut buf = BytesMut::with_capacity(batch.len());
    let t0 = cpu_ns();
    let mut parsed = 0;
    while parsed < n {
        buf.extend_from_slice(&batch);
        while let Ok(Some(a)) = parse_request(&mut buf, &mut state, &limits) {
            assert_eq!(a.len(), 2);
            state.recycle(a);
            parsed += 1;
        }
    }
    (cpu_ns() - t0) as f64 / parsed as f64
}

/// ns per request of `n` requests made by `make(i)`, each through the harness.
fn dispatch_block(h: &mut Harness, n: usize, make: impl Fn(usize) -> Vec<Bytes>) -> f64 {
    let t0 = cpu_ns();
    for i in 0..n {
        let (reply, _) = h.request(make(i));
        assert!(!reply.is_error(), "{reply:?}");
    }
    (cpu_ns() - t0) as f64 / n as f64
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("usage: cargo bench --bench request_path [-- REQUESTS ROUNDS]");
        return;
    }
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    let n: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rounds: usize = it.next().and_then(|a| a.parse().ok()).unwrap_or(7);

    let mut h = Harness::new(Config::ephemeral());
    for i in 0..100_000u32 {
        let key = format!("lock:{i:012}");
        h.request(args(&[b"SET", key.as_bytes(), b"tok"]));
    }
    const MEMBERS: usize = 1_000_000;
    for chunk in 0..MEMBERS / 1000 {
        let mut a = args(&[b"ZADD", b"big"]);
        for i in chunk * 1000..(chunk + 1) * 1000 {
            a.push(Bytes::from(i.to_string()));
            a.push(Bytes::from(format!("m:{i:012}")));
        }
        h.request(a);
    }
    // Random members, the same sequence every round (a multiplicative walk over the set).
    let pick = |i: usize| (i.wrapping_mul(2_654_435_761) ^ (i >> 7)) % MEMBERS;
    let key = |i: usize| Bytes::from(format!("lock:{:012}", pick(i) % 100_000));
    let member = |i: usize| Bytes::from(format!("m:{:012}", pick(i)));

    type Run<'a> = Box<dyn Fn(&mut Harness, usize) -> f64 + 'a>;
    type Row<'a> = (&'a str, Run<'a>);
    // `NAME big <member>`, a random member each request.
    let member_row = |name: &'static [u8]| -> Run<'_> {
        Box::new(move |h: &mut Harness, n| {
            dispatch_block(h, n, |i| {
                vec![
                    Bytes::from_static(name),
                    Bytes::from_static(b"big"),
                    member(i),
                ]
            })
        })
    };
    let rows: Vec<Row> = vec![
        ("parse", Box::new(|_: &mut Harness, n| parse_block(n))),
        (
            "get",
            Box::new(|h: &mut Harness, n| {
                dispatch_block(h, n, |i| vec![Bytes::from_static(b"GET"), key(i)])
            }),
        ),
        (
            "set",
            Box::new(|h: &mut Harness, n| {
                dispatch_block(h, n, |i| {
                    let mut a = vec![Bytes::from_static(b"SET"), key(i)];
                    a.extend(args(&[b"tok", b"PX", b"600000"]));
                    a
                })
            }),
        ),
        ("zscore", member_row(b"ZSCORE")),
        ("zrank", member_row(b"ZRANK")),
        (
            "zrangebyscore",
            Box::new(|h: &mut Harness, n| {
                dispatch_block(h, n, |i| {
                    let min = Bytes::from(pick(i).to_string());
                    let mut a = vec![
                        Bytes::from_static(b"ZRANGEBYSCORE"),
                        Bytes::from_static(b"big"),
                    ];
                    a.push(min);
                    a.extend(args(&[b"+inf", b"LIMIT", b"0", b"10"]));
                    a
                })
            }),
        ),
        (
            "zadd",
            Box::new(|h: &mut Harness, n| {
                dispatch_block(h, n, |i| {
                    let score = Bytes::from((pick(i ^ 0x5bd1) % MEMBERS).to_string());
                    vec![
                        Bytes::from_static(b"ZADD"),
                        Bytes::from_static(b"big"),
                        score,
                        member(i),
                    ]
                })
            }),
        ),
    ];
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); rows.len()];
    for _ in 0..rounds {
        for (r, (_, run)) in rows.iter().enumerate() {
            per[r].push(run(&mut h, n));
        }
    }
    println!("{n} requests per block, {rounds} rounds; median CPU ns per request");
    for ((name, _), v) in rows.iter().zip(per) {
        let mut v = v;
        v.sort_by(|a, b| a.total_cmp(b));
        println!("{name:14} {:8.0}", v[v.len() / 2]);
    }
}
