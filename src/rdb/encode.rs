//! Writing RDB's primitives as redis-server 7.0 writes them: lengths in 1, 2, 5 or 9 bytes,
//! strings that read as small integers in their integer encodings, longer strings
//! LZF-compressed when `rdbcompression` is on and it saves at least four bytes.

use super::lzf;

/// rdbSaveLen.
pub fn put_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// Append `s` as an RDB string, uncompressed (the form FUNCTION DUMP uses; every reader
/// takes it).
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// rdbEncodeInteger: a value within 32 bits in the shortest integer encoding.
fn put_int_encoding(out: &mut Vec<u8>, v: i64) -> bool {
    if v as i8 as i64 == v {
        out.push(0xC0);
        out.push(v as i8 as u8);
    } else if v as i16 as i64 == v {
        out.push(0xC1);
        out.extend_from_slice(&(v as i16).to_le_bytes());
    } else if v as i32 as i64 == v {
        out.push(0xC2);
        out.extend_from_slice(&(v as i32).to_le_bytes());
    } else {
        return false;
    }
    true
}

/// rdbSaveRawString: a string of at most 11 bytes that reads as an integer within 32 bits
/// goes in its integer encoding; a string over 20 bytes is LZF-compressed when `compress` is
/// set and that saves at least four bytes; anything else is stored as it is.
pub fn put_raw_string(out: &mut Vec<u8>, s: &[u8], compress: bool) {
    if s.len() <= 11 {
        if let Some(v) = crate::num::parse_ll(s) {
            if put_int_encoding(out, v) {
                return;
            }
        }
    }
    if compress && s.len() > 20 {
        let done = SCRATCH.with(|c| {
            let mut c = c.borrow_mut();
            if !lzf::compress_into(s, s.len() - 4, &mut c) {
                return false;
            }
            out.push(0xC3);
            put_len(out, c.len() as u64);
            put_len(out, s.len() as u64);
            out.extend_from_slice(&c);
            if c.capacity() > 1 << 20 {
                *c = Vec::new();
            }
            true
        });
        if done {
            return;
        }
    }
    put_string(out, s);
}

thread_local! {
    /// Compressed output before it is known to be worth keeping, reused across strings.
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// rdbSaveLongLongAsStringObject: an integer value in its integer encoding when it fits 32
/// bits, else as its decimal string.
pub fn put_int_string(out: &mut Vec<u8>, v: i64) {
    if !put_int_encoding(out, v) {
        put_string(out, itoa::Buffer::new().format(v).as_bytes());
    }
}

/// rdbSaveBinaryDoubleValue.
pub fn put_binary_double(out: &mut Vec<u8>, d: f64) {
    out.extend_from_slice(&d.to_le_bytes());
}

/// rdbSaveMillisecondTime.
pub fn put_ms_time(out: &mut Vec<u8>, t: i64) {
    out.extend_from_slice(&t.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_take_the_encoding_redis_gives_them() {
        let enc = |s: &[u8], c: bool| {
            let mut v = Vec::new();
            put_raw_string(&mut v, s, c);
            v
        };
        assert_eq!(enc(b"12", true), [0xC0, 12]);
        assert_eq!(enc(b"-129", true), [0xC1, 0x7f, 0xff]);
        assert_eq!(enc(b"2147483647", true), [0xC2, 0xff, 0xff, 0xff, 0x7f]);
        // Outside 32 bits, not canonical, or longer than 11 bytes: a plain string.
        assert_eq!(enc(b"2147483648", true)[0], 10);
        assert_eq!(enc(b"012", true), [3, b'0', b'1', b'2']);
        assert_eq!(enc(b"-0", true), [2, b'-', b'0']);
        let long = vec![b'a'; 100];
        assert_eq!(enc(&long, true)[0], 0xC3);
        assert_eq!(enc(&long, false)[..2], [0x40, 100]);
        let mut v = Vec::new();
        put_int_string(&mut v, 1 << 40);
        assert_eq!(v, b"\x0d1099511627776");
    }
}
