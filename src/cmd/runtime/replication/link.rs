//! The replica side of replication, as redis-server 7.0's syncWithMaster,
//! readSyncBulkPayload and the master client: one task per REPLICAOF connects to the master,
//! does the handshake (PING, AUTH with masterauth/masteruser, REPLCONF listening-port and
//! capa, PSYNC with this server's replication id and offset), loads the RDB of a full
//! resynchronization (`$<len>` or the diskless `$EOF:<mark>` form) in place of the dataset,
//! then applies the master's stream under the server lock, forwarding it byte for byte to
//! its own backlog and replicas (so they can PSYNC from it, and it can be promoted without
//! a full resync). It acknowledges its offset every second and on REPLCONF GETACK, and
//! reconnects every second after the link drops. No lock is held across an await.

use crate::cmd::runtime::call::call;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::persist::load;
use crate::cmd::runtime::replication::role;
use crate::cmd::runtime::replication::registry::{Ids, LinkStatus, NO_REPLID};
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::repl::backlog::Backlog;
use bytes::{Bytes, BytesMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Why a link ended.
type Failed = String;

/// The link task of REPLICAOF generation `generation`: connect, synchronize, follow, and
/// again a second after the link drops, until the master changes or the server stops.
pub async fn run(state: Arc<ServerState>, generation: u64) {
    let Some(cancel) = state
        .replication
        .with_link(generation, |l| l.cancel.clone())
    else {
        return;
    };
    // replicationCron runs once the dataset is loaded (the RDB may carry our history).
    while state.persist.starting.load(Ordering::Acquire) {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = cancel.cancelled() => return,
            _ = state.shutdown.cancelled() => return,
        }
    }
    loop {
        let Some((host, port)) = state.replication.with_link(generation, |l| {
            l.status = LinkStatus::Connecting;
            (l.host.clone(), l.port)
        }) else {
            return;
        };
        crate::log::notice(&format!("Connecting to MASTER {host}:{port}"));
        let r = tokio::select! {
            r = session(&state, generation, &host, port) => r,
            _ = cancel.cancelled() => return,
            _ = state.shutdown.cancelled() => return,
        };
        match r {
            Err(why) if !why.is_empty() => crate::log::warning(&why),
            _ => {}
        }
        let now_s = state.clock.now_ms() / 1000;
        let was_up = state.replication.with_link(generation, |l| {
            let up = l.status == LinkStatus::Connected;
            if up || l.down_since_s == 0 {
                l.down_since_s = now_s;
            }
            l.status = LinkStatus::Connect;
            l.has_master = false;
            up
        });
        match was_up {
            None => return,
            Some(true) => {
                // replicationHandleMasterDisconnection reconnects at once: waiting risks
                // the backlog moving past our offset.
                crate::log::notice("Connection with master lost.");
                continue;
            }
            Some(false) => {}
        }
        // replicationCron tries again within a second.
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = cancel.cancelled() => return,
            _ = state.shutdown.cancelled() => return,
        }
    }
}

/// The master's connection and what was read from it but not consumed yet.
struct Conn {
    stream: TcpStream,
    buf: BytesMut,
    timeout: Duration,
}

impl Conn {
    async fn send(&mut self, args: &[&[u8]]) -> Result<(), Failed> {
        let mut out = Vec::new();
        crate::aof::encode::command(&mut out, args);
        self.stream
            .write_all(&out)
            .await
            .map_err(|e| format!("Error writing to MASTER: {e}"))
    }

    /// Read more bytes; an error when the master closed or stayed silent past repl-timeout.
    async fn fill(&mut self) -> Result<usize, Failed> {
        match tokio::time::timeout(self.timeout, self.stream.read_buf(&mut self.buf)).await {
            Err(_) => Err("Timeout connecting to the MASTER...".into()),
            Ok(Ok(0)) => Err("Error condition on socket for SYNC: Connection reset by peer".into()),
            Ok(Ok(n)) => Ok(n),
            Ok(Err(e)) => Err(format!("Error condition on socket for SYNC: {e}")),
        }
    }

    /// One reply line, without its CRLF (a bare LF ends a line too, as the master's
    /// keep-alive newlines are).
    async fn line(&mut self) -> Result<Vec<u8>, Failed> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut l = self.buf.split_to(i + 1).to_vec();
                l.pop();
                if l.last() == Some(&b'\r') {
                    l.pop();
                }
                return Ok(l);
            }
            self.fill().await?;
        }
    }

    /// Send a handshake command and read its one-line reply.
    async fn ask(&mut self, args: &[&[u8]]) -> Result<Vec<u8>, Failed> {
        self.send(args).await?;
        self.line().await
    }
}

/// Connect to `host`:`port`, from `source` (`bind-source-addr`) when set, as Redis's
/// connectWithMaster binds it first: the master sees the replica at that address. Each
/// address of `host` is tried in turn; the error is the last one's.
async fn connect_from(host: &str, port: u16, source: Option<&str>) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for addr in tokio::net::lookup_host((host, port)).await? {
        let Some(source) = source else {
            match TcpStream::connect(addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            }
            continue;
        };
        // The source of the same family as the destination (a name may resolve to both).
        let Some(from) = tokio::net::lookup_host((source, 0))
            .await?
            .find(|a| a.is_ipv4() == addr.is_ipv4())
        else {
            continue;
        };
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        match socket.bind(from) {
            Ok(()) => match socket.connect(addr).await {
                Ok(s) => return Ok(s),
                Err(e) => last = e,
            },
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// One connection to the master, from connecting until it drops.
async fn session(
    state: &Arc<ServerState>,
    generation: u64,
    host: &str,
    port: u16,
) -> Result<(), Failed> {
    let timeout = Duration::from_secs(repl_timeout(state));
    let source = state
        .config
        .read()
        .get("bind-source-addr")
        .filter(|s| !s.is_empty());
    let stream = tokio::time::timeout(timeout, connect_from(host, port, source.as_deref()))
        .await
        .map_err(|_| "Timeout connecting to the MASTER...".to_string())?
        .map_err(|e| format!("Unable to connect to MASTER: {e}"))?;
    let _ = stream.set_nodelay(true);
    state
        .replication
        .with_link(generation, |l| l.status = LinkStatus::Handshake)
        .ok_or_else(String::new)?;
    crate::log::notice("MASTER <-> REPLICA sync started");
    let mut c = Conn {
        stream,
        buf: BytesMut::with_capacity(16 * 1024),
        timeout,
    };
    handshake(state, &mut c).await?;
    let (replid, offset) = if state.replication.has_history.load(Ordering::Relaxed) {
        let ids = state.replication.ids.lock().clone();
        let offset = (state.replication.offset() + 1).to_string();
        crate::log::notice(&format!(
            "Trying a partial resynchronization (request {}:{offset}).",
            ids.replid
        ));
        (ids.replid, offset)
    } else {
        crate::log::notice("Partial resynchronization not possible (no cached master)");
        ("?".to_string(), "-1".to_string())
    };
    // A master failing over to this target asks it to take over with the same PSYNC.
    let failing_over = role::failing_over_to_master(state);
    let mut psync: Vec<&[u8]> = vec![b"PSYNC", replid.as_bytes(), offset.as_bytes()];
    if failing_over {
        psync.push(b"FAILOVER");
    }
    if let Err(e) = c.send(&psync).await {
        if failing_over {
            let held = crate::cmd::runtime::cluster::follow::lock_async(state).await;
            role::abort_failover(state, "Write error to failover target");
            drop(held);
        }
        return Err(e);
    }
    let mut reply = c.line().await?;
    while reply.is_empty() {
        // Newlines keep the link alive while the master prepares.
        reply = c.line().await?;
    }
    if failing_over {
        let accepted = reply.starts_with(b"+FULLRESYNC") || reply.starts_with(b"+CONTINUE");
        if !accepted {
            crate::log::warning(&format!(
                "Unexpected reply to PSYNC from master: {}",
                String::from_utf8_lossy(&reply)
            ));
        }
        let held = crate::cmd::runtime::cluster::follow::lock_async(state).await;
        role::failover_psync_answered(state, accepted);
        drop(held);
        if !accepted {
            return Err(String::new());
        }
    }
    if let Some(rest) = reply.strip_prefix(b"+FULLRESYNC") {
        let text = String::from_utf8_lossy(rest).trim().to_string();
        let mut words = text.split(' ');
        let id = words.next().unwrap_or("").to_string();
        let off: i64 = words.next().and_then(|o| o.parse().ok()).unwrap_or(-1);
        crate::log::notice(&format!("Full resync from master: {id}:{off}"));
        full_sync(state, generation, &mut c, id, off).await?;
    } else if let Some(rest) = reply.strip_prefix(b"+CONTINUE") {
        let id = String::from_utf8_lossy(rest).trim().to_string();
        crate::log::notice(
            "Successful partial resynchronization with master.\nMASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.",
        );
        continued(state, generation, id)?;
    } else {
        return Err(format!(
            "Unexpected reply to PSYNC from master: {}",
            String::from_utf8_lossy(&reply)
        ));
    }
    follow(state, generation, c).await
}

/// PING, AUTH, REPLCONF listening-port, ip-address and capa (syncWithMaster's states).
async fn handshake(state: &ServerState, c: &mut Conn) -> Result<(), Failed> {
    let pong = c.ask(&[b"PING"]).await?;
    // An error that only says authentication is needed is fine: AUTH comes next.
    if pong.first() == Some(&b'-')
        && !pong.starts_with(b"-NOAUTH")
        && !pong.starts_with(b"-NOPERM")
        && !pong.starts_with(b"-ERR operation not permitted")
    {
        return Err(format!(
            "Error reply to PING from master: '{}'",
            String::from_utf8_lossy(&pong[1..])
        ));
    }
    crate::log::notice("Master replied to PING, replication can continue...");
    let (auth, user, announce_port, announce_ip) = {
        let cfg = state.config.read();
        let get = |k: &str| cfg.get(k).filter(|v| !v.is_empty());
        let port = match get("replica-announce-port").and_then(|p| p.parse::<u16>().ok()) {
            Some(p) if p != 0 => p,
            _ => cfg.port,
        };
        (
            get("masterauth"),
            get("masteruser"),
            port,
            get("replica-announce-ip"),
        )
    };
    if let Some(pass) = auth {
        let reply = match &user {
            Some(u) => c.ask(&[b"AUTH", u.as_bytes(), pass.as_bytes()]).await?,
            None => c.ask(&[b"AUTH", pass.as_bytes()]).await?,
        };
        if reply.first() == Some(&b'-') {
            return Err(format!(
                "Unable to AUTH to MASTER: {}",
                String::from_utf8_lossy(&reply)
            ));
        }
    }
    let port = announce_port.to_string();
    let reply = c
        .ask(&[b"REPLCONF", b"listening-port", port.as_bytes()])
        .await?;
    if reply.first() == Some(&b'-') {
        crate::log::notice(&format!(
            "(Non critical) Master does not understand REPLCONF listening-port: {}",
            String::from_utf8_lossy(&reply)
        ));
    }
    if let Some(ip) = announce_ip {
        let reply = c.ask(&[b"REPLCONF", b"ip-address", ip.as_bytes()]).await?;
        if reply.first() == Some(&b'-') {
            crate::log::notice(&format!(
                "(Non critical) Master does not understand REPLCONF ip-address: {}",
                String::from_utf8_lossy(&reply)
            ));
        }
    }
    let reply = c
        .ask(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])
        .await?;
    if reply.first() == Some(&b'-') {
        crate::log::notice(&format!(
            "(Non critical) Master does not understand REPLCONF capa: {}",
            String::from_utf8_lossy(&reply)
        ));
    }
    Ok(())
}

/// repl-timeout in seconds (at least one).
fn repl_timeout(state: &ServerState) -> u64 {
    state
        .config
        .read()
        .get("repl-timeout")
        .and_then(|v| v.parse().ok())
        .unwrap_or(60u64)
        .max(1)
}

/// readSyncBulkPayload: read the RDB (`$<len>` or `$EOF:<40-byte mark>` ... mark), then
/// replace the dataset with it and take the master's replication id and offset.
async fn full_sync(
    state: &Arc<ServerState>,
    generation: u64,
    c: &mut Conn,
    master_replid: String,
    master_offset: i64,
) -> Result<(), Failed> {
    state
        .replication
        .with_link(generation, |l| l.status = LinkStatus::Sync)
        .ok_or_else(String::new)?;
    let head = loop {
        let l = c.line().await?;
        if !l.is_empty() {
            break l;
        }
    };
    if head.first() == Some(&b'-') {
        return Err(format!(
            "MASTER aborted replication with an error: {}",
            String::from_utf8_lossy(&head[1..])
        ));
    }
    if head.first() != Some(&b'$') {
        return Err(format!(
            "Bad protocol from MASTER, the first byte is not '$' (we received '{}'), are you sure the host and port are right?",
            String::from_utf8_lossy(&head)
        ));
    }
    let data = if let Some(mark) = head.strip_prefix(b"$EOF:") {
        if mark.len() != 40 {
            return Err("Bad EOF mark from MASTER".into());
        }
        crate::log::notice(
            "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk",
        );
        loop {
            if c.buf.len() >= 40 && c.buf.ends_with(mark) {
                let mut d = std::mem::take(&mut c.buf);
                d.truncate(d.len() - 40);
                break d;
            }
            c.fill().await?;
            touch(state, generation);
        }
    } else {
        let len: usize = std::str::from_utf8(&head[1..])
            .ok()
            .and_then(|l| l.parse().ok())
            .ok_or_else(|| "Bad RDB length from MASTER".to_string())?;
        crate::log::notice(&format!(
            "MASTER <-> REPLICA sync: receiving {len} bytes from master to disk"
        ));
        while c.buf.len() < len {
            c.fill().await?;
            touch(state, generation);
        }
        c.buf.split_to(len)
    };
    let held = crate::cmd::runtime::cluster::follow::lock_async(state).await;
    if state.replication.with_link(generation, |_| ()).is_none() {
        return Err(String::new());
    }
    crate::log::notice("MASTER <-> REPLICA sync: Flushing old data");
    let now = state.clock.now_ms();
    load::empty_data(state, now);
    crate::log::notice("MASTER <-> REPLICA sync: Loading DB in memory");
    let opts = load::options(state, false, true);
    let mut stream_db = 0usize;
    let r = {
        let mut d = crate::rdb::Decoder::new(&data);
        crate::rdb::file::read_header(&mut d, true).and_then(|v| {
            crate::rdb::file::load_body(&mut d, v, &opts, &mut |ev| {
                if let crate::rdb::file::Event::Aux(k, v) = &ev {
                    if k.eq_ignore_ascii_case(b"repl-stream-db") {
                        stream_db = String::from_utf8_lossy(v).parse().unwrap_or(0);
                    }
                }
                load::apply(state, ev, true)
            })
        })
    };
    if let Err(e) = r {
        // What loaded is dropped: a half dataset is never served as the master's.
        load::empty_data(state, now);
        drop(held);
        return Err(format!(
            "Failed trying to load the MASTER synchronization DB from disk: {e}"
        ));
    }
    let r = &state.replication;
    *r.ids.lock() = Ids {
        replid: master_replid,
        replid2: NO_REPLID.to_string(),
        second_offset: -1,
    };
    let size = crate::cmd::runtime::replication::registry::backlog_size(&state.config.read());
    *r.backlog.lock() = Some(Backlog::new(size, master_offset));
    *r.stream_db.lock() = Some(stream_db);
    r.has_history.store(true, Ordering::Relaxed);
    state.propagation.set_active(true);
    // Our replicas must resync from the new history.
    r.disconnect_replicas();
    r.with_link(generation, |l| {
        l.status = LinkStatus::Connected;
        l.has_master = true;
        l.read_offset = master_offset;
        l.last_io_ms = now;
    });
    state
        .dirty
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    drop(held);
    crate::log::notice("MASTER <-> REPLICA sync: Finished with success");
    Ok(())
}

/// `+CONTINUE [replid]`: the stream goes on from this server's offset; a new id means the
/// master's history changed (it was promoted), kept as replid2 up to here.
fn continued(state: &ServerState, generation: u64, new_id: String) -> Result<(), Failed> {
    let r = &state.replication;
    let offset = r.offset();
    {
        let mut ids = r.ids.lock();
        if !new_id.is_empty() && new_id != ids.replid {
            ids.replid2 = std::mem::replace(&mut ids.replid, new_id);
            ids.second_offset = offset + 1;
            crate::log::notice(&format!("Master replication ID changed to {}", ids.replid));
            r.disconnect_replicas();
        }
    }
    {
        let mut b = r.backlog.lock();
        if b.is_none() {
            let size =
                crate::cmd::runtime::replication::registry::backlog_size(&state.config.read());
            *b = Some(Backlog::new(size, offset));
        }
    }
    state.propagation.set_active(true);
    let now = state.clock.now_ms();
    r.with_link(generation, |l| {
        l.status = LinkStatus::Connected;
        l.has_master = true;
        l.read_offset = offset;
        l.last_io_ms = now;
    })
    .ok_or_else(String::new)
}

/// The master's bytes arrived now (INFO's master_last_io_seconds_ago).
fn touch(state: &ServerState, generation: u64) {
    let now = state.clock.now_ms();
    state
        .replication
        .with_link(generation, |l| l.last_io_ms = now);
}

/// Most commands applied under one hold of the server lock (a transaction is never split).
const BATCH: usize = 256;

/// Apply the master's stream until the link drops; acknowledge every second.
async fn follow(state: &Arc<ServerState>, generation: u64, c: Conn) -> Result<(), Failed> {
    let Conn {
        stream,
        buf,
        timeout,
    } = c;
    let addr = |a: std::io::Result<std::net::SocketAddr>| a.map(|a| a.to_string()).unwrap_or_default();
    let (peer, local) = (addr(stream.peer_addr()), addr(stream.local_addr()));
    let (mut rd, mut wr) = stream.into_split();
    // The master client: its database follows the stream's SELECTs; CLIENT LIST shows it
    // (flags=M, user (superuser)), MONITOR names its commands by the master's address, and
    // CLIENT KILL of it drops the link (the replica then reconnects).
    let db = state.replication.stream_db.lock().unwrap_or(0);
    let mut master = crate::cmd::runtime::clients::connect(state, state.next_client_id(), peer, local);
    master.info.extra.master.store(true, std::sync::atomic::Ordering::Relaxed);
    *master.info.user.lock() = "(superuser)".to_string();
    master.select(db);
    let r = follow_as(state, generation, &mut master, &mut rd, &mut wr, buf, timeout).await;
    crate::cmd::runtime::clients::disconnect(state, &master);
    r
}

/// [`follow`] with the master client registered.
async fn follow_as(
    state: &Arc<ServerState>,
    generation: u64,
    master: &mut Client,
    rd: &mut tokio::net::tcp::OwnedReadHalf,
    wr: &mut tokio::net::tcp::OwnedWriteHalf,
    mut buf: BytesMut,
    timeout: Duration,
) -> Result<(), Failed> {
    let kill = master.info.kill.clone();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut last_read = tokio::time::Instant::now();
    ack(state, wr).await?;
    let mut paused = crate::cmd::runtime::pause::HeldCount::new(state);
    loop {
        let (acks, waits) = apply_ready(state, generation, master, &mut buf)?;
        paused.set(waits == Waits::Pause);
        for offset in acks {
            send_ack(wr, offset).await?;
        }
        tokio::select! {
            // CLIENT KILL of the master client: the link drops ("Connection with master
            // lost." follows) and is made again.
            _ = kill.cancelled() => return Err(String::new()),
            // A script held the lock: the commands read wait for its end.
            _ = state.lock.released(), if waits == Waits::Lock => {}
            // A pause held the stream back: reading goes on, applying waits for its end.
            _ = crate::cmd::runtime::pause::changed_or_ended(state), if waits == Waits::Pause => {}
            r = rd.read_buf(&mut buf) => match r {
                Ok(0) => return Err("Connection with master lost.".into()),
                Err(e) => return Err(format!("Connection with master lost: {e}")),
                Ok(n) => {
                    last_read = tokio::time::Instant::now();
                    let now = state.clock.now_ms();
                    state.replication.with_link(generation, |l| {
                        l.last_io_ms = now;
                        l.read_offset += n as i64;
                    });
                }
            },
            _ = tick.tick() => {
                if last_read.elapsed() > timeout {
                    return Err("MASTER timeout: no data nor PING received...".into());
                }
                ack(state, wr).await?;
            }
        }
    }
}

/// REPLCONF ACK with the offset applied so far.
async fn ack(state: &ServerState, wr: &mut tokio::net::tcp::OwnedWriteHalf) -> Result<(), Failed> {
    send_ack(wr, state.replication.offset()).await
}

async fn send_ack(wr: &mut tokio::net::tcp::OwnedWriteHalf, offset: i64) -> Result<(), Failed> {
    let mut out = Vec::new();
    crate::aof::encode::command(
        &mut out,
        &[b"REPLCONF", b"ACK", offset.to_string().as_bytes()],
    );
    wr.write_all(&out)
        .await
        .map_err(|e| format!("Connection with master lost: {e}"))
}

/// Why complete commands of the master's stream were left unapplied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waits {
    /// Nothing is left: all that arrived whole was applied.
    No,
    /// The server lock is held (a script runs).
    Lock,
    /// CLIENT PAUSE holds the next command (or the transaction it is in) back.
    Pause,
}

/// How many of `cmds` (and their bytes) come before the first that a pause holds back:
/// before the transaction it is part of, since a transaction is applied whole. None when
/// nothing is held.
fn before_paused(state: &ServerState, cmds: &[(Vec<Bytes>, usize)]) -> Option<(usize, usize)> {
    if !crate::cmd::runtime::pause::is_paused(state) {
        return None;
    }
    let (mut unit, mut unit_pos, mut pos, mut in_multi) = (0usize, 0usize, 0usize, false);
    for (i, (args, len)) in cmds.iter().enumerate() {
        if !in_multi {
            (unit, unit_pos) = (i, pos);
        }
        if crate::cmd::runtime::pause::holds_master_command(state, args) {
            return Some((unit, unit_pos));
        }
        pos += len;
        if let Some(name) = args.first() {
            if name.eq_ignore_ascii_case(b"multi") {
                in_multi = true;
            } else if name.eq_ignore_ascii_case(b"exec") || name.eq_ignore_ascii_case(b"discard") {
                in_multi = false;
            }
        }
    }
    None
}

/// A link buffer larger than this is freed once empty.
const BIG_BUFFER: usize = 1024 * 1024;

/// Apply the complete commands in `buf` (whole transactions only), forward their bytes to
/// this server's backlog and replicas. Returns the offsets REPLCONF GETACKs asked for, and
/// why commands wait, if some do.
fn apply_ready(
    state: &ServerState,
    generation: u64,
    master: &mut Client,
    buf: &mut BytesMut,
) -> Result<(Vec<i64>, Waits), Failed> {
    let mut acks = Vec::new();
    loop {
        // Commands up to the last point outside a transaction.
        let mut cmds = Vec::new();
        let (mut pos, mut cut, mut cut_n, mut in_multi) = (0usize, 0usize, 0usize, false);
        while let Some((args, len)) = parse_command(&buf[pos..])? {
            pos += len;
            if let Some(name) = args.first() {
                if name.eq_ignore_ascii_case(b"multi") {
                    in_multi = true;
                } else if name.eq_ignore_ascii_case(b"exec")
                    || name.eq_ignore_ascii_case(b"discard")
                {
                    in_multi = false;
                }
            }
            cmds.push((args, len));
            if !in_multi {
                cut = pos;
                cut_n = cmds.len();
                if cut_n >= BATCH {
                    break;
                }
            }
        }
        if cut_n == 0 {
            return Ok((acks, Waits::No));
        }
        cmds.truncate(cut_n);
        // Taken without waiting: a script holding the lock leaves the bytes for next time.
        let Some(held) = state.lock.try_lock().or_else(|| state.lock.lock_briefly()) else {
            return Ok((acks, Waits::Lock));
        };
        if state.replication.with_link(generation, |_| ()).is_none() {
            return Err(String::new());
        }
        // Checked under the lock, which CLIENT PAUSE takes too.
        let paused = before_paused(state, &cmds);
        if let Some((n, bytes)) = paused {
            if n == 0 {
                return Ok((acks, Waits::Pause));
            }
            cmds.truncate(n);
            cut = bytes;
        }
        let base = state.replication.offset();
        let mut done = 0i64;
        let mut queued: Option<Vec<Vec<Bytes>>> = None;
        crate::keyspace::ignore_expiry(true);
        for (args, len) in &cmds {
            let is = |w: &str| {
                args.first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()))
            };
            if args.is_empty() {
            } else if is("replconf")
                && args
                    .get(1)
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"getack"))
            {
                acks.push(base + done);
            } else if is("multi") {
                // MONITOR shows the transaction as Redis runs it: MULTI, the commands, EXEC.
                crate::cmd::runtime::observe::feed(state, master, false, args);
                queued = Some(Vec::new());
            } else if is("exec") {
                if let Some(q) = queued.take() {
                    crate::cmd::runtime::propagate::unit(state, || {
                        for a in &q {
                            apply_one(state, master, a);
                        }
                    });
                }
                crate::cmd::runtime::observe::feed(state, master, false, args);
            } else if is("discard") {
                queued = None;
            } else if let Some(q) = queued.as_mut() {
                q.push(args.clone());
            } else {
                apply_one(state, master, args);
            }
            done += *len as i64;
        }
        crate::keyspace::ignore_expiry(false);
        let bytes = buf.split_to(cut);
        // A big command's buffer goes once applied (Redis trims the master client's query
        // buffer): kept, it would hold as much again as the value it carried.
        if buf.is_empty() && buf.capacity() > BIG_BUFFER {
            *buf = BytesMut::with_capacity(16 * 1024);
        }
        state.replication.push_stream(&bytes, state.clock.now_ms());
        *state.replication.stream_db.lock() = Some(master.db);
        crate::cmd::runtime::blocking::serve_ready(state);
        drop(held);
        if paused.is_some() {
            return Ok((acks, Waits::Pause));
        }
    }
}

/// Run one command of the master's stream as its client (replies are dropped).
fn apply_one(state: &ServerState, master: &mut Client, args: &[Bytes]) {
    let Ok((cmd, parent)) = state.commands.resolve(args) else {
        crate::log::warning(&format!(
            "Unknown command '{}' from master",
            String::from_utf8_lossy(&args[0])
        ));
        return;
    };
    // CLIENT LIST's cmd and idle of the master client.
    master
        .info
        .touch(parent.map(|p| &p.name), &cmd.name, state.clock.now_ms());
    let mut ctx = Ctx {
        state,
        client: master,
        now: state.clock.now_ms(),
        in_script: false,
        in_exec: true,
    };
    let reply = call(&mut ctx, cmd, args);
    if let crate::reply::Reply::Error(e) = reply {
        crate::log::warning(&format!(
            "== CRITICAL == This replica is sending an error to its master: '{}' after processing the command '{}'",
            String::from_utf8_lossy(&e),
            String::from_utf8_lossy(&args[0])
        ));
    }
}

/// One complete command at the start of `buf` (multibulk, or an inline line such as a
/// keep-alive newline) and its length in bytes; None until it has all arrived.
fn parse_command(buf: &[u8]) -> Result<Option<(Vec<Bytes>, usize)>, Failed> {
    let bad = || "Protocol error from master".to_string();
    let Some(first) = buf.first() else {
        return Ok(None);
    };
    let line_end = |from: usize| {
        buf[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| from + i)
    };
    if *first != b'*' {
        let Some(end) = line_end(0) else {
            return Ok(None);
        };
        let line = &buf[..end];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let args = line
            .split(|b| *b == b' ')
            .filter(|w| !w.is_empty())
            .map(Bytes::copy_from_slice)
            .collect();
        return Ok(Some((args, end + 1)));
    }
    let num = |from: usize, to: usize| -> Result<i64, Failed> {
        let s = &buf[from..to];
        let s = s.strip_suffix(b"\r").unwrap_or(s);
        std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(bad)
    };
    let Some(end) = line_end(1) else {
        return Ok(None);
    };
    let n = num(1, end)?;
    if !(0..=1 << 20).contains(&n) {
        return Err(bad());
    }
    let mut pos = end + 1;
    let mut args = Vec::with_capacity(n as usize);
    for _ in 0..n {
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err(bad());
        }
        let Some(end) = line_end(pos + 1) else {
            return Ok(None);
        };
        let len = num(pos + 1, end)?;
        if len < 0 {
            return Err(bad());
        }
        let start = end + 1;
        let stop = start + len as usize;
        if buf.len() < stop + 2 {
            return Ok(None);
        }
        args.push(Bytes::copy_from_slice(&buf[start..stop]));
        pos = stop + 2;
    }
    Ok(Some((args, pos)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_commands_are_split_only_when_complete() {
        let s = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*1\r\n$4\r\nPI";
        let (args, len) = parse_command(s).unwrap().unwrap();
        assert_eq!(args, vec![Bytes::from("SELECT"), Bytes::from("0")]);
        assert_eq!(len, 23);
        assert_eq!(parse_command(&s[len..]).unwrap(), None);
        assert_eq!(
            parse_command(b"\n*1").unwrap(),
            Some((Vec::new(), 1)),
            "a keep-alive newline is an empty inline command"
        );
        assert!(parse_command(b"*1\r\n+x\r\n").is_err());
    }
}
