//! The keys a cluster node routes a command by, as Redis 7.0's getKeysFromCommand finds them:
//! the legacy range (first key, last key, step: COMMAND INFO's) for most commands, and for
//! the commands with movable keys the table's key-spec evaluator (EVAL's numkeys,
//! ZUNIONSTORE's destination and numkeys, SORT's STORE, XREAD's STREAMS, MIGRATE's KEYS,
//! ...), save the two commands whose getkeys procedure disagrees with their key specs.
//! Shard channels are keys here (SSUBSCRIBE, SPUBLISH), as they are for Redis's routing.

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

/// A movable-keys command's keys: the table's key-spec evaluator ([`Command::keys_in`], the
/// one COMMAND GETKEYS and ACL use), except where Redis's cluster routing, which asks the
/// command's getkeys procedure instead (getKeysFromCommand), finds other keys: GEORADIUS's
/// destination is the last STORE or STOREDIST given (its key specs find the first of each),
/// and an unbalanced XREAD STREAMS list has no keys (its key specs take half, rounded down).
fn movable(cmd: &Command, args: &[Bytes]) -> Vec<usize> {
    match cmd.name {
        "georadius" | "georadiusbymember" => georadius_keys(cmd, args),
        "xread" | "xreadgroup" => {
            let keys = cmd.keys_in(args);
            match keys.first() {
                Some(&first) if !(args.len() - first).is_multiple_of(2) => Vec::new(),
                _ => keys,
            }
        }
        _ => cmd.keys_in(args),
    }
}

/// georadiusGetKeys: the key, then the last STORE / STOREDIST destination given.
fn georadius_keys(cmd: &Command, args: &[Bytes]) -> Vec<usize> {
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
