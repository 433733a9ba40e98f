//! Hash slots as Redis Cluster computes them: CRC16 (XMODEM: polynomial 0x1021, initial value
//! 0, no reflection) of the key, or of its hash tag, modulo 16,384.

/// Slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// CRC16 XMODEM, bit by bit from a table built at compile time (the table Redis's crc16.c
/// lists, computed rather than copied).
const TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut b = 0;
        while b < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            b += 1;
        }
        t[i] = crc;
        i += 1;
    }
    t
};

/// CRC16 XMODEM of `data`.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[(((crc >> 8) as u8) ^ b) as usize]
    })
}

/// The part of `key` that is hashed: the bytes between the first `{` and the first `}`
/// after it when that is not empty, otherwise the whole key (Redis's keyHashSlot).
pub fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&c| c == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&c| c == b'}') {
        Some(0) | None => key,
        Some(len) => &key[open + 1..open + 1 + len],
    }
}

/// The hash slot of `key`.
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOTS as u16 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_matches_the_xmodem_check_value() {
        // The CRC catalogue's check value for CRC-16/XMODEM, also Redis's crc16.c test.
        assert_eq!(crc16(b"123456789"), 0x31c3);
    }

    #[test]
    fn slots_match_redis_cluster_keyslot() {
        // Recorded with CLUSTER KEYSLOT on redis-server 7.0.15.
        for (key, slot) in [
            (&b"foo"[..], 12182),
            (b"bar", 5061),
            (b"", 0),
            (b"{user1000}.following", 3443),
            (b"{user1000}.followers", 3443),
            (b"foo{}{bar}", 8363),
            (b"foo{{bar}}zap", 4015),
            (b"foo{bar}{zap}", 5061),
            (b"{}", 15257),
            (b"{", 4092),
        ] {
            assert_eq!(key_slot(key), slot, "{}", String::from_utf8_lossy(key));
        }
    }
}
