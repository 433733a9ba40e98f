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
