//! The commands: the table, the server state, dispatch and every family, in layers whose
//! arrows run one way (tests/layers.rs checks them, ARCHITECTURE.md draws them):
//!
//! - `dispatch`: a request's way in (processCommand's checks, MULTI queuing, the lock);
//! - `families`: the command families, one file each, every command one row;
//! - `testctl`: test controls (commands run without a client, the clock, faults);
//! - `runtime`: what commands run on (the table, `ServerState`, `Ctx`, clients, `call`,
//!   the server lock, typed access) and the server's subsystems;
//! - `base`: helpers that know no server (argument parsing, number formats, metadata).
//!
//! Network clients, Lua's `redis.call`, MULTI/EXEC and FCALL all go through
//! [`runtime::call::call`], so a command is added in one place and behaves the same
//! everywhere. This file only assembles: the process's one table and the public face.

pub mod base;
pub mod dispatch;
pub mod families;
pub mod runtime;
pub mod testctl;

pub use base::{flags, meta};
pub use runtime::startup::on_server_start;
pub use runtime::state::{Ctx, ServerState};
pub use runtime::table::{Command, CommandTable, Handler};

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

/// The process's command table: every family's rows ([`families::ALL`]), built once. A
/// server reaches it as `ServerState::commands`.
pub fn commands() -> &'static CommandTable {
    static TABLE: OnceLock<CommandTable> = OnceLock::new();
    TABLE.get_or_init(|| CommandTable::new(families::ALL))
}

/// The table a server started with `config` serves: the process's, or a copy with its
/// `rename-command` directives applied (made once per such server, kept for the process).
pub fn commands_for(config: &crate::config::Config) -> &'static CommandTable {
    if config.rename_commands.is_empty() {
        commands()
    } else {
        Box::leak(Box::new(commands().renamed(&config.rename_commands)))
    }
}

/// Case-insensitive lookup of a command row by name.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    commands().lookup(name)
}

/// All commands, sorted by name (what COMMAND lists).
pub fn all_commands() -> Vec<&'static Command> {
    commands().all_commands()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_has_its_own_address_and_full_name() {
        // The counters are found by a row's address: two rows sharing one (a subcommand
        // slice reused by two containers) would share counters.
        let t = super::commands();
        let rows = t.every_row();
        for (i, (cmd, parent)) in rows.iter().enumerate() {
            assert_eq!(t.row_number(cmd), Some(i));
            assert_eq!(
                t.row_named(&super::runtime::table::fullname(*parent, cmd)),
                Some(i)
            );
        }
        let get = super::lookup(b"get").expect("get");
        assert_eq!(t.row_number(get), t.row_named("get"));
    }

    /// Every command Redis splits into subcommands is a container row of the table, so a
    /// subcommand always reaches the ACL with its parent: the ACL needs no second way to find
    /// a subcommand's name from the arguments.
    #[test]
    fn every_container_the_acl_knows_is_a_container_row_of_the_table() {
        let u = crate::cmd::runtime::acl::universe::universe();
        for (id, name) in u.names.iter().enumerate() {
            if u.has_children(id) {
                if let Some(c) = super::lookup(name.as_bytes()) {
                    assert!(!c.subcommands.is_empty(), "{name} runs whole");
                }
            }
        }
    }
}
