//! Recording the lock history (`lock-history yes`): the command path tells this subsystem
//! which command runs ([`before_call`]) and which keys it changed ([`touched`], from
//! `signal_modified`), and at the end of the request ([`after_request`]) each changed key's
//! new state (owner, hash fields, TTL) goes to the recorder with the client, the command or
//! script, and whether the request named the previous owner. Expiry, flushes, eviction,
//! restarts, clock moves and faults are recorded where they happen. With recording off every
//! hook is one relaxed atomic load ([`on`]).
//!
//! A script's or transaction's changes are recorded once per key when it ends: a Redisson
//! acquire (HINCRBY then PEXPIRE) is one change with its final TTL, as other clients see it.

pub mod registry;

use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::history::record::{ChangeIn, Made, Recorder, StateIn};
use crate::history::{Cause, ClientRef, Event, FencedWrite, History, What};
use crate::keyspace::Value;
use bytes::Bytes;
use registry::{Group, Touch};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The arguments kept per request for the owner check: enough for any lock script.
const MAX_ARGS: usize = 1024;
/// Hash fields read per change (a lock hash has one or two).
const MAX_FIELDS: usize = 16;

/// Whether recording is on: the one load the command path pays when it is off.
#[inline]
pub fn on(state: &ServerState) -> bool {
    state.lock_history.recorder.on()
}

/// (server time µs, real time µs), read at one instant.
fn now(state: &ServerState) -> (i64, i64) {
    let system = crate::clock::system_us();
    (state.clock.at_us(system), system)
}

/// A command is about to run (`call`): remember it for the keys it changes.
pub fn before_call(state: &ServerState, cmd: &'static Command, args: &[Bytes], in_script: bool) {
    let made = if in_script {
        Made::Script
    } else if cmd.name == "setnx"
        || (cmd.name == "set" && args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"nx")))
    {
        Made::NxCreate
    } else {
        Made::Other
    };
    let mut c = state.lock_history.capture.lock();
    c.cmd = cmd.name;
    c.made = Some(made);
    if c.args.len() < MAX_ARGS {
        let room = MAX_ARGS - c.args.len();
        c.args.extend(args.iter().take(room).cloned());
    }
}

/// A script is about to run: its keys and arguments count for the owner check (the token
/// an unlock script compares is an ARGV).
pub fn before_script(state: &ServerState, args: &[Bytes]) {
    let mut c = state.lock_history.capture.lock();
    if c.args.len() < MAX_ARGS {
        let room = MAX_ARGS - c.args.len();
        c.args.extend(args.iter().skip(1).take(room).cloned());
    }
}

/// What a script command ran: (EVAL's or EVALSHA's SHA-1, FCALL's function).
pub fn script_origin(cmd: &Command, args: &[Bytes]) -> (String, String) {
    let arg = || String::from_utf8_lossy(args.get(1).map_or(&b""[..], |a| &a[..])).into_owned();
    match cmd.name {
        "eval" | "eval_ro" => {
            let body = args.get(1).map_or(&b""[..], |a| &a[..]);
            (
                sha1_smol::Sha1::from(body).digest().to_string(),
                String::new(),
            )
        }
        "evalsha" | "evalsha_ro" => (arg().to_ascii_lowercase(), String::new()),
        "fcall" | "fcall_ro" => (String::new(), arg()),
        _ => (String::new(), String::new()),
    }
}

/// `key` of `db` was changed by the running command (Redis's signalModifiedKey).
pub fn touched(state: &ServerState, db: usize, key: &[u8]) {
    let mut c = state.lock_history.capture.lock();
    let (cmd, made) = (c.cmd, c.made.unwrap_or(Made::Other));
    c.touched.push(Touch {
        db,
        key: Bytes::copy_from_slice(key),
        cmd,
        made,
    });
}

/// A transaction is about to run: the keys its client WATCHed count as checked.
pub fn exec_watched(state: &ServerState, keys: Vec<(usize, Bytes)>) {
    state.lock_history.capture.lock().watched = keys;
}

/// The history's record of a client: id, name, address, ACL user.
pub fn client_ref(client: &Client) -> ClientRef {
    ClientRef {
        id: client.id,
        name: client
            .info
            .name
            .lock()
            .as_deref()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default(),
        addr: client.info.addr.clone(),
        user: client.user.clone(),
    }
}

/// A key's state now, and its TTL in ms (-1: none).
fn read_key(state: &ServerState, db: usize, key: &[u8], now_ms: i64) -> (StateIn, i64) {
    let d = state.keyspace.db(db);
    let mut shard = d.lock(key);
    let Some(e) = shard.peek(key, now_ms) else {
        return (StateIn::Gone, -1);
    };
    let ttl = match e.expires_at() {
        0 => -1,
        at => (at - now_ms).max(0),
    };
    let s = match &e.value {
        Value::Str(b) => StateIn::Str(b.clone()),
        Value::Hash(h) => StateIn::Hash(
            h.iter()
                .take(MAX_FIELDS)
                .map(|(f, v)| {
                    let n = std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                    (Bytes::copy_from_slice(f), n)
                })
                .collect(),
        ),
        other => StateIn::Other(other.type_name()),
    };
    (s, ttl)
}

/// The request that started at real time `started_us` (a system clock read) ended: record
/// each key it changed, once, with its state now, as changed by `who` at the request's time
/// (so a TTL reads as the request set it). `script` and `function` name what ran (EVAL's
/// SHA, FCALL's function). The caller still holds the server lock, so no other request's
/// changes mix in.
pub fn after_request(
    state: &ServerState,
    who: &ClientRef,
    script: &str,
    function: &str,
    started_us: i64,
) {
    let cap = std::mem::take(&mut *state.lock_history.capture.lock());
    if cap.touched.is_empty() {
        return;
    }
    let (t, real) = (state.clock.at_us(started_us), started_us);
    let now_ms = t.div_euclid(1000);
    let args: Vec<&[u8]> = cap.args.iter().map(|a| &a[..]).collect();
    // One change per key, in the order of each key's last change; made by SET NX or a
    // script if any of its changes was.
    let mut order: Vec<usize> = Vec::new();
    for (i, t) in cap.touched.iter().enumerate() {
        if let Some(p) = order
            .iter()
            .position(|&j| cap.touched[j].db == t.db && cap.touched[j].key == t.key)
        {
            order.remove(p);
        }
        order.push(i);
    }
    for i in order {
        let t_ = &cap.touched[i];
        let made = cap
            .touched
            .iter()
            .filter(|x| x.db == t_.db && x.key == t_.key)
            .map(|x| x.made)
            .fold(Made::Other, |a, b| match (a, b) {
                (Made::Script, _) | (_, Made::Script) => Made::Script,
                (Made::NxCreate, _) | (_, Made::NxCreate) => Made::NxCreate,
                _ => Made::Other,
            });
        let (st, ttl) = read_key(state, t_.db, &t_.key, now_ms);
        state.lock_history.recorder.key_change(ChangeIn {
            db: t_.db as u32,
            key: &t_.key,
            t_us: t,
            real_us: real,
            cause: Cause::Client,
            client: Some(who),
            command: t_.cmd,
            script,
            function,
            state: st,
            ttl_ms: ttl,
            made,
            args: &args,
            watched: cap.watched.iter().any(|(d, k)| *d == t_.db && *k == t_.key),
        });
    }
}

/// Drop what a request captured without recording it (a request refused before running).
pub fn forget_request(state: &ServerState) {
    *state.lock_history.capture.lock() = Default::default();
}

/// A key was removed by something no client did: expiry (by a clock jump while the clock
/// moves), eviction.
pub fn removed(state: &ServerState, db: usize, key: &[u8], evicted: bool) {
    let rec = &state.lock_history.recorder;
    if !rec.is_tracked(db as u32, key) {
        return;
    }
    let cause = if evicted {
        Cause::Evicted
    } else if state.lock_history.clock_moving.load(Ordering::Relaxed) {
        Cause::ClockJump
    } else {
        Cause::Expired
    };
    let (t, real) = now(state);
    rec.key_change(ChangeIn {
        db: db as u32,
        key,
        t_us: t,
        real_us: real,
        cause,
        client: None,
        command: "",
        script: "",
        function: "",
        state: StateIn::Gone,
        ttl_ms: -1,
        made: Made::Other,
        args: &[],
        watched: false,
    });
}

/// FLUSHDB (`db`) or FLUSHALL (None) by `client`: the locks it holds go.
pub fn flushed(state: &ServerState, db: Option<usize>, client: &Client) {
    let rec = &state.lock_history.recorder;
    let (t, real) = now(state);
    let who = client_ref(client);
    for (d, key) in rec.live_keys(db.map(|d| d as u32)) {
        rec.key_change(ChangeIn {
            db: d,
            key: &key,
            t_us: t,
            real_us: real,
            cause: Cause::Flushed,
            client: Some(&who),
            command: if db.is_some() { "flushdb" } else { "flushall" },
            script: "",
            function: "",
            state: StateIn::Gone,
            ttl_ms: -1,
            made: Made::Other,
            args: &[],
            watched: false,
        });
    }
}

/// A simulated restart came back with another dataset: record the restart, then each lock
/// key whose state it changed (lost, or brought back from a snapshot).
pub fn restarted(state: &ServerState, mode: &str) {
    let rec = &state.lock_history.recorder;
    let (t, real) = now(state);
    rec.node_event(
        t,
        real,
        What::Restart {
            mode: mode.to_string(),
        },
    );
    let now_ms = t.div_euclid(1000);
    for (db, key, was) in rec.last_states() {
        let (st, ttl) = read_key(state, db as usize, &key, now_ms);
        if st == was {
            continue;
        }
        rec.key_change(ChangeIn {
            db,
            key: &key,
            t_us: t,
            real_us: real,
            cause: Cause::Restart,
            client: None,
            command: "",
            script: "",
            function: "",
            state: st,
            ttl_ms: ttl,
            made: Made::Other,
            args: &[],
            watched: false,
        });
    }
}

/// The clock was moved from `from` to `to` (server µs) at real time `real`.
pub fn clock_moved(state: &ServerState, real: i64, from: i64, to: i64, how: &str) {
    let frozen = state.clock.is_frozen();
    state
        .lock_history
        .recorder
        .clock(real, from, to, frozen, how);
}

/// A fault was set or cleared (`PAUSE 500`, `ERROR ... COMMAND set`, `CLEAR`).
pub fn fault(state: &ServerState, text: &str) {
    let (t, real) = now(state);
    state.lock_history.recorder.node_event(
        t,
        real,
        What::Fault {
            text: text.to_string(),
        },
    );
}

/// A write to a fenced resource was accepted or refused.
pub fn fenced(
    state: &ServerState,
    client: &Client,
    resource: &[u8],
    token: i64,
    value: &[u8],
    accepted: bool,
) {
    let (t, real) = now(state);
    state.lock_history.recorder.fenced(
        t,
        real,
        FencedWrite {
            resource: resource.to_vec(),
            token,
            value: value.to_vec(),
            accepted,
            client: Some(client_ref(client)),
        },
    );
}

/// Make `states` one group: exported together, their nodes named by their addresses.
pub fn join_group(states: &[Arc<ServerState>]) {
    let members = states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let name = (*s.local_addr.read()).map_or_else(|| format!("n{i}"), |a| a.to_string());
            (name, s.lock_history.recorder.clone())
        })
        .collect();
    let group = Arc::new(Group {
        members,
        running: states.len().into(),
    });
    for s in states {
        *s.lock_history.group.lock() = Some(group.clone());
    }
}

/// (node name, recorder) of every node exported with this one.
fn members(state: &ServerState) -> Vec<(String, Arc<Recorder>)> {
    match &*state.lock_history.group.lock() {
        Some(g) => g.members.clone(),
        None => vec![(String::new(), state.lock_history.recorder.clone())],
    }
}

/// The history of this server, or of its whole group, with a meta line naming the nodes.
pub fn export(state: &ServerState) -> History {
    let members = members(state);
    let mut h = History::new();
    let named: Vec<String> = members
        .iter()
        .map(|m| m.0.clone())
        .filter(|n| !n.is_empty())
        .collect();
    let dropped = members.iter().map(|m| m.1.dropped()).sum();
    if !named.is_empty() || dropped > 0 {
        h.push(Event::new(
            "",
            0,
            0,
            What::Meta {
                nodes: named,
                dropped,
            },
        ));
    }
    for (name, rec) in &members {
        rec.export(name, &mut h);
    }
    h
}

/// This node's last `count` events of `key` (database `db`).
pub fn key_events(state: &ServerState, db: usize, key: &[u8], count: usize) -> History {
    let name = match &*state.lock_history.group.lock() {
        Some(g) => g
            .members
            .iter()
            .find(|m| Arc::ptr_eq(&m.1, &state.lock_history.recorder))
            .map(|m| m.0.clone())
            .unwrap_or_default(),
        None => String::new(),
    };
    let mut h = History::new();
    for e in state
        .lock_history
        .recorder
        .key_events(&name, db as u32, key, count)
    {
        h.push(e);
    }
    h
}

/// (events kept, about how many bytes they take, events dropped) of this node.
pub fn stats(state: &ServerState) -> (usize, usize, u64) {
    let rec = &state.lock_history.recorder;
    let (n, bytes) = rec.size();
    (n, bytes, rec.dropped())
}

/// Forget the recorded history of this node (its settings stay).
pub fn reset(state: &ServerState) {
    state.lock_history.recorder.clear();
}

/// The server stops: write `lock-history-file` if set, once per group (by its last member
/// to stop, with every node's events).
pub fn at_shutdown(state: &ServerState) {
    let path = state.config.read().lock_history_file.clone();
    let last = match &*state.lock_history.group.lock() {
        Some(g) => g.running.fetch_sub(1, Ordering::AcqRel) == 1,
        None => true,
    };
    if path.is_empty() || !last {
        return;
    }
    let text = export(state).to_json_lines();
    match std::fs::write(&path, text) {
        Ok(()) => crate::log::notice(&format!("Lock history written to {path}.")),
        Err(e) => crate::log::warning(&format!("Cannot write the lock history to {path}: {e}")),
    }
}
