//! Whole RDB files as redis-server 7.0 writes them, version 10:
//!
//! ```text
//! "REDIS0010"
//! AUX redis-ver, redis-bits, ctime, used-mem, [repl-stream-db, repl-id, repl-offset], aof-base
//! FUNCTION2 <library code>                                  (one per library)
//! SELECTDB n  RESIZEDB keys expires                         (per non-empty database)
//!   [EXPIRETIME_MS t] [IDLE s | FREQ f] <type> <key> <value>  (per key)
//! EOF <CRC-64, little-endian; 0 when rdbchecksum is off>
//! ```
//!
//! and the loader for that and every older version (1..=10) redis-server 7.0 reads, which
//! hands what it finds to the caller as [`Event`]s and logs what redis-server logs.

use super::crc::crc64;
use super::decode::RDB_VERSION;
use super::decode::{Decoder, LoadError, Source};
use super::encode::{put_len, put_ms_time, put_raw_string};
use super::object::{self, read_object, Limits};
use crate::keyspace::access::{self, AccessPolicy};
use crate::keyspace::{Entry, Value};
use crate::log;
use std::io::{self, Write};

/// Opcodes (rdb.h).
#[allow(missing_docs)]
pub mod opcode {
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// What a file records about the server that wrote it (rdbSaveInfoAuxFields).
#[derive(Clone, Debug, Default)]
pub struct Aux {
    /// Unix seconds at the save.
    pub ctime: i64,
    /// used_memory at the save.
    pub used_mem: u64,
    /// The file is the base of an AOF (aof-base 1).
    pub aof_base: bool,
    /// Replication state, written for a replica's full synchronization.
    pub repl: Option<ReplAux>,
}

/// The replication fields of a file written for a replica.
#[derive(Clone, Debug)]
pub struct ReplAux {
    /// The database the replication stream has selected.
    pub stream_db: i64,
    /// The master's replication id (40 hex characters).
    pub id: String,
    /// The replication offset the file stands at.
    pub offset: i64,
}

/// Which access record each key carries, as maxmemory-policy decides (rdbSaveKeyValuePair).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessSave {
    /// Neither (policies without LRU or LFU, e.g. noeviction).
    None,
    /// The idle time in seconds (an LRU policy).
    Lru,
    /// The LFU counter, decayed to the save time (an LFU policy).
    Lfu(AccessPolicy),
}

/// How key records are written.
#[derive(Clone, Copy, Debug)]
pub struct KeyFormat {
    /// rdbcompression.
    pub compress: bool,
    /// The access record to write.
    pub access: AccessSave,
    /// The time idle times and counters are taken at (Unix ms).
    pub now_ms: i64,
}

/// Append one key record (rdbSaveKeyValuePair): its expiry, access record, type, key and value.
pub fn put_key(out: &mut Vec<u8>, key: &[u8], entry: &Entry, f: &KeyFormat) {
    let at = entry.expires_at();
    if at != 0 {
        out.push(opcode::EXPIRETIME_MS);
        put_ms_time(out, at);
    }
    match f.access {
        AccessSave::None => {}
        AccessSave::Lru => {
            out.push(opcode::IDLE);
            put_len(out, entry.idle_ms(f.now_ms) / 1000);
        }
        AccessSave::Lfu(p) => {
            out.push(opcode::FREQ);
            out.push(entry.lfu_freq(f.now_ms, p));
        }
    }
    out.push(object::object_type(&entry.value));
    put_raw_string(out, key, f.compress);
    object::put_object(out, &entry.value, f.compress);
}

/// Writes a file: the header and aux fields first, then whatever the caller adds (functions,
/// databases and their key records), then the EOF opcode and checksum.
pub struct FileWriter<W: Write> {
    out: W,
    crc: u64,
    checksum: bool,
    written: u64,
}

impl<W: Write> FileWriter<W> {
    /// Start a file on `out` with the magic and the aux fields; `checksum` is rdbchecksum.
    pub fn begin(out: W, aux: &Aux, checksum: bool) -> io::Result<Self> {
        let mut w = FileWriter {
            out,
            crc: 0,
            checksum,
            written: 0,
        };
        let mut b = format!("REDIS{RDB_VERSION:04}").into_bytes();
        let mut field = |k: &str, v: &[u8]| {
            b.push(opcode::AUX);
            put_raw_string(&mut b, k.as_bytes(), false);
            put_raw_string(&mut b, v, false);
        };
        let int = |v: i64| v.to_string().into_bytes();
        field("redis-ver", crate::version::REDIS_VERSION.as_bytes());
        field("redis-bits", b"64");
        field("ctime", &int(aux.ctime));
        field("used-mem", &int(aux.used_mem as i64));
        if let Some(r) = &aux.repl {
            field("repl-stream-db", &int(r.stream_db));
            field("repl-id", r.id.as_bytes());
            field("repl-offset", &int(r.offset));
        }
        field("aof-base", &int(aux.aof_base as i64));
        w.write(&b)?;
        Ok(w)
    }

    /// Append bytes (already-encoded records).
    pub fn write(&mut self, b: &[u8]) -> io::Result<()> {
        if self.checksum {
            self.crc = crc64(self.crc, b);
        }
        self.written += b.len() as u64;
        self.out.write_all(b)
    }

    /// A function library's code (RDB_OPCODE_FUNCTION2).
    pub fn function(&mut self, code: &[u8], compress: bool) -> io::Result<()> {
        let mut b = vec![opcode::FUNCTION2];
        put_raw_string(&mut b, code, compress);
        self.write(&b)
    }

    /// Start database `db` holding `keys` keys, `expires` of them with a TTL.
    pub fn select_db(&mut self, db: usize, keys: u64, expires: u64) -> io::Result<()> {
        let mut b = vec![opcode::SELECTDB];
        put_len(&mut b, db as u64);
        b.push(opcode::RESIZEDB);
        put_len(&mut b, keys);
        put_len(&mut b, expires);
        self.write(&b)
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// End the file: the EOF opcode and the checksum. Returns the writer (to flush and sync).
    pub fn finish(mut self) -> io::Result<W> {
        self.write(&[opcode::EOF])?;
        let crc = if self.checksum { self.crc } else { 0 };
        self.out.write_all(&crc.to_le_bytes())?;
        self.written += 8;
        Ok(self.out)
    }
}

/// How a file is loaded.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// The server's `databases`.
    pub databases: usize,
    /// The encoding settings loaded values follow.
    pub limits: Limits,
    /// Unix ms now: keys that expired before it are dropped when `drop_expired`, and access
    /// records are set relative to it.
    pub now_ms: i64,
    /// Drop keys already expired (a master loading its own file, not an AOF preamble).
    pub drop_expired: bool,
    /// rdbchecksum: verify the footer (a zero footer is never checked).
    pub checksum: bool,
    /// maxmemory-policy's access record kind, for IDLE/FREQ opcodes and fresh keys.
    pub policy: AccessPolicy,
    /// Log what redis-server logs while loading (the aux fields, skipped keys, the summary).
    pub log: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            databases: 16,
            limits: Limits::default(),
            now_ms: 0,
            drop_expired: true,
            checksum: true,
            policy: AccessPolicy::default(),
            log: false,
        }
    }
}

/// Something found in a file, in file order.
pub enum Event {
    /// An aux field.
    Aux(Vec<u8>, Vec<u8>),
    /// A function library's code (already translated from 7.0-rc's format).
    Function(Vec<u8>),
    /// The key counts announced for a database (a sizing hint).
    ResizeDb {
        /// The database.
        db: usize,
        /// Keys.
        keys: u64,
        /// Keys with a TTL.
        expires: u64,
    },
    /// A key to store.
    Key {
        /// Its database.
        db: usize,
        /// The key.
        key: Vec<u8>,
        /// Its value, expiry and access record.
        entry: Entry,
    },
    /// A key left out because its time had already passed (`drop_expired`): a master that
    /// restarts tells its replicas with a DEL (rdbLoadRioWithLoadingCtx's RDBFLAGS_FEED_REPL).
    Expired {
        /// Its database.
        db: usize,
        /// The key.
        key: Vec<u8>,
    },
}

/// What a finished load found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadSummary {
    /// The file's RDB version.
    pub version: u32,
    /// Keys handed to the caller (rdb_last_load_keys_loaded).
    pub keys_loaded: u64,
    /// Keys dropped as already expired (rdb_last_load_keys_expired).
    pub keys_expired: u64,
    /// Empty aggregates skipped.
    pub empty_keys_skipped: u64,
}

/// Read the 9-byte header: "REDIS" and a version this server reads.
pub fn read_header<S: Source>(r: &mut Decoder<S>, log_errors: bool) -> Result<u32, LoadError> {
    let magic: [u8; 9] = r.read_array()?;
    let fail = |e: LoadError| {
        if log_errors {
            log::warning(&e.to_string());
        }
        e
    };
    if &magic[..5] != b"REDIS" {
        return Err(fail(LoadError::Signature));
    }
    // atoi: leading digits, anything after them ignored.
    let digits: String = magic[5..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .map(|&b| b as char)
        .collect();
    let version: u32 = digits.parse().unwrap_or(0);
    if version < 1 || version > RDB_VERSION as u32 {
        return Err(fail(LoadError::Version(version)));
    }
    Ok(version)
}

/// rdbLoadRio after the header: every opcode and key up to EOF, then the checksum, each
/// thing found handed to `sink` in order. Stops at the first error (the caller decides what
/// a partial load means; redis-server exits).
pub fn load_body<S: Source>(
    r: &mut Decoder<S>,
    version: u32,
    opts: &LoadOptions,
    sink: &mut dyn FnMut(Event) -> Result<(), LoadError>,
) -> Result<LoadSummary, LoadError> {
    let mut summary = LoadSummary {
        version,
        ..Default::default()
    };
    let mut db = 0usize;
    let (mut expire, mut idle, mut freq): (Option<i64>, Option<u64>, Option<u8>) =
        (None, None, None);
    loop {
        let t = r.read_u8()?;
        match t {
            opcode::EXPIRETIME => {
                expire = Some(r.read_secs_time()? * 1000);
                continue;
            }
            opcode::EXPIRETIME_MS => {
                expire = Some(r.read_ms_time()?);
                continue;
            }
            opcode::FREQ => {
                freq = Some(r.read_u8()?);
                continue;
            }
            opcode::IDLE => {
                idle = Some(r.read_len()?);
                continue;
            }
            opcode::EOF => break,
            opcode::SELECTDB => {
                let n = r.read_len()?;
                if n >= opts.databases as u64 {
                    return Err(LoadError::TooManyDbs {
                        databases: opts.databases,
                    });
                }
                db = n as usize;
                continue;
            }
            opcode::RESIZEDB => {
                let keys = r.read_len()?;
                let expires = r.read_len()?;
                sink(Event::ResizeDb { db, keys, expires })?;
                continue;
            }
            opcode::AUX => {
                let k = r.read_string()?;
                let v = r.read_string()?;
                if opts.log {
                    log_aux(&k, &v, opts.now_ms);
                }
                sink(Event::Aux(k, v))?;
                continue;
            }
            opcode::MODULE_AUX => {
                let id = r.read_len()?;
                let _when_opcode = r.read_len()?;
                let _when = r.read_len()?;
                return Err(LoadError::Module(format!(
                    "The RDB file contains AUX module data I can't load: no matching module '{}'",
                    object::module_type_name(id)
                )));
            }
            opcode::FUNCTION | opcode::FUNCTION2 => {
                let code = read_function(r, t)?;
                sink(Event::Function(code))?;
                continue;
            }
            _ => {}
        }
        let key = r.read_string()?;
        let value = read_object(r, t, &opts.limits)?;
        let (e, i, f) = (expire.take(), idle.take(), freq.take());
        let Some(value) = value else {
            summary.empty_keys_skipped += 1;
            if opts.log && summary.empty_keys_skipped <= 10 {
                log::warning(&format!(
                    "rdbLoadObject skipping empty key: {}",
                    String::from_utf8_lossy(&key)
                ));
            }
            continue;
        };
        if opts.drop_expired && e.is_some_and(|at| at < opts.now_ms) {
            summary.keys_expired += 1;
            sink(Event::Expired { db, key })?;
            continue;
        }
        let entry = make_entry(value, e, i, f, opts.now_ms, opts.policy);
        summary.keys_loaded += 1;
        sink(Event::Key { db, key, entry })?;
    }
    if version >= 5 {
        let expected = r.crc();
        let got = u64::from_le_bytes(r.read_array()?);
        if opts.checksum {
            if got == 0 {
                if opts.log {
                    log::warning("RDB file was saved with checksum disabled: no check performed.");
                }
            } else if got != expected {
                return Err(LoadError::Checksum { expected, got });
            }
        }
    }
    if opts.log {
        if summary.empty_keys_skipped > 0 {
            log::warning(&format!(
                "Done loading RDB, keys loaded: {}, keys expired: {}, empty keys skipped: {}.",
                summary.keys_loaded, summary.keys_expired, summary.empty_keys_skipped
            ));
        } else {
            log::notice(&format!(
                "Done loading RDB, keys loaded: {}, keys expired: {}.",
                summary.keys_loaded, summary.keys_expired
            ));
        }
    }
    Ok(summary)
}

/// A loaded value as an entry: its expiry, and the access record the file gave it
/// (objectSetLRUOrLFU), else a fresh one.
pub fn make_entry(
    value: Value,
    expire: Option<i64>,
    idle: Option<u64>,
    freq: Option<u8>,
    now_ms: i64,
    policy: AccessPolicy,
) -> Entry {
    let mut entry = Entry::with_expiry(value, 0);
    let a = match (policy.lfu, freq, idle) {
        (true, Some(f), _) => access::from_freq(now_ms, f),
        (false, _, Some(i)) => access::from_idle(now_ms, i),
        _ => access::initial(now_ms, policy),
    };
    entry.set_access(a);
    if let Some(at) = expire {
        entry.set_expires_at(if at == 0 { 1 } else { at });
    }
    entry
}

/// rdbFunctionLoad's reading half: the library's code, with 7.0-rc's separate name, engine
/// and description folded into the code's shebang line as 7.0 does.
fn read_function<S: Source>(r: &mut Decoder<S>, t: u8) -> Result<Vec<u8>, LoadError> {
    if t == opcode::FUNCTION2 {
        return r
            .read_string()
            .map_err(|_| LoadError::Function("Failed loading library payload".into()));
    }
    let name = r
        .read_string()
        .map_err(|_| LoadError::Function("Failed loading library name".into()))?;
    let engine = r
        .read_string()
        .map_err(|_| LoadError::Function("Failed loading engine name".into()))?;
    let has_desc = r
        .read_len()
        .map_err(|_| LoadError::Function("Failed loading library description indicator".into()))?;
    if has_desc != 0 {
        r.read_string()
            .map_err(|_| LoadError::Function("Failed loading library description".into()))?;
    }
    let blob = r
        .read_string()
        .map_err(|_| LoadError::Function("Failed loading library blob".into()))?;
    let mut code = b"#!".to_vec();
    code.extend_from_slice(&engine);
    code.extend_from_slice(b" name=");
    code.extend_from_slice(&name);
    code.push(b'\n');
    code.extend_from_slice(&blob);
    Ok(code)
}

/// The notices rdbLoadRio logs for the aux fields it knows.
fn log_aux(k: &[u8], v: &[u8], now_ms: i64) {
    let vs = String::from_utf8_lossy(v);
    let num = || -> i64 {
        let digits: String = vs
            .trim_start()
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .collect();
        digits.parse().unwrap_or(0)
    };
    if k.first() == Some(&b'%') {
        log::notice(&format!("RDB '{}': {vs}", String::from_utf8_lossy(k)));
        return;
    }
    match k.to_ascii_lowercase().as_slice() {
        b"redis-ver" => log::notice(&format!("Loading RDB produced by version {vs}")),
        b"ctime" => {
            let age = (now_ms / 1000 - num()).max(0);
            log::notice(&format!("RDB age {age} seconds"));
        }
        b"used-mem" => log::notice(&format!(
            "RDB memory usage when created {:.2} Mb",
            num() as f64 / (1024.0 * 1024.0)
        )),
        b"aof-preamble" if num() != 0 => log::notice("RDB has an AOF tail"),
        b"aof-base" if num() != 0 => log::notice("RDB is base AOF"),
        _ => {}
    }
}
