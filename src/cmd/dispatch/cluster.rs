//! processCommand's cluster step on a node of an in-process cluster (`execute` calls it
//! only when `ServerState::cluster` is Some): the client's ASKING flag lasts one command;
//! the request is redirected (`-MOVED`, `-ASK`), refused (`-CROSSSLOT`, `-TRYAGAIN`,
//! `-CLUSTERDOWN`) or served here, as getNodeByQuery decides; a replica refuses writes
//! (`-READONLY`). The `RESPLOCK.CLUSTER` test controls are run from here too, without the
//! server lock, since they take the locks of several nodes.

use crate::cmd::base::flags;
use crate::cmd::dispatch::multi_queue as multi;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::clients::discard_transaction;
use crate::cmd::runtime::cluster::keys::Rule;
use crate::cmd::runtime::cluster::registry::{client_flags, ClusterNode};
use crate::cmd::runtime::cluster::route;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::Arc;

/// What the cluster step decided.
pub enum Step {
    /// Go on with the request.
    Continue,
    /// Answer this (a redirection: the transaction was flagged or discarded already).
    Answer(Reply),
    /// Refuse the request as processCommand's later checks do (EXEC aborts).
    Refuse(RedisError),
}

/// The cluster step for `cmd` (see the module documentation).
pub async fn step(
    state: &Arc<ServerState>,
    node: &ClusterNode,
    client: &mut Client,
    cmd: &'static Command,
    parent: Option<&'static Command>,
    args: &[Bytes],
) -> Step {
    if parent.is_some_and(|p| p.name == "resplock.cluster") && cmd.name != "help" {
        let reply = crate::cmd::testctl::cluster::wire(node, cmd, args).await;
        return Step::Answer(reply);
    }
    let top = parent.is_none();
    let is_exec = top && cmd.name == "exec";
    let cflags = client.cluster_flags;
    // Redis's resetClient: ASKING lasts for the next command, or the transaction it opens.
    let keeps_asking = (top && cmd.name == "asking")
        || (client.multi.is_some() && !(top && matches!(cmd.name, "exec" | "discard" | "reset")))
        || (top && cmd.name == "multi");
    if !keeps_asking {
        client.cluster_flags &= !client_flags::ASKING;
    }
    let m = &node.shared.membership;
    client.cluster_seen = m.version(node.me);
    let view = m.view(node.me);
    if is_exec || route::rule_of(state, cmd) != Rule::None {
        if let Some(parts) = route::parts(state, client, cmd, parent, args, is_exec) {
            if let Err((r, slot)) =
                route::node_by_query(state, node, &view, cflags, &parts, is_exec)
            {
                crate::cmd::runtime::observe::count_rejected(state, cmd, parent);
                if is_exec {
                    discard_transaction(state, client);
                } else {
                    multi::flag(client);
                }
                return Step::Answer(Reply::error(route::error(&view, r, slot)));
            }
        }
    }
    let writes = cmd.has(flags::WRITE)
        || (is_exec
            && client.multi.as_ref().is_some_and(|m| {
                let rows = state.commands.every_row();
                m.queued.iter().any(|q| rows[q.row].0.has(flags::WRITE))
            }));
    if writes && view.nodes[node.me].master.is_some() {
        return Step::Refuse(RedisError::new(error::READONLY_REPLICA));
    }
    Step::Continue
}
