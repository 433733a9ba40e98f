//! Test surface, not part of the supported API: an in-process server state with one client, driven
//! request by request without sockets, for the fuzz targets under `fuzz/` (a separate crate, so it
//! can only reach what is public) and for tests. Requests take the same path as a network client's
//! (`cmd::dispatch::execute::execute`: authentication, subscribed mode, the server lock, the
//! command table), and the client's queued pushes are drained after each one.

use crate::cmd::runtime::client::Client;
use crate::cmd::ServerState;
use crate::config::Config;
use crate::outbox::Taken;
use crate::protocol::encode;
use crate::reply::Reply;
use bytes::{Bytes, BytesMut};
use std::sync::Arc;

/// One server state and one connected client.
pub struct Harness {
    rt: tokio::runtime::Runtime,
    state: Arc<ServerState>,
    client: Client,
    taken: Taken,
}

impl Harness {
    /// A server with `config` (no listener) and a client connected to it.
    pub fn new(config: Config) -> Harness {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let state = ServerState::new(config, crate::cmd::commands());
        crate::cmd::on_server_start(&state);
        let id = state.next_client_id();
        let client = crate::cmd::runtime::clients::connect(
            &state,
            id,
            "127.0.0.1:1".into(),
            "127.0.0.1:2".into(),
        );
        Harness {
            rt,
            state,
            client,
            taken: Taken::default(),
        }
    }

    /// The server's state.
    pub fn state(&self) -> &Arc<ServerState> {
        &self.state
    }

    /// The protocol the client speaks now (2 or 3).
    pub fn resp(&self) -> u8 {
        self.client.resp
    }

    /// Run one request; returns its reply and everything the client would be sent for it
    /// (queued pushes, then the encoded reply) in the client's protocol. A client that asked
    /// to close (QUIT) is reopened afresh.
    pub fn request(&mut self, args: Vec<Bytes>) -> (Reply, Vec<u8>) {
        let mut args = args;
        let reply = self.rt.block_on(crate::cmd::dispatch::execute::execute(
            &self.state,
            &mut self.client,
            &mut args,
        ));
        // Each request stands alone (a connection clears this after a pipelined batch).
        self.client.recent_us = 0;
        let mut out = BytesMut::new();
        self.client.push.take(usize::MAX, &mut self.taken);
        self.taken.write_to(&mut out);
        encode(&reply, self.client.resp, &mut out);
        if self.client.close_after_reply {
            self.client.close_after_reply = false;
        }
        (reply, out.to_vec())
    }

    /// The keyspace's bookkeeping is consistent (see `Keyspace::audit`).
    pub fn audit(&self) -> Result<(), String> {
        self.state.keyspace.audit()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        crate::cmd::runtime::clients::disconnect(&self.state, &self.client);
    }
}
