//! Commands run for the embedding API's direct access (a test's `set`, `get`, `dump` without a
//! client): the same table and [`crate::cmd::runtime::call::call`] as every other caller, holding
//! the server lock, as a client with no connection. The keyspace's events, WATCH, tracking and
//! blocked clients see these writes as they see a client's.
//!
//! What belongs here: running a command for a caller that is not a connection, the refusals
//! such a caller gets (commands that need a connection, block or queue), and running any
//! other API call under the server lock as a command would (`locked`). Named for the
//! embedding API's direct access (a database handle's `set`, `get`, `command`).

use crate::cmd::base::flags::{BLOCKING, NEEDS_CONNECTION, NO_MULTI};
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Runs;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;

/// Run `args` on database `db` and return the reply (RESP3-typed: maps stay maps). Refuses
/// what needs a connection or a script runner (blocking, subscribing, MULTI, EVAL). Takes
/// the server lock blocking this thread: a holder never waits on the caller, so the wait
/// is as short as the command or script in progress.
pub fn run(state: &ServerState, db: usize, args: &[Bytes]) -> Reply {
    if args.is_empty() {
        return Reply::error(RedisError::new(error::SYNTAX));
    }
    let (cmd, parent) = match state.commands.resolve_for(state.test_commands, args) {
        Ok(c) => c,
        Err(e) => return Reply::error(e),
    };
    let top = parent.unwrap_or(cmd);
    let needs_client =
        top.has(NO_MULTI | BLOCKING | NEEDS_CONNECTION) || !matches!(top.runs, Runs::Handler(_));
    if needs_client {
        return Reply::error(RedisError::new(error::DIRECT_NEEDS_CLIENT));
    }
    let held = state.lock.lock_blocking();
    let mut client = Client::detached(0, db, 3);
    let mut ctx = Ctx {
        state,
        client: &mut client,
        now: state.clock.now_ms(),
        in_script: false,
        in_exec: false,
    };
    let reply = crate::cmd::runtime::call::call(&mut ctx, cmd, args);
    crate::cmd::runtime::blocking::serve_ready(state);
    drop(held);
    reply
}

/// Run `f` holding the server lock (snapshots, restarts and clock moves from the API).
pub fn locked<R>(state: &ServerState, f: impl FnOnce() -> R) -> R {
    let _held = state.lock.lock_blocking();
    f()
}
