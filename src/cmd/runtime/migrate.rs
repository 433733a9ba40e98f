//! MIGRATE's connections to target instances (Redis's migrate_cached_sockets): one per
//! `host:port`, kept between calls with the database last SELECTed on it, at most
//! [`MAX_CACHED`] of them, closed by the cron once idle for more than [`IDLE_S`] seconds of the
//! server clock. And the blocking socket steps MIGRATE takes with them (connect, write, read a
//! reply line), each bounded by the command's timeout.
//!
//! MIGRATE waits on the target holding the server lock, as Redis's blocks the whole server:
//! the handler runs its socket steps through `handoff::blocking`, so on a multi-threaded
//! runtime the worker's other tasks (a target node in this same process among them) move to
//! another thread, and the dispatcher moves a MIGRATE to a blocking thread on a
//! current-thread runtime. Nothing here is ever awaited.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Redis's MIGRATE_SOCKET_CACHE_ITEMS: a new connection beyond these closes one at random.
pub const MAX_CACHED: usize = 64;
/// Redis's MIGRATE_SOCKET_CACHE_TTL: a connection unused longer than this many seconds is
/// closed.
pub const IDLE_S: i64 = 10;
/// Redis writes the command to the target in chunks of this size, each with its own timeout.
const WRITE_CHUNK: usize = 64 * 1024;
/// Redis reads each reply line into a 1024-byte buffer: at most this many bytes of it.
const LINE_MAX: usize = 1023;

/// A connection to a target and what MIGRATE remembers about it.
pub struct Target {
    /// None when connecting failed (`broken` says how).
    stream: Option<TcpStream>,
    broken: Option<Failure>,
    /// Bytes read past the last reply line (Redis reads byte by byte: none are lost).
    pending: Vec<u8>,
    /// The database last SELECTed on this connection, -1 if unknown (Redis's last_dbid).
    pub last_dbid: i64,
    /// Server-clock seconds of its last use.
    last_use_s: i64,
}

/// How a socket step failed: timeouts are never retried (Redis's `errno == ETIMEDOUT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    TimedOut,
    Other,
}

/// The cache, one per server.
#[derive(Default)]
pub struct Cache {
    targets: Mutex<HashMap<Vec<u8>, Target>>,
}

impl Cache {
    /// How many connections are cached (INFO's migrate_cached_sockets).
    pub fn len(&self) -> usize {
        self.targets.lock().len()
    }

    /// No connection is cached.
    pub fn is_empty(&self) -> bool {
        self.targets.lock().is_empty()
    }

    /// Take the cached connection to `name` (host:port) out of the cache for one MIGRATE, or
    /// open one (Redis's migrateGetSocket): `None` if connecting failed or timed out.
    pub fn take_or_connect(
        &self,
        name: &[u8],
        host: &[u8],
        port: &[u8],
        timeout: Duration,
        now_s: i64,
    ) -> Option<Target> {
        if let Some(mut t) = self.targets.lock().remove(name) {
            t.last_use_s = now_s;
            return Some(t);
        }
        {
            let mut targets = self.targets.lock();
            if targets.len() >= MAX_CACHED {
                let victim = fastrand::usize(..targets.len());
                if let Some(k) = targets.keys().nth(victim).cloned() {
                    targets.remove(&k);
                }
            }
        }
        let mut target = connect(host, port, timeout)?;
        target.last_use_s = now_s;
        Some(target)
    }

    /// Put a connection that is still good back for the next MIGRATE to `name`.
    pub fn put_back(&self, name: Vec<u8>, target: Target) {
        self.targets.lock().insert(name, target);
    }

    /// Close the connections unused for more than [`IDLE_S`] seconds (migrateCloseTimedoutSockets,
    /// once a second from the cron).
    pub fn close_idle(&self, now_s: i64) {
        self.targets
            .lock()
            .retain(|_, t| now_s - t.last_use_s <= IDLE_S);
    }
}

/// MIGRATE's key arguments as Redis's migrateGetKeys finds them (COMMAND GETKEYS, cluster
/// routing): `key`, or those after KEYS, skipping the options' own arguments on the way; none
/// when KEYS comes with a key (MIGRATE itself then answers the error).
pub fn key_positions(args: &[impl AsRef<[u8]>]) -> Vec<usize> {
    let is = |i: usize, w: &str| args[i].as_ref().eq_ignore_ascii_case(w.as_bytes());
    let mut i = 6;
    while i < args.len() {
        if is(i, "keys") {
            if !args[3].as_ref().is_empty() {
                return Vec::new();
            }
            return (i + 1..args.len()).collect();
        }
        if is(i, "auth") {
            i += 1;
        } else if is(i, "auth2") {
            i += 2;
        }
        i += 1;
    }
    if args.len() > 3 {
        vec![3]
    } else {
        Vec::new()
    }
}

/// Redis's atoi of the port argument: leading digits after optional blanks and sign, as a C
/// int; 0 for anything else.
fn atoi(port: &[u8]) -> i32 {
    let s = std::str::from_utf8(port).unwrap_or("").trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .bytes()
        .take_while(u8::is_ascii_digit)
        .fold(0i32, |n, d| {
            n.wrapping_mul(10).wrapping_add(i32::from(d - b'0'))
        });
    if neg {
        n.wrapping_neg()
    } else {
        n
    }
}

/// The port getaddrinfo is asked for: the int printed into six bytes (five digits at most),
/// read back as a service number, which keeps its low 16 bits; a negative one is refused.
fn service(port: i32) -> Option<u16> {
    let printed: String = port.to_string().chars().take(5).collect();
    printed.parse::<u64>().ok().map(|p| p as u16)
}

/// connBlockingConnect: the first address `host` resolves to. As in Redis, only a failure to
/// resolve is a connect error: a refused or timed-out connection is returned broken, and the
/// first write to it fails (so MIGRATE retries once, then answers IOERR ... writing).
fn connect(host: &[u8], port: &[u8], timeout: Duration) -> Option<Target> {
    let host = std::str::from_utf8(host).ok()?;
    let port = service(atoi(port))?;
    let addr = (host, port).to_socket_addrs().ok()?.next()?;
    let (stream, broken) = match TcpStream::connect_timeout(&addr, timeout) {
        Ok(s) => {
            let _ = s.set_nodelay(true);
            (Some(s), None)
        }
        Err(e) => (None, Some(failure(&e))),
    };
    Some(Target {
        stream,
        broken,
        pending: Vec::new(),
        last_dbid: -1,
        last_use_s: 0,
    })
}

fn failure(e: &io::Error) -> Failure {
    match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Failure::TimedOut,
        _ => Failure::Other,
    }
}

impl Target {
    /// Write all of `buf` in 64 KiB chunks, each within `timeout` (connSyncWrite).
    pub fn write_all(&mut self, buf: &[u8], timeout: Duration) -> Result<(), Failure> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(self.broken.unwrap_or(Failure::Other));
        };
        for chunk in buf.chunks(WRITE_CHUNK) {
            let deadline = Instant::now() + timeout;
            let mut done = 0;
            while done < chunk.len() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(Failure::TimedOut);
                }
                let _ = stream.set_write_timeout(Some(left));
                match stream.write(&chunk[done..]) {
                    Ok(0) => return Err(Failure::Other),
                    Ok(n) => done += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(failure(&e)),
                }
            }
        }
        Ok(())
    }

    /// One reply line within `timeout`, without its `\r\n` (syncReadLine into a 1024-byte
    /// buffer: a longer line comes back as its first 1023 bytes, the rest as the next line).
    /// An empty line is a failure, as in Redis.
    pub fn read_line(&mut self, timeout: Duration) -> Result<Vec<u8>, Failure> {
        let deadline = Instant::now() + timeout;
        let Some(stream) = self.stream.as_mut() else {
            return Err(self.broken.unwrap_or(Failure::Other));
        };
        loop {
            let limit = self.pending.len().min(LINE_MAX);
            if let Some(i) = self.pending[..limit].iter().position(|&b| b == b'\n') {
                let mut line: Vec<u8> = self.pending.drain(..=i).collect();
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return if line.is_empty() {
                    Err(Failure::Other)
                } else {
                    Ok(line)
                };
            }
            if self.pending.len() >= LINE_MAX {
                return Ok(self.pending.drain(..LINE_MAX).collect());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::TimedOut);
            }
            let _ = stream.set_read_timeout(Some(left));
            let mut buf = [0u8; 1024];
            match stream.read(&mut buf) {
                Ok(0) => return Err(Failure::Other),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(failure(&e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_as_migrate_get_keys_finds_them() {
        fn a(s: &str) -> Vec<&str> {
            s.split(' ')
                .map(|w| if w == "-" { "" } else { w })
                .collect()
        }
        assert_eq!(key_positions(&a("MIGRATE h p k 0 1")), vec![3]);
        assert_eq!(key_positions(&a("MIGRATE h p - 0 1 KEYS a b")), vec![7, 8]);
        assert_eq!(
            key_positions(&a("MIGRATE h p k 0 1 KEYS a")),
            Vec::<usize>::new()
        );
        assert_eq!(
            key_positions(&a("MIGRATE h p - 0 1 AUTH keys KEYS a")),
            vec![9]
        );
        assert_eq!(
            key_positions(&a("MIGRATE h p - 0 1 AUTH2 u keys x KEYS a")),
            vec![11]
        );
        assert_eq!(key_positions(&a("MIGRATE h p - 0 1 AUTH2 u keys")), vec![3]);
    }

    #[test]
    fn port_is_read_as_redis_atoi_reads_it() {
        assert_eq!(atoi(b"6379"), 6379);
        assert_eq!(atoi(b" 12ab"), 12);
        assert_eq!(atoi(b"abc"), 0);
        assert_eq!(atoi(b"-5"), -5);
        assert_eq!(service(70000), Some(4464));
        assert_eq!(service(123456), Some(12345));
        assert_eq!(service(-5), None);
    }

    #[test]
    fn a_refused_connection_fails_at_the_first_write_as_in_redis() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        drop(listener);
        let d = Duration::from_secs(1);
        let mut t = Cache::default()
            .take_or_connect(b"x", b"127.0.0.1", port.as_bytes(), d, 0)
            .expect("only a failed resolution refuses");
        assert_eq!(t.write_all(b"PING\r\n", d), Err(Failure::Other));
        assert!(Cache::default()
            .take_or_connect(b"x", b"127.0.0.1", b"-5", d, 0)
            .is_none());
    }

    #[test]
    fn reply_lines_are_split_and_capped_like_sync_read_line() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let cache = Cache::default();
        let port = addr.port().to_string();
        let mut t = cache
            .take_or_connect(
                b"x",
                b"127.0.0.1",
                port.as_bytes(),
                Duration::from_secs(1),
                0,
            )
            .unwrap();
        let (mut peer, _) = listener.accept().unwrap();
        let long = vec![b'a'; 1500];
        peer.write_all(b"+OK\r\n-ERR x\r\n").unwrap();
        peer.write_all(&long).unwrap();
        peer.write_all(b"\r\n\r\n").unwrap();
        let d = Duration::from_secs(1);
        assert_eq!(t.read_line(d).unwrap(), b"+OK");
        assert_eq!(t.read_line(d).unwrap(), b"-ERR x");
        assert_eq!(t.read_line(d).unwrap().len(), 1023);
        assert_eq!(t.read_line(d).unwrap().len(), 477);
        assert_eq!(t.read_line(d), Err(Failure::Other));
        assert_eq!(
            t.read_line(Duration::from_millis(20)),
            Err(Failure::TimedOut)
        );
        drop(peer);
        assert_eq!(t.read_line(d), Err(Failure::Other));
    }

    #[test]
    fn idle_connections_are_closed_after_ten_seconds() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let cache = Cache::default();
        let t = cache
            .take_or_connect(
                b"k",
                b"127.0.0.1",
                port.as_bytes(),
                Duration::from_secs(1),
                100,
            )
            .unwrap();
        cache.put_back(b"k".to_vec(), t);
        cache.close_idle(110);
        assert_eq!(cache.len(), 1);
        cache.close_idle(111);
        assert!(cache.is_empty());
    }
}
