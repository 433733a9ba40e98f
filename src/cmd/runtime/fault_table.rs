//! Fault injection for tests: what a network, a failing node or a paused process does to a
//! lock client, on demand. The table lives in `ServerState`; the request path consults it
//! (`testctl/faults.rs`) behind one relaxed atomic load ([`Faults::armed`]) that is false unless a
//! fault is set, so a server nobody breaks pays nothing.
//!
//! Rules match requests from network clients by command (`set`, or `client|kill` for a
//! subcommand; a container name matches all its subcommands), by a glob over that name, or by
//! client id, and fire for the next N matching requests or until cleared:
//! - [`Action::Error`]: the request fails with the given error line and does not run;
//! - [`Action::Delay`]: the request runs, its reply is held back for a while (real time);
//! - [`Action::Drop`]: the connection closes without a reply, the request lost before it ran;
//! - [`Action::DropAfter`]: the request runs and the connection closes before the reply (the
//!   write happened, the client never learns it).
//!
//! Besides rules: a pause of the whole server (requests wait, connections are kept, nothing
//! is answered, expiry stops) for a real-time duration, and refusing new connections (one
//! accepted while refusing is closed at its first request).
//!
//! A test can always get back, whatever it set: `RESPLOCK.*` requests are never affected;
//! the commands clients send when they connect (HELLO, AUTH, SELECT, and CLIENT, whose
//! SETINFO, SETNAME, MAINT_NOTIFICATIONS... clients send) are hit only by a rule that names them (`COMMAND hello`, `COMMAND client`, or
//! `CLIENT id`), never by a catch-all or a glob, and a pause or a refusal does not hold them;
//! and a connection that sent a `RESPLOCK.*` command (a control connection) is not refused
//! and is closed by `DISCONNECT` only when named (`ID`, `NAME`, `ADDR`).

use bytes::Bytes;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Which requests a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every request.
    All,
    /// One command by name, lowercase: `set`, `client|kill`, or `client` for all of CLIENT.
    Command(String),
    /// Commands whose name (as in [`Target::Command`]) matches a glob, case-insensitively.
    Match(String),
    /// Requests from one client (CLIENT ID).
    Client(u64),
}

/// What a rule does to a request it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Fail with this error line (without the leading `-`, e.g. `ERR injected`).
    Error(Bytes),
    /// Run, then hold the reply back this long.
    Delay(Duration),
    /// Close the connection without running the request.
    Drop,
    /// Run the request, then close the connection without its reply.
    DropAfter,
}

/// One fault rule (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Assigned when set; [`Faults::clear`] takes it.
    pub id: u64,
    /// The requests it applies to.
    pub target: Target,
    /// What happens to them.
    pub action: Action,
    /// Matches left before the rule goes away (None: until cleared).
    pub remaining: Option<u64>,
}

/// What [`Faults::check`] tells the request path to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Fail with this error line.
    Error(Bytes),
    /// Run, then wait this long before replying.
    Delay(Duration),
    /// Close the connection without running.
    Drop,
    /// Run, then close without replying.
    DropAfter,
}

#[derive(Default)]
struct Table {
    rules: Vec<Rule>,
    next_id: u64,
    /// Real-time end of a server pause.
    paused_until: Option<Instant>,
}

/// The fault table of one server (see the module documentation).
#[derive(Default)]
pub struct Faults {
    /// True while any rule or pause is set: the request path's only check.
    armed: AtomicBool,
    /// New connections are closed as soon as they are accepted.
    refusing: AtomicBool,
    table: Mutex<Table>,
    /// Wakes paused requests when the pause is lifted early.
    unpaused: Notify,
}

impl Faults {
    /// An empty table.
    pub fn new() -> Self {
        Faults::default()
    }

    /// Whether any rule or pause is set (one relaxed load: the hot path's check).
    #[inline]
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed)
    }

    fn rearm(&self, t: &Table) {
        let armed = !t.rules.is_empty()
            || t.paused_until.is_some()
            || self.refusing.load(Ordering::Relaxed);
        self.armed.store(armed, Ordering::Relaxed);
    }

    /// Add a rule; returns its id.
    pub fn add(&self, target: Target, action: Action, count: Option<u64>) -> u64 {
        let mut t = self.table.lock();
        t.next_id += 1;
        let id = t.next_id;
        t.rules.push(Rule {
            id,
            target,
            action,
            remaining: count,
        });
        self.rearm(&t);
        id
    }

    /// Remove rule `id` (None: every rule, the pause and refusing connections). Returns how
    /// many rules went away.
    pub fn clear(&self, id: Option<u64>) -> usize {
        let mut t = self.table.lock();
        let before = t.rules.len();
        match id {
            Some(id) => t.rules.retain(|r| r.id != id),
            None => {
                t.rules.clear();
                t.paused_until = None;
                self.refusing.store(false, Ordering::Relaxed);
                self.unpaused.notify_waiters();
            }
        }
        let removed = before - t.rules.len();
        self.rearm(&t);
        removed
    }

    /// The rules set now, oldest first.
    pub fn rules(&self) -> Vec<Rule> {
        self.table.lock().rules.clone()
    }

    /// Stop answering for `d` of real time (a process that hangs, a long GC pause).
    pub fn pause(&self, d: Duration) {
        let mut t = self.table.lock();
        t.paused_until = Some(Instant::now() + d);
        self.rearm(&t);
    }

    /// End a pause early.
    pub fn unpause(&self) {
        let mut t = self.table.lock();
        t.paused_until = None;
        self.rearm(&t);
        self.unpaused.notify_waiters();
    }

    /// Real time left of the pause in force, if any.
    pub fn paused_for(&self) -> Option<Duration> {
        if !self.armed() {
            return None;
        }
        let mut t = self.table.lock();
        let until = t.paused_until?;
        let now = Instant::now();
        if now >= until {
            t.paused_until = None;
            self.rearm(&t);
            return None;
        }
        Some(until - now)
    }

    /// Refuse new connections (true): one accepted from now on is closed at its first request
    /// that is neither a connection-time command nor `RESPLOCK.*`. False serves them again.
    pub fn refuse_connections(&self, on: bool) {
        let t = self.table.lock();
        self.refusing.store(on, Ordering::Relaxed);
        self.rearm(&t);
    }

    /// Whether new connections are refused.
    pub fn refusing(&self) -> bool {
        self.refusing.load(Ordering::Relaxed)
    }

    /// The first rule matching this request, counted down (and removed at zero).
    /// `name` is the command's (`kill`), `parent` its container's (`client`) if any;
    /// `handshake`: a connection-time command, which only rules naming it hit.
    pub fn check(
        &self,
        client_id: u64,
        name: &str,
        parent: Option<&str>,
        handshake: bool,
    ) -> Option<Verdict> {
        let mut t = self.table.lock();
        let i = t.rules.iter().position(|r| {
            !(handshake && matches!(r.target, Target::All | Target::Match(_)))
                && matches(&r.target, client_id, name, parent)
        })?;
        let rule = &mut t.rules[i];
        let verdict = match &rule.action {
            Action::Error(e) => Verdict::Error(e.clone()),
            Action::Delay(d) => Verdict::Delay(*d),
            Action::Drop => Verdict::Drop,
            Action::DropAfter => Verdict::DropAfter,
        };
        if let Some(n) = rule.remaining.as_mut() {
            *n = n.saturating_sub(1);
            if *n == 0 {
                t.rules.remove(i);
                self.rearm(&t);
            }
        }
        Some(verdict)
    }

    /// Wait while the server is paused; false if `stop` (the client killed, the server
    /// shutting down) came first.
    pub async fn wait_unpaused(&self, stop: impl std::future::Future<Output = ()>) -> bool {
        tokio::pin!(stop);
        loop {
            let woken = self.unpaused.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            let Some(left) = self.paused_for() else {
                return true;
            };
            tokio::select! {
                _ = &mut stop => return false,
                _ = woken => {}
                _ = tokio::time::sleep(left) => {}
            }
        }
    }
}

fn matches(target: &Target, client_id: u64, cmd: &str, parent: Option<&str>) -> bool {
    let full = || match parent {
        Some(p) => format!("{p}|{cmd}"),
        None => cmd.to_string(),
    };
    match target {
        Target::All => true,
        Target::Client(id) => *id == client_id,
        Target::Command(name) => match parent {
            Some(p) => name == p || *name == full(),
            None => name == cmd,
        },
        Target::Match(pattern) => {
            crate::glob::glob_match(pattern.as_bytes(), full().as_bytes(), true)
                || parent.is_some_and(|p| {
                    crate::glob::glob_match(pattern.as_bytes(), p.as_bytes(), true)
                })
        }
    }
}
