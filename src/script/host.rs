//! What a script run shares with the interpreter's callbacks: the [`Host`] the command layer
//! implements (how `redis.call` reaches the server), the slot the running host is kept in,
//! the interpreter's app data ([`RunCtx`]) and the count hook's state.

use crate::reply::Reply;
use crate::script::registration::Loading;
use bytes::Bytes;
use mlua::Lua;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

/// Where the running script's host is: set for the length of one run, read by `redis.call`
/// and the other library functions that reach the server. The engine owns it boxed, so its
/// address (an upvalue of the `redis.call` closures) never changes.
///
/// It also keeps `redis.call`'s argument buffers between calls ([`ArgBuffers`]).
#[derive(Default)]
pub(crate) struct HostSlot(pub Cell<Option<HostPtr>>, pub Cell<ArgBuffers>);

/// The arguments of one `redis.call`, kept from call to call so a call allocates nothing for
/// them: the vector, and one buffer all their bytes are split from (reclaimed whole once the
/// command dropped them). A call inside a call (none exists today) would take fresh ones.
#[derive(Default)]
pub(crate) struct ArgBuffers {
    pub args: Vec<bytes::Bytes>,
    pub bytes: bytes::BytesMut,
}

/// What a running script may ask of the server. The command layer implements it for each
/// run: the script's own client (db, RESP version), the command table, write tracking.
pub trait Host {
    /// `redis.call`/`redis.pcall`: run one command with scriptCall's checks. `Ok` is the
    /// command's reply (an error reply included); `Err` is a refusal before the command runs
    /// (unknown command, wrong arity, not allowed from scripts, write in a read-only script).
    fn call(&mut self, args: &[Bytes]) -> Result<Reply, &'static str>;
    /// `redis.acl_check_cmd`: whether the script's user may run `args`; `Err` when `args`
    /// names no command.
    fn acl_check(&mut self, args: &[Bytes]) -> Result<bool, &'static str>;
    /// The protocol the script's client speaks (RESP2 until `redis.setresp(3)`).
    fn resp(&self) -> u8;
    /// `redis.setresp`.
    fn set_resp(&mut self, resp: u8);
    /// Told before the script body runs whether its writes are refused (EVAL_RO, FCALL_RO, or
    /// a `no-writes` flag).
    fn set_readonly(&mut self, readonly: bool);
    /// redis.set_repl: where the script's next commands propagate (bit 1 the AOF, bit 2
    /// replicas). Nothing by default.
    fn set_repl(&mut self, _flags: u8) {}
    /// The script failed with an error a `redis.call` raised (its table carries
    /// `ignore_error_stats_update`): that command's error was counted when it was answered,
    /// so the script's error reply is not counted again. Nothing by default.
    fn error_counted(&mut self) {}
    /// Told a script's flags before anything else of scriptPrepareForRun is checked (every
    /// script; one without a shebang has EVAL_COMPAT set): the server's own refusals, such
    /// as `no-cluster` on a cluster node or a stale replica. Nothing by default.
    fn prepare(&mut self, _script_flags: u32) -> Result<(), crate::error::RedisError> {
        Ok(())
    }
}

/// Instructions between two runs of the count hook (kill flag, long-run callback).
pub(crate) const HOOK_EVERY: i32 = 10_000;

/// State the count hook reads through the Lua registry: the kill flag and the callback that
/// lets the caller keep the rest of the server responsive while a script runs long.
pub(crate) struct HookState {
    /// Set once SCRIPT KILL, FUNCTION KILL or SHUTDOWN NOSAVE asked the running script to stop;
    /// the count hook reads it. A hook only runs between instructions and one instruction
    /// (a `string.rep`, a `string.find`) can take seconds, so the kill also interrupts the
    /// C call in progress (`lua_interrupt`, see `Scripting`'s `Watch::stop`).
    pub(crate) kill: AtomicBool,
    pub(crate) tick: fn(),
    /// Another thread made the hook fire at the next instruction (`Watch::poke`); the run
    /// removes that hook again if it ended before the hook put itself back.
    pub(crate) poked: AtomicBool,
}

/// What the interpreter keeps in its app data: the host of the running script (only while
/// one runs), the random state, and the library FUNCTION LOAD is building (only meanwhile).
pub(crate) struct RunCtx {
    pub(crate) slot: SlotRef,
    pub(crate) rand: Arc<AtomicU64>,
    pub(crate) loading: Option<Loading>,
}

/// The running script's host, borrowed for the duration of [`Scripting::run`].
#[derive(Clone, Copy)]
pub(crate) struct HostPtr(pub(crate) *mut (dyn Host + 'static));

/// The engine's [`raw::HostSlot`], for callbacks that reach it through the app data.
pub(crate) struct SlotRef(pub(crate) *const HostSlot);

/// Run `f` with the running script's host; None outside a script run.
pub(crate) fn with_host<R>(lua: &Lua, f: impl FnOnce(&mut dyn Host) -> R) -> Option<R> {
    let slot = lua.app_data_ref::<RunCtx>()?.slot.0;
    // SAFETY: the slot outlives the interpreter's callbacks (see `SlotRef`).
    let ptr = unsafe { (*slot).0.get() }?.0;
    // SAFETY: the pointer is valid while a script runs (see `Scripting::run`), and callbacks
    // only run inside that call; the app-data borrow is released before `f` runs.
    Some(f(unsafe { &mut *ptr }))
}
