//! Faults acted on (the table is `runtime/fault_table.rs`): whether a request must consult
//! the table, holding requests while the server is paused, and closing clients' connections
//! the way a network partition does.

use crate::cmd::runtime::client::{Client, ClientInfo};
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use bytes::Bytes;

/// Close the connections of the clients `pick` selects (all of them with `|_| true`),
/// the way a network partition or a proxy restart does. Returns how many.
pub fn disconnect(state: &ServerState, pick: impl Fn(&ClientInfo) -> bool) -> usize {
    let clients = state.clients.lock();
    let mut n = 0;
    for info in clients.values() {
        // A client already closing (killed before, or by an earlier call) is not counted
        // again: closing it twice is not two disconnections.
        if pick(info) && info.kill.cancel() {
            n += 1;
        }
    }
    n
}

/// Whether the request path must look at faults for `client`: armed, and not a `RESPLOCK.*`
/// request (those always run, so a test can lift what it set).
pub(crate) fn applies(state: &ServerState, cmd: &Command, parent: Option<&Command>) -> bool {
    state.faults.armed()
        && !parent
            .unwrap_or(cmd)
            .has(crate::cmd::base::flags::TEST_ONLY)
}

/// Whether a request is one a client sends while connecting (HELLO, AUTH, SELECT, and any
/// CLIENT subcommand: SETINFO, SETNAME, and newer ones such as redis-py 8's
/// MAINT_NOTIFICATIONS): catch-all faults, pauses and refusals let it through, so a test can
/// still connect to lift them.
pub(crate) fn is_handshake(args: &[Bytes]) -> bool {
    let name = &args[0];
    name.eq_ignore_ascii_case(b"hello")
        || name.eq_ignore_ascii_case(b"auth")
        || name.eq_ignore_ascii_case(b"select")
        || name.eq_ignore_ascii_case(b"client")
}

/// Whether a request is a `RESPLOCK.*` command (by name, before it is resolved): those are
/// served even while the server is paused.
pub(crate) fn is_test_request(args: &[Bytes]) -> bool {
    args[0].len() > 9 && args[0][..9].eq_ignore_ascii_case(b"resplock.")
}

/// Hold a request while the server is paused. False if the client was killed or the server
/// is shutting down meanwhile (the request is then dropped).
pub(crate) async fn wait_while_paused(state: &ServerState, client: &Client) -> bool {
    if state.faults.paused_for().is_none() {
        return true;
    }
    let stop = async {
        tokio::select! {
            _ = client.info.kill.cancelled() => {}
            _ = state.shutdown.cancelled() => {}
        }
    };
    state.faults.wait_unpaused(stop).await
}

/// A fault was set or cleared (`text`: as given, `PAUSE 500`): the lock history keeps it, so
/// a timeline shows what broke when.
pub fn noted(state: &ServerState, text: &str) {
    if crate::cmd::runtime::lock_history::on(state) {
        crate::cmd::runtime::lock_history::fault(state, text);
    }
}
