//! The Redis version resplock reports, in one place (HELLO, INFO, `redis.REDIS_VERSION`,
//! `--version`): clients and tools gate features on it.

/// The Redis version whose behaviour resplock reproduces.
pub const REDIS_VERSION: &str = "7.0.15";

/// `REDIS_VERSION` as Redis's `REDIS_VERSION_NUM`: 7.0.15 -> 0x07000f.
///
/// ```
/// assert_eq!(resplock::version::version_num(), 0x07000f); // 7.0.15
/// ```
pub fn version_num() -> i64 {
    let p: Vec<i64> = REDIS_VERSION
        .split('.')
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (p.first().copied().unwrap_or(0) << 16)
        | (p.get(1).copied().unwrap_or(0) << 8)
        | p.get(2).copied().unwrap_or(0)
}
