//! Functions: FCALL, FCALL_RO and FUNCTION (LOAD, LIST, DELETE, FLUSH, DUMP, RESTORE, STATS, KILL,
//! HELP). The libraries live in the scripting layer ([`crate::script`]); FCALL runs through the
//! same path as EVAL (the request path, `dispatch/`, holds the server lock for the whole call), and
//! FUNCTION KILL, like SCRIPT KILL, runs without it. FUNCTION STATS is allowed while a script is
//! busy and then reads only what the running script leaves readable.

use crate::cmd::base::args::{is, Args};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::{Row, ScriptCall};
use crate::error::{self, RedisError};
use crate::rdb;
use crate::reply::{CmdResult, Reply};
use crate::script::RestorePolicy;
use bytes::Bytes;

const FUNCTION_SUBS: &[Row] = &[
    Row::new("load", function_load),
    Row::new("list", function_list),
    Row::new("delete", function_delete),
    Row::new("flush", function_flush),
    Row::new("dump", function_dump),
    Row::new("restore", function_restore),
    Row::new("stats", function_stats),
    Row::script_kill("kill", false),
    Row::new("help", function_help),
];

pub const COMMANDS: &[Row] = &[
    Row::script("fcall", ScriptCall::Fcall { readonly: false }),
    Row::script("fcall_ro", ScriptCall::Fcall { readonly: true }),
    Row::new("function", container).subs(FUNCTION_SUBS),
];

/// FUNCTION LOAD [REPLACE] code.
fn function_load(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    // Every argument but the last (the code) is an option.
    let (code, opts) = a.split_last().expect("arity");
    let mut replace = false;
    let mut args = Args::new(opts, 2);
    while let Some(opt) = args.next() {
        if !is(opt, "replace") {
            return Err(error::function_load_option(opt));
        }
        replace = true;
    }
    let name = ctx.state.scripting.function_load(code, replace)?;
    // Libraries are part of the dataset: the change propagates and counts for saves.
    ctx.state.add_dirty(1);
    Ok(Reply::Bulk(Bytes::from(name)))
}

/// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
fn function_list(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let mut with_code = false;
    let mut pattern: Option<&Bytes> = None;
    let mut args = Args::new(a, 2);
    while let Some(opt) = args.next() {
        if !with_code && is(opt, "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(opt, "libraryname") {
            let name = args.next();
            pattern = Some(name.ok_or(RedisError::new(error::FUNCTION_LIST_NO_LIBRARY_NAME))?);
        } else {
            return Err(error::function_list_argument(opt));
        }
    }
    let keep = |name: &[u8]| pattern.is_none_or(|p| crate::glob::glob_match(p, name, true));
    Ok(ctx.state.scripting.function_list(keep, with_code))
}

fn function_delete(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    ctx.state.scripting.function_delete(&a[2])?;
    ctx.state.add_dirty(1);
    Ok(Reply::ok())
}

/// FUNCTION FLUSH [ASYNC|SYNC]: both free at once.
fn function_flush(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    if a.len() == 3 && !is(&a[2], "sync") && !is(&a[2], "async") {
        return Err(RedisError::new(error::FUNCTION_FLUSH_OPTION));
    }
    ctx.state.scripting.function_flush();
    ctx.state.add_dirty(1);
    Ok(Reply::ok())
}

/// FUNCTION DUMP: each library as RDB_OPCODE_FUNCTION2 and its code, then the RDB footer.
fn function_dump(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let mut out = Vec::new();
    for code in ctx.state.scripting.function_codes() {
        out.push(rdb::OPCODE_FUNCTION2);
        rdb::put_string(&mut out, &code);
    }
    rdb::put_footer(&mut out);
    Ok(Reply::Bulk(Bytes::from(out)))
}

/// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
fn function_restore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 4 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let policy = match a.get(3) {
        None => RestorePolicy::Append,
        Some(p) if is(p, "append") => RestorePolicy::Append,
        Some(p) if is(p, "replace") => RestorePolicy::Replace,
        Some(p) if is(p, "flush") => RestorePolicy::Flush,
        Some(_) => return Err(RedisError::new(error::FUNCTION_RESTORE_POLICY)),
    };
    let body = rdb::verify_payload(&a[2])
        .ok_or_else(|| RedisError::new(error::FUNCTION_RESTORE_PAYLOAD))?;
    let codes = payload_codes(body)?;
    ctx.state.scripting.function_restore(&codes, policy)?;
    ctx.state.add_dirty(1);
    Ok(Reply::ok())
}

/// The library codes of a payload body (functionRestoreCommand's loop and rdbFunctionLoad).
fn payload_codes(body: &[u8]) -> Result<Vec<Bytes>, RedisError> {
    let mut r = rdb::Reader::new(body);
    let mut codes = Vec::new();
    while r.remaining() > 0 {
        let Some(kind) = r.byte() else {
            return Err(error::err("ERR can not read data type"));
        };
        let code = match kind {
            rdb::OPCODE_FUNCTION2 => r
                .string()
                .ok_or_else(|| error::err("ERR Failed loading library payload"))?,
            rdb::OPCODE_FUNCTION => old_format_code(&mut r)?,
            _ => return Err(error::err("ERR given type is not a function")),
        };
        codes.push(Bytes::from(code));
    }
    Ok(codes)
}

/// A library saved by 7.0's release candidates: name, engine, optional description, code;
/// rebuilt as a shebang plus the code, as rdbFunctionLoad does.
fn old_format_code(r: &mut rdb::Reader) -> Result<Vec<u8>, RedisError> {
    let name = r
        .string()
        .ok_or_else(|| error::err("ERR Failed loading library name"))?;
    let engine = r
        .string()
        .ok_or_else(|| error::err("ERR Failed loading engine name"))?;
    let has_desc = r
        .length()
        .ok_or_else(|| error::err("ERR Failed loading library description indicator"))?;
    if has_desc != 0 {
        r.string()
            .ok_or_else(|| error::err("ERR Failed loading library description"))?;
    }
    let blob = r
        .string()
        .ok_or_else(|| error::err("ERR Failed loading library blob"))?;
    Ok([b"#!".as_slice(), &engine, b" name=", &name, b"\n", &blob].concat())
}

fn function_stats(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    ctx.state.scripting.function_stats()
}

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];

fn function_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::Array(
        HELP.iter()
            .map(|l| Reply::Simple(Bytes::from_static(l.as_bytes())))
            .collect(),
    ))
}
