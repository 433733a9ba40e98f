//! What Redis 7.0's COMMAND INFO and COMMAND DOCS say about a command: arity, flags, key
//! range, ACL categories, command tips, key specifications, and the docs fields (summary,
//! since, group, complexity, doc_flags, deprecated_since, replaced_by, history, arguments).
//! Cluster clients read the key specs and redis-cli reads the arguments for its hints, so all
//! of it is recorded from a real redis-server (`conformance/tools/gen_command_meta.py` writes
//! `redis_commands.rs`) rather than written by hand: it is the one source of a command's
//! metadata, the command table takes a row's from here, and key positions are found through
//! the key specs ([`key_positions`]). A command redis-server 7.0.15 does not have (see
//! [`NOT_IN_REDIS`]) is described by its row.

use crate::reply::Reply;
use bytes::Bytes;

/// Names resplock implements that redis-server 7.0.15 does not know (Redis 7.2's
/// CLIENT SETINFO and CLIENT NO-TOUCH, which current clients send): described from their rows.
pub static NOT_IN_REDIS: &[&str] = &["client|no-touch", "client|setinfo"];

/// A recorded reply value, as static data (map keys are always bulk strings in these replies).
#[derive(Debug)]
pub enum M {
    /// Simple string (`+RO`, `+@read`).
    S(&'static str),
    /// Bulk string.
    B(&'static str),
    I(i64),
    A(&'static [M]),
    Set(&'static [M]),
    Map(&'static [(&'static str, M)]),
}

impl M {
    pub fn reply(&self) -> Reply {
        let s = |x: &'static str| Bytes::from_static(x.as_bytes());
        match self {
            M::S(x) => Reply::Simple(s(x)),
            M::B(x) => Reply::Bulk(s(x)),
            M::I(i) => Reply::Int(*i),
            M::A(v) => Reply::Array(v.iter().map(M::reply).collect()),
            M::Set(v) => Reply::Set(v.iter().map(M::reply).collect()),
            M::Map(v) => Reply::Map(
                v.iter()
                    .map(|(k, x)| (Reply::Bulk(s(k)), x.reply()))
                    .collect(),
            ),
        }
    }
}

/// The recorded fields of one command or subcommand.
#[derive(Debug)]
pub struct Meta {
    /// Full name: `get`, `client|kill`.
    pub name: &'static str,
    /// Redis's arity: the number of arguments counting the name, at least that many when
    /// negative.
    pub arity: i32,
    /// COMMAND INFO's flags as Redis reported them.
    pub flags: &'static [&'static str],
    /// COMMAND INFO's first key, last key and step (key positions are found through the key
    /// specs; these are what COMMAND INFO prints).
    pub keys: (i32, i32, i32),
    /// COMMAND INFO's ACL categories (a set of simple strings).
    pub acl: M,
    /// COMMAND INFO's tips (a set of bulk strings).
    pub tips: M,
    /// COMMAND INFO's key specifications.
    pub key_specs: M,
    /// COMMAND DOCS's summary, since and group ("" when Redis gives none).
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    /// COMMAND DOCS's fields between `group` and `subcommands`, in Redis's order.
    pub docs: &'static [(&'static str, M)],
}

impl Meta {
    /// The ACL category names (`@read`, ...), for COMMAND LIST FILTERBY ACLCAT.
    pub fn acl_names(&self) -> Vec<&'static str> {
        match &self.acl {
            M::Set(v) | M::A(v) => v
                .iter()
                .filter_map(|m| match m {
                    M::S(s) | M::B(s) => Some(*s),
                    _ => None,
                })
                .collect(),
            _ => vec![],
        }
    }
}

/// Redis 7.0's COMMAND INFO flag order (addReplyFlagsForCommand).
const REDIS_FLAG_ORDER: &[&str] = &[
    "write",
    "readonly",
    "denyoom",
    "module",
    "admin",
    "pubsub",
    "noscript",
    "blocking",
    "loading",
    "stale",
    "skip_monitor",
    "skip_slowlog",
    "asking",
    "fast",
    "no_auth",
    "may_replicate",
    "no_mandatory_keys",
    "no_async_loading",
    "no_multi",
    "movablekeys",
    "allow_busy",
];

/// COMMAND INFO's flags: the row's flags, plus the recorded flags rows have no bit for, in
/// Redis's order.
pub fn flag_names(row_flags: u32, meta: Option<&Meta>) -> Vec<&'static str> {
    let row_name = |n: &str| crate::cmd::base::flags::NAMES.iter().find(|(_, x)| *x == n);
    REDIS_FLAG_ORDER
        .iter()
        .copied()
        .filter(|n| match row_name(n) {
            Some((bit, _)) => row_flags & bit != 0,
            None => meta.is_some_and(|m| m.flags.contains(n)),
        })
        .collect()
}

/// The entry for a full, lowercase command name.
pub fn get(fullname: &str) -> Option<&'static Meta> {
    let all = super::redis_commands::COMMANDS;
    all.binary_search_by(|m| m.name.cmp(fullname))
        .ok()
        .map(|i| &all[i])
}

/// Every entry of every command redis-server knows, sorted by name.
pub fn all() -> impl Iterator<Item = &'static Meta> {
    super::redis_commands::COMMANDS.iter()
}

impl M {
    /// The value under `key` in a map.
    fn field(&self, key: &str) -> Option<&M> {
        match self {
            M::Map(v) => v.iter().find(|(k, _)| *k == key).map(|(_, x)| x),
            _ => None,
        }
    }
    fn int(&self, key: &str) -> Option<i64> {
        match self.field(key)? {
            M::I(i) => Some(*i),
            _ => None,
        }
    }
    fn text(&self, key: &str) -> Option<&'static str> {
        match self.field(key)? {
            M::B(s) | M::S(s) => Some(s),
            _ => None,
        }
    }
    fn has_flag(&self, flag: &str) -> bool {
        matches!(self.field("flags"), Some(M::Set(v)) if v.iter().any(|f| matches!(f, M::S(s) if *s == flag)))
    }
}

/// Whether a command's keys are read, written, or both, from the flags of its recorded key
/// specs (access reads; insert, delete, update write), as ACL key permissions check them.
pub fn key_access(meta: &Meta) -> (bool, bool) {
    let M::Set(specs) = &meta.key_specs else {
        return (true, true);
    };
    let (mut read, mut write) = (false, false);
    for s in specs.iter() {
        read |= s.has_flag("access");
        write |= s.has_flag("insert") || s.has_flag("delete") || s.has_flag("update");
    }
    (read, write)
}

/// What the recorded key specs say about a command line (Redis's getKeysUsingKeySpecs).
pub enum KeySearch {
    /// The specs are all `not_key` (SPUBLISH's channel): no key arguments.
    NoKeys,
    /// The positions of the keys in `args` (args\[0\] is the command name).
    Keys(Vec<usize>),
    /// A spec this evaluator does not handle (keyword search, bad numkeys): use the row.
    Unknown,
}

/// Find the keys of `args` with the recorded key specs of `meta`.
pub fn key_positions(meta: &Meta, args: &[Bytes]) -> KeySearch {
    key_positions_and_flags(meta, args).0
}

/// [`key_positions`], with the flags of the key spec that found each key (COMMAND
/// GETKEYSANDFLAGS), aligned with the positions.
pub fn key_positions_and_flags(meta: &Meta, args: &[Bytes]) -> (KeySearch, Vec<Vec<&'static str>>) {
    let mut flags = Vec::new();
    let found = search(meta, args, &mut flags);
    (found, flags)
}

fn spec_flags(spec: &M) -> Vec<&'static str> {
    match spec.field("flags") {
        Some(M::Set(v)) => v
            .iter()
            .filter_map(|f| match f {
                M::S(s) | M::B(s) => Some(*s),
                _ => None,
            })
            .collect(),
        _ => vec![],
    }
}

fn search(meta: &Meta, args: &[Bytes], flags: &mut Vec<Vec<&'static str>>) -> KeySearch {
    let M::Set(specs) = &meta.key_specs else {
        return KeySearch::Unknown;
    };
    let specs: Vec<&M> = specs.iter().filter(|s| !s.has_flag("not_key")).collect();
    if specs.is_empty() {
        return KeySearch::NoKeys;
    }
    let argc = args.len() as i64;
    let mut out = Vec::new();
    for spec in specs {
        let (Some(bs), Some(fk)) = (spec.field("begin_search"), spec.field("find_keys")) else {
            return KeySearch::Unknown;
        };
        let first = match bs.text("type") {
            Some("index") => {
                let Some(first) = bs.field("spec").and_then(|s| s.int("index")) else {
                    return KeySearch::Unknown;
                };
                first
            }
            Some("keyword") => {
                // The keys follow a keyword (XREAD's STREAMS), looked for from `startfrom`
                // (from the end when negative); a spec whose keyword is absent finds nothing.
                let spec = bs.field("spec");
                let (Some(word), Some(from)) = (
                    spec.and_then(|s| s.text("keyword")),
                    spec.and_then(|s| s.int("startfrom")),
                ) else {
                    return KeySearch::Unknown;
                };
                let start = if from > 0 { from } else { argc + from };
                let end = if from > 0 { argc - 1 } else { 0 };
                let mut i = start;
                let mut found = None;
                while i != end {
                    if i >= argc || i < 1 {
                        break;
                    }
                    if args[i as usize].eq_ignore_ascii_case(word.as_bytes()) {
                        found = Some(i + 1);
                        break;
                    }
                    i = if start <= end { i + 1 } else { i - 1 };
                }
                match found {
                    Some(f) => f,
                    None => continue,
                }
            }
            _ => return KeySearch::Unknown,
        };
        let Some(fks) = fk.field("spec") else {
            return KeySearch::Unknown;
        };
        let (first, last, step) = match fk.text("type") {
            Some("range") => {
                let (Some(lastkey), Some(step), Some(limit)) =
                    (fks.int("lastkey"), fks.int("keystep"), fks.int("limit"))
                else {
                    return KeySearch::Unknown;
                };
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (first, last, step)
            }
            Some("keynum") => {
                let (Some(idx), Some(firstkey), Some(step)) = (
                    fks.int("keynumidx"),
                    fks.int("firstkey"),
                    fks.int("keystep"),
                ) else {
                    return KeySearch::Unknown;
                };
                let Some(n) = args
                    .get((first + idx) as usize)
                    .and_then(|a| std::str::from_utf8(a).ok())
                    .and_then(|s| s.parse::<i64>().ok())
                    .filter(|n| *n >= 0)
                else {
                    return KeySearch::Keys(vec![]);
                };
                let first = first + firstkey;
                (first, first.saturating_add(n) - 1, step)
            }
            _ => return KeySearch::Unknown,
        };
        // Out of bounds is a syntax error the command reports itself: no keys (Redis then
        // falls back to the command's getkeys function, which agrees for these commands).
        if last >= argc || last < first || first >= argc || step <= 0 {
            return KeySearch::Keys(vec![]);
        }
        for i in (first..=last).step_by(step as usize) {
            out.push(i as usize);
            flags.push(spec_flags(spec));
        }
    }
    KeySearch::Keys(out)
}
