//! Propagation of the dataset's changes to the append-only log and to replicas, as Redis
//! 7.0's call() and propagatePendingCommands() do it:
//!
//! - A command that changed something (the server's change count moved while it ran, or it
//!   forced propagation) is propagated as it was called, or as the arguments it rewrote
//!   itself to (`Ctx::propagate_as`: EXPIRE as PEXPIREAT, SET EX as SET PXAT, INCRBYFLOAT as
//!   SET KEEPTTL, BLPOP as LPOP...).
//! - Effects gather for the whole execution unit: a client's command, a transaction, a
//!   script (which is never propagated itself: only the commands it ran), a blocked client
//!   served. A unit with more than one effect is wrapped in MULTI/EXEC.
//! - A key found expired (lazily, within a unit) adds a DEL to the unit; active expiry
//!   propagates each DEL on its own.
//!
//! With nothing consuming effects (no AOF, no replica) a command pays one atomic load.

pub mod registry;

use crate::cmd::runtime::state::{Ctx, ServerState};
use bytes::Bytes;
use registry::{Frame, Op, TO_ALL, TO_AOF, TO_REPLICAS};
use std::sync::atomic::Ordering;

/// Open the frame of a command about to run; false if propagation is off (then pass false
/// to [`leave`]).
#[inline]
pub fn enter(state: &ServerState) -> bool {
    if !state.propagation.is_active() {
        return false;
    }
    let dirty = state.dirty.load(Ordering::Relaxed);
    state.propagation.inner.lock().frames.push(Frame {
        dirty,
        ..Frame::default()
    });
    true
}

/// Close the frame of the command `args` that ran in database `db`: its own propagation
/// (unless it is EXEC or a script, which propagate their commands one by one), then, at the
/// outermost frame, the unit's effects.
pub fn leave(state: &ServerState, entered: bool, db: usize, args: &[Bytes], itself: bool) {
    if !entered {
        return;
    }
    let dirty = state.dirty.load(Ordering::Relaxed);
    let outermost = {
        let mut inner = state.propagation.inner.lock();
        let Some(f) = inner.frames.pop() else {
            return;
        };
        if itself && !f.prevent && (dirty > f.dirty || f.force) {
            let args = f.argv.unwrap_or_else(|| args.to_vec());
            let mut targets = if f.repl_only { TO_REPLICAS } else { TO_ALL };
            // A script's redis.set_repl narrows where its commands go.
            targets &= state.propagation.script_targets.load(Ordering::Relaxed);
            if !args.is_empty() && targets != 0 {
                inner.ops.push((Op { db, args }, targets));
            }
        }
        inner.frames.is_empty()
    };
    if outermost {
        // SCAN and RANDOMKEY run by a client only delete keys they found expired: those DELs
        // go unwrapped, as active expiry's (Redis's CMD_TOUCHES_ARBITRARY_KEYS).
        let arbitrary = itself
            && args.first().is_some_and(|a| {
                a.eq_ignore_ascii_case(b"scan") || a.eq_ignore_ascii_case(b"randomkey")
            });
        flush_wrapped(state, !arbitrary);
    }
}

/// Run `f` as an execution unit of its own that is not itself propagated (a script run, a
/// blocked client served): the effects gathered meanwhile are propagated together at its
/// end, unless an enclosing unit (EXEC running the script) takes them.
pub fn unit<R>(state: &ServerState, f: impl FnOnce() -> R) -> R {
    if !state.propagation.is_active() {
        return f();
    }
    let dirty = state.dirty.load(Ordering::Relaxed);
    state.propagation.inner.lock().frames.push(Frame {
        dirty,
        prevent: true,
        ..Frame::default()
    });
    let r = f();
    leave(state, true, 0, &[], false);
    r
}

/// alsoPropagate: add an effect to the running unit (or propagate it now outside one).
pub fn also(state: &ServerState, db: usize, args: Vec<Bytes>) {
    if !state.propagation.is_active() {
        return;
    }
    let outside = {
        let mut inner = state.propagation.inner.lock();
        inner.ops.push((Op { db, args }, TO_ALL));
        inner.frames.is_empty()
    };
    if outside {
        flush(state);
    }
}

/// A key was removed because its time ran out: its deletion propagates as DEL (UNLINK with
/// lazyfree-lazy-expire), within the running unit or on its own (active expiry).
pub fn expired(state: &ServerState, db: usize, key: &Bytes) {
    if !state.propagation.is_active() {
        return;
    }
    let cmd = expired_deletion(state);
    also(state, db, vec![Bytes::from_static(cmd), key.clone()]);
}

/// The command an expired key's deletion propagates as: UNLINK with lazyfree-lazy-expire,
/// else DEL (also what a master restarting from its file feeds for the keys it drops).
pub fn expired_deletion(state: &ServerState) -> &'static [u8] {
    let lazy = state
        .config
        .read()
        .get("lazyfree-lazy-expire")
        .is_some_and(|v| v == "yes");
    if lazy {
        b"UNLINK"
    } else {
        b"DEL"
    }
}

/// A key was evicted for maxmemory: its deletion (UNLINK with lazyfree-lazy-eviction)
/// goes out at once, before the command that made room, and never inside a MULTI of its own
/// (performEvictions propagates with propagate_no_multi). Eviction runs before the command's
/// unit opens; should a unit be open, the deletion joins it as any other effect.
pub fn evicted(state: &ServerState, db: usize, key: &Bytes) {
    if !state.propagation.is_active() {
        return;
    }
    let lazy = state
        .config
        .read()
        .get("lazyfree-lazy-eviction")
        .is_some_and(|v| v == "yes");
    let cmd: &'static [u8] = if lazy { b"UNLINK" } else { b"DEL" };
    also(state, db, vec![Bytes::from_static(cmd), key.clone()]);
}

/// propagatePendingCommands: the unit's effects, wrapped in MULTI/EXEC when there is more
/// than one, to the AOF and replicas.
fn flush(state: &ServerState) {
    flush_wrapped(state, true);
}

/// [`flush`], wrapping several effects in MULTI/EXEC only if `may_wrap`.
fn flush_wrapped(state: &ServerState, may_wrap: bool) {
    let ops = std::mem::take(&mut state.propagation.inner.lock().ops);
    if ops.is_empty() {
        return;
    }
    let wrap = may_wrap && ops.len() > 1;
    if wrap {
        let db = ops[0].0.db;
        feed(state, db, &[Bytes::from_static(b"MULTI")], TO_ALL);
    }
    let last_db = ops[ops.len() - 1].0.db;
    for (op, targets) in &ops {
        feed(state, op.db, &op.args, *targets);
    }
    if wrap {
        feed(state, last_db, &[Bytes::from_static(b"EXEC")], TO_ALL);
    }
}

/// propagateNow: one command to the AOF and to the replicas, as `targets` says.
fn feed(state: &ServerState, db: usize, args: &[Bytes], targets: u8) {
    if targets & TO_AOF != 0 {
        if let Some(a) = state.persist.aof.read().as_ref() {
            let refs: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
            a.feed(db, &refs, state.clock.now_ms() / 1000);
        }
    }
    if targets & TO_REPLICAS != 0 {
        crate::cmd::runtime::replication::feed(state, db, args);
    }
}

impl Ctx<'_> {
    /// Whether what commands do goes anywhere (an AOF or a replica): a command that rewrites
    /// itself for propagation builds the rewritten arguments only then, sparing the busiest
    /// (SET with an expiry, PEXPIRE) their allocations on a server with neither.
    #[inline]
    pub fn propagates(&self) -> bool {
        self.state.propagation.is_active()
    }

    /// Propagate this command as `args` instead of as it was called
    /// (rewriteClientCommandVector), if it changes anything.
    pub fn propagate_as(&self, args: Vec<Bytes>) {
        if let Some(f) = self.state.propagation.inner.lock().frames.last_mut() {
            f.argv = Some(args);
        }
    }

    /// Propagate this command as the deletion of `key`: UNLINK when the `lazy` setting
    /// (lazyfree-lazy-expire, lazyfree-lazy-user-del) is on, else DEL, as Redis rewrites a
    /// command whose time already passed or GETDEL.
    pub fn propagate_as_del(&self, key: &Bytes, lazy: &str) {
        let unlink = self
            .state
            .config
            .read()
            .get(lazy)
            .is_some_and(|v| v == "yes");
        let name: &'static [u8] = if unlink { b"UNLINK" } else { b"DEL" };
        self.propagate_as(vec![Bytes::from_static(name), key.clone()]);
    }

    /// Do not propagate this command itself (preventCommandPropagation): it propagated what
    /// it did with [`also`].
    pub fn prevent_propagation(&self) {
        if let Some(f) = self.state.propagation.inner.lock().frames.last_mut() {
            f.prevent = true;
        }
    }

    /// Propagate this command even if it changed nothing (forceCommandPropagation):
    /// FLUSHALL and FLUSHDB on empty databases.
    pub fn force_propagation(&self) {
        if let Some(f) = self.state.propagation.inner.lock().frames.last_mut() {
            f.force = true;
        }
    }

    /// Propagate this command to replicas only, even though it changed nothing (PUBLISH).
    pub fn force_replication(&self) {
        // Nothing gathers effects (no frame was opened): no lock to take, as in `enter`.
        if !self.state.propagation.is_active() {
            return;
        }
        if let Some(f) = self.state.propagation.inner.lock().frames.last_mut() {
            f.force = true;
            f.repl_only = true;
        }
    }

    /// alsoPropagate in this command's database: an extra effect, propagated after the
    /// effects gathered so far.
    pub fn also_propagate(&self, args: Vec<Bytes>) {
        also(self.state, self.client.db, args);
    }
}
