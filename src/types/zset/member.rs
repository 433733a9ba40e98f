//! A skiplist node's member: up to 15 bytes inside the node itself, longer ones in a box.
//!
//! The member -> node table compares the member of the node each probe finds, and a descent
//! compares members where scores tie. With the member boxed apart from its 64-byte node,
//! each of those is one more cache miss (the node, then its box): a ZRANK, ZSCORE or ZREM
//! of a member of a 1,000,000-member set paid it on every lookup. Short members, the common
//! case for lock queues and leaderboards keyed by ids, now live in the 16 bytes the box's
//! pointer and length took, and cost no allocation of their own.

use std::ops::Deref;

/// Bytes kept inline at most; the 16th byte is the tag.
const INLINE_MAX: usize = 15;
/// The tag's mark of an inline member (its low bits are the length). A boxed member's
/// length is stored little-endian, so its last byte, the tag's place, is its top byte:
/// zero for any length a process can hold.
const INLINE_MARK: u8 = 0x80;

#[derive(Clone, Copy)]
#[repr(C)]
struct Heap {
    ptr: *mut u8,
    /// The length, little-endian (see [`INLINE_MARK`]).
    len_le: usize,
}

#[repr(C)]
union Repr {
    heap: Heap,
    inline: [u8; 16],
}

/// A member, inline when it fits in 15 bytes (see the module's comment).
pub(super) struct Member(Repr);

const _: () = assert!(std::mem::size_of::<Member>() == 16);

// SAFETY: a Member owns its bytes as a Box<[u8]> would (no sharing, no interior mutability).
unsafe impl Send for Member {}
// SAFETY: as above; `&Member` only reads.
unsafe impl Sync for Member {}

impl Member {
    #[inline]
    fn is_inline(&self) -> bool {
        // SAFETY: both variants are 16 initialised bytes (a Heap is two machine words).
        unsafe { self.0.inline[INLINE_MAX] & INLINE_MARK != 0 }
    }
}

impl Default for Member {
    /// The empty member (the header's).
    fn default() -> Self {
        Member::from(&[][..])
    }
}

impl From<&[u8]> for Member {
    fn from(b: &[u8]) -> Self {
        if b.len() <= INLINE_MAX {
            let mut inline = [0u8; 16];
            inline[..b.len()].copy_from_slice(b);
            inline[INLINE_MAX] = INLINE_MARK | b.len() as u8;
            return Member(Repr { inline });
        }
        let boxed: Box<[u8]> = b.into();
        let len = boxed.len();
        let ptr = Box::into_raw(boxed) as *mut u8;
        Member(Repr {
            heap: Heap {
                ptr,
                len_le: len.to_le(),
            },
        })
    }
}

impl Deref for Member {
    type Target = [u8];

    #[inline]
    fn deref(&self) -> &[u8] {
        if self.is_inline() {
            // SAFETY: an inline member's first `tag & 0x7f` (at most 15) bytes are its own.
            unsafe {
                let n = (self.0.inline[INLINE_MAX] & !INLINE_MARK) as usize;
                self.0.inline.get_unchecked(..n)
            }
        } else {
            // SAFETY: a boxed member holds the parts of a live Box<[u8]> it owns.
            unsafe { std::slice::from_raw_parts(self.0.heap.ptr, usize::from_le(self.0.heap.len_le)) }
        }
    }
}

impl Clone for Member {
    fn clone(&self) -> Self {
        Member::from(&self[..])
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        if !self.is_inline() {
            // SAFETY: the parts came from Box::into_raw in `from` and are dropped once.
            unsafe {
                let Heap { ptr, len_le } = self.0.heap;
                drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                    ptr,
                    usize::from_le(len_le),
                )));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Member;

    #[test]
    fn members_of_every_length_read_back_as_given() {
        for len in [0usize, 1, 14, 15, 16, 17, 64, 1000] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let m = Member::from(&bytes[..]);
            assert_eq!(&m[..], &bytes[..], "length {len}");
            assert_eq!(m.is_inline(), len <= 15, "length {len}");
            let c = m.clone();
            drop(m);
            assert_eq!(&c[..], &bytes[..], "clone of length {len}");
        }
        assert!(Member::default().is_empty());
    }

    #[test]
    fn a_member_of_high_bytes_stays_inline_and_intact() {
        let m = Member::from(&[0xffu8; 15][..]);
        assert!(m.is_inline());
        assert_eq!(&m[..], &[0xffu8; 15][..]);
    }
}
