//! The master side of Redis's replication, what does not need the command table: the
//! replication id, offset and backlog ([`backlog`]). The commands (REPLCONF, PSYNC, SYNC,
//! WAIT, ROLE) and the replicas' connections build on it.

pub mod backlog;
