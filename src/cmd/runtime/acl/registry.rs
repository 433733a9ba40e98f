//! What ServerState keeps for ACL: the users, the user scripts run as, and the ACL log (see
//! `acl/mod.rs` for the checks, `acl/user.rs` for a user's rules).

use crate::cmd::runtime::acl::user::User;
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};

/// One ACL LOG entry.
pub struct LogEntry {
    pub(crate) count: u64,
    pub(crate) reason: &'static str,
    pub(crate) context: &'static str,
    pub(crate) object: Bytes,
    pub(crate) username: Bytes,
    pub(crate) ctime_ms: i64,
    pub(crate) client_info: String,
}

/// The users, the log, and what keeps requirepass and the default user in step.
pub struct Acl {
    pub(crate) users: RwLock<BTreeMap<String, User>>,
    pub(crate) log: Mutex<VecDeque<LogEntry>>,
    /// The default user may run anything on any key and channel: its clients skip the check.
    pub(crate) default_open: AtomicBool,
    /// The requirepass last applied to the default user.
    pub(crate) requirepass: Mutex<Option<String>>,
    /// The user of the script running now (its `redis.call`s are checked against it).
    pub script_user: ScriptUser,
}

/// The user the running script's `redis.call`s are checked against. Set before every run
/// and read by every call; nearly always the default user, which is known without the lock.
pub struct ScriptUser {
    name: Mutex<String>,
    /// `name` is "default" (written with it, under its lock).
    is_default: AtomicBool,
}

impl ScriptUser {
    /// The next script runs as `user`. A run as the default user after another takes no lock.
    pub fn set(&self, user: &str) {
        let default = user == "default";
        if default && self.is_default.load(Ordering::Relaxed) {
            return;
        }
        let mut name = self.name.lock();
        name.clear();
        name.push_str(user);
        self.is_default.store(default, Ordering::Relaxed);
    }

    /// Whether the script runs as the default user.
    pub fn is_default(&self) -> bool {
        self.is_default.load(Ordering::Relaxed)
    }

    /// The user's name.
    pub fn get(&self) -> String {
        self.name.lock().clone()
    }
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
            script_user: ScriptUser {
                name: Mutex::new("default".into()),
                is_default: AtomicBool::new(true),
            },
        }
    }
}

impl Acl {
    pub(crate) fn refresh_open(&self, users: &BTreeMap<String, User>) {
        let open = users.get("default").is_some_and(|u| u.root.unrestricted());
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

    /// Add a denial to the log, which keeps the `max` newest (acllog-max-len).
    pub(crate) fn add_log(&self, entry: LogEntry, max: usize) {
        let mut log = self.log.lock();
        // Redis merges an entry into a similar one less than a minute old, and moves it first.
        // Only the ten newest entries are looked at, as in Redis.
        if let Some(i) = log.iter().take(10).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.object == entry.object
                && e.username == entry.username
                && entry.ctime_ms - e.ctime_ms < 60_000
        }) {
            let mut e = log.remove(i).expect("entry found");
            e.count += 1;
            e.ctime_ms = entry.ctime_ms;
            e.client_info = entry.client_info;
            log.push_front(e);
            return;
        }
        log.push_front(entry);
        log.truncate(max);
    }
}
