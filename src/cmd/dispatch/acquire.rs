//! Taking the server lock for a request (`runtime/lock.rs` is the lock itself): at once, after
//! a short holder, or asynchronously behind a script, which may be past busy-reply-threshold
//! (BUSY, or the ALLOW_BUSY commands run meanwhile without the lock).

use crate::cmd::base::flags;
use crate::cmd::runtime::lock::{script_busy, Held};
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::RedisError;

/// Take the server lock for `cmd`: at once, or after a short holder, or asynchronously
/// behind a script. `Ok(None)`: a script is past busy-reply-threshold and `cmd` may run
/// meanwhile without the lock (ALLOW_BUSY: handshake, SCRIPT KILL, SHUTDOWN). `Err`: BUSY.
/// The flag says whether it had to wait (then the caller's reading of the clock is stale).
pub(super) async fn acquire<'a>(
    state: &'a ServerState,
    cmd: &Command,
) -> Result<(Option<Held<'a>>, bool), RedisError> {
    if let Some(h) = state.lock.try_lock() {
        return Ok((Some(h), false));
    }
    loop {
        if let Some(h) = state.lock.lock_briefly() {
            return Ok((Some(h), true));
        }
        if script_busy(state) {
            if cmd.has(flags::ALLOW_BUSY) {
                return Ok((None, true));
            }
            return Err(state.scripting.busy_error());
        }
        state.lock.released().await;
    }
}
