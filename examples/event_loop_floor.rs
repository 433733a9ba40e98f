//! Not a server: a measurement. How much of resplock's user-space CPU per request, with one
//! request in flight per client, is the tokio connection machinery (a task per connection, its
//! wake-ups, the I/O driver's readiness bookkeeping) rather than parsing, the command path and
//! the keyspace. This answers simple requests from the same parser and the same dispatch
//! (`testkit::Harness`: authentication, the server lock, the command table, the keyspace),
//! driven by a hand-written epoll loop of the kind redis-server runs: read every ready
//! connection, run what it sent, then write every reply before waiting again.
//!
//! It serves every connection as one client (no CLIENT, no blocking, no pub/sub, no MULTI
//! across connections), so it is only good for GET/SET-like load. Harness adds a
//! `block_on` and a reply copy per request, so the floor it shows is an upper bound.
//!
//! ```text
//! cargo build --release --example event_loop_floor
//! N=300000 benches/cpu_per_request.sh 3 redis=redis now=target/release/resplock \
//!     floor=target/release/examples/event_loop_floor -- get key:__rand_int__
//! ```
//!
//! Takes `--port N` (6390 by default) and ignores the other arguments a server is given.
//! Listens on 127.0.0.1 only; stops on SIGTERM or SIGINT (the default action).

use bytes::{BufMut, BytesMut};
use resplock::protocol::{parse_request, Limits, ParseState};
use resplock::testkit::Harness;
use resplock::Config;
use std::collections::HashMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

/// What one read takes in at most.
const READ_CHUNK: usize = 16 * 1024;

/// A connection: its socket, what it sent and has not been parsed, what waits to be written.
struct Conn {
    stream: TcpStream,
    input: BytesMut,
    parse: ParseState,
    out: Vec<u8>,
}

fn watch(ep: RawFd, fd: RawFd) {
    let mut ev = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    // SAFETY: `ev` outlives the call; epoll_ctl copies it.
    let rc = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) };
    assert_eq!(rc, 0, "epoll_ctl ADD");
}

/// Read once from `c`; false if the peer closed or the socket failed.
fn read_some(c: &mut Conn) -> bool {
    c.input.reserve(READ_CHUNK);
    let room = c.input.chunk_mut();
    // SAFETY: reads at most `room.len()` bytes into the buffer's spare capacity.
    let n = unsafe {
        libc::read(
            c.stream.as_raw_fd(),
            room.as_mut_ptr() as *mut libc::c_void,
            room.len(),
        )
    };
    if n > 0 {
        // SAFETY: the kernel initialised `n` bytes of the spare capacity.
        unsafe { c.input.advance_mut(n as usize) };
        return true;
    }
    n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let port: u16 = argv
        .windows(2)
        .find(|w| w[0] == "--port")
        .map(|w| w[1].parse().expect("--port takes a number"))
        .unwrap_or(6390);
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let lfd = listener.as_raw_fd();
    // SAFETY: plain system call.
    let ep = unsafe { libc::epoll_create1(0) };
    assert!(ep >= 0, "epoll_create1");
    watch(ep, lfd);
    let mut h = Harness::new(Config::ephemeral());
    let limits = Limits::default();
    let mut conns: HashMap<RawFd, Conn> = HashMap::new();
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
    let mut ready: Vec<RawFd> = Vec::new();
    loop {
        // SAFETY: `events` has room for the count passed.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        for ev in &events[..n as usize] {
            let fd = ev.u64 as RawFd;
            if fd == lfd {
                while let Ok((s, _)) = listener.accept() {
                    if s.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = s.set_nodelay(true);
                    watch(ep, s.as_raw_fd());
                    conns.insert(
                        s.as_raw_fd(),
                        Conn {
                            stream: s,
                            input: BytesMut::new(),
                            parse: ParseState::default(),
                            out: Vec::new(),
                        },
                    );
                }
                continue;
            }
            let Some(c) = conns.get_mut(&fd) else {
                continue;
            };
            let mut open = read_some(c);
            while open {
                match parse_request(&mut c.input, &mut c.parse, &limits) {
                    Ok(Some(args)) if args.is_empty() => {}
                    Ok(Some(args)) => {
                        let (_, bytes) = h.request(args);
                        c.out.extend_from_slice(&bytes);
                    }
                    Ok(None) => break,
                    Err(_) => open = false,
                }
            }
            if !open {
                // Dropping the stream closes it, which takes it out of the epoll set.
                conns.remove(&fd);
            } else if !c.out.is_empty() {
                ready.push(fd);
            }
        }
        // Every reply of this pass, written together, as redis-server's beforeSleep does.
        for fd in ready.drain(..) {
            if let Some(c) = conns.get_mut(&fd) {
                // Small replies always fit the socket's buffer; a peer that does not read
                // is dropped (this is a measurement, not a server).
                if c.stream.write_all(&c.out).is_err() {
                    conns.remove(&fd);
                } else {
                    c.out.clear();
                }
            }
        }
    }
}
