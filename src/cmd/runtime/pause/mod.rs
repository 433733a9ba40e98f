//! CLIENT PAUSE / UNPAUSE (Redis's pauseClients): until the pause ends, clients wait before
//! running what it covers: every command (ALL) or those that may write or replicate (WRITE:
//! write commands, PUBLISH, PFCOUNT, EVAL of scripts not flagged `no-writes`, EXEC of a
//! transaction holding one). A waiting client counts as blocked (INFO blocked_clients) and is
//! served in arrival order once the pause ends, by UNPAUSE or at its end time.

pub mod registry;

pub use registry::{Pause, PauseKind, PausePurpose};

use crate::cmd::base::flags;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::script_flags::ScriptFlags;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{Command, Runs, ScriptCall};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Whether a WRITE pause holds this command back: Redis's is_may_replicate_command.
pub(crate) fn may_replicate(
    state: &ServerState,
    cmd: &Command,
    args: &[Bytes],
    exec_writes: bool,
    script: &mut ScriptFlags,
) -> bool {
    if let Some(writes) = script_writes(state, cmd, args, script) {
        return writes;
    }
    cmd.has(flags::WRITE | flags::MAY_REPLICATE) || exec_writes
}

/// For EVAL, EVALSHA and FCALL of a script that declares its flags: whether it may write.
/// Redis then takes the command's flags from the script's (scriptFlagsToCmdFlags), so a
/// `no-writes` script is not held by a WRITE pause. None: the command's own flags decide.
/// The `_RO` forms keep their own flags (they never write).
pub fn script_writes(
    state: &ServerState,
    cmd: &Command,
    args: &[Bytes],
    script: &mut ScriptFlags,
) -> Option<bool> {
    use crate::script::script_flags as sf;
    match cmd.runs {
        Runs::Script(ScriptCall::Eval(k)) if !k.readonly => {}
        Runs::Script(ScriptCall::Fcall { readonly: false }) => {}
        _ => return None,
    }
    let f = script.now(state, args)?;
    (f & sf::EVAL_COMPAT == 0).then_some(f & sf::NO_WRITES == 0)
}

/// How [`wait_if_paused`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// No pause held the command.
    NotHeld,
    /// A pause held it, and ended.
    Released,
    /// The client was killed or the server stopped meanwhile.
    Gone,
}

/// Wait while a pause holds this command back (`exec_writes`: an EXEC whose queued commands
/// include a write).
pub async fn wait_if_paused(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    args: &[Bytes],
    exec_writes: bool,
    script: &mut ScriptFlags,
) -> Waited {
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
            PauseKind::Write => may_replicate(state, cmd, args, exec_writes, script),
        };
        if !held {
            break true;
        }
        // Held back: Redis processes the request again when the pause ends.
        script.forget();
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
    match (ok, counted) {
        (false, _) => Waited::Gone,
        (true, false) => Waited::NotHeld,
        (true, true) => Waited::Released,
    }
}

/// Whether a pause in force now holds back `args` from the master's stream: Redis postpones
/// the master client like any other (only replicas are never paused), so a paused replica
/// reads its master's stream but applies (and counts into its offset) nothing the pause
/// covers until the pause ends.
pub fn holds_master_command(state: &ServerState, args: &[Bytes]) -> bool {
    let (kind, _) = state.pause.in_force_at(|| state.clock.now_ms());
    match kind {
        PauseKind::Off => false,
        _ if args.is_empty() => false,
        PauseKind::All => true,
        PauseKind::Write => state.commands.resolve(args).is_ok_and(|(cmd, _)| {
            may_replicate(state, cmd, args, false, &mut ScriptFlags::of(cmd))
        }),
    }
}

/// Wait until the pause changes (UNPAUSE, a new pause) or its end time may have come, to
/// look again: the replica link's wait for the pause that holds its master's stream.
pub async fn changed_or_ended(state: &ServerState) {
    let mut now = 0;
    let (kind, end) = state.pause.in_force_at(|| {
        now = state.clock.now_ms();
        now
    });
    if kind == PauseKind::Off {
        return;
    }
    let left = Duration::from_millis((end - now).clamp(1, 100) as u64);
    let changed = state.pause.changed.notified();
    tokio::select! {
        _ = changed => {}
        _ = tokio::time::sleep(left) => {}
    }
}

/// Counts a client that a pause holds back into INFO's blocked_clients while it is held
/// (set), until dropped: the replica link while its master's stream waits.
pub struct HeldCount<'a> {
    state: &'a ServerState,
    held: bool,
}

impl<'a> HeldCount<'a> {
    /// Not counted yet.
    pub fn new(state: &'a ServerState) -> Self {
        HeldCount { state, held: false }
    }

    /// Whether the client is held back now.
    pub fn set(&mut self, held: bool) {
        if held != self.held {
            self.held = held;
            if held {
                self.state.pause.waiting.fetch_add(1, Ordering::Relaxed);
            } else {
                self.state.pause.waiting.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for HeldCount<'_> {
    fn drop(&mut self) {
        self.set(false);
    }
}

/// Whether any pause is in force now (expiry keeps keys while one is).
pub fn is_paused(state: &ServerState) -> bool {
    state.pause.in_force_at(|| state.clock.now_ms()).0 != PauseKind::Off
}
