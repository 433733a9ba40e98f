//! A connection that sent SYNC or PSYNC: from then on it is a replica's link. It is
//! attached under the server lock (`cmd::runtime::replication::attach`), answered with
//! `+FULLRESYNC` (then the RDB as one bulk, `$<len>\r\n<bytes>`) or `+CONTINUE`, and then
//! fed the replication stream, while what the replica sends (REPLCONF ACK) is read. The
//! stream bytes wait in the replica's own bounded buffer (client-output-buffer-limit's
//! replica class), so a slow or vanished replica costs the writers nothing but memory up to
//! that limit, past which it is disconnected.

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::replication::{self, registry::Replica, Attach};
use crate::cmd::ServerState;
use crate::protocol::Limits;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// What the replica sends, as the connection reads and parses it.
pub(super) trait Requests: Send {
    /// Wait for and read more bytes; `Ok(0)` when the peer closed.
    fn read_more(&mut self) -> impl std::future::Future<Output = std::io::Result<usize>> + Send;
    /// The next complete request read so far; Err on a protocol error.
    fn next_request(&mut self, limits: &Limits) -> Result<Option<Vec<bytes::Bytes>>, ()>;
}

/// Serve `client` as a replica until the link closes (the caller then disconnects it).
pub(super) async fn serve<I: Requests, W: AsyncWrite + Unpin + Send>(
    state: &Arc<ServerState>,
    client: &mut Client,
    input: &mut I,
    wr: &mut W,
) {
    let Some(hs) = client.replica.clone() else {
        return;
    };
    let mut keepalive = 0u32;
    let attached = loop {
        let Some(a) = with_lock(state, client, || replication::attach(state, client, &hs)).await
        else {
            return;
        };
        match a {
            Attach::Busy => {
                // Redis's replicationCron: a newline a second keeps a waiting replica's
                // link alive while the running save ends.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = client.info.kill.cancelled() => return,
                    _ = state.shutdown.cancelled() => return,
                }
                keepalive += 1;
                if keepalive.is_multiple_of(10) && !write(state, client, wr, b"\n").await {
                    return;
                }
            }
            a => break a,
        }
    };
    let replica = match attached {
        Attach::Continue { replica, line } => {
            if !write(state, client, wr, &line).await {
                replication::detach(state, &replica);
                return;
            }
            replica
        }
        Attach::Full {
            replica,
            line,
            rdb,
            abandon,
        } => {
            let sent = send_rdb(state, client, wr, line, rdb).await;
            if !sent {
                abandon.store(true, Ordering::Relaxed);
                replication::detach(state, &replica);
                return;
            }
            replication::online(state, &replica);
            replica
        }
        Attach::Busy => unreachable!("retried above"),
    };
    follow(state, client, &replica, input, wr).await;
    replication::detach(state, &replica);
}

/// Write the full resynchronization's `+FULLRESYNC` line (PSYNC), then, once produced, the
/// RDB as a bulk. False if the link closed meanwhile.
async fn send_rdb<W: AsyncWrite + Unpin + Send>(
    state: &ServerState,
    client: &Client,
    wr: &mut W,
    line: Option<Vec<u8>>,
    mut rdb: tokio::sync::oneshot::Receiver<std::io::Result<Vec<u8>>>,
) -> bool {
    if let Some(l) = line {
        if !write(state, client, wr, &l).await {
            return false;
        }
    }
    let file = loop {
        tokio::select! {
            r = &mut rdb => break r,
            // While the file is produced, a newline a second keeps the link alive (the
            // replica ignores them before the payload).
            _ = tokio::time::sleep(Duration::from_secs(1)) => {
                if !write(state, client, wr, b"\n").await {
                    return false;
                }
            }
            _ = client.info.kill.cancelled() => return false,
            _ = state.shutdown.cancelled() => return false,
        }
    };
    let Ok(Ok(file)) = file else {
        crate::log::warning("Replication RDB production failed");
        return false;
    };
    crate::log::notice(&format!(
        "Streamed RDB transfer with replica {} succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming",
        client.info.addr
    ));
    let head = format!("${}\r\n", file.len());
    write(state, client, wr, head.as_bytes()).await && write(state, client, wr, &file).await
}

/// Feed the stream to the replica and read its acknowledgements until the link closes.
async fn follow<I: Requests, W: AsyncWrite + Unpin + Send>(
    state: &ServerState,
    client: &Client,
    replica: &Replica,
    input: &mut I,
    wr: &mut W,
) {
    loop {
        if client.info.kill.is_cancelled() || state.shutdown.is_cancelled() {
            return;
        }
        // What the replica sent with its PSYNC, or since.
        if !read_acks(state, client, replica, input).await {
            return;
        }
        let data = std::mem::take(&mut *replica.pending.lock());
        if !data.is_empty() {
            // Taken out of the replica's buffer, the bytes being written are its client's
            // output buffer until they are: still left out of maxmemory (a replica that stopped
            // reading must not make the master evict keys) and shown in CLIENT LIST's omem.
            let obuf = &client.info.extra.mem.obuf;
            obuf.store(data.capacity(), Ordering::Relaxed);
            let written = write(state, client, wr, &data).await;
            obuf.store(0, Ordering::Relaxed);
            if !written {
                return;
            }
            continue;
        }
        tokio::select! {
            r = input.read_more() => {
                state.stats.reads_processed.fetch_add(1, Ordering::Relaxed);
                match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        state.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
                    }
                }
            }
            _ = replica.wake.notified() => {}
            _ = client.info.kill.cancelled() => return,
            _ = state.shutdown.cancelled() => return,
        }
    }
}

/// Act on the complete requests the replica sent: REPLCONF ACK <offset> records its
/// offset (and may answer WAITs); anything else gets no reply, as Redis sends a replica
/// none. False on a protocol error (the link closes).
async fn read_acks<I: Requests>(
    state: &ServerState,
    client: &Client,
    replica: &Replica,
    input: &mut I,
) -> bool {
    let limits = Limits {
        max_bulk_len: state.client_limits.proto_max_bulk_len(),
        unauthenticated: false,
    };
    loop {
        let args = match input.next_request(&limits) {
            Ok(None) => return true,
            Ok(Some(args)) => args,
            Err(_) => return false,
        };
        let is = |i: usize, w: &str| {
            args.get(i)
                .is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()))
        };
        // CLIENT LIST's cmd of a replica's link: what it sent last (`replconf`).
        if let Ok((cmd, parent)) = state.commands.resolve(&args) {
            client
                .info
                .touch(parent.map(|p| &p.name), &cmd.name, state.clock.recent_ms());
        }
        if !(is(0, "replconf") && is(1, "ack")) {
            continue;
        }
        let Some(offset) = args
            .get(2)
            .and_then(|o| std::str::from_utf8(o).ok())
            .and_then(|o| o.parse::<i64>().ok())
        else {
            continue;
        };
        client
            .info
            .last_active_ms
            .store(state.clock.recent_ms().max(0) as u64, Ordering::Relaxed);
        let acked = || {
            replication::ack(state, replica, offset);
            crate::cmd::runtime::blocking::serve_replica_waits(state);
            // A FAILOVER waits for this acknowledgement.
            replication::failover::update(state);
        };
        if with_lock(state, client, acked).await.is_none() {
            return false;
        }
    }
}

/// Run `f` holding the server lock (waiting for a script or transaction that holds it);
/// None if the link or the server closed meanwhile.
async fn with_lock<T>(state: &ServerState, client: &Client, f: impl FnOnce() -> T) -> Option<T> {
    loop {
        if client.info.kill.is_cancelled() || state.shutdown.is_cancelled() {
            return None;
        }
        if let Some(held) = state.lock.lock_briefly() {
            let r = f();
            drop(held);
            return Some(r);
        }
        tokio::select! {
            _ = state.lock.released() => {}
            _ = client.info.kill.cancelled() => return None,
            _ = state.shutdown.cancelled() => return None,
        }
    }
}

/// Write `bytes` to the replica; false if the link closed (or was closed) first.
async fn write<W: AsyncWrite + Unpin + Send>(
    state: &ServerState,
    client: &Client,
    wr: &mut W,
    bytes: &[u8],
) -> bool {
    state.stats.writes_processed.fetch_add(1, Ordering::Relaxed);
    let ok = tokio::select! {
        biased;
        r = wr.write_all(bytes) => r.is_ok(),
        _ = client.info.kill.cancelled() => false,
        _ = state.shutdown.cancelled() => false,
    };
    if ok {
        state
            .stats
            .net_output_bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    }
    ok
}
