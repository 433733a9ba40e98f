//! Accept loop, connection limit, active expiry and graceful shutdown; the embedding API.

use crate::cmd::ServerState;
use crate::config::Config;
use crate::connection;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

/// A running server on the caller's Tokio runtime.
pub struct ServerHandle {
    addr: SocketAddr,
    state: Arc<ServerState>,
    done: tokio::task::JoinHandle<()>,
}

impl ServerHandle {
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's state: its clock (tests move time with `state().clock.advance_ms`),
    /// keyspace and configuration.
    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// Close the listener and every connection, and wait until they are gone.
    pub async fn shutdown(self) {
        self.state.shutdown.cancel();
        let _ = self.done.await;
    }

    /// Wait until the server stops (SHUTDOWN from a client, or [`ServerHandle::shutdown`]).
    pub async fn wait(self) {
        let _ = self.done.await;
    }
}

/// Bind `config.bind:config.port` (port 0 picks a free one) and serve on the current runtime.
pub async fn start(config: Config) -> io::Result<ServerHandle> {
    let listener = TcpListener::bind((config.bind.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    let state = ServerState::new(config);
    let _ = state.local_addr.set(addr);
    crate::cmd::on_server_start(&state);
    let done = tokio::spawn(run(listener, state.clone()));
    Ok(ServerHandle { addr, state, done })
}

/// Start `n` independent servers (each its own keyspace, clock, faults and configuration
/// copy): on ports `config.port`..`config.port + n - 1`, or on `n` free ports when
/// `config.port` is 0. A Redlock test's nodes:
///
/// ```no_run
/// # async fn demo() -> std::io::Result<()> {
/// let nodes = resplock::start_many(resplock::Config::ephemeral(), 3).await?;
/// let urls: Vec<String> = nodes.iter().map(|n| format!("redis://{}", n.local_addr())).collect();
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
        out.push(start(c).await?);
    }
    Ok(out)
}

async fn run(listener: TcpListener, state: Arc<ServerState>) {
    let tracker = TaskTracker::new();
    tracker.spawn(crate::cmd::cron::run(state.clone()));
    loop {
        let accepted = tokio::select! {
            _ = state.shutdown.cancelled() => break,
            a = listener.accept() => a,
        };
        let (mut stream, _) = match accepted {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        if state.faults.refusing() {
            // A test made this node unreachable: close at once, before any byte.
            drop(stream);
            continue;
        }
        state
            .stats
            .total_connections
            .fetch_add(1, Ordering::Relaxed);
        let maxclients = state.config.read().maxclients;
        if state.clients.lock().len() >= maxclients {
            state
                .stats
                .rejected_connections
                .fetch_add(1, Ordering::Relaxed);
            tracker.spawn(async move {
                let _ = stream
                    .write_all(format!("-{}\r\n", crate::error::MAX_CLIENTS).as_bytes())
                    .await;
            });
            continue;
        }
        tracker.spawn(connection::serve(state.clone(), stream));
    }
    drop(listener);
    tracker.close();
    tracker.wait().await;
}

/// A server on its own runtime thread, for blocking code (`#[test]` without async).
pub struct BlockingServer {
    addr: SocketAddr,
    state: Arc<ServerState>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BlockingServer {
    pub fn start(config: Config) -> io::Result<BlockingServer> {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("resplock-server".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
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
            state,
            thread: Some(thread),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// Stop the server and join its thread.
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
