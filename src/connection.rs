//! One task per client: read what arrived, run every complete request in order, write all
//! replies with one write, and interleave out-of-band pushes (pub/sub) between batches.

use crate::client::{Client, ClientInfo};
use crate::cmd::{self, flags, Ctx};
use crate::error::{self, RedisError};
use crate::protocol::{encode, parse_request, ParseState};
use crate::reply::Reply;
use crate::shared::Shared;
use bytes::{Bytes, BytesMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const READ_CHUNK: usize = 16 * 1024;

pub async fn serve(shared: Arc<Shared>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let id = shared.next_client_id();
    let addr = stream
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let laddr = stream
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let info = Arc::new(ClientInfo::new(id, addr, laddr));
    shared.clients.lock().insert(id, info.clone());
    let (push_tx, mut push_rx) = mpsc::unbounded_channel();
    let mut client = Client::new(info.clone(), push_tx, !shared.requires_pass());
    let (mut rd, mut wr) = stream.into_split();
    let mut inbuf = BytesMut::with_capacity(READ_CHUNK);
    let mut out = BytesMut::with_capacity(READ_CHUNK);
    let mut parse_state = ParseState::default();
    loop {
        if inbuf.capacity() - inbuf.len() < READ_CHUNK / 4 {
            inbuf.reserve(READ_CHUNK);
        }
        tokio::select! {
            _ = shared.shutdown.cancelled() => break,
            _ = info.kill.cancelled() => break,
            r = rd.read_buf(&mut inbuf) => {
                match r {
                    Ok(0) | Err(_) => break,
                    Ok(n) => { shared.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed); }
                }
                process_input(&shared, &mut client, &mut inbuf, &mut parse_state, &mut out).await;
            }
            Some(msg) = push_rx.recv() => {
                encode(&msg, client.resp, &mut out);
                while let Ok(msg) = push_rx.try_recv() {
                    encode(&msg, client.resp, &mut out);
                    if out.len() > 64 * 1024 { break; }
                }
            }
        }
        if !out.is_empty() {
            shared
                .stats
                .net_output_bytes
                .fetch_add(out.len() as u64, Ordering::Relaxed);
            if wr.write_all(&out).await.is_err() {
                break;
            }
            out.clear();
            if out.capacity() > 1024 * 1024 {
                out = BytesMut::with_capacity(READ_CHUNK);
            }
        }
        if client.close_after_reply {
            break;
        }
        if inbuf.is_empty() && inbuf.capacity() > 1024 * 1024 {
            // Give back the memory of a large request once it has been served.
            inbuf = BytesMut::with_capacity(READ_CHUNK);
        }
    }
    let _ = wr.shutdown().await;
    crate::server::client_gone(&shared, &client);
}

/// Run every complete request in `inbuf`, appending the replies to `out`.
async fn process_input(
    shared: &Arc<Shared>,
    client: &mut Client,
    inbuf: &mut BytesMut,
    state: &mut ParseState,
    out: &mut BytesMut,
) {
    while !client.close_after_reply {
        match parse_request(inbuf, state) {
            Ok(None) => break,
            Ok(Some(args)) if args.is_empty() => continue,
            Ok(Some(args)) => {
                let reply = execute(shared, client, args).await;
                encode(&reply, client.resp, out);
            }
            Err(e) => {
                let msg = format!("ERR Protocol error: {}", e.0);
                encode(&Reply::Error(Bytes::from(msg)), client.resp, out);
                client.close_after_reply = true;
                inbuf.clear();
            }
        }
    }
}

/// Check and run one request from a network client.
pub async fn execute(shared: &Arc<Shared>, client: &mut Client, args: Vec<Bytes>) -> Reply {
    shared.stats.total_commands.fetch_add(1, Ordering::Relaxed);
    let (cmd, parent) = match cmd::resolve(&args) {
        Ok(c) => c,
        Err(e) => return Reply::error(e),
    };
    client.info.touch(&cmd::fullname(parent, cmd));
    if !client.authenticated
        && !cmd.has(flags::NO_AUTH)
        && !parent.is_some_and(|p| p.has(flags::NO_AUTH))
    {
        return Reply::error(RedisError::new(error::NOAUTH));
    }
    if let Some(e) = crate::cmd::pubsub_context_error(client, cmd, parent) {
        return Reply::error(e);
    }
    if cmd.has(flags::SCRIPT_RUNNER) {
        return crate::cmd::run_script_command(shared, client, cmd, args).await;
    }
    loop {
        if let Some(guard) = shared.keyspace.gate.try_shared() {
            let now = shared.clock.now_ms();
            let mut ctx = Ctx {
                shared,
                client,
                now,
                in_script: false,
            };
            let reply = cmd::call(&mut ctx, cmd, &args);
            drop(guard);
            return reply;
        }
        if let Some(e) = crate::cmd::busy_error(shared, cmd) {
            return Reply::error(e);
        }
        shared.keyspace.gate.wait_released().await;
    }
}
