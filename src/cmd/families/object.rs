//! OBJECT ENCODING, REFCOUNT, IDLETIME, FREQ and HELP: a key's value as Redis's object layer
//! would hold it. Lookups do not count as accesses (Redis's LOOKUP_NOTOUCH), so asking never
//! changes the answer.

use crate::cmd::base::help::help_reply;
use crate::cmd::families::keys::count_lookup;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::keyspace::{Entry, StrKind};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("object", container).subs(OBJECT_SUBS)];

const OBJECT_SUBS: &[Row] = &[
    Row::new("encoding", encoding),
    Row::new("freq", freq),
    Row::new("idletime", idletime),
    Row::new("refcount", refcount),
    Row::new("help", help),
];

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

/// Redis's OBJ_SHARED_REFCOUNT: the refcount of the shared integers 0..9999.
const SHARED_REFCOUNT: i64 = i32::MAX as i64;
/// Redis's OBJ_SHARED_INTEGERS.
const SHARED_INTEGERS: i64 = 10_000;

/// Redis's objectCommandLookup: the entry without touching it (counted as a hit or miss, no
/// keymiss event).
fn lookup<R>(ctx: &Ctx, key: &[u8], f: impl FnOnce(&Entry) -> R) -> Option<R> {
    let r = ctx.db().lock(key).peek(key, ctx.now).map(f);
    count_lookup(ctx, r.is_some());
    r
}

fn encoding(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(match lookup(ctx, &a[2], |e| e.encoding()) {
        None => Reply::Nil,
        Some(enc) => Reply::bulk_str(enc),
    })
}

/// Whether integers 0..9999 are stored as Redis's shared objects: not when maxmemory is set
/// with an LRU or LFU policy, which needs a private access time per key.
pub fn shares_integers(ctx: &Ctx) -> bool {
    let c = ctx.state.config.read();
    c.maxmemory == 0
        || !(c.maxmemory_policy.ends_with("-lru") || c.maxmemory_policy.ends_with("-lfu"))
}

/// OBJECT REFCOUNT's answer for an entry (`shared`: [`shares_integers`]): Redis's shared
/// integers are never freed.
pub fn refcount_of(shared: bool, e: &Entry) -> i64 {
    match e.str_as_int() {
        Some(v)
            if shared && e.str_kind() != StrKind::Unshared && (0..SHARED_INTEGERS).contains(&v) =>
        {
            SHARED_REFCOUNT
        }
        _ => 1,
    }
}

fn refcount(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let shared = shares_integers(ctx);
    Ok(match lookup(ctx, &a[2], |e| refcount_of(shared, e)) {
        None => Reply::Nil,
        Some(n) => Reply::Int(n),
    })
}

fn idletime(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let now = ctx.now;
    let Some(idle_ms) = lookup(ctx, &a[2], |e| e.idle_ms(now)) else {
        return Ok(Reply::Nil);
    };
    if ctx.state.access_policy().lfu {
        return Err(RedisError::new(error::IDLETIME_UNDER_LFU));
    }
    Ok(Reply::Int((idle_ms / 1000) as i64))
}

fn freq(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (now, policy) = (ctx.now, ctx.state.access_policy());
    let Some(freq) = lookup(ctx, &a[2], |e| e.lfu_freq(now, policy)) else {
        return Ok(Reply::Nil);
    };
    if !policy.lfu {
        return Err(RedisError::new(error::FREQ_WITHOUT_LFU));
    }
    Ok(Reply::Int(freq as i64))
}

fn help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(OBJECT_HELP))
}
