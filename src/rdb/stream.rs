//! Streams in RDB (RDB_TYPE_STREAM_LISTPACKS_2, what Redis 7.0 writes): the nodes' listpacks
//! as they are, keyed by their 16-byte master IDs, then the stream's counters, then every
//! consumer group with its PEL (IDs, delivery times and counts) and its consumers (name,
//! seen-time, the IDs they hold).

use super::decode::{Decoder, LoadError, Source};
use super::encode::{put_len, put_ms_time, put_raw_string};
use crate::types::stream::{
    LoadIssue, LoadPelIssue, SavedCounters, Stream, StreamId, INVALID_ENTRIES_READ,
};

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

/// A stream ID as saved: two lengths.
fn read_id<S: Source>(r: &mut Decoder<S>) -> Result<StreamId, LoadError> {
    let ms = r.read_len()?;
    Ok(StreamId::new(ms, r.read_len()?))
}

/// The 16 raw big-endian bytes of a PEL ID.
fn read_raw_id<S: Source>(
    r: &mut Decoder<S>,
    line: u32,
    what: &str,
) -> Result<StreamId, LoadError> {
    let b: [u8; 16] = r.read_array().map_err(|_| LoadError::read(line, what))?;
    let k = u128::from_be_bytes(b);
    Ok(StreamId::new((k >> 64) as u64, k as u64))
}

/// rdbLoadObject for RDB_TYPE_STREAM_LISTPACKS (before 7.0: no first ID, deleted ID, added
/// count or group read counters, which are then worked out) and _2, with rdb.c's reports
/// (and its lines). Every listpack is checked in depth, whatever sanitize-dump-payload says:
/// a damaged one must not reach the commands.
pub fn read_stream<S: Source>(r: &mut Decoder<S>, v2: bool) -> Result<Stream, LoadError> {
    let nodes_n = r
        .read_len()
        .map_err(|_| LoadError::read(2325, "Stream listpacks len loading failed."))?;
    let mut nodes = Vec::new();
    for _ in 0..nodes_n {
        let key = r.read_string().map_err(|_| {
            LoadError::read(
                2336,
                "Stream master ID loading failed: invalid encoding or I/O error.",
            )
        })?;
        if key.len() != 16 {
            return Err(LoadError::corrupt(
                2341,
                "Stream node key entry is not the size of a stream ID",
            ));
        }
        let lp = r
            .read_string()
            .map_err(|_| LoadError::read(2353, "Stream listpacks loading failed."))?;
        nodes.push((key, lp));
    }
    let meta = (|| -> Result<SavedCounters, LoadError> {
        let length = r.read_len()?;
        let last_id = read_id(r)?;
        let (first_id, max_deleted, entries_added) = if v2 {
            (Some(read_id(r)?), read_id(r)?, r.read_len()?)
        } else {
            (None, StreamId::MIN, length)
        };
        Ok(SavedCounters {
            length,
            last_id,
            first_id,
            max_deleted,
            entries_added,
        })
    })()
    .map_err(|_| LoadError::read(2422, "Stream object metadata loading failed."))?;
    let mut s = Stream::from_saved(nodes, meta).map_err(|e| match e {
        LoadIssue::NodeKeySize => {
            LoadError::corrupt(2341, "Stream node key entry is not the size of a stream ID")
        }
        LoadIssue::Integrity => LoadError::corrupt(2360, "Stream listpack integrity check failed."),
        LoadIssue::EmptyNode => LoadError::corrupt(2372, "Empty listpack inside stream"),
        LoadIssue::DuplicateNode => LoadError::corrupt(2384, "Listpack re-added with existing key"),
        LoadIssue::Length => {
            LoadError::corrupt(2428, "Stream length inconsistent with rax entries")
        }
    })?;
    let groups = r
        .read_len()
        .map_err(|_| LoadError::read(2436, "Stream cgroup count loading failed."))?;
    for _ in 0..groups {
        let name = r.read_string().map_err(|_| {
            LoadError::read(2447, "Error reading the consumer group name from Stream")
        })?;
        let last =
            read_id(r).map_err(|_| LoadError::read(2456, "Stream cgroup ID loading failed."))?;
        let entries_read = if v2 {
            r.read_len()
                .map_err(|_| LoadError::read(2467, "Stream cgroup offset loading failed."))?
                as i64
        } else {
            s.meta()
                .distance_from_first(last)
                .unwrap_or(INVALID_ENTRIES_READ)
        };
        if !s.create_group(&name, last, entries_read) {
            return Err(LoadError::corrupt(
                2478,
                format!(
                    "Duplicated consumer group name {}",
                    String::from_utf8_lossy(&name)
                ),
            ));
        }
        let g = s.group_mut(&name).expect("just created");
        let pel = r
            .read_len()
            .map_err(|_| LoadError::read(2493, "Stream PEL size loading failed."))?;
        for _ in 0..pel {
            let id = read_raw_id(r, 2500, "Stream PEL ID loading failed.")?;
            let nack =
                (|| -> Result<(i64, u64), LoadError> { Ok((r.read_ms_time()?, r.read_len()?)) })()
                    .map_err(|_| LoadError::read(2508, "Stream PEL NACK loading failed."))?;
            if !g.load_nack(id, nack.0, nack.1) {
                return Err(LoadError::corrupt(
                    2514,
                    "Duplicated global PEL entry loading stream consumer group",
                ));
            }
        }
        let consumers = r
            .read_len()
            .map_err(|_| LoadError::read(2526, "Stream consumers num loading failed."))?;
        for _ in 0..consumers {
            let cname = r.read_string().map_err(|_| {
                LoadError::read(2533, "Error reading the consumer name from Stream group.")
            })?;
            if g.consumer(&cname).is_some() {
                return Err(LoadError::corrupt(
                    2542,
                    "Duplicate stream consumer detected.",
                ));
            }
            let seen = r
                .read_ms_time()
                .map_err(|_| LoadError::read(2548, "Stream short read reading seen time."))?;
            g.load_consumer(&cname, seen);
            let n = r
                .read_len()
                .map_err(|_| LoadError::read(2557, "Stream consumer PEL num loading failed."))?;
            for _ in 0..n {
                let id = read_raw_id(r, 2565, "Stream short read reading PEL streamID.")?;
                g.load_consumer_pel(&cname, id).map_err(|e| match e {
                    LoadPelIssue::NotInGroup => {
                        LoadError::corrupt(2572, "Consumer entry not found in group global PEL")
                    }
                    LoadPelIssue::Duplicate => LoadError::corrupt(
                        2583,
                        "Duplicated consumer PEL entry  loading a stream consumer group",
                    ),
                })?;
            }
        }
        // Redis checks this only when sanitizing payloads; an entry without an owner would
        // break XPENDING and the claims here, so it is always checked.
        if !g.every_nack_owned() {
            return Err(LoadError::corrupt(
                2602,
                "Stream CG PEL entry without consumer",
            ));
        }
    }
    Ok(s)
}
