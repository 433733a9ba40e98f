//! MEMORY USAGE for sorted sets: what Redis would report for either encoding, including
//! the bytes its listpack would spend on each member and score.

use super::skiplist::NIL;
use super::ZSet;
use crate::types::set::{jemalloc_size, sds_alloc_size, string2ll, DICT, DICT_ENTRY, ROBJ};

impl ZSet {
    /// What Redis's MEMORY USAGE would report for this sorted set's value
    /// (objectComputeSize, default 5 samples), not counting the key: the caller adds the
    /// key's sds and the 24-byte dictEntry, as memoryCommand does. A listpack is sized as
    /// Redis would encode it (integer members and integral scores as integers, other scores
    /// as their %.17g text); a skiplist samples its first nodes, whose levels are drawn as
    /// Redis draws them.
    pub fn mem_usage(&self) -> usize {
        self.mem_usage_samples(5)
    }

    /// [`ZSet::mem_usage`] with MEMORY USAGE's SAMPLES count (0 means all members).
    pub fn mem_usage_samples(&self, samples: usize) -> usize {
        match self {
            ZSet::Listpack(lp) => {
                let bytes: usize = lp
                    .iter()
                    .map(|(m, s)| lp_member_bytes(m) + lp_score_bytes(s))
                    .sum();
                ROBJ + jemalloc_size(6 + bytes + 1)
            }
            ZSet::Skiplist(sl) => {
                let samples = if samples == 0 { usize::MAX } else { samples };
                // robj, zset, zskiplist, dict, the buckets and the 32-level header node.
                let mut usage = ROBJ + 16 + 32 + DICT + 8 * sl.dict.slots() + 640;
                let (mut size, mut n) = (0usize, 0usize);
                let mut x = sl.nodes[0].next;
                while x != NIL && n < samples {
                    let node = &sl.nodes[x as usize];
                    size += sds_alloc_size(node.ele.len())
                        + DICT_ENTRY
                        + jemalloc_size(24 + 16 * node.level());
                    n += 1;
                    x = node.next;
                }
                if n > 0 {
                    usage += (size as f64 / n as f64 * sl.len() as f64) as usize;
                }
                usage
            }
        }
    }
}

/// Bytes Redis's listpack spends on an integer entry (encoding plus backlen).
fn lp_int_bytes(v: i64) -> usize {
    match v {
        0..=127 => 2,
        -4096..=4095 => 3,
        -32768..=32767 => 4,
        -8388608..=8388607 => 5,
        -2147483648..=2147483647 => 6,
        _ => 10,
    }
}

/// Bytes Redis's listpack spends on a string entry (encoding, data, backlen).
fn lp_str_bytes(len: usize) -> usize {
    let enc = match len {
        0..=63 => 1 + len,
        64..=4095 => 2 + len,
        _ => 5 + len,
    };
    let backlen = match enc {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    };
    enc + backlen
}

/// A member as Redis's listpack stores it: integers (lpStringToInt64) as integers.
fn lp_member_bytes(m: &[u8]) -> usize {
    match string2ll(m) {
        Some(v) => lp_int_bytes(v),
        None => lp_str_bytes(m.len()),
    }
}

/// A score as zzlInsertAt stores it: an integer when double2ll takes it, else d2string's
/// text ("inf", "-inf", or %.17g).
fn lp_score_bytes(s: f64) -> usize {
    const LIM: f64 = (i64::MAX / 2) as f64;
    if (-LIM..=LIM).contains(&s) && s == (s as i64) as f64 {
        return lp_int_bytes(s as i64);
    }
    lp_str_bytes(if s.is_infinite() {
        3 + s.is_sign_negative() as usize
    } else {
        g17_len(s)
    })
}

/// The length of printf's "%.17g" of a finite double (only its length is needed here).
pub(super) fn g17_len(v: f64) -> usize {
    let s = format!("{:.16e}", v.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let x: i64 = exp.parse().unwrap_or(0);
    let digits = mant.bytes().filter(u8::is_ascii_digit).count();
    let zeros = mant.bytes().rev().take_while(|&b| b == b'0').count();
    let k = (digits - zeros).max(1) as i64;
    let len = if (-4..17).contains(&x) {
        if x >= 0 {
            let int = x + 1;
            let dec = (k - int).max(0);
            int + if dec > 0 { 1 + dec } else { 0 }
        } else {
            2 + (-x - 1) + k
        }
    } else {
        let exp_digits = (x.unsigned_abs().to_string().len() as i64).max(2);
        1 + if k > 1 { k } else { 0 } + 2 + exp_digits
    };
    len as usize + v.is_sign_negative() as usize
}
