//! Streams, one key at a time: XADD, XRANGE, XREVRANGE, XLEN, XDEL, XTRIM and XSETID over
//! `types::stream` (t_stream.c). The consumer-group commands are in `stream_groups.rs`, XREAD
//! and XREADGROUP in `stream_read.rs`, XINFO in `stream_info.rs`; the helpers they share
//! (typed access, ID and entry replies, node limits, error mapping) are here.

use crate::cmd::base::args::{self, Args};
use crate::cmd::families::strings::note_read;
use crate::cmd::runtime::blocking;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{modify, read, upsert};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::types::stream::{
    parse_add_id, parse_range_end, parse_range_start, parse_strict_id, AddId, Entry, NodeLimits,
    PelChange, Stream, StreamError, StreamId, Trim, TrimStrategy,
};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("xadd", xadd),
    Row::new("xrange", xrange),
    Row::new("xrevrange", xrevrange),
    Row::new("xlen", xlen),
    Row::new("xdel", xdel),
    Row::new("xtrim", xtrim),
    Row::new("xsetid", xsetid),
];

/// [`read`] as Redis's lookupKeyRead: the lookup also counts a keyspace hit (the key exists,
/// whatever its type) or a miss with its `keymiss` event. XRANGE, XLEN, XREAD, XPENDING, XACK,
/// XCLAIM, XAUTOCLAIM and XINFO look their key up this way; the other writers use
/// lookupKeyWrite, which counts nothing.
pub fn read_counted<R>(
    ctx: &Ctx,
    key: &[u8],
    f: impl FnOnce(Option<&Stream>) -> R,
) -> Result<R, RedisError> {
    let mut hit = false;
    let r = read(ctx, key, |s: Option<&Stream>| {
        hit = s.is_some();
        f(s)
    });
    // WRONGTYPE comes from a key that exists: a hit, as Redis counts it before checkType.
    note_read(ctx, key, hit || r.is_err());
    r
}

/// How a pending entry a command changed reaches replicas and the AOF (streamPropagateXCLAIM):
/// `XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last`, which sets
/// it there whatever it was, or drops it when the entry is gone there too.
pub fn xclaim_effect(key: &[u8], group: &[u8], id: Bytes, c: &PelChange<'_>) -> Vec<Bytes> {
    let b = |x: &[u8]| Bytes::copy_from_slice(x);
    vec![
        Bytes::from_static(b"XCLAIM"),
        b(key),
        b(group),
        b(c.consumer),
        Bytes::from_static(b"0"),
        id,
        Bytes::from_static(b"TIME"),
        Bytes::from(c.delivery_time.to_string()),
        Bytes::from_static(b"RETRYCOUNT"),
        Bytes::from(c.delivery_count.to_string()),
        Bytes::from_static(b"FORCE"),
        Bytes::from_static(b"JUSTID"),
        Bytes::from_static(b"LASTID"),
        Bytes::from(c.last_id.to_vec()),
    ]
}

/// A group's last ID and read counter as they reach replicas and the AOF when no XCLAIM
/// carries them (streamPropagateGroupID): `XGROUP SETID key group id ENTRIESREAD n`.
pub fn setid_effect(key: &[u8], group: &[u8], last_id: StreamId, entries_read: i64) -> Vec<Bytes> {
    vec![
        Bytes::from_static(b"XGROUP"),
        Bytes::from_static(b"SETID"),
        Bytes::copy_from_slice(key),
        Bytes::copy_from_slice(group),
        Bytes::from(last_id.to_vec()),
        Bytes::from_static(b"ENTRIESREAD"),
        Bytes::from(entries_read.to_string()),
    ]
}

/// The Redis error for a stream operation's refusal.
pub fn stream_error(e: StreamError) -> RedisError {
    RedisError::new(match e {
        StreamError::InvalidId => error::STREAM_INVALID_ID,
        StreamError::InvalidStartInterval => error::STREAM_INVALID_START,
        StreamError::InvalidEndInterval => error::STREAM_INVALID_END,
        StreamError::IdNotGreater => error::XADD_ID_NOT_GREATER,
        StreamError::SeqExhausted | StreamError::TooLarge => error::XADD_TOO_LARGE,
        StreamError::SetIdTooSmall => error::XSETID_TOO_SMALL,
        StreamError::EntriesAddedTooSmall => error::XSETID_ENTRIES_ADDED_TOO_SMALL,
    })
}

/// A strict ID (`-` and `+` refused), a missing sequence being 0.
pub fn strict_id(arg: &[u8]) -> Result<StreamId, RedisError> {
    parse_strict_id(arg, 0).map_err(stream_error)
}

/// The current node limits (stream-node-max-bytes / -entries), read per command.
pub fn node_limits(ctx: &Ctx) -> NodeLimits {
    let c = ctx.state.config.read();
    NodeLimits {
        max_bytes: c.stream_node_max_bytes,
        max_entries: c.stream_node_max_entries,
    }
}

/// An ID as Redis replies it: a bulk `ms-seq`.
pub fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(Bytes::from(id.to_vec()))
}

/// An entry as Redis replies it: `[id, [field, value, ...]]`.
pub fn entry_reply(e: Entry<'_>) -> Reply {
    let mut kv = Vec::with_capacity(e.num_fields() * 2);
    for (f, v) in e.fields() {
        kv.push(Reply::Bulk(f.to_bytes()));
        kv.push(Reply::Bulk(v.to_bytes()));
    }
    Reply::Array(vec![id_reply(e.id), Reply::Array(kv)])
}

/// XADD/XTRIM's options (streamAddTrimArgs).
struct AddTrimArgs {
    id: Option<AddId>,
    nomkstream: bool,
    trim: Option<Trim>,
    /// Where the ID argument is (XADD).
    id_pos: usize,
    /// Where the trim threshold is (MAXLEN's count, MINID's ID), when there is one.
    trim_at: usize,
}

/// streamParseAddOrTrimArgsOrReply: the options from argument 2 on, up to XADD's ID.
fn parse_add_trim(ctx: &Ctx, a: &[Bytes], xadd: bool) -> Result<AddTrimArgs, RedisError> {
    let mut out = AddTrimArgs {
        id: None,
        nomkstream: false,
        trim: None,
        id_pos: a.len(),
        trim_at: 0,
    };
    let mut strategy: Option<TrimStrategy> = None;
    let mut approx = false;
    let mut limit: Option<i64> = None;
    let mut opts = Args::new(a, 2);
    while let Some(opt) = opts.peek() {
        // Arguments after this one.
        let more = opts.remaining() - 1;
        if xadd && opt.as_ref() == b"*" {
            out.id = Some(AddId::Auto);
            break;
        } else if (args::is(opt, "maxlen") || args::is(opt, "minid")) && more > 0 {
            opts.next();
            if strategy.is_some() {
                return Err(RedisError::new(error::XTRIM_BOTH_STRATEGIES));
            }
            approx = false;
            if more >= 2 && opts.peek().is_some_and(|n| n.as_ref() == b"~") {
                approx = true;
                opts.next();
            } else if more >= 2 && opts.peek().is_some_and(|n| n.as_ref() == b"=") {
                opts.next();
            }
            out.trim_at = opts.position();
            let Some(v) = opts.next() else {
                return Err(RedisError::new(error::SYNTAX));
            };
            if args::is(opt, "maxlen") {
                let n = args::int(v)?;
                if n < 0 {
                    return Err(RedisError::new(error::XTRIM_MAXLEN_NEGATIVE));
                }
                strategy = Some(TrimStrategy::MaxLen(n as u64));
            } else {
                strategy = Some(TrimStrategy::MinId(strict_id(v)?));
            }
        } else if args::is(opt, "limit") && more > 0 {
            opts.next();
            let Some(v) = opts.next() else {
                return Err(RedisError::new(error::SYNTAX));
            };
            let n = args::int(v)?;
            if n < 0 {
                return Err(RedisError::new(error::XTRIM_LIMIT_NEGATIVE));
            }
            limit = Some(n);
        } else if xadd && args::is(opt, "nomkstream") {
            opts.next();
            out.nomkstream = true;
        } else if xadd {
            out.id = Some(parse_add_id(opt).map_err(stream_error)?);
            break;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    out.id_pos = opts.position();
    if limit.is_some_and(|l| l != 0) && strategy.is_none() {
        return Err(RedisError::new(error::XTRIM_LIMIT_WITHOUT_STRATEGY));
    }
    if !xadd && strategy.is_none() {
        return Err(RedisError::new(error::XTRIM_NO_STRATEGY));
    }
    // A command replayed from the AOF, or a replica's from its master, must do what it did
    // there (mustObeyClient): its trim was rewritten to an exact one, which may keep a LIMIT.
    let obey = ctx
        .state
        .persist
        .loading
        .load(std::sync::atomic::Ordering::Acquire)
        || crate::cmd::runtime::cluster::feed::is_replica(ctx.state);
    let limit = match limit {
        _ if obey => 0,
        Some(_) if !approx => return Err(RedisError::new(error::XTRIM_LIMIT_WITHOUT_APPROX)),
        Some(l) => l as u64,
        // `~` without LIMIT: at most 100 nodes' worth, within 10,000..1,000,000.
        None if approx => {
            let per = node_limits(ctx).max_entries;
            let l = per.saturating_mul(100);
            if l <= 0 {
                10_000
            } else {
                l.min(1_000_000) as u64
            }
        }
        None => 0,
    };
    out.trim = strategy.map(|strategy| Trim {
        strategy,
        approx,
        limit,
    });
    Ok(out)
}

fn xadd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let p = parse_add_trim(ctx, a, true)?;
    let fields = &a[(p.id_pos + 1).min(a.len())..];
    if fields.len() < 2 || fields.len() % 2 == 1 {
        return Err(error::wrong_arity("xadd"));
    }
    let id = p.id.expect("an XADD that parsed has its ID");
    if id == AddId::Exact(StreamId::MIN) {
        return Err(RedisError::new(error::XADD_ID_ZERO));
    }
    let limits = node_limits(ctx);
    let now = ctx.now.max(0) as u64;
    let trim = p.trim;
    let propagating = ctx.state.propagation.is_active();
    let run = |s: &mut Stream| -> Result<(StreamId, u64, Option<Bytes>), RedisError> {
        if s.last_id() == StreamId::MAX {
            return Err(RedisError::new(error::XADD_EXHAUSTED));
        }
        let added = s.add(id, fields, now, limits).map_err(stream_error)?;
        let trimmed = trim.map_or(0, |t| s.trim(t));
        let exact = trim
            .filter(|_| propagating)
            .and_then(|t| exact_trim_arg(s, t));
        Ok((added, trimmed, exact))
    };
    let (added, trimmed, exact_trim) = if p.nomkstream {
        match modify(ctx, key, run)? {
            None => return Ok(Reply::Nil),
            Some((r, _)) => r?,
        }
    } else {
        // As Redis, the stream is created before the entry is tried: an entry refused as
        // too large leaves an empty stream behind.
        upsert(ctx, key, Stream::new, |s: &mut Stream| Ok(run(s)))?.0?
    };
    ctx.signal_modified(key);
    ctx.notify(notify::STREAM, "xadd", key);
    if trimmed > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
    }
    ctx.state.add_dirty(1);
    blocking::key_ready(ctx.state, ctx.client.db, key);
    // Replicas and the AOF get the ID made here and, for `~`, the trim it came to, so that
    // replaying the command gives the same stream.
    if propagating && (exact_trim.is_some() || id != AddId::Exact(added)) {
        let mut argv = a.to_vec();
        if id != AddId::Exact(added) {
            argv[p.id_pos] = Bytes::from(added.to_vec());
        }
        rewrite_trim(&mut argv, p.trim_at, exact_trim);
        ctx.propagate_as(argv);
    }
    Ok(id_reply(added))
}

/// The threshold an approximate trim (`~`) propagates as, exactly: MAXLEN to the length it
/// left, MINID to the first ID it left, tombstones included (streamRewriteTrimArgument).
/// `None` for an exact trim, which replays as it is.
fn exact_trim_arg(s: &Stream, t: Trim) -> Option<Bytes> {
    if !t.approx {
        return None;
    }
    Some(Bytes::from(match t.strategy {
        TrimStrategy::MaxLen(_) => s.len().to_string().into_bytes(),
        TrimStrategy::MinId(_) => s.first_id_with_tombstones().to_vec(),
    }))
}

/// Replaces `~ <threshold>` at `at` with `= <exact>` (streamRewriteApproxSpecifier).
fn rewrite_trim(argv: &mut [Bytes], at: usize, exact: Option<Bytes>) {
    if let Some(v) = exact {
        argv[at - 1] = Bytes::from_static(b"=");
        argv[at] = v;
    }
}

/// XRANGE/XREVRANGE (xrangeGenericCommand).
fn range(ctx: &mut Ctx, a: &[Bytes], rev: bool) -> CmdResult {
    let (start_arg, end_arg) = if rev { (&a[3], &a[2]) } else { (&a[2], &a[3]) };
    let start = parse_range_start(start_arg).map_err(stream_error)?;
    let end = parse_range_end(end_arg).map_err(stream_error)?;
    let mut count: i64 = -1;
    let mut rest = Args::new(a, 4);
    while let Some(o) = rest.next() {
        let Some(v) = rest.value_of(o, "count") else {
            return Err(RedisError::new(error::SYNTAX));
        };
        count = args::int(v)?.max(0);
    }
    read_counted(ctx, &a[1], |s: Option<&Stream>| match s {
        None => Reply::Array(vec![]),
        Some(_) if count == 0 => Reply::NilArray,
        Some(s) => {
            let limit = if count < 0 {
                usize::MAX
            } else {
                count as usize
            };
            Reply::Array(
                s.range(start, end, rev)
                    .take(limit)
                    .map(entry_reply)
                    .collect(),
            )
        }
    })
}

fn xrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    range(ctx, a, false)
}

fn xrevrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    range(ctx, a, true)
}

fn xlen(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |s: Option<&Stream>| {
        Reply::Int(s.map_or(0, |s| s.len() as i64))
    })
}

fn xdel(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    // Redis looks the key up first (a missing key answers 0 whatever the IDs), then checks
    // every ID before deleting any.
    let exists = read(ctx, key, |s: Option<&Stream>| s.is_some())?;
    if !exists {
        return Ok(Reply::Int(0));
    }
    let ids = a[2..]
        .iter()
        .map(|x| strict_id(x))
        .collect::<Result<Vec<_>, _>>()?;
    let deleted = modify(ctx, key, |s: &mut Stream| s.delete(&ids))?.map_or(0, |(n, _)| n);
    if deleted > 0 {
        ctx.signal_modified(key);
        ctx.notify(notify::STREAM, "xdel", key);
        ctx.state.add_dirty(deleted as u64);
    }
    Ok(Reply::Int(deleted as i64))
}

fn xtrim(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let p = parse_add_trim(ctx, a, false)?;
    let t = p.trim.expect("XTRIM has a strategy once parsed");
    let (deleted, exact) = modify(ctx, key, |s: &mut Stream| {
        let n = s.trim(t);
        (n, exact_trim_arg(s, t))
    })?
    .map_or((0, None), |(r, _)| r);
    if deleted > 0 {
        ctx.notify(notify::STREAM, "xtrim", key);
        ctx.signal_modified(key);
        ctx.state.add_dirty(deleted);
        if exact.is_some() && ctx.state.propagation.is_active() {
            let mut argv = a.to_vec();
            rewrite_trim(&mut argv, p.trim_at, exact);
            ctx.propagate_as(argv);
        }
    }
    Ok(Reply::Int(deleted as i64))
}

fn xsetid(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let key = &a[1];
    let id = strict_id(&a[2])?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut opts = Args::new(a, 3);
    while let Some(opt) = opts.next() {
        if let Some(v) = opts.value_of(opt, "entriesadded") {
            let n = args::int(v)?;
            if n < 0 {
                return Err(RedisError::new(error::XSETID_ENTRIES_ADDED_NEGATIVE));
            }
            entries_added = Some(n as u64);
        } else if let Some(v) = opts.value_of(opt, "maxdeletedid") {
            max_deleted = strict_id(v)?;
            if id < max_deleted {
                return Err(RedisError::new(error::XSETID_BELOW_MAX_DELETED));
            }
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    match modify(ctx, key, |s: &mut Stream| {
        s.set_id(id, entries_added, max_deleted)
    })? {
        None => Err(RedisError::new(error::NO_SUCH_KEY)),
        Some((r, _)) => {
            r.map_err(stream_error)?;
            ctx.state.add_dirty(1);
            ctx.notify(notify::STREAM, "xsetid", key);
            Ok(Reply::ok())
        }
    }
}
