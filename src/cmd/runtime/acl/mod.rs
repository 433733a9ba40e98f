//! ACL: the user registry, the permission check every command (and every `redis.call`) goes
//! through, authentication, the ACL log, the aclfile, and the ACL command. Users and their
//! rules are in [`crate::cmd::runtime::acl::user`].
//!
//! requirepass is the default user's password, as in Redis: setting it replaces the default
//! user's passwords (`resetpass >pw`), clearing it makes the user `nopass`.

pub mod user;

use crate::cmd::base::args::is;
use crate::cmd::base::flags::*;
use crate::cmd::runtime::acl::user::{self as acl_user, Denied, User, CATEGORIES};
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Command;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};

const ACL_ADMIN: u32 = ADMIN | NOSCRIPT | LOADING | STALE;
const ACL_OPEN: u32 = NOSCRIPT | LOADING | STALE;

const ACL_SUBS: &[Command] = &[
    Command::new("cat", -2, ACL_OPEN, acl_cat).doc(
        "server",
        "6.0.0",
        "List the ACL categories or the commands inside a category",
    ),
    Command::new("deluser", -3, ACL_ADMIN, acl_deluser).doc(
        "server",
        "6.0.0",
        "Remove the specified ACL users and the associated rules",
    ),
    Command::new("dryrun", -4, ACL_ADMIN, acl_dryrun).doc(
        "server",
        "7.0.0",
        "Returns whether the user can execute the given command without executing the command.",
    ),
    Command::new("genpass", -2, ACL_OPEN, acl_genpass).doc(
        "server",
        "6.0.0",
        "Generate a pseudorandom secure password to use for ACL users",
    ),
    Command::new("getuser", 3, ACL_ADMIN, acl_getuser).doc(
        "server",
        "6.0.0",
        "Get the rules for a specific ACL user",
    ),
    Command::new("help", 2, LOADING | STALE, acl_help).doc(
        "server",
        "6.0.0",
        "Show helpful text about the different subcommands",
    ),
    Command::new("list", 2, ACL_ADMIN, acl_list).doc(
        "server",
        "6.0.0",
        "List the current ACL rules in ACL config file format",
    ),
    Command::new("load", 2, ACL_ADMIN, acl_load).doc(
        "server",
        "6.0.0",
        "Reload the ACLs from the configured ACL file",
    ),
    Command::new("log", -2, ACL_ADMIN, acl_log).doc(
        "server",
        "6.0.0",
        "List latest events denied because of ACLs in place",
    ),
    Command::new("save", 2, ACL_ADMIN, acl_save).doc(
        "server",
        "6.0.0",
        "Save the current ACL rules in the configured ACL file",
    ),
    Command::new("setuser", -3, ACL_ADMIN, acl_setuser).doc(
        "server",
        "6.0.0",
        "Modify or create the rules for a specific ACL user",
    ),
    Command::new("users", 2, ACL_ADMIN, acl_users).doc(
        "server",
        "6.0.0",
        "List the username of all the configured ACL rules",
    ),
    Command::new("whoami", 2, ACL_OPEN, acl_whoami).doc(
        "server",
        "6.0.0",
        "Return the name of the user associated to the current connection",
    ),
];

pub const COMMANDS: &[Command] =
    &[
        Command::new("acl", -2, 0, crate::cmd::runtime::table::container)
            .subs(ACL_SUBS)
            .doc(
                "server",
                "6.0.0",
                "A container for Access List Control commands ",
            ),
    ];

/// Entries the ACL log keeps (acllog-max-len's default).
const LOG_MAX: usize = 128;

/// One ACL LOG entry.
struct LogEntry {
    count: u64,
    reason: &'static str,
    context: &'static str,
    object: Bytes,
    username: Bytes,
    ctime_ms: i64,
    client_info: String,
}

/// The users, the log, and what keeps requirepass and the default user in step.
pub struct Acl {
    users: RwLock<BTreeMap<String, User>>,
    log: Mutex<VecDeque<LogEntry>>,
    /// The default user may run anything on any key and channel: its clients skip the check.
    default_open: AtomicBool,
    /// The requirepass last applied to the default user.
    requirepass: Mutex<Option<String>>,
    /// The user of the script running now (its `redis.call`s are checked against it).
    pub script_user: Mutex<String>,
}

impl Default for Acl {
    fn default() -> Self {
        let mut users = BTreeMap::new();
        users.insert("default".to_string(), User::default_user());
        Acl {
            users: RwLock::new(users),
            log: Mutex::new(VecDeque::new()),
            default_open: AtomicBool::new(true),
            requirepass: Mutex::new(None),
            script_user: Mutex::new("default".into()),
        }
    }
}

impl Acl {
    fn refresh_open(&self, users: &BTreeMap<String, User>) {
        let open = users
            .get("default")
            .is_some_and(|u| u.describe_commands() == "+@all" && u.allkeys && u.allchannels);
        self.default_open.store(open, Ordering::Relaxed);
    }

    /// Redis's authRequired for a new connection: the default user has a password or is off.
    pub fn auth_required(&self) -> bool {
        self.users
            .read()
            .get("default")
            .is_none_or(|u| !u.nopass || !u.enabled)
    }

    /// The default user takes any password (AUTH with one argument is then an error).
    pub fn default_is_nopass(&self) -> bool {
        self.users.read().get("default").is_some_and(|u| u.nopass)
    }

    /// Make the default user's password follow requirepass (ACLUpdateDefaultUserPassword),
    /// when it changed since last applied.
    pub fn sync_requirepass(&self, requirepass: &Option<String>) {
        let mut last = self.requirepass.lock();
        if *last == *requirepass {
            return;
        }
        *last = requirepass.clone();
        let mut users = self.users.write();
        if let Some(u) = users.get_mut("default") {
            let _ = u.apply(b"resetpass");
            match requirepass {
                Some(p) => {
                    let _ = u.apply(format!(">{p}").as_bytes());
                }
                None => {
                    let _ = u.apply(b"nopass");
                }
            }
        }
        self.refresh_open(&users);
    }

    /// ACLCheckUserCredentials: Ok if `user` exists, is on and `pass` opens it.
    pub fn credentials_ok(&self, user: &[u8], pass: &[u8]) -> bool {
        let users = self.users.read();
        let name = String::from_utf8_lossy(user);
        users
            .get(name.as_ref())
            .is_some_and(|u| u.enabled && u.password_ok(pass))
    }

    fn add_log(&self, entry: LogEntry) {
        let mut log = self.log.lock();
        // Redis merges an entry into a similar one less than a minute old.
        if let Some(e) = log.iter_mut().find(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.ctime_ms - e.ctime_ms < 60_000
        }) {
            e.count += 1;
            e.ctime_ms = entry.ctime_ms;
            e.client_info = entry.client_info;
            return;
        }
        log.push_front(entry);
        log.truncate(LOG_MAX);
    }
}

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
    let line = crate::cmd::families::client::client_line(state, &c.info, state.clock.now_ms());
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
    if let Some(m) = crate::cmd::base::meta::get(&name) {
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
        let positions: Vec<usize> = match crate::cmd::base::meta::key_positions(m, args) {
            crate::cmd::base::meta::KeySearch::Keys(k) => k,
            crate::cmd::base::meta::KeySearch::NoKeys => Vec::new(),
            crate::cmd::base::meta::KeySearch::Unknown => cmd.key_positions(args.len()).collect(),
        };
        keys = positions.into_iter().map(|p| (p, need)).collect();
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

fn check_user(
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

fn acl_setuser(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let name = String::from_utf8_lossy(&a[2]).into_owned();
    if a[2].iter().any(|&c| c.is_ascii_whitespace() || c == 0) {
        return Err(RedisError::new(error::ACL_USERNAME_SPACES));
    }
    let mut users = ctx.state.acl.users.write();
    let mut u = users
        .get(&name)
        .cloned()
        .unwrap_or_else(|| User::new(&name));
    for op in &a[3..] {
        if let Err(e) = u.apply(op) {
            return Err(error::err(format!(
                "ERR Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(op),
                e.text()
            )));
        }
    }
    users.insert(name, u);
    ctx.state.acl.refresh_open(&users);
    Ok(Reply::ok())
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
            for c in ctx.state.clients.lock().values() {
                if c.user.lock().as_str() == name {
                    c.kill.cancel();
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
    let mut flags = vec![s(if u.enabled { "on" } else { "off" })];
    if u.nopass {
        flags.push(s("nopass"));
    }
    Ok(Reply::Map(vec![
        (s("flags"), Reply::Set(flags)),
        (
            s("passwords"),
            Reply::Array(u.passwords.iter().map(|p| Reply::bulk_str(p)).collect()),
        ),
        (s("commands"), Reply::bulk_str(&u.describe_commands())),
        (s("keys"), Reply::bulk_str(&u.keys_field())),
        (s("channels"), Reply::bulk_str(&u.channels_field())),
        (s("selectors"), Reply::Array(vec![])),
    ]))
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
        return Err(error::wrong_arity("acl|cat"));
    }
    let name = String::from_utf8_lossy(&a[2]).to_ascii_lowercase();
    let Some(cat) = CATEGORIES.iter().position(|c| *c == name) else {
        let shown: String = String::from_utf8_lossy(&a[2]).chars().take(128).collect();
        return Err(error::err(format!("ERR Unknown category '{shown}'")));
    };
    Ok(Reply::Array(
        acl_user::universe()
            .in_category(cat)
            .map(Reply::bulk_static)
            .collect(),
    ))
}

fn acl_genpass(_: &mut Ctx, a: &[Bytes]) -> CmdResult {
    if a.len() > 3 {
        return Err(error::wrong_arity("acl|genpass"));
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
        return Err(error::wrong_arity("acl|log"));
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
    let Ok((cmd, parent)) = ctx.state.commands.resolve(args) else {
        return Err(error::err(format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(&a[3])
        )));
    };
    match check_user(ctx.state, &name, cmd, parent, args) {
        Ok(()) => Ok(Reply::ok()),
        Err(Denied::Command) => Ok(Reply::bulk_str(&format!(
            "This user has no permissions to run the '{}' command",
            crate::cmd::runtime::table::fullname(parent, cmd)
        ))),
        Err(Denied::Key(p)) => Ok(Reply::bulk_str(&format!(
            "This user has no permissions to access the '{}' key",
            String::from_utf8_lossy(&args[p])
        ))),
        Err(Denied::Channel(p)) => Ok(Reply::bulk_str(&format!(
            "This user has no permissions to access the '{}' channel",
            String::from_utf8_lossy(&args[p])
        ))),
    }
}

fn acl_load(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    if ctx.state.config.read().aclfile.is_none() {
        return Err(RedisError::new(error::ACL_NO_FILE));
    }
    load_file(ctx.state).map_err(|e| error::err(format!("ERR {e}")))?;
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
    Ok(crate::cmd::families::connection::help_reply(&[
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
        "    Print this help.",
    ]))
}
