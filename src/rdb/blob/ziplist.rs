//! Redis's ziplist blob (the packed encoding before 7.0, still read from old files): total
//! bytes u32, offset of the last entry u32, count u16 (65535: count them), entries, 0xFF.
//! An entry is the previous entry's length (1 byte, or 0xFE and 4 bytes), an encoding
//! (strings with 6-, 14- or 32-bit big-endian lengths; integers of 8, 16, 24, 32 or 64 bits
//! little-endian; 0..12 inside the encoding byte) and its data.

use super::Item;

const HDR: usize = 10;
const END: u8 = 0xFF;

/// The items of an untrusted ziplist blob, checked as ziplistValidateIntegrity does with
/// deep validation (sizes, terminator, each entry inside the blob, each previous-length
/// field right, the tail offset and the stated count); None if anything is wrong.
pub fn items(blob: &[u8]) -> Option<Vec<Item<'_>>> {
    if blob.len() < HDR + 1 {
        return None;
    }
    let total = u32::from_le_bytes(blob[..4].try_into().ok()?) as usize;
    let tail = u32::from_le_bytes(blob[4..8].try_into().ok()?) as usize;
    let stated = u16::from_le_bytes([blob[8], blob[9]]);
    if total != blob.len() || blob[blob.len() - 1] != END || tail > blob.len() - 1 {
        return None;
    }
    let last = blob.len() - 1;
    let mut out = Vec::new();
    let mut p = HDR;
    let mut prev_len = 0usize;
    let mut prev_start = None;
    while blob[p] != END {
        // Previous entry's length.
        let (prevlen, plen) = if blob[p] < 0xFE {
            (blob[p] as usize, 1)
        } else {
            let b = blob.get(p + 1..p + 5)?;
            (u32::from_le_bytes(b.try_into().ok()?) as usize, 5)
        };
        if prevlen != prev_len {
            return None;
        }
        let e = p + plen;
        if e >= last {
            return None;
        }
        let enc = blob[e];
        let byte = |i: usize| -> Option<usize> { (e + i < last).then(|| blob[e + i] as usize) };
        let (item, hlen, dlen): (Option<Item>, usize, usize) = match enc >> 6 {
            0 => (None, 1, (enc & 0x3f) as usize),
            1 => (None, 2, ((enc as usize & 0x3f) << 8) | byte(1)?),
            2 => {
                if enc != 0x80 {
                    return None;
                }
                let n = (byte(1)? << 24) | (byte(2)? << 16) | (byte(3)? << 8) | byte(4)?;
                (None, 5, n)
            }
            _ => {
                let w = match enc {
                    0xC0 => 2,
                    0xD0 => 4,
                    0xE0 => 8,
                    0xF0 => 3,
                    0xFE => 1,
                    0xF1..=0xFD => 0,
                    _ => return None,
                };
                let d = blob.get(e + 1..e + 1 + w)?;
                let v = match enc {
                    0xC0 => i16::from_le_bytes([d[0], d[1]]) as i64,
                    0xD0 => i32::from_le_bytes([d[0], d[1], d[2], d[3]]) as i64,
                    0xE0 => i64::from_le_bytes(d.try_into().ok()?),
                    0xF0 => (i32::from_le_bytes([0, d[0], d[1], d[2]]) >> 8) as i64,
                    0xFE => d[0] as i8 as i64,
                    _ => (enc & 0x0f) as i64 - 1,
                };
                (Some(Item::Int(v)), 1, w)
            }
        };
        let data = e + hlen;
        let end = data.checked_add(dlen)?;
        if end > last {
            return None;
        }
        out.push(item.unwrap_or(Item::Str(&blob[data..end])));
        prev_len = end - p;
        prev_start = Some(p);
        p = end;
    }
    if p != last {
        return None;
    }
    if let Some(s) = prev_start {
        if s != tail {
            return None;
        }
    }
    (stated == u16::MAX || stated as usize == out.len()).then_some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A ziplist as Redis 6 wrote one (for tests of the readers above it).
    pub(crate) fn build(items: &[Item]) -> Vec<u8> {
        let mut body = Vec::new();
        let mut prev = 0usize;
        let mut tail = HDR;
        for it in items {
            let start = body.len();
            tail = HDR + start;
            if prev < 254 {
                body.push(prev as u8);
            } else {
                body.push(0xFE);
                body.extend_from_slice(&(prev as u32).to_le_bytes());
            }
            match it {
                Item::Int(v) => {
                    let v = *v;
                    if (0..=12).contains(&v) {
                        body.push(0xF1 + v as u8);
                    } else if v as i8 as i64 == v {
                        body.push(0xFE);
                        body.push(v as i8 as u8);
                    } else if v as i16 as i64 == v {
                        body.push(0xC0);
                        body.extend_from_slice(&(v as i16).to_le_bytes());
                    } else if (-8_388_608..=8_388_607).contains(&v) {
                        body.push(0xF0);
                        body.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
                    } else if v as i32 as i64 == v {
                        body.push(0xD0);
                        body.extend_from_slice(&(v as i32).to_le_bytes());
                    } else {
                        body.push(0xE0);
                        body.extend_from_slice(&v.to_le_bytes());
                    }
                }
                Item::Str(s) => {
                    let n = s.len();
                    if n < 64 {
                        body.push(n as u8);
                    } else if n < 16384 {
                        body.push(0x40 | (n >> 8) as u8);
                        body.push(n as u8);
                    } else {
                        body.push(0x80);
                        body.extend_from_slice(&(n as u32).to_be_bytes());
                    }
                    body.extend_from_slice(s);
                }
            }
            prev = body.len() - start;
        }
        let mut out = Vec::new();
        out.extend_from_slice(&((HDR + body.len() + 1) as u32).to_le_bytes());
        out.extend_from_slice(&(tail as u32).to_le_bytes());
        out.extend_from_slice(&(items.len().min(65535) as u16).to_le_bytes());
        out.extend_from_slice(&body);
        out.push(END);
        out
    }

    #[test]
    fn every_ziplist_encoding_reads_back() {
        let long = vec![b'q'; 300];
        let huge = vec![b'h'; 20_000];
        let want = vec![
            Item::Int(0),
            Item::Int(12),
            Item::Int(-3),
            Item::Int(1000),
            Item::Int(-8_000_000),
            Item::Int(2_000_000_000),
            Item::Int(i64::MIN),
            Item::Str(b""),
            Item::Str(b"abc"),
            Item::Str(&long),
            Item::Str(&huge),
        ];
        let blob = build(&want);
        assert_eq!(items(&blob), Some(want));
    }

    #[test]
    fn corrupt_ziplists_are_refused() {
        let good = build(&[Item::Str(b"one"), Item::Int(2), Item::Str(b"three")]);
        assert!(items(&good).is_some());
        for n in 0..good.len() {
            assert!(items(&good[..n]).is_none(), "truncated at {n}");
        }
        let mut bad = good.clone();
        bad[4] += 1; // tail offset off by one
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[HDR + 5] = 9; // prevlen of the second entry
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[8] = 7; // count
        assert!(items(&bad).is_none());
        let mut bad = good.clone();
        bad[HDR + 1] = 60; // string runs past the end
        assert!(items(&bad).is_none());
    }
}
