//! CLIENT and its subcommands: identity (ID, SETNAME, GETNAME, SETINFO), introspection
//! (LIST, INFO) and control (KILL, NO-EVICT, NO-TOUCH).

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::base::flags::*;
use crate::cmd::base::help::help_reply;
use crate::cmd::families::client_settings as client_ctl;
use crate::cmd::families::connection::{set_name, valid_client_attr};
use crate::cmd::runtime::client::ClientInfo;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub const COMMANDS: &[Row] =
    &[Row::new("client", crate::cmd::runtime::table::container).subs(CLIENT_SUBS)];

const CLIENT_FLAGS: u32 = NOSCRIPT | LOADING | STALE;

const CLIENT_SUBS: &[Row] = &[
    Row::new("id", client_id),
    Row::new("setname", client_setname),
    Row::new("getname", client_getname),
    Row::new("setinfo", client_setinfo).own(4, CLIENT_FLAGS, (0, 0, 0), "connection", "7.2.0", "Set client or connection specific info"),
    Row::new("list", client_list),
    Row::new("info", client_info),
    Row::new("kill", client_kill),
    Row::new("unblock", client_unblock),
    Row::new("pause", client_ctl::client_pause),
    Row::new("unpause", client_ctl::client_unpause),
    Row::new("reply", client_ctl::client_reply),
    Row::new("getredir", client_ctl::client_getredir),
    Row::new("trackinginfo", client_ctl::client_trackinginfo),
    Row::new("tracking", client_ctl::client_tracking),
    Row::new("caching", client_ctl::client_caching),
    Row::new("no-evict", client_ctl::client_no_evict),
    Row::new("no-touch", client_on_off).own(3, CLIENT_FLAGS, (0, 0, 0), "connection", "7.2.0", "Controls whether commands sent by the client will alter the LRU/LFU of the keys they access."),
    Row::new("help", client_help),
];

fn client_id(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(ctx.client.id as i64))
}

fn client_setname(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if !valid_client_attr(&a[2]) {
        return Err(RedisError::new(error::CLIENT_NAME_INVALID));
    }
    set_name(&ctx.client.info, &a[2]);
    Ok(Reply::ok())
}

fn client_getname(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(match ctx.client.info.name.lock().as_ref() {
        Some(n) => Reply::Bulk(n.clone()),
        None => Reply::Nil,
    })
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2; clients send it at connect).
fn client_setinfo(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let slot = if is(&a[2], "lib-name") {
        &ctx.client.info.lib_name
    } else if is(&a[2], "lib-ver") {
        &ctx.client.info.lib_ver
    } else {
        return Err(error::err(format!(
            "ERR Unrecognized option '{}'",
            args::text(&a[2])
        )));
    };
    if !valid_client_attr(&a[3]) {
        return Err(error::err(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            args::text(&a[2])
        )));
    }
    *slot.lock() = if a[3].is_empty() {
        None
    } else {
        Some(Bytes::copy_from_slice(&a[3]))
    };
    Ok(Reply::ok())
}

/// CLIENT NO-EVICT / NO-TOUCH: accepted (resplock never evicts and keeps no LRU).
fn client_on_off(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if is(&a[2], "on") || is(&a[2], "off") {
        Ok(Reply::ok())
    } else {
        Err(RedisError::new(error::SYNTAX))
    }
}

fn is_pubsub(c: &ClientInfo) -> bool {
    c.subscriptions.load(Ordering::Relaxed)
        + c.pattern_subscriptions.load(Ordering::Relaxed)
        + c.shard_subscriptions.load(Ordering::Relaxed)
        > 0
}

/// The clients of a CLIENT LIST / KILL TYPE: normal, master, replica (slave), pubsub.
#[derive(Clone, Copy, PartialEq)]
enum ClientType {
    Normal,
    Replica,
    /// A replica's link to its master.
    Master,
    PubSub,
}

fn client_type(name: &[u8]) -> Option<ClientType> {
    if is(name, "normal") {
        Some(ClientType::Normal)
    } else if is(name, "replica") || is(name, "slave") {
        Some(ClientType::Replica)
    } else if is(name, "master") {
        Some(ClientType::Master)
    } else if is(name, "pubsub") {
        Some(ClientType::PubSub)
    } else {
        None
    }
}

fn type_of(c: &ClientInfo) -> ClientType {
    if c.extra.master.load(Ordering::Relaxed) {
        ClientType::Master
    } else if c.extra.replica.load(Ordering::Relaxed) && !c.extra.monitor.load(Ordering::Relaxed) {
        ClientType::Replica
    } else if is_pubsub(c) {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

fn snapshot(ctx: &Ctx) -> Vec<Arc<ClientInfo>> {
    ctx.state.clients.lock().values().cloned().collect()
}

fn client_list(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut out = String::new();
    if a.len() == 4 && is(&a[2], "type") {
        let t = client_type(&a[3]).ok_or_else(|| {
            error::err(format!("ERR Unknown client type '{}'", args::text(&a[3])))
        })?;
        for c in snapshot(ctx).iter().filter(|c| type_of(c) == t) {
            out.push_str(&crate::cmd::runtime::clients::client_line(
                ctx.state, c, ctx.now,
            ));
        }
    } else if a.len() > 3 && is(&a[2], "id") {
        let mut ids = Vec::with_capacity(a.len() - 3);
        for x in &a[3..] {
            ids.push(args::parse_i64(x).ok_or(RedisError::new(error::INVALID_CLIENT_ID))?);
        }
        let clients = ctx.state.clients.lock().clone();
        for id in ids {
            if let Some(c) = u64::try_from(id).ok().and_then(|id| clients.get(&id)) {
                out.push_str(&crate::cmd::runtime::clients::client_line(
                    ctx.state, c, ctx.now,
                ));
            }
        }
    } else if a.len() != 2 {
        return Err(RedisError::new(error::SYNTAX));
    } else {
        for c in snapshot(ctx) {
            out.push_str(&crate::cmd::runtime::clients::client_line(
                ctx.state, &c, ctx.now,
            ));
        }
    }
    Ok(Reply::Verbatim(Bytes::from(out)))
}

fn client_info(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Verbatim(Bytes::from(
        crate::cmd::runtime::clients::client_line(ctx.state, &ctx.client.info, ctx.now),
    )))
}

/// CLIENT KILL addr (old form: +OK or an error) or CLIENT KILL filter value ... (new form:
/// the number killed; the caller itself only with SKIPME no).
fn client_kill(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() == 3 {
        let target = snapshot(ctx)
            .into_iter()
            .find(|c| c.addr.as_bytes() == a[2].as_ref());
        return match target {
            None => Err(RedisError::new(error::NO_SUCH_CLIENT)),
            Some(c) => {
                kill(ctx, &c);
                Ok(Reply::ok())
            }
        };
    }
    let mut id = None;
    let mut ctype = None;
    let mut addr = None;
    let mut laddr = None;
    let mut user: Option<String> = None;
    let mut skipme = true;
    let mut args = Args::new(a, 2);
    while !args.is_empty() {
        let Some((opt, v)) = args.pair() else {
            return Err(RedisError::new(error::SYNTAX));
        };
        if is(opt, "id") {
            match args::parse_i64(v) {
                Some(n) if n >= 1 => id = Some(n as u64),
                _ => return Err(RedisError::new(error::CLIENT_ID_INVALID)),
            }
        } else if is(opt, "type") {
            ctype = Some(client_type(v).ok_or_else(|| {
                error::err(format!("ERR Unknown client type '{}'", args::text(v)))
            })?);
        } else if is(opt, "addr") {
            addr = Some(v);
        } else if is(opt, "laddr") {
            laddr = Some(v);
        } else if is(opt, "user") {
            let name = String::from_utf8_lossy(v).into_owned();
            if !ctx.state.acl.users.read().contains_key(&name) {
                return Err(error::err(format!("ERR No such user '{}'", args::text(v))));
            }
            user = Some(name);
        } else if is(opt, "skipme") {
            if is(v, "yes") {
                skipme = true;
            } else if is(v, "no") {
                skipme = false;
            } else {
                return Err(RedisError::new(error::SYNTAX));
            }
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    let me = ctx.client.id;
    let victims: Vec<_> = snapshot(ctx)
        .into_iter()
        .filter(|c| id.is_none_or(|id| c.id == id))
        .filter(|c| ctype.is_none_or(|t| type_of(c) == t))
        .filter(|c| addr.is_none_or(|x| c.addr.as_bytes() == x.as_ref()))
        .filter(|c| laddr.is_none_or(|x| c.laddr.as_bytes() == x.as_ref()))
        .filter(|c| user.as_ref().is_none_or(|u| *c.user.lock() == *u))
        .filter(|c| !(skipme && c.id == me))
        // A client an earlier CLIENT KILL closed is gone for Redis (freeClient), even while
        // its connection here is still shutting down: it is not counted twice.
        .filter(|c| !c.kill.is_cancelled())
        .collect();
    for c in &victims {
        kill(ctx, c);
    }
    Ok(Reply::Int(victims.len() as i64))
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked in BLPOP and friends answers as if
/// its timeout passed, or with the UNBLOCKED error. 1 if it was blocked, else 0.
fn client_unblock(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 4 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let with_error = match a.get(3) {
        None => false,
        Some(r) if is(r, "timeout") => false,
        Some(r) if is(r, "error") => true,
        Some(_) => return Err(RedisError::new(error::UNBLOCK_REASON)),
    };
    let id = args::int(&a[2])?;
    let done = u64::try_from(id)
        .is_ok_and(|id| crate::cmd::runtime::blocking::unblock(ctx.state, id, with_error));
    Ok(Reply::Int(done as i64))
}

/// Close a client: another connection at once, this one after its reply is written.
fn kill(ctx: &mut Ctx, c: &ClientInfo) {
    if c.id == ctx.client.id {
        ctx.client.close_after_reply = true;
    } else {
        c.kill.cancel();
    }
}

const CLIENT_HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
];

fn client_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(CLIENT_HELP))
}
