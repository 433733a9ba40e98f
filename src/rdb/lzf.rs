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
const HASH_BITS: u32 = 14;

#[inline]
fn hash3(b: &[u8]) -> usize {
    let v = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
    (v.wrapping_mul(2_654_435_761) >> (32 - HASH_BITS)) as usize
}

/// Compress `input` into at most `limit` bytes; None when it does not fit (Redis then stores
/// the string as it is: it asks for at least 4 bytes saved).
pub fn compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    let n = input.len();
    let mut out = Vec::with_capacity(limit.min(n + n / 32 + 1));
    // Positions + 1 of the last 3-byte sequence with each hash (0: none yet).
    let mut table = vec![0u32; 1 << HASH_BITS];
    let mut lit_start = 0;
    let mut ip = 0;

    fn flush(out: &mut Vec<u8>, lits: &[u8]) {
        for run in lits.chunks(MAX_LIT) {
            out.push((run.len() - 1) as u8);
            out.extend_from_slice(run);
        }
    }

    while ip + 2 < n {
        let h = hash3(&input[ip..]);
        let cand = table[h] as usize;
        table[h] = (ip + 1) as u32;
        if cand > 0 {
            let r = cand - 1;
            let dist = ip - r;
            if dist <= MAX_OFF && input[r..r + 3] == input[ip..ip + 3] {
                let max = MAX_REF.min(n - ip);
                let mut len = 3;
                while len < max && input[r + len] == input[ip + len] {
                    len += 1;
                }
                flush(&mut out, &input[lit_start..ip]);
                let l = len - 2;
                let off = dist - 1;
                if l < 7 {
                    out.push(((l << 5) | (off >> 8)) as u8);
                } else {
                    out.push(((7 << 5) | (off >> 8)) as u8);
                    out.push((l - 7) as u8);
                }
                out.push(off as u8);
                if out.len() > limit {
                    return None;
                }
                // Remember the sequences inside the match too, so a repeat of them is found.
                let end = ip + len;
                let mut p = ip + 1;
                while p < end && p + 2 < n {
                    table[hash3(&input[p..])] = (p + 1) as u32;
                    p += 1;
                }
                ip = end;
                lit_start = ip;
                continue;
            }
        }
        ip += 1;
        // Bound the work a stream of literals does before the size check.
        if ip - lit_start >= MAX_LIT * 64 && out.len() + (ip - lit_start) > limit {
            return None;
        }
    }
    flush(&mut out, &input[lit_start..]);
    (out.len() <= limit).then_some(out)
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
