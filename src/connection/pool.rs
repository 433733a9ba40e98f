//! Read and write buffers lent to connections while they have bytes to move, kept per worker
//! thread. An idle connection holds none, as Redis frees an idle client's query buffer, and
//! a busy one reuses a buffer instead of allocating per request.

use bytes::BytesMut;
use std::cell::RefCell;

/// The size of a lent buffer: what one read takes in.
pub(super) const CHUNK: usize = 16 * 1024;
/// Buffers kept per worker thread; more are freed (at most 1 MB a thread stays cached).
const KEEP: usize = 64;

thread_local! {
    static FREE: RefCell<Vec<BytesMut>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer with room for at least one read.
pub(super) fn take() -> BytesMut {
    FREE.with(|f| f.borrow_mut().pop())
        .unwrap_or_else(|| BytesMut::with_capacity(CHUNK))
}

/// Give a buffer back once it is empty. A big one (a large request or reply) is freed: only
/// ordinary buffers are worth keeping.
pub(super) fn give(buf: &mut BytesMut) {
    let mut b = std::mem::take(buf);
    b.clear();
    // Arguments parsed from it may still hold its memory (a value being stored): then it is
    // not ours to reuse. Reclaiming also rewinds it to the start of its allocation.
    if !b.try_reclaim(CHUNK) || b.capacity() > 4 * CHUNK {
        return;
    }
    FREE.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() < KEEP {
            f.push(b);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_returned_buffer_is_lent_again_without_allocating() {
        let mut b = take();
        assert!(b.capacity() >= CHUNK);
        b.extend_from_slice(b"PING\r\n");
        let at = b.as_ptr();
        give(&mut b);
        assert_eq!(
            b.capacity(),
            0,
            "the connection holds nothing after giving it back"
        );
        let again = take();
        assert_eq!(again.as_ptr(), at);
        assert!(again.is_empty() && again.capacity() >= CHUNK);
    }

    /// How many buffers this thread keeps. Addresses cannot tell: a freed buffer's memory
    /// may come back from the allocator for the next one.
    fn pooled() -> usize {
        FREE.with(|f| f.borrow().len())
    }

    #[test]
    fn big_or_still_shared_buffers_are_not_pooled() {
        let before = pooled();
        let mut big = BytesMut::with_capacity(8 * CHUNK);
        give(&mut big);
        assert_eq!(pooled(), before, "a big buffer is freed, not kept");
        let mut shared = take();
        let before = pooled();
        shared.extend_from_slice(b"SET k v\r\n");
        let arg = shared.split_to(4).freeze();
        give(&mut shared);
        assert_eq!(
            pooled(),
            before,
            "a buffer an argument still holds is not kept"
        );
        drop(arg);
        let mut alone = take();
        let before = pooled();
        give(&mut alone);
        assert_eq!(pooled(), before + 1, "an ordinary buffer is kept");
    }
}
