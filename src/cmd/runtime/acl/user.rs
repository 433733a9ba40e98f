//! An ACL user as Redis 7.0 keeps one: flags, password hashes, a root selector (the rules
//! outside parentheses) and any number of `(...)` selectors (in [`selector`](super::selector)).
//! Rules apply as ACLSetUser applies them, with its error texts; descriptions (ACL LIST,
//! GETUSER) are built as ACLDescribeUser builds them.

use crate::cmd::runtime::acl::selector::{split_args, Denied, RuleError, Selector, READ};
use sha2::{Digest, Sha256};

/// User flags (ACLUserFlags) beyond on/off and nopass.
const SANITIZE: u8 = 1;
/// skip-sanitize-payload.
const SKIP_SANITIZE: u8 = 2;

/// One user.
#[derive(Clone, Debug, PartialEq)]
pub struct User {
    pub name: String,
    pub enabled: bool,
    pub nopass: bool,
    /// SANITIZE or SKIP_SANITIZE, or neither (a user never told either).
    sanitize: u8,
    /// SHA-256 of each password, lowercase hex, in the order added.
    pub passwords: Vec<String>,
    /// The rules given outside parentheses.
    pub root: Selector,
    /// The `(...)` selectors, in the order added.
    pub selectors: Vec<Selector>,
}

/// The SHA-256 of a password, lowercase hex (ACLHashPassword).
pub fn hash_password(p: &[u8]) -> String {
    Sha256::digest(p)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl User {
    /// A new user as ACLCreateUser makes one: off, no passwords, no commands, no keys, no
    /// channels (acl-pubsub-default resetchannels), no flags about payload sanitizing.
    pub fn new(name: &str) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize: 0,
            passwords: Vec::new(),
            root: Selector::new(),
            selectors: Vec::new(),
        }
    }

    /// ACLCreateUser under `acl-pubsub-default`: a new user may use every channel when it
    /// says `allchannels`.
    pub fn created(name: &str, all_channels: bool) -> User {
        let mut u = User::new(name);
        if all_channels {
            u.apply(b"allchannels").expect("a valid rule");
        }
        u
    }

    /// [`User::apply`] under `acl-pubsub-default`: when it says `allchannels`, `reset` also
    /// grants every channel, as ACLSetUser's reset does, and a new selector `(...)` starts
    /// with every channel before its own rules, as ACLCreateSelector does.
    pub fn apply_under(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        self.apply_rule(op, all_channels)?;
        if all_channels && op.eq_ignore_ascii_case(b"reset") {
            self.apply(b"allchannels")?;
        }
        Ok(())
    }

    /// Whether a client of this user may stay subscribed to `channel` (a pattern when
    /// `pattern`: it must be allowed literally), as ACLKillPubsubClientsIfNeeded checks after
    /// the user changed.
    pub fn may_subscribe(&self, channel: &[u8], pattern: bool) -> bool {
        std::iter::once(&self.root)
            .chain(self.selectors.iter())
            .any(|s| s.allows_channel(channel, pattern))
    }

    /// The default user: `on nopass ~* &* +@all`.
    pub fn default_user() -> User {
        let mut u = User::new("default");
        for r in ["+@all", "~*", "&*", "on", "nopass"] {
            u.apply(r.as_bytes()).expect("default rules");
        }
        u
    }

    /// ACLSetUser: apply one rule.
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        self.apply_rule(op, false)
    }

    /// One rule; a selector it creates starts with every channel when `all_channels`.
    fn apply_rule(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let lower = String::from_utf8_lossy(op).to_ascii_lowercase();
        match lower.as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "skip-sanitize-payload" => self.sanitize = SKIP_SANITIZE,
            "sanitize-payload" => self.sanitize = SANITIZE,
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "clearselectors" => self.selectors.clear(),
            "reset" => {
                for r in [
                    "resetpass",
                    "resetkeys",
                    "resetchannels",
                    "off",
                    "sanitize-payload",
                    "clearselectors",
                    "-@all",
                ] {
                    self.apply(r.as_bytes())?;
                }
            }
            _ => return self.apply_prefixed(op, all_channels),
        }
        Ok(())
    }

    fn apply_prefixed(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        match op[0] {
            b'>' | b'#' => {
                let hash = if op[0] == b'>' {
                    hash_password(&op[1..])
                } else {
                    check_hash(&op[1..])?
                };
                if !self.passwords.contains(&hash) {
                    self.passwords.push(hash);
                }
                self.nopass = false;
            }
            b'<' | b'!' => {
                let hash = if op[0] == b'<' {
                    hash_password(&op[1..])
                } else {
                    check_hash(&op[1..])?
                };
                let Some(i) = self.passwords.iter().position(|p| *p == hash) else {
                    return Err(RuleError::NoSuchPassword);
                };
                self.passwords.remove(i);
            }
            b'(' if op.last() == Some(&b')') => {
                // aclCreateSelectorFromOpSet: the inside split as a command line.
                let inner = &op[1..op.len() - 1];
                let mut sel = Selector::new();
                if all_channels {
                    sel.apply(b"allchannels")?;
                }
                // Unbalanced quotes leave no words: an empty selector, as in Redis.
                for a in split_args(inner).unwrap_or_default() {
                    if !a.is_empty() {
                        sel.apply(&a)?;
                    }
                }
                self.selectors.push(sel);
            }
            _ => return self.root.apply(op),
        }
        Ok(())
    }

    /// Whether `password` opens this user (ACLCheckUserCredentials, disabled users aside).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        self.nopass || self.passwords.contains(&hash_password(password))
    }

    /// ACLCheckAllUserCommandPerm: may this user run `fullname` with these key and channel
    /// arguments? Any selector may allow it; when none does, the refusal reported is the
    /// highest ranked (a channel over a key over the command), the later argument first.
    /// `keys`: (position, needs READ|WRITE); `channels`: (position, is a pattern); `is_sub`:
    /// `fullname` is a subcommand (its first argument is then the third).
    pub fn check(
        &self,
        fullname: &str,
        is_sub: bool,
        no_auth: bool,
        args: &[bytes::Bytes],
        keys: &[(usize, u8)],
        channels: &[(usize, bool)],
    ) -> Result<(), Denied> {
        let mut worst = Denied::Command;
        for s in std::iter::once(&self.root).chain(&self.selectors) {
            match s.check(fullname, is_sub, no_auth, args, keys, channels) {
                Ok(()) => return Ok(()),
                Err(d) => {
                    if d.rank() > worst.rank() {
                        worst = d;
                    }
                }
            }
        }
        Err(worst)
    }

    /// Whether a selector that allows this command also reads any key (`~*`, `%R~*`).
    pub fn reads_every_key(
        &self,
        fullname: &str,
        is_sub: bool,
        no_auth: bool,
        args: &[bytes::Bytes],
        keys: &[(usize, u8)],
        channels: &[(usize, bool)],
    ) -> bool {
        std::iter::once(&self.root).chain(&self.selectors).any(|s| {
            s.check(fullname, is_sub, no_auth, args, keys, channels)
                .is_ok()
                && (s.allkeys
                    || s.keys
                        .iter()
                        .any(|(p, f)| f & READ != 0 && p.as_slice() == b"*"))
        })
    }

    /// The flags as ACL GETUSER lists them, in ACLUserFlags' order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        if self.sanitize == SKIP_SANITIZE {
            f.push("skip-sanitize-payload");
        }
        if self.sanitize == SANITIZE {
            f.push("sanitize-payload");
        }
        f
    }

    /// ACLDescribeUser: the user as ACL LIST prints it (after `user <name> `).
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for f in self.flags() {
            out.push_str(f);
            out.push(' ');
        }
        for p in &self.passwords {
            out.push('#');
            out.push_str(p);
            out.push(' ');
        }
        out.push_str(&self.root.describe());
        for s in &self.selectors {
            out.push_str(" (");
            out.push_str(&s.describe());
            out.push(')');
        }
        out
    }
}

fn check_hash(h: &[u8]) -> Result<String, RuleError> {
    if h.len() != 64 || !h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(RuleError::BadHash);
    }
    Ok(String::from_utf8_lossy(h).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_rules_as_redis_lists_them() {
        let mut u = User::new("alice");
        for r in [
            "on", ">p1", "~app:*", "&chan*", "+get", "+set", "-@all", "+@read", "%R~r:*",
        ] {
            u.apply(r.as_bytes()).unwrap();
        }
        assert_eq!(
            u.describe(),
            "on #f64551fcd6f07823cb87971cfb91446425da18286b3ab1ef935e0cbd7a69f68a ~app:* %R~r:* resetchannels &chan* -@all +@read"
        );
        assert_eq!(User::default_user().describe(), "on nopass ~* &* +@all");
        let mut c = User::new("carol");
        c.apply(b"+@all").unwrap();
        c.apply(b"-@dangerous").unwrap();
        assert_eq!(c.describe(), "off resetchannels +@all -@dangerous");
        let mut d = User::new("dave");
        for r in ["-@all", "+select|0", "(~s* +get)", "sanitize-payload"] {
            d.apply(r.as_bytes()).unwrap();
        }
        assert_eq!(
            d.describe(),
            "off sanitize-payload resetchannels -@all +select|0 (~s* resetchannels -@all +get)"
        );
    }
}
