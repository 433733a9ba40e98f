//! One task per client: read what arrived, run every complete request in order, write all
//! replies with one write, and interleave out-of-band pushes (pub/sub) between batches.
//!
//! Pushes: publishers append frames, already encoded, to the client's queue (`Client::push`,
//! which counts the bytes queued and wakes this task only when it was empty). Before each
//! reply the queue is drained into the output, so a frame queued before a reply was produced
//! (a message this client published to itself, subscribe confirmations) is written before it,
//! as in Redis. Frames keep the protocol the client spoke when they were queued (Redis encodes
//! into the client's buffer at publish time), so a HELLO does not re-encode what is already
//! queued. While a script runs the connection does not write queued pushes: Redis delivers
//! what a script publishes when the script ends (or once the script runs past
//! busy-reply-threshold), and since the script blocks every other command anyway, holding the
//! queued frames until then is observably the same. A client closed for its output-buffer
//! limit (`ClientInfo::kill`) stops at once, even in the middle of a write to a peer that does
//! not read.

use crate::cmd::client::{Client, ClientInfo};
use crate::cmd::ServerState;
use crate::cmd::{self};
use crate::outbox::{PushQueue, Taken};
use crate::protocol::{encode, parse_request, ParseState};
use crate::reply::Reply;
use bytes::{Bytes, BytesMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const READ_CHUNK: usize = 16 * 1024;
/// Push frames written per wakeup. Large, so a subscriber that reads catches up with several
/// publishers (each of which serves about one request per wakeup) instead of falling behind
/// into its output-buffer limit; small enough that `out` stays under its 1 MB shrink mark.
const PUSH_BATCH_BYTES: usize = 512 * 1024;

/// Where a client connected from, as CLIENT LIST prints it.
pub struct Peer {
    /// The client's address (`ip:port`, or `path:0` on the unix socket).
    pub addr: String,
    /// The server's address the client connected to.
    pub laddr: String,
    /// Connected over the unix socket (CLIENT LIST's `U` flag).
    pub unix_socket: bool,
}

/// A client's byte stream, split so reads and writes proceed independently (TCP and unix
/// sockets split without a lock).
pub trait Stream: Send + 'static {
    /// The reading half.
    type Read: ReadHalf;
    /// The writing half.
    type Write: AsyncWrite + Unpin + Send;
    /// Split into halves.
    fn split(self) -> (Self::Read, Self::Write);
}

/// A reading half that can wait for readiness without a buffer (blocked clients hold none).
pub trait ReadHalf: AsyncRead + Unpin + Send {
    /// Wait until the socket is readable.
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send;
    /// Read what is there without waiting.
    fn try_read_buf(&self, buf: &mut BytesMut) -> std::io::Result<usize>;
}

impl ReadHalf for tokio::net::tcp::OwnedReadHalf {
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
        tokio::net::tcp::OwnedReadHalf::readable(self)
    }
    fn try_read_buf(&self, buf: &mut BytesMut) -> std::io::Result<usize> {
        tokio::net::tcp::OwnedReadHalf::try_read_buf(self, buf)
    }
}

impl ReadHalf for tokio::net::unix::OwnedReadHalf {
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
        tokio::net::unix::OwnedReadHalf::readable(self)
    }
    fn try_read_buf(&self, buf: &mut BytesMut) -> std::io::Result<usize> {
        tokio::net::unix::OwnedReadHalf::try_read_buf(self, buf)
    }
}

impl Stream for tokio::net::TcpStream {
    type Read = tokio::net::tcp::OwnedReadHalf;
    type Write = tokio::net::tcp::OwnedWriteHalf;
    fn split(self) -> (Self::Read, Self::Write) {
        self.into_split()
    }
}

impl Stream for tokio::net::UnixStream {
    type Read = tokio::net::unix::OwnedReadHalf;
    type Write = tokio::net::unix::OwnedWriteHalf;
    fn split(self) -> (Self::Read, Self::Write) {
        self.into_split()
    }
}

/// Serve one client until it disconnects, is killed or the server stops.
pub async fn serve<S: Stream>(state: Arc<ServerState>, stream: S, peer: Peer) {
    let id = state.next_client_id();
    let mut client = cmd::client::connect(&state, id, peer.addr, peer.laddr);
    client.info.set_unix_socket(peer.unix_socket);
    let info = client.info.clone();
    let push = client.push.clone();
    let mut taken = Taken::default();
    let (mut rd, mut wr) = stream.split();
    let mut inbuf = BytesMut::with_capacity(READ_CHUNK);
    let mut out = BytesMut::with_capacity(READ_CHUNK);
    let mut parse_state = ParseState::default();
    loop {
        // A blocked client (BLPOP...) runs no request until it is served, unblocked or times
        // out, but its socket is still read so a disconnect is seen at once. It may wait for
        // hours, so it keeps no buffers meanwhile: it waits for readiness, not into a buffer.
        let blocked = client.is_blocked();
        let deadline = client.block_deadline;
        if blocked {
            if inbuf.is_empty() && inbuf.capacity() > 0 {
                inbuf = BytesMut::new();
            }
            if out.is_empty() && out.capacity() > 0 {
                out = BytesMut::new();
            }
        } else if inbuf.capacity() - inbuf.len() < READ_CHUNK / 4 {
            inbuf.reserve(READ_CHUNK);
        }
        tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = info.kill.cancelled() => break,
            r = read_some(&mut rd, &mut inbuf, blocked) => {
                match r {
                    Ok(0) | Err(_) => break,
                    Ok(n) => { state.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed); }
                }
                // A blocked client's later requests stay buffered until it is served.
                if !client.is_blocked() {
                    process_input(&state, &mut client, &mut taken, &mut inbuf, &mut parse_state, &mut out).await;
                }
            }
            _ = push.notified() => {
                // A served or unblocked client's reply arrives here, like a pushed message.
                if !take_pushes(&state, &info, &push, &mut taken, &mut out).await {
                    break;
                }
                if blocked && !client.is_blocked() {
                    process_input(&state, &mut client, &mut taken, &mut inbuf, &mut parse_state, &mut out).await;
                }
            }
            // Redis times a client out once its deadline is strictly in the past.
            _ = state.clock.sleep_until(deadline.saturating_add(1)), if blocked && deadline > 0 => {
                if let Some(reply) = cmd::blocking::timed_out(&state, &mut client).await {
                    client.push.take(usize::MAX, &mut taken);
                    taken.write_to(&mut out);
                    encode(&reply, client.resp, &mut out);
                }
                if !client.is_blocked() {
                    process_input(&state, &mut client, &mut taken, &mut inbuf, &mut parse_state, &mut out).await;
                }
            }
        }
        if !out.is_empty() {
            state
                .stats
                .net_output_bytes
                .fetch_add(out.len() as u64, Ordering::Relaxed);
            // A peer that stops reading must not pin this task: CLIENT KILL, the pubsub
            // output-buffer limit and shutdown interrupt the write (written first if it can).
            let written = tokio::select! {
                biased;
                r = wr.write_all(&out) => r.is_ok(),
                _ = info.kill.cancelled() => false,
                _ = state.shutdown.cancelled() => false,
            };
            if !written {
                break;
            }
            out.clear();
            if out.capacity() > 1024 * 1024 {
                out = BytesMut::with_capacity(READ_CHUNK);
            }
        }
        if client.close_after_reply {
            break;
        }
        if inbuf.is_empty() && inbuf.capacity() > 1024 * 1024 {
            // Give back the memory of a large request once it has been served.
            inbuf = BytesMut::with_capacity(READ_CHUNK);
        }
    }
    // Forget the client (its subscriptions included) before the peer can see the close, as
    // Redis frees a client before its socket: whoever saw the close then sees it gone.
    cmd::client::disconnect(&state, &client);
    let _ = wr.shutdown().await;
}

/// Read what arrived into `inbuf`. A blocked client waits for readiness first and only then
/// gives itself a buffer, so thousands of clients waiting in BLPOP hold no read buffers.
async fn read_some<R: ReadHalf>(
    rd: &mut R,
    inbuf: &mut BytesMut,
    blocked: bool,
) -> std::io::Result<usize> {
    if !blocked {
        return rd.read_buf(inbuf).await;
    }
    loop {
        rd.readable().await?;
        if inbuf.capacity() - inbuf.len() < READ_CHUNK / 4 {
            inbuf.reserve(READ_CHUNK);
        }
        match rd.try_read_buf(inbuf) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            r => return r,
        }
    }
}

/// Move queued pushes to `out`, unless a script is running: Redis writes what a script
/// published when it ends, or, once it runs past busy-reply-threshold, from the event
/// processing it does meanwhile (see [`cmd::exec::when_no_script`]). False if the connection
/// must close meanwhile.
async fn take_pushes(
    state: &ServerState,
    info: &ClientInfo,
    push: &PushQueue,
    taken: &mut Taken,
    out: &mut BytesMut,
) -> bool {
    let stop = async {
        tokio::select! {
            _ = state.shutdown.cancelled() => {}
            _ = info.kill.cancelled() => {}
        }
    };
    let taken_now = cmd::exec::when_no_script(state, stop, || {
        // Frames left over wake this task again at once.
        push.take(PUSH_BATCH_BYTES.saturating_sub(out.len()), taken);
        taken.write_to(out);
    })
    .await
    .is_some();
    // A client closed (output-buffer limit, CLIENT KILL) while this task waited for a script
    // must not write what was queued meanwhile.
    taken_now && !info.kill.is_cancelled() && !state.shutdown.is_cancelled()
}

/// Run every complete request in `inbuf`, appending the replies to `out` (after any push
/// frames queued before each reply was produced).
async fn process_input(
    state: &Arc<ServerState>,
    client: &mut Client,
    taken: &mut Taken,
    inbuf: &mut BytesMut,
    parse_state: &mut ParseState,
    out: &mut BytesMut,
) {
    while !client.close_after_reply && !client.is_blocked() {
        let buffered = inbuf.len();
        match parse_request(inbuf, parse_state) {
            Ok(None) => break,
            Ok(Some(args)) if args.is_empty() => continue,
            Ok(Some(args)) => {
                cmd::client_state::request_started(client, buffered);
                let reply = cmd::exec::execute(state, client, args).await;
                // What is queued now, taken at once: a stream of messages cannot hold the
                // reply back.
                client.push.take(usize::MAX, taken);
                taken.write_to(out);
                if cmd::client_state::reply_goes_out(state, client, &reply) {
                    encode(&reply, client.resp, out);
                }
                cmd::client_state::write_after_reply(client, out);
            }
            Err(e) => {
                let msg = format!("ERR Protocol error: {}", e.0);
                encode(&Reply::Error(Bytes::from(msg)), client.resp, out);
                client.close_after_reply = true;
                inbuf.clear();
            }
        }
    }
}
