//! The command table on arbitrary argument vectors, against an in-process server state
//! (`resplock::testkit::Harness`, the network client's path without a socket). Commands are
//! drawn from the real table (and sometimes made up), arguments from a small key pool, option
//! words, edge-case numbers and raw bytes. Invariants: nothing panics; every reply (and every
//! push queued with it) is well-formed RESP that an independent decoder consumes exactly; the
//! keyspace's bookkeeping stays consistent (`Keyspace::audit`).
//!
//! An input that starts with `>` is text instead: lines of `> COMMAND args` in the inline
//! syntax of the conformance cases, which is how the seed corpus (fuzz/seed_corpus.py) carries
//! the recorded sessions in.
//!
//! Left out: scripts (fuzzed by `lua_sandbox`; an endless one would stall this target),
//! SHUTDOWN, CONFIG SET (it could lift the memory guard below), DEBUG and CLIENT KILL/PAUSE.
#![no_main]

use arbitrary::{Result, Unstructured};
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use resplock::testkit::Harness;
use std::sync::OnceLock;

const SKIP: &[&str] = &[
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "script",
    "fcall",
    "fcall_ro",
    "function",
    "shutdown",
    "debug",
    "monitor",
    "sync",
    "psync",
    "replicaof",
    "slaveof",
    "failover",
];

const WORDS: &[&str] = &[
    "NX",
    "XX",
    "GT",
    "LT",
    "PX",
    "EX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "GET",
    "PERSIST",
    "CH",
    "INCR",
    "WITHSCORES",
    "LIMIT",
    "MATCH",
    "COUNT",
    "TYPE",
    "REPLACE",
    "DB",
    "ASYNC",
    "SYNC",
    "WITHVALUES",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "RANK",
    "MAXLEN",
    "IDLETIME",
    "FREQ",
    "BYSCORE",
    "BYLEX",
    "REV",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "WEIGHTS",
    "STORE",
    "ALPHA",
    "BY",
    "ASC",
    "DESC",
    "AUTH",
    "SETNAME",
    "ON",
    "OFF",
    "YES",
    "NO",
    "ID",
    "USER",
    "string",
    "hash",
    "list",
    "set",
    "zset",
    "*",
    "k*",
    "[a",
    "(1",
    "-",
    "+",
    "0",
    "3",
    "2",
];

const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "1",
    "2",
    "10",
    "100",
    "1000",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "1.5",
    "-0",
    "1e3",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "0x10",
    " 1",
    "1 ",
    "",
    "3.0000000000000000001",
    "17179869184",
    "536870912",
    "4294967295",
    "-2147483649",
];

fn names() -> &'static Vec<(Vec<u8>, Vec<Vec<u8>>)> {
    static N: OnceLock<Vec<(Vec<u8>, Vec<Vec<u8>>)>> = OnceLock::new();
    N.get_or_init(|| {
        resplock::cmd::all_commands()
            .into_iter()
            .filter(|c| !SKIP.contains(&c.name))
            .map(|c| {
                let subs = c
                    .subcommands
                    .iter()
                    .filter(|s| {
                        !(c.name == "config" && s.name == "set")
                            && !(c.name == "client" && matches!(s.name, "kill" | "pause"))
                    })
                    .map(|s| s.name.as_bytes().to_vec())
                    .collect();
                (c.name.as_bytes().to_vec(), subs)
            })
            .collect()
    })
}

fn arg(u: &mut Unstructured) -> Result<Vec<u8>> {
    Ok(match u.int_in_range(0..=9)? {
        0..=3 => format!("k{}", u.int_in_range(0..=3)?).into_bytes(),
        4 | 5 => u.choose(WORDS)?.as_bytes().to_vec(),
        6 | 7 => u.choose(NUMBERS)?.as_bytes().to_vec(),
        8 => u.int_in_range(-50i64..=50)?.to_string().into_bytes(),
        _ => {
            let n = u.int_in_range(0..=24)?;
            u.bytes(n.min(u.len()))?.to_vec()
        }
    })
}

fn command(u: &mut Unstructured) -> Result<Vec<Bytes>> {
    let mut args = Vec::new();
    if u.ratio(1, 20)? {
        args.push(arg(u)?);
    } else {
        let (name, subs) = u.choose(names())?;
        let mut name = name.clone();
        if u.ratio(1, 4)? {
            name.make_ascii_uppercase();
        }
        args.push(name);
        if !subs.is_empty() && u.ratio(7, 8)? {
            args.push(u.choose(subs)?.clone());
        }
    }
    let n = u.int_in_range(0..=7)?;
    for _ in 0..n {
        args.push(arg(u)?);
    }
    Ok(args.into_iter().map(Bytes::from).collect())
}

/// Every frame in `out` decodes as RESP3 or RESP2 (pushes queued before a HELLO keep the
/// protocol they were encoded in; the RESP3 decoder refuses RESP2's `$-1`), and the frames
/// use up every byte. redis-protocol keeps errors as `String`, so a frame holding an error
/// with raw bytes (Redis echoes a client's bytes in errors) is checked by [`frame_len`].
fn well_formed(out: &[u8]) -> bool {
    let mut rest = out;
    while !rest.is_empty() {
        let used = match redis_protocol::resp3::decode::complete::decode(rest) {
            Ok(Some((_, used))) => used,
            _ => match redis_protocol::resp2::decode::decode(rest) {
                Ok(Some((_, used))) => used,
                _ => frame_len(rest, 0).unwrap_or(0),
            },
        };
        if used == 0 {
            return false;
        }
        rest = &rest[used..];
    }
    true
}

/// The requests an input stands for (at most 48).
fn requests(data: &[u8]) -> Vec<Vec<Bytes>> {
    if data.first() == Some(&b'>') {
        return data
            .split(|&b| b == b'\n')
            .filter_map(|l| l.strip_prefix(b">"))
            .filter_map(resplock::protocol::split_args)
            .take(48)
            .collect();
    }
    let mut u = Unstructured::new(data);
    let mut out: Vec<Vec<Bytes>> = Vec::new();
    while !u.is_empty() && out.len() < 48 {
        match command(&mut u) {
            Ok(args) => out.push(args),
            Err(_) => break,
        }
    }
    out
}

/// Text inputs can name anything: the commands this target leaves out are dropped.
fn skipped(args: &[Bytes]) -> bool {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let sub = args
        .get(1)
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase());
    SKIP.contains(&name.as_str())
        || (name == "config" && sub.as_deref() == Some("set"))
        || (name == "client" && matches!(sub.as_deref(), Some("kill" | "pause")))
}

/// The length of the RESP2/RESP3 frame at the start of `b`, checked byte by byte: lines hold
/// no CR or LF, lengths and counts are integers, blobs end with CRLF. None if malformed.
fn frame_len(b: &[u8], depth: u32) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    let end = b.windows(2).position(|w| w == b"\r\n")?;
    let line = &b[1..end];
    if line.contains(&b'\r') || line.contains(&b'\n') {
        return None;
    }
    let num = || std::str::from_utf8(line).ok()?.parse::<i64>().ok();
    let head = end + 2;
    match *b.first()? {
        b'+' | b'-' | b'_' | b',' | b'#' | b'(' => Some(head),
        b':' => num().map(|_| head),
        b'$' | b'=' | b'!' => match num()? {
            -1 if b[0] == b'$' => Some(head),
            n if n >= 0 => {
                let n = n as usize;
                (b.get(head + n..head + n + 2)? == b"\r\n").then_some(head + n + 2)
            }
            _ => None,
        },
        b'*' | b'~' | b'>' | b'%' => match num()? {
            -1 if b[0] == b'*' => Some(head),
            n if n >= 0 => {
                let items = if b[0] == b'%' { 2 * n } else { n };
                let mut at = head;
                for _ in 0..items {
                    at += frame_len(&b[at..], depth + 1)?;
                }
                Some(at)
            }
            _ => None,
        },
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    // Each input gets a fresh server (keyspace, users, scripts), so a finding replays from
    // its input alone.
    let mut c = resplock::Config::ephemeral();
    // SETRANGE/APPEND may then build strings of at most 1 MB.
    c.proto_max_bulk_len = 1 << 20;
    let mut h = Harness::new(c);
    for args in requests(data)
        .into_iter()
        .filter(|a| !a.is_empty() && !skipped(a))
    {
        let (reply, out) = h.request(args.clone());
        assert!(
            well_formed(&out),
            "{args:?} -> {reply:?} -> {:?}",
            String::from_utf8_lossy(&out)
        );
        if let Err(e) = h.audit() {
            panic!("after {args:?}: {e}");
        }
    }
});
