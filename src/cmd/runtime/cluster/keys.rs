//! The keys a cluster node routes a command by, as Redis 7.0's getKeysFromCommand finds them:
//! the legacy range (first key, last key, step: COMMAND INFO's) for most commands, and for
//! the commands with movable keys the command's own rule (EVAL's numkeys, ZUNIONSTORE's
//! destination and numkeys, SORT's STORE, XREAD's STREAMS, MIGRATE's KEYS, ...). Shard
//! channels are keys here (SSUBSCRIBE, SPUBLISH), as they are for Redis's routing.

use crate::cmd::base::args::is;
use crate::cmd::base::meta;
use crate::cmd::runtime::table::Command;
use bytes::Bytes;

/// How a row's keys are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// No key specs and no movable keys: never routed (Redis skips the check).
    None,
    /// The row's range.
    Range,
    /// A movable-keys command: its own rule.
    Movable,
}

/// The rule for `cmd`, from its recorded metadata (or its row's key range).
pub fn rule(cmd: &Command) -> Rule {
    match cmd.meta {
        Some(m) => {
            if m.flags.contains(&"movablekeys") {
                Rule::Movable
            } else if matches!(&m.key_specs, meta::M::Set(s) | meta::M::A(s) if !s.is_empty()) {
                Rule::Range
            } else {
                Rule::None
            }
        }
        None if cmd.first_key > 0 => Rule::Range,
        None => Rule::None,
    }
}

/// The positions of the keys of `args` (args\[0\] is the command name) under `rule`.
pub fn positions(rule: Rule, cmd: &Command, args: &[Bytes]) -> Vec<usize> {
    match rule {
        Rule::None => Vec::new(),
        Rule::Range => cmd.key_range(args.len()).collect(),
        Rule::Movable => movable(cmd, args),
    }
}

/// `n` keys from `first` when `args[numkeys]` says so (Redis's genericGetKeys: none when the
/// count is below 1 or more than there are arguments).
fn counted(args: &[Bytes], numkeys: usize, first: usize) -> Vec<usize> {
    let n = args
        .get(numkeys)
        .and_then(|a| std::str::from_utf8(a).ok())
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or(0);
    if n < 1 || n as usize > args.len().saturating_sub(first) {
        return Vec::new();
    }
    (first..first + n as usize).collect()
}

fn movable(cmd: &Command, args: &[Bytes]) -> Vec<usize> {
    match cmd.name {
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => counted(args, 2, 3),
        "lmpop" | "zmpop" | "sintercard" | "zintercard" | "zunion" | "zinter" | "zdiff" => {
            counted(args, 1, 2)
        }
        "blmpop" | "bzmpop" => counted(args, 2, 3),
        "zunionstore" | "zinterstore" | "zdiffstore" => {
            let mut k = counted(args, 2, 3);
            if !k.is_empty() {
                k.insert(0, 1);
            }
            k
        }
        "sort" => sort_keys(args),
        "sort_ro" | "bitfield" | "set" => vec![1],
        "georadius" | "georadiusbymember" => {
            // The key, then a STORE / STOREDIST destination (the last one given).
            let mut keys = vec![1];
            let start = if cmd.name == "georadius" { 6 } else { 5 };
            let mut dest = None;
            let mut i = start;
            while i < args.len() {
                if (is(&args[i], "store") || is(&args[i], "storedist")) && i + 1 < args.len() {
                    dest = Some(i + 1);
                    i += 1;
                }
                i += 1;
            }
            keys.extend(dest);
            keys
        }
        "xread" | "xreadgroup" => {
            let from = if cmd.name == "xread" { 1 } else { 4 };
            let Some(s) = (from..args.len()).find(|&i| is(&args[i], "streams")) else {
                return Vec::new();
            };
            let rest = args.len() - s - 1;
            if rest == 0 || !rest.is_multiple_of(2) {
                return Vec::new();
            }
            (s + 1..s + 1 + rest / 2).collect()
        }
        "migrate" => crate::cmd::runtime::migrate::key_positions(args),
        _ => match cmd.meta.map(|m| meta::key_positions(m, args)) {
            Some(meta::KeySearch::Keys(k)) => k,
            _ => cmd.key_range(args.len()).collect(),
        },
    }
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
