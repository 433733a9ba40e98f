//! The slow log as Redis's slowlog.c keeps it: commands that ran at least
//! `slowlog-log-slower-than` microseconds, newest first, at most `slowlog-max-len`, with long
//! argument lists and long arguments trimmed and secrets redacted. Fed by
//! `observe::push_if_slow`; the SLOWLOG command reads it (`families/slowlog.rs`).

use bytes::Bytes;
use std::collections::VecDeque;

/// Redis's SLOWLOG_ENTRY_MAX_ARGC and SLOWLOG_ENTRY_MAX_STRING.
pub const MAX_ARGC: usize = 32;

pub const MAX_STRING: usize = 128;

/// One logged command.
pub struct Entry {
    pub id: u64,
    pub time_s: i64,
    pub duration_us: u64,
    pub args: Vec<Bytes>,
    pub peer: Bytes,
    pub name: Bytes,
}

/// The slow log, newest entry first.
#[derive(Default)]
pub struct SlowLog {
    pub entries: VecDeque<Entry>,
    pub next_id: u64,
}

/// At most 32 arguments (the last saying how many more there were), each at most 128 bytes
/// (with how many more there were): `head` is the start of a command of `total` arguments.
pub fn trimmed(head: &[Bytes], total: usize) -> Vec<Bytes> {
    let argc = head.len().min(MAX_ARGC);
    let mut out = Vec::with_capacity(argc);
    for (j, a) in head.iter().take(argc).enumerate() {
        if argc != total && j == argc - 1 {
            out.push(Bytes::from(format!("... ({} more arguments)", total - argc + 1)));
        } else if a.len() > MAX_STRING {
            let mut s = a[..MAX_STRING].to_vec();
            s.extend_from_slice(format!("... ({} more bytes)", a.len() - MAX_STRING).as_bytes());
            out.push(Bytes::from(s));
        } else {
            // A copy: a slice would keep the whole request buffer it came from alive for
            // as long as the entry stays (megabytes for one big command).
            out.push(Bytes::copy_from_slice(a));
        }
    }
    out
}

/// The arguments as the slow log and MONITOR show them: passwords and other secrets
/// replaced by `(redacted)`, as Redis's commands redact their own arguments.
pub fn redacted(argv: &[Bytes]) -> Vec<Bytes> {
    let red = || Bytes::from_static(b"(redacted)");
    let mut out = argv.to_vec();
    let is = |i: usize, s: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(s.as_bytes()))
    };
    if is(0, "auth") {
        for a in out.iter_mut().skip(1) {
            *a = red();
        }
    } else if is(0, "hello") {
        let mut i = 2;
        while i < argv.len() {
            if is(i, "auth") && i + 2 < argv.len() {
                out[i + 1] = red();
                out[i + 2] = red();
                i += 3;
            } else {
                i += 1;
            }
        }
    } else if is(0, "config") && is(1, "set") {
        let mut i = 2;
        while i + 1 < argv.len() {
            if crate::config::is_sensitive(&argv[i]) {
                out[i + 1] = red();
            }
            i += 2;
        }
    } else if is(0, "acl") && is(1, "setuser") {
        // The user's name too: ACL SETUSER redacts every argument from the name on.
        for a in out.iter_mut().skip(2) {
            *a = red();
        }
    } else if is(0, "migrate") {
        let mut i = 6;
        while i < argv.len() {
            if is(i, "keys") {
                // The rest are keys, never options (MIGRATE's own loop stops here).
                break;
            }
            if is(i, "auth") && i + 1 < argv.len() {
                out[i + 1] = red();
                i += 2;
            } else if is(i, "auth2") && i + 2 < argv.len() {
                out[i + 1] = red();
                out[i + 2] = red();
                i += 3;
            } else {
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{redacted, trimmed, MAX_ARGC};
    use bytes::Bytes;

    /// An entry holds copies: slices of the request's buffer would keep all of it (one big
    /// SADD's megabytes) alive while the entry is in the log.
    #[test]
    fn entries_copy_their_arguments_and_count_the_rest() {
        let request = Bytes::from((0..100u8).collect::<Vec<u8>>());
        let argv: Vec<Bytes> = (0..50).map(|i| request.slice(i..i + 2)).collect();
        let shown = trimmed(&argv[..MAX_ARGC], argv.len());
        assert_eq!(shown.len(), MAX_ARGC);
        assert_eq!(shown[MAX_ARGC - 1], Bytes::from("... (19 more arguments)"));
        for (s, a) in shown.iter().zip(&argv).take(MAX_ARGC - 1) {
            assert_eq!(s, a);
            let within = request.as_ptr_range().contains(&s.as_ptr());
            assert!(!within, "an entry's argument points into the request");
        }
        assert_eq!(trimmed(&argv[..2], 2), argv[..2].to_vec());
    }

    fn args(v: &[&str]) -> Vec<Bytes> {
        v.iter().map(|s| Bytes::copy_from_slice(s.as_bytes())).collect()
    }

    /// ACL SETUSER hides the user's name with its rules (aclCommand redacts from argv[2] on,
    /// before it even checks the name), as unit/slowlog checks.
    #[test]
    fn acl_setuser_is_redacted_from_the_user_name_on() {
        assert_eq!(
            redacted(&args(&["acl", "setuser", "slowlog test user", "+get", "+set"])),
            args(&["acl", "setuser", "(redacted)", "(redacted)", "(redacted)"])
        );
        assert_eq!(
            redacted(&args(&["ACL", "SETUSER", "u"])),
            args(&["ACL", "SETUSER", "(redacted)"])
        );
    }
}
