//! ACL: the user registry, the permission check every command (and every `redis.call`) goes
//! through, authentication, the ACL log, the aclfile, and the ACL command. Users and their
//! rules are in [`crate::cmd::runtime::acl::user`].
//!
//! requirepass is the default user's password, as in Redis: setting it replaces the default
//! user's passwords (`resetpass >pw`), clearing it makes the user `nopass`.

pub mod registry;
pub use registry::{Acl, LogEntry};

pub mod user;

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::runtime::acl::user::{self as acl_user, Denied, User};
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
pub fn authenticate(ctx: &mut Ctx, user: &[u8], pass: &[u8]) -> bool {
    let state = ctx.state;
    if state.acl.credentials_ok(user, pass) {
        ctx.client.authenticated = true;
        ctx.client.user = String::from_utf8_lossy(user).into_owned();
        *ctx.client.info.user.lock() = ctx.client.user.clone();
        return true;
    }
    state.acl.add_log(LogEntry {
        count: 1,
        reason: "auth",
        context: if ctx.in_script { "lua" } else { "toplevel" },
        object: Bytes::from_static(b"AUTH"),
        username: Bytes::copy_from_slice(user),
        ctime_ms: state.clock.now_ms(),
        client_info: client_info(ctx.state, ctx.client),
    });
    false
}

fn client_info(state: &ServerState, c: &Client) -> String {
    let line = crate::cmd::runtime::clients::client_line(state, &c.info, state.clock.now_ms());
    line.trim_end().to_string()
}

/// Key positions with the access each needs (READ|WRITE).
type KeyTargets = Vec<(usize, u8)>;

/// Channel positions, with whether each is a pattern.
type ChannelTargets = Vec<(usize, bool)>;

/// What `args` asks of the ACL: the keys with the access they need, and the channels.
fn targets(
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> (KeyTargets, ChannelTargets) {
    let name = crate::cmd::runtime::table::fullname(parent, cmd);
    let mut keys = Vec::new();
    if let Some(m) = cmd.meta {
        let (mut read, write) = crate::cmd::base::meta::key_access(m);
        if name == "set" && !args.iter().skip(3).any(|a| is(a, "get")) {
            // SET's flags vary (setGetKeys): without GET it only overwrites.
            read = false;
        }
        let need =
            (if read { acl_user::READ } else { 0 }) | (if write { acl_user::WRITE } else { 0 });
        let need = if need == 0 {
            acl_user::READ | acl_user::WRITE
        } else {
            need
        };
        keys = cmd.keys_in(args).into_iter().map(|p| (p, need)).collect();
    }
    let channels = match name.as_str() {
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
                "toplevel",
                cmd,
                parent,
                args,
                d,
            );
            Err(match d {
                Denied::Command => error::err(format!(
                    "NOPERM this user has no permissions to run the '{}' command",
                    crate::cmd::runtime::table::fullname(parent, cmd)
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
    let user = {
        // Decided under the lock for the common case, without copying the name per call.
        let user = state.acl.script_user.lock();
        if *user == "default" && state.acl.default_open.load(Ordering::Relaxed) {
            return None;
        }
        user.clone()
    };
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
    let user = state.acl.script_user.lock().clone();
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
    let (keys, channels) = targets(cmd, parent, args);
    let no_auth = cmd.has(NO_AUTH) || parent.is_some_and(|p| p.has(NO_AUTH));
    u.check(
        &crate::cmd::runtime::table::fullname(parent, cmd),
        no_auth,
        args,
        &keys,
        &channels,
    )
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
        Denied::Command => (
            "command",
            Bytes::from(crate::cmd::runtime::table::fullname(parent, cmd)),
        ),
        Denied::Key(p) => ("key", args[p].clone()),
        Denied::Channel(p) => ("channel", args[p].clone()),
    };
    state.acl.add_log(LogEntry {
        count: 1,
        reason,
        context,
        object: Bytes::copy_from_slice(&object),
        username: Bytes::copy_from_slice(user.as_bytes()),
        ctime_ms: state.clock.now_ms(),
        client_info: client_info(state, client),
    });
}

/// Load the aclfile named in the configuration, if any, replacing every user (ACLLoadFromFile).
/// Err: Redis's error text.
pub fn load_file(state: &ServerState) -> Result<(), String> {
    let Some(path) = state.config.read().aclfile.clone() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("Error loading ACLs, opening file '{path}': {e}"))?;
    let mut users = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words[0] != "user" || words.len() < 2 {
            return Err(format!(
                "{path}:{}: line should start with user keyword",
                n + 1
            ));
        }
        let mut u = User::new(words[1]);
        for w in &words[2..] {
            if let Err(e) = u.apply(w.as_bytes()) {
                return Err(format!("{path}:{}: {}", n + 1, e.text()));
            }
        }
        if users.insert(words[1].to_string(), u).is_some() {
            return Err(format!(
                "{path}:{}: Duplicate user '{}' found",
                n + 1,
                words[1]
            ));
        }
    }
    users
        .entry("default".to_string())
        .or_insert_with(User::default_user);
    let mut current = state.acl.users.write();
    *current = users;
    state.acl.refresh_open(&current);
    Ok(())
}
