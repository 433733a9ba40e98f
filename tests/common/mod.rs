//! Shared by the integration tests: start an in-process server on an ephemeral port, talk to it
//! through the `redis` crate or with raw bytes.
#![allow(dead_code)]

use resplock::{Config, ServerHandle};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `args` as a RESP multibulk request.
pub fn request(args: &[&[u8]]) -> Vec<u8> {
    let mut req = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        req.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        req.extend_from_slice(a);
        req.extend_from_slice(b"\r\n");
    }
    req
}

pub async fn server() -> ServerHandle {
    server_with(Config::ephemeral()).await
}

pub async fn server_with(config: Config) -> ServerHandle {
    resplock::start(config).await.expect("server starts")
}

/// A server started as `resplock --port 0 ARGS...` would be (settings only the command line
/// or a config file may give, such as `enable-debug-command`), in an ephemeral directory,
/// on loopback and without save points unless `args` say otherwise.
pub async fn server_with_args(args: &[&str]) -> ServerHandle {
    let argv: Vec<String> = [
        "resplock",
        "--port",
        "0",
        "--bind",
        "127.0.0.1",
        "--save",
        "",
    ]
    .iter()
    .chain(args)
    .map(|a| a.to_string())
    .collect();
    let mut cfg =
        resplock::config::parse_command_line(&argv, std::io::empty(), resplock::command_exists)
            .expect("settings parse")
            .config;
    cfg.dir = Config::ephemeral().dir;
    server_with(cfg).await
}

pub async fn client(s: &ServerHandle) -> redis::aio::MultiplexedConnection {
    redis::Client::open(format!("redis://{}", s.local_addr()))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .expect("connect")
}

/// This process's resident memory (the in-process server's included), from /proc.
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Length of the first complete RESP2/RESP3 reply in `b`, if it is complete.
pub fn frame_len(b: &[u8]) -> Option<usize> {
    fn line(b: &[u8], from: usize) -> Option<usize> {
        b[from..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|p| from + p)
    }
    fn one(b: &[u8], pos: usize) -> Option<usize> {
        let t = *b.get(pos)?;
        let eol = line(b, pos)?;
        let head = std::str::from_utf8(&b[pos + 1..eol]).ok()?;
        let next = eol + 2;
        match t {
            b'+' | b'-' | b':' | b'_' | b',' | b'#' | b'(' => Some(next),
            b'$' | b'=' | b'!' => {
                let n: i64 = head.parse().ok()?;
                if n < 0 {
                    return Some(next);
                }
                let end = next + n as usize + 2;
                (b.len() >= end).then_some(end)
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n: i64 = head.parse().ok()?;
                let n = if t == b'%' || t == b'|' { n * 2 } else { n };
                // An attribute (`|`) comes with the reply it describes.
                let n = if t == b'|' { n + 1 } else { n };
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

/// A raw connection: write any bytes, read back exact reply frames.
pub struct Raw {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    pub async fn connect(s: &ServerHandle) -> Raw {
        Raw::connect_to(s.local_addr()).await
    }

    /// A raw connection to any server (a redis-server beside resplock).
    pub async fn connect_to(addr: std::net::SocketAddr) -> Raw {
        Raw {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: Vec::new(),
        }
    }

    /// A raw client over a connection made elsewhere (to a server that is not ours).
    pub fn from_stream(stream: TcpStream) -> Raw {
        Raw {
            stream,
            buf: Vec::new(),
        }
    }

    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// Send a command as a multibulk request.
    pub async fn cmd(&mut self, args: &[&[u8]]) -> Vec<u8> {
        self.send(&request(args)).await;
        self.reply().await
    }

    /// The next complete reply frame (panics after 5 s without one).
    pub async fn reply(&mut self) -> Vec<u8> {
        self.try_reply(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| {
                panic!(
                    "no reply; buffered {:?}",
                    String::from_utf8_lossy(&self.buf)
                )
            })
    }

    /// The next reply frame within `wait`, or None (timeout or connection closed).
    pub async fn try_reply(&mut self, wait: Duration) -> Option<Vec<u8>> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(n) = frame_len(&self.buf) {
                return Some(self.buf.drain(..n).collect());
            }
            // read_buf appends to the heap buffer: a stack array here would sit in every
            // test future and overflow the test thread's stack in long tests.
            self.buf.reserve(65536);
            match tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return None,
                Ok(Ok(_)) => {}
            }
        }
    }

    /// True if the server closed the connection (EOF) within `wait`.
    pub async fn closed(&mut self, wait: Duration) -> bool {
        let mut chunk = [0u8; 1024];
        matches!(
            tokio::time::timeout(wait, self.stream.read(&mut chunk)).await,
            Ok(Ok(0)) | Ok(Err(_))
        )
    }
}

/// `blocked_clients` from INFO.
pub async fn blocked_clients(c: &mut Raw) -> i64 {
    let info = String::from_utf8(c.cmd(&[b"INFO", b"clients"]).await).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("blocked_clients:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Wait (bounded) until INFO reports `n` blocked clients.
pub async fn until_blocked(c: &mut Raw, n: i64) {
    for _ in 0..250 {
        if blocked_clients(c).await == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("blocked_clients never reached {n}");
}

/// Wait (at most 30 s) until another client gets BUSY: the script sent before runs and passed
/// busy-reply-threshold. A fixed sleep was not enough on a loaded machine: the script had not
/// started when the test went on, and a test that fails while a script spins never ends (its
/// runtime waits for the worker running the script).
pub async fn until_busy(s: &ServerHandle) {
    let mut probe = Raw::connect(s).await;
    for _ in 0..1500 {
        if probe.cmd(&[b"PING"]).await.starts_with(b"-BUSY") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the script never made the server busy");
}

/// Shorthand: `cmd!(raw, "SET", "k", "v")` returns the raw reply bytes.
#[macro_export]
macro_rules! cmd {
    ($raw:expr, $($a:expr),+ $(,)?) => {
        $raw.cmd(&[$(AsRef::<[u8]>::as_ref(&$a)),+]).await
    };
}

/// The number of an integer reply frame (`:n\r\n`), without checking its type byte.
pub fn int_of(reply: &[u8]) -> i64 {
    std::str::from_utf8(&reply[1..reply.len() - 2])
        .unwrap()
        .parse()
        .unwrap()
}

/// A field of an INFO reply, if present.
pub fn info_field(info: &[u8], field: &str) -> Option<String> {
    String::from_utf8_lossy(info)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
}

/// Wait (bounded) until the replica's link to its master is up.
pub async fn until_linked(replica: &mut Raw) {
    for _ in 0..800 {
        let info = cmd!(replica, "INFO", "replication");
        if info_field(&info, "master_link_status").as_deref() == Some("up") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the replica never linked");
}

/// Wait (bounded) until the replica applied the master's whole stream.
pub async fn until_caught_up(master: &mut Raw, replica: &mut Raw) {
    for _ in 0..400 {
        let m = info_field(&cmd!(master, "INFO", "replication"), "master_repl_offset");
        let r = info_field(&cmd!(replica, "INFO", "replication"), "slave_repl_offset");
        if m.is_some() && m == r {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the replica never caught up");
}
