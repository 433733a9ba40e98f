//! Listening sockets as redis-server opens them (`listenToPort`, `anetUnixServer`): every
//! `bind` address on the TCP port, and the unix socket; then the accept loops, which admit a
//! client as Redis's `acceptCommonHandler` and `clientAcceptHandler` do (maxclients, then
//! protected mode) before its connection task starts.
//!
//! The port rule: `port 0` with a unix socket configured means no TCP listener, as in Redis;
//! `port 0` without one picks a free port (every bind address gets the same one), resplock's
//! reading, so a test can start a server without choosing a port.

use crate::cmd::runtime::listeners::{CannotListen, Change, Listeners as Relisten};
use crate::cmd::ServerState;
use crate::config::Config;
use crate::connection::{self, Peer};
use crate::wake::Cancel;
use parking_lot::Mutex;
use socket2::{Domain, Socket, TcpKeepalive, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio_util::task::TaskTracker;

/// The sockets a server listens on.
pub(super) struct Listeners {
    /// One per `bind` address that could be bound, in `bind` order.
    pub tcp: Vec<TcpListener>,
    /// The unix socket and its path (removed again at shutdown).
    pub unix: Option<(UnixListener, PathBuf)>,
    /// `tls-port`'s listeners (one per `bind` address) and the acceptor they hand sockets to.
    pub tls: Vec<(TcpListener, crate::tls::TlsAcceptor)>,
}

impl Listeners {
    /// The address of the first TCP listener.
    pub fn first_tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp.first().and_then(|l| l.local_addr().ok())
    }
}

/// `tcp-backlog`, the listen(2) queue length (also used for the unix socket, as Redis).
fn tcp_backlog(config: &Config) -> i32 {
    config
        .get("tcp-backlog")
        .and_then(|v| v.parse().ok())
        .unwrap_or(511)
}

/// Redis's message for an OS error: strerror's text without Rust's "(os error N)".
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Open every listener `config` asks for. Failures are logged as Redis logs them; the error
/// carries Redis's final line ("Failed listening on port N (TCP), aborting.").
pub(super) fn bind_all(config: &Config) -> io::Result<Listeners> {
    let mut tcp = Vec::new();
    let unix_wanted = config.unixsocket.as_deref().is_some_and(|p| !p.is_empty());
    if config.port != 0 || !unix_wanted {
        let mut port = config.port;
        for raw in config.bind_addresses() {
            let optional = raw.starts_with('-');
            let addr = raw.trim_start_matches('-');
            match bind_tcp(addr, port, tcp_backlog(config)) {
                Ok(l) => {
                    if port == 0 {
                        // The first address picked the port; the others share it.
                        port = l.local_addr().map(|a| a.port()).unwrap_or(0);
                    }
                    tcp.push(l);
                }
                Err(e) => {
                    crate::log::warning(&format!(
                        "Warning: Could not create server TCP listening socket {addr}:{port}: {}",
                        e.1
                    ));
                    let skip = match e.0.raw_os_error() {
                        Some(libc::EADDRNOTAVAIL) => optional,
                        Some(
                            libc::ENOPROTOOPT
                            | libc::EPROTONOSUPPORT
                            | libc::ESOCKTNOSUPPORT
                            | libc::EPFNOSUPPORT
                            | libc::EAFNOSUPPORT,
                        ) => true,
                        _ => false,
                    };
                    if !skip {
                        return Err(io::Error::new(
                            e.0.kind(),
                            format!("Failed listening on port {port} (TCP), aborting."),
                        ));
                    }
                }
            }
        }
    }
    let mut tls = Vec::new();
    let acceptor = crate::tls::acceptor(config).map_err(|e| {
        crate::log::warning(&e);
        io::Error::other("Failed to configure TLS. Check logs for more info.")
    })?;
    if let Some(acceptor) = acceptor {
        for raw in config.bind_addresses() {
            let addr = raw.trim_start_matches('-');
            match bind_tcp(addr, config.tls_port, tcp_backlog(config)) {
                Ok(l) => tls.push((l, acceptor.clone())),
                Err(e) => {
                    crate::log::warning(&format!(
                        "Warning: Could not create server TLS listening socket {addr}:{}: {}",
                        config.tls_port, e.1
                    ));
                    if !raw.starts_with('-') {
                        return Err(io::Error::new(
                            e.0.kind(),
                            format!(
                                "Failed listening on port {} (TLS), aborting.",
                                config.tls_port
                            ),
                        ));
                    }
                }
            }
        }
    }
    let unix = match config.unixsocket.as_deref().filter(|p| !p.is_empty()) {
        Some(path) => Some(bind_unix(path, config.unixsocketperm, tcp_backlog(config))?),
        None => None,
    };
    if tcp.is_empty() && unix.is_none() && tls.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::AddrNotAvailable,
            "Configured to not listen anywhere, exiting.",
        ));
    }
    Ok(Listeners { tcp, unix, tls })
}

/// Redis's listenToPort: `port` on every `bind` address, skipping an optional (`-`) address
/// that is not available and protocols the machine lacks; any other failure closes what was
/// opened and fails the whole.
fn listen_to_port(config: &Config, port: u16) -> io::Result<Vec<TcpListener>> {
    let mut out = Vec::new();
    for raw in config.bind_addresses() {
        let optional = raw.starts_with('-');
        let addr = raw.trim_start_matches('-');
        match bind_tcp(addr, port, tcp_backlog(config)) {
            Ok(l) => out.push(l),
            Err((e, text)) => {
                crate::log::warning(&format!(
                    "Warning: Could not create server TCP listening socket {addr}:{port}: {text}"
                ));
                let skip = match e.raw_os_error() {
                    Some(libc::EADDRNOTAVAIL) => optional,
                    Some(
                        libc::ENOPROTOOPT
                        | libc::EPROTONOSUPPORT
                        | libc::ESOCKTNOSUPPORT
                        | libc::EPFNOSUPPORT
                        | libc::EAFNOSUPPORT,
                    ) => true,
                    _ => false,
                };
                if !skip {
                    return Err(e);
                }
            }
        }
    }
    Ok(out)
}

/// A listener its accept loop owns, as the server closes it: `stop` ends the loop, and
/// `shutdown(2)` on a duplicate of its socket stops the listening at once, so the port is
/// free for the next bind before the loop has even run again (a closed descriptor number
/// could be reused, the duplicate cannot).
struct Open {
    socket: OwnedFd,
    stop: Cancel,
}

impl Open {
    fn close(self) {
        self.stop.cancel();
        // SAFETY: shutdown(2) on a descriptor this value owns.
        unsafe {
            libc::shutdown(
                std::os::fd::AsRawFd::as_raw_fd(&self.socket),
                libc::SHUT_RDWR,
            );
        }
    }
}

/// The TCP and TLS listeners of a running server, which CONFIG SET port, tls-port and bind
/// close and open again ([`Relisten`]). New accept loops join the server's trackers, so
/// shutdown waits for them as for the first ones.
pub(super) struct Sockets {
    state: Weak<ServerState>,
    runtime: tokio::runtime::Handle,
    accepting: TaskTracker,
    connections: TaskTracker,
    /// The event loops plain TCP clients are served on (None: a task per client).
    loops: Option<Arc<connection::Loops>>,
    open: Mutex<(Vec<Open>, Vec<Open>)>,
}

impl Sockets {
    /// Take over the first listeners and start their accept loops.
    pub fn start(
        state: &Arc<ServerState>,
        tcp: Vec<TcpListener>,
        tls: Vec<(TcpListener, crate::tls::TlsAcceptor)>,
        accepting: TaskTracker,
        connections: TaskTracker,
    ) -> io::Result<Sockets> {
        let sockets = Sockets {
            state: Arc::downgrade(state),
            runtime: tokio::runtime::Handle::current(),
            loops: connection::Loops::start(state, &connections),
            accepting,
            connections,
            open: Mutex::new((Vec::new(), Vec::new())),
        };
        let tcp = tcp
            .into_iter()
            .map(|l| sockets.serve_tcp(state, l))
            .collect::<io::Result<Vec<_>>>()?;
        let tls = tls
            .into_iter()
            .map(|(l, a)| sockets.serve_tls(state, l, a))
            .collect::<io::Result<Vec<_>>>()?;
        *sockets.open.lock() = (tcp, tls);
        Ok(sockets)
    }

    fn serve_tcp(&self, state: &Arc<ServerState>, l: TcpListener) -> io::Result<Open> {
        let socket = l.as_fd().try_clone_to_owned()?;
        let stop = Cancel::new();
        self.accepting.spawn(accept_tcp(
            state.clone(),
            l,
            stop.clone(),
            self.connections.clone(),
            self.loops.clone(),
        ));
        Ok(Open { socket, stop })
    }

    fn serve_tls(
        &self,
        state: &Arc<ServerState>,
        l: TcpListener,
        acceptor: crate::tls::TlsAcceptor,
    ) -> io::Result<Open> {
        let socket = l.as_fd().try_clone_to_owned()?;
        let stop = Cancel::new();
        self.accepting.spawn(accept_tls(
            state.clone(),
            l,
            acceptor,
            stop.clone(),
            self.connections.clone(),
        ));
        Ok(Open { socket, stop })
    }

    /// Listen on `port` (0: nowhere) as `tls` says, and start serving what was opened.
    fn open(
        &self,
        state: &Arc<ServerState>,
        config: &Config,
        port: u16,
        tls: bool,
    ) -> Result<Vec<Open>, CannotListen> {
        if port == 0 {
            return Ok(Vec::new());
        }
        let _runtime = self.runtime.enter();
        let listeners = listen_to_port(config, port).map_err(|_| CannotListen)?;
        if tls {
            let acceptor = match crate::tls::acceptor(config) {
                Ok(Some(a)) => a,
                Ok(None) | Err(_) => return Err(CannotListen),
            };
            listeners
                .into_iter()
                .map(|l| self.serve_tls(state, l, acceptor.clone()))
                .collect::<io::Result<_>>()
                .map_err(|_| CannotListen)
        } else {
            listeners
                .into_iter()
                .map(|l| self.serve_tcp(state, l))
                .collect::<io::Result<_>>()
                .map_err(|_| CannotListen)
        }
    }
}

impl Relisten for Sockets {
    fn close_all(&self) {
        let mut open = self.open.lock();
        let (tcp, tls) = &mut *open;
        std::mem::take(tcp).into_iter().for_each(Open::close);
        std::mem::take(tls).into_iter().for_each(Open::close);
    }

    fn relisten(&self, change: Change, config: &Config) -> Result<(), CannotListen> {
        let Some(state) = self.state.upgrade() else {
            return Err(CannotListen);
        };
        let mut open = self.open.lock();
        let (tcp, tls) = &mut *open;
        let result = match change {
            Change::Port => {
                std::mem::take(tcp).into_iter().for_each(Open::close);
                self.open(&state, config, config.port, false)
                    .map(|l| *tcp = l)
            }
            Change::TlsPort => {
                std::mem::take(tls).into_iter().for_each(Open::close);
                self.open(&state, config, config.tls_port, true)
                    .map(|l| *tls = l)
            }
            Change::Bind => {
                std::mem::take(tcp).into_iter().for_each(Open::close);
                std::mem::take(tls).into_iter().for_each(Open::close);
                let opened = self.open(&state, config, config.port, false).and_then(|t| {
                    self.open(&state, config, config.tls_port, true)
                        .map(|s| (t, s))
                });
                match opened {
                    Ok((t, s)) => {
                        *tcp = t;
                        *tls = s;
                        Ok(())
                    }
                    Err(e) => {
                        crate::log::warning("Failed to bind");
                        Err(e)
                    }
                }
            }
        };
        let first = tcp.first().and_then(|o| {
            socket2::SockRef::from(&o.socket)
                .local_addr()
                .ok()
                .and_then(|a| a.as_socket())
        });
        *state.local_addr.write() = first;
        result
    }
}

/// One TCP listener; Err has the io error and Redis's text for it (`bind: ...`).
fn bind_tcp(addr: &str, port: u16, backlog: i32) -> Result<TcpListener, (io::Error, String)> {
    let v6 = addr.contains(':');
    let ip = match addr {
        "*" => Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED)),
        "::*" => Some(IpAddr::V6(Ipv6Addr::UNSPECIFIED)),
        _ => addr.parse::<IpAddr>().ok(),
    };
    let sa = match ip {
        Some(ip) => SocketAddr::new(ip, port),
        // A host name: resolved as getaddrinfo would, in the family the address implies.
        None => (addr, port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut it| it.find(|a| a.is_ipv6() == v6))
            .ok_or_else(|| {
                (
                    io::Error::from(io::ErrorKind::AddrNotAvailable),
                    "Name or service not known".to_string(),
                )
            })?,
    };
    let fail = |what: &str, e: io::Error| {
        let text = format!("{what}: {}", strerror(&e));
        (e, text)
    };
    let socket =
        Socket::new(Domain::for_address(sa), Type::STREAM, None).map_err(|e| fail("socket", e))?;
    socket
        .set_reuse_address(true)
        .map_err(|e| fail("setsockopt SO_REUSEADDR", e))?;
    if sa.is_ipv6() {
        socket
            .set_only_v6(true)
            .map_err(|e| fail("setsockopt", e))?;
    }
    socket.bind(&sa.into()).map_err(|e| fail("bind", e))?;
    socket.listen(backlog).map_err(|e| fail("listen", e))?;
    socket.set_nonblocking(true).map_err(|e| fail("fcntl", e))?;
    TcpListener::from_std(socket.into()).map_err(|e| fail("listen", e))
}

/// The unix socket: a stale file at the path is removed first, the mode set after, as Redis.
fn bind_unix(path: &str, perm: u32, backlog: i32) -> io::Result<(UnixListener, PathBuf)> {
    let _ = std::fs::remove_file(path);
    let failed = |why: String| {
        crate::log::warning(&format!("Failed opening Unix socket: {why}"));
        io::Error::other(format!("Failed opening Unix socket: {why}"))
    };
    // sun_path holds 108 bytes with its NUL.
    if path.len() >= 108 {
        return Err(failed(format!(
            "unix socket path too long ({}), must be under 108",
            path.len()
        )));
    }
    let std_listener = bind_unix_std(path, backlog).map_err(|e| failed(strerror(&e)))?;
    if perm != 0 {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(perm));
    }
    let l = UnixListener::from_std(std_listener).map_err(|e| failed(strerror(&e)))?;
    Ok((l, PathBuf::from(path)))
}

fn bind_unix_std(path: &str, backlog: i32) -> io::Result<std::os::unix::net::UnixListener> {
    let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    socket.bind(&socket2::SockAddr::unix(path)?)?;
    socket.listen(backlog)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// Accept TCP clients until the server shuts down.
async fn accept_tcp(
    state: Arc<ServerState>,
    listener: TcpListener,
    stop: Cancel,
    tracker: TaskTracker,
    loops: Option<Arc<connection::Loops>>,
) {
    loop {
        let accepted = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = stop.cancelled() => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(s) => s,
            Err(_) if stop.is_cancelled() => break,
            Err(e) => {
                accept_failed(&e).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let keepalive = state.config.read().tcp_keepalive;
        if keepalive > 0 {
            set_keepalive(&stream, keepalive);
        }
        // Redis's islocalClient: the loopback addresses as printed, nothing else.
        let ip = peer.ip().to_canonical();
        let local = ip == IpAddr::V4(Ipv4Addr::LOCALHOST) || ip == IpAddr::V6(Ipv6Addr::LOCALHOST);
        let mut stream = stream;
        if let Some(err) = admit(&state, local) {
            tracker.spawn(async move { refuse(&mut stream, err).await });
            continue;
        }
        let laddr = stream
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let peer = Peer {
            addr: peer.to_string(),
            laddr,
            unix_socket: false,
        };
        let (stream, peer) = match &loops {
            Some(loops) => match loops.serve(&state, stream, peer) {
                Ok(()) => continue,
                Err(back) => back,
            },
            None => (stream, peer),
        };
        tracker.spawn(connection::serve(state.clone(), stream, peer));
    }
}

/// Accept TLS clients until the server shuts down: admitted as TCP clients are, then the
/// handshake (bounded, so a silent peer cannot hold a task), then served.
async fn accept_tls(
    state: Arc<ServerState>,
    listener: TcpListener,
    acceptor: crate::tls::TlsAcceptor,
    stop: Cancel,
    tracker: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = stop.cancelled() => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(s) => s,
            Err(_) if stop.is_cancelled() => break,
            Err(e) => {
                accept_failed(&e).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let ip = peer.ip().to_canonical();
        let local = ip == IpAddr::V4(Ipv4Addr::LOCALHOST) || ip == IpAddr::V6(Ipv6Addr::LOCALHOST);
        let laddr = stream
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default();
        let refused = admit(&state, local);
        let acceptor = acceptor.clone();
        let state = state.clone();
        tracker.spawn(async move {
            let handshake = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream));
            let mut tls = match handshake.await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    crate::log::verbose(&format!("Error accepting a client connection: {e}"));
                    return;
                }
                Err(_) => return,
            };
            if let Some(err) = refused {
                refuse(&mut tls, err).await;
                return;
            }
            let peer = Peer {
                addr: peer.to_string(),
                laddr,
                unix_socket: false,
            };
            connection::serve(state, tls, peer).await;
        });
    }
}

/// Accept unix-socket clients until the server shuts down. Their address is the socket path
/// with port 0, as Redis prints it.
pub(super) async fn accept_unix(
    state: Arc<ServerState>,
    listener: UnixListener,
    path: PathBuf,
    tracker: TaskTracker,
) {
    let name = format!("{}:0", path.display());
    loop {
        let accepted = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let mut stream = match accepted {
            Ok((s, _)) => s,
            Err(e) => {
                accept_failed(&e).await;
                continue;
            }
        };
        if let Some(err) = admit(&state, true) {
            tracker.spawn(async move { refuse(&mut stream, err).await });
            continue;
        }
        let peer = Peer {
            addr: name.clone(),
            laddr: name.clone(),
            unix_socket: true,
        };
        tracker.spawn(connection::serve(state.clone(), stream, peer));
    }
}

/// Out of file descriptors and the like: log, and back off instead of spinning.
async fn accept_failed(e: &io::Error) {
    crate::log::warning(&format!(
        "Accepting client connection: accept: {}",
        strerror(e)
    ));
    tokio::time::sleep(Duration::from_millis(10)).await;
}

/// The error a new client gets instead of being served, if any: maxclients first, then
/// protected mode (no password, client not on loopback or the unix socket), as Redis checks
/// them. Counts the connection as received or rejected.
fn admit(state: &ServerState, local: bool) -> Option<&'static str> {
    let (maxclients, protected) = {
        let c = state.config.read();
        (c.maxclients, c.protected_mode)
    };
    let refused = if state.clients.lock().len() >= maxclients {
        Some(crate::error::MAX_CLIENTS)
    } else if protected && !local && !state.requires_pass() {
        Some(crate::error::PROTECTED_MODE)
    } else {
        None
    };
    let stat = if refused.is_some() {
        &state.stats.rejected_connections
    } else {
        &state.stats.total_connections
    };
    stat.fetch_add(1, Ordering::Relaxed);
    refused
}

/// Write the refusal (best effort, as Redis) and close.
async fn refuse<S: AsyncWrite + Unpin>(stream: &mut S, err: &str) {
    let msg = format!("-{err}\r\n");
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(msg.as_bytes())).await;
    let _ = stream.shutdown().await;
}

/// Redis's anetKeepAlive: probes after `secs` idle, every secs/3, three of them.
fn set_keepalive(stream: &tokio::net::TcpStream, secs: u32) {
    let idle = Duration::from_secs(u64::from(secs));
    let every = Duration::from_secs(u64::from((secs / 3).max(1)));
    let ka = TcpKeepalive::new()
        .with_time(idle)
        .with_interval(every)
        .with_retries(3);
    let _ = socket2::SockRef::from(stream).set_tcp_keepalive(&ka);
}
