//! The lock history and the fenced resource as test controls: what `RESPLOCK.HISTORY` and
//! `RESPLOCK.FENCED.*` do, and what the embedding API calls.

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::lock_history::{self, registry::Fenced};
use crate::cmd::runtime::state::ServerState;
use crate::error::RedisError;
use crate::history::History;
use bytes::Bytes;

/// The last `count` events of `key`, as JSON lines (one per item).
pub fn key_lines(state: &ServerState, db: usize, key: &[u8], count: usize) -> Vec<Bytes> {
    let h = lock_history::key_events(state, db, key, count);
    h.to_json_lines()
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(Bytes::copy_from_slice)
        .collect()
}

/// Every node's history (the group's, for `--instances`).
pub fn export(state: &ServerState) -> History {
    lock_history::export(state)
}

/// (events kept, bytes, dropped, recording on).
pub fn stats(state: &ServerState) -> (usize, usize, u64, bool) {
    let (n, bytes, dropped) = lock_history::stats(state);
    (n, bytes, dropped, lock_history::on(state))
}

/// Forget this node's history.
pub fn reset(state: &ServerState) {
    lock_history::reset(state);
}

/// A write of `value` to the fenced resource `resource` with fencing token `token`. With
/// `check`, a token not above the highest the resource accepted is refused, as Kleppmann's
/// fenced storage does; without, every write is taken (a resource that does not check, whose
/// stale writes `resplock check` reports). Recorded in the lock history when it is on.
pub fn fenced_write(
    state: &ServerState,
    client: &Client,
    resource: &[u8],
    token: i64,
    value: &[u8],
    check: bool,
) -> Result<(), RedisError> {
    let mut map = state.lock_history.fenced.lock();
    let entry = map.entry(Bytes::copy_from_slice(resource)).or_default();
    let last = entry.token;
    let accepted = !(check && last.is_some_and(|l| token <= l));
    if accepted {
        // The resource holds the last write it took, stale or not.
        *entry = Fenced {
            token: Some(last.map_or(token, |l| l.max(token))),
            value: Bytes::copy_from_slice(value),
        };
    }
    drop(map);
    if lock_history::on(state) {
        lock_history::fenced(state, client, resource, token, value, accepted);
    }
    if accepted {
        Ok(())
    } else {
        Err(crate::error::test_stale_fencing_token(
            token,
            last.unwrap_or(token),
        ))
    }
}

/// The highest token a fenced resource accepted and the value it holds now.
pub fn fenced_read(state: &ServerState, resource: &[u8]) -> Option<(i64, Bytes)> {
    state
        .lock_history
        .fenced
        .lock()
        .get(resource)
        .and_then(|f| Some((f.token?, f.value.clone())))
}
