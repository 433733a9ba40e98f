//! Redis's intset blob: encoding (2, 4 or 8: the width of every value) and count as u32
//! little-endian, then the values little-endian in strictly ascending order.

/// Serialize sorted distinct `values` at `width` bytes each (the width the set has reached,
/// which never shrinks in Redis; it must hold every value).
pub fn build(values: impl ExactSizeIterator<Item = i64>, width: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + values.len() * width);
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

/// The values of an untrusted intset blob, checked as intsetValidateIntegrity does with deep
/// validation (known width, size matching the count, not empty, strictly ascending).
pub fn values(blob: &[u8]) -> Option<Vec<i64>> {
    if blob.len() < 8 {
        return None;
    }
    let width = u32::from_le_bytes(blob[..4].try_into().ok()?) as usize;
    if !matches!(width, 2 | 4 | 8) {
        return None;
    }
    let count = u32::from_le_bytes(blob[4..8].try_into().ok()?) as usize;
    if count == 0 || 8 + count.checked_mul(width)? != blob.len() {
        return None;
    }
    let mut out = Vec::with_capacity(count);
    for c in blob[8..].chunks_exact(width) {
        let v = match width {
            2 => i16::from_le_bytes([c[0], c[1]]) as i64,
            4 => i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64,
            _ => i64::from_le_bytes(c.try_into().ok()?),
        };
        if out.last().is_some_and(|&prev| v <= prev) {
            return None;
        }
        out.push(v);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intsets_round_trip_and_bad_ones_are_refused() {
        let v = vec![-5i64, 0, 7, 300];
        let blob = build(v.iter().copied(), 2);
        assert_eq!(blob[..8], [2, 0, 0, 0, 4, 0, 0, 0]);
        assert_eq!(values(&blob), Some(v.clone()));
        let wide = build(v.iter().copied(), 8);
        assert_eq!(values(&wide), Some(v));
        assert_eq!(values(&build([3i64, 3].into_iter(), 2)), None);
        assert_eq!(values(&build([4i64, 3].into_iter(), 4)), None);
        assert_eq!(values(&build(std::iter::empty(), 2)), None);
        assert_eq!(values(&blob[..blob.len() - 1]), None);
        let mut bad_width = blob.clone();
        bad_width[0] = 3;
        assert_eq!(values(&bad_width), None);
    }
}
