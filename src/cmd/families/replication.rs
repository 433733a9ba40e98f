//! The replication handshake as a master with no replicas and no way to produce an RDB
//! answers it: REPLCONF's options, FAILOVER's checks (it needs a connected replica), and
//! SYNC/PSYNC, which reach the full resynchronisation and fail where Redis fails when its
//! background save cannot start (`BGSAVE failed, replication can't continue`, then the
//! connection closes). Kept apart so real replication can replace this file.

use crate::cmd::base::args::{self, is};
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
/// checks them; then a master without replicas has nothing to fail over to.
fn failover(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() == 2 && is(&a[1], "abort") {
        return Err(RedisError::new(error::FAILOVER_NOT_IN_PROGRESS));
    }
    let (mut timeout, mut force, mut host) = (0i64, false, false);
    let mut j = 1;
    while j < a.len() {
        if is(&a[j], "timeout") && j + 1 < a.len() && timeout == 0 {
            timeout = args::int(&a[j + 1])?;
            if timeout <= 0 {
                return Err(RedisError::new(error::FAILOVER_TIMEOUT));
            }
            j += 1;
        } else if is(&a[j], "to") && j + 2 < a.len() && !host {
            args::int(&a[j + 2])?;
            host = true;
            j += 2;
        } else if is(&a[j], "force") && !force {
            force = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
        j += 1;
    }
    Err(RedisError::new(error::FAILOVER_NO_REPLICAS))
}

/// SYNC and PSYNC replid offset: PSYNC's FAILOVER form and offset are checked; a full
/// resynchronisation needs an RDB of the dataset, which this server cannot produce, so the
/// would-be replica is told so and disconnected, as Redis does when its save fails.
fn sync(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a[0].eq_ignore_ascii_case(b"psync") {
        if a.len() > 3 && is(&a[3], "failover") {
            crate::log::warning(&format!(
                "Failover request received for replid {}.",
                String::from_utf8_lossy(&a[1])
            ));
            return Err(RedisError::new(error::PSYNC_FAILOVER_MASTER));
        }
        args::int(&a[2])?;
    }
    crate::log::notice("Replica asks for synchronization");
    crate::log::warning("BGSAVE for replication failed");
    ctx.client.close_after_reply = true;
    Err(RedisError::new(error::REPLICATION_BGSAVE_FAILED))
}

/// REPLCONF option value [...]: what a master records about a replica (nothing, as no
/// replica ever follows); ACK and GETACK from a client that is not a replica get no reply.
fn replconf(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len().is_multiple_of(2) {
        return Err(RedisError::new(error::SYNTAX));
    }
    for pair in a[1..].chunks_exact(2) {
        let (opt, val) = (&pair[0], &pair[1]);
        if is(opt, "listening-port") {
            args::int(val)?;
        } else if is(opt, "ip-address") {
            // NET_HOST_STR_LEN: the longest host name Redis keeps.
            if val.len() >= 256 {
                return Err(error::replconf_ip_too_long(val.len()));
            }
        } else if is(opt, "capa") {
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
