//! Pub/sub fan-out load generator for any RESP server on one address (loopback).
//!
//! Usage:
//!   pubsub_fanout ADDR [SCENARIO...] [--messages M] [--publishers P] [--subscribers S]
//!                      [--rate R] [--size BYTES] [--window W] [--timeout SECS] [--header]
//!   cargo bench --bench pubsub_fanout -- 127.0.0.1:6379 pub0 pub1 pub100 lat100
//!
//! Scenarios (defaults; the flags override them for every scenario named):
//!   pub0    4 publishers, 0 subscribers, 1,000,000 messages (PUBLISH cost alone)
//!   pub1    4 publishers, 1 subscriber,  1,000,000 messages
//!   pub100  4 publishers, 100 subscribers,  60,000 messages (6,000,000 deliveries)
//!   lat100  1 publisher paced at 2,000 msg/s, 100 subscribers, 10,000 messages: fan-out
//!           latency not dominated by queueing (200k deliveries/s, a quarter or less of
//!           what either server sustains here)
//!
//! Each subscriber connection SUBSCRIBEs one channel and reads continuously; the publishers
//! start once every subscription is confirmed, PUBLISH with at most W (32) replies
//! outstanding each, and stamp each message with its publisher, sequence number and send time
//! (monotonic ns since the run started, one machine clock), padded to BYTES (64). Each
//! subscriber checks it gets every publisher's messages in order with none missing, and each
//! PUBLISH reply must count S receivers: any loss, error or timeout fails the run (exit 1).
//!
//! Prints one CSV line per scenario (header with --header):
//!   scenario,subscribers,publishers,messages,publish_per_s,deliveries_per_s,msg_per_s,p50_us,p99_us,wall_s
//! publish_per_s: messages / time until the last PUBLISH reply; deliveries_per_s: messages x S
//! / time until the last subscriber read its last message; msg_per_s: messages fully fanned
//! out per second (publish_per_s when S = 0); p50/p99: receive time minus send time.
//! Without an address (plain `cargo bench`, `cargo test --benches`) it prints this usage and
//! exits 0. Every loop is bounded by the message count and the timeout.

use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const USAGE: &str = "usage: pubsub_fanout ADDR [pub0|pub1|pub100|lat100...] [--messages M] \
[--publishers P] [--subscribers S] [--rate MSG_PER_S] [--size BYTES] [--window W] \
[--timeout SECS] [--header]\n  e.g. cargo bench --bench pubsub_fanout -- 127.0.0.1:6379 pub0 lat100\n\
  (see benches/README.md; without ADDR this prints usage and exits 0)";

/// Payload layout: `p` publisher(4) `s` seq(12) `t` send-ns(20), then padding.
const PUB_AT: usize = 1;
const SEQ_AT: usize = 6;
const TS_AT: usize = 19;
const MIN_SIZE: usize = 39;

#[derive(Clone, Debug)]
struct Scenario {
    name: String,
    publishers: usize,
    subscribers: usize,
    messages: u64,
    /// Total publish rate for a paced run (0 = as fast as the window allows).
    rate: u64,
    size: usize,
    window: usize,
    timeout: Duration,
}

fn preset(name: &str) -> Option<Scenario> {
    let (publishers, subscribers, messages, rate) = match name {
        "pub0" => (4, 0, 1_000_000, 0),
        "pub1" => (4, 1, 1_000_000, 0),
        "pub100" => (4, 100, 60_000, 0),
        "lat100" => (1, 100, 10_000, 2_000),
        _ => return None,
    };
    Some(Scenario {
        name: name.to_string(),
        publishers,
        subscribers,
        messages,
        rate,
        size: 64,
        window: 32,
        timeout: Duration::from_secs(120),
    })
}

/// Log-linear histogram of nanoseconds: exact below 128, then 64 sub-buckets per power of
/// two (under 1.6% error), in a fixed 30 KB whatever the count.
struct Hist {
    counts: Vec<u64>,
    total: u64,
}

const HIST_BUCKETS: usize = 128 + 57 * 64;

impl Hist {
    fn new() -> Self {
        Hist {
            counts: vec![0; HIST_BUCKETS],
            total: 0,
        }
    }
    fn index(v: u64) -> usize {
        if v < 128 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros() as usize; // >= 7
        let top = (v >> (e - 6)) as usize; // 64..128
        128 + (e - 7) * 64 + (top - 64)
    }
    fn value(i: usize) -> u64 {
        if i < 128 {
            return i as u64;
        }
        let e = (i - 128) / 64 + 7;
        let top = ((i - 128) % 64 + 64) as u64;
        // Middle of the bucket.
        (top << (e - 6)) + ((1u64 << (e - 6)) >> 1)
    }
    fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.total += 1;
    }
    fn merge(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.total += o.total;
    }
    fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((self.total as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::value(i));
            }
        }
        None
    }
}

fn now_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

/// Write `v` as exactly `width` zero-padded decimal digits.
fn put_digits(out: &mut [u8], mut v: u64) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

fn get_digits(s: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    Some(v)
}

/// One RESP2 element of a top-level frame we care about.
enum Elem {
    Bulk(usize, usize),
    Int(i64),
}

/// Position of the CRLF ending the line that starts at `from`.
fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + 1 < buf.len() {
        if buf[i] == b'\r' && buf[i + 1] == b'\n' {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn parse_int(s: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("bad integer {:?}", String::from_utf8_lossy(s)))
}

/// Parse one frame (an array of bulks/integers, an integer or an error) at the start of buf.
/// Ok(None) when incomplete; elems receives the array's elements (or the one integer).
fn parse_frame(buf: &[u8], elems: &mut Vec<Elem>) -> Result<Option<usize>, String> {
    elems.clear();
    if buf.is_empty() {
        return Ok(None);
    }
    let Some(e) = line_end(buf, 0) else {
        return Ok(None);
    };
    match buf[0] {
        b':' => {
            elems.push(Elem::Int(parse_int(&buf[1..e])?));
            Ok(Some(e + 2))
        }
        b'-' => Err(format!(
            "server error: {}",
            String::from_utf8_lossy(&buf[1..e])
        )),
        b'*' => {
            let n = parse_int(&buf[1..e])?;
            if !(0..=16).contains(&n) {
                return Err(format!("unexpected array of {n}"));
            }
            let mut at = e + 2;
            for _ in 0..n {
                if at >= buf.len() {
                    return Ok(None);
                }
                let Some(le) = line_end(buf, at) else {
                    return Ok(None);
                };
                match buf[at] {
                    b'$' => {
                        let len = parse_int(&buf[at + 1..le])?;
                        if !(0..=1 << 20).contains(&len) {
                            return Err(format!("unexpected bulk length {len}"));
                        }
                        let start = le + 2;
                        let end = start + len as usize;
                        if end + 2 > buf.len() {
                            return Ok(None);
                        }
                        elems.push(Elem::Bulk(start, end));
                        at = end + 2;
                    }
                    b':' => {
                        elems.push(Elem::Int(parse_int(&buf[at + 1..le])?));
                        at = le + 2;
                    }
                    c => return Err(format!("unexpected element type {:?}", c as char)),
                }
            }
            Ok(Some(at))
        }
        _ => Err(format!(
            "unexpected reply {:?}",
            String::from_utf8_lossy(&buf[..e.min(80)])
        )),
    }
}

fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut v = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        v.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        v.extend_from_slice(a);
        v.extend_from_slice(b"\r\n");
    }
    v
}

struct SubResult {
    received: u64,
    last_ns: u64,
    hist: Hist,
}

/// Connect and SUBSCRIBE; returns once the subscription is confirmed.
async fn subscribe(addr: &str, channel: &str) -> Result<(TcpStream, Vec<u8>), String> {
    let mut s = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_nodelay(true).ok();
    s.write_all(&encode(&[b"SUBSCRIBE", channel.as_bytes()]))
        .await
        .map_err(|e| e.to_string())?;
    let mut buf = Vec::with_capacity(1 << 16);
    let mut elems = Vec::new();
    loop {
        if let Some(n) = parse_frame(&buf, &mut elems)? {
            match elems.first() {
                Some(Elem::Bulk(a, b)) if &buf[*a..*b] == b"subscribe" => {}
                _ => return Err("no subscribe confirmation".into()),
            }
            buf.drain(..n);
            return Ok((s, buf));
        }
        let mut chunk = [0u8; 4096];
        let r = s.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if r == 0 {
            return Err("closed before subscribe confirmation".into());
        }
        buf.extend_from_slice(&chunk[..r]);
    }
}

/// Read until every publisher's `per_pub` messages arrived, in order, none missing.
async fn subscriber(
    mut s: TcpStream,
    mut buf: Vec<u8>,
    t0: Instant,
    per_pub: Vec<u64>,
    size: usize,
) -> Result<SubResult, String> {
    let total: u64 = per_pub.iter().sum();
    let mut next = vec![0u64; per_pub.len()];
    let mut res = SubResult {
        received: 0,
        last_ns: 0,
        hist: Hist::new(),
    };
    let mut elems = Vec::with_capacity(4);
    let (mut start, mut end) = (0, buf.len());
    buf.resize(end.max(1 << 16), 0);
    // Receive time: when the read returned (parsing a batch must not add to its latency).
    let mut now = now_ns(t0);
    while res.received < total {
        // Parse everything buffered, then read more.
        while let Some(n) = parse_frame(&buf[start..end], &mut elems)? {
            let base = start;
            start += n;
            let (a, b) = match (elems.first(), elems.get(2)) {
                (Some(Elem::Bulk(ka, kb)), Some(Elem::Bulk(a, b)))
                    if &buf[base + ka..base + kb] == b"message" =>
                {
                    (base + a, base + b)
                }
                _ => return Err("unexpected frame on a subscriber connection".into()),
            };
            let p = &buf[a..b];
            if p.len() != size {
                return Err(format!("payload of {} bytes, sent {size}", p.len()));
            }
            let (Some(pb), Some(seq), Some(ts)) = (
                get_digits(&p[PUB_AT..PUB_AT + 4]),
                get_digits(&p[SEQ_AT..SEQ_AT + 12]),
                get_digits(&p[TS_AT..TS_AT + 20]),
            ) else {
                return Err("corrupt payload".into());
            };
            let pb = pb as usize;
            if pb >= next.len() || seq != next[pb] {
                return Err(format!(
                    "publisher {pb}: got seq {seq}, expected {} (lost or reordered message)",
                    next.get(pb).copied().unwrap_or(0)
                ));
            }
            next[pb] += 1;
            res.received += 1;
            res.hist.record(now.saturating_sub(ts));
            res.last_ns = now;
        }
        if res.received >= total {
            break;
        }
        // Keep unparsed bytes at the front; grow only when a frame does not fit.
        buf.copy_within(start..end, 0);
        end -= start;
        start = 0;
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let r = s.read(&mut buf[end..]).await.map_err(|e| e.to_string())?;
        if r == 0 {
            return Err(format!(
                "connection closed after {} of {total} messages",
                res.received
            ));
        }
        end += r;
        now = now_ns(t0);
    }
    if end > start {
        return Err("extra data after the last expected message".into());
    }
    Ok(res)
}

/// PUBLISH `count` messages with at most `window` outstanding; paced when `rate` > 0.
/// Returns the time of the last reply (ns since t0).
#[allow(clippy::too_many_arguments)]
async fn publisher(
    addr: String,
    channel: String,
    id: usize,
    count: u64,
    rate: u64,
    size: usize,
    window: usize,
    subscribers: usize,
    t0: Instant,
) -> Result<u64, String> {
    let mut s = TcpStream::connect(&addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    s.set_nodelay(true).ok();
    let head = format!(
        "*3\r\n$7\r\nPUBLISH\r\n${}\r\n{}\r\n${}\r\n",
        channel.len(),
        channel,
        size
    )
    .into_bytes();
    let mut payload = vec![b'.'; size];
    payload[0] = b'p';
    payload[SEQ_AT - 1] = b's';
    payload[TS_AT - 1] = b't';
    put_digits(&mut payload[PUB_AT..PUB_AT + 4], id as u64);
    let mut out = Vec::with_capacity(window * (head.len() + size + 2));
    let mut rbuf = vec![0u8; 1 << 16];
    let mut pending: Vec<u8> = Vec::new();
    let mut elems = Vec::new();
    let (mut sent, mut acked, mut inflight) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    let mut last = 0;
    while acked < count {
        // Top up the window with what is due.
        let due = if rate == 0 {
            count
        } else {
            ((start.elapsed().as_nanos() * rate as u128) / 1_000_000_000) as u64 + 1
        }
        .min(count);
        out.clear();
        while inflight < window && sent < due {
            put_digits(&mut payload[SEQ_AT..SEQ_AT + 12], sent);
            put_digits(&mut payload[TS_AT..TS_AT + 20], now_ns(t0));
            out.extend_from_slice(&head);
            out.extend_from_slice(&payload);
            out.extend_from_slice(b"\r\n");
            sent += 1;
            inflight += 1;
        }
        if !out.is_empty() {
            s.write_all(&out).await.map_err(|e| e.to_string())?;
        }
        if inflight == 0 && rate > 0 {
            // Paced and ahead of schedule: sleep until the next message is due.
            let next_at =
                Duration::from_nanos((sent as u128 * 1_000_000_000 / rate as u128) as u64);
            tokio::time::sleep_until((start + next_at).into()).await;
            continue;
        }
        let r = if rate == 0 || inflight >= window || sent >= count {
            s.read(&mut rbuf).await.map_err(|e| e.to_string())?
        } else {
            let next_at =
                Duration::from_nanos((sent as u128 * 1_000_000_000 / rate as u128) as u64);
            match tokio::time::timeout_at((start + next_at).into(), s.read(&mut rbuf)).await {
                Ok(r) => r.map_err(|e| e.to_string())?,
                Err(_) => continue,
            }
        };
        if r == 0 {
            return Err(format!("publisher {id}: connection closed"));
        }
        pending.extend_from_slice(&rbuf[..r]);
        let mut at = 0;
        while let Some(n) = parse_frame(&pending[at..], &mut elems)? {
            at += n;
            match elems.first() {
                Some(Elem::Int(k)) if *k == subscribers as i64 => {}
                Some(Elem::Int(k)) => {
                    return Err(format!(
                        "PUBLISH reached {k} subscribers, expected {subscribers}"
                    ))
                }
                _ => return Err("unexpected PUBLISH reply".into()),
            }
            acked += 1;
            inflight -= 1;
        }
        pending.drain(..at);
        last = now_ns(t0);
    }
    Ok(last)
}

async fn run(addr: &str, sc: &Scenario) -> Result<String, String> {
    let channel = format!(
        "bench:fanout:{}:{}:{}",
        sc.name,
        std::process::id(),
        fastrand::u32(..)
    );
    let t0 = Instant::now();
    let mut subs = Vec::with_capacity(sc.subscribers);
    for _ in 0..sc.subscribers {
        subs.push(subscribe(addr, &channel).await?);
    }
    let per_pub: Vec<u64> = (0..sc.publishers)
        .map(|i| {
            sc.messages / sc.publishers as u64
                + u64::from((i as u64) < sc.messages % sc.publishers as u64)
        })
        .collect();
    let sub_tasks: Vec<_> = subs
        .into_iter()
        .map(|(s, buf)| tokio::spawn(subscriber(s, buf, t0, per_pub.clone(), sc.size)))
        .collect();
    let start_ns = now_ns(t0);
    let pub_tasks: Vec<_> = per_pub
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            tokio::spawn(publisher(
                addr.to_string(),
                channel.clone(),
                i,
                n,
                sc.rate / sc.publishers as u64,
                sc.size,
                sc.window,
                sc.subscribers,
                t0,
            ))
        })
        .collect();
    let mut pub_end = start_ns;
    for t in pub_tasks {
        let end = t.await.map_err(|e| e.to_string())??;
        pub_end = pub_end.max(end);
    }
    let mut hist = Hist::new();
    let mut deliv_end = pub_end;
    let mut delivered = 0;
    for (i, t) in sub_tasks.into_iter().enumerate() {
        let r = t
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("subscriber {i}: {e}"))?;
        hist.merge(&r.hist);
        deliv_end = deliv_end.max(r.last_ns);
        delivered += r.received;
    }
    let expected = sc.messages * sc.subscribers as u64;
    if delivered != expected {
        return Err(format!("delivered {delivered} of {expected}"));
    }
    let secs = |end: u64| (end.saturating_sub(start_ns)).max(1) as f64 / 1e9;
    let publish_per_s = sc.messages as f64 / secs(pub_end);
    let (deliv_s, msg_s) = if sc.subscribers == 0 {
        ("NA".to_string(), publish_per_s)
    } else {
        (
            format!("{:.0}", delivered as f64 / secs(deliv_end)),
            sc.messages as f64 / secs(deliv_end),
        )
    };
    let q = |x: f64| {
        hist.quantile(x)
            .map(|v| format!("{:.1}", v as f64 / 1e3))
            .unwrap_or_else(|| "NA".into())
    };
    Ok(format!(
        "{},{},{},{},{:.0},{},{:.0},{},{},{:.2}",
        sc.name,
        sc.subscribers,
        sc.publishers,
        sc.messages,
        publish_per_s,
        deliv_s,
        msg_s,
        q(0.50),
        q(0.99),
        secs(deliv_end)
    ))
}

fn parse_args(args: &[String]) -> Result<Option<(String, Vec<Scenario>, bool)>, String> {
    let mut addr = None;
    let mut names = Vec::new();
    let mut header = false;
    let mut over: Vec<(String, String)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            // cargo bench appends --bench; libtest-style flags are ignored.
            "--bench" => {}
            "--header" => header = true,
            "-h" | "--help" => return Ok(None),
            "--messages" | "--publishers" | "--subscribers" | "--rate" | "--size" | "--window"
            | "--timeout" => {
                let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
                over.push((a.clone(), v.clone()));
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s if addr.is_none() => addr = Some(s.to_string()),
            s => names.push(s.to_string()),
        }
    }
    let Some(addr) = addr else { return Ok(None) };
    if names.is_empty() {
        names = ["pub0", "pub1", "pub100", "lat100"]
            .map(String::from)
            .to_vec();
    }
    let mut scs = Vec::new();
    for n in &names {
        let mut sc = preset(n).ok_or_else(|| format!("unknown scenario {n}"))?;
        for (k, v) in &over {
            let x: u64 = v.parse().map_err(|_| format!("{k}: not a number: {v}"))?;
            match k.as_str() {
                "--messages" => sc.messages = x,
                "--publishers" => sc.publishers = x as usize,
                "--subscribers" => sc.subscribers = x as usize,
                "--rate" => sc.rate = x,
                "--size" => sc.size = x as usize,
                "--window" => sc.window = x as usize,
                _ => sc.timeout = Duration::from_secs(x),
            }
        }
        if !(1..=1000).contains(&sc.publishers)
            || sc.subscribers > 10_000
            || sc.messages == 0
            || !(MIN_SIZE..=1 << 20).contains(&sc.size)
            || !(1..=100_000).contains(&sc.window)
            || (sc.rate > 0 && sc.rate < sc.publishers as u64)
        {
            return Err(format!(
                "{n}: out of range (publishers 1..1000, subscribers <= 10000, messages > 0, \
                 size {MIN_SIZE}..1MiB, window 1..100000, rate 0 or >= publishers)"
            ));
        }
        scs.push(sc);
    }
    Ok(Some((addr, scs, header)))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, scenarios, header) = match parse_args(&args) {
        Ok(Some(x)) => x,
        Ok(None) => {
            println!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("pubsub_fanout: {e}\n{USAGE}");
            std::process::exit(2);
        }
    };
    // One thread: the generator is pinned to one CPU, where a single-threaded runtime wastes
    // nothing on cross-thread wake-ups.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    if header {
        println!("scenario,subscribers,publishers,messages,publish_per_s,deliveries_per_s,msg_per_s,p50_us,p99_us,wall_s");
    }
    let mut failed = false;
    for sc in &scenarios {
        let r = rt.block_on(async {
            match tokio::time::timeout(sc.timeout, run(&addr, sc)).await {
                Ok(r) => r,
                Err(_) => Err(format!("timed out after {:?}", sc.timeout)),
            }
        });
        match r {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("pubsub_fanout: FAILED {}: {e}", sc.name);
                failed = true;
            }
        }
    }
    // Tasks of a failed scenario may still hold sockets; dropping the runtime closes them.
    drop(rt);
    if failed {
        std::process::exit(1);
    }
}
