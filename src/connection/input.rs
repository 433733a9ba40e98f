//! A client's query buffer: what arrived and has not been parsed yet, read so that memory
//! follows the bytes received. An argument of `BIG_ARG` bytes or more gets a buffer of its
//! own, sized for it by the parser, and is read into exactly that room (Redis reads a big
//! argument with a read length of what it still needs), so it is neither copied nor grown
//! by doubling; when a large request has been served its memory goes back at once.

use crate::protocol::{parse_request, peek_requests, Limits, ParseState, ProtocolError};
use bytes::{Bytes, BytesMut};
use tokio::io::AsyncReadExt;

/// Room made for an ordinary read.
pub(super) const READ_CHUNK: usize = super::pool::CHUNK;

/// How much [`Input::read_on`] takes in past a read that filled the buffer.
const EAGER_LIMIT: usize = 1024 * 1024;

/// See the module documentation.
pub(super) struct Input {
    buf: BytesMut,
    state: ParseState,
    /// A big argument was read since [`Input::take_big_seen`] last asked: its memory is
    /// handed back to the OS once the request is over.
    big_seen: bool,
}

impl Input {
    /// An empty query buffer.
    pub(super) fn new() -> Self {
        Input {
            // Lent by the pool when bytes arrive (see `super::pool`).
            buf: BytesMut::new(),
            state: ParseState::default(),
            big_seen: false,
        }
    }

    /// Read what the peer sent: at most what the current big argument still needs, else up
    /// to a chunk. `Ok(0)`: the peer closed. A client waits for readiness first and only then
    /// takes a buffer from the pool, so thousands of idle or blocked clients hold none (a TLS
    /// stream cannot wait that way and reads into its buffer).
    pub(super) async fn read_from<R: super::ReadHalf>(
        &mut self,
        rd: &mut R,
    ) -> std::io::Result<usize> {
        if rd.waits_for_readiness() && self.state.big_arg_missing(&self.buf).is_none() {
            loop {
                rd.readable().await?;
                self.make_room();
                // One poll of the reader rather than a try_read: tokio's poll_read marks the
                // socket drained when a read comes back short, so the next wait goes to epoll
                // instead of making a recvfrom that finds nothing (try_read forgets readiness
                // only on EAGAIN: one extra syscall per request for a client that waits for
                // each reply, a third of PING's requests with one client under strace).
                let buf = &mut self.buf;
                let once = std::future::poll_fn(|cx| {
                    std::task::Poll::Ready(
                        match tokio_util::io::poll_read_buf(std::pin::Pin::new(&mut *rd), cx, buf) {
                            std::task::Poll::Ready(r) => Some(r),
                            std::task::Poll::Pending => None,
                        },
                    )
                });
                match once.await {
                    // A readiness that found nothing: wait again without the buffer.
                    None => self.release_if_empty(),
                    Some(Ok(n)) if n > 0 => return Ok(n + self.read_on(rd)),
                    Some(r) => return r,
                }
            }
        }
        if let Some(missing) = self.state.big_arg_missing(&self.buf) {
            self.big_seen = true;
            // The parser made room for the whole argument: never read past it, so the
            // buffer is never reallocated.
            let missing = missing.max(1);
            if self.buf.capacity() - self.buf.len() < missing {
                self.buf.reserve(missing);
            }
            return AsyncReadExt::take(&mut *rd, missing as u64)
                .read_buf(&mut self.buf)
                .await;
        }
        self.make_room();
        rd.read_buf(&mut self.buf).await
    }

    /// A read filled the buffer: take in what else the socket holds now, up to a megabyte, so
    /// a request sent at once is in the query buffer at once, as Redis reads it in one go
    /// (CLIENT LIST of another client, and maxmemory-clients, see all of it). What the
    /// socket returns past the first read: 0 when nothing more is ready; an error or the
    /// peer's close is seen by the next read.
    fn read_on<R: super::ReadHalf>(&mut self, rd: &mut R) -> usize {
        let mut total = 0;
        while self.buf.len() == self.buf.capacity() && self.buf.len() < EAGER_LIMIT {
            self.make_room();
            let buf = &mut self.buf;
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            match tokio_util::io::poll_read_buf(std::pin::Pin::new(&mut *rd), &mut cx, buf) {
                std::task::Poll::Ready(Ok(n)) if n > 0 => total += n,
                _ => break,
            }
        }
        total
    }

    /// The event loop's read: what the socket holds now, without waiting, taking in up to a
    /// megabyte past a read that filled the buffer as [`Input::read_on`] does. `Ok((n, more))`: `n` bytes read (0: the peer closed),
    /// `more` when the read stopped at that megabyte with bytes perhaps left in the socket.
    /// `Err(WouldBlock)`: nothing had arrived.
    pub(super) fn read_now(
        &mut self,
        sock: &std::net::TcpStream,
    ) -> std::io::Result<(usize, bool)> {
        let sock = socket2::SockRef::from(sock);
        let mut total = 0;
        loop {
            self.make_room();
            let room = self.buf.spare_capacity_mut();
            let want = room.len();
            match sock.recv(room) {
                Ok(n) => {
                    // SAFETY: recv initialised the first `n` bytes of the spare capacity.
                    unsafe { self.buf.set_len(self.buf.len() + n) };
                    total += n;
                    if n == 0 || n < want {
                        return Ok((total, false));
                    }
                    if self.buf.len() >= EAGER_LIMIT {
                        return Ok((total, true));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) if total > 0 => return Ok((total, false)),
                Err(e) => {
                    self.release_if_empty();
                    return Err(e);
                }
            }
        }
    }

    /// Whether a big argument is being read into its own buffer (the task's reads do that:
    /// [`Input::read_from`]).
    pub(super) fn reading_big_arg(&self) -> bool {
        self.state.big_arg_missing(&self.buf).is_some()
    }

    /// Room for one ordinary read: a pooled buffer if none is held.
    fn make_room(&mut self) {
        if self.buf.capacity() == 0 && self.buf.is_empty() {
            self.buf = super::pool::take();
        } else if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
    }

    /// The next complete request, if one has arrived (see [`parse_request`]).
    pub(super) fn next_request(
        &mut self,
        limits: &Limits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        parse_request(&mut self.buf, &mut self.state, limits)
    }

    /// Look ahead over the next `max` requests that have fully arrived (see
    /// [`peek_requests`]); returns how many there were.
    pub(super) fn peek_requests<'a, const N: usize>(
        &'a mut self,
        max: usize,
        f: impl FnMut(&[&'a [u8]]),
    ) -> usize {
        peek_requests::<N>(&self.buf, &mut self.state, max, f)
    }

    /// A request's argument vector, done with: the next request's arguments go in it.
    pub(super) fn recycle(&mut self, args: Vec<Bytes>) {
        self.state.recycle(args);
    }

    /// Bytes the client has sent that are waiting to be parsed or are part of an unfinished
    /// request: what client-query-buffer-limit is checked against (Redis's query buffer,
    /// which holds the current big argument alone).
    pub(super) fn pending_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Bytes allocated for the query buffer (Redis's sdsZmallocSize(querybuf)).
    pub(super) fn allocated(&self) -> usize {
        // A big argument costs Redis a buffer of its declared size from its header on (the
        // arguments before it leave the buffer); ours grows towards it as bytes arrive.
        match self.state.big_arg_len() {
            Some(len) => len + 2,
            None => self.buf.capacity(),
        }
    }

    /// Argument bytes of the unfinished request that already left the buffer (Redis has
    /// them in the client's argv).
    pub(super) fn held_bytes(&self) -> usize {
        self.state.held_bytes()
    }

    /// Hold no memory while nothing is buffered (an idle or blocked client may wait for
    /// hours): the buffer goes back to the pool.
    pub(super) fn release_if_empty(&mut self) {
        if self.buf.is_empty()
            && self.buf.capacity() > 0
            && self.state.big_arg_missing(&self.buf).is_none()
        {
            super::pool::give(&mut self.buf);
            self.state.release();
        }
    }

    /// Drop whatever is buffered (after a protocol error the rest is never read).
    pub(super) fn clear(&mut self) {
        self.buf = BytesMut::new();
        self.state = ParseState::default();
    }

    /// Once everything buffered has been served, give the buffer back (a big one is freed,
    /// not pooled) and the memory of a large request to the OS.
    pub(super) fn shrink_if_idle(&mut self) {
        self.release_if_empty();
        if self.big_seen && self.state.big_arg_missing(&self.buf).is_none() {
            self.big_seen = false;
            release_freed_memory();
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        if self.big_seen {
            // An unfinished big request dies with its client: free it, then return the pages.
            self.buf = BytesMut::new();
            self.state = ParseState::default();
            release_freed_memory();
        }
    }
}

/// Hand the pages of freed big buffers back to the OS now. mimalloc keeps freed memory for
/// reuse and purges it lazily, on later allocator activity, which an idle server may never
/// have: Redis (jemalloc) gives a closed client's query buffer back within a moment, and so
/// must we. Without mimalloc as the global allocator (embedded use) this does nothing useful
/// and costs little: it runs only after a request with a big argument. Built without the
/// `mimalloc` feature (an embedding that does not want the allocator compiled) it is empty.
pub(super) fn release_freed_memory() {
    // SAFETY: mi_collect only walks mimalloc's own structures.
    #[cfg(feature = "mimalloc")]
    unsafe {
        libmimalloc_sys::mi_collect(true)
    }
}
