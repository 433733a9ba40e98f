//! Streams in RDB (RDB_TYPE_STREAM_LISTPACKS_2, what Redis 7.0 writes): the nodes' listpacks
//! as they are, keyed by their 16-byte master IDs, then the stream's counters, then every
//! consumer group with its PEL (IDs, delivery times and counts) and its consumers (name,
//! seen-time, the IDs they hold).

use super::encode::{put_len, put_ms_time, put_raw_string};
use crate::types::stream::Stream;

/// rdbSaveObject for a stream.
pub fn put_stream(out: &mut Vec<u8>, s: &Stream, compress: bool) {
    put_len(out, s.node_count() as u64);
    for (master, lp) in s.listpacks() {
        put_raw_string(out, &master.be_bytes(), compress);
        put_raw_string(out, lp, compress);
    }
    let m = s.meta();
    put_len(out, m.length);
    for id in [m.last_id, m.first_id, m.max_deleted] {
        put_len(out, id.ms);
        put_len(out, id.seq);
    }
    put_len(out, m.entries_added);
    put_len(out, s.group_count() as u64);
    for (name, g) in s.groups() {
        put_raw_string(out, name, compress);
        put_len(out, g.last_id().ms);
        put_len(out, g.last_id().seq);
        // A long long written as a length: -1 (unknown) becomes 2^64-1.
        put_len(out, g.entries_read() as u64);
        put_len(out, g.pel_len() as u64);
        for (id, nack) in g.pel() {
            out.extend_from_slice(&id.be_bytes());
            put_ms_time(out, nack.delivery_time);
            put_len(out, nack.delivery_count);
        }
        put_len(out, g.consumer_count() as u64);
        for (cname, c) in g.consumers() {
            put_raw_string(out, cname, compress);
            put_ms_time(out, c.seen_time());
            put_len(out, c.pel_len() as u64);
            for (id, _) in g.consumer_pel(c) {
                out.extend_from_slice(&id.be_bytes());
            }
        }
    }
}
