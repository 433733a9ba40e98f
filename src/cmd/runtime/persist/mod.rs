//! Persistence: what the RDB and AOF files need from the server's configuration, the saves
//! (SAVE, BGSAVE and the `save` rules), loading at start, and the append-only log.

pub mod registry;

use crate::cmd::runtime::state::ServerState;
use crate::config::Config;
use crate::rdb::object::Limits;
use bytes::Bytes;

/// The encoding settings a loaded or restored value follows.
pub fn load_limits(c: &Config) -> Limits {
    Limits {
        list_fill: c.list_max_listpack_size,
        set_max_intset_entries: c.set_max_intset_entries as usize,
        zset: crate::types::zset::ZSetLimits {
            max_listpack_entries: c.zset_max_listpack_entries as usize,
            max_listpack_value: c.zset_max_listpack_value as usize,
        },
    }
}

/// rdbcompression: long strings in files and DUMP payloads are LZF-compressed.
pub fn compression(c: &Config) -> bool {
    c.get("rdbcompression").is_none_or(|v| v == "yes")
}

/// Append one propagated command to the AOF, when it is on.
pub fn aof_feed(state: &ServerState, db: usize, args: &[Bytes]) {
    if let Some(aof) = state.persist.aof.read().as_ref() {
        let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        aof.feed(db, &refs, state.clock.now_ms() / 1000);
    }
}

/// Before replies leave: the AOF holds (and under `appendfsync always` has synced) every
/// effect appended so far, so no client sees a write that a crash could take back. Blocks
/// for the write (and the fsync).
pub fn before_reply(state: &ServerState) {
    let aof = state.persist.aof.read().clone();
    if let Some(aof) = aof {
        let upto = aof.appended();
        if !aof.is_flushed(upto) {
            crate::cmd::runtime::handoff::blocking(|| aof.flush_to(upto));
        }
    }
}
