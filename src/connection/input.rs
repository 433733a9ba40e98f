//! A client's query buffer: what arrived and has not been parsed yet, read so that memory
//! follows the bytes received. An argument of `BIG_ARG` bytes or more gets a buffer of its
//! own, sized for it by the parser, and is read into exactly that room (Redis reads a big
//! argument with a read length of what it still needs), so it is neither copied nor grown
//! by doubling; when a large request has been served its memory goes back at once.

use crate::protocol::{parse_request, Limits, ParseState, ProtocolError};
use bytes::{Bytes, BytesMut};
use tokio::io::AsyncReadExt;

/// Room made for an ordinary read.
pub(super) const READ_CHUNK: usize = 16 * 1024;
/// A buffer left with more capacity than this once empty is given back.
const SHRINK_ABOVE: usize = 1024 * 1024;

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
            buf: BytesMut::with_capacity(READ_CHUNK),
            state: ParseState::default(),
            big_seen: false,
        }
    }

    /// Read what the peer sent: at most what the current big argument still needs, else up
    /// to a chunk. `Ok(0)`: the peer closed. A blocked client (BLPOP...) waits for readiness
    /// first and only then gives itself a buffer, so thousands of clients waiting hold none.
    pub(super) async fn read_from<R: super::ReadHalf>(
        &mut self,
        rd: &mut R,
        blocked: bool,
    ) -> std::io::Result<usize> {
        if blocked && rd.waits_for_readiness() {
            loop {
                rd.readable().await?;
                if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
                    self.buf.reserve(READ_CHUNK);
                }
                match rd.try_read_buf(&mut self.buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    r => return r,
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
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        rd.read_buf(&mut self.buf).await
    }

    /// The next complete request, if one has arrived (see [`parse_request`]).
    pub(super) fn next_request(
        &mut self,
        limits: &Limits,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        parse_request(&mut self.buf, &mut self.state, limits)
    }

    /// Bytes the client has sent that are waiting to be parsed or are part of an unfinished
    /// request: what client-query-buffer-limit is checked against (Redis's query buffer,
    /// which holds the current big argument alone).
    pub(super) fn pending_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Hold no memory while nothing is buffered (a blocked client may wait for hours).
    pub(super) fn release_if_empty(&mut self) {
        if self.buf.is_empty()
            && self.buf.capacity() > 0
            && self.state.big_arg_missing(&self.buf).is_none()
        {
            self.buf = BytesMut::new();
        }
    }

    /// Drop whatever is buffered (after a protocol error the rest is never read).
    pub(super) fn clear(&mut self) {
        self.buf = BytesMut::new();
        self.state = ParseState::default();
    }

    /// Give back the memory of a large request once it has been served.
    pub(super) fn shrink_if_idle(&mut self) {
        if self.buf.is_empty() && self.buf.capacity() > SHRINK_ABOVE {
            self.buf = BytesMut::with_capacity(READ_CHUNK);
        }
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
/// and costs little: it runs only after a request with a big argument.
pub(super) fn release_freed_memory() {
    // SAFETY: mi_collect only walks mimalloc's own structures.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
