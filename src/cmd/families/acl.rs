//! ACL: the command (SETUSER, DELUSER, GETUSER, LIST, USERS, WHOAMI, CAT, GENPASS, LOG,
//! DRYRUN, LOAD, SAVE). The users, the permission checks and the ACL log are the ACL
//! subsystem's (`runtime/acl/`, hence the shared name).

use crate::cmd::base::args::is;
use crate::cmd::runtime::acl::selector::{self, Denied, Selector};
use crate::cmd::runtime::acl::universe::{universe, CATEGORIES};
use crate::cmd::runtime::acl::user::User;
use crate::cmd::runtime::acl::{check_user, load_file};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

const ACL_SUBS: &[Row] = &[
    Row::new("cat", acl_cat),
    Row::new("deluser", acl_deluser),
    Row::new("dryrun", acl_dryrun),
    Row::new("genpass", acl_genpass),
    Row::new("getuser", acl_getuser),
    Row::new("help", acl_help),
    Row::new("list", acl_list),
    Row::new("load", acl_load),
    Row::new("log", acl_log),
    Row::new("save", acl_save),
    Row::new("setuser", acl_setuser),
    Row::new("users", acl_users),
    Row::new("whoami", acl_whoami),
];

pub const COMMANDS: &[Row] =
    &[Row::new("acl", crate::cmd::runtime::table::container).subs(ACL_SUBS)];

fn acl_setuser(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&a[2]).into_owned();
    if a[2].iter().any(|&c| c.is_ascii_whitespace() || c == 0) {
        return Err(RedisError::new(error::ACL_USERNAME_SPACES));
    }
    let all_channels =
        ctx.state.config.read().get("acl-pubsub-default").as_deref() == Some("allchannels");
    let mut users = ctx.state.acl.users.write();
    let original = users.get(&name).cloned();
    let mut u = original
        .clone()
        .unwrap_or_else(|| User::created(&name, all_channels));
    // A selector split over several arguments is joined first (ACLMergeSelectorArguments).
    let ops = selector::merge_selector_args(&a[3..]).map_err(|at| {
        error::err(format!(
            "ERR Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(&a[3 + at])
        ))
    })?;
    for op in &ops {
        if let Err(e) = u.apply_under(op, all_channels) {
            return Err(error::err(format!(
                "ERR Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(op),
                e.text()
            )));
        }
    }
    let revoked = original.is_some_and(|o| channels_revoked(&o, &u));
    users.insert(name.clone(), u.clone());
    ctx.state.acl.refresh_open(&users);
    drop(users);
    if revoked {
        kill_revoked_subscribers(ctx, &name, &u);
    }
    Ok(Reply::ok())
}

/// ACLKillPubsubClientsIfNeeded's shortcut: whether `new` may have lost a channel `old` had
/// (no selector of `new` allows every channel, and some channel rule of `old` is not among
/// `new`'s).
fn channels_revoked(old: &User, new: &User) -> bool {
    let sels = |u: &User| std::iter::once(u.root.clone()).chain(u.selectors.clone());
    if sels(new).any(|s| s.allchannels) {
        return false;
    }
    let upcoming: Vec<Vec<u8>> = sels(new).flat_map(|s| s.channels).collect();
    sels(old).any(|s| s.allchannels || s.channels.iter().any(|c| !upcoming.contains(c)))
}

/// Disconnect the clients of user `name` subscribed to a channel or pattern `user` no longer
/// allows, as Redis does when ACL SETUSER takes channels away.
fn kill_revoked_subscribers(ctx: &mut Ctx, name: &str, user: &User) {
    let me = ctx.client.id;
    let victims: Vec<_> = ctx
        .state
        .clients
        .lock()
        .iter()
        .filter(|(_, c)| c.subscription_count() > 0 && c.user.lock().as_str() == name)
        .map(|(id, c)| (*id, c.kill.clone()))
        .collect();
    for (id, kill) in victims {
        let subs = ctx.state.pubsub.subscriptions_of(id);
        if subs.iter().all(|(ch, pat)| user.may_subscribe(ch, *pat)) {
            continue;
        }
        if id == me {
            ctx.client.close_after_reply = true;
        } else {
            kill.cancel();
        }
    }
}

fn acl_deluser(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a[2..].iter().any(|n| n.as_ref() == b"default") {
        return Err(RedisError::new(error::ACL_DEFAULT_UNDELETABLE));
    }
    let mut users = ctx.state.acl.users.write();
    let mut deleted = 0;
    for n in &a[2..] {
        let name = String::from_utf8_lossy(n);
        if users.remove(name.as_ref()).is_some() {
            deleted += 1;
            // Redis disconnects the clients authenticated as a deleted user.
            for (id, c) in ctx.state.clients.lock().iter() {
                if c.user.lock().as_str() == name {
                    if *id == ctx.client.id {
                        // A client deleting its own user gets the reply, then is closed.
                        ctx.client.close_after_reply = true;
                    } else {
                        c.kill.cancel();
                    }
                }
            }
        }
    }
    Ok(Reply::Int(deleted))
}

fn acl_getuser(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let users = ctx.state.acl.users.read();
    let Some(u) = users.get(String::from_utf8_lossy(&a[2]).as_ref()) else {
        return Ok(Reply::Nil);
    };
    let s = |v: &'static str| Reply::bulk_static(v);
    let describe = |sel: &Selector| {
        vec![
            (s("commands"), Reply::bulk_str(&sel.describe_commands())),
            (s("keys"), Reply::bulk_str(&sel.keys_field())),
            (s("channels"), Reply::bulk_str(&sel.channels_field())),
        ]
    };
    let mut fields = vec![
        (
            s("flags"),
            Reply::Set(u.flags().into_iter().map(s).collect()),
        ),
        (
            s("passwords"),
            Reply::Array(u.passwords.iter().map(|p| Reply::bulk_str(p)).collect()),
        ),
    ];
    fields.extend(describe(&u.root));
    fields.push((
        s("selectors"),
        Reply::Array(
            u.selectors
                .iter()
                .map(|x| Reply::Map(describe(x)))
                .collect(),
        ),
    ));
    Ok(Reply::Map(fields))
}

fn acl_list(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let users = ctx.state.acl.users.read();
    Ok(Reply::Array(
        users
            .iter()
            .map(|(n, u)| Reply::bulk_str(&format!("user {n} {}", u.describe())))
            .collect(),
    ))
}

fn acl_users(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let users = ctx.state.acl.users.read();
    Ok(Reply::Array(
        users.keys().map(|n| Reply::bulk_str(n)).collect(),
    ))
}

fn acl_whoami(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::bulk_str(&ctx.client.user))
}

fn acl_cat(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() == 2 {
        return Ok(Reply::Array(
            CATEGORIES.iter().map(|c| Reply::bulk_static(c)).collect(),
        ));
    }
    if a.len() > 3 {
        // aclCommand's fallback: the subcommand as typed.
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let name = String::from_utf8_lossy(&a[2]).to_ascii_lowercase();
    let Some(cat) = CATEGORIES.iter().position(|c| *c == name) else {
        let shown: String = String::from_utf8_lossy(&a[2]).chars().take(128).collect();
        return Err(error::err(format!("ERR Unknown category '{shown}'")));
    };
    Ok(Reply::Array(
        universe()
            .in_category(cat)
            .map(Reply::bulk_static)
            .collect(),
    ))
}

fn acl_genpass(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        // aclCommand's fallback, as for GETUSER: the subcommand as typed.
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let bits = match a.get(2) {
        None => 256,
        Some(b) => {
            crate::cmd::base::args::parse_i64(b).ok_or(RedisError::new(error::NOT_INTEGER))?
        }
    };
    if bits <= 0 || bits > 4096 {
        return Err(RedisError::new(error::ACL_GENPASS_BITS));
    }
    let chars = ((bits + 3) / 4) as usize;
    let pass: String = (0..chars)
        .map(|_| char::from_digit(fastrand::u32(0..16), 16).expect("hex digit"))
        .collect();
    Ok(Reply::bulk_str(&pass))
}

fn acl_log(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        // aclCommand's fallback, as for GETUSER: the subcommand as typed.
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let mut count = 10i64;
    if let Some(arg) = a.get(2) {
        if is(arg, "reset") {
            ctx.state.acl.log.lock().clear();
            return Ok(Reply::ok());
        }
        count =
            crate::cmd::base::args::parse_i64(arg).ok_or(RedisError::new(error::NOT_INTEGER))?;
    }
    let log = ctx.state.acl.log.lock();
    let now = ctx.state.clock.now_ms();
    let s = |v: &'static str| Reply::bulk_static(v);
    Ok(Reply::Array(
        log.iter()
            .take(count.max(0) as usize)
            .map(|e| {
                Reply::Map(vec![
                    (s("count"), Reply::Int(e.count as i64)),
                    (s("reason"), s(e.reason)),
                    (s("context"), s(e.context)),
                    (s("object"), Reply::Bulk(e.object.clone())),
                    (s("username"), Reply::Bulk(e.username.clone())),
                    (
                        s("age-seconds"),
                        Reply::Double((now - e.ctime_ms) as f64 / 1000.0),
                    ),
                    (s("client-info"), Reply::bulk_str(&e.client_info)),
                ])
            })
            .collect(),
    ))
}

fn acl_dryrun(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&a[2]).into_owned();
    if !ctx.state.acl.users.read().contains_key(&name) {
        return Err(error::err(format!("ERR User '{name}' not found")));
    }
    let args = &a[3..];
    let (cmd, parent) = match ctx.state.commands.resolve(args) {
        Ok(row) => row,
        // A command found with the wrong number of arguments is refused as such.
        Err(e) if e.0.starts_with(b"ERR wrong number of arguments") => return Err(e),
        Err(_) => {
            return Err(error::err(format!(
                "ERR Command '{}' not found",
                String::from_utf8_lossy(&a[3])
            )))
        }
    };
    match check_user(ctx.state, &name, cmd, parent, args) {
        Ok(()) => Ok(Reply::ok()),
        Err(Denied::Command) => Ok(Reply::bulk_str(&format!(
            "This user has no permissions to run the '{}' command",
            crate::cmd::runtime::acl::acl_name(cmd, parent)
        ))),
        Err(Denied::Key(p)) => Ok(named(&args[p], "key")),
        Err(Denied::Channel(p)) => Ok(named(&args[p], "channel")),
    }
}

/// DRYRUN's answer naming a key or channel: its bytes up to any NUL (Redis formats it as a C
/// string).
fn named(name: &[u8], what: &str) -> Reply {
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    let mut out = b"This user has no permissions to access the '".to_vec();
    out.extend_from_slice(&name[..end]);
    out.extend_from_slice(format!("' {what}").as_bytes());
    Reply::Bulk(Bytes::from(out))
}

fn acl_load(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if ctx.state.config.read().aclfile.is_none() {
        return Err(RedisError::new(error::ACL_NO_FILE));
    }
    load_file(ctx.state, Some(ctx.client.id)).map_err(|e| error::err(format!("ERR {e}")))?;
    if ctx.client.user != "default" {
        // Its user was replaced: closed after this reply, as Redis does.
        ctx.client.close_after_reply = true;
    }
    Ok(Reply::ok())
}

fn acl_save(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let Some(path) = ctx.state.config.read().aclfile.clone() else {
        return Err(RedisError::new(error::ACL_NO_FILE));
    };
    let users = ctx.state.acl.users.read();
    let mut text = String::new();
    for (n, u) in users.iter() {
        text.push_str(&format!("user {n} {}\n", u.describe()));
    }
    let tmp = format!("{path}.tmp-{}", std::process::id());
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|_| RedisError::new(error::ACL_SAVE_FAILED))?;
    Ok(Reply::ok())
}

fn acl_help(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(crate::cmd::base::help::help_reply(&[
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    ]))
}
