//! The server: listeners and accept loops (`listen`), the process around it as
//! redis-server runs one (daemon mode, pid file, log lines, signals: [`process`]), graceful
//! shutdown, and the embedding API ([`start`], [`ServerHandle`], [`BlockingServer`]).

mod backend;
pub mod cluster;
mod daemon;
mod history;
mod listen;
pub mod process;

pub use backend::{Backend, Db, Hit, Restart};
pub use cluster::{start_cluster, BlockingCluster, Cluster};

use crate::cmd::ServerState;
use crate::config::Config;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_util::task::TaskTracker;

/// A running server on the caller's Tokio runtime. Dropping it stops the server (a test's
/// guard); [`ServerHandle::wait`] keeps it serving until a client's SHUTDOWN. It dereferences
/// to [`Backend`]: direct access, the clock, faults and restarts.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
/// let server = resplock::start(resplock::Config::ephemeral()).await?;
/// server.db(0).set("k", "v"); // Backend's controls, through Deref
/// assert_eq!(server.db(0).get("k").as_deref(), Some(&b"v"[..]));
/// drop(server); // the listeners and connections close
/// # Ok(()) }
/// ```
pub struct ServerHandle {
    addr: SocketAddr,
    unix: Option<PathBuf>,
    state: Arc<ServerState>,
    backend: Backend,
    done: Option<tokio::task::JoinHandle<()>>,
}

impl std::ops::Deref for ServerHandle {
    type Target = Backend;
    fn deref(&self) -> &Backend {
        &self.backend
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.state.shutdown.cancel();
    }
}

impl ServerHandle {
    /// The address of the first TCP listener (`0.0.0.0:0` when the server listens on its
    /// unix socket only).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let server = resplock::start(resplock::Config::ephemeral()).await?;
    /// assert!(server.local_addr().ip().is_loopback());
    /// assert_ne!(server.local_addr().port(), 0);
    /// # server.shutdown().await; Ok(()) }
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://ip:port` of the first TCP listener, for any client's `open`/`from_url`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let server = resplock::start(resplock::Config::ephemeral()).await?;
    /// assert_eq!(server.url(), format!("redis://127.0.0.1:{}", server.local_addr().port()));
    /// # server.shutdown().await; Ok(()) }
    /// ```
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// The unix socket the server listens on, if any.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let server = resplock::start(resplock::Config::ephemeral()).await?;
    /// assert_eq!(server.unix_socket(), None); // no `unixsocket` configured
    /// # server.shutdown().await; Ok(()) }
    /// ```
    pub fn unix_socket(&self) -> Option<&Path> {
        self.unix.as_deref()
    }

    /// The server's internal state (test surface, not API: use the [`Backend`] controls).
    #[doc(hidden)]
    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// Close the listeners and every connection, and wait until they are gone.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let server = resplock::start(resplock::Config::ephemeral()).await?;
    /// let addr = server.local_addr();
    /// server.shutdown().await;
    /// assert!(std::net::TcpStream::connect(addr).is_err());
    /// # Ok(()) }
    /// ```
    pub async fn shutdown(mut self) {
        self.state.shutdown.cancel();
        if let Some(done) = self.done.take() {
            let _ = done.await;
        }
    }

    /// Wait until the server stops (SHUTDOWN from a client, or [`ServerHandle::shutdown`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
    /// let server = resplock::start(resplock::Config::ephemeral()).await?;
    /// use std::io::Write;
    /// let mut client = std::net::TcpStream::connect(server.local_addr())?;
    /// client.write_all(b"SHUTDOWN NOSAVE\r\n")?;
    /// server.wait().await; // returns once the server has stopped
    /// # Ok(()) }
    /// ```
    pub async fn wait(mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.await;
        }
    }
}

/// Listen as `config` says (every `bind` address on `port`, and `unixsocket`; port 0 picks a
/// free port) and serve on the current runtime until the handle is dropped or shut down.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// let server = resplock::start(resplock::Config::ephemeral()).await?;
/// let mut client = tokio::net::TcpStream::connect(server.local_addr()).await?;
/// client.write_all(b"PING\r\n").await?;
/// let mut reply = [0u8; 7];
/// client.read_exact(&mut reply).await?;
/// assert_eq!(&reply, b"+PONG\r\n");
/// server.shutdown().await;
/// # Ok(()) }
/// ```
pub async fn start(config: Config) -> io::Result<ServerHandle> {
    let server = start_with_pidfile(config, None).await?;
    server.load_data().await?;
    Ok(server)
}

/// Start `n` independent servers (each its own keyspace, clock, faults, configuration copy
/// and files: `dump-1.rdb`, `appendonlydir-1`, ... in `dir`): on ports `config.port`..`config.port + n - 1`, or on `n` free ports when
/// `config.port` is 0. A Redlock test's nodes:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> std::io::Result<()> {
/// let nodes = resplock::start_many(resplock::Config::ephemeral(), 3).await?;
/// let urls: Vec<String> = nodes.iter().map(|n| format!("redis://{}", n.local_addr())).collect();
/// nodes[0].db(0).set("lock:a", "owner-1"); // each node has its own keyspace
/// nodes[1].db(0).assert_missing("lock:a");
/// assert!(urls[0] != urls[1] && urls[1] != urls[2]);
/// # Ok(()) }
/// ```
pub async fn start_many(config: Config, n: usize) -> io::Result<Vec<ServerHandle>> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut c = config.clone();
        if c.port != 0 {
            c.port = u16::try_from(u32::from(config.port) + i as u32)
                .map_err(|_| io::Error::other("port range past 65535"))?;
        }
        if n > 1 {
            c.number_files(i + 1);
        }
        out.push(start(c).await?);
    }
    // One lock history for the group, its nodes named by their addresses.
    let states: Vec<Arc<ServerState>> = out.iter().map(|s| s.state().clone()).collect();
    crate::cmd::runtime::lock_history::join_group(&states);
    Ok(out)
}

impl ServerHandle {
    /// Load the dataset as redis-server does at start: the append-only log when
    /// `appendonly` is on, else `dbfilename` if it exists (in `dir`). Clients connected
    /// meanwhile get -LOADING. A file that does not load stops the server: the error says
    /// so (redis-server exits).
    pub(crate) async fn load_data(&self) -> io::Result<()> {
        let state = self.state.clone();
        let loaded = tokio::task::spawn_blocking(move || {
            crate::cmd::runtime::persist::load::load_at_start(&state)
        })
        .await
        .map_err(io::Error::other)?;
        if loaded.is_ok() {
            // stop-writes-after-restart's delay starts with the dataset loaded, before any
            // client is served.
            let delay = self.state.restart_delay.begin(self.state.clock.now_ms());
            if delay > 0 {
                crate::log::notice(&format!(
                    "Writes refused for {delay} ms after this restart (stop-writes-after-restart)"
                ));
            }
        }
        self.state
            .persist
            .starting
            .store(false, std::sync::atomic::Ordering::Release);
        if loaded.is_err() {
            self.state.shutdown.cancel();
            return Err(io::Error::other(
                "the dataset could not be loaded (see the log)",
            ));
        }
        Ok(())
    }
}

/// [`start`], and remove `pidfile` when the server stops (the process wrote it).
pub(crate) async fn start_with_pidfile(
    config: Config,
    pidfile: Option<PathBuf>,
) -> io::Result<ServerHandle> {
    let listeners = listen::bind_all(&config)?;
    let commands = crate::cmd::commands_for(&config);
    let state = ServerState::new(config, commands);
    // Until `load_data` has read the files, clients that connect get -LOADING, never an
    // empty dataset. (Cluster nodes start empty and load nothing.)
    state
        .persist
        .starting
        .store(true, std::sync::atomic::Ordering::Release);
    serve_bound(listeners, state, pidfile)
}

/// Serve `state` on `listeners` (bound already) on the current runtime.
fn serve_bound(
    listeners: listen::Listeners,
    state: Arc<ServerState>,
    pidfile: Option<PathBuf>,
) -> io::Result<ServerHandle> {
    let addr = listeners
        .first_tcp_addr()
        .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)));
    let unix = listeners.unix.as_ref().map(|(_, p)| p.clone());
    if state.config.read().start_frozen {
        // Before the first connection: no command sees the clock running.
        state.clock.freeze();
    }
    if listeners.first_tcp_addr().is_some() {
        *state.local_addr.write() = Some(addr);
        // `port 0` picked a free port: from now on it is the configured one, so CONFIG GET,
        // CONFIG REWRITE and a later change of `bind` all see the port clients connect to.
        state.config.write().port = addr.port();
    }
    crate::cmd::on_server_start(&state);
    let connections = TaskTracker::new();
    let accepting = TaskTracker::new();
    let sockets = listen::Sockets::start(
        &state,
        listeners.tcp,
        listeners.tls,
        accepting.clone(),
        connections.clone(),
    )?;
    let _ = state.listeners.set(Box::new(sockets));
    let done = tokio::spawn(run(
        listeners.unix,
        state.clone(),
        pidfile,
        accepting,
        connections,
    ));
    Ok(ServerHandle {
        addr,
        unix,
        backend: Backend::new(state.clone()),
        state,
        done: Some(done),
    })
}

/// Serve until shutdown: the cron, the unix socket's accept loop (the TCP and TLS ones are
/// [`listen::Sockets`]'), then wait for every accept loop and connection to end.
async fn run(
    unix: Option<(tokio::net::UnixListener, PathBuf)>,
    state: Arc<ServerState>,
    pidfile: Option<PathBuf>,
    accepting: TaskTracker,
    tracker: TaskTracker,
) {
    tracker.spawn(crate::cmd::runtime::cron::run(state.clone()));
    let mut socket_path = None;
    if let Some((l, path)) = unix {
        socket_path = Some(path.clone());
        accepting.spawn(listen::accept_unix(state.clone(), l, path, tracker.clone()));
    }
    // CONFIG SET port/bind replace accept loops, so the set of loops can be empty for a
    // moment: the end is the shutdown, not the last loop.
    state.shutdown.cancelled().await;
    // The listening sockets close now, not when the state is dropped: a node of
    // `--instances` that was shut down must refuse connections while the others run.
    if let Some(l) = state.listeners.get() {
        l.close_all();
    }
    accepting.close();
    accepting.wait().await;
    tracker.close();
    tracker.wait().await;
    crate::cmd::runtime::lock_history::at_shutdown(&state);
    if let Some(path) = pidfile {
        crate::log::notice("Removing the pid file.");
        let _ = std::fs::remove_file(path);
    }
    if let Some(path) = socket_path {
        crate::log::notice("Removing the unix socket file.");
        let _ = std::fs::remove_file(path);
    }
    // A test server's own directory (Config::ephemeral) goes with it.
    let config = state.config.read().clone();
    if config.has_ephemeral_dir() {
        if let Some(d) = &config.dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A server on its own runtime thread, for blocking code (`#[test]` without async).
/// Dropping it stops the server and joins the thread; it dereferences to [`Backend`].
///
/// ```
/// let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// let url = format!("redis://{}", server.local_addr());
/// # assert!(url.starts_with("redis://127.0.0.1:"));
/// server.db(0).assert_missing("lock:a");
/// drop(server); // stops the server and joins its thread
/// ```
pub struct BlockingServer {
    addr: SocketAddr,
    state: Arc<ServerState>,
    backend: Backend,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::ops::Deref for BlockingServer {
    type Target = Backend;
    fn deref(&self) -> &Backend {
        &self.backend
    }
}

impl BlockingServer {
    /// Start a server on a runtime of its own, on a new thread.
    ///
    /// ```
    /// let server = resplock::BlockingServer::start(resplock::Config::ephemeral())?;
    /// server.db(0).set("lock:a", "owner-1");
    /// assert_eq!(server.db(0).get("lock:a").as_deref(), Some(&b"owner-1"[..]));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start(config: Config) -> io::Result<BlockingServer> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("resplock-server".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_stack_size(crate::cmd::WORKER_STACK_BYTES)
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                rt.block_on(async move {
                    match start(config).await {
                        Ok(h) => {
                            let _ = tx.send(Ok((h.local_addr(), h.state().clone())));
                            h.wait().await;
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                });
            })?;
        let (addr, state) = rx
            .recv()
            .map_err(|_| io::Error::other("server thread died"))??;
        Ok(BlockingServer {
            addr,
            backend: Backend::new(state.clone()),
            state,
            thread: Some(thread),
        })
    }

    /// The address of the first TCP listener.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let url = format!("redis://{}", server.local_addr());
    /// assert!(url.starts_with("redis://127.0.0.1:"));
    /// ```
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `redis://ip:port` of the first TCP listener, for any client's `open`/`from_url`.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert_eq!(server.url(), format!("redis://127.0.0.1:{}", server.local_addr().port()));
    /// ```
    pub fn url(&self) -> String {
        format!("redis://{}", self.addr)
    }

    /// The server's internal state (test surface, not API: use the [`Backend`] controls).
    #[doc(hidden)]
    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// Stop the server and join its thread.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// let addr = server.local_addr();
    /// server.shutdown();
    /// assert!(std::net::TcpStream::connect(addr).is_err());
    /// ```
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.state.shutdown.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for BlockingServer {
    fn drop(&mut self) {
        self.stop();
    }
}
