//! Redis's CRC-64 (the Jones polynomial, reflected, no final xor): the footer of RDB files
//! and DUMP payloads. Eight bytes at a time with eight tables ("slicing by 8", as Redis's
//! crcspeed does), since a save or load checksums every byte of the dataset.

const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

/// `TABLES[0]` is the byte-at-a-time table; `TABLES[k][b]` is the CRC of byte `b` followed by
/// `k` zero bytes, which lets eight input bytes be folded in with eight lookups.
static TABLES: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// Redis's `crc64(crc, data)`: continue the checksum `crc` over `data`.
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        crc ^= u64::from_le_bytes(c.try_into().expect("8 bytes"));
        crc = TABLES[7][(crc & 0xff) as usize]
            ^ TABLES[6][((crc >> 8) & 0xff) as usize]
            ^ TABLES[5][((crc >> 16) & 0xff) as usize]
            ^ TABLES[4][((crc >> 24) & 0xff) as usize]
            ^ TABLES[3][((crc >> 32) & 0xff) as usize]
            ^ TABLES[2][((crc >> 40) & 0xff) as usize]
            ^ TABLES[1][((crc >> 48) & 0xff) as usize]
            ^ TABLES[0][(crc >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = TABLES[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytewise(mut crc: u64, data: &[u8]) -> u64 {
        for &b in data {
            crc = TABLES[0][((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
        }
        crc
    }

    #[test]
    fn crc64_matches_redis_test_vector() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6d914c4b8d9ca);
    }

    #[test]
    fn eight_at_a_time_equals_one_at_a_time_for_every_length_and_split() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in 0..data.len() {
            assert_eq!(crc64(0, &data[..n]), bytewise(0, &data[..n]), "{n}");
        }
        let whole = crc64(0, &data);
        for split in [0, 1, 7, 8, 9, 100, 199] {
            assert_eq!(crc64(crc64(0, &data[..split]), &data[split..]), whole);
        }
    }
}
