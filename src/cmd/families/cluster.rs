//! CLUSTER, READONLY, READWRITE and ASKING answered as a server started without
//! `cluster-enabled`: cluster clients probe CLUSTER INFO or CLUSTER SLOTS to tell a cluster
//! from a single node, and Redis 7.0 answers every subcommand (HELP included) with the same
//! error once the subcommand name and its arity have passed the command table's checks.

use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::CmdResult;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("cluster", container).subs(CLUSTER_SUBS),
    Row::new("readonly", disabled),
    Row::new("readwrite", disabled),
    Row::new("asking", disabled),
];

const CLUSTER_SUBS: &[Row] = &[
    Row::new("addslots", disabled),
    Row::new("addslotsrange", disabled),
    Row::new("bumpepoch", disabled),
    Row::new("count-failure-reports", disabled),
    Row::new("countkeysinslot", disabled),
    Row::new("delslots", disabled),
    Row::new("delslotsrange", disabled),
    Row::new("failover", disabled),
    Row::new("flushslots", disabled),
    Row::new("forget", disabled),
    Row::new("getkeysinslot", disabled),
    Row::new("help", disabled),
    Row::new("info", disabled),
    Row::new("keyslot", disabled),
    Row::new("links", disabled),
    Row::new("meet", disabled),
    Row::new("myid", disabled),
    Row::new("nodes", disabled),
    Row::new("replicas", disabled),
    Row::new("replicate", disabled),
    Row::new("reset", disabled),
    Row::new("saveconfig", disabled),
    Row::new("set-config-epoch", disabled),
    Row::new("setslot", disabled),
    Row::new("shards", disabled),
    Row::new("slaves", disabled),
    Row::new("slots", disabled),
];

/// Every cluster command on a server without cluster support (clusterCommand's first check).
fn disabled(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::CLUSTER_DISABLED))
}
