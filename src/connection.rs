//! A client's connection: read what arrived, run every complete request in order, let the
//! other ready clients run theirs ([`yield_before_write`]), write all replies with one write
//! (vectored when large values wait beside the buffer, see [`Output`]), and interleave
//! out-of-band pushes (pub/sub) between batches. A plain TCP client starts in its worker's
//! event loop (`event_loop`), which serves it without a task of its own; TLS and unix-socket
//! clients, and a TCP client once it needs to wait for something, are served by a task
//! ([`serve`], `serve_conn`), as below.
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

mod event_loop;
mod input;
mod pool;
mod replica;

pub(crate) use event_loop::Loops;

use crate::cmd::runtime::client::{Client, ClientInfo};
use crate::cmd::runtime::client_limits::SoftLimitClock;
use crate::cmd::ServerState;
use crate::cmd::{self};
use crate::outbox::{PushQueue, Taken};
use crate::protocol::{encode, Limits, Output, MAX_SLICES};
use crate::reply::Reply;
use bytes::Bytes;
use futures_util::FutureExt;
use input::Input;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
/// Push frames written per wakeup. Large, so a subscriber that reads catches up with several
/// publishers (each of which serves about one request per wakeup) instead of falling behind
/// into its output-buffer limit; small enough that `out` stays under its 1 MB shrink mark.
const PUSH_BATCH_BYTES: usize = 512 * 1024;

/// Connections being served in this process, for [`yield_before_write`]'s choice. A hint
/// only: servers embedded side by side in one process share it.
static SERVING: AtomicUsize = AtomicUsize::new(0);

/// Connections being served by a task of their own (not by an event loop), for the loops'
/// choice to let them run first (see `event_loop`). A hint, as [`SERVING`].
static IN_TASKS: AtomicUsize = AtomicUsize::new(0);

/// Counts a connection in one of the counters above ([`SERVING`], [`IN_TASKS`]) for as long
/// as it lives.
struct Counted(&'static AtomicUsize);

impl Counted {
    fn start(counter: &'static AtomicUsize) -> Counted {
        counter.fetch_add(1, Ordering::Relaxed);
        Counted(counter)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Before writing its replies, a connection lets every other connection the worker found
/// ready run first, as Redis writes all replies in `beforeSleep` after reading every ready
/// client. A send into loopback wakes the reader when it sleeps in epoll: written one by one
/// between reads, nearly every send paid that wakeup (an inter-processor interrupt, costly in
/// a VM: the kernel's time per request was twice Redis's with 16 requests in flight); written
/// together, the first send wakes the reader and the rest find it awake. Tokio runs a yielded
/// task again only after polling the I/O driver, so the others' reads come first. A lone
/// connection would only pay the extra poll, so it writes at once.
async fn yield_before_write() {
    if SERVING.load(Ordering::Relaxed) > 1 {
        tokio::task::yield_now().await;
    }
}

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
    /// Whether a blocked client can wait for readiness without a buffer (plain sockets); a TLS
    /// stream cannot (its records must be decrypted), so it reads into its buffer instead.
    fn waits_for_readiness(&self) -> bool {
        true
    }
    /// Wait until the socket is readable.
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send;
    /// The socket's descriptor, which the Lua debugger reads and writes itself during a
    /// session; None where bytes need more than the socket (TLS).
    fn raw_fd(&self) -> Option<i32> {
        None
    }
}

impl ReadHalf for tokio::net::tcp::OwnedReadHalf {
    fn raw_fd(&self) -> Option<i32> {
        Some(std::os::fd::AsRawFd::as_raw_fd(AsRef::<
            tokio::net::TcpStream,
        >::as_ref(self)))
    }
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
        tokio::net::tcp::OwnedReadHalf::readable(self)
    }
}

impl ReadHalf for tokio::net::unix::OwnedReadHalf {
    fn raw_fd(&self) -> Option<i32> {
        Some(std::os::fd::AsRawFd::as_raw_fd(AsRef::<
            tokio::net::UnixStream,
        >::as_ref(self)))
    }
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
        tokio::net::unix::OwnedReadHalf::readable(self)
    }
}

/// The reading half of a TLS stream: no readiness wait (see [`ReadHalf::waits_for_readiness`]).
impl ReadHalf for tokio::io::ReadHalf<tokio_rustls::server::TlsStream<tokio::net::TcpStream>> {
    fn waits_for_readiness(&self) -> bool {
        false
    }
    fn readable(&self) -> impl std::future::Future<Output = std::io::Result<()>> + Send {
        std::future::ready(Ok(()))
    }
}

impl Stream for tokio_rustls::server::TlsStream<tokio::net::TcpStream> {
    type Read = tokio::io::ReadHalf<Self>;
    type Write = tokio::io::WriteHalf<Self>;
    fn split(self) -> (Self::Read, Self::Write) {
        tokio::io::split(self)
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

/// A client's state apart from its socket: what moves from the event loop to a task
/// (`event_loop`), and what [`serve`] starts with.
pub(crate) struct Conn {
    client: Client,
    input: Input,
    /// Lent by the pool while there are replies to write (see `pool`).
    out: Output,
    taken: Taken,
    soft_clock: SoftLimitClock,
    /// Whether the client was already forgotten (see `serve_conn`).
    gone: bool,
    _serving: Counted,
}

impl Conn {
    /// A new client, registered with the server.
    fn connect(state: &ServerState, peer: Peer) -> Conn {
        let _serving = Counted::start(&SERVING);
        let id = state.next_client_id();
        let client = cmd::runtime::clients::connect(state, id, peer.addr, peer.laddr);
        client.info.set_unix_socket(peer.unix_socket);
        Conn {
            client,
            input: Input::new(),
            out: Output::new(),
            taken: Taken::default(),
            soft_clock: SoftLimitClock::default(),
            gone: false,
            _serving,
        }
    }
}

/// Serve one client until it disconnects, is killed or the server stops.
pub async fn serve<S: Stream>(state: Arc<ServerState>, stream: S, peer: Peer) {
    let mut conn = Conn::connect(&state, peer);
    let (rd, wr) = stream.split();
    conn.client.socket_fd = rd.raw_fd();
    serve_conn(state, conn, rd, wr, None, false).await;
}

/// Serve a client from where it stands: `pending`, a request the event loop could not run
/// at once, runs first; `resumed` (a client coming from the event loop) writes what is in
/// `out` before it waits for anything.
async fn serve_conn<R: ReadHalf, W: AsyncWrite + Unpin + Send>(
    state: Arc<ServerState>,
    conn: Conn,
    mut rd: R,
    mut wr: W,
    pending: Option<Vec<Bytes>>,
    resumed: bool,
) {
    let Conn {
        mut client,
        mut input,
        mut out,
        mut taken,
        mut soft_clock,
        mut gone,
        _serving,
    } = conn;
    let _in_task = Counted::start(&IN_TASKS);
    let info = client.info.clone();
    let push = client.push.clone();
    let mut skip_wait = resumed;
    if pending.is_some() {
        lend(&mut out);
        process_input(
            &state,
            &mut client,
            &mut taken,
            &mut input,
            &mut out,
            &mut soft_clock,
            pending,
        )
        .await;
    }
    loop {
        // A blocked client (BLPOP...) runs no request until it is served, unblocked or times
        // out, but its socket is still read so a disconnect is seen at once. It may wait for
        // hours, so it keeps no buffers meanwhile: it waits for readiness, not into a buffer.
        let blocked = client.is_blocked();
        let deadline = client.block_deadline;
        if info.kill.is_cancelled() || state.shutdown.is_cancelled() {
            break;
        }
        if !std::mem::take(&mut skip_wait) {
            tokio::select! {
                r = input.read_from(&mut rd) => {
                    state.stats.reads_processed.fetch_add(1, Ordering::Relaxed);
                    match r {
                        Ok(0) | Err(_) => break,
                        Ok(n) => { state.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed); }
                    }
                    // Redis's lastinteraction = server.unixtime: the time last read is near enough.
                    info.last_active_ms.store(state.clock.recent_ms().max(0) as u64, Ordering::Relaxed);
                    if !input_arrived(&state, &info, &input) {
                        break;
                    }
                    // A blocked client's later requests stay buffered until it is served.
                    if !client.is_blocked() {
                        lend(&mut out);
                        process_input(&state, &mut client, &mut taken, &mut input, &mut out, &mut soft_clock, None).await;
                    }
                }
                // One doorbell for pushes, CLIENT KILL and shutdown (see `crate::wake`).
                _ = push.notified() => {
                    if info.kill.is_cancelled() || state.shutdown.is_cancelled() {
                        break;
                    }
                    // A served or unblocked client's reply arrives here, like a pushed message.
                    lend(&mut out);
                    if !take_pushes(&state, &info, &push, &mut taken, &mut out).await {
                        break;
                    }
                    if blocked && !client.is_blocked() {
                        if info.extra.close_after_unblock.swap(false, Ordering::Acquire) {
                            // -UNBLOCKED of a master turned replica: written, then closed.
                            client.close_after_reply = true;
                        } else {
                            process_input(&state, &mut client, &mut taken, &mut input, &mut out, &mut soft_clock, None).await;
                        }
                    }
                }
                // Redis times a client out once its deadline is strictly in the past.
                _ = state.clock.sleep_until(deadline.saturating_add(1)), if blocked && deadline > 0 => {
                    lend(&mut out);
                    if let Some(reply) = cmd::runtime::blocking::timed_out(&state, &mut client).await {
                        client.push.take(usize::MAX, &mut taken);
                        taken.write_to(out.tail());
                        encode(&reply, client.resp, &mut out);
                    }
                    if !client.is_blocked() {
                        process_input(&state, &mut client, &mut taken, &mut input, &mut out, &mut soft_clock, None).await;
                    }
                }
            }
        }
        if info.kill.is_cancelled() {
            // Closed for its output-buffer limit (or killed) while its replies were made:
            // Redis discards what was pending.
            break;
        }
        if client.close_after_reply && !gone {
            // Redis frees a closing client (QUIT, a protocol error) in the event-loop pass
            // that writes its last reply, before it reads anyone's next request: whoever saw
            // that reply finds the client gone (CLIENT KILL of it: No such client).
            cmd::runtime::clients::disconnect(&state, &client);
            gone = true;
        }
        if !out.is_empty() {
            yield_before_write().await;
            // The append-only log holds every write a reply here may acknowledge.
            cmd::runtime::persist::before_reply(&state).await;
            // Nearly every batch of replies fits the socket's buffer: one write, tried
            // without building the futures below (each registers with a token's lock).
            state.stats.writes_processed.fetch_add(1, Ordering::Relaxed);
            match write_out(&mut wr, &out).now_or_never() {
                Some(Ok(n)) => wrote(&state, &mut out, n),
                Some(Err(_)) => break,
                None => {}
            }
            // A peer that does not read its replies yet: keep reading and serving its
            // requests meanwhile, the replies waiting in `out` (Redis's reply list, counted
            // as the client's output buffer and against maxmemory-clients), while CLIENT
            // KILL, the output-buffer limits and shutdown interrupt the write.
            let mut ok = true;
            while ok && !out.is_empty() {
                info.extra.mem.obuf.store(out.len(), Ordering::Relaxed);
                client.push.set_unwritten(out.len());
                if cmd::runtime::clients::account_and_evict(&state, &info) {
                    break;
                }
                let reading =
                    !client.is_blocked() && !client.close_after_reply && !client.syncing();
                tokio::select! {
                    biased;
                    _ = info.kill.cancelled() => ok = false,
                    _ = state.shutdown.cancelled() => ok = false,
                    r = write_out(&mut wr, &out) => {
                        state.stats.writes_processed.fetch_add(1, Ordering::Relaxed);
                        match r {
                            Ok(n) if n > 0 => wrote(&state, &mut out, n),
                            _ => ok = false,
                        }
                    },
                    r = input.read_from(&mut rd), if reading => {
                        state.stats.reads_processed.fetch_add(1, Ordering::Relaxed);
                        match r {
                            Ok(n) if n > 0 => {
                                state.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
                                info.last_active_ms.store(state.clock.recent_ms().max(0) as u64, Ordering::Relaxed);
                                ok = input_arrived(&state, &info, &input);
                                if ok {
                                    process_input(&state, &mut client, &mut taken, &mut input, &mut out, &mut soft_clock, None).await;
                                    cmd::runtime::persist::before_reply(&state).await;
                                }
                            }
                            _ => ok = false,
                        }
                    }
                }
            }
            info.extra.mem.obuf.store(0, Ordering::Relaxed);
            client.push.set_unwritten(0);
            if !ok || info.kill.is_cancelled() {
                break;
            }
            free_big_output(&mut out);
        }
        // Everything written: the buffers go back to the pool until bytes move again, so an
        // idle or blocked client holds none.
        pool::give(out.tail());
        if client.close_after_reply {
            break;
        }
        if client.syncing() {
            // SYNC or PSYNC: from now on this connection is a replica's link.
            let mut requests = ReplicaInput {
                input: &mut input,
                rd: &mut rd,
            };
            replica::serve(&state, &mut client, &mut requests, &mut wr).await;
            break;
        }
        input.shrink_if_idle();
        account_idle(&state, &info, &input);
    }
    // Forget the client (its subscriptions included) before the peer can see the close, as
    // Redis frees a client before its socket: whoever saw the close then sees it gone.
    if !gone {
        cmd::runtime::clients::disconnect(&state, &client);
    }
    let _ = wr.shutdown().await;
}

/// Everything was written: what the query buffer holds now, for CLIENT LIST and
/// maxmemory-clients.
fn account_idle(state: &ServerState, info: &ClientInfo, input: &Input) {
    let mem = &info.extra.mem;
    info.extra
        .qbuf
        .store(input.pending_bytes(), Ordering::Relaxed);
    if mem.qbuf_alloc.swap(input.allocated(), Ordering::Relaxed) != input.allocated() {
        cmd::runtime::client_mem::account(state, info);
    }
}

/// Everything was written: a big reply's buffer is freed (never pooled) and its pages go back.
fn free_big_output(out: &mut Output) {
    if out.capacity() > 1024 * 1024 {
        *out = Output::new();
        input::release_freed_memory();
    }
}

/// `n` bytes of `out` reached the socket.
fn wrote(state: &ServerState, out: &mut Output, n: usize) {
    state
        .stats
        .net_output_bytes
        .fetch_add(n as u64, Ordering::Relaxed);
    out.advance(n);
}

/// Write what `out` holds: one write of the buffer, or, when large values wait beside it,
/// one vectored write of all the slices (a stream that cannot vector, TLS, writes the first).
async fn write_out<W: AsyncWrite + Unpin>(wr: &mut W, out: &Output) -> std::io::Result<usize> {
    if let Some(buf) = out.contiguous() {
        return wr.write(buf).await;
    }
    let mut slices = [std::io::IoSlice::new(&[]); MAX_SLICES];
    let n = out.slices(&mut slices);
    wr.write_vectored(&slices[..n]).await
}

/// Bytes were read into the query buffer: enforce client-query-buffer-limit and
/// maxmemory-clients. False when the client must close.
fn input_arrived(state: &ServerState, info: &ClientInfo, input: &Input) -> bool {
    if state.client_limits.query_buffer_over(input.pending_bytes()) {
        // Redis closes the client rather than grow the server, without a reply.
        crate::log::warning(&format!(
            "Closing client that reached max query buffer length: id={}",
            info.id
        ));
        return false;
    }
    let mem = &info.extra.mem;
    info.extra
        .qbuf
        .store(input.pending_bytes(), Ordering::Relaxed);
    mem.qbuf_alloc.store(input.allocated(), Ordering::Relaxed);
    mem.argv_len.store(input.held_bytes(), Ordering::Relaxed);
    !cmd::runtime::clients::account_and_evict(state, info)
}

/// A replica's requests (its REPLCONF ACKs): the query buffer over the socket's reading half.
struct ReplicaInput<'a, R> {
    input: &'a mut Input,
    rd: &'a mut R,
}

impl<R: ReadHalf> replica::Requests for ReplicaInput<'_, R> {
    fn read_more(&mut self) -> impl std::future::Future<Output = std::io::Result<usize>> + Send {
        self.input.read_from(self.rd)
    }
    fn next_request(&mut self, limits: &Limits) -> Result<Option<Vec<Bytes>>, ()> {
        self.input.next_request(limits).map_err(|_| ())
    }
}

/// Make sure `out` has a buffer before replies are written to it.
fn lend(out: &mut Output) {
    if out.capacity() == 0 {
        *out.tail() = pool::take();
    }
}

/// Move queued pushes to `out`, unless a script is running: Redis writes what a script published
/// when it ends, or, once it runs past busy-reply-threshold, from the event processing it does
/// meanwhile (see [`cmd::runtime::lock::when_no_script`]). False if the connection must close
/// meanwhile.
async fn take_pushes(
    state: &ServerState,
    info: &ClientInfo,
    push: &PushQueue,
    taken: &mut Taken,
    out: &mut Output,
) -> bool {
    let stop = async {
        tokio::select! {
            _ = state.shutdown.cancelled() => {}
            _ = info.kill.cancelled() => {}
        }
    };
    let taken_now = cmd::runtime::lock::when_no_script(state, stop, || {
        // Frames left over wake this task again at once.
        push.take(PUSH_BATCH_BYTES.saturating_sub(out.len()), taken);
        taken.write_to(out.tail());
    })
    .await
    .is_some();
    // A client closed (output-buffer limit, CLIENT KILL) while this task waited for a script
    // must not write what was queued meanwhile.
    taken_now && !info.kill.is_cancelled() && !state.shutdown.is_cancelled()
}

/// Requests a connection looks ahead over at once to prefetch their keys.
const PREFETCH_BATCH: usize = 16;

/// Start loading what the lookups of the keys of the pipelined requests about to run will
/// read, for the current request (`current`, already parsed) and up to
/// [`PREFETCH_BATCH`] - 1 that follow it in `input`. Returns how many requests that covered,
/// which then run without looking again. Redis 8 prefetches a batch's keys the same way: a
/// lookup is a chain of dependent cache misses (the index line, the slot, the value), and
/// taking each link for all the batch's keys before the next lets the batch's misses overlap
/// instead of each request stalling on its own in turn. A lone request prefetches nothing
/// (its lookup takes the same misses itself).
///
/// The key is the first argument of a command whose first key it is, or an
/// EVAL/EVALSHA/FCALL's first key; other commands (PUBLISH, PING) prefetch nothing, since a
/// lookup of a word that is no key would cost a miss for nothing. `last` keeps the command
/// found the time before, as a pipeline mostly repeats one command.
fn prefetch_batch(
    state: &ServerState,
    client: &Client,
    current: &[Bytes],
    input: &mut Input,
    last: &mut Option<&'static cmd::runtime::table::Command>,
) -> usize {
    // Nothing buffered behind this request (a client that waits for each reply): no lookup
    // to overlap, so none of the work below (a command lookup and a key hash per request).
    if input.pending_bytes() == 0 {
        return 1;
    }
    let mut first: [&[u8]; 4] = [&[]; 4];
    for (slot, a) in first.iter_mut().zip(current) {
        *slot = &a[..];
    }
    // A request without a key (a pipeline of PUBLISH) looks no further.
    let Some(key) = key_to_prefetch(state, &first[..current.len().min(4)], last) else {
        return 1;
    };
    let db = state.keyspace.db(client.db);
    let mut hashes = [0u64; PREFETCH_BATCH];
    hashes[0] = db.hash_key(key);
    let mut keys = 1;
    let ahead = input.peek_requests::<4>(PREFETCH_BATCH - 1, |args| {
        if let Some(key) = key_to_prefetch(state, args, last) {
            hashes[keys] = db.hash_key(key);
            keys += 1;
        }
    });
    if ahead > 0 {
        db.prefetch_many(&hashes[..keys]);
    }
    1 + ahead
}

/// The key of a request (its first arguments) worth prefetching, if any (see
/// [`prefetch_batch`]).
fn key_to_prefetch<'a>(
    state: &ServerState,
    args: &[&'a [u8]],
    last: &mut Option<&'static cmd::runtime::table::Command>,
) -> Option<&'a [u8]> {
    if args.len() < 2 {
        return None;
    }
    let cmd = match *last {
        Some(c) if c.name.as_bytes().eq_ignore_ascii_case(args[0]) => c,
        _ => {
            let c = state.commands.lookup(args[0])?;
            *last = Some(c);
            c
        }
    };
    match cmd.runs {
        cmd::runtime::table::Runs::Script(_) if args.len() == 4 && args[2] != b"0" => Some(args[3]),
        cmd::runtime::table::Runs::Handler(_) if cmd.first_key == 1 => Some(args[1]),
        _ => None,
    }
}

/// Run every complete request in `input`, appending the replies to `out` (after any push
/// frames queued before each reply was produced). A client whose pending replies pass the
/// normal class's client-output-buffer-limit is closed (its `kill` token cancelled).
/// Requests that can run at once run in [`run_at_once`]; one that may wait goes through
/// `execute` here, where this task may yield.
async fn process_input(
    state: &Arc<ServerState>,
    client: &mut Client,
    taken: &mut Taken,
    input: &mut Input,
    out: &mut Output,
    soft_clock: &mut SoftLimitClock,
    first: Option<Vec<Bytes>>,
) {
    let mut ahead = LookAhead::default();
    let mut first = first;
    while let Some(mut args) = first.take().or_else(|| {
        run_at_once(
            state, client, taken, input, out, soft_clock, &mut ahead, false,
        )
    }) {
        let reply = cmd::dispatch::execute::execute(state, client, &mut args).await;
        finish_request(state, client, taken, input, out, soft_clock, args, reply);
    }
    // The batch is over: the next request reads the clock afresh.
    client.recent_us = 0;
}

/// What [`prefetch_batch`] knows across the requests of one batch.
#[derive(Default)]
struct LookAhead {
    last_cmd: Option<&'static cmd::runtime::table::Command>,
    /// Requests left that the last look ahead covered.
    prefetched: usize,
}

/// Parse and run the complete requests in `input` for as long as each can run at once
/// (`execute_now`), keeping the server lock from one to the next (see `Batch`). Returns the
/// first request that must go through `execute` (the lock released), or None when there is
/// nothing more to run now. `patient`: wait for a short holder of the lock (`Batch::patient`).
#[allow(clippy::too_many_arguments)]
fn run_at_once(
    state: &Arc<ServerState>,
    client: &mut Client,
    taken: &mut Taken,
    input: &mut Input,
    out: &mut Output,
    soft_clock: &mut SoftLimitClock,
    ahead: &mut LookAhead,
    patient: bool,
) -> Option<Vec<Bytes>> {
    let mut batch = if patient {
        cmd::dispatch::execute::Batch::patient()
    } else {
        cmd::dispatch::execute::Batch::default()
    };
    while !client.close_after_reply
        && !client.is_blocked()
        && !client.info.kill.is_cancelled()
        && !client.syncing()
    {
        let limits = Limits {
            max_bulk_len: state.client_limits.proto_max_bulk_len(),
            unauthenticated: !client.authenticated,
        };
        let buffered = input.pending_bytes();
        match input.next_request(&limits) {
            Ok(None) => break,
            Ok(Some(args)) if args.is_empty() => continue,
            Ok(Some(args)) => {
                cmd::runtime::clients::request_started(client, buffered);
                let mem = &client.info.extra.mem;
                mem.argv_len
                    .store(args.iter().map(|a| a.len()).sum(), Ordering::Relaxed);
                mem.argc.store(args.len(), Ordering::Relaxed);
                mem.obuf.store(out.len(), Ordering::Relaxed);
                if cmd::runtime::clients::account_and_evict(state, &client.info) {
                    // Evicted for maxmemory-clients before its command ran (processCommand).
                    break;
                }
                if ahead.prefetched == 0 {
                    ahead.prefetched =
                        prefetch_batch(state, client, &args, input, &mut ahead.last_cmd);
                }
                ahead.prefetched -= 1;
                match cmd::dispatch::execute::execute_now(state, client, &args, &mut batch) {
                    Some(reply) => {
                        finish_request(state, client, taken, input, out, soft_clock, args, reply)
                    }
                    None => return Some(args),
                }
            }
            Err(e) => {
                let mut msg = b"ERR Protocol error: ".to_vec();
                msg.extend_from_slice(&e.0);
                encode(&Reply::Error(Bytes::from(msg)), client.resp, out);
                client.close_after_reply = true;
                input.clear();
            }
        }
    }
    None
}

/// After a request ran: its argument vector back to the parser, the pushes queued meanwhile
/// and its reply into `out`, and the client's output-buffer limit and memory accounted.
#[allow(clippy::too_many_arguments)]
fn finish_request(
    state: &ServerState,
    client: &mut Client,
    taken: &mut Taken,
    input: &mut Input,
    out: &mut Output,
    soft_clock: &mut SoftLimitClock,
    args: Vec<Bytes>,
    reply: Reply,
) {
    // The vector goes back to the parser for the next request (no allocation).
    input.recycle(args);
    // What is queued now, taken at once: a stream of messages cannot hold the
    // reply back.
    client.push.take(usize::MAX, taken);
    taken.write_to(out.tail());
    if cmd::runtime::clients::reply_goes_out(state, client, &reply) {
        // A large value is not copied: `out` holds it until it is written.
        encode(&reply, client.resp, out);
    }
    drop(reply);
    cmd::runtime::clients::write_after_reply(client, out.tail());
    let mem = &client.info.extra.mem;
    mem.argv_len.store(0, Ordering::Relaxed);
    mem.argc.store(0, Ordering::Relaxed);
    if client.multi.is_none() && mem.multi_cmds.load(Ordering::Relaxed) != 0 {
        mem.multi_cmds.store(0, Ordering::Relaxed);
        mem.multi_argv.store(0, Ordering::Relaxed);
    }
    if client.subscription_count() == 0
        && state
            .client_limits
            .normal_output_over(out.len(), soft_clock, || state.clock.now_ms())
    {
        crate::log::warning(&format!(
            "Client id={} scheduled to be closed ASAP for overcoming of output buffer limits.",
            client.id
        ));
        client.info.kill.cancel();
    } else {
        // The output-buffer limit goes first: a client it closes is not evicted.
        client
            .info
            .extra
            .mem
            .obuf
            .store(out.len(), Ordering::Relaxed);
        cmd::runtime::clients::account_and_evict(state, &client.info);
    }
}
