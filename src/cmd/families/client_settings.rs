//! CLIENT's control subcommands: PAUSE and UNPAUSE ([`crate::cmd::runtime::pause`]), REPLY,
//! NO-EVICT, and the tracking queries (GETREDIR, TRACKINGINFO, CACHING) as they answer for a client
//! that has not turned tracking on.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::runtime::client::reply_flags;
use crate::cmd::runtime::pause::PauseKind;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::tracking::{self, Mode};
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

/// CLIENT NO-EVICT ON|OFF: whether maxmemory-clients may evict this client (CLIENT LIST's `e`
/// flag).
pub fn client_no_evict(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let on = if is(&a[2], "on") {
        true
    } else if is(&a[2], "off") {
        false
    } else {
        return Err(RedisError::new(error::SYNTAX));
    };
    ctx.client.info.extra.no_evict.store(on, Ordering::Relaxed);
    // Counted (off) or not (on) from now on; Redis evicts before it next sleeps.
    crate::cmd::runtime::client_mem::account(ctx.state, &ctx.client.info);
    crate::cmd::runtime::clients::evict_clients(ctx.state, false);
    Ok(Reply::ok())
}

/// CLIENT GETREDIR: the redirect (0: none), -1 when tracking is off.
pub fn client_getredir(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(
        ctx.state
            .tracking
            .mode(ctx.client.id)
            .map_or(-1, |m| m.redirect as i64),
    ))
}

/// CLIENT TRACKINGINFO: flags, redirect and prefixes, as Redis lists them.
pub fn client_trackinginfo(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let mode = ctx.state.tracking.mode(ctx.client.id);
    let mut flags = vec![Reply::bulk_static(if mode.is_some() {
        "on"
    } else {
        "off"
    })];
    let (redirect, prefixes) = match &mode {
        None => (-1, vec![]),
        Some(m) => {
            let mut add = |cond: bool, f: &'static str| {
                if cond {
                    flags.push(Reply::bulk_static(f));
                }
            };
            add(m.bcast, "bcast");
            add(m.optin, "optin");
            add(m.optin && m.caching, "caching-yes");
            add(m.optout, "optout");
            add(m.optout && m.caching, "caching-no");
            add(m.noloop, "noloop");
            add(m.broken_redirect, "broken_redirect");
            (
                m.redirect as i64,
                m.prefixes.iter().cloned().map(Reply::Bulk).collect(),
            )
        }
    };
    Ok(Reply::Map(vec![
        (Reply::bulk_static("flags"), Reply::Set(flags)),
        (Reply::bulk_static("redirect"), Reply::Int(redirect)),
        (Reply::bulk_static("prefixes"), Reply::Array(prefixes)),
    ]))
}

/// CLIENT CACHING YES|NO: only in tracking mode with OPTIN (YES) or OPTOUT (NO).
pub fn client_caching(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let Some(m) = ctx.state.tracking.mode(ctx.client.id) else {
        return Err(RedisError::new(error::CACHING_WITHOUT_TRACKING));
    };
    if is(&a[2], "yes") {
        if !m.optin {
            return Err(RedisError::new(error::CACHING_YES_NOT_OPTIN));
        }
    } else if is(&a[2], "no") {
        if !m.optout {
            return Err(RedisError::new(error::CACHING_NO_NOT_OPTOUT));
        }
    } else {
        return Err(RedisError::new(error::SYNTAX));
    }
    ctx.state.tracking.set_caching(ctx.client.id, true);
    Ok(Reply::ok())
}

/// `CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP]`,
/// with Redis's checks in Redis's order.
pub fn client_tracking(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut mode = Mode::default();
    let mut prefixes: Vec<Bytes> = Vec::new();
    let mut args = Args::new(a, 3);
    while let Some(opt) = args.next() {
        if let Some(v) = args.value_of(opt, "redirect") {
            if mode.redirect != 0 {
                return Err(RedisError::new(error::TRACKING_ONE_REDIRECT));
            }
            let id = args::parse_i64(v).ok_or(RedisError::new(error::NOT_INTEGER))?;
            let exists = u64::try_from(id)
                .ok()
                .is_some_and(|id| ctx.state.clients.lock().contains_key(&id));
            if !exists {
                return Err(RedisError::new(error::TRACKING_NO_REDIRECT_CLIENT));
            }
            mode.redirect = id as u64;
        } else if is(opt, "bcast") {
            mode.bcast = true;
        } else if is(opt, "optin") {
            mode.optin = true;
        } else if is(opt, "optout") {
            mode.optout = true;
        } else if is(opt, "noloop") {
            mode.noloop = true;
        } else if let Some(p) = args.value_of(opt, "prefix") {
            prefixes.push(p.clone());
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    let tracking = &ctx.state.tracking;
    let id = ctx.client.id;
    if is(&a[2], "on") {
        let current = tracking.mode(id);
        if !mode.bcast && !prefixes.is_empty() {
            return Err(RedisError::new(error::TRACKING_PREFIX_NEEDS_BCAST));
        }
        if let Some(c) = &current {
            if c.bcast != mode.bcast {
                return Err(RedisError::new(error::TRACKING_BCAST_SWITCH));
            }
        }
        if mode.bcast && (mode.optin || mode.optout) {
            return Err(RedisError::new(error::TRACKING_OPT_WITH_BCAST));
        }
        if mode.optin && mode.optout {
            return Err(RedisError::new(error::TRACKING_OPTIN_AND_OPTOUT));
        }
        if let Some(c) = &current {
            if (mode.optin && c.optout) || (mode.optout && c.optin) {
                return Err(RedisError::new(error::TRACKING_OPT_SWITCH));
            }
        }
        if mode.bcast {
            let existing = current.map(|c| c.prefixes).unwrap_or_default();
            if let Some(e) = tracking::prefix_collision(&existing, &prefixes) {
                return Err(error::err(e));
            }
        }
        tracking.enable(id, mode, prefixes);
    } else if is(&a[2], "off") {
        tracking.disable(id);
    } else {
        return Err(RedisError::new(error::SYNTAX));
    }
    Ok(Reply::ok())
}
