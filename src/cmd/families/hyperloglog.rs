//! HyperLogLog: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST, with hyperloglog.c's replies,
//! errors and side effects. An HLL is a string value in Redis's own layout (`types::hll`), so
//! GET, SET, APPEND and SETRANGE see and change the same bytes redis-server keeps, and
//! corrupted values are caught as Redis catches them.
//!
//! Like Redis, PFCOUNT writes the cardinality it computed into the value's header (a read
//! command that signals the key modified), PFDEBUG GETREG/TODENSE convert a sparse value in
//! place without signalling, and every command that touches an existing HLL makes the string
//! raw-encoded (dbUnshareStringValue).

use crate::cmd::base::flags::*;
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::wrongtype;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind, Value};
use crate::reply::{CmdResult, Reply};
use crate::types::hll::{self, Encoding};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("pfadd", pfadd),
    Row::new("pfcount", pfcount).flags(MAY_REPLICATE),
    Row::new("pfmerge", pfmerge),
    Row::new("pfdebug", pfdebug),
    Row::new("pfselftest", pfselftest),
];

fn not_hll() -> RedisError {
    RedisError::new(error::HLL_NOT_VALID)
}

fn corrupt() -> RedisError {
    RedisError::new(error::HLL_CORRUPT)
}

fn sparse_max(ctx: &Ctx) -> u64 {
    ctx.state.config.read().hll_sparse_max_bytes
}

/// isHLLObjectOrReply on a value found at a key: a string with Redis's HLL header.
fn checked(v: &Value) -> Result<(&Bytes, Encoding), RedisError> {
    let Value::Str(s) = v else {
        return Err(wrongtype());
    };
    let enc = hll::check(s).map_err(|_| not_hll())?;
    Ok((s, enc))
}

/// The HLL at an entry as an owned buffer to change in place (dbUnshareStringValue): the
/// entry is marked raw and left empty until [`put_back`].
fn take(e: &mut Entry) -> Result<Vec<u8>, RedisError> {
    checked(&e.value)?;
    e.set_str_kind(StrKind::Raw);
    let Value::Str(s) = &mut e.value else {
        unreachable!("checked above")
    };
    Ok(Vec::from(std::mem::take(s)))
}

fn put_back(e: &mut Entry, v: Vec<u8>) {
    e.value = Value::Str(Bytes::from(v));
}

/// A new key's HLL value: raw-encoded, as createHLLObject's string is.
fn new_entry(v: Vec<u8>) -> Entry {
    let mut e = Entry::new(Value::Str(Bytes::from(v)));
    e.set_str_kind(StrKind::Raw);
    e
}

/// PFADD key [element ...]: 1 if the key was created or a register changed.
fn pfadd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let max = sparse_max(ctx);
    let updated = {
        let mut shard = ctx.db().lock(key);
        match shard.get_mut(key, ctx.now) {
            None => {
                let mut v = hll::new_sparse();
                let mut updated = 1;
                for ele in &a[2..] {
                    // A fresh sparse value is never corrupt.
                    if hll::add(&mut v, ele, max).unwrap_or(false) {
                        updated += 1;
                    }
                }
                hll::invalidate(&mut v);
                shard.insert(key, new_entry(v));
                updated
            }
            Some(e) => {
                let mut v = take(e)?;
                let mut updated = 0;
                let mut bad = false;
                for ele in &a[2..] {
                    match hll::add(&mut v, ele, max) {
                        Ok(true) => updated += 1,
                        Ok(false) => {}
                        Err(hll::Corrupt) => {
                            bad = true;
                            break;
                        }
                    }
                }
                if updated > 0 && !bad {
                    hll::invalidate(&mut v);
                }
                // Registers already raised stay raised, as in Redis's in-place update.
                put_back(e, v);
                if bad {
                    return Err(corrupt());
                }
                updated
            }
        }
    };
    if updated > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::STRING, "pfadd", key);
    }
    Ok(Reply::Int((updated > 0) as i64))
}

/// PFCOUNT key [key ...]: one key's cardinality (cached in its header), or the union's.
fn pfcount(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 2 {
        let mut max = Box::new([0u8; hll::REGISTERS]);
        for key in &a[1..] {
            let merged = {
                let mut shard = ctx.db().lock(key);
                shard.get(key, ctx.now).map(|e| {
                    let (s, _) = checked(&e.value)?;
                    hll::merge_into(&mut max, s).map_err(|_| corrupt())
                })
            };
            // A read lookup each (a keymiss for a missing key), as Redis's lookupKeyRead.
            note_read(ctx, key, merged.is_some());
            merged.transpose()?;
        }
        return Ok(Reply::Int(hll::count_raw(&max) as i64));
    }
    let key = &a[1];
    let found = {
        let mut shard = ctx.db().lock(key);
        let Some(e) = shard.get_mut(key, ctx.now) else {
            drop(shard);
            // Redis looks the key up for reading (PFCOUNT is a read-only command).
            note_read(ctx, key, false);
            return Ok(Reply::Int(0));
        };
        let mut v = match take(e) {
            Ok(v) => v,
            Err(e) => {
                drop(shard);
                note_read(ctx, key, true);
                return Err(e);
            }
        };
        let out = match hll::cached(&v) {
            Some(c) => Ok((c, false)),
            None => match hll::count(&v) {
                Ok(c) => {
                    hll::set_cached(&mut v, c);
                    Ok((c, true))
                }
                Err(_) => Err(corrupt()),
            },
        };
        put_back(e, v);
        out
    };
    note_read(ctx, key, true);
    let (card, recomputed) = found?;
    if recomputed {
        // The cache lives in the value: a read that changes the key (Redis propagates it).
        ctx.signal_modified(key);
    }
    Ok(Reply::Int(card as i64))
}

/// PFMERGE destkey [sourcekey ...]: the union of the sources and the destination, stored in
/// the destination (dense when any input is).
fn pfmerge(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut max = Box::new([0u8; hll::REGISTERS]);
    let mut use_dense = false;
    // Every argument, the destination included, is looked up for reading first (a keymiss for
    // each missing one), as Redis's lookupKeyRead loop.
    for key in &a[1..] {
        let merged = {
            let mut shard = ctx.db().lock(key);
            shard.get(key, ctx.now).map(|e| {
                let (s, enc) = checked(&e.value)?;
                use_dense |= enc == Encoding::Dense;
                hll::merge_into(&mut max, s).map_err(|_| corrupt())
            })
        };
        note_read(ctx, key, merged.is_some());
        merged.transpose()?;
    }
    let dest = &a[1];
    let max_bytes = sparse_max(ctx);
    {
        let mut shard = ctx.db().lock(dest);
        let (mut v, existing) = match shard.get_mut(dest, ctx.now) {
            None => (hll::new_sparse(), false),
            Some(e) => (take(e)?, true),
        };
        let mut result = Ok(());
        if use_dense && hll::check(&v) == Ok(Encoding::Sparse) {
            match hll::sparse_to_dense(&v) {
                Ok(d) => v = d,
                Err(_) => result = Err(corrupt()),
            }
        }
        if result.is_ok() {
            hll::store_raw(&mut v, &max, max_bytes);
        }
        if existing {
            let e = shard.peek_mut(dest, ctx.now).expect("looked up above");
            put_back(e, v);
        } else {
            shard.insert(dest, new_entry(v));
        }
        result?;
    }
    ctx.signal_modified(dest);
    // Redis raises `pfadd` for a merge too: it is a mass-add of elements.
    ctx.notify(notify::STRING, "pfadd", dest);
    Ok(Reply::ok())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
fn pfdebug(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (sub, key) = (&a[1], &a[2]);
    let mut shard = ctx.db().lock(key);
    let Some(e) = shard.get_mut(key, ctx.now) else {
        return Err(RedisError::new(error::PFDEBUG_NO_KEY));
    };
    let mut v = take(e)?;
    let sparse = hll::check(&v) == Ok(Encoding::Sparse);
    let lower = sub.to_ascii_lowercase();
    let out = match lower.as_slice() {
        b"getreg" | b"todense" => {
            let converted = if sparse {
                match hll::sparse_to_dense(&v) {
                    Ok(d) => {
                        v = d;
                        Ok(true)
                    }
                    Err(_) => Err(corrupt()),
                }
            } else {
                Ok(false)
            };
            converted.map(|conv| {
                if lower == b"todense" {
                    Reply::Int(conv as i64)
                } else {
                    Reply::Array(
                        hll::registers(&v)
                            .into_iter()
                            .map(|r| Reply::Int(r as i64))
                            .collect(),
                    )
                }
            })
        }
        b"decode" if sparse => Ok(Reply::bulk(hll::decode(&v))),
        b"decode" => Err(RedisError::new(error::HLL_NOT_SPARSE)),
        b"encoding" => Ok(Reply::Simple(Bytes::from_static(
            if sparse {
                Encoding::Sparse
            } else {
                Encoding::Dense
            }
            .name()
            .as_bytes(),
        ))),
        _ => Err(error::pfdebug_unknown(sub)),
    };
    put_back(e, v);
    out
}

/// PFSELFTEST: Redis's self-test of the register accessors and the estimator's error.
fn pfselftest(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let max = sparse_max(ctx);
    let mut rng = fastrand::Rng::new();
    match hll::selftest(max, || rng.u32(..) & 0x7fff_ffff) {
        Ok(()) => Ok(Reply::ok()),
        Err(text) => Err(error::err(format!("ERR {text}"))),
    }
}
