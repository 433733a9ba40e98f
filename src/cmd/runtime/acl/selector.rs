//! One ACL selector: the commands (a bit per command of the universe, first-arg rules), key
//! patterns with read/write permissions and channel patterns that a user's root rules or one
//! of its `(...)` selectors grant; the rules as ACLSetSelector applies them, the check of one
//! command against them (ACLSelectorCheckCmd), and their description as ACLDescribeSelector
//! writes it. Also the splitting of selector arguments (`(+get`, `~x)`) into rules.

use crate::cmd::runtime::acl::universe::{universe, CATEGORIES};
use crate::glob::glob_match;

/// Key pattern permissions.
pub const READ: u8 = 1;
/// Key pattern permissions.
pub const WRITE: u8 = 2;

/// Why an ACL rule was refused (ACLSetUserStringError's texts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    UnknownCommand,
    Syntax,
    KeyAfterAll,
    ChannelAfterAll,
    NoSuchPassword,
    BadHash,
    FirstArgOfSubcommand,
    Unsupported,
}

impl RuleError {
    /// The text Redis gives for it.
    pub fn text(self) -> &'static str {
        match self {
            RuleError::UnknownCommand => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeyAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
            RuleError::Unsupported => "Wrong format",
        }
    }
}

/// The permissions of one selector: the root one every user has (rules outside parentheses)
/// or one of the user's `(...)` selectors. A command may run if any selector allows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    allowed: Vec<bool>,
    /// `+@all`'s reserved bit: commands added later are allowed too. Only `+@all` sets it and
    /// only `-@all` clears it, so it decides how the rules are described, not what may run.
    all_commands: bool,
    /// SELECTOR_FLAG_ALLCOMMANDS: every command may run without looking at its bit. Set by
    /// `+@all`, cleared by any rule that takes a command away (`-get`, `-@dangerous`), as
    /// ACLSetSelectorCommandBit clears it.
    every_command: bool,
    /// First arguments allowed for a command whose bit is off (`+select|0`), by command id,
    /// in the order added.
    firstargs: Vec<(usize, Vec<String>)>,
    pub allkeys: bool,
    /// (pattern, READ|WRITE).
    pub keys: Vec<(Vec<u8>, u8)>,
    pub allchannels: bool,
    pub channels: Vec<Vec<u8>>,
}

/// Why a command was refused for a user. Ordered as Redis ranks them when no selector
/// allows a command (ACL_DENIED_CMD < ACL_DENIED_KEY < ACL_DENIED_CHANNEL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    Command,
    /// The argument position of the refused key.
    Key(usize),
    /// The argument position of the refused channel.
    Channel(usize),
}

impl Denied {
    /// (rank, argument position) as ACLCheckAllUserCommandPerm compares them.
    pub(super) fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(p) => (2, p),
            Denied::Channel(p) => (4, p),
        }
    }
}

fn has_spaces(b: &[u8]) -> bool {
    b.iter().any(|&c| c.is_ascii_whitespace() || c == 0)
}

impl Selector {
    /// An empty selector: no commands, keys or channels (acl-pubsub-default resetchannels).
    pub fn new() -> Selector {
        Selector {
            allowed: vec![false; universe().names.len()],
            all_commands: false,
            every_command: false,
            firstargs: Vec::new(),
            allkeys: false,
            keys: Vec::new(),
            allchannels: false,
            channels: Vec::new(),
        }
    }

    fn set_bit(&mut self, id: usize, allow: bool) {
        if !allow {
            self.every_command = false;
        }
        self.allowed[id] = allow;
    }

    /// ACLChangeSelectorPerm: a command and its subcommands, forgetting its first-args.
    fn set_cmd(&mut self, id: usize, allow: bool) {
        let u = universe();
        self.set_bit(id, allow);
        self.firstargs.retain(|(c, _)| *c != id);
        for &c in &u.children[id] {
            self.set_bit(c, allow);
        }
    }

    fn set_category(&mut self, cat: usize, allow: bool) {
        let u = universe();
        for i in 0..u.names.len() {
            if u.cats[i] & (1 << cat) != 0 {
                self.set_cmd(i, allow);
            }
        }
    }

    /// ACLSetSelector: apply one command, key or channel rule.
    pub fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let lower = String::from_utf8_lossy(op).to_ascii_lowercase();
        match lower.as_str() {
            "allkeys" | "~*" => {
                self.allkeys = true;
                self.keys.clear();
            }
            "resetkeys" => {
                self.allkeys = false;
                self.keys.clear();
            }
            "allchannels" | "&*" => {
                self.allchannels = true;
                self.channels.clear();
            }
            "resetchannels" => {
                self.allchannels = false;
                self.channels.clear();
            }
            "allcommands" | "+@all" => {
                self.allowed.iter_mut().for_each(|b| *b = true);
                self.all_commands = true;
                self.every_command = true;
                self.firstargs.clear();
            }
            "nocommands" | "-@all" => {
                self.allowed.iter_mut().for_each(|b| *b = false);
                self.all_commands = false;
                self.every_command = false;
                self.firstargs.clear();
            }
            _ => return self.apply_prefixed(op),
        }
        Ok(())
    }

    fn apply_prefixed(&mut self, op: &[u8]) -> Result<(), RuleError> {
        match op.first() {
            Some(b'~') | Some(b'%') => {
                if self.allkeys {
                    return Err(RuleError::KeyAfterAll);
                }
                let (flags, pat) = if op[0] == b'%' {
                    let mut flags = 0;
                    let mut i = 1;
                    loop {
                        match op.get(i).map(|c| c.to_ascii_uppercase()) {
                            Some(b'R') if flags & READ == 0 => flags |= READ,
                            Some(b'W') if flags & WRITE == 0 => flags |= WRITE,
                            Some(b'~') if flags != 0 => {
                                i += 1;
                                break;
                            }
                            _ => return Err(RuleError::Syntax),
                        }
                        i += 1;
                    }
                    (flags, &op[i..])
                } else {
                    (READ | WRITE, &op[1..])
                };
                if has_spaces(pat) {
                    return Err(RuleError::Syntax);
                }
                match self.keys.iter_mut().find(|(p, _)| p == pat) {
                    Some((_, f)) => *f |= flags,
                    None => self.keys.push((pat.to_vec(), flags)),
                }
                self.allkeys = false;
            }
            Some(b'&') => {
                if self.allchannels {
                    return Err(RuleError::ChannelAfterAll);
                }
                let pat = &op[1..];
                if has_spaces(pat) {
                    return Err(RuleError::Syntax);
                }
                if !self.channels.iter().any(|c| c == pat) {
                    self.channels.push(pat.to_vec());
                }
            }
            Some(b'+') | Some(b'-') if op.get(1) == Some(&b'@') => {
                let cat = String::from_utf8_lossy(&op[2..]).to_ascii_lowercase();
                let Some(c) = CATEGORIES.iter().position(|x| *x == cat) else {
                    return Err(RuleError::UnknownCommand);
                };
                self.set_category(c, op[0] == b'+');
            }
            Some(b'+') | Some(b'-') => {
                let name = String::from_utf8_lossy(&op[1..]).to_ascii_lowercase();
                let u = universe();
                if op[0] == b'+' {
                    if let Some((parent, sub)) = name.rsplit_once('|') {
                        let Some(p) = u.id(parent) else {
                            return Err(RuleError::UnknownCommand);
                        };
                        if parent.contains('|') {
                            return Err(RuleError::FirstArgOfSubcommand);
                        }
                        if sub.is_empty() {
                            return Err(RuleError::Syntax);
                        }
                        if u.children[p].is_empty() {
                            // A first argument of an otherwise refused command (SELECT 0).
                            let sub = String::from_utf8_lossy(&op[1 + parent.len() + 1..]);
                            match self.firstargs.iter_mut().find(|(c, _)| *c == p) {
                                Some((_, subs)) => {
                                    if !subs.iter().any(|s| s.eq_ignore_ascii_case(&sub)) {
                                        subs.push(sub.into_owned());
                                    }
                                }
                                None => self.firstargs.push((p, vec![sub.into_owned()])),
                            }
                            return Ok(());
                        }
                        let Some(id) = u.id(&name) else {
                            return Err(RuleError::UnknownCommand);
                        };
                        self.set_cmd(id, true);
                        return Ok(());
                    }
                }
                let Some(id) = u.id(&name) else {
                    return Err(RuleError::UnknownCommand);
                };
                self.set_cmd(id, op[0] == b'+');
            }
            _ => return Err(RuleError::Syntax),
        }
        Ok(())
    }

    /// ACLSelectorCheckCmd: may this selector run `fullname` (with its id in the universe)
    /// with these key and channel arguments?
    pub(super) fn check(
        &self,
        fullname: &str,
        is_sub: bool,
        no_auth: bool,
        args: &[bytes::Bytes],
        keys: &[(usize, u8)],
        channels: &[(usize, bool)],
    ) -> Result<(), Denied> {
        if !self.every_command && !no_auth {
            // A command outside Redis's table (the RESPLOCK.* test controls) is one added
            // later: `+@all`'s reserved bit decides it.
            let allowed = match universe().id(fullname) {
                Some(id) => {
                    self.allowed[id] || {
                        let first = args.get(if is_sub { 2 } else { 1 });
                        self.firstargs.iter().any(|(c, subs)| {
                            *c == id
                                && args.len() >= 2
                                && first.is_some_and(|a| {
                                    subs.iter().any(|s| s.as_bytes().eq_ignore_ascii_case(a))
                                })
                        })
                    }
                }
                None => self.all_commands,
            };
            if !allowed {
                return Err(Denied::Command);
            }
        }
        if !self.allkeys {
            for &(pos, need) in keys {
                let key = &args[pos];
                let ok = self
                    .keys
                    .iter()
                    .any(|(p, f)| f & need == need && glob_match(p, key, false));
                if !ok {
                    return Err(Denied::Key(pos));
                }
            }
        }
        for &(pos, pattern) in channels {
            if !self.allows_channel(&args[pos], pattern) {
                return Err(Denied::Channel(pos));
            }
        }
        Ok(())
    }

    /// Whether this selector allows `channel`; a pattern (PSUBSCRIBE) must be allowed as
    /// written, not merely matched.
    pub(super) fn allows_channel(&self, channel: &[u8], pattern: bool) -> bool {
        self.allchannels
            || self.channels.iter().any(|p| {
                if pattern {
                    p == channel
                } else {
                    glob_match(p, channel, false)
                }
            })
    }

    /// ACLDescribeSelector: keys, channels, then the command rules.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if self.allkeys {
            out.push_str("~* ");
        } else {
            for k in &self.keys {
                out.push_str(&pattern_string(k));
                out.push(' ');
            }
        }
        if self.allchannels {
            out.push_str("&* ");
        } else {
            out.push_str("resetchannels ");
            for c in &self.channels {
                out.push('&');
                out.push_str(&String::from_utf8_lossy(c));
                out.push(' ');
            }
        }
        out.push_str(&self.describe_commands());
        out
    }

    /// ACL GETUSER's `keys` field.
    pub fn keys_field(&self) -> String {
        if self.allkeys {
            return "~*".into();
        }
        self.keys
            .iter()
            .map(pattern_string)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// ACL GETUSER's `channels` field.
    pub fn channels_field(&self) -> String {
        if self.allchannels {
            return "&*".into();
        }
        self.channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether this selector may run anything on any key and channel.
    pub fn unrestricted(&self) -> bool {
        self.describe_commands() == "+@all" && self.allkeys && self.allchannels
    }

    /// ACLDescribeSelectorCommandRules: `+@all`/`-@all`, the best-fitting categories, then
    /// the single commands still different and the first-args of refused commands. (Redis
    /// lists the single commands in its command dict's order, which changes from one start
    /// to the next; here they come in name order.)
    pub fn describe_commands(&self) -> String {
        let u = universe();
        let additive = !self.all_commands;
        let mut rules = String::from(if additive { "-@all " } else { "+@all " });
        let mut fake = Selector::new();
        fake.apply(if additive { b"-@all" } else { b"+@all" })
            .expect("rule");
        let mut temp = self.clone();
        let mut applied = [false; 21];
        loop {
            let mut best = None;
            let (mut mindiff, mut maxsame) = (usize::MAX, 0usize);
            for (j, _) in CATEGORIES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let (mut on, mut off) = (0, 0);
                for i in 0..u.names.len() {
                    if u.cats[i] & (1 << j) != 0 {
                        if temp.allowed[i] {
                            on += 1;
                        } else {
                            off += 1;
                        }
                    }
                }
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                    best = Some(j);
                    mindiff = diff;
                    maxsame = same;
                }
            }
            let Some(b) = best else { break };
            fake.set_category(b, additive);
            temp.set_category(b, !additive);
            rules.push_str(if additive { "+@" } else { "-@" });
            rules.push_str(CATEGORIES[b]);
            rules.push(' ');
            applied[b] = true;
        }
        for i in 0..u.names.len() {
            if self.allowed[i] != fake.allowed[i] {
                rules.push(if self.allowed[i] { '+' } else { '-' });
                rules.push_str(u.names[i]);
                rules.push(' ');
                fake.set_cmd(i, self.allowed[i]);
            }
            if !self.allowed[i] {
                if let Some((_, subs)) = self.firstargs.iter().find(|(c, _)| *c == i) {
                    for s in subs {
                        rules.push('+');
                        rules.push_str(u.names[i]);
                        rules.push('|');
                        rules.push_str(s);
                        rules.push(' ');
                    }
                }
            }
        }
        rules.pop();
        rules
    }
}

impl Default for Selector {
    fn default() -> Self {
        Selector::new()
    }
}

/// ACLMergeSelectorArguments: arguments of a selector split over several (`(+get`, `~x)`)
/// joined by spaces; Err(index of the opening argument) when a parenthesis is not closed.
pub fn merge_selector_args<T: AsRef<[u8]>>(args: &[T]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (j, a) in args.iter().enumerate() {
        let a = a.as_ref();
        if a.first() == Some(&b'(') && a.last() != Some(&b')') {
            open = Some((j, a.to_vec()));
            continue;
        }
        if let Some((_, sel)) = open.as_mut() {
            sel.push(b' ');
            sel.extend_from_slice(a);
            if a.last() == Some(&b')') {
                out.push(open.take().expect("open selector").1);
            }
            continue;
        }
        out.push(a.to_vec());
    }
    match open {
        Some((j, _)) => Err(j),
        None => Ok(out),
    }
}

/// sdssplitargs on a selector's inside: words split on spaces, with "..." and '...' quoting.
/// None: unbalanced quotes.
pub(super) fn split_args(s: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= s.len() {
            return Some(out);
        }
        let mut cur = Vec::new();
        let (mut inq, mut insq) = (false, false);
        loop {
            if inq {
                let c = *s.get(i)?;
                if c == b'\\' && i + 3 < s.len() && s.get(i + 1) == Some(&b'x') {
                    let hex = s.get(i + 2..i + 4).and_then(|h| {
                        std::str::from_utf8(h)
                            .ok()
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    });
                    if let Some(b) = hex {
                        cur.push(b);
                        i += 4;
                        continue;
                    }
                }
                if c == b'\\' && i + 1 < s.len() {
                    i += 1;
                    cur.push(match s[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        c => c,
                    });
                } else if c == b'"' {
                    if s.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if insq {
                let c = *s.get(i)?;
                if c == b'\\' && s.get(i + 1) == Some(&b'\'') {
                    i += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if s.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else {
                match s.get(i) {
                    None => break,
                    Some(c) if c.is_ascii_whitespace() => break,
                    Some(b'"') => inq = true,
                    Some(b'\'') => insq = true,
                    Some(&c) => cur.push(c),
                }
            }
            i += 1;
        }
        out.push(cur);
    }
}

fn pattern_string((pat, flags): &(Vec<u8>, u8)) -> String {
    let prefix = match *flags {
        f if f == READ | WRITE => "~",
        READ => "%R~",
        _ => "%W~",
    };
    format!("{prefix}{}", String::from_utf8_lossy(pat))
}
