//! What persistence reads from the configuration: where files go, how they are written, the
//! `save` points, and the encodings loaded values take.

use crate::config::Config;
use crate::keyspace::AccessPolicy;
use crate::rdb::file::AccessSave;
use crate::rdb::object::Limits;
use std::path::PathBuf;

/// The working directory files go to (`dir`; the process's own when unset).
pub fn dir(c: &Config) -> PathBuf {
    c.dir.clone().unwrap_or_else(|| PathBuf::from("."))
}

/// The RDB file (`dir`/`dbfilename`).
pub fn rdb_path(c: &Config) -> PathBuf {
    dir(c).join(c.get("dbfilename").unwrap_or_else(|| "dump.rdb".into()))
}

/// The append-only directory (`dir`/`appenddirname`).
pub fn aof_dir(c: &Config) -> PathBuf {
    dir(c).join(
        c.get("appenddirname")
            .unwrap_or_else(|| "appendonlydir".into()),
    )
}

/// `appendfilename`, the stem of the AOF files and the manifest's name.
pub fn appendfilename(c: &Config) -> String {
    c.get("appendfilename")
        .unwrap_or_else(|| "appendonly.aof".into())
}

fn yes(c: &Config, name: &str, default: bool) -> bool {
    c.get(name).map_or(default, |v| v == "yes")
}

/// rdbcompression: long strings in files and DUMP payloads are LZF-compressed.
pub fn compression(c: &Config) -> bool {
    yes(c, "rdbcompression", true)
}

/// rdbchecksum: files carry (and loads verify) a CRC-64.
pub fn checksum(c: &Config) -> bool {
    yes(c, "rdbchecksum", true)
}

/// stop-writes-on-bgsave-error.
pub fn stop_writes_on_bgsave_error(c: &Config) -> bool {
    yes(c, "stop-writes-on-bgsave-error", true)
}

/// aof-load-truncated.
pub fn aof_load_truncated(c: &Config) -> bool {
    yes(c, "aof-load-truncated", true)
}

/// aof-use-rdb-preamble: a rewrite's base file is an RDB (else commands).
pub fn aof_use_rdb_preamble(c: &Config) -> bool {
    yes(c, "aof-use-rdb-preamble", true)
}

/// appendonly.
pub fn aof_enabled(c: &Config) -> bool {
    c.appendonly.eq_ignore_ascii_case("yes")
}

/// The `save` points: (seconds, changes) pairs, as `save 3600 1 300 100` lists them.
pub fn save_points(c: &Config) -> Vec<(i64, u64)> {
    let words: Vec<&str> = c.save.split_whitespace().collect();
    words
        .chunks_exact(2)
        .filter_map(|p| Some((p[0].parse().ok()?, p[1].parse().ok()?)))
        .collect()
}

/// Which access record keys are saved with (MAXMEMORY_FLAG_LRU / _LFU of the policy).
pub fn access_save(c: &Config, policy: AccessPolicy) -> AccessSave {
    let p = c.maxmemory_policy.as_str();
    if p.ends_with("-lfu") {
        AccessSave::Lfu(policy)
    } else if p.ends_with("-lru") {
        AccessSave::Lru
    } else {
        AccessSave::None
    }
}

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
