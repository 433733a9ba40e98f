//! notify-keyspace-events: the event classes as the flags Redis parses from the setting.
//! The command layer raises events of these classes (`cmd::notify`).

/// `K`: events on `__keyspace@db__:key` channels.
pub const KEYSPACE: u32 = 1 << 0;
/// `E`: events on `__keyevent@db__:event` channels.
pub const KEYEVENT: u32 = 1 << 1;
/// `g`: generic commands (DEL, EXPIRE, RENAME, ...).
pub const GENERIC: u32 = 1 << 2;
/// `$`: string commands.
pub const STRING: u32 = 1 << 3;
/// `l`: list commands.
pub const LIST: u32 = 1 << 4;
/// `s`: set commands.
pub const SET: u32 = 1 << 5;
/// `h`: hash commands.
pub const HASH: u32 = 1 << 6;
/// `z`: sorted-set commands.
pub const ZSET: u32 = 1 << 7;
/// `x`: keys removed by expiry.
pub const EXPIRED: u32 = 1 << 8;
/// `e`: keys evicted by maxmemory.
pub const EVICTED: u32 = 1 << 9;
/// `t`: stream commands.
pub const STREAM: u32 = 1 << 10;
/// `m`: reads of missing keys.
pub const KEY_MISS: u32 = 1 << 11;
/// `d`: module key types.
pub const MODULE: u32 = 1 << 12;
/// `n`: new keys.
pub const NEW: u32 = 1 << 13;

/// Redis's NOTIFY_ALL, the `A` alias: every class but key-miss and new.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

/// Redis's keyspaceEventsStringToFlags: None for a character it rejects.
pub fn parse_flags(s: &str) -> Option<u32> {
    let mut f = 0;
    for c in s.bytes() {
        f |= match c {
            b'A' => ALL,
            b'g' => GENERIC,
            b'$' => STRING,
            b'l' => LIST,
            b's' => SET,
            b'h' => HASH,
            b'z' => ZSET,
            b'x' => EXPIRED,
            b'e' => EVICTED,
            b'K' => KEYSPACE,
            b'E' => KEYEVENT,
            b't' => STREAM,
            b'm' => KEY_MISS,
            b'd' => MODULE,
            b'n' => NEW,
            _ => return None,
        };
    }
    Some(f)
}

/// Redis's `keyspaceEventsFlagsToString`: the canonical form CONFIG GET shows.
pub fn format_flags(f: u32) -> String {
    use self as n;
    let mut s = String::new();
    if f & n::ALL == n::ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (n::GENERIC, 'g'),
            (n::STRING, '$'),
            (n::LIST, 'l'),
            (n::SET, 's'),
            (n::HASH, 'h'),
            (n::ZSET, 'z'),
            (n::EXPIRED, 'x'),
            (n::EVICTED, 'e'),
            (n::STREAM, 't'),
            (n::MODULE, 'd'),
            (n::NEW, 'n'),
        ] {
            if f & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [(n::KEYSPACE, 'K'), (n::KEYEVENT, 'E'), (n::KEY_MISS, 'm')] {
        if f & bit != 0 {
            s.push(c);
        }
    }
    s
}
