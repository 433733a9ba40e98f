//! The replication handshake as a master answers it: REPLCONF's options (kept for the
//! replica's link), FAILOVER's arguments (the failover itself is
//! `runtime::replication::failover`'s), and SYNC/PSYNC, which turn the connection into a
//! replica's (the work is `runtime::replication`'s and the connection's).

use crate::cmd::base::args::{self, is};
use crate::cmd::runtime::replication::SyncRequest;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("failover", failover),
    Row::new("psync", sync),
    Row::new("sync", sync),
    Row::new("replconf", replconf),
];

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: the options are checked as Redis
/// checks them, then `runtime::replication::failover` starts (or aborts) the failover.
fn failover(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    use crate::cmd::runtime::replication::failover;
    if ctx.state.cluster.is_some() {
        return Err(RedisError::new(error::FAILOVER_IN_CLUSTER));
    }
    if a.len() == 2 && is(&a[1], "abort") {
        if !failover::running(ctx.state) {
            return Err(RedisError::new(error::FAILOVER_NOT_IN_PROGRESS));
        }
        failover::abort(ctx.state, "Failover manually aborted");
        return Ok(Reply::ok());
    }
    let (mut timeout, mut force, mut target) = (0i64, false, None);
    let mut j = 1;
    while j < a.len() {
        if is(&a[j], "timeout") && j + 1 < a.len() && timeout == 0 {
            timeout = args::int(&a[j + 1])?;
            if timeout <= 0 {
                return Err(RedisError::new(error::FAILOVER_TIMEOUT));
            }
            j += 1;
        } else if is(&a[j], "to") && j + 2 < a.len() && target.is_none() {
            let port = args::int(&a[j + 2])?;
            target = Some((String::from_utf8_lossy(&a[j + 1]).into_owned(), port));
            j += 2;
        } else if is(&a[j], "force") && !force {
            force = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
        j += 1;
    }
    failover::start(ctx.state, target, timeout, force)?;
    Ok(Reply::ok())
}

/// SYNC and PSYNC replid offset [FAILOVER]: PSYNC's FAILOVER form, sent by a master that
/// fails over to this replica, promotes it first (when it names this replica's history);
/// then the client becomes a replica: its connection attaches it
/// (`runtime::replication::attach`), answers `+FULLRESYNC` or `+CONTINUE` and streams the RDB
/// and the writes. On a node of an in-process cluster (which replicates inside the process)
/// it is refused as a master whose save fails refuses it.
fn sync(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    use crate::cmd::runtime::replication::{failover, role};
    let mut psync = None;
    if a[0].eq_ignore_ascii_case(b"psync") {
        if a.len() > 3 && is(&a[3], "failover") {
            crate::log::warning(&format!(
                "Failover request received for replid {}.",
                String::from_utf8_lossy(&a[1])
            ));
            if !ctx.state.replication.is_replica() {
                return Err(RedisError::new(error::PSYNC_FAILOVER_MASTER));
            }
            if !a[1].eq_ignore_ascii_case(ctx.state.replication.replid().as_bytes()) {
                return Err(RedisError::new(error::PSYNC_FAILOVER_REPLID));
            }
            role::unset_master(ctx.state);
            crate::log::notice(&format!(
                "MASTER MODE enabled (failover request from 'id={} addr={}')",
                ctx.client.id, ctx.client.info.addr
            ));
        }
        psync = Some(a[1].clone());
    }
    if failover::running(ctx.state) {
        return Err(RedisError::new(error::NOMASTERLINK_FAILING_OVER));
    }
    if ctx.state.cluster.is_some() {
        crate::log::notice("Replica asks for synchronization");
        crate::log::warning("BGSAVE for replication failed");
        ctx.client.close_after_reply = true;
        return Err(RedisError::new(error::REPLICATION_BGSAVE_FAILED));
    }
    if let Some(l) = role::link(ctx.state) {
        if l.status != crate::cmd::runtime::replication::registry::LinkStatus::Connected {
            return Err(RedisError::new(error::NOMASTERLINK));
        }
    }
    let psync = match psync {
        Some(id) => Some((id, args::int(&a[2])?)),
        None => None,
    };
    let hs = ctx.client.replica.get_or_insert_with(Default::default);
    if hs.sync.is_none() {
        hs.sync = Some(SyncRequest { psync });
    }
    Ok(Reply::NoReply)
}

/// REPLCONF option value [...]: what a would-be replica tells its master (its listening
/// port and address, its capabilities) is kept for when it syncs; ACK and GETACK from a
/// client that is not a replica get no reply (a replica's acknowledgements are read by its
/// connection).
fn replconf(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len().is_multiple_of(2) {
        return Err(RedisError::new(error::SYNTAX));
    }
    for pair in a[1..].chunks_exact(2) {
        let (opt, val) = (&pair[0], &pair[1]);
        if is(opt, "listening-port") {
            let port = args::int(val)?;
            ctx.client.replica.get_or_insert_with(Default::default).port = port;
        } else if is(opt, "ip-address") {
            // NET_HOST_STR_LEN: the longest host name Redis keeps.
            if val.len() >= 256 {
                return Err(error::replconf_ip_too_long(val.len()));
            }
            ctx.client.replica.get_or_insert_with(Default::default).ip =
                Some(String::from_utf8_lossy(val).into_owned());
        } else if is(opt, "capa") {
            if is(val, "psync2") {
                ctx.client
                    .replica
                    .get_or_insert_with(Default::default)
                    .psync2 = true;
            }
        } else if is(opt, "ack") || is(opt, "getack") {
            return Ok(Reply::NoReply);
        } else if is(opt, "rdb-only") {
            args::long_in(val, 0, 1, None)?;
        } else if is(opt, "rdb-filter-only") {
            rdb_filter(val)?;
        } else {
            return Err(error::replconf_unknown(opt));
        }
    }
    Ok(Reply::ok())
}

/// REPLCONF rdb-filter-only's list: sdssplitargs words, only `functions` known.
fn rdb_filter(val: &[u8]) -> Result<(), RedisError> {
    let Some(words) = crate::config::split_args(val) else {
        return Err(RedisError::new(error::REPLCONF_FILTER_MISSING));
    };
    for w in words {
        if !w.eq_ignore_ascii_case(b"functions") {
            return Err(error::replconf_filter_unsupported(&w));
        }
    }
    Ok(())
}
