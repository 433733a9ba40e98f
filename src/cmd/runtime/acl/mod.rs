//! ACL: the user registry, the permission check every command (and every `redis.call`) goes
//! through, authentication, the ACL log, the aclfile, and the ACL command. Users and their
//! rules are in [`crate::cmd::runtime::acl::user`], their selectors in
//! [`crate::cmd::runtime::acl::selector`], the commands they speak about in
//! [`crate::cmd::runtime::acl::universe`].
//!
//! requirepass is the default user's password, as in Redis: setting it replaces the default
//! user's passwords (`resetpass >pw`), clearing it makes the user `nopass`.

pub mod registry;
pub use registry::{Acl, LogEntry};

pub mod selector;
pub mod universe;
pub mod user;

use crate::cmd::base::flags::*;
use crate::cmd::runtime::acl::selector::Denied;
use crate::cmd::runtime::acl::user::User;
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// Authenticate `client` as `user` (AUTH, HELLO AUTH): false (and a log entry) if refused.
/// The entry's object is the command's name as typed (`cmd`: AUTH, HELLO, hello...) and its
/// context `multi` inside a transaction, as Redis's addACLLogEntry takes argv[0] and the
/// client's MULTI flag.
pub fn authenticate(ctx: &mut Ctx, cmd: &[u8], user: &[u8], pass: &[u8]) -> bool {
    let state = ctx.state;
    if state.acl.credentials_ok(user, pass) {
        ctx.client.authenticated = true;
        ctx.client.user = String::from_utf8_lossy(user).into_owned();
        *ctx.client.info.user.lock() = ctx.client.user.clone();
        return true;
    }
    let max = acllog_max_len(state);
    state.acl.add_log(
        LogEntry {
            count: 1,
            reason: "auth",
            context: if ctx.in_script {
                "lua"
            } else if ctx.in_exec {
                "multi"
            } else {
                "toplevel"
            },
            object: Bytes::copy_from_slice(cmd),
            username: Bytes::copy_from_slice(user),
            ctime_ms: state.clock.now_ms(),
            client_info: client_info(ctx.state, ctx.client),
        },
        max,
    );
    false
}

/// acllog-max-len: how many entries ACL LOG keeps.
fn acllog_max_len(state: &ServerState) -> usize {
    state
        .config
        .read()
        .get("acllog-max-len")
        .and_then(|v| v.parse().ok())
        .unwrap_or(128)
}

fn client_info(state: &ServerState, c: &Client) -> String {
    let line = crate::cmd::runtime::clients::client_line(state, &c.info, state.clock.now_ms());
    line.trim_end().to_string()
}

/// Key positions with the access each needs (READ|WRITE).
type KeyTargets = Vec<(usize, u8)>;

/// Channel positions, with whether each is a pattern.
type ChannelTargets = Vec<(usize, bool)>;

/// The name the ACL knows the command by: its full name (`client|kill`). Every command Redis
/// splits into subcommands is a container row here (a test in cmd/mod.rs keeps it so), so the row that
/// runs is the one the ACL names.
pub(crate) fn acl_name(cmd: &Command, parent: Option<&Command>) -> String {
    crate::cmd::runtime::table::fullname(parent, cmd)
}

/// What `args` asks of the ACL: the keys with the access each needs (from the flags of the
/// key spec that found it, as ACLSelectorCheckKey reads them), and the channels.
fn targets(name: &str, cmd: &Command, args: &[Bytes]) -> (KeyTargets, ChannelTargets) {
    let mut keys = Vec::new();
    if let Some(m) = cmd.meta {
        let access = |flags: &[&str]| {
            let mut need = 0;
            for f in flags {
                match *f {
                    "access" => need |= selector::READ,
                    "insert" | "delete" | "update" => need |= selector::WRITE,
                    _ => {}
                }
            }
            need
        };
        let (positions, spec_flags) = cmd.keys_and_flags_in(args);
        let range_need = || {
            let (read, write) = crate::cmd::base::meta::key_access(m);
            (if read { selector::READ } else { 0 }) | (if write { selector::WRITE } else { 0 })
        };
        for (i, p) in positions.into_iter().enumerate() {
            let need = match &spec_flags {
                Some(f) => f.get(i).map_or(0, |f| access(f)),
                // No key spec could say: the access of all the command's specs.
                None => range_need(),
            };
            keys.push((p, need));
        }
    }
    let channels = match name {
        "subscribe" | "ssubscribe" => (1..args.len()).map(|p| (p, false)).collect(),
        "psubscribe" => (1..args.len()).map(|p| (p, true)).collect(),
        "publish" | "spublish" if args.len() > 1 => vec![(1, false)],
        _ => Vec::new(),
    };
    (keys, channels)
}

/// processCommand's ACL step for a network client: Redis's NOPERM error when the client's
/// user may not run `args`, with an ACL LOG entry.
pub fn check_command(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> Result<(), RedisError> {
    if client.user == "default" && state.acl.default_open.load(Ordering::Relaxed) {
        return Ok(());
    }
    match check_user(state, &client.user, cmd, parent, args) {
        Ok(()) => Ok(()),
        Err(d) => {
            log_denied(
                state,
                client,
                &client.user,
                if client.multi.is_some() {
                    "multi"
                } else {
                    "toplevel"
                },
                cmd,
                parent,
                args,
                d,
            );
            Err(match d {
                Denied::Command => error::err(format!(
                    "NOPERM this user has no permissions to run the '{}' command",
                    acl_name(cmd, parent)
                )),
                Denied::Key(_) => RedisError::new(error::NOPERM_KEY),
                Denied::Channel(_) => RedisError::new(error::NOPERM_CHANNEL),
            })
        }
    }
}

/// scriptVerifyACL: the error a script's `redis.call` gets when the script's user may not run
/// `args` (None: allowed).
pub fn check_script_call(
    state: &ServerState,
    client: &Client,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> Option<Reply> {
    // The common case decided without the name.
    if state.acl.script_user.is_default() && state.acl.default_open.load(Ordering::Relaxed) {
        return None;
    }
    let user = state.acl.script_user.get();
    let d = check_user(state, &user, cmd, parent, args).err()?;
    log_denied(state, client, &user, "lua", cmd, parent, args, d);
    let why = match d {
        Denied::Command => "can't run this command or subcommand",
        Denied::Key(_) => {
            "can't access at least one of the keys mentioned in the command arguments"
        }
        Denied::Channel(_) => "can't publish to the channel mentioned in the command",
    };
    Some(Reply::Error(Bytes::from(format!(
        "ERR The user executing the script {why}"
    ))))
}

/// redis.acl_check_cmd: whether the running script's user may run `args` (no log entry).
pub fn script_user_may(
    state: &ServerState,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> bool {
    let user = state.acl.script_user.get();
    check_user(state, &user, cmd, parent, args).is_ok()
}

pub(crate) fn check_user(
    state: &ServerState,
    user: &str,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> Result<(), Denied> {
    let users = state.acl.users.read();
    let Some(u) = users.get(user) else {
        return Err(Denied::Command);
    };
    let (name, is_sub) = (acl_name(cmd, parent), parent.is_some());
    let (keys, channels) = targets(&name, cmd, args);
    let no_auth = cmd.has(NO_AUTH) || parent.is_some_and(|p| p.has(NO_AUTH));
    u.check(&name, is_sub, no_auth, args, &keys, &channels)
}

#[allow(clippy::too_many_arguments)]
fn log_denied(
    state: &ServerState,
    client: &Client,
    user: &str,
    context: &'static str,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
    d: Denied,
) {
    let (reason, object) = match d {
        Denied::Command => ("command", Bytes::from(acl_name(cmd, parent))),
        Denied::Key(p) => ("key", args[p].clone()),
        Denied::Channel(p) => ("channel", args[p].clone()),
    };
    let max = acllog_max_len(state);
    state.acl.add_log(
        LogEntry {
            count: 1,
            reason,
            context,
            object: Bytes::copy_from_slice(&object),
            username: Bytes::copy_from_slice(user.as_bytes()),
            ctime_ms: state.clock.now_ms(),
            client_info: client_info(state, client),
        },
        max,
    );
}

/// ACLLoadConfiguredUsers: the configuration's `user` lines (the default user is reset
/// first, the others created), each rule applied in order; the first rule that fails stops
/// the loading with Redis's words. Users in the configuration and an aclfile together are
/// refused, as redis-server refuses them.
pub fn load_configured_users(state: &ServerState) -> Result<(), String> {
    let (lines, aclfile, all_channels) = {
        let c = state.config.read();
        (
            c.users.clone(),
            c.aclfile.is_some(),
            c.get("acl-pubsub-default").as_deref() == Some("allchannels"),
        )
    };
    if lines.is_empty() {
        return Ok(());
    }
    if aclfile {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    let mut users = state.acl.users.write();
    for line in &lines {
        let name = &line[0];
        let mut u = match users.get(name) {
            Some(existing) if name == "default" => {
                let mut u = existing.clone();
                u.apply_under(b"reset", all_channels)
                    .expect("reset is a valid rule");
                u
            }
            _ => User::created(name, all_channels),
        };
        let rules = selector::merge_selector_args(&line[1..]).map_err(|_| {
            format!("Unmatched parenthesis in acl selector for the user named '{name}'")
        })?;
        for r in &rules {
            if let Err(e) = u.apply_under(r, all_channels) {
                return Err(format!(
                    "Error loading ACL rule '{}' for the user named '{name}': {}",
                    String::from_utf8_lossy(r),
                    e.text()
                ));
            }
        }
        if !u.enabled {
            crate::log::notice(&format!("The user '{name}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error."));
        }
        users.insert(name.clone(), u);
    }
    state.acl.refresh_open(&users);
    Ok(())
}

/// Load the aclfile named in the configuration, if any, replacing every user (ACLLoadFromFile):
/// every line is tried and every error reported, in Redis's words, and nothing changes when
/// there is one. The clients authenticated as a user other than default are disconnected,
/// since their users are replaced (all but `keep`, which its caller closes after the
/// reply). Err: Redis's error text.
pub fn load_file(state: &ServerState, keep: Option<u64>) -> Result<(), String> {
    let Some(path) = state.config.read().aclfile.clone() else {
        return Ok(());
    };
    let all_channels =
        state.config.read().get("acl-pubsub-default").as_deref() == Some("allchannels");
    let raw = std::fs::read(&path)
        .map_err(|e| format!("Error loading ACLs, opening file '{path}': {e}"))?;
    let text = String::from_utf8_lossy(&raw);
    let mut users: BTreeMap<String, User> = BTreeMap::new();
    let mut errors = String::new();
    for (n, line) in text.split('\n').enumerate() {
        let n = n + 1;
        let line = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r' | '\n'));
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split(' ').collect();
        if words[0] != "user" || words.len() < 2 {
            errors.push_str(&format!(
                "{path}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = words[1];
        if name.bytes().any(|c| c.is_ascii_whitespace() || c == 0) {
            errors.push_str(&format!(
                "'{path}:{n}: username '{name}' contains invalid characters. "
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{name}' found on line {n}. "
            ));
            continue;
        }
        let mut u = User::created(name, all_channels);
        let args = match selector::merge_selector_args(&words[2..]) {
            Ok(a) => a,
            Err(_) => {
                errors.push_str(&format!(
                    "{path}:{n}: Unmatched parenthesis in selector definition."
                ));
                Vec::new()
            }
        };
        let mut syntax_error = false;
        for a in &args {
            let a = trim_bytes(a);
            if let Err(e) = u.apply_under(a, all_channels) {
                if e == selector::RuleError::UnknownCommand {
                    errors.push_str(&format!(
                        "{path}:{n}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(a),
                        e.text()
                    ));
                } else if !syntax_error {
                    errors.push_str(&format!("{path}:{n}: {}. ", e.text()));
                    syntax_error = true;
                }
            }
        }
        users.insert(name.to_string(), u);
    }
    if !errors.is_empty() {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        return Err(errors);
    }
    users
        .entry("default".to_string())
        .or_insert_with(User::default_user);
    let mut current = state.acl.users.write();
    *current = users;
    state.acl.refresh_open(&current);
    drop(current);
    for (id, c) in state.clients.lock().iter() {
        if Some(*id) != keep && c.user.lock().as_str() != "default" {
            c.kill.cancel();
        }
    }
    Ok(())
}

/// An aclfile argument without surrounding tabs and line ends (Redis trims "\t\r\n").
fn trim_bytes(a: &[u8]) -> &[u8] {
    let keep = |c: &u8| !matches!(c, b'\t' | b'\r' | b'\n');
    let start = a.iter().position(keep).unwrap_or(a.len());
    let end = a.iter().rposition(keep).map_or(start, |e| e + 1);
    &a[start..end]
}

/// ACLUserCheckCmdWithUnrestrictedKeyAccess for READ: may `user` run `args` through a
/// selector that also reads every key (SORT's BY and GET patterns need it).
pub fn full_key_read_access(state: &ServerState, user: &str, args: &[Bytes]) -> bool {
    let Ok((cmd, parent)) = state.commands.resolve(args) else {
        return true;
    };
    let users = state.acl.users.read();
    let Some(u) = users.get(user) else {
        return false;
    };
    let (name, is_sub) = (acl_name(cmd, parent), parent.is_some());
    let (keys, channels) = targets(&name, cmd, args);
    let no_auth = cmd.has(NO_AUTH) || parent.is_some_and(|p| p.has(NO_AUTH));
    u.reads_every_key(&name, is_sub, no_auth, args, &keys, &channels)
}
