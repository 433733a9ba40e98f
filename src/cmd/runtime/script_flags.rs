//! The flags a script command's script declared (its shebang, or the function's), looked up
//! at most once per request: Redis takes a script command's flags from its script once, in
//! processCommand, and the checks taken before the script runs (CLIENT PAUSE WRITE,
//! maxmemory) all read that one answer. A request that a pause held back is processed again,
//! so it looks again.

use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::{Command, Runs, ScriptCall};
use bytes::Bytes;

/// One request's script flags (inert for a row that runs no script).
pub struct ScriptFlags {
    call: Option<ScriptCall>,
    /// The answer once looked up: `Some(None)` for an unknown script or function.
    known: Option<Option<u32>>,
}

impl ScriptFlags {
    /// Nothing looked up yet for a request of `cmd`.
    pub fn of(cmd: &Command) -> ScriptFlags {
        let call = match cmd.runs {
            Runs::Script(c) => Some(c),
            Runs::Handler(_) | Runs::ScriptKill { .. } => None,
        };
        ScriptFlags { call, known: None }
    }

    /// The flags, without waiting for a running script (decisions taken outside the server
    /// lock): None when unknown, or while the interpreter is busy (not remembered then).
    pub fn now(&mut self, state: &ServerState, args: &[Bytes]) -> Option<u32> {
        if let Some(known) = self.known {
            return known;
        }
        let (fcall, by_sha) = match self.call? {
            ScriptCall::Eval(k) => (false, k.by_sha),
            ScriptCall::Fcall { .. } => (true, false),
        };
        let flags = state.scripting.flags_now(fcall, by_sha, args.get(1)?);
        if flags.is_some() {
            self.known = Some(flags);
        }
        flags
    }

    /// The flags, holding the server lock (no script runs): None for an unknown script.
    pub fn get(&mut self, state: &ServerState, args: &[Bytes]) -> Option<u32> {
        if let Some(known) = self.known {
            return known;
        }
        let flags = match self.call? {
            ScriptCall::Eval(k) => state.scripting.flags_of(k.by_sha, &args[1]),
            ScriptCall::Fcall { .. } => state.scripting.function_flags(&args[1]),
        };
        self.known = Some(flags);
        flags
    }

    /// The request was held back and is processed again: look again when asked.
    pub fn forget(&mut self) {
        self.known = None;
    }
}
