//! MULTI queuing (Redis's queueMultiCommand and flagTransaction): while a client is in MULTI,
//! a command that passes processCommand's checks is queued by its row number instead of run,
//! one that fails them marks the transaction so EXEC aborts, and EXEC rejected itself discards
//! the transaction. Queuing touches nothing shared, so it takes no lock. EXEC, DISCARD, MULTI,
//! WATCH, QUIT and RESET run at once.

use crate::cmd::runtime::client::{Client, Queued};
use crate::cmd::runtime::clients::discard_transaction;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;

/// Commands that run at once even inside MULTI (everything else is queued).
pub fn runs_in_multi(cmd: &Command, parent: Option<&Command>) -> bool {
    parent.is_none()
        && matches!(
            cmd.name,
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        )
}

/// Whether `cmd` is EXEC, whose rejection aborts the transaction.
pub fn is_exec(cmd: &Command, parent: Option<&Command>) -> bool {
    parent.is_none() && cmd.name == "exec"
}

/// Queue a checked command: `+QUEUED`. A transaction that already failed keeps nothing
/// (Redis frees nothing it would never run).
pub fn queue(
    state: &ServerState,
    client: &mut Client,
    cmd: &'static Command,
    args: Vec<Bytes>,
) -> Reply {
    let m = client.multi.as_mut().expect("queue is called in MULTI");
    if !m.aborted {
        let row = state
            .commands
            .row_number(cmd)
            .expect("a resolved row is numbered");
        // Redis's mstate.argv_len_sums: the arguments and a pointer each (client eviction).
        let bytes = args.iter().map(|a| a.len() + 8).sum::<usize>();
        let mem = &client.info.extra.mem;
        mem.multi_argv.fetch_add(bytes, Ordering::Relaxed);
        m.queued.push(Queued { row, args });
        mem.multi_cmds.store(m.queued.len(), Ordering::Relaxed);
        client
            .info
            .multi
            .store(m.queued.len() as i64, Ordering::Relaxed);
    }
    Reply::simple("QUEUED")
}

/// Redis's flagTransaction: a command was rejected while the client is in MULTI.
pub fn flag(client: &mut Client) {
    if let Some(m) = client.multi.as_mut() {
        m.aborted = true;
    }
}

/// Redis's execCommandAbort: EXEC itself was rejected (BUSY); the transaction is discarded.
pub fn abort(state: &ServerState, client: &mut Client, why: &RedisError) -> Reply {
    discard_transaction(state, client);
    Reply::error(error::execabort_because(why))
}
