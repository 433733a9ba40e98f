//! Client-side caching support (CLIENT TRACKING; Redis's tracking.c): the keys each tracking client
//! read, and the prefixes broadcasting clients follow; a write to a key
//! ([`crate::cmd::runtime::state::Ctx::signal_modified`]) sends `invalidate` to whoever may cache
//! it: a RESP3 push, or a `__redis__:invalidate` message to the RESP2 client a tracking client
//! redirects to. Invalidations a client causes to itself are written after its reply, as Redis
//! does.
//!
//! With no tracking client anywhere a write costs one atomic load.

use crate::cmd::runtime::client::ClientInfo;
use crate::cmd::runtime::state::ServerState;
use crate::outbox::{Limits, PushQueue};
use bytes::{BufMut, Bytes, BytesMut};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// One client's tracking mode.
#[derive(Clone, Default)]
pub struct Mode {
    /// Client id the invalidations go to (0: the client itself).
    pub redirect: u64,
    /// BCAST: invalidations for every key under the prefixes, whoever read them.
    pub bcast: bool,
    /// OPTIN: only keys read right after CLIENT CACHING YES are tracked.
    pub optin: bool,
    /// OPTOUT: keys read right after CLIENT CACHING NO are not tracked.
    pub optout: bool,
    /// NOLOOP: no invalidations for the client's own writes.
    pub noloop: bool,
    /// CLIENT CACHING given for the next command.
    pub caching: bool,
    /// The redirect target has gone.
    pub broken_redirect: bool,
    /// BCAST prefixes ("" for every key).
    pub prefixes: BTreeSet<Bytes>,
}

#[derive(Default)]
struct Prefix {
    clients: HashSet<u64>,
    /// Keys changed since the last broadcast, with the id of the client that changed each.
    keys: BTreeMap<Bytes, u64>,
}

#[derive(Default)]
struct Tables {
    /// Key -> ids of the clients that read it (non-BCAST tracking).
    keys: HashMap<Bytes, HashSet<u64>>,
    items: usize,
    prefixes: BTreeMap<Bytes, Prefix>,
    modes: HashMap<u64, Mode>,
}

/// The server's tracking state.
#[derive(Default)]
pub struct Tracking {
    tables: Mutex<Tables>,
    /// Clients with tracking on (INFO tracking_clients; zero makes writes skip all of this).
    pub clients: AtomicUsize,
    /// The client a script or a served blocked command runs for (0: none): its writes are
    /// its own for NOLOOP and reply ordering.
    acting_for: AtomicU64,
    /// The running script called a read-only command (then its declared keys are tracked).
    script_read: AtomicBool,
    /// Keys in the key table, kept beside it so the check before every command
    /// ([`limit_table`]) needs neither the table's lock nor the configuration.
    key_count: AtomicUsize,
    /// tracking-table-max-keys, copied out of the configuration by [`Tracking::refresh`].
    max_keys: AtomicUsize,
}

impl Tracking {
    /// Copy tracking-table-max-keys out of `config` (at start and after CONFIG SET).
    pub fn refresh(&self, config: &crate::config::Config) {
        self.max_keys
            .store(config.tracking_table_max_keys(), Ordering::Relaxed);
    }

    /// A client's mode, if it tracks.
    pub fn mode(&self, id: u64) -> Option<Mode> {
        if self.clients.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.tables.lock().modes.get(&id).cloned()
    }

    /// How many BCAST prefixes a client follows (its share of client memory).
    pub fn prefix_count(&self, id: u64) -> usize {
        if self.clients.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        self.tables
            .lock()
            .modes
            .get(&id)
            .map_or(0, |m| m.prefixes.len())
    }

    /// (keys tracked, items in the key table, prefixes) for INFO.
    pub fn totals(&self) -> (usize, usize, usize) {
        let t = self.tables.lock();
        (t.keys.len(), t.items, t.prefixes.len())
    }

    /// CLIENT TRACKING ON with `mode` (already validated); prefixes added to a client already
    /// broadcasting.
    pub fn enable(&self, id: u64, mut mode: Mode, new_prefixes: Vec<Bytes>) {
        let mut t = self.tables.lock();
        let old = t.modes.remove(&id);
        if old.is_none() {
            self.clients.fetch_add(1, Ordering::Relaxed);
        }
        mode.prefixes = old.map(|o| o.prefixes).unwrap_or_default();
        if mode.bcast {
            let mut add = new_prefixes;
            if add.is_empty() {
                add.push(Bytes::new());
            }
            for p in add {
                t.prefixes.entry(p.clone()).or_default().clients.insert(id);
                mode.prefixes.insert(p);
            }
        }
        t.modes.insert(id, mode);
    }

    /// CLIENT TRACKING OFF, or the client went away.
    pub fn disable(&self, id: u64) {
        if self.clients.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut t = self.tables.lock();
        let Some(mode) = t.modes.remove(&id) else {
            return;
        };
        self.clients.fetch_sub(1, Ordering::Relaxed);
        for p in mode.prefixes {
            if let Some(bs) = t.prefixes.get_mut(&p) {
                bs.clients.remove(&id);
                if bs.clients.is_empty() {
                    t.prefixes.remove(&p);
                }
            }
        }
    }

    /// Change a client's CLIENT CACHING flag.
    pub fn set_caching(&self, id: u64, on: bool) {
        if let Some(m) = self.tables.lock().modes.get_mut(&id) {
            m.caching = on;
        }
    }
}

/// Redis's checkPrefixCollisionsOrReply: the error text, if a prefix overlaps another.
pub fn prefix_collision(existing: &BTreeSet<Bytes>, new: &[Bytes]) -> Option<String> {
    let overlap = |a: &[u8], b: &[u8]| {
        let n = a.len().min(b.len());
        a[..n] == b[..n]
    };
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (i, p) in new.iter().enumerate() {
        if let Some(e) = existing.iter().find(|e| overlap(e, p)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                s(p),
                s(e)
            ));
        }
        if let Some(q) = new[i + 1..].iter().find(|q| overlap(p, q)) {
            return Some(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                s(p),
                s(q)
            ));
        }
    }
    None
}

/// After a read-only command of a tracking client (not BCAST): remember the keys it read,
/// unless OPTIN without CACHING YES or OPTOUT with CACHING NO.
pub fn remember_keys(state: &ServerState, id: u64, keys: &[Bytes]) {
    if keys.is_empty() {
        return;
    }
    let mut t = state.tracking.tables.lock();
    let Some(m) = t.modes.get(&id) else {
        return;
    };
    if m.bcast || (m.optin && !m.caching) || (m.optout && m.caching) {
        return;
    }
    for k in keys {
        if t.keys.entry(k.clone()).or_default().insert(id) {
            t.items += 1;
        }
    }
    state.tracking.key_count.store(t.keys.len(), Ordering::Relaxed);
}

/// A command of a client has finished: CLIENT CACHING lasts one command (the CLIENT command
/// that set it excepted).
pub fn command_done(state: &ServerState, id: u64, was_client_cmd: bool) {
    if was_client_cmd || state.tracking.clients.load(Ordering::Relaxed) == 0 {
        return;
    }
    if let Some(m) = state.tracking.tables.lock().modes.get_mut(&id) {
        m.caching = false;
    }
}

thread_local! {
    /// The client whose command this thread runs (0: none). An invalidation for that client
    /// waits until after its reply whatever caused it, as Redis 7.0 defers a tracking message
    /// for the current client: also one for a key its own read found expired.
    static RUNNING: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Until the guard goes, this thread runs a command of client `id` (see `RUNNING`).
pub fn running(id: u64) -> Running {
    Running(RUNNING.replace(id))
}

/// Restores the thread's previous running client when dropped (see [`running`]).
pub struct Running(u64);

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.set(self.0);
    }
}

/// The client an invalidation caused by `by` is sent "during": `by` itself, else the client
/// whose command (or script) this thread runs.
fn current_of(state: &ServerState, by: u64) -> u64 {
    if by != 0 {
        return by;
    }
    match RUNNING.get() {
        0 => state.tracking.acting_for.load(Ordering::Relaxed),
        id => id,
    }
}

/// A key was changed by client `by` (0: no client, e.g. expiry): invalidate it for the
/// clients that read it, and queue it for the broadcasting prefixes it falls under.
pub fn key_modified(state: &ServerState, by: u64, key: &[u8]) {
    if state.tracking.clients.load(Ordering::Relaxed) == 0 {
        return;
    }
    {
        let mut t = state.tracking.tables.lock();
        for (p, bs) in t.prefixes.iter_mut() {
            if key.starts_with(p) {
                bs.keys.insert(Bytes::copy_from_slice(key), by);
            }
        }
    }
    invalidate_readers(state, by, key);
}

/// Tell the clients that read `key` that it is invalid, and forget them for it.
fn invalidate_readers(state: &ServerState, by: u64, key: &[u8]) {
    let mut t = state.tracking.tables.lock();
    let Some(ids) = t.keys.remove(key) else {
        return;
    };
    state.tracking.key_count.store(t.keys.len(), Ordering::Relaxed);
    t.items -= ids.len();
    let mut sends = Vec::new();
    for id in ids {
        let Some(m) = t.modes.get(&id) else {
            continue;
        };
        if m.bcast || (m.noloop && id == by) {
            continue;
        }
        sends.push(id);
    }
    drop(t);
    let keys = array_of(&[Bytes::copy_from_slice(key)]);
    let current = current_of(state, by);
    for id in sends {
        send(state, id, current, Payload::Keys(&keys));
    }
}

/// Send the queued broadcast invalidations (after every request and active-expiry cycle, as
/// Redis does before sleeping).
pub fn broadcast(state: &ServerState, current: u64) {
    if state.tracking.clients.load(Ordering::Relaxed) == 0 {
        return;
    }
    let mut t = state.tracking.tables.lock();
    let mut sends: Vec<(u64, Bytes)> = Vec::new();
    let Tables {
        prefixes, modes, ..
    } = &mut *t;
    for bs in prefixes.values_mut() {
        if bs.keys.is_empty() {
            continue;
        }
        let keys = std::mem::take(&mut bs.keys);
        for id in &bs.clients {
            let noloop = modes.get(id).is_some_and(|m| m.noloop);
            let list: Vec<Bytes> = keys
                .iter()
                .filter(|(_, by)| !(noloop && **by == *id))
                .map(|(k, _)| k.clone())
                .collect();
            if !list.is_empty() {
                sends.push((*id, array_of(&list)));
            }
        }
    }
    drop(t);
    for (id, keys) in sends {
        send(state, id, current, Payload::Keys(&keys));
    }
}

/// FLUSHDB / FLUSHALL: every tracking client is told that every key is invalid (a null),
/// and the key table starts empty.
pub fn flushed(state: &ServerState, current: u64) {
    // The key table is emptied even with no client tracking now (it keeps the reads of
    // clients that turned tracking off, as Redis, until the keys change).
    let mut t = state.tracking.tables.lock();
    t.keys.clear();
    state.tracking.key_count.store(0, Ordering::Relaxed);
    t.items = 0;
    let ids: Vec<u64> = t.modes.keys().copied().collect();
    drop(t);
    for id in ids {
        send(state, id, current, Payload::All);
    }
}

enum Payload<'a> {
    /// An encoded array of keys.
    Keys(&'a Bytes),
    /// Null: every key.
    All,
}

fn array_of(keys: &[Bytes]) -> Bytes {
    let mut b = BytesMut::new();
    b.put_slice(format!("*{}\r\n", keys.len()).as_bytes());
    for k in keys {
        b.put_slice(format!("${}\r\n", k.len()).as_bytes());
        b.put_slice(k);
        b.put_slice(b"\r\n");
    }
    b.freeze()
}

fn info_of(state: &ServerState, id: u64) -> Option<Arc<ClientInfo>> {
    state.clients.lock().get(&id).cloned()
}

fn queue_of(info: &ClientInfo) -> Option<Arc<PushQueue>> {
    info.extra.push.get().cloned()
}

/// Redis's sendTrackingMessage: to the client or its redirect target; a RESP3 push, or a
/// pub/sub message on `__redis__:invalidate` to a RESP2 redirect target that is subscribed.
/// A message for the client running the command now waits until after its reply.
fn send(state: &ServerState, id: u64, current: u64, payload: Payload) {
    let Some(mode) = state.tracking.mode(id) else {
        return;
    };
    let mut target_id = id;
    let mut redirected = false;
    if mode.redirect != 0 {
        if info_of(state, mode.redirect).is_none() {
            state
                .tracking
                .tables
                .lock()
                .modes
                .entry(id)
                .and_modify(|m| {
                    m.broken_redirect = true;
                });
            let Some(me) = info_of(state, id) else {
                return;
            };
            if me.resp.load(Ordering::Relaxed) > 2 {
                let frame = format!(
                    ">2\r\n$21\r\ntracking-redir-broken\r\n:{}\r\n",
                    mode.redirect
                );
                deliver(state, &me, current, Bytes::from(frame));
            }
            return;
        }
        target_id = mode.redirect;
        redirected = true;
    }
    let Some(target) = info_of(state, target_id) else {
        return;
    };
    let resp = target.resp.load(Ordering::Relaxed);
    // A flush's "every key" is a null in the protocol of the tracking client, not of the
    // redirect target (Redis sends shared.null[c->resp] of the tracking client as is).
    let all: &[u8] = match info_of(state, id).map(|me| me.resp.load(Ordering::Relaxed)) {
        Some(r) if r > 2 => b"_\r\n",
        _ => b"$-1\r\n",
    };
    let mut frame = BytesMut::new();
    if resp > 2 {
        frame.put_slice(b">2\r\n$10\r\ninvalidate\r\n");
    } else if redirected && target.subscriptions.load(Ordering::Relaxed) > 0 {
        frame.put_slice(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
    } else {
        return;
    }
    match payload {
        Payload::Keys(k) => frame.put_slice(k),
        Payload::All => frame.put_slice(all),
    }
    deliver(state, &target, current, frame.freeze());
}

fn deliver(state: &ServerState, target: &ClientInfo, current: u64, frame: Bytes) {
    if target.id == current {
        target.extra.after_reply.lock().push(frame);
        target
            .extra
            .after_reply_pending
            .store(true, Ordering::Release);
        return;
    }
    if let Some(q) = queue_of(target) {
        let (hard, soft, secs) = state.config.read().output_buffer_limit("normal");
        let limits = Limits {
            hard_bytes: hard as usize,
            soft_bytes: soft as usize,
            soft_seconds: secs as i64,
        };
        q.deliver(&frame, limits, state.clock.now_ms());
        // Its output buffer grew: counted against maxmemory-clients once the current command
        // is over, as Redis counts a client it writes to (the target may never run one).
        state.client_limits.mark_grown(target.id);
    }
}

/// A script of client `caller` starts (under the server lock).
pub fn script_started(state: &ServerState, caller: u64) {
    state.tracking.acting_for.store(caller, Ordering::Relaxed);
    state.tracking.script_read.store(false, Ordering::Relaxed);
}

/// A script command inside a script ran; a read-only one makes the script's keys tracked.
pub fn script_called(state: &ServerState, readonly: bool) {
    if readonly {
        state.tracking.script_read.store(true, Ordering::Relaxed);
    }
}

/// The script of `caller` ended: if it read anything, its declared keys (`EVAL script
/// numkeys key...`) are remembered for the caller, as Redis does for scripts.
pub fn script_finished(state: &ServerState, caller: u64, args: &[Bytes]) {
    state.tracking.acting_for.store(0, Ordering::Relaxed);
    // Set and cleared only under the server lock: a load, and a store only when set (an
    // atomic swap would cost every script a locked instruction).
    if !state.tracking.script_read.load(Ordering::Relaxed) {
        return;
    }
    state.tracking.script_read.store(false, Ordering::Relaxed);
    if state.tracking.clients.load(Ordering::Relaxed) == 0 {
        return;
    }
    let numkeys = args
        .get(2)
        .and_then(|n| std::str::from_utf8(n).ok())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let keys: Vec<Bytes> = args.iter().skip(3).take(numkeys).cloned().collect();
    remember_keys(state, caller, &keys);
}

/// Who changed a key, for NOLOOP and reply ordering: the client, or for a script's calls the
/// client that ran the script.
pub fn modifier(state: &ServerState, client_id: u64, in_script: bool) -> u64 {
    let acting = state.tracking.acting_for.load(Ordering::Relaxed);
    if in_script || acting != 0 {
        acting
    } else {
        client_id
    }
}

/// A blocked client `id` is being served (its command runs as a stand-in client).
pub fn serving(state: &ServerState, id: u64) {
    state.tracking.acting_for.store(id, Ordering::Relaxed);
}

/// The served client's reply was queued: the invalidations its command caused to itself
/// follow it, as after any reply.
pub fn served(state: &ServerState, info: &ClientInfo, push: &PushQueue) {
    state.tracking.acting_for.store(0, Ordering::Relaxed);
    let frames: Vec<Bytes> = std::mem::take(&mut *info.extra.after_reply.lock());
    for f in frames {
        push.push_own_encoded(f);
    }
}

/// Keep the key table within `tracking-table-max-keys` (0: no limit): keys over the limit are
/// dropped and their readers told, as if the keys had changed (Redis's trackingLimitUsedSlots).
pub fn limit_table(state: &ServerState) {
    if state.tracking.clients.load(Ordering::Relaxed) == 0 {
        return;
    }
    let max = state.tracking.max_keys.load(Ordering::Relaxed);
    if max == 0 || state.tracking.key_count.load(Ordering::Relaxed) <= max {
        return;
    }
    loop {
        let victim = {
            let t = state.tracking.tables.lock();
            if t.keys.len() <= max {
                return;
            }
            t.keys.keys().next().cloned()
        };
        let Some(key) = victim else {
            return;
        };
        invalidate_readers(state, 0, &key);
    }
}
