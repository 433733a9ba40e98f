//! The order both encodings of a sorted set keep: by score, then by member bytes.

use std::cmp::Ordering;

/// (score, member) ordering, as zslInsert and zzlInsert compare: score, then memcmp with a
/// prefix first.
pub(super) fn cmp_entry(s1: f64, m1: &[u8], s2: f64, m2: &[u8]) -> Ordering {
    if s1 < s2 {
        Ordering::Less
    } else if s1 > s2 {
        Ordering::Greater
    } else {
        m1.cmp(m2)
    }
}
