//! The event loop: plain TCP clients served the way redis-server serves every client, without
//! a task, waker or readiness future of their own. There is one loop per worker thread, each
//! a task over an epoll set of its own, which is registered with tokio's reactor as one
//! descriptor: when any of its clients has sent something, one pass reads every ready client
//! and runs what it sent (`run_at_once`, the batched path a task runs too), then writes every
//! reply, then waits again. A task per client cost about 0.9 µs of user time per request with
//! one request in flight (ARCHITECTURE.md, "What the task per connection costs"); a pass
//! costs one task poll for all the clients it serves.
//!
//! A client moves to a task of its own (`serve_conn`), for good, as soon as it needs what
//! only a task has: a request `execute_now` cannot run at once (a blocking command, a
//! transaction, a pause, a long holder of the server lock, a debugging session), a blocked
//! state, a big argument being read, replies the socket did not take at once (a slow reader),
//! an fsync to wait for (`appendfsync always`), a push (pub/sub, tracking, MONITOR: any ring
//! of its doorbell but a kill), SYNC/PSYNC. While a script one of its clients runs takes
//! long, the loop's other clients move to tasks too (the hook `handoff::set_on_long` runs),
//! so they get BUSY and can send SCRIPT KILL as from a task; new clients go to tasks until
//! the pass ends. While some clients are served by tasks, a loop yields once before each pass,
//! so that tasks tokio woke in the same turn (most likely with requests that arrived first)
//! run before it. Off by default for now: `RESPLOCK_EVENT_LOOP=1` turns the loops on (see
//! `Loops::start` for why).

use super::{Conn, LookAhead, Peer};
use crate::cmd::{self, ServerState};
use crate::protocol::{Output, MAX_SLICES};
use crate::wake::Doorbell;
use bytes::Bytes;
use parking_lot::{Mutex, ReentrantMutex};
use std::cell::RefCell;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};
use tokio::io::unix::AsyncFd;
use tokio_util::task::TaskTracker;

/// Ready clients taken from the epoll set per pass; more wait for the next pass.
const MAX_EVENTS: usize = 256;

/// A server's event loops, one per worker thread.
pub(crate) struct Loops {
    loops: Vec<Arc<Loop>>,
    next: AtomicUsize,
}

impl Loops {
    /// Start one loop per worker of the current runtime, tracked by `tracker` (shutdown waits
    /// for them), when `RESPLOCK_EVENT_LOOP=1` asks for them (off by default: a lock scenario
    /// with three instances in one process, pottery's Redlock, failed in 1 of 5 runs with the
    /// loops and in none of 6 without; not yet understood); None otherwise or when the system
    /// refuses an epoll set.
    pub(crate) fn start(state: &Arc<ServerState>, tracker: &TaskTracker) -> Option<Arc<Loops>> {
        if !std::env::var("RESPLOCK_EVENT_LOOP").is_ok_and(|v| v == "1" || v == "yes") {
            return None;
        }
        let workers = tokio::runtime::Handle::current().metrics().num_workers();
        let mut loops = Vec::with_capacity(workers.max(1));
        for _ in 0..workers.max(1) {
            let lp = Arc::new(Loop::new(tracker.clone()).ok()?);
            loops.push(lp);
        }
        for lp in &loops {
            tracker.spawn(lp.clone().run(state.clone()));
        }
        Some(Arc::new(Loops {
            loops,
            next: AtomicUsize::new(0),
        }))
    }

    /// Serve a newly accepted client on one of the loops, round robin. `Err` gives it back
    /// when every loop is busy with a long script: it is then served by a task (and gets BUSY).
    pub(crate) fn serve(
        &self,
        state: &Arc<ServerState>,
        stream: tokio::net::TcpStream,
        peer: Peer,
    ) -> Result<(), (tokio::net::TcpStream, Peer)> {
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.loops.len();
        let Some(lp) = (0..n)
            .map(|i| &self.loops[(first + i) % n])
            .find(|lp| !lp.busy.load(Ordering::Acquire))
        else {
            return Err((stream, peer));
        };
        // Out of tokio's reactor and into the loop's epoll set.
        if let Ok(sock) = stream.into_std() {
            lp.add(state, sock, peer);
        }
        Ok(())
    }
}

/// One event loop: its epoll set and the clients in it.
struct Loop {
    epoll: AsyncFd<OwnedFd>,
    /// Touched by the loop's own thread only: the loop holds the lock for a whole pass (one
    /// lock per pass, not per client), and the long-script hook, which runs on that thread
    /// inside the pass, takes it again (see [`Loop::rescue`]).
    slots: ReentrantMutex<RefCell<Slots>>,
    /// New clients, registered by the loop at its next turn.
    incoming: Mutex<Vec<(Conn, std::net::TcpStream)>>,
    /// Clients whose doorbell rang (see [`Ring`]), for the loop to look at.
    rings: Mutex<Vec<u64>>,
    /// Rung with `rings`.
    bell: Doorbell,
    /// A script run by one of its clients is taking long: new clients go elsewhere.
    busy: AtomicBool,
    /// Where clients handed to tasks are tracked (shutdown waits for them).
    tracker: TaskTracker,
}

/// A client served by a loop.
struct LoopClient {
    conn: Conn,
    sock: std::net::TcpStream,
    /// Wakes the loop when the client's doorbell rings.
    waker: Waker,
    /// The last read stopped at its limit with bytes perhaps left in the socket.
    more: bool,
}

/// What a client needs after its turn in a pass.
enum Next {
    /// It stays in the loop.
    Stay,
    /// Its connection ends.
    Close,
    /// It moves to a task, which runs this request first if there is one.
    Task(Option<Vec<Bytes>>),
}

/// The loop's clients by token (an index and a generation, so a stale token finds nothing).
/// A client is taken out while the loop serves it, so a rescue (see [`Loop::rescue`]) on
/// another thread can move every other client meanwhile.
#[derive(Default)]
struct Slots {
    entries: Vec<Slot>,
    free: Vec<u32>,
}

#[derive(Default)]
struct Slot {
    generation: u32,
    live: bool,
    client: Option<Box<LoopClient>>,
}

fn token(index: u32, generation: u32) -> u64 {
    (u64::from(generation) << 32) | u64::from(index)
}

impl Slots {
    /// A slot for a new client (live, empty until [`Slots::put`]).
    fn reserve(&mut self) -> u64 {
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.entries.push(Slot::default());
                (self.entries.len() - 1) as u32
            }
        };
        let slot = &mut self.entries[index as usize];
        slot.live = true;
        token(index, slot.generation)
    }

    fn slot(&mut self, token: u64) -> Option<&mut Slot> {
        let (index, generation) = (token as u32, (token >> 32) as u32);
        self.entries
            .get_mut(index as usize)
            .filter(|s| s.live && s.generation == generation)
    }

    /// Take the client out to serve it; None if it left the loop.
    fn take(&mut self, token: u64) -> Option<Box<LoopClient>> {
        self.slot(token)?.client.take()
    }

    /// Put a client back after its turn.
    fn put(&mut self, token: u64, c: Box<LoopClient>) {
        if let Some(slot) = self.slot(token) {
            slot.client = Some(c);
        }
    }

    /// The client left the loop: its token finds nothing from now on.
    fn remove(&mut self, token: u64) {
        let index = token as u32;
        if let Some(slot) = self.slot(token) {
            slot.live = false;
            slot.client = None;
            slot.generation = slot.generation.wrapping_add(1);
            self.free.push(index);
        }
    }

    /// Every client not being served now, out of the loop (boxed as they were kept: moving
    /// them out of their boxes would only copy them).
    #[allow(clippy::vec_box)]
    fn drain(&mut self) -> Vec<Box<LoopClient>> {
        let mut all = Vec::new();
        for (index, slot) in self.entries.iter_mut().enumerate() {
            if slot.live {
                if let Some(c) = slot.client.take() {
                    slot.live = false;
                    slot.generation = slot.generation.wrapping_add(1);
                    self.free.push(index as u32);
                    all.push(c);
                }
            }
        }
        all
    }
}

/// A client's doorbell rang (a push, CLIENT KILL, shutdown): tell its loop.
struct Ring {
    lp: Weak<Loop>,
    token: u64,
}

impl Wake for Ring {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(lp) = self.lp.upgrade() {
            lp.rings.lock().push(self.token);
            lp.bell.ring();
        }
    }
}

impl Loop {
    fn new(tracker: TaskTracker) -> std::io::Result<Loop> {
        // SAFETY: epoll_create1 takes no pointers; a descriptor it returns is ours.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: the AsyncFd owns the descriptor, so it stays open until the AsyncFd has
        // taken it out of the reactor (its drop deregisters, then closes).
        let epoll = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)? };
        Ok(Loop {
            epoll,
            slots: ReentrantMutex::new(RefCell::new(Slots::default())),
            incoming: Mutex::new(Vec::new()),
            rings: Mutex::new(Vec::new()),
            bell: Doorbell::default(),
            busy: AtomicBool::new(false),
            tracker,
        })
    }

    /// Take a new client: registered with the server now, served from the loop's next turn.
    fn add(&self, state: &Arc<ServerState>, sock: std::net::TcpStream, peer: Peer) {
        let mut conn = Conn::connect(state, peer);
        conn.client.socket_fd = Some(sock.as_raw_fd());
        self.incoming.lock().push((conn, sock));
        self.bell.ring();
    }

    /// Put the new clients in the epoll set (on the loop's thread).
    fn register(self: &Arc<Self>, state: &Arc<ServerState>) {
        let incoming = std::mem::take(&mut *self.incoming.lock());
        for (conn, sock) in incoming {
            let guard = self.slots.lock();
            let token = guard.borrow_mut().reserve();
            let waker = Waker::from(Arc::new(Ring {
                lp: Arc::downgrade(self),
                token,
            }));
            conn.client.push.bell().watch(&waker);
            let fd = sock.as_raw_fd();
            let c = Box::new(LoopClient {
                conn,
                sock,
                waker,
                more: false,
            });
            guard.borrow_mut().put(token, c);
            // EPOLLRDHUP: a peer that sent its last bytes and closed is reported as such,
            // so the pass knows the socket still holds its end (see `pass`).
            let mut ev = libc::epoll_event {
                events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32,
                u64: token,
            };
            // SAFETY: `ev` outlives the call, which copies it.
            let rc = unsafe {
                libc::epoll_ctl(
                    self.epoll.get_ref().as_raw_fd(),
                    libc::EPOLL_CTL_ADD,
                    fd,
                    &mut ev,
                )
            };
            if rc != 0 {
                let c = guard.borrow_mut().take(token);
                guard.borrow_mut().remove(token);
                if let Some(c) = c {
                    close(state, c);
                }
            } else {
                // Killed or sent a push before its doorbell had the loop's waker: look now.
                self.rings.lock().push(token);
            }
        }
    }

    /// Serve until shutdown, then close the clients still here.
    async fn run(self: Arc<Self>, state: Arc<ServerState>) {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
        let mut ran = Vec::new();
        let shutdown = state.shutdown.cancelled();
        tokio::pin!(shutdown);
        let hook: Arc<dyn Fn() + Send + Sync> = {
            let lp = Arc::downgrade(&self);
            let st = Arc::downgrade(&state);
            Arc::new(move || {
                if let (Some(lp), Some(st)) = (lp.upgrade(), st.upgrade()) {
                    lp.busy.store(true, Ordering::Release);
                    lp.rescue(&st);
                }
            })
        };
        loop {
            tokio::select! {
                biased;
                _ = self.bell.rung() => {
                    self.register(&state);
                    self.rung(&state);
                }
                r = self.epoll.readable() => {
                    let Ok(mut guard) = r else { break };
                    if super::IN_TASKS.load(Ordering::Relaxed) > 0 {
                        // Clients served by tasks that tokio woke in the same turn as this
                        // loop run first: their requests most likely arrived first (redis-
                        // server serves clients in the order they became readable, and tests
                        // rely on it: an EXEC sent before another client's GET runs before
                        // it). Tokio runs the task it woke last first, which would be this
                        // loop; a yield puts the loop behind them.
                        tokio::task::yield_now().await;
                    }
                    // SAFETY: `events` has room for MAX_EVENTS entries.
                    let n = unsafe {
                        libc::epoll_wait(
                            self.epoll.get_ref().as_raw_fd(),
                            events.as_mut_ptr(),
                            MAX_EVENTS as i32,
                            0,
                        )
                    };
                    let n = n.max(0) as usize;
                    cmd::runtime::handoff::set_on_long(Some(hook.clone()));
                    let drained = {
                        let slots = self.slots.lock();
                        self.pass(&state, &slots, &events[..n], &mut ran)
                    };
                    cmd::runtime::handoff::set_on_long(None);
                    self.busy.store(false, Ordering::Release);
                    // Tokio clears the readiness only if its reactor saw nothing new since:
                    // a client that sends meanwhile makes the set readable again.
                    if n < MAX_EVENTS && drained {
                        guard.clear_ready();
                    }
                }
                _ = &mut shutdown => break,
            }
        }
        self.register(&state);
        let all = self.slots.lock().borrow_mut().drain();
        for c in all {
            close(&state, c);
        }
    }

    /// One pass over the ready clients: read and run each, then write every reply. False
    /// when a client may have more to read than it took.
    fn pass(
        &self,
        state: &Arc<ServerState>,
        slots: &RefCell<Slots>,
        events: &[libc::epoll_event],
        ran: &mut Vec<u64>,
    ) -> bool {
        let mut drained = true;
        for ev in events {
            let token = ev.u64;
            let Some(mut c) = slots.borrow_mut().take(token) else {
                continue;
            };
            let next = guarded(|| read_and_run(state, &mut c));
            if matches!(next, Next::Stay) {
                // The epoll set is level-triggered but tokio's registration of it is not:
                // readiness is cleared after a pass only if no client may still have
                // something to read, here a close that came with its last bytes (a short
                // read does not show it; the next pass's read returns 0).
                let closed =
                    ev.events & (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
                drained &= !c.more && closed == 0;
                ran.push(token);
            }
            self.settle(state, slots, token, c, next);
        }
        for token in ran.drain(..) {
            let Some(mut c) = slots.borrow_mut().take(token) else {
                continue;
            };
            let next = guarded(|| write_replies(state, &mut c));
            self.settle(state, slots, token, c, next);
        }
        drained
    }

    /// After a client's turn: back in its slot, or out of the loop (closed, or to a task).
    fn settle(
        &self,
        state: &Arc<ServerState>,
        slots: &RefCell<Slots>,
        token: u64,
        c: Box<LoopClient>,
        next: Next,
    ) {
        match next {
            Next::Stay => slots.borrow_mut().put(token, c),
            Next::Close => {
                slots.borrow_mut().remove(token);
                close(state, c);
            }
            Next::Task(pending) => {
                slots.borrow_mut().remove(token);
                self.to_task(state, c, pending);
            }
        }
    }

    /// Hand a client (out of the slots) to a task of its own.
    fn to_task(&self, state: &Arc<ServerState>, c: Box<LoopClient>, pending: Option<Vec<Bytes>>) {
        let LoopClient { conn, sock, .. } = *c;
        // SAFETY: a null event is allowed for EPOLL_CTL_DEL.
        unsafe {
            libc::epoll_ctl(
                self.epoll.get_ref().as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                sock.as_raw_fd(),
                std::ptr::null_mut(),
            );
        }
        match tokio::net::TcpStream::from_std(sock) {
            Ok(stream) => {
                let (rd, wr) = stream.into_split();
                self.tracker.spawn(super::serve_conn(
                    state.clone(),
                    conn,
                    rd,
                    wr,
                    pending,
                    true,
                ));
            }
            Err(_) => {
                if !conn.gone {
                    cmd::runtime::clients::disconnect(state, &conn.client);
                }
            }
        }
    }

    /// Look at the clients whose doorbell rang: close the killed, hand those with pushes to
    /// a task, and watch the bell again for the others.
    fn rung(&self, state: &Arc<ServerState>) {
        let tokens = std::mem::take(&mut *self.rings.lock());
        let guard = self.slots.lock();
        let slots = &*guard;
        for token in tokens {
            let Some(c) = slots.borrow_mut().take(token) else {
                continue;
            };
            // Watch first, then look: a ring after the look wakes the loop again.
            let client = &c.conn.client;
            client.push.bell().watch(&c.waker);
            let killed = client.info.kill.is_cancelled() || state.shutdown.is_cancelled();
            let pushed = client.push.has_frames();
            let next = if killed {
                Next::Close
            } else if pushed {
                Next::Task(None)
            } else {
                Next::Stay
            };
            self.settle(state, slots, token, c, next);
        }
    }

    /// A script run by one of this loop's clients is taking long (`handoff::set_on_long`, on
    /// the loop's thread, inside the pass): every other client moves to a task, where it gets
    /// BUSY and can kill the script.
    fn rescue(&self, state: &Arc<ServerState>) {
        let all = self.slots.lock().borrow_mut().drain();
        for c in all {
            self.to_task(state, c, None);
        }
    }
}

/// Run one client's turn; a panic in it (a bug) closes that client, as it ended the client's
/// task before the loop, instead of stopping the loop and every other client in it.
fn guarded(turn: impl FnOnce() -> Next) -> Next {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(turn)).unwrap_or(Next::Close)
}

/// Read what the client sent and run every request that can run at once.
fn read_and_run(state: &Arc<ServerState>, c: &mut LoopClient) -> Next {
    let conn = &mut c.conn;
    state.stats.reads_processed.fetch_add(1, Ordering::Relaxed);
    match conn.input.read_now(&c.sock) {
        Ok((0, _)) => return Next::Close,
        Ok((n, more)) => {
            c.more = more;
            state
                .stats
                .net_input_bytes
                .fetch_add(n as u64, Ordering::Relaxed);
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Next::Stay,
        Err(_) => return Next::Close,
    }
    let client = &mut conn.client;
    client
        .info
        .last_active_ms
        .store(state.clock.recent_ms().max(0) as u64, Ordering::Relaxed);
    if !super::input_arrived(state, &client.info, &conn.input) {
        return Next::Close;
    }
    super::lend(&mut conn.out);
    let mut ahead = LookAhead::default();
    let pending = super::run_at_once(
        state,
        client,
        &mut conn.taken,
        &mut conn.input,
        &mut conn.out,
        &mut conn.soft_clock,
        &mut ahead,
        true,
    );
    // The batch is over: the next request reads the clock afresh.
    client.recent_us = 0;
    if pending.is_some() {
        return Next::Task(pending);
    }
    if client.info.kill.is_cancelled() {
        // Closed for its output-buffer limit (or killed): Redis discards what was pending.
        return Next::Close;
    }
    if client.close_after_reply && !conn.gone {
        // Forgotten in the pass that writes its last reply (see `serve_conn`).
        cmd::runtime::clients::disconnect(state, client);
        conn.gone = true;
    }
    if client.is_blocked() || client.syncing() || conn.input.reading_big_arg() {
        return Next::Task(None);
    }
    Next::Stay
}

/// Write the client's replies; hand it to a task if the socket did not take them all.
fn write_replies(state: &Arc<ServerState>, c: &mut LoopClient) -> Next {
    let conn = &mut c.conn;
    if !conn.out.is_empty() {
        if !cmd::runtime::persist::before_reply_now(state) {
            return Next::Task(None);
        }
        state.stats.writes_processed.fetch_add(1, Ordering::Relaxed);
        match write_now(&c.sock, &conn.out) {
            Ok(n) => super::wrote(state, &mut conn.out, n),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Next::Close,
        }
        if !conn.out.is_empty() {
            return Next::Task(None);
        }
        super::free_big_output(&mut conn.out);
    }
    super::pool::give(conn.out.tail());
    if conn.client.close_after_reply {
        return Next::Close;
    }
    conn.input.shrink_if_idle();
    super::account_idle(state, &conn.client.info, &conn.input);
    Next::Stay
}

/// One write of what `out` holds (vectored when large values wait beside the buffer).
fn write_now(mut sock: &std::net::TcpStream, out: &Output) -> std::io::Result<usize> {
    if let Some(buf) = out.contiguous() {
        return sock.write(buf);
    }
    let mut slices = [std::io::IoSlice::new(&[]); MAX_SLICES];
    let n = out.slices(&mut slices);
    sock.write_vectored(&slices[..n])
}

/// Forget a client (out of the slots), then close its connection: the peer sees the close
/// only once the client is gone, as with a task.
fn close(state: &ServerState, c: Box<LoopClient>) {
    if !c.conn.gone {
        cmd::runtime::clients::disconnect(state, &c.conn.client);
    }
    let _ = c.sock.shutdown(std::net::Shutdown::Write);
}
