//! The master side of replication: the replication stream (every effect the AOF gets, plus
//! PUBLISH) fed to the backlog and the attached replicas.

pub mod registry;

use crate::cmd::runtime::state::ServerState;
use bytes::Bytes;

/// Append one command of the replication stream (replicationFeedSlaves), with a SELECT when
/// its database differs from the stream's.
pub fn feed(state: &ServerState, db: usize, args: &[Bytes]) {
    let mut backlog = state.replication.backlog.lock();
    let Some(b) = backlog.as_mut() else {
        return;
    };
    let mut out = Vec::new();
    let mut selected = state.replication.stream_db.lock();
    if *selected != Some(db) {
        crate::aof::encode::select(&mut out, db);
        *selected = Some(db);
    }
    let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
    crate::aof::encode::command(&mut out, &refs);
    b.append(&out);
}

/// Whether replicas are attached (propagation then runs even without the AOF).
pub fn has_replicas(state: &ServerState) -> bool {
    state.replication.backlog.lock().is_some()
}
