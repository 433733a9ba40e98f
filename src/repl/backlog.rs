//! The master's replication history: the replication id and offset, and the backlog, the
//! last `repl-backlog-size` bytes of the replication stream, from which a replica that
//! reconnects with `PSYNC <replid> <offset>` is served the part it missed (`+CONTINUE`)
//! instead of a full resynchronization.

/// A fresh replication id: 40 random hex characters, as redis-server makes them.
pub fn new_replid() -> String {
    (0..40)
        .map(|_| char::from(b"0123456789abcdef"[fastrand::usize(..16)]))
        .collect()
}

/// The stream's history and position (Redis's repl_backlog with master_repl_offset).
pub struct Backlog {
    /// The ring of the last `capacity` bytes.
    ring: Vec<u8>,
    capacity: usize,
    /// Where the next byte goes in `ring`.
    idx: usize,
    /// Bytes held (at most `capacity`).
    histlen: usize,
    /// The offset of the last byte ever appended (master_repl_offset).
    offset: i64,
}

impl Backlog {
    /// An empty history of at most `capacity` bytes (repl-backlog-size), continuing from
    /// `offset`.
    pub fn new(capacity: usize, offset: i64) -> Backlog {
        Backlog {
            ring: Vec::new(),
            capacity: capacity.max(1),
            idx: 0,
            histlen: 0,
            offset,
        }
    }

    /// Move the whole history `by` bytes further on (rebaseReplicationBuffer): a master
    /// that restarted from its RDB file fed what it dropped at load into a history counted
    /// from 0, which continues the file's offset.
    pub fn rebase(&mut self, by: i64) {
        self.offset += by;
    }

    /// master_repl_offset: bytes ever appended to the stream.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// The first offset still held (repl_backlog_first_byte_offset).
    pub fn first_offset(&self) -> i64 {
        self.offset - self.histlen as i64 + 1
    }

    /// Bytes held (repl_backlog_histlen).
    pub fn histlen(&self) -> usize {
        self.histlen
    }

    /// The capacity (repl_backlog_size).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Append stream bytes.
    pub fn append(&mut self, mut data: &[u8]) {
        self.offset += data.len() as i64;
        if data.len() >= self.capacity {
            data = &data[data.len() - self.capacity..];
        }
        if self.ring.len() < self.capacity {
            // Grow lazily: a backlog nobody fills costs nothing.
            let room = self.capacity - self.ring.len();
            if self.idx == self.ring.len() {
                let n = data.len().min(room);
                self.ring.extend_from_slice(&data[..n]);
                self.idx = self.ring.len() % self.capacity;
                self.histlen = (self.histlen + n).min(self.capacity);
                data = &data[n..];
            }
        }
        while !data.is_empty() {
            let n = data.len().min(self.capacity - self.idx);
            self.ring[self.idx..self.idx + n].copy_from_slice(&data[..n]);
            self.idx = (self.idx + n) % self.capacity;
            self.histlen = (self.histlen + n).min(self.capacity);
            data = &data[n..];
        }
    }

    /// Resize (CONFIG SET repl-backlog-size): the history is kept up to the new capacity.
    pub fn resize(&mut self, capacity: usize) {
        let keep = self.since(self.offset - self.histlen.min(capacity) as i64 + 1);
        let offset = self.offset;
        *self = Backlog::new(
            capacity,
            offset - keep.as_ref().map_or(0, |k| k.len() as i64),
        );
        if let Some(k) = keep {
            self.append(&k);
        }
    }

    /// The stream from `psync_offset` (the first byte the replica lacks) to the end, if the
    /// history still holds it (masterTryPartialResynchronization's check).
    pub fn since(&self, psync_offset: i64) -> Option<Vec<u8>> {
        if psync_offset < self.first_offset() || psync_offset > self.offset + 1 {
            return None;
        }
        let skip = (psync_offset - self.first_offset()) as usize;
        let len = self.histlen - skip;
        let start = (self.idx + self.ring.len() - self.histlen + skip) % self.ring.len().max(1);
        let mut out = Vec::with_capacity(len);
        let first = len.min(self.ring.len() - start);
        out.extend_from_slice(&self.ring[start..start + first]);
        out.extend_from_slice(&self.ring[..len - first]);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_gets_exactly_the_bytes_after_its_offset_while_history_lasts() {
        let mut b = Backlog::new(10, 0);
        assert_eq!(b.since(1), Some(Vec::new()));
        b.append(b"abcdef");
        assert_eq!(b.offset(), 6);
        assert_eq!(b.first_offset(), 1);
        assert_eq!(b.since(3).as_deref(), Some(&b"cdef"[..]));
        b.append(b"ghijklm");
        assert_eq!(b.histlen(), 10);
        assert_eq!(b.first_offset(), 4);
        assert_eq!(b.since(4).as_deref(), Some(&b"defghijklm"[..]));
        assert_eq!(b.since(12).as_deref(), Some(&b"lm"[..]));
        assert_eq!(b.since(14).as_deref(), Some(&b""[..]));
        assert_eq!(b.since(3), None, "no longer held");
        assert_eq!(b.since(15), None, "beyond the stream");
        b.append(&[b'x'; 25]);
        assert_eq!(b.since(b.offset() - 9).as_deref(), Some(&[b'x'; 10][..]));
        b.resize(4);
        assert_eq!(b.first_offset(), b.offset() - 3);
        assert_eq!(b.since(b.offset() - 3).as_deref(), Some(&[b'x'; 4][..]));
        assert_eq!(new_replid().len(), 40);
    }
}
