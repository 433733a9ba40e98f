//! CLIENT PAUSE / UNPAUSE (Redis's pauseClients): until the pause ends, clients wait before
//! running what it covers: every command (ALL) or those that may write or replicate (WRITE:
//! write commands, PUBLISH, PFCOUNT, EVAL of scripts not flagged `no-writes`, EXEC of a
//! transaction holding one). A waiting client counts as blocked (INFO blocked_clients) and is
//! served in arrival order once the pause ends, by UNPAUSE or at its end time.

use crate::cmd::base::flags;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// What a pause holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseKind {
    /// Nothing (no pause).
    Off = 0,
    /// Commands that may write or replicate.
    Write = 1,
    /// Every command.
    All = 2,
}

/// The server's pause: its kind and end (server clock, ms), and the clients waiting.
pub struct Pause {
    /// A pause may be in force (every command reads this; the mutex only when set).
    any: std::sync::atomic::AtomicBool,
    current: Mutex<(PauseKind, i64)>,
    changed: Notify,
    /// Clients waiting for the pause to end (counted in INFO's blocked_clients).
    pub waiting: AtomicUsize,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            any: std::sync::atomic::AtomicBool::new(false),
            current: Mutex::new((PauseKind::Off, 0)),
            changed: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }
}

impl Pause {
    /// CLIENT PAUSE: a second pause keeps the more restrictive kind and the later end.
    pub fn pause(&self, kind: PauseKind, end_ms: i64) {
        let mut c = self.current.lock();
        c.0 = c.0.max(kind);
        c.1 = c.1.max(end_ms);
        self.any.store(true, Ordering::Relaxed);
        drop(c);
        self.changed.notify_waiters();
    }

    /// CLIENT UNPAUSE.
    pub fn unpause(&self) {
        *self.current.lock() = (PauseKind::Off, 0);
        self.any.store(false, Ordering::Relaxed);
        self.changed.notify_waiters();
    }

    /// The pause in force now (an expired one is cleared), reading the time only when a pause
    /// may be in force: every command asks, and a clock read cost more than the rest of the
    /// question.
    pub fn in_force_at(&self, now_ms: impl FnOnce() -> i64) -> (PauseKind, i64) {
        if !self.any.load(Ordering::Relaxed) {
            return (PauseKind::Off, 0);
        }
        let now_ms = now_ms();
        let mut c = self.current.lock();
        if c.0 != PauseKind::Off && c.1 < now_ms {
            *c = (PauseKind::Off, 0);
            self.any.store(false, Ordering::Relaxed);
        }
        *c
    }
}

/// Whether a WRITE pause holds this command back: Redis's is_may_replicate_command.
pub(crate) fn may_replicate(
    state: &ServerState,
    cmd: &Command,
    args: &[Bytes],
    exec_writes: bool,
) -> bool {
    if let Some(writes) = script_writes(state, cmd, args) {
        return writes;
    }
    cmd.has(flags::WRITE | flags::MAY_REPLICATE) || exec_writes
}

/// For EVAL, EVALSHA and FCALL of a script that declares its flags: whether it may write.
/// Redis then takes the command's flags from the script's (scriptFlagsToCmdFlags), so a
/// `no-writes` script is not held by a WRITE pause. None: the command's own flags decide.
fn script_writes(state: &ServerState, cmd: &Command, args: &[Bytes]) -> Option<bool> {
    use crate::script::script_flags as sf;
    let (fcall, by_sha) = match cmd.name {
        "eval" => (false, false),
        "evalsha" => (false, true),
        "fcall" => (true, false),
        _ => return None,
    };
    let f = state.scripting.flags_now(fcall, by_sha, args.get(1)?)?;
    (f & sf::EVAL_COMPAT == 0).then_some(f & sf::NO_WRITES == 0)
}

/// Wait while a pause holds this command back (`exec_writes`: an EXEC whose queued commands
/// include a write). Returns false if the client was killed or the server stopped meanwhile.
pub async fn wait_if_paused(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    args: &[Bytes],
    exec_writes: bool,
) -> bool {
    let mut counted = false;
    let ok = loop {
        // The clock is read only while a pause may be in force (every command asks).
        let mut now = 0;
        let (kind, end) = state.pause.in_force_at(|| {
            now = state.clock.now_ms();
            now
        });
        let held = match kind {
            PauseKind::Off => false,
            PauseKind::All => true,
            PauseKind::Write => may_replicate(state, cmd, args, exec_writes),
        };
        if !held {
            break true;
        }
        if !counted {
            counted = true;
            state.pause.waiting.fetch_add(1, Ordering::Relaxed);
        }
        let left = Duration::from_millis((end - now).clamp(1, 100) as u64);
        let changed = state.pause.changed.notified();
        tokio::select! {
            _ = changed => {}
            _ = tokio::time::sleep(left) => {}
            _ = client.info.kill.cancelled() => break false,
            _ = state.shutdown.cancelled() => break false,
        }
    };
    if counted {
        state.pause.waiting.fetch_sub(1, Ordering::Relaxed);
    }
    ok
}

/// Whether any pause is in force now (expiry keeps keys while one is).
pub fn is_paused(state: &ServerState) -> bool {
    state.pause.in_force_at(|| state.clock.now_ms()).0 != PauseKind::Off
}
