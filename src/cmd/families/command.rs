//! COMMAND and its subcommands (COUNT, DOCS, GETKEYS, INFO, LIST), built from the command
//! table rows and the metadata recorded from Redis 7.0, so they stay true as families are added.

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::base::help::help_reply;
use crate::cmd::base::meta;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Command;
use crate::cmd::runtime::table::{lookup_sub, CommandTable, Row};
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    // A container whose own arity (-1) lets it run alone: bare COMMAND lists every command.
    Row::new("command", command).subs(COMMAND_SUBS),
];

/// COMMAND's subcommands, all run by [`command`].
const COMMAND_SUBS: &[Row] = &[
    Row::new("count", command),
    Row::new("docs", command),
    Row::new("getkeys", command),
    Row::new("getkeysandflags", command),
    Row::new("help", command),
    Row::new("info", command),
    Row::new("list", command),
];

/// Redis's ACL categories of a row, in Redis's category order, derived from its flags and
/// group (explicit categories Redis adds by hand, like @dangerous on INFO, are not known).
fn acl_categories(c: &Command, container_row: bool) -> Vec<&'static str> {
    if container_row {
        return vec!["@slow"];
    }
    let g = c.group;
    let mut v = Vec::new();
    let mut add = |cond: bool, name: &'static str| {
        if cond {
            v.push(name);
        }
    };
    add(g == "generic", "@keyspace");
    add(c.has(READONLY), "@read");
    add(c.has(WRITE), "@write");
    add(g == "set", "@set");
    add(g == "sorted-set", "@sortedset");
    add(g == "list", "@list");
    add(g == "hash", "@hash");
    add(g == "string", "@string");
    add(g == "bitmap", "@bitmap");
    add(g == "hyperloglog", "@hyperloglog");
    add(g == "geo", "@geo");
    add(g == "stream", "@stream");
    add(c.has(PUBSUB) || g == "pubsub", "@pubsub");
    add(c.has(ADMIN), "@admin");
    add(c.has(FAST), "@fast");
    add(!c.has(FAST), "@slow");
    add(c.has(BLOCKING), "@blocking");
    add(c.has(ADMIN), "@dangerous");
    add(g == "connection", "@connection");
    add(g == "transactions", "@transaction");
    add(g == "scripting", "@scripting");
    v
}

fn key_specs(c: &Command) -> Vec<Reply> {
    if c.first_key <= 0 {
        return vec![];
    }
    let b = |s: &'static str| Reply::bulk_static(s);
    let flags = if c.has(READONLY) {
        vec![Reply::simple("RO"), Reply::simple("access")]
    } else {
        vec![Reply::simple("RW"), Reply::simple("update")]
    };
    let lastkey = if c.last_key < 0 {
        c.last_key
    } else {
        c.last_key - c.first_key
    };
    vec![Reply::Map(vec![
        (b("flags"), Reply::Set(flags)),
        (
            b("begin_search"),
            Reply::Map(vec![
                (b("type"), b("index")),
                (
                    b("spec"),
                    Reply::Map(vec![(b("index"), Reply::Int(c.first_key as i64))]),
                ),
            ]),
        ),
        (
            b("find_keys"),
            Reply::Map(vec![
                (b("type"), b("range")),
                (
                    b("spec"),
                    Reply::Map(vec![
                        (b("lastkey"), Reply::Int(lastkey as i64)),
                        (b("keystep"), Reply::Int(c.step as i64)),
                        (b("limit"), Reply::Int(0)),
                    ]),
                ),
            ]),
        ),
    ])]
}

/// ACL categories of a row: the recorded ones, else derived from flags and group.
fn categories(c: &Command, container_row: bool) -> Vec<&'static str> {
    match c.meta {
        Some(m) => m.acl_names(),
        None => acl_categories(c, container_row),
    }
}

/// One COMMAND INFO entry (Redis 7's ten fields): the row's fields, plus the recorded ACL
/// categories, tips and key specs (derived from the row for a command with no record).
fn command_info(c: &'static Command, parent: Option<&Command>) -> Reply {
    let subs = if parent.is_none() { c.subcommands } else { &[] };
    let container_row = !subs.is_empty() && c.name != "command";
    let full = crate::cmd::runtime::table::fullname(parent, c);
    let m = c.meta;
    let flag_names = meta::flag_names(c.flags, m)
        .into_iter()
        .map(Reply::simple)
        .collect();
    let acl = match m {
        Some(m) => m.acl.reply(),
        None => Reply::Set(
            acl_categories(c, container_row)
                .into_iter()
                .map(Reply::simple)
                .collect(),
        ),
    };
    Reply::Array(vec![
        Reply::bulk_str(&full),
        Reply::Int(c.arity as i64),
        Reply::Set(flag_names),
        Reply::Int(c.first_key as i64),
        Reply::Int(c.last_key as i64),
        Reply::Int(c.step as i64),
        acl,
        m.map_or(Reply::Set(vec![]), |m| m.tips.reply()),
        m.map_or_else(|| Reply::Set(key_specs(c)), |m| m.key_specs.reply()),
        // As in Redis: an empty set when there are none, else an array (even in RESP3).
        if subs.is_empty() {
            Reply::Set(vec![])
        } else {
            Reply::Array(subs.iter().map(|s| command_info(s, Some(c))).collect())
        },
    ])
}

/// One COMMAND DOCS entry, in Redis's field order: summary, since, group (from the row), the
/// recorded fields (complexity ... arguments), then subcommands.
fn command_docs(c: &'static Command, parent: Option<&Command>) -> Reply {
    let b = |s: &'static str| Reply::bulk_static(s);
    let mut m = Vec::new();
    if !c.summary.is_empty() {
        m.push((b("summary"), b(c.summary)));
    }
    if !c.since.is_empty() {
        m.push((b("since"), b(c.since)));
    }
    m.push((b("group"), b(c.group)));
    if let Some(meta) = c.meta {
        m.extend(meta.docs.iter().map(|(k, v)| (b(k), v.reply())));
    }
    let subs = if parent.is_none() { c.subcommands } else { &[] };
    if !subs.is_empty() {
        m.push((
            b("subcommands"),
            Reply::Map(
                subs.iter()
                    .map(|s| {
                        (
                            Reply::bulk_str(&crate::cmd::runtime::table::fullname(Some(c), s)),
                            command_docs(s, Some(c)),
                        )
                    })
                    .collect(),
            ),
        ));
    }
    Reply::Map(m)
}

/// `get` or `client|list` to its row (and parent).
fn find_command(
    t: &CommandTable,
    name: &[u8],
) -> Option<(&'static Command, Option<&'static Command>)> {
    match name.iter().position(|&c| c == b'|') {
        None => t.lookup(name).map(|c| (c, None)),
        Some(p) => {
            let parent = t.lookup(&name[..p])?;
            let sub = parent.subcommands
                .iter()
                .find(|s| s.name.as_bytes().eq_ignore_ascii_case(&name[p + 1..]))
                .or_else(|| lookup_sub(parent, &name[p + 1..]))?;
            Some((sub, Some(parent)))
        }
    }
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

fn command(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let _ = ctx;
    if a.len() == 1 {
        return Ok(Reply::Array(
            ctx.state
                .commands
                .all_commands()
                .into_iter()
                .map(|c| command_info(c, None))
                .collect(),
        ));
    }
    // The table resolved the subcommand and checked its arity.
    let container = ctx.state.commands.lookup(b"command").expect("COMMAND is a row");
    let sub = crate::cmd::runtime::table::lookup_sub(container, &a[1])
        .ok_or_else(|| error::unknown_subcommand(&a[1], "command"))?;
    match sub.name {
        "count" => Ok(Reply::Int(ctx.state.commands.all_commands().len() as i64)),
        "help" => Ok(help_reply(COMMAND_HELP)),
        "list" => command_list(ctx.state.commands, a),
        "info" => Ok(Reply::Array(if a.len() == 2 {
            ctx.state
                .commands
                .all_commands()
                .into_iter()
                .map(|c| command_info(c, None))
                .collect()
        } else {
            a[2..]
                .iter()
                .map(|n| match find_command(ctx.state.commands, n) {
                    Some((c, p)) => command_info(c, p),
                    None => Reply::Nil,
                })
                .collect()
        })),
        "docs" => Ok(Reply::Map(if a.len() == 2 {
            ctx.state
                .commands
                .all_commands()
                .into_iter()
                .map(|c| (Reply::bulk_static(c.name), command_docs(c, None)))
                .collect()
        } else {
            a[2..]
                .iter()
                .filter_map(|n| {
                    find_command(ctx.state.commands, n).map(|(c, p)| {
                        (
                            Reply::bulk_str(&crate::cmd::runtime::table::fullname(p, c)),
                            command_docs(c, p),
                        )
                    })
                })
                .collect()
        })),
        "getkeysandflags" => command_getkeys(ctx.state.commands, &a[2..], true),
        _ => command_getkeys(ctx.state.commands, &a[2..], false),
    }
}

/// COMMAND GETKEYS (and GETKEYSANDFLAGS with `with_flags`: each key with its key spec's
/// flags).
fn command_getkeys(t: &CommandTable, cmd_args: &[Bytes], with_flags: bool) -> CmdResult {
    let invalid = || error::err("ERR Invalid command specified");
    // As Redis's lookupCommand: a plain name (`config|get` is not one), then its subcommand.
    let base = t.lookup(&cmd_args[0]).ok_or_else(invalid)?;
    let c = if !base.subcommands.is_empty() && cmd_args.len() >= 2 {
        base.subcommands
            .iter()
            .find(|s| s.name.as_bytes().eq_ignore_ascii_case(&cmd_args[1]))
            .ok_or_else(invalid)?
    } else {
        base
    };
    let m = c.meta;
    // Redis's order: no keys at all, then arity, then the keys of this command line.
    let search = m.map(|m| meta::key_positions_and_flags(m, cmd_args).0);
    if matches!(search, Some(meta::KeySearch::NoKeys)) || (m.is_none() && c.first_key <= 0) {
        return Err(error::err("ERR The command has no key arguments"));
    }
    if !c.arity_ok(cmd_args.len()) {
        return Err(error::err(
            "ERR Invalid number of arguments specified for command",
        ));
    }
    // MIGRATE's and SORT's key specs cannot say: their getkeys functions decide, as in Redis.
    let (positions, flags): (Vec<usize>, Vec<Vec<&'static str>>) =
        match c.keys_and_flags_in(cmd_args) {
            (p, Some(f)) => (p, f),
            (p, None) => {
                let f = if c.has(READONLY) {
                    vec!["RO", "access"]
                } else {
                    vec!["RW", "update"]
                };
                let n = p.len();
                (p, vec![f; n])
            }
        };
    if positions.is_empty() {
        if meta::flag_names(c.flags, m).contains(&"no_mandatory_keys") {
            return Ok(Reply::Array(vec![]));
        }
        return Err(error::err("ERR Invalid arguments specified for command"));
    }
    if with_flags {
        return Ok(Reply::Array(
            positions
                .into_iter()
                .zip(flags)
                .map(|(i, f)| {
                    Reply::Array(vec![
                        Reply::Bulk(cmd_args[i].clone()),
                        Reply::Set(f.into_iter().map(Reply::simple).collect()),
                    ])
                })
                .collect(),
        ));
    }
    Ok(Reply::Array(
        positions
            .into_iter()
            .map(|i| Reply::Bulk(cmd_args[i].clone()))
            .collect(),
    ))
}

/// A COMMAND LIST candidate: full name, row, and whether it is a container.
type ListRow = (String, &'static Command, bool);

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT cat | PATTERN pattern]: names of commands and
/// subcommands.
fn command_list(t: &CommandTable, a: &[Bytes]) -> CmdResult {
    let mut rows: Vec<ListRow> = Vec::new();
    for c in t.all_commands() {
        let subs = c.subcommands;
        rows.push((
            c.name.to_string(),
            c,
            !subs.is_empty() && c.name != "command",
        ));
        for s in subs {
            rows.push((crate::cmd::runtime::table::fullname(Some(c), s), s, false));
        }
    }
    let keep: Box<dyn Fn(&ListRow) -> bool> = match a.len() {
        2 => Box::new(|_| true),
        5 if is(&a[2], "filterby") => {
            let v = a[4].clone();
            if is(&a[3], "module") {
                Box::new(|_| false)
            } else if is(&a[3], "aclcat") {
                let cat = format!("@{}", String::from_utf8_lossy(&v).to_ascii_lowercase());
                Box::new(move |(_, c, cont)| categories(c, *cont).contains(&cat.as_str()))
            } else if is(&a[3], "pattern") {
                Box::new(move |(n, _, _)| crate::glob::glob_match(&v, n.as_bytes(), true))
            } else {
                return Err(RedisError::new(error::SYNTAX));
            }
        }
        _ => return Err(RedisError::new(error::SYNTAX)),
    };
    Ok(Reply::Array(
        rows.iter()
            .filter(|r| keep(r))
            .map(|(n, _, _)| Reply::bulk_str(n))
            .collect(),
    ))
}
