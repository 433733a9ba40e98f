//! A request under an injected fault (`runtime/fault_table.rs`): held while the server is
//! paused, then failed, dropped, run and delayed, or run and its reply lost, as the first
//! matching rule says.

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::RedisError;
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::Arc;

/// A request under an injected fault ([`crate::cmd::runtime::fault_table`]): held while the server
/// is paused, then failed, dropped, run and delayed, or run and its reply lost, as the first
/// matching rule says.
pub(super) async fn run_with_fault(
    state: &Arc<ServerState>,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &mut Vec<Bytes>,
) -> Reply {
    use crate::cmd::runtime::fault_table::Verdict;
    let verdict = state.faults.check(
        client.id,
        cmd.name,
        parent.map(|p| p.name),
        crate::cmd::testctl::faults::is_handshake(args),
    );
    let now = state.clock.now_ms();
    match verdict {
        None => super::execute::run_checked(state, client, cmd, parent, args, now).await,
        Some(Verdict::Error(e)) => super::execute::reject(
            state,
            client,
            Some((cmd, parent)),
            RedisError::from_bytes(e.to_vec()),
        ),
        Some(Verdict::Drop) => {
            client.close_after_reply = true;
            Reply::NoReply
        }
        Some(Verdict::DropAfter) => {
            let _ = super::execute::run_checked(state, client, cmd, parent, args, now).await;
            client.close_after_reply = true;
            Reply::NoReply
        }
        Some(Verdict::Delay(d)) => {
            let reply = super::execute::run_checked(state, client, cmd, parent, args, now).await;
            tokio::select! {
                _ = tokio::time::sleep(d) => {}
                _ = client.info.kill.cancelled() => {}
                _ = state.shutdown.cancelled() => {}
            }
            reply
        }
    }
}
