//! What Redis 7.0 allocates for a value, so MEMORY USAGE can report Redis's figure for the
//! same value: jemalloc's size classes, sds strings and listpack entries.

/// sizeof(robj).
pub const ROBJ: usize = 16;
/// sizeof(dict).
pub const DICT: usize = 56;
/// sizeof(dictEntry).
pub const DICT_ENTRY: usize = 24;
/// A listpack's header (total bytes, element count) and end byte.
pub const LISTPACK_OVERHEAD: usize = 7;

/// The usable size jemalloc gives a request of `n` bytes (Redis's zmalloc_size): 8, then
/// multiples of 16 up to 128, then four size classes per doubling.
pub fn jemalloc_size(n: usize) -> usize {
    if n <= 8 {
        8
    } else if n <= 128 {
        (n + 15) & !15
    } else {
        let p = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
        let step = p / 4;
        n.div_ceil(step) * step
    }
}

/// sdsZmallocSize of an sds made by sdsnewlen for a `len`-byte string: the header its
/// length needs (an empty string gets type 8), the bytes and the terminator, rounded by
/// jemalloc.
pub fn sds_alloc_size(len: usize) -> usize {
    let hdr = match len {
        0 => 3,
        1..=31 => 1,
        32..=255 => 3,
        256..=65535 => 5,
        _ if (len as u64) < (1u64 << 32) => 9,
        _ => 17,
    };
    jemalloc_size(hdr + len + 1)
}

/// The bytes a listpack entry for `s` takes (encoding, data, backlen): integers that
/// string2ll reads take their compact integer form, as lpAppend stores them.
pub fn listpack_entry_size(s: &[u8]) -> usize {
    let enc = match crate::num::parse_ll(s) {
        Some(v) => match v {
            0..=127 => 1,
            -4096..=4095 => 2,
            -32768..=32767 => 3,
            -8388608..=8388607 => 4,
            -2147483648..=2147483647 => 5,
            _ => 9,
        },
        None => match s.len() {
            0..=63 => 1 + s.len(),
            64..=4095 => 2 + s.len(),
            n => 5 + n,
        },
    };
    let backlen = match enc {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    };
    enc + backlen
}

/// The slots of a dict holding `len` entries grown one insert at a time (a power of two, at
/// least 4, doubled when full).
pub fn dict_slots(len: usize) -> usize {
    len.max(4).next_power_of_two()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_redis_memory_usage_parts() {
        // Values from redis-server 7.0.15: MEMORY USAGE of a 1-byte embstr is 64 (32 for
        // the object, 8 for the key "k", 24 for the dict entry).
        assert_eq!(jemalloc_size(16 + 3 + 1 + 1), 32);
        assert_eq!(sds_alloc_size(1), 8);
        // A 1 KB bitmap: sds type 16.
        assert_eq!(sds_alloc_size(1024), 1280);
        assert_eq!(listpack_entry_size(b"a"), 3);
        assert_eq!(listpack_entry_size(b"1"), 2);
        assert_eq!(listpack_entry_size(b"-1"), 3);
        assert_eq!(dict_slots(513), 1024);
        assert_eq!(dict_slots(1), 4);
    }
}
