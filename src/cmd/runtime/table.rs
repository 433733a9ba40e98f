//! The command table: a [`Command`] row per command (name, arity, flags, key positions,
//! handler, docs, subcommands) and [`CommandTable`], the rows of every family looked up by
//! name with Redis's errors. The rows themselves live in their families
//! (`cmd/families/`); `cmd/mod.rs` builds the one table of the process from them.

use crate::cmd::base::args::is;
use crate::cmd::base::flags;
use crate::cmd::base::meta::{self, KeySearch, Meta};
use crate::cmd::runtime::state::Ctx;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use crate::script::EvalKind;
use bytes::Bytes;
use std::collections::HashMap;

/// Handlers are synchronous and never touch a socket: they read arguments and the keyspace
/// and return a reply value.
pub type Handler = fn(&mut Ctx, &[Bytes]) -> CmdResult;

/// Which script a script row runs.
#[derive(Clone, Copy)]
pub enum ScriptCall {
    /// EVAL, EVALSHA and their `_RO` forms.
    Eval(EvalKind),
    /// FCALL (`readonly` false) or FCALL_RO.
    Fcall { readonly: bool },
}

/// How a row runs. Almost every row has a handler; the script commands say what they run
/// instead, since the request path holds the server lock for a whole script (handing the
/// worker's other tasks off if it runs long) and serves SCRIPT KILL and FUNCTION KILL
/// without it.
#[derive(Clone, Copy)]
pub enum Runs {
    /// The handler, under the server lock.
    Handler(Handler),
    /// A script (EVAL, EVALSHA, FCALL and their `_RO` forms).
    Script(ScriptCall),
    /// SCRIPT KILL (`eval`) or FUNCTION KILL: served while a script runs, without the lock.
    ScriptKill { eval: bool },
}

/// A command as its family declares it: its name and how it runs. Everything Redis says about
/// it (arity, flags, key range, group, since, summary, key specs, docs) comes from the
/// recording of redis-server 7.0.15 (`base/redis_commands.rs`) when the table is built; a row
/// adds only resplock's own flags, and describes itself ([`Row::own`]) only for a command
/// Redis 7.0.15 does not have.
pub struct Row {
    pub name: &'static str,
    pub runs: Runs,
    /// resplock's own flags (MAY_REPLICATE, SUBSCRIBED_OK, NEEDS_CONNECTION, PROTECTED),
    /// added to the recorded ones.
    pub flags: u32,
    /// For container commands (CLIENT, CONFIG, SCRIPT, ...): the subcommands, named without
    /// the container (`setname`). The container's own handler then never runs.
    pub subcommands: &'static [Row],
    /// What the recording would say, for a command redis-server 7.0.15 does not have.
    pub own: Option<Own>,
}

/// A command's metadata given by its row (see [`Row::own`]).
#[derive(Clone, Copy)]
pub struct Own {
    pub arity: i32,
    pub flags: u32,
    pub keys: (i32, i32, i32),
    pub group: &'static str,
    pub since: &'static str,
    pub summary: &'static str,
}

impl Row {
    /// A command run by `handler`.
    pub const fn new(name: &'static str, handler: Handler) -> Row {
        Row::runs(name, Runs::Handler(handler))
    }
    /// A command that runs a script (EVAL, FCALL ...) instead of a handler.
    pub const fn script(name: &'static str, call: ScriptCall) -> Row {
        Row::runs(name, Runs::Script(call))
    }
    /// SCRIPT KILL (`eval`) or FUNCTION KILL.
    pub const fn script_kill(name: &'static str, eval: bool) -> Row {
        Row::runs(name, Runs::ScriptKill { eval })
    }
    const fn runs(name: &'static str, runs: Runs) -> Row {
        Row {
            name,
            runs,
            flags: 0,
            subcommands: &[],
            own: None,
        }
    }
    /// resplock's own flags for this command, beyond what Redis records.
    pub const fn flags(mut self, flags: u32) -> Row {
        self.flags = flags;
        self
    }
    /// A container's subcommands.
    pub const fn subs(mut self, subs: &'static [Row]) -> Row {
        self.subcommands = subs;
        self
    }
    /// The metadata of a command redis-server 7.0.15 does not have (Redis 7.2's CLIENT
    /// SETINFO and NO-TOUCH, the `RESPLOCK.*` test commands): arity, flags, key range (first,
    /// last, step) and COMMAND DOCS's group, since and summary.
    #[allow(clippy::too_many_arguments)]
    pub const fn own(
        mut self,
        arity: i32,
        flags: u32,
        keys: (i32, i32, i32),
        group: &'static str,
        since: &'static str,
        summary: &'static str,
    ) -> Row {
        self.own = Some(Own {
            arity,
            flags,
            keys,
            group,
            since,
            summary,
        });
        self
    }
}

/// A command of the table: a [`Row`] with its metadata (Redis's conventions: arity -N means
/// at least N arguments counting the name; key positions are 1-based, last_key -1 means the
/// last argument).
pub struct Command {
    pub name: &'static str,
    pub arity: i32,
    pub flags: u32,
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    /// What running the command does: a handler, or a script (see [`Runs`]).
    pub runs: Runs,
    pub group: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    /// For container commands (CLIENT, CONFIG, SCRIPT, ...): the subcommands, named without
    /// the container (`setname`). The container's own handler then never runs.
    pub subcommands: &'static [Command],
    /// What COMMAND INFO and DOCS say beyond the fields above (ACL categories, tips, key
    /// specs, docs); None for a command redis-server 7.0.15 does not have.
    pub meta: Option<&'static Meta>,
}

impl Command {
    /// `row` (a subcommand of `parent`, if given) with its metadata: the recorded one, or the
    /// row's own. Subcommands are resolved too; the table keeps the result for the process.
    pub fn resolve(row: &Row, parent: Option<&str>) -> Command {
        let full = match parent {
            Some(p) => format!("{p}|{}", row.name),
            None => row.name.to_string(),
        };
        let meta = meta::get(&full);
        let own = row.own.unwrap_or_else(|| {
            let m = meta.unwrap_or_else(|| panic!("{full}: no recording and no row metadata"));
            Own {
                arity: m.arity,
                flags: flags::from_names(m.flags),
                keys: m.keys,
                group: m.group,
                since: m.since,
                summary: m.summary,
            }
        });
        let subs: Vec<Command> = row
            .subcommands
            .iter()
            .map(|s| Command::resolve(s, Some(row.name)))
            .collect();
        Command {
            name: row.name,
            arity: own.arity,
            flags: own.flags | row.flags,
            first_key: own.keys.0,
            last_key: own.keys.1,
            step: own.keys.2,
            runs: row.runs,
            group: own.group,
            summary: own.summary,
            since: own.since,
            subcommands: Box::leak(subs.into_boxed_slice()),
            meta: if row.own.is_some() { None } else { meta },
        }
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        (a >= 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }
    /// The positions of the key arguments in `args` (args\[0\] is the command name): by the
    /// recorded key specs, or by the key range (first, last, step) for a command whose specs
    /// cannot say (or that has none recorded).
    pub fn keys_in(&self, args: &[Bytes]) -> Vec<usize> {
        self.keys_and_flags_in(args).0
    }
    /// [`Command::keys_in`] with the flags of the key spec that found each key (aligned with
    /// the positions; ACL checks read or write access by them), or `None` when the key range
    /// found them.
    #[allow(clippy::type_complexity)]
    pub fn keys_and_flags_in(
        &self,
        args: &[Bytes],
    ) -> (Vec<usize>, Option<Vec<Vec<&'static str>>>) {
        if self.name == "migrate" {
            // Its key specs are incomplete: Redis asks migrateGetKeys instead.
            let p = crate::cmd::runtime::migrate::key_positions(args);
            let n = p.len();
            return (p, Some(vec![vec!["RW", "access", "delete"]; n]));
        }
        match self.meta.map(|m| meta::key_positions_and_flags(m, args)) {
            Some((KeySearch::Keys(p), flags)) => (p, Some(variable_key_flags(self, args, flags))),
            Some((KeySearch::NoKeys, _)) => (Vec::new(), Some(Vec::new())),
            // SORT's STORE key has no key spec Redis can search: it runs sortGetKeys, which
            // reads the first key and overwrites the STORE one.
            Some((KeySearch::Unknown, _)) if self.name == "sort" => {
                let p = sort_keys(args);
                let f = (0..p.len())
                    .map(|i| {
                        if i == 0 {
                            vec!["RO", "access"]
                        } else {
                            vec!["OW", "update"]
                        }
                    })
                    .collect();
                (p, Some(f))
            }
            Some((KeySearch::Unknown, _)) | None => (self.key_range(args.len()).collect(), None),
        }
    }
    /// The key range's positions among `argc` arguments.
    pub fn key_range(&self, argc: usize) -> impl Iterator<Item = usize> {
        let first = self.first_key.max(0) as usize;
        let last = if self.last_key < 0 {
            (argc as i32 + self.last_key) as usize
        } else {
            self.last_key as usize
        };
        let step = self.step.max(1) as usize;
        let valid = first > 0 && first < argc;
        (first..=last.min(argc.saturating_sub(1)))
            .step_by(step)
            .filter(move |_| valid)
    }
}

/// Key specs flagged `variable_flags` get their flags from the command line, as Redis's
/// getkeys functions decide them: SET with GET reads the old value (RW access update), else it
/// overwrites (OW update) (setGetKeys); BITFIELD with only GET and OVERFLOW operations reads
/// (RO access), else it updates (RW access update) (bitfieldGetKeys).
pub fn variable_key_flags(
    c: &Command,
    args: &[Bytes],
    flags: Vec<Vec<&'static str>>,
) -> Vec<Vec<&'static str>> {
    flags
        .into_iter()
        .map(|f| {
            if !f.contains(&"variable_flags") {
                return f;
            }
            match c.name {
                "set" if args.iter().skip(3).any(|a| is(a, "get")) => {
                    vec!["RW", "access", "update"]
                }
                "set" => vec!["OW", "update"],
                "bitfield" if bitfield_reads_only(args) => vec!["RO", "access"],
                "bitfield" => vec!["RW", "access", "update"],
                _ => f.into_iter().filter(|x| *x != "variable_flags").collect(),
            }
        })
        .collect()
}

/// SORT's keys (Redis's sortGetKeys): the key, and the last STORE destination; LIMIT's two
/// arguments and GET's and BY's one are skipped, so a pattern named `store` is not one.
pub fn sort_keys(args: &[Bytes]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < args.len() {
        if is(&args[i], "limit") {
            i += 2;
        } else if is(&args[i], "get") || is(&args[i], "by") {
            i += 1;
        } else if is(&args[i], "store") && i + 1 < args.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store);
    keys
}

/// bitfieldGetKeys: only complete GET and OVERFLOW operations (anything else, a syntax error
/// included, counts as a write).
fn bitfield_reads_only(args: &[Bytes]) -> bool {
    let mut i = 2;
    while i < args.len() {
        let rest = args.len() - i - 1;
        if is(&args[i], "get") && rest >= 2 {
            i += 3;
        } else if is(&args[i], "overflow") && rest >= 1 {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// A noop handler for container rows, whose subcommands do the work.
pub fn container(_: &mut Ctx, _: &[Bytes]) -> CmdResult {
    Ok(Reply::ok())
}

/// The full name Redis uses in errors: `get`, or `client|setname`.
pub fn fullname(parent: Option<&Command>, cmd: &Command) -> String {
    match parent {
        Some(p) => format!("{}|{}", p.name, cmd.name),
        None => cmd.name.to_string(),
    }
}

/// Find the subcommand row of a container command.
pub fn lookup_sub(parent: &'static Command, name: &[u8]) -> Option<&'static Command> {
    parent
        .subcommands
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

/// Every request looks its command up here: aHash, not SipHash (names are not attacker-chosen
/// keys that stay, so flooding is not a concern; SipHash was a visible share of a call).
type Map = HashMap<&'static str, &'static Command, ahash::RandomState>;

/// A command and its container (`None` for a top-level command).
pub type Found = (&'static Command, Option<&'static Command>);

/// The rows of every family, by name. The `RESPLOCK.*` rows (flag TEST_ONLY) are kept apart:
/// only [`CommandTable::resolve_for`] finds them, for servers started with
/// `enable_test_commands`.
pub struct CommandTable {
    main: Map,
    test: Map,
    /// `main` and `test` again, for the lookups every request makes (see [`ShortNames`]).
    main_short: ShortNames,
    test_short: ShortNames,
    /// Every row a request can run, test-only rows and subcommands included, numbered once in
    /// a fixed order: per-command counters are kept in an array by this number instead of a
    /// map by name (see `observe`).
    rows: Vec<Found>,
    /// A row's number by its address (a row is a static, so its address is its identity).
    by_addr: ahash::AHashMap<usize, usize>,
    /// A row's number by its full name (`get`, `client|list`).
    by_name: ahash::AHashMap<String, usize>,
}

impl CommandTable {
    /// The table of `families`' rows, each with its metadata; a name defined twice is a bug.
    pub fn new(families: &[&'static [Row]]) -> CommandTable {
        let (mut main, mut test) = (Map::default(), Map::default());
        for fam in families {
            let resolved: Vec<Command> = fam.iter().map(|r| Command::resolve(r, None)).collect();
            for c in Box::leak(resolved.into_boxed_slice()).iter() {
                let t = if c.has(flags::TEST_ONLY) {
                    &mut test
                } else {
                    &mut main
                };
                let prev = t.insert(c.name, c);
                assert!(prev.is_none(), "command {} defined twice", c.name);
            }
        }
        let mut rows = Vec::new();
        for c in main.values().chain(test.values()) {
            rows.push((*c, None));
            for sub in c.subcommands {
                rows.push((sub, Some(*c)));
            }
        }
        let (mut by_addr, mut by_name) = (ahash::AHashMap::new(), ahash::AHashMap::new());
        for (i, (cmd, parent)) in rows.iter().enumerate() {
            by_addr.entry(*cmd as *const Command as usize).or_insert(i);
            by_name.entry(fullname(*parent, cmd)).or_insert(i);
        }
        CommandTable {
            main_short: ShortNames::of(&main),
            test_short: ShortNames::of(&test),
            main,
            test,
            rows,
            by_addr,
            by_name,
        }
    }

    /// This table as `rename-command` leaves it. Redis renames in its command dict, so only
    /// lookups change (errors, COMMAND and the statistics keep the command's own name): each
    /// `from` is no longer found, and a non-empty `to` finds `from`'s command. In order, so a
    /// later rename may take an earlier one's new name.
    pub fn renamed(&self, renames: &[(String, String)]) -> CommandTable {
        let mut main = self.main.clone();
        for (from, to) in renames {
            if let Some(c) = main.remove(from.to_ascii_lowercase().as_str()) {
                if !to.is_empty() {
                    // Once per server start, for the life of the process, as the rows.
                    let name: &'static str = Box::leak(to.to_ascii_lowercase().into_boxed_str());
                    main.insert(name, c);
                }
            }
        }
        CommandTable {
            main_short: ShortNames::of(&main),
            test_short: ShortNames::of(&self.test),
            main,
            test: self.test.clone(),
            rows: self.rows.clone(),
            by_addr: self.by_addr.clone(),
            by_name: self.by_name.clone(),
        }
    }

    /// Every row, numbered (see the field).
    pub fn every_row(&self) -> &[Found] {
        &self.rows
    }

    /// The number of `cmd` in [`CommandTable::every_row`].
    pub fn row_number(&self, cmd: &Command) -> Option<usize> {
        self.by_addr.get(&(cmd as *const Command as usize)).copied()
    }

    /// The number of the row with this full name (`get`, `client|list`).
    pub fn row_named(&self, fullname: &str) -> Option<usize> {
        self.by_name.get(fullname).copied()
    }

    /// All commands, sorted by name (COMMAND, COMMAND LIST, COMMAND COUNT).
    pub fn all_commands(&self) -> Vec<&'static Command> {
        let mut v: Vec<_> = self.main.values().copied().collect();
        v.sort_by_key(|c| c.name);
        v
    }

    /// Case-insensitive lookup without allocating for ordinary names.
    pub fn lookup(&self, name: &[u8]) -> Option<&'static Command> {
        lookup_in(&self.main, &self.main_short, name)
    }

    /// [`CommandTable::resolve`] as a server's clients see the table: with the `RESPLOCK.*`
    /// rows when it was started with `enable_test_commands`, and exactly as an unknown
    /// command otherwise.
    pub fn resolve_for(&self, test_commands: bool, args: &[Bytes]) -> Result<Found, RedisError> {
        match resolve_with(self.lookup(&args[0]), args) {
            Err(e) if test_commands => match lookup_in(&self.test, &self.test_short, &args[0]) {
                Some(c) => resolve_with(Some(c), args),
                None => Err(e),
            },
            r => r,
        }
    }

    /// Resolve `args` to the row that will run: the command, or its subcommand for
    /// containers. Checks existence and arity with Redis's exact errors.
    pub fn resolve(&self, args: &[Bytes]) -> Result<Found, RedisError> {
        resolve_with(self.lookup(&args[0]), args)
    }
}

fn lookup_in(t: &Map, short: &ShortNames, name: &[u8]) -> Option<&'static Command> {
    if name.len() <= SHORT_NAME {
        return short.get(name);
    }
    let mut buf = [0u8; 32];
    if name.len() > buf.len() {
        // Only a renamed command (`rename-command`) has a name this long.
        return std::str::from_utf8(name)
            .ok()
            .and_then(|s| t.get(s.to_ascii_lowercase().as_str()).copied());
    }
    for (d, s) in buf.iter_mut().zip(name) {
        *d = s.to_ascii_lowercase();
    }
    let s = std::str::from_utf8(&buf[..name.len()]).ok()?;
    t.get(s).copied()
}

/// The longest name [`ShortNames`] holds (every command's but a few subcommand containers').
const SHORT_NAME: usize = 16;

/// The names of a [`Map`] of at most [`SHORT_NAME`] bytes, as two words of lowercase bytes
/// and a length, in an open-addressing table: what every request's lookup reads (a hash of
/// the string, a UTF-8 check and a string compare cost several times as much). A name that
/// is not lowercase ASCII in the map (none is) or in the request finds nothing, as in the map.
struct ShortNames {
    slots: Box<[Option<ShortSlot>]>,
}

/// The eight bytes of `w` with ASCII upper-case letters made lower-case (other bytes kept).
#[inline]
fn ascii_lowercase_word(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let seven = w & (0x7f * ONES);
    // The high bit of each byte: set when its low seven bits are >= 'A', and when > 'Z'.
    let ge_a = seven + (0x80 - b'A' as u64) * ONES;
    let gt_z = seven + (0x7f - b'Z' as u64) * ONES;
    let upper = ge_a & !gt_z & !w & (0x80 * ONES);
    w | (upper >> 2)
}

/// One [`ShortNames`] entry.
#[derive(Clone, Copy)]
struct ShortSlot {
    words: [u64; 2],
    len: usize,
    cmd: &'static Command,
}

impl ShortNames {
    /// The short names of `map`, in a table at most a quarter full.
    fn of(map: &Map) -> ShortNames {
        let n = (map.len() * 4).next_power_of_two().max(64);
        let mut slots = vec![None; n].into_boxed_slice();
        for (name, cmd) in map {
            if name.len() > SHORT_NAME {
                continue;
            }
            let words = Self::words(name.as_bytes());
            let mut i = Self::slot(words, name.len(), n);
            while slots[i].is_some() {
                i = (i + 1) & (n - 1);
            }
            slots[i] = Some(ShortSlot {
                words,
                len: name.len(),
                cmd,
            });
        }
        ShortNames { slots }
    }

    /// `name` (at most [`SHORT_NAME`] bytes) lowercased, zero-padded, as two words: read in
    /// whole words and lowercased eight bytes at a time (bytes stored one by one into a
    /// buffer and read back as words stalled on store forwarding, more than the lookup).
    #[inline]
    fn words(name: &[u8]) -> [u64; 2] {
        let n = name.len();
        let word = |i: usize| u64::from_le_bytes(name[i..i + 8].try_into().expect("8 bytes"));
        let half = |i: usize| u32::from_le_bytes(name[i..i + 4].try_into().expect("4 bytes"));
        let raw = if n >= 8 {
            // Bytes 8..n are the top n - 8 bytes of the word ending at n.
            let hi = if n == 8 { 0 } else { word(n - 8) >> (8 * (16 - n)) };
            [word(0), hi]
        } else if n >= 4 {
            // Two halves that overlap where n < 8: the shared bytes are the same bytes.
            [u64::from(half(0)) | u64::from(half(n - 4)) << (8 * (n - 4)), 0]
        } else {
            let mut w = 0u64;
            for (i, &b) in name.iter().enumerate() {
                w |= u64::from(b) << (8 * i);
            }
            [w, 0]
        };
        raw.map(ascii_lowercase_word)
    }

    #[inline]
    fn slot(words: [u64; 2], len: usize, n: usize) -> usize {
        let h = (words[0] ^ words[1].rotate_left(29) ^ len as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 40) as usize & (n - 1)
    }

    /// The command named `name` (at most [`SHORT_NAME`] bytes, any case).
    #[inline]
    fn get(&self, name: &[u8]) -> Option<&'static Command> {
        let n = self.slots.len();
        let words = Self::words(name);
        let mut i = Self::slot(words, name.len(), n);
        loop {
            let s = self.slots[i].as_ref()?;
            if s.words == words && s.len == name.len() {
                return Some(s.cmd);
            }
            i = (i + 1) & (n - 1);
        }
    }
}

fn resolve_with(found: Option<&'static Command>, args: &[Bytes]) -> Result<Found, RedisError> {
    let cmd = match found {
        Some(c) => c,
        None => return Err(error::unknown_command(&args[0], &args[1..])),
    };
    if cmd.subcommands.is_empty() {
        if !cmd.arity_ok(args.len()) {
            return Err(error::wrong_arity(cmd.name));
        }
        return Ok((cmd, None));
    }
    if args.len() < 2 {
        // A container alone runs itself when its arity allows it (bare COMMAND, arity -1),
        // as lookupCommandLogic returns the base command for one argument.
        if cmd.arity_ok(args.len()) {
            return Ok((cmd, None));
        }
        return Err(error::wrong_arity(cmd.name));
    }
    match lookup_sub(cmd, &args[1]) {
        None => Err(error::unknown_subcommand(&args[1], cmd.name)),
        Some(sub) => {
            if !sub.arity_ok(args.len()) {
                return Err(error::wrong_arity(&fullname(Some(cmd), sub)));
            }
            Ok((sub, Some(cmd)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-wise lowercasing agrees with the byte-wise one on every byte value.
    #[test]
    fn lowercase_word_matches_bytes() {
        for b in 0..=255u8 {
            let w = u64::from_le_bytes([b, b'A', b, b'z', 0xff, b'Z', b'@', b'[']);
            let want: Vec<u8> = w.to_le_bytes().iter().map(u8::to_ascii_lowercase).collect();
            assert_eq!(ascii_lowercase_word(w).to_le_bytes().to_vec(), want, "{b}");
        }
        for n in 0..=SHORT_NAME {
            let name: Vec<u8> = (0..n as u8).map(|i| b'A' + i).collect();
            let mut b = [0u8; SHORT_NAME];
            for (d, s) in b.iter_mut().zip(&name) {
                *d = s.to_ascii_lowercase();
            }
            let want = [
                u64::from_le_bytes(b[..8].try_into().unwrap()),
                u64::from_le_bytes(b[8..].try_into().unwrap()),
            ];
            assert_eq!(ShortNames::words(&name), want, "{n}");
        }
    }
}
