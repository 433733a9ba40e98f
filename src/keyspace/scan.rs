//! SCAN-style iteration in hash order. The cursor is the next hash value to visit, so every
//! element present for the whole iteration is returned exactly once (Redis's guarantee)
//! whatever is inserted or removed in between, without keeping state on the server.

/// One page of a scan: the items and the cursor to send back (0 when done).
pub struct ScanPage<T> {
    pub cursor: u64,
    pub items: Vec<T>,
}

/// Scan `items` (each with its 64-bit hash) from `cursor`, returning about `count` of them.
/// Items with equal hashes are never split across pages.
pub fn scan_by_hash<T>(
    items: impl Iterator<Item = (u64, T)>,
    cursor: u64,
    count: usize,
) -> ScanPage<T> {
    let mut v: Vec<(u64, T)> = items.filter(|(h, _)| *h >= cursor).collect();
    v.sort_unstable_by_key(|(h, _)| *h);
    let count = count.max(1);
    if v.len() <= count {
        return ScanPage {
            cursor: 0,
            items: v.into_iter().map(|(_, t)| t).collect(),
        };
    }
    let mut end = count;
    while end < v.len() && v[end].0 == v[end - 1].0 {
        end += 1;
    }
    let next = if end < v.len() { v[end].0 } else { 0 };
    v.truncate(end);
    ScanPage {
        cursor: next,
        items: v.into_iter().map(|(_, t)| t).collect(),
    }
}
