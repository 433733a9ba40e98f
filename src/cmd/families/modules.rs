//! MODULE as a server that loads no modules answers it: LIST is empty, HELP is Redis's, and
//! LOAD, LOADEX and UNLOAD fail with Redis's texts for a library that cannot be loaded and a
//! module that is not there. LOAD, LOADEX and UNLOAD are PROTECTED rows, so
//! `enable-module-command` (no by default) refuses them first, as processCommand does.

use crate::cmd::base::flags::*;
use crate::cmd::base::help::help_reply;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::{container, Row};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[Row::new("module", container).subs(MODULE_SUBS)];

const MODULE_SUBS: &[Row] = &[
    Row::new("help", help),
    Row::new("list", list),
    Row::new("load", load).flags(PROTECTED),
    Row::new("loadex", load).flags(PROTECTED),
    Row::new("unload", unload).flags(PROTECTED),
];

/// MODULE HELP.
fn help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(help_reply(&[
        "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LIST",
        "    Return a list of loaded modules.",
        "LOAD <path> [<arg> ...]",
        "    Load a module library from <path>, passing to it any optional arguments.",
        "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
        "    Load a module library from <path>, while passing it module configurations and optional arguments.",
        "UNLOAD <name>",
        "    Unload a module.",
        "HELP",
        "    Prints this help.",
    ]))
}

/// MODULE LIST: no module is ever loaded.
fn list(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(Vec::new()))
}

/// MODULE LOAD / LOADEX: resplock cannot load a Redis module library, which Redis reports
/// as a failed load (its log says why).
fn load(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    crate::log::warning(&format!(
        "Module {} failed to load: resplock does not load modules",
        String::from_utf8_lossy(&a[2])
    ));
    let _ = ctx;
    Err(RedisError::new(error::MODULE_LOAD_FAILED))
}

/// MODULE UNLOAD: there is no module of that name.
fn unload(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Err(RedisError::new(error::MODULE_NO_SUCH))
}
