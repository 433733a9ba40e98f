//! The command table and dispatch. Every command is one [`Command`] row in its family's
//! `COMMANDS` slice; network clients and Lua's `redis.call` both go through [`call`], so a
//! command is added in one place and behaves the same everywhere.

pub mod acl;
pub mod acl_user;
pub mod args;
pub mod bitfield;
pub mod bitops;
pub mod blocking;
pub mod client;
pub mod client_cmd;
pub mod client_ctl;
pub mod client_limits;
pub mod client_state;
pub mod cluster_cmd;
pub mod command_cmd;
pub mod config_cmd;
pub mod connection_cmds;
pub mod counters;
pub mod cron;
pub mod db_cmds;
pub mod debug_cmd;
pub mod digest;
pub mod direct;
pub mod evict;
pub mod exec;
pub mod faults;
pub mod float80;
pub mod function;
pub mod hash;
pub mod info_cmd;
pub mod keys;
pub mod latency;
pub mod lcs;
pub mod list;
pub mod list_more;
pub mod lock;
pub mod memory_cmd;
pub mod meta;
pub mod monitor;
pub mod multi;
pub mod notify;
pub mod object_cmd;
pub mod observe;
pub mod pause;
pub mod pubsub;
pub mod scripting;
pub mod server_cmds;
pub mod set;
pub mod set_ops;
pub mod slowlog;
pub mod sort;
pub mod state;
pub mod string;
pub mod testctl;
pub mod tracking;
pub mod typed;
pub mod watch;
pub mod zset;
pub mod zset_blocking;
pub mod zset_range;
pub mod zset_store;

use crate::cmd::client::Client;
use crate::error::{self, RedisError};
use crate::keyspace::{Db, KeyEvent};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
pub use state::ServerState;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Stack for the threads that run commands and scripts: scripts run inline on runtime
/// workers, and the Lua bridges recurse per level of nesting (cjson and reply conversion stop
/// at Redis's 1000 levels), which tokio's 2 MB default leaves too little margin for.
///
/// ```
/// let rt = tokio::runtime::Builder::new_multi_thread()
///     .thread_stack_size(resplock::WORKER_STACK_BYTES)
///     .enable_all()
///     .build()
///     .unwrap();
/// # drop(rt);
/// ```
pub const WORKER_STACK_BYTES: usize = 8 << 20;

/// Handlers are synchronous and never touch a socket: they read arguments and the keyspace
/// and return a reply value.
pub type Handler = fn(&mut Ctx, &[Bytes]) -> CmdResult;

pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const FAST: u32 = 1 << 11;
    pub const NO_AUTH: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const NO_MULTI: u32 = 1 << 14;
    pub const ALLOW_BUSY: u32 = 1 << 15;
    /// Allowed in RESP2 subscribed mode.
    pub const SUBSCRIBED_OK: u32 = 1 << 16;
    /// Runs a script: [`exec`](super::exec) holds the server lock for the whole script and
    /// hands the worker's other tasks off if the script runs long.
    pub const SCRIPT_RUNNER: u32 = 1 << 17;
    pub const RANDOM: u32 = 1 << 18;
    /// A `RESPLOCK.*` test command: resolvable only on a server started with
    /// `enable_test_commands`, never listed by COMMAND, never affected by faults.
    pub const TEST_ONLY: u32 = 1 << 24;
    /// Refused unless the server was started to allow it (Redis's CMD_PROTECTED: DEBUG and
    /// `enable-debug-command`); not shown by COMMAND INFO, as in Redis.
    pub const PROTECTED: u32 = 1 << 19;

    /// (flag, name in COMMAND INFO's reply), in Redis's order.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        // MAY_REPLICATE is left out: Redis hides it from COMMAND INFO on purpose.
        (NO_MULTI, "no_multi"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// One row of the command table (Redis's conventions: arity -N means at least N arguments
/// counting the name; key positions are 1-based, last_key -1 means the last argument).
pub struct Command {
    pub name: &'static str,
    pub arity: i32,
    pub flags: u32,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    pub handler: Handler,
    pub group: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    /// For container commands (CLIENT, CONFIG, SCRIPT, ...): the subcommands, named without
    /// the container (`setname`). The container's own handler then never runs.
    pub subcommands: &'static [Command],
}

impl Command {
    /// A row with no key arguments and no subcommands; chain the `keys`/`subs`/`doc` helpers.
    pub const fn new(name: &'static str, arity: i32, flags: u32, handler: Handler) -> Command {
        Command {
            name,
            arity,
            flags,
            first_key: 0,
            last_key: 0,
            step: 0,
            handler,
            group: "generic",
            summary: "",
            since: "1.0.0",
            subcommands: &[],
        }
    }
    pub const fn keys(mut self, first: i32, last: i32, step: i32) -> Command {
        self.first_key = first;
        self.last_key = last;
        self.step = step;
        self
    }
    pub const fn doc(
        mut self,
        group: &'static str,
        since: &'static str,
        summary: &'static str,
    ) -> Command {
        self.group = group;
        self.since = since;
        self.summary = summary;
        self
    }
    pub const fn subs(mut self, subs: &'static [Command]) -> Command {
        self.subcommands = subs;
        self
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        (a >= 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }
    /// The positions of the key arguments in `args` (args\[0\] is the command name).
    pub fn key_positions(&self, argc: usize) -> impl Iterator<Item = usize> {
        let first = self.first_key.max(0) as usize;
        let last = if self.last_key < 0 {
            (argc as i32 + self.last_key) as usize
        } else {
            self.last_key as usize
        };
        let step = self.step.max(1) as usize;
        let valid = first > 0 && first < argc;
        (first..=last.min(argc.saturating_sub(1)))
            .step_by(step)
            .filter(move |_| valid)
    }
}

/// A noop handler for container rows, whose subcommands do the work.
pub fn container(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::ok())
}

/// Everything a handler may touch.
pub struct Ctx<'a> {
    pub state: &'a ServerState,
    pub client: &'a mut Client,
    /// Milliseconds since the epoch, read once per command (and frozen for a whole script).
    pub now: i64,
    pub in_script: bool,
    /// Running inside EXEC: blocking commands answer as if their timeout had passed.
    pub in_exec: bool,
}

impl<'a> Ctx<'a> {
    /// The client's selected database.
    pub fn db(&self) -> &'a Db {
        self.state.keyspace.db(self.client.db)
    }

    /// Redis's signalModifiedKey: `key` in the selected database was changed, so the clients
    /// that WATCH it must fail their EXEC. Handlers call it where Redis does (not when, say,
    /// SET NX wrote nothing), after releasing their shard locks.
    pub fn signal_modified(&self, key: &[u8]) {
        self.signal_modified_in(self.client.db, key);
    }

    /// [`Ctx::signal_modified`] for a key of another database (MOVE, COPY ... DB).
    pub fn signal_modified_in(&self, db: usize, key: &[u8]) {
        // Keys this command found expired were removed first: their signals come first, so a
        // watch of a key that was already stale is settled before this change is seen.
        self.state.keyspace.report_pending();
        watch::key_modified(self.state, db, key);
        let by = tracking::modifier(self.state, self.client.id, self.in_script);
        tracking::key_modified(self.state, by, key);
    }

    /// Raise a keyspace event of `class` (see [`notify`]) for `key` in the selected database.
    pub fn notify(&self, class: u32, event: &str, key: &[u8]) {
        // Keys this command found expired were removed first: their events come first.
        self.state.keyspace.report_pending();
        notify::keyspace_event(self.state, class, event, key, self.client.db);
    }
}

/// True when the client is in RESP2 subscribed mode (only a few commands allowed, PING
/// answers as a message).
pub fn in_resp2_subscribed_mode(ctx: &Ctx) -> bool {
    ctx.client.resp == 2 && ctx.client.subscription_count() > 0
}

/// Every family's rows; a new family is added here once.
fn families() -> Vec<&'static [Command]> {
    vec![
        connection_cmds::COMMANDS,
        client_cmd::COMMANDS,
        string::COMMANDS,
        counters::COMMANDS,
        lcs::COMMANDS,
        bitops::COMMANDS,
        bitfield::COMMANDS,
        keys::COMMANDS,
        db_cmds::COMMANDS,
        hash::COMMANDS,
        set::COMMANDS,
        set_ops::COMMANDS,
        zset::COMMANDS,
        zset_range::COMMANDS,
        zset_store::COMMANDS,
        zset_blocking::COMMANDS,
        sort::COMMANDS,
        object_cmd::COMMANDS,
        memory_cmd::COMMANDS,
        debug_cmd::COMMANDS,
        list::COMMANDS,
        list_more::COMMANDS,
        server_cmds::COMMANDS,
        cluster_cmd::COMMANDS,
        info_cmd::COMMANDS,
        command_cmd::COMMANDS,
        config_cmd::COMMANDS,
        pubsub::COMMANDS,
        scripting::COMMANDS,
        function::COMMANDS,
        slowlog::COMMANDS,
        latency::COMMANDS,
        monitor::COMMANDS,
        acl::COMMANDS,
        multi::COMMANDS,
        testctl::COMMANDS,
    ]
}

/// Every request looks its command up here: aHash, not SipHash (names are not attacker-chosen
/// keys that stay, so flooding is not a concern; SipHash was a visible share of a call).
type Table = HashMap<&'static str, &'static Command, ahash::RandomState>;

/// The command table, and apart from it the `RESPLOCK.*` rows (flag TEST_ONLY), which only
/// [`resolve_for`] finds, on servers started with `enable_test_commands`.
fn tables() -> &'static (Table, Table) {
    static TABLES: OnceLock<(Table, Table)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let (mut m, mut test) = (Table::default(), Table::default());
        for fam in families() {
            for c in fam {
                let t = if c.has(flags::TEST_ONLY) {
                    &mut test
                } else {
                    &mut m
                };
                let prev = t.insert(c.name, c);
                assert!(prev.is_none(), "command {} defined twice", c.name);
            }
        }
        (m, test)
    })
}

fn table() -> &'static Table {
    &tables().0
}

/// Every row a request can run, test-only rows and subcommands included, with its container
/// (`None` for a top-level command), numbered once per process in a fixed order: per-command
/// counters are kept in an array by this number instead of a map by name (see `observe`).
pub fn every_row() -> &'static [(&'static Command, Option<&'static Command>)] {
    static ROWS: OnceLock<Vec<(&'static Command, Option<&'static Command>)>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let (m, test) = tables();
        let mut rows = Vec::new();
        for c in m.values().chain(test.values()) {
            rows.push((*c, None));
            for sub in c.subcommands {
                rows.push((sub, Some(*c)));
            }
        }
        rows
    })
}

/// All commands, sorted by name (COMMAND, COMMAND LIST, COMMAND COUNT).
pub fn all_commands() -> Vec<&'static Command> {
    let mut v: Vec<_> = table().values().copied().collect();
    v.sort_by_key(|c| c.name);
    v
}

/// Case-insensitive lookup without allocating for ordinary names.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    lookup_in(table(), name)
}

fn lookup_in(t: &Table, name: &[u8]) -> Option<&'static Command> {
    let mut buf = [0u8; 32];
    if name.len() > buf.len() {
        return None;
    }
    for (d, s) in buf.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    let s = std::str::from_utf8(&buf[..name.len()]).ok()?;
    t.get(s).copied()
}

/// [`resolve`] as `state`'s clients see the table: with the `RESPLOCK.*` rows when the
/// server was started with `enable_test_commands`, and exactly as an unknown command
/// otherwise.
pub fn resolve_for(
    state: &ServerState,
    args: &[Bytes],
) -> Result<(&'static Command, Option<&'static Command>), RedisError> {
    match resolve_with(lookup(&args[0]), args) {
        Err(e) if state.test_commands => match lookup_in(&tables().1, &args[0]) {
            Some(c) => resolve_with(Some(c), args),
            None => Err(e),
        },
        r => r,
    }
}

/// Find the subcommand row of a container command.
pub fn lookup_sub(parent: &'static Command, name: &[u8]) -> Option<&'static Command> {
    parent
        .subcommands
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

/// The full name Redis uses in errors: `get`, or `client|setname`.
pub fn fullname(parent: Option<&Command>, cmd: &Command) -> String {
    match parent {
        Some(p) => format!("{}|{}", p.name, cmd.name),
        None => cmd.name.to_string(),
    }
}

/// Resolve `args` to the row that will run: the command, or its subcommand for containers.
/// Checks existence and arity with Redis's exact errors.
pub fn resolve(args: &[Bytes]) -> Result<(&'static Command, Option<&'static Command>), RedisError> {
    resolve_with(lookup(&args[0]), args)
}

fn resolve_with(
    found: Option<&'static Command>,
    args: &[Bytes],
) -> Result<(&'static Command, Option<&'static Command>), RedisError> {
    let cmd = match found {
        Some(c) => c,
        None => return Err(error::unknown_command(&args[0], &args[1..])),
    };
    if cmd.subcommands.is_empty() {
        if !cmd.arity_ok(args.len()) {
            return Err(error::wrong_arity(cmd.name));
        }
        return Ok((cmd, None));
    }
    if args.len() < 2 {
        return Err(error::wrong_arity(cmd.name));
    }
    match lookup_sub(cmd, &args[1]) {
        None => Err(error::unknown_subcommand(&args[1], cmd.name)),
        Some(sub) => {
            if !sub.arity_ok(args.len()) {
                return Err(error::wrong_arity(&fullname(Some(cmd), sub)));
            }
            Ok((sub, Some(cmd)))
        }
    }
}

/// Run an already resolved command. The caller holds the server lock and has checked
/// authentication and the connection's mode.
pub fn call(ctx: &mut Ctx, cmd: &'static Command, args: &[Bytes]) -> Reply {
    // Timed on the system clock, as Redis's call() with ustime(). A client's own command
    // starts when `execute` read the clock; a script's or transaction's commands read it.
    let top = !ctx.in_script && !ctx.in_exec;
    let started = match std::mem::take(&mut ctx.client.started_us) {
        t if t != 0 && top => t,
        _ => crate::clock::system_us(),
    };
    track_events(ctx.state, ctx.now);
    let reply = match (cmd.handler)(ctx, args) {
        Ok(r) => r,
        Err(e) => Reply::error(e),
    };
    ctx.state.keyspace.report_pending();
    let ended = crate::clock::system_us();
    if top {
        ctx.client.recent_us = ended;
    }
    let took = std::time::Duration::from_micros(ended.saturating_sub(started).max(0) as u64);
    observe::after_call(ctx, cmd, args, &reply, took);
    reply
}

/// Tell the keyspace which key events the next command must report: created keys only if
/// someone listens for `new` events, ready keys only while a client is blocked.
pub fn track_events(state: &ServerState, now: i64) {
    crate::keyspace::track_new_keys(notify::wants(state, notify::NEW));
    crate::keyspace::track_ready_keys(state.blocking.any());
    // Values the command creates are stamped with its time (their LRU clock or LFU start).
    crate::keyspace::set_command_context(now, state.access_policy());
    crate::keyspace::keep_expired(pause::is_paused(state));
}

/// Families that keep server-wide state register it here (e.g. the expired-key hook).
pub fn on_server_start(state: &std::sync::Arc<ServerState>) {
    // The aclfile's users, as redis-server loads them at start.
    if let Err(e) = acl::load_file(state) {
        crate::log::warning(&e.to_string());
    }
    // Shutdown wakes every connection through its doorbell (connections wait on nothing
    // shared, see `crate::wake`); a connection made later sees the flag before it waits.
    let weak = std::sync::Arc::downgrade(state);
    state.shutdown.on_cancel(Box::new(move || {
        if let Some(s) = weak.upgrade() {
            for c in s.clients.lock().values() {
                c.kill.bell().ring();
            }
        }
    }));
    // Active and lazy expiry report removed keys here: publish `expired` events. Weak, so the
    // keyspace's hook does not keep its own server alive.
    let weak = std::sync::Arc::downgrade(state);
    state
        .keyspace
        .set_event_hook(Box::new(move |db, key: &Bytes, event| {
            if let Some(s) = weak.upgrade() {
                match event {
                    KeyEvent::Expired => {
                        notify::keyspace_event(&s, notify::EXPIRED, "expired", key, db);
                        tracking::key_modified(&s, 0, key);
                        watch::key_expired(&s, db, key);
                    }
                    KeyEvent::New => notify::keyspace_event(&s, notify::NEW, "new", key, db),
                    KeyEvent::Ready => blocking::key_ready(&s, db, key),
                }
            }
        }));
}
