//! The LZF format Redis compresses long strings with (liblzf): a sequence of literal runs
//! (a control byte 0..31 then up to 32 bytes) and back references (length and distance
//! packed in two or three bytes: lengths 3..264, distances up to 8 KiB).
//!
//! The compressor is written for this format from its description, not from liblzf: any
//! valid LZF stream decompresses the same in every implementation, so the bytes need not
//! match redis-server's, only decode to the same string.

/// Longest back reference: 7 + 255 in the length fields, plus the implied 2.
const MAX_REF: usize = 264;
/// Farthest a back reference reaches.
const MAX_OFF: usize = 1 << 13;
/// Longest literal run one control byte announces.
const MAX_LIT: usize = 32;
/// liblzf's HLOG as Redis builds it: a table of 2^16 positions.
const HLOG: u32 = 16;

/// The table slot of the three bytes packed in `h` (liblzf's IDX in its VERY_FAST mode).
#[inline]
fn idx(h: u32) -> usize {
    ((h >> (3 * 8 - HLOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << HLOG) - 1)) as usize
}

/// Per thread: the table of positions (position + 1, tagged with the call's generation in
/// the high half, so entries of earlier calls read as empty without clearing 512 KB per
/// string) and the generation.
struct Table {
    slots: Vec<u64>,
    generation: u32,
}

thread_local! {
    static TABLE: std::cell::RefCell<Table> = std::cell::RefCell::new(Table {
        slots: vec![0; 1 << HLOG],
        generation: 0,
    });
}

/// Compress `input` into at most `limit` bytes, or None when it does not fit (Redis then
/// stores the string as it is: it asks for at least four bytes saved).
///
/// The algorithm is liblzf's, step for step as Redis builds it (VERY_FAST hashing, the same
/// search and the same limits), so a payload or file holds the bytes redis-server would
/// write: DUMP replies match byte for byte.
pub fn compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    compress_into(input, limit, &mut out).then_some(out)
}

/// Like [`compress`], into `out` (cleared first): true if it fit in `limit` bytes. Lets a
/// caller reuse one buffer for every string of a save.
pub fn compress_into(input: &[u8], limit: usize, out: &mut Vec<u8>) -> bool {
    out.clear();
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.generation = t.generation.wrapping_add(1);
        if t.generation == 0 {
            t.slots.iter_mut().for_each(|s| *s = 0);
            t.generation = 1;
        }
        let g = t.generation;
        match lzf_compress(&mut t.slots, g, input, limit, out) {
            Some(n) => {
                out.truncate(n);
                true
            }
            None => false,
        }
    })
}

/// lzf_compress: the number of bytes written to `out`, or None if they exceed `out_len`.
fn lzf_compress(
    table: &mut [u64],
    generation: u32,
    input: &[u8],
    out_len: usize,
    out: &mut Vec<u8>,
) -> Option<usize> {
    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    // Room for every index the C code may write through before its checks fail.
    out.resize(out_len + 4, 0);
    let tag = (generation as u64) << 32;
    let lookup = |t: &[u64], slot: usize| -> Option<usize> {
        let v = t[slot];
        (v >> 32 == generation as u64 && v & 0xffff_ffff != 0)
            .then(|| (v & 0xffff_ffff) as usize - 1)
    };
    let mut ip = 0usize;
    let mut op = 1usize; // the first literal run's control byte is written when it ends
    let mut lit = 0usize;
    let mut hval: u32 = ((input[0] as u32) << 8) | *input.get(1).unwrap_or(&0) as u32;
    while ip + 2 < in_len {
        hval = (hval << 8) | input[ip + 2] as u32;
        let slot = idx(hval);
        let r = lookup(table, slot);
        table[slot] = tag | (ip as u64 + 1);
        let found = r.filter(|&r| {
            r < ip
                && ip - r - 1 < MAX_OFF
                && r > 0
                && input[r + 2] == input[ip + 2]
                && input[r..r + 2] == input[ip..ip + 2]
        });
        if let Some(r) = found {
            let off = ip - r - 1;
            let mut len = 2usize;
            let maxlen = (in_len - ip - len).min(MAX_REF);
            if op + 3 + 1 >= out_len && op - (lit == 0) as usize + 3 + 1 >= out_len {
                return None;
            }
            // End the literal run (or take back its unused control byte).
            out[op - lit - 1] = (lit as u8).wrapping_sub(1);
            op -= (lit == 0) as usize;
            let mut unrolled_all = false;
            if maxlen > 16 {
                unrolled_all = true;
                for _ in 0..16 {
                    len += 1;
                    if input[r + len] != input[ip + len] {
                        unrolled_all = false;
                        break;
                    }
                }
            }
            if maxlen <= 16 || unrolled_all {
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2; // now the length minus one
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start a literal run
            ip += len + 1;
            if ip + 2 >= in_len {
                break;
            }
            // Hash the two positions before the end of the match.
            ip -= 2;
            hval = ((input[ip] as u32) << 8) | input[ip + 1] as u32;
            for _ in 0..2 {
                hval = (hval << 8) | input[ip + 2] as u32;
                table[idx(hval)] = tag | (ip as u64 + 1);
                ip += 1;
            }
        } else {
            if op >= out_len {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1);
    op -= (lit == 0) as usize;
    Some(op)
}

/// liblzf's lzf_decompress: exactly `len` bytes out, or None for a corrupt input.
pub fn decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = input[ip] as usize;
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            if out.len() + run > len {
                return None;
            }
            out.extend_from_slice(input.get(ip..ip + run)?);
            ip += run;
        } else {
            let mut run = ctrl >> 5;
            if run == 7 {
                run += *input.get(ip)? as usize;
                ip += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(ip)? as usize + 1;
            ip += 1;
            run += 2;
            if back > out.len() || out.len() + run > len {
                return None;
            }
            let start = out.len() - back;
            for i in 0..run {
                let b = out[start + i];
                out.push(b);
            }
        }
    }
    (out.len() == len).then_some(out)
}

/// The most a compressed stream of `clen` bytes can expand to: a 2-byte reference yields at
/// most 9 bytes and a 3-byte one 264 (88 per byte), a literal less than one per byte. A
/// declared length beyond this is corrupt and is refused before anything is allocated.
pub fn max_expansion(clen: usize) -> usize {
    clen.saturating_mul(MAX_REF / 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lzf_back_references_expand_and_corruption_is_refused() {
        // literal "ab", then a back reference of 4 bytes at distance 2: "ababab".
        let data = [0x01, b'a', b'b', 0x40, 0x01];
        assert_eq!(decompress(&data, 6).as_deref(), Some(&b"ababab"[..]));
        assert_eq!(decompress(&data, 5), None);
        assert_eq!(decompress(&[0x40, 0x05], 4), None);
    }

    #[test]
    fn compressed_strings_decompress_to_themselves() {
        let repetitive: Vec<Vec<u8>> = vec![
            vec![b'a'; 21],
            vec![0; 100_000],
            b"lock:owner:".repeat(50),
            (0..5000u32).map(|i| (i % 251) as u8).collect(),
        ];
        for s in &repetitive {
            let c = compress(s, s.len() - 4).expect("compressible");
            assert!(c.len() <= s.len() - 4);
            assert!(s.len() <= max_expansion(c.len()));
            assert_eq!(decompress(&c, s.len()).as_deref(), Some(&s[..]));
        }
        // Mixed data: compressed or not, whatever comes out decodes to the input.
        let mut x = 12345u64;
        let mixed: Vec<Vec<u8>> = vec![
            (0..70_000u64).map(|i| ((i * i) >> 7) as u8).collect(),
            (0..3000)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (x >> 61) as u8 + b'a'
                })
                .collect(),
        ];
        for s in &mixed {
            for limit in [s.len() - 4, s.len() * 2] {
                if let Some(c) = compress(s, limit) {
                    assert!(c.len() <= limit);
                    assert_eq!(decompress(&c, s.len()).as_deref(), Some(&s[..]));
                }
            }
            assert!(compress(s, s.len() * 2).is_some());
        }
    }

    #[test]
    fn incompressible_strings_are_left_alone() {
        let mut x = 99u64;
        let random: Vec<u8> = (0..4096)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        assert_eq!(compress(&random, random.len() - 4), None);
        assert_eq!(compress(b"550e8400-e29b-41d4-a716-446655440000", 32), None);
    }
}
