//! CLUSTER, READONLY, READWRITE and ASKING answered as a server started without
//! `cluster-enabled`: cluster clients probe CLUSTER INFO or CLUSTER SLOTS to tell a cluster
//! from a single node, and Redis 7.0 answers every subcommand (HELP included) with the same
//! error once the subcommand name and its arity have passed the command table's checks.

use crate::cmd::base::flags::*;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::CmdResult;
use bytes::Bytes;

pub const COMMANDS: &[Command] = &[
    Command::new("cluster", -2, 0, container)
        .subs(CLUSTER_SUBS)
        .doc("cluster", "3.0.0", "A container for cluster commands"),
    Command::new("readonly", 1, LOADING | STALE | FAST, disabled).doc(
        "cluster",
        "3.0.0",
        "Enables read queries for a connection to a cluster replica node",
    ),
    Command::new("readwrite", 1, LOADING | STALE | FAST, disabled).doc(
        "cluster",
        "3.0.0",
        "Disables read queries for a connection to a cluster replica node",
    ),
    Command::new("asking", 1, FAST, disabled).doc(
        "cluster",
        "3.0.0",
        "Sent by cluster clients after an -ASK redirect",
    ),
];

const CLUSTER_SUBS: &[Command] = &[
    Command::new("addslots", -3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Assign new hash slots to receiving node",
    ),
    Command::new("addslotsrange", -4, ADMIN | STALE, disabled).doc(
        "cluster",
        "7.0.0",
        "Assign new hash slots to receiving node",
    ),
    Command::new("bumpepoch", 2, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Advance the cluster config epoch",
    ),
    Command::new("count-failure-reports", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Return the number of failure reports active for a given node",
    ),
    Command::new("countkeysinslot", 3, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Return the number of local keys in the specified hash slot",
    ),
    Command::new("delslots", -3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Set hash slots as unbound in receiving node",
    ),
    Command::new("delslotsrange", -4, ADMIN | STALE, disabled).doc(
        "cluster",
        "7.0.0",
        "Set hash slots as unbound in receiving node",
    ),
    Command::new("failover", -2, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Forces a replica to perform a manual failover of its master.",
    ),
    Command::new("flushslots", 2, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Delete a node's own slots information",
    ),
    Command::new("forget", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Remove a node from the nodes table",
    ),
    Command::new("getkeysinslot", 4, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Return local key names in the specified hash slot",
    ),
    Command::new("help", 2, LOADING | STALE, disabled).doc(
        "cluster",
        "5.0.0",
        "Show helpful text about the different subcommands",
    ),
    Command::new("info", 2, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Provides info about Redis Cluster node state",
    ),
    Command::new("keyslot", 3, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Returns the hash slot of the specified key",
    ),
    Command::new("links", 2, STALE, disabled).doc(
        "cluster",
        "7.0.0",
        "Returns a list of all TCP links to and from peer nodes in cluster",
    ),
    Command::new("meet", -4, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Force a node cluster to handshake with another node",
    ),
    Command::new("myid", 2, STALE, disabled).doc("cluster", "3.0.0", "Return the node id"),
    Command::new("nodes", 2, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Get Cluster config for the node",
    ),
    Command::new("replicas", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "5.0.0",
        "List replica nodes of the specified master node",
    ),
    Command::new("replicate", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Reconfigure a node as a replica of the specified master node",
    ),
    Command::new("reset", -2, ADMIN | NOSCRIPT | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Reset a Redis Cluster node",
    ),
    Command::new("saveconfig", 2, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Forces the node to save cluster state on disk",
    ),
    Command::new("set-config-epoch", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Set the configuration epoch in a new node",
    ),
    Command::new("setslot", -4, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Bind a hash slot to a specific node",
    ),
    Command::new("shards", 2, STALE, disabled).doc(
        "cluster",
        "7.0.0",
        "Get array of cluster slots to node mappings",
    ),
    Command::new("slaves", 3, ADMIN | STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "List replica nodes of the specified master node",
    ),
    Command::new("slots", 2, STALE, disabled).doc(
        "cluster",
        "3.0.0",
        "Get array of Cluster slot to node mappings",
    ),
];

/// Every cluster command on a server without cluster support (clusterCommand's first check).
fn disabled(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::CLUSTER_DISABLED))
}
