//! Server commands without a family of their own: TIME, WAIT, SHUTDOWN, the persistence
//! commands (SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE; the work is `runtime::persist`'s) and the
//! replication commands answered as a master (ROLE, REPLICAOF/SLAVEOF).

use crate::cmd::base::args::{self, is};
use crate::cmd::runtime::blocking;
use crate::cmd::runtime::persist::{aof, registry::JobKind, save};
use crate::cmd::runtime::replication;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Row] = &[
    Row::new("time", time),
    Row::new("wait", wait),
    Row::new("shutdown", shutdown),
    Row::new("lastsave", lastsave),
    Row::new("save", save),
    Row::new("bgsave", bgsave),
    Row::new("bgrewriteaof", bgrewriteaof),
    Row::new("role", role),
    Row::new("replicaof", replicaof),
    Row::new("slaveof", replicaof),
];

fn time(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let us = ctx.state.clock.now_us();
    Ok(Reply::Array(vec![
        Reply::bulk((us / 1_000_000).to_string()),
        Reply::bulk((us % 1_000_000).to_string()),
    ]))
}

/// WAIT numreplicas timeout, as Redis's waitCommand: the replicas that acknowledged the
/// stream up to now; enough of them (or inside MULTI) answer at once, otherwise the client
/// blocks until enough acknowledge, its timeout (0: forever) or CLIENT UNBLOCK, and the
/// replicas are asked for their offsets (REPLCONF GETACK).
fn wait(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let numreplicas = args::int(&a[1])?;
    let timeout =
        args::parse_i64(&a[2]).ok_or_else(|| RedisError::new(error::TIMEOUT_NOT_INTEGER))?;
    if timeout < 0 {
        return Err(RedisError::new(error::TIMEOUT_NEGATIVE));
    }
    // A cluster node's replicas follow its in-process feed, whose offset WAIT waits for.
    let offset = crate::cmd::runtime::cluster::hooks::wait_offset(ctx.state)
        .unwrap_or_else(|| ctx.state.replication.offset());
    let acked = ctx.state.replication.acked(offset);
    if acked >= numreplicas || ctx.in_exec {
        return Ok(Reply::Int(acked));
    }
    let deadline = if timeout > 0 {
        timeout.wrapping_add(ctx.now)
    } else {
        0
    };
    ctx.state
        .replication
        .wait_registered(ctx.client.id, offset, numreplicas);
    let reply = blocking::block(
        ctx,
        blocking::Wait {
            kind: blocking::Kind::Replicas,
            keys: Vec::new(),
            deadline,
            // No key is ever ready for this kind: acknowledgements answer it.
            serve: Box::new(|_, _| None),
        },
    );
    replication::request_acks(ctx.state);
    Ok(reply)
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] (shutdownCommand): the caller blocks while
/// a master waits for lagging replicas (`shutdown-timeout`), then the AOF is synced and,
/// with `save` points (or SAVE), a final RDB written, and the server stops; the caller's
/// connection closes without a reply, as in Redis. A failed final save keeps the server up
/// (unless FORCE) and answers the error; ABORT cancels a shutdown in progress.
fn shutdown(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    use crate::cmd::runtime::shutdown::{self as stop, Outcome};
    let (mut flags, mut abort) = (0u32, false);
    for o in &a[1..] {
        if is(o, "nosave") {
            flags |= stop::NOSAVE;
        } else if is(o, "save") {
            flags |= stop::SAVE;
        } else if is(o, "now") {
            flags |= stop::NOW;
        } else if is(o, "force") {
            flags |= stop::FORCE;
        } else if is(o, "abort") {
            abort = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if (abort && flags != 0) || (flags & stop::SAVE != 0 && flags & stop::NOSAVE != 0) {
        return Err(RedisError::new(error::SYNTAX));
    }
    if abort {
        return if stop::abort(ctx.state) {
            Ok(Reply::ok())
        } else {
            Err(RedisError::new(error::NO_SHUTDOWN))
        };
    }
    // Inside a script past busy-reply-threshold only SHUTDOWN NOSAVE may stop the server.
    if flags & stop::NOSAVE == 0 && crate::cmd::runtime::lock::script_busy(ctx.state) {
        return Err(ctx.state.scripting.busy_error());
    }
    match stop::prepare(ctx.state, flags) {
        Outcome::Exit => {
            // A busy script (even one that wrote, which KILL refuses) is stopped: the server
            // is going away, as Redis exits from inside the script's event processing.
            ctx.state.scripting.abort();
            ctx.client.close_after_reply = true;
            Ok(Reply::NoReply)
        }
        Outcome::Waiting => Ok(blocking::block(
            ctx,
            blocking::Wait {
                kind: blocking::Kind::Shutdown,
                keys: Vec::new(),
                deadline: 0,
                serve: Box::new(|_, _| None),
            },
        )),
        Outcome::Failed => Err(RedisError::new(error::SHUTDOWN_FAILED)),
    }
}

fn lastsave(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Int(ctx.state.lastsave.load(Ordering::Relaxed)))
}

/// SAVE: the dataset to `dbfilename` now (refused while a BGSAVE runs).
fn save(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if save::running(ctx.state) == Some(JobKind::Rdb) {
        return Err(error::err("ERR Background save already in progress"));
    }
    ctx.state.persist.stats.lock().rdb_saves += 1;
    match save::save(ctx.state) {
        Ok(()) => Ok(Reply::ok()),
        Err(_) => Err(error::err("ERR")),
    }
}

/// BGSAVE [SCHEDULE]: a background save of the dataset as of now; scheduled for when the
/// running AOF rewrite ends (with SCHEDULE, or inside MULTI).
fn bgsave(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 2 || (a.len() == 2 && !is(&a[1], "schedule")) {
        return Err(RedisError::new(error::SYNTAX));
    }
    let schedule = a.len() == 2;
    let running = save::running(ctx.state);
    if running == Some(JobKind::Rdb) {
        return Err(error::err("ERR Background save already in progress"));
    }
    if running.is_some() || ctx.in_exec {
        if schedule || ctx.in_exec {
            ctx.state
                .persist
                .bgsave_scheduled
                .store(true, Ordering::Relaxed);
            return Ok(Reply::simple("Background saving scheduled"));
        }
        return Err(error::err(
            "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.",
        ));
    }
    match save::bgsave(ctx.state) {
        Ok(()) => Ok(Reply::simple("Background saving started")),
        Err(_) => Err(error::err("ERR")),
    }
}

/// BGREWRITEAOF: a background rewrite of the append-only log (scheduled while a BGSAVE
/// runs, or inside MULTI).
fn bgrewriteaof(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let running = save::running(ctx.state);
    if running == Some(JobKind::AofRewrite) {
        return Err(error::err(
            "ERR Background append only file rewriting already in progress",
        ));
    }
    if running.is_some() || ctx.in_exec {
        ctx.state
            .persist
            .rewrite_scheduled
            .store(true, Ordering::Relaxed);
        ctx.state.persist.stats.lock().aof_rewrite_failures = 0;
        return Ok(Reply::simple(
            "Background append only file rewriting scheduled",
        ));
    }
    match aof::rewrite::rewrite_background(ctx.state) {
        Ok(()) => Ok(Reply::simple(
            "Background append only file rewriting started",
        )),
        Err(_) => Err(error::err(
            "ERR Can't execute an AOF background rewriting. Please check the server logs for more information.",
        )),
    }
}

/// ROLE: a master, its offset, and its online replicas (address, port and acknowledged
/// offset).
fn role(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if let Some(r) = crate::cmd::runtime::cluster::hooks::replication(ctx.state) {
        return Ok(cluster_role(r));
    }
    if let Some(l) = replication::role::link(ctx.state) {
        // The handshake (connected, before PSYNC's answer) is `handshake` in Redis; the
        // link here is `connecting` until the sync starts.
        return Ok(Reply::Array(vec![
            Reply::bulk_static("slave"),
            Reply::bulk_str(&l.host),
            Reply::Int(l.port as i64),
            Reply::bulk_static(l.status.name()),
            Reply::Int(if l.has_master {
                ctx.state.replication.offset()
            } else {
                -1
            }),
        ]));
    }
    let replicas = replication::replicas(ctx.state)
        .into_iter()
        .filter(|r| r.state == "online")
        .map(|r| {
            Reply::Array(vec![
                Reply::bulk_str(&r.ip),
                Reply::bulk_str(&r.port.to_string()),
                Reply::bulk_str(&r.offset.to_string()),
            ])
        })
        .collect();
    Ok(Reply::Array(vec![
        Reply::bulk_static("master"),
        Reply::Int(ctx.state.replication.offset()),
        Reply::Array(replicas),
    ]))
}

/// REPLICAOF host port: follow that master (its link connects in the background);
/// REPLICAOF NO ONE: become a master again, keeping the data.
fn replicaof(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if ctx.state.cluster.is_some() {
        return Err(RedisError::new(error::REPLICAOF_IN_CLUSTER));
    }
    if replication::failover::running(ctx.state) {
        return Err(RedisError::new(error::REPLICAOF_FAILING_OVER));
    }
    if is(&a[1], "no") && is(&a[2], "one") {
        if replication::role::link(ctx.state).is_some() {
            replication::role::unset_master(ctx.state);
            crate::log::notice(&format!(
                "MASTER MODE enabled (user request from 'id={} addr={}')",
                ctx.client.id, ctx.client.info.addr
            ));
        }
        return Ok(Reply::ok());
    }
    if ctx.client.info.extra.replica.load(Ordering::Relaxed) {
        return Err(RedisError::new(error::REPLICAOF_FROM_REPLICA));
    }
    let port = match args::parse_i64(&a[2]) {
        Some(p) if (0..=65535).contains(&p) => p as u16,
        _ => return Err(RedisError::new(error::INVALID_MASTER_PORT)),
    };
    let host = String::from_utf8_lossy(&a[1]).into_owned();
    if let Some(l) = replication::role::link(ctx.state) {
        if l.host.eq_ignore_ascii_case(&host) && l.port == port {
            crate::log::notice("REPLICAOF would result into synchronization with the master we are already connected with. No operation performed.");
            return Ok(Reply::simple("OK Already connected to specified master"));
        }
    }
    replication::role::set_master(ctx.state, &host, port);
    crate::log::notice(&format!(
        "REPLICAOF {host}:{port} enabled (user request from 'id={} addr={}')",
        ctx.client.id, ctx.client.info.addr
    ));
    Ok(Reply::ok())
}

/// ROLE on a cluster node: a master with its replicas (address and offset), or a replica
/// with its master, link state and offset.
fn cluster_role(r: crate::cmd::runtime::cluster::hooks::Replication) -> Reply {
    match r.master {
        Some((ip, port, up)) => Reply::Array(vec![
            Reply::bulk_static("slave"),
            Reply::bulk_str(&ip),
            Reply::Int(port as i64),
            Reply::bulk_static(if up { "connected" } else { "connect" }),
            Reply::Int(if up { r.offset as i64 } else { -1 }),
        ]),
        None => Reply::Array(vec![
            Reply::bulk_static("master"),
            Reply::Int(r.offset as i64),
            Reply::Array(
                r.replicas
                    .iter()
                    .map(|(ip, port, off, _)| {
                        Reply::Array(vec![
                            Reply::bulk_str(ip),
                            Reply::bulk_str(&port.to_string()),
                            Reply::bulk_str(&off.to_string()),
                        ])
                    })
                    .collect(),
            ),
        ]),
    }
}
