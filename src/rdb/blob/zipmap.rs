//! Redis's zipmap blob (hashes in files from Redis 2.4 and older): a count byte (254: count
//! them), then per pair the field length, field, value length, a free-space byte, value and
//! that much unused space; 0xFF ends it. A length is one byte below 254, else 0xFE and four
//! bytes little-endian.

const BIGLEN: u8 = 254;
const END: u8 = 0xFF;

/// The (field, value) pairs of an untrusted zipmap, checked as zipmapValidateIntegrity does
/// with deep validation; None if anything is wrong.
pub fn pairs(blob: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    if blob.len() < 2 || blob[blob.len() - 1] != END {
        return None;
    }
    let last = blob.len() - 1;
    let len_at = |p: usize| -> Option<(usize, usize)> {
        let b = *blob.get(p)?;
        if b < BIGLEN {
            Some((b as usize, 1))
        } else {
            let v = blob.get(p + 1..p + 5)?;
            Some((u32::from_le_bytes(v.try_into().ok()?) as usize, 5))
        }
    };
    let mut out = Vec::new();
    let mut p = 1;
    while blob[p] != END {
        let (flen, s) = len_at(p)?;
        if p + s > last {
            return None;
        }
        let field = p + s;
        let fend = field.checked_add(flen)?;
        if fend > last {
            return None;
        }
        let (vlen, s) = len_at(fend)?;
        let free_at = fend + s;
        if free_at > last {
            return None;
        }
        let free = blob[free_at] as usize;
        let value = free_at + 1;
        let vend = value.checked_add(vlen)?;
        let next = vend.checked_add(free)?;
        if next > last {
            return None;
        }
        out.push((&blob[field..fend], &blob[value..vend]));
        p = next;
    }
    if out.is_empty() || (blob[0] != BIGLEN && blob[0] as usize != out.len()) {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn build(pairs: &[(&[u8], &[u8])], free: u8) -> Vec<u8> {
        let mut out = vec![pairs.len().min(254) as u8];
        let len = |out: &mut Vec<u8>, n: usize| {
            if n < 254 {
                out.push(n as u8);
            } else {
                out.push(BIGLEN);
                out.extend_from_slice(&(n as u32).to_le_bytes());
            }
        };
        for (f, v) in pairs {
            len(&mut out, f.len());
            out.extend_from_slice(f);
            len(&mut out, v.len());
            out.push(free);
            out.extend_from_slice(v);
            out.extend(std::iter::repeat_n(0, free as usize));
        }
        out.push(END);
        out
    }

    #[test]
    fn zipmaps_read_back_with_free_space_and_long_values() {
        let long = vec![b'v'; 300];
        let want: Vec<(&[u8], &[u8])> = vec![(b"a", b"1"), (b"field", &long), (b"", b"")];
        for free in [0, 3] {
            assert_eq!(pairs(&build(&want, free)), Some(want.clone()));
        }
        let good = build(&want, 2);
        for n in 0..good.len() {
            assert!(pairs(&good[..n]).is_none(), "truncated at {n}");
        }
        let mut bad = good.clone();
        bad[0] = 5;
        assert!(pairs(&bad).is_none());
        assert!(pairs(&[0, END]).is_none());
    }
}
