//! CLIENT's control subcommands: PAUSE and UNPAUSE ([`super::pause`]), REPLY, NO-EVICT, and
//! the tracking queries (GETREDIR, TRACKINGINFO, CACHING) as they answer for a client that
//! has not turned tracking on.

use super::args::{self, is};
use super::client_state::reply_flags;
use super::pause::PauseKind;
use super::Ctx;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

/// CLIENT PAUSE timeout [WRITE|ALL].
pub fn client_pause(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 4 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let kind = match a.get(3) {
        None => PauseKind::All,
        Some(m) if is(m, "write") => PauseKind::Write,
        Some(m) if is(m, "all") => PauseKind::All,
        Some(_) => return Err(RedisError::new(error::PAUSE_MODE)),
    };
    let end = timeout_ms(ctx, &a[2])?;
    ctx.state.pause.pause(kind, end);
    Ok(Reply::ok())
}

/// Redis's getTimeoutFromObjectOrReply in milliseconds: an absolute end on the server
/// clock (0 stays 0: a pause that has already ended).
fn timeout_ms(ctx: &Ctx, v: &[u8]) -> Result<i64, RedisError> {
    let t = args::parse_i64(v).ok_or(RedisError::new(error::TIMEOUT_NOT_INTEGER))?;
    if t < 0 {
        return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
    }
    if t == 0 {
        return Ok(0);
    }
    // Redis 7.0 adds without a range check: a huge timeout wraps to an end in the past.
    Ok(ctx.state.clock.now_ms().wrapping_add(t))
}

/// CLIENT UNPAUSE.
pub fn client_unpause(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.state.pause.unpause();
    Ok(Reply::ok())
}

/// CLIENT REPLY ON|OFF|SKIP: OFF and SKIP answer nothing themselves.
pub fn client_reply(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let r = &ctx.client.info.extra.reply;
    let f = r.load(Ordering::Relaxed);
    if is(&a[2], "on") {
        r.store(
            f & !(reply_flags::SKIP | reply_flags::OFF),
            Ordering::Relaxed,
        );
        Ok(Reply::ok())
    } else if is(&a[2], "off") {
        r.store(f | reply_flags::OFF, Ordering::Relaxed);
        Ok(Reply::NoReply)
    } else if is(&a[2], "skip") {
        if f & reply_flags::OFF == 0 {
            r.store(f | reply_flags::SKIP_NEXT, Ordering::Relaxed);
        }
        Ok(Reply::NoReply)
    } else {
        Err(RedisError::new(error::SYNTAX))
    }
}

/// CLIENT NO-EVICT ON|OFF: recorded (CLIENT LIST's `e` flag); resplock never evicts clients.
pub fn client_no_evict(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let on = if is(&a[2], "on") {
        true
    } else if is(&a[2], "off") {
        false
    } else {
        return Err(RedisError::new(error::SYNTAX));
    };
    ctx.client.info.extra.no_evict.store(on, Ordering::Relaxed);
    Ok(Reply::ok())
}

/// CLIENT GETREDIR: -1 when tracking is off.
pub fn client_getredir(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(-1))
}

/// CLIENT TRACKINGINFO for a client without tracking.
pub fn client_trackinginfo(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Map(vec![
        (
            Reply::bulk_static("flags"),
            Reply::Set(vec![Reply::bulk_static("off")]),
        ),
        (Reply::bulk_static("redirect"), Reply::Int(-1)),
        (Reply::bulk_static("prefixes"), Reply::Array(vec![])),
    ]))
}

/// CLIENT CACHING YES|NO: only in tracking mode with OPTIN or OPTOUT.
pub fn client_caching(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::CACHING_WITHOUT_TRACKING))
}
