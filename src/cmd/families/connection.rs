//! Connection commands: PING, ECHO, SELECT, QUIT, HELLO, AUTH, RESET and the CLIENT container.

use crate::cmd::base::args::{self, Args};
use crate::cmd::base::flags::*;
use crate::cmd::runtime::client::ClientInfo;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("ping", ping).flags(SUBSCRIBED_OK),
    Row::new("echo", echo),
    Row::new("select", select),
    Row::new("quit", quit).flags(SUBSCRIBED_OK),
    Row::new("hello", hello),
    Row::new("auth", auth),
    Row::new("reset", reset).flags(SUBSCRIBED_OK),
];

fn ping(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 2 {
        return Err(error::wrong_arity("ping"));
    }
    if crate::cmd::runtime::call::in_resp2_subscribed_mode(ctx) {
        let msg = a.get(1).cloned().unwrap_or_default();
        return Ok(Reply::Array(vec![
            Reply::bulk_static("pong"),
            Reply::Bulk(msg),
        ]));
    }
    Ok(match a.get(1) {
        Some(m) => Reply::Bulk(m.clone()),
        None => Reply::simple("PONG"),
    })
}

fn echo(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    Ok(Reply::Bulk(a[1].clone()))
}

fn select(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let n = args::parse_i64(&a[1]).ok_or(RedisError::new(error::NOT_INTEGER))?;
    if ctx.state.cluster.is_some() && n != 0 {
        return Err(RedisError::new(error::SELECT_IN_CLUSTER));
    }
    if n < 0 || n as usize >= ctx.state.keyspace.databases() {
        return Err(RedisError::new(error::DB_INDEX_OUT_OF_RANGE));
    }
    ctx.client.select(n as usize);
    Ok(Reply::ok())
}

fn quit(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.client.close_after_reply = true;
    Ok(Reply::ok())
}

fn auth(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let (user, pass): (&[u8], &[u8]) = if a.len() == 2 {
        if ctx.state.acl.default_is_nopass() {
            return Err(RedisError::new(error::AUTH_NO_PASSWORD));
        }
        (b"default", &a[1])
    } else {
        (&a[1], &a[2])
    };
    if crate::cmd::runtime::acl::authenticate(ctx, &a[0], user, pass) {
        Ok(Reply::ok())
    } else {
        Err(RedisError::new(error::WRONGPASS))
    }
}

/// Redis accepts client names and library attributes made of printable ASCII except space.
pub(super) fn valid_client_attr(v: &[u8]) -> bool {
    v.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

pub(super) fn set_name(info: &ClientInfo, name: &[u8]) {
    *info.name.lock() = if name.is_empty() {
        None
    } else {
        Some(Bytes::copy_from_slice(name))
    };
}

fn hello(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut ver = 0;
    if a.len() >= 2 {
        ver = args::parse_i64(&a[1]).ok_or(RedisError::new(error::HELLO_PROTO_NOT_INT))?;
        if !(2..=3).contains(&ver) {
            return Err(RedisError::new(error::NOPROTO));
        }
    }
    // Each option takes effect as it is read, as in Redis: an AUTH before a bad SETNAME
    // stays done.
    let mut args = Args::new(a, 2);
    while let Some(opt) = args.next() {
        if let Some(v) = args.values_of(opt, "auth", 2) {
            if !crate::cmd::runtime::acl::authenticate(ctx, &a[0], &v[0], &v[1]) {
                return Err(RedisError::new(error::WRONGPASS));
            }
        } else if let Some(v) = args.value_of(opt, "setname") {
            if !valid_client_attr(v) {
                return Err(RedisError::new(error::CLIENT_NAME_INVALID));
            }
            set_name(&ctx.client.info, v);
        } else {
            return Err(error::err(format!(
                "ERR Syntax error in HELLO option '{}'",
                args::text(opt)
            )));
        }
    }
    if !ctx.client.authenticated {
        return Err(RedisError::new(error::HELLO_NOAUTH));
    }
    if ver != 0 {
        ctx.client.set_resp(ver as u8);
    }
    let s = |v: &'static str| Reply::bulk_static(v);
    let (mode, role) = match crate::cmd::runtime::cluster::hooks::replication(ctx.state) {
        None => ("standalone", "master"),
        Some(r) if r.master.is_some() => ("cluster", "replica"),
        Some(_) => ("cluster", "master"),
    };
    Ok(Reply::Map(vec![
        (s("server"), s("redis")),
        (s("version"), s(crate::version::REDIS_VERSION)),
        (s("proto"), Reply::Int(ctx.client.resp as i64)),
        (s("id"), Reply::Int(ctx.client.id as i64)),
        (s("mode"), s(mode)),
        (s("role"), s(role)),
        (s("modules"), Reply::Array(vec![])),
    ]))
}

/// RESET: back to a fresh connection's state (no subscriptions, RESP2, db 0, no name, and
/// unauthenticated when a password is required).
fn reset(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    crate::cmd::runtime::clients::discard_transaction(ctx.state, ctx.client);
    crate::cmd::runtime::clients::forget_client(ctx.state, ctx.client);
    ctx.client.select(0);
    ctx.client.set_resp(2);
    set_name(&ctx.client.info, b"");
    ctx.client.authenticated = !ctx.state.requires_pass();
    ctx.client.user = "default".into();
    *ctx.client.info.user.lock() = "default".into();
    crate::cmd::runtime::clients::reset(ctx.state, ctx.client);
    Ok(Reply::simple("RESET"))
}
