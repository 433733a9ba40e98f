//! Script flags, from a `#!lua flags=...` shebang or `redis.register_function`'s `flags`.

/// No shebang: Redis's pre-7.0 behaviour (EVAL compatibility mode).
pub const EVAL_COMPAT: u32 = 1;
/// `no-writes`
pub const NO_WRITES: u32 = 1 << 1;
/// `allow-oom`
pub const ALLOW_OOM: u32 = 1 << 2;
/// `allow-stale`
pub const ALLOW_STALE: u32 = 1 << 3;
/// `no-cluster`
pub const NO_CLUSTER: u32 = 1 << 4;
/// `allow-cross-slot-keys`
pub const ALLOW_CROSS_SLOT: u32 = 1 << 5;

/// (flag, name), in Redis's order (scripts_flags_def): FUNCTION LIST lists them so.
pub const NAMES: &[(u32, &str)] = &[
    (NO_WRITES, "no-writes"),
    (ALLOW_OOM, "allow-oom"),
    (ALLOW_STALE, "allow-stale"),
    (NO_CLUSTER, "no-cluster"),
    (ALLOW_CROSS_SLOT, "allow-cross-slot-keys"),
];

/// A flag by name: shebangs compare exactly, `register_function` ignoring case.
pub fn by_name(name: &[u8], ignore_case: bool) -> Option<u32> {
    NAMES
        .iter()
        .find(|(_, n)| {
            if ignore_case {
                n.as_bytes().eq_ignore_ascii_case(name)
            } else {
                n.as_bytes() == name
            }
        })
        .map(|(f, _)| *f)
}
