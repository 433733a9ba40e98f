//! Requests that wait on another server while holding the server lock (MIGRATE, or EXEC of a
//! transaction that queued one), on a current-thread runtime: the lock is taken and the
//! command run on a blocking thread, so the runtime's one thread goes on serving every other
//! client and listener of the process, a target node of this same process among them. On a
//! multi-threaded runtime they run on the worker like any command and hand its other tasks
//! off while they wait (`runtime::handoff::blocking`).

use crate::cmd::base::flags;
use crate::cmd::dispatch::execute::{reject, run_locked};
use crate::cmd::dispatch::multi_queue as multi;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::lock::script_busy;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::Arc;

/// `cmd` waits on the network: a NETWORK row, or EXEC of a transaction that queued one.
pub(super) fn waits_on_network(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
) -> bool {
    cmd.has(flags::NETWORK)
        || (multi::is_exec(cmd, parent)
            && client.multi.as_ref().is_some_and(|m| {
                m.queued
                    .iter()
                    .any(|q| state.commands.every_row()[q.row].0.has(flags::NETWORK))
            }))
}

/// Run the request on a blocking thread holding the server lock. The client moves there
/// with it and comes back with the reply (its connection waits for that reply anyway).
pub(super) async fn run_on_blocking_thread(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: Vec<Bytes>,
) -> Reply {
    if script_busy(state) && !cmd.has(flags::ALLOW_BUSY) {
        let busy = state.scripting.busy_error();
        return reject(state, client, Some((cmd, parent)), busy);
    }
    let stand_in = Client::detached(client.id, client.db, client.resp);
    let mut owned = std::mem::replace(client, stand_in);
    let sh = state.clone();
    let task = tokio::task::spawn_blocking(move || {
        let held = sh.lock.lock_blocking();
        let system = crate::clock::system_us();
        owned.started_us = system;
        let now = sh.clock.at_us(system).div_euclid(1000);
        let reply = run_locked(&sh, &mut owned, cmd, parent, &args, now, true);
        drop(held);
        (reply, owned)
    });
    match task.await {
        Ok((reply, owned)) => {
            *client = owned;
            reply
        }
        Err(_) => {
            client.close_after_reply = true;
            Reply::error(RedisError::new(error::COMMAND_FAILED))
        }
    }
}
