//! Redis's limits on what a client may send and hold, as scenarios of raw bytes: each runs on
//! a fresh connection after CONFIG SETs (undone afterwards), and its outcome is every byte the
//! server sent until it closed the connection or went quiet. `tests/limits.rs` checks resplock
//! against the outcomes recorded from redis-server 7.0.15 here; `tests/differential.rs` runs the
//! same scenarios against a live redis-server side by side.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One scenario.
pub struct Scenario {
    pub name: &'static str,
    /// CONFIG SET pairs applied before the scenario's connection opens, and their values to
    /// restore afterwards.
    pub config: &'static [(&'static str, &'static str, &'static str)],
    /// Keys set (by the admin connection) before the scenario runs: (key, value length).
    pub keys: &'static [(&'static str, usize)],
    /// What the client sends, in order.
    pub send: Vec<Vec<u8>>,
    /// How long the server may stay silent before the outcome is taken.
    pub quiet: Duration,
    /// redis-server 7.0.15's outcome: what it sent, then `<EOF>` if it closed.
    pub redis: &'static [u8],
}

fn mb(n: usize, fill: u8) -> Vec<u8> {
    vec![fill; n]
}

/// Every scenario, with redis-server 7.0.15's outcome.
pub fn scenarios() -> Vec<Scenario> {
    let q = Duration::from_millis(400);
    vec![
        Scenario {
            name: "unauthenticated bulk length over 16 KB is refused and the client closed",
            config: &[("requirepass", "x", "")],
            keys: &[],
            send: vec![b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n".to_vec(), mb(100_000, b'v')],
            quiet: q,
            redis: b"-ERR Protocol error: unauthenticated bulk length\r\n<EOF>",
        },
        Scenario {
            name: "unauthenticated bulk length of 16 KB is read",
            config: &[("requirepass", "x", "")],
            keys: &[],
            send: vec![b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16384\r\n".to_vec(), mb(16384, b'v'), b"\r\n".to_vec()],
            quiet: q,
            redis: b"-NOAUTH Authentication required.\r\n",
        },
        Scenario {
            name: "unauthenticated multibulk length over 10 is refused",
            config: &[("requirepass", "x", "")],
            keys: &[],
            send: vec![b"PING\r\n*11\r\n".to_vec()],
            quiet: q,
            redis: b"-NOAUTH Authentication required.\r\n-ERR Protocol error: unauthenticated multibulk length\r\n<EOF>",
        },
        Scenario {
            name: "authenticated clients may send big bulks",
            config: &[("requirepass", "x", "")],
            keys: &[],
            send: vec![
                b"AUTH x\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n".to_vec(),
                mb(100_000, b'v'),
                b"\r\n*12\r\n$4\r\nMSET\r\n".to_vec(),
                b"$1\r\na\r\n$1\r\nb\r\n".repeat(5).to_vec(),
                b"$1\r\nc\r\n".to_vec(),
            ],
            quiet: q,
            redis: b"+OK\r\n+OK\r\n-ERR wrong number of arguments for 'mset' command\r\n",
        },
        Scenario {
            name: "a CR where a bulk header belongs is reported as a space",
            config: &[],
            keys: &[],
            send: vec![b"*1\r\r\n$4\r\nPING\r\n".to_vec()],
            quiet: q,
            redis: b"-ERR Protocol error: expected '$', got ' '\r\n<EOF>",
        },
        Scenario {
            name: "a raw byte where a bulk header belongs is echoed raw",
            config: &[],
            keys: &[],
            send: vec![b"*1\r\n\xff\r\n".to_vec()],
            quiet: q,
            redis: b"-ERR Protocol error: expected '$', got '\xff'\r\n<EOF>",
        },
        Scenario {
            name: "proto-max-bulk-len caps a declared bulk",
            config: &[("proto-max-bulk-len", "1mb", "512mb")],
            keys: &[],
            send: vec![b"*2\r\n$3\r\nGET\r\n$1048577\r\n".to_vec()],
            quiet: q,
            redis: b"-ERR Protocol error: invalid bulk length\r\n<EOF>",
        },
        Scenario {
            name: "proto-max-bulk-len caps what SETRANGE may build",
            config: &[("proto-max-bulk-len", "1mb", "512mb")],
            keys: &[],
            send: vec![b"SETRANGE k 1048576 x\r\nSETRANGE k 1048575 x\r\nSTRLEN k\r\nDEL k\r\n".to_vec()],
            quiet: q,
            redis: b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n:1048576\r\n:1048576\r\n:1\r\n",
        },
        Scenario {
            name: "client-query-buffer-limit closes the client without a reply",
            config: &[("client-query-buffer-limit", "1mb", "1gb")],
            keys: &[],
            send: vec![b"*2\r\n$3\r\nGET\r\n$2000000\r\n".to_vec(), mb(1_500_000, b'x')],
            quiet: q,
            redis: b"<EOF>",
        },
        Scenario {
            name: "client-output-buffer-limit normal closes a client whose reply is too big",
            config: &[("client-output-buffer-limit", "normal 100000 0 0", "normal 0 0 0")],
            keys: &[("big", 200_000)],
            send: vec![b"PING\r\n".to_vec(), b"GET big\r\n".to_vec()],
            quiet: q,
            redis: b"+PONG\r\n<EOF>",
        },
        Scenario {
            name: "client-output-buffer-limit normal spares replies under it",
            config: &[("client-output-buffer-limit", "normal 1000000 0 0", "normal 0 0 0")],
            keys: &[("big", 20)],
            send: vec![b"GET big\r\n".to_vec()],
            quiet: q,
            redis: b"$20\r\nvvvvvvvvvvvvvvvvvvvv\r\n",
        },
        Scenario {
            name: "timeout closes an idle client",
            config: &[("timeout", "1", "0")],
            keys: &[],
            send: vec![b"PING\r\n".to_vec()],
            quiet: Duration::from_millis(4500),
            redis: b"+PONG\r\n<EOF>",
        },
    ]
}

async fn admin(addr: SocketAddr, args: &[&[u8]]) {
    let mut s = TcpStream::connect(addr).await.expect("admin connects");
    // The admin connection authenticates first whenever a password may be set.
    let mut buf = Vec::new();
    for cmd in [vec![&b"AUTH"[..], b"x"], args.to_vec()] {
        buf.extend_from_slice(format!("*{}\r\n", cmd.len()).as_bytes());
        for a in cmd {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
    }
    s.write_all(&buf).await.expect("admin writes");
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    // Two replies: AUTH's (OK or an error when no password is set) and the command's.
    while Instant::now() < deadline {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout(Duration::from_millis(200), s.read(&mut chunk)).await {
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => got.extend_from_slice(&chunk[..n]),
            _ => {}
        }
        if got.iter().filter(|&&b| b == b'\n').count() >= 2 {
            break;
        }
    }
}

/// Run `sc` against the server at `addr`: its outcome (bytes, then `<EOF>` if closed).
pub async fn run(addr: SocketAddr, sc: &Scenario) -> Vec<u8> {
    for (name, value, _) in sc.config {
        admin(
            addr,
            &[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()],
        )
        .await;
    }
    for (key, len) in sc.keys {
        admin(addr, &[b"SET", key.as_bytes(), &vec![b'v'; *len]]).await;
    }
    let mut s = TcpStream::connect(addr).await.expect("connects");
    for piece in &sc.send {
        // A server that already closed makes later writes fail: what it sent is the outcome.
        if s.write_all(piece).await.is_err() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut chunk = vec![0u8; 64 * 1024];
        match tokio::time::timeout(sc.quiet, s.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                out.extend_from_slice(b"<EOF>");
                break;
            }
            Ok(Ok(n)) => out.extend_from_slice(&chunk[..n]),
            Err(_) => break,
        }
        if Instant::now() > deadline {
            break;
        }
    }
    drop(s);
    for (key, _) in sc.keys {
        admin(addr, &[b"DEL", key.as_bytes()]).await;
    }
    for (name, _, restore) in sc.config {
        admin(
            addr,
            &[b"CONFIG", b"SET", name.as_bytes(), restore.as_bytes()],
        )
        .await;
    }
    out
}

/// Bytes for a failure message.
pub fn show(b: &[u8]) -> String {
    let s: String = b
        .iter()
        .take(300)
        .flat_map(|&c| std::ascii::escape_default(c))
        .map(char::from)
        .collect();
    if b.len() > 300 {
        format!("{s}... ({} bytes)", b.len())
    } else {
        s
    }
}
