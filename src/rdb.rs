//! The pieces of Redis's RDB serialization that payloads exchanged with clients use (FUNCTION
//! DUMP/RESTORE today; DUMP/RESTORE of keys share them): length-encoded strings, LZF
//! decompression for strings redis-server compressed, and the CRC-64 (Jones) footer with the
//! RDB version. resplock writes strings uncompressed, which every redis-server reads.

/// The RDB version resplock writes and the newest it reads (redis-server 7.0's).
pub const RDB_VERSION: u16 = 10;
/// A function library's code in a payload (RDB_OPCODE_FUNCTION2).
pub const OPCODE_FUNCTION2: u8 = 245;
/// The function library format of 7.0's release candidates (RDB_OPCODE_FUNCTION).
pub const OPCODE_FUNCTION: u8 = 246;

/// crc64.c's table for the Jones polynomial, reflected, built at compile time.
const CRC64_TABLE: [u64; 256] = {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut table = [0u64; 256];
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
        table[i] = crc;
        i += 1;
    }
    table
};

/// Redis's `crc64(crc, data)`.
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    for &b in data {
        crc = CRC64_TABLE[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

/// Append `s` as an RDB string: its length, then its bytes (never compressed).
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

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

/// Close a payload as DUMP does: the RDB version, then the CRC-64 of everything before.
pub fn put_footer(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// verifyDumpPayload: at least the 10-byte footer, a version this server reads, a matching
/// checksum. Returns the body (the payload without its footer).
pub fn verify_payload(p: &[u8]) -> Option<&[u8]> {
    if p.len() < 10 {
        return None;
    }
    let (body, footer) = p.split_at(p.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return None;
    }
    let crc = crc64(0, &p[..p.len() - 8]);
    (footer[2..] == crc.to_le_bytes()).then_some(body)
}

/// A reader over an RDB body.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Read `data` from its start.
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// One byte (rdbLoadType).
    pub fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// rdbLoadLenByRef: a length, or (for the special string encodings) the encoding.
    fn len_or_encoding(&mut self) -> Option<(u64, bool)> {
        let b = self.byte()?;
        Some(match b >> 6 {
            0 => ((b & 0x3f) as u64, false),
            1 => ((((b & 0x3f) as u64) << 8) | self.byte()? as u64, false),
            2 if b == 0x80 => (
                u32::from_be_bytes(self.take(4)?.try_into().ok()?) as u64,
                false,
            ),
            2 if b == 0x81 => (u64::from_be_bytes(self.take(8)?.try_into().ok()?), false),
            2 => return None,
            _ => ((b & 0x3f) as u64, true),
        })
    }

    /// rdbLoadLen.
    pub fn length(&mut self) -> Option<u64> {
        match self.len_or_encoding()? {
            (n, false) => Some(n),
            _ => None,
        }
    }

    /// rdbGenericLoadStringObject: raw, integer-encoded or LZF-compressed.
    pub fn string(&mut self) -> Option<Vec<u8>> {
        let (n, encoded) = self.len_or_encoding()?;
        if !encoded {
            return Some(self.take(usize::try_from(n).ok()?)?.to_vec());
        }
        match n {
            0 => Some((self.byte()? as i8).to_string().into_bytes()),
            1 => Some(
                i16::from_le_bytes(self.take(2)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            2 => Some(
                i32::from_le_bytes(self.take(4)?.try_into().ok()?)
                    .to_string()
                    .into_bytes(),
            ),
            3 => {
                let clen = usize::try_from(self.length()?).ok()?;
                let len = usize::try_from(self.length()?).ok()?;
                // A declared length is only believed as far as the compressed bytes can
                // expand (LZF's best ratio is about 1:33).
                let compressed = self.take(clen)?;
                if len > clen.saturating_mul(64).max(64) {
                    return None;
                }
                lzf_decompress(compressed, len)
            }
            _ => None,
        }
    }
}

/// liblzf's lzf_decompress: exactly `len` bytes out, or None for a corrupt input.
pub fn lzf_decompress(input: &[u8], len: usize) -> Option<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_matches_redis_test_vector() {
        assert_eq!(crc64(0, b"123456789"), 0xe9c6d914c4b8d9ca);
    }

    #[test]
    fn lengths_round_trip_in_every_width() {
        for n in [
            0u64,
            63,
            64,
            16383,
            16384,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
        ] {
            let mut v = Vec::new();
            put_len(&mut v, n);
            assert_eq!(Reader::new(&v).length(), Some(n));
        }
    }

    #[test]
    fn lzf_back_references_expand_and_corruption_is_refused() {
        // literal "ab", then a back reference of 4 bytes at distance 2: "ababab".
        let data = [0x01, b'a', b'b', 0x40, 0x01];
        assert_eq!(lzf_decompress(&data, 6).as_deref(), Some(&b"ababab"[..]));
        assert_eq!(lzf_decompress(&data, 5), None);
        assert_eq!(lzf_decompress(&[0x40, 0x05], 4), None);
    }

    #[test]
    fn payload_footer_is_checked() {
        let mut p = vec![OPCODE_FUNCTION2];
        put_string(&mut p, b"code");
        put_footer(&mut p);
        assert_eq!(verify_payload(&p), Some(&p[..p.len() - 10]));
        let mut bad = p.clone();
        bad[1] ^= 1;
        assert_eq!(verify_payload(&bad), None);
        assert_eq!(verify_payload(b"short"), None);
    }
}
