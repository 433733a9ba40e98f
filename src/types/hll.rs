//! HyperLogLog exactly as Redis 7.0 keeps it inside a string value, so that `GET` of an HLL
//! key returns the bytes redis-server would return and a value copied from redis-server counts
//! the same here.
//!
//! Layout: a 16-byte header (`HYLL`, the encoding byte, three reserved bytes, the cached
//! cardinality as 8 little-endian bytes whose top bit marks the cache invalid) followed by
//! either the dense registers (16384 six-bit registers, 12288 bytes, least significant bits
//! first) or the sparse opcodes:
//! - ZERO `00xxxxxx`: 1..64 registers set to 0;
//! - XZERO `01xxxxxx yyyyyyyy`: 1..16384 registers set to 0;
//! - VAL `1vvvvvxx`: 1..4 registers set to 1..32.
//!
//! A sparse value becomes dense when a register needs a value above 32 or when it would grow
//! past `hll-sparse-max-bytes`. Hashing is MurmurHash64A with Redis's seed, and the
//! cardinality is Ertl's estimator Redis 7.0 uses (`hllCount`). Corrupted values are reported,
//! never trusted: reads past the end of a sparse value see a zero byte, as Redis reads the
//! string's terminator.

/// Bytes of the header before the registers.
pub const HDR_SIZE: usize = 16;
/// Bits of the hash that pick the register.
const P: u32 = 14;
/// Bits of the hash left for the run of zeroes.
const Q: usize = 64 - P as usize;
/// Number of registers.
pub const REGISTERS: usize = 1 << P;
const P_MASK: u64 = REGISTERS as u64 - 1;
const BITS: usize = 6;
const REGISTER_MAX: u32 = (1 << BITS) - 1;
/// Length of a dense value, header included.
pub const DENSE_SIZE: usize = HDR_SIZE + (REGISTERS * BITS).div_ceil(8);
const ENC_DENSE: u8 = 0;
const ENC_SPARSE: u8 = 1;
const MAX_ENCODING: u8 = 1;

const XZERO_BIT: u8 = 0x40;
const VAL_BIT: u8 = 0x80;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;
/// 0.5/ln(2), the estimator's constant for an infinite number of registers.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
/// MurmurHash64A's seed for HLL elements.
const SEED: u32 = 0xadc8_3b19;

/// The two encodings a valid HLL value has (PFDEBUG ENCODING's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// 16384 six-bit registers.
    Dense,
    /// Run-length opcodes.
    Sparse,
}

impl Encoding {
    /// PFDEBUG ENCODING's reply.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// A string that is not an HLL at all (no magic, unknown encoding, a dense value of the
/// wrong length): Redis answers `WRONGTYPE Key is not a valid HyperLogLog string value.`
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotHll;

/// An HLL whose sparse opcodes do not cover exactly the 16384 registers: Redis answers
/// `INVALIDOBJ Corrupted HLL object detected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// MurmurHash2, 64-bit version, as Redis has it (little-endian reads on every host).
pub fn murmur64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h: u64 = (seed as u64) ^ (key.len() as u64).wrapping_mul(M);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut k = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= (b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element lands in and the length of its `000..1` pattern (1..=51).
pub fn pattern(ele: &[u8]) -> (usize, u8) {
    let mut hash = murmur64a(ele, SEED);
    let index = (hash & P_MASK) as usize;
    hash >>= P;
    hash |= 1u64 << Q;
    (index, hash.trailing_zeros() as u8 + 1)
}

/// The empty HLL Redis creates: sparse, one XZERO covering every register.
pub fn new_sparse() -> Vec<u8> {
    let mut s = vec![0u8; HDR_SIZE + REGISTERS.div_ceil(XZERO_MAX_LEN) * 2];
    s[..4].copy_from_slice(b"HYLL");
    s[4] = ENC_SPARSE;
    let mut p = HDR_SIZE;
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        xzero_set(&mut s[p..], run);
        p += 2;
        left -= run;
    }
    s
}

/// isHLLObjectOrReply's checks on a string value: the magic, a known encoding, and for a
/// dense value the exact length. Sparse opcodes are checked only when they are read.
pub fn check(s: &[u8]) -> Result<Encoding, NotHll> {
    if s.len() < HDR_SIZE || &s[..4] != b"HYLL" || s[4] > MAX_ENCODING {
        return Err(NotHll);
    }
    if s[4] == ENC_DENSE {
        if s.len() != DENSE_SIZE {
            return Err(NotHll);
        }
        return Ok(Encoding::Dense);
    }
    Ok(Encoding::Sparse)
}

/// The cached cardinality, when the header says it is valid.
pub fn cached(s: &[u8]) -> Option<u64> {
    if s[15] & 0x80 != 0 {
        return None;
    }
    Some(u64::from_le_bytes(s[8..16].try_into().expect("8 bytes")))
}

/// Stores a freshly computed cardinality in the header (which also marks it valid).
pub fn set_cached(s: &mut [u8], card: u64) {
    s[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Marks the cached cardinality stale (HLL_INVALIDATE_CACHE).
pub fn invalidate(s: &mut [u8]) {
    s[15] |= 0x80;
}

// ---- dense registers --------------------------------------------------------------------

/// Register `i` of a dense register area (the bytes after the header).
pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * BITS / 8;
    let fb = (i * BITS) & 7;
    let b0 = regs[byte] as u32;
    let b1 = regs.get(byte + 1).copied().unwrap_or(0) as u32;
    (((b0 >> fb) | (b1 << (8 - fb))) & REGISTER_MAX) as u8
}

/// Sets register `i` of a dense register area to `val` (0..=63).
pub fn dense_put(regs: &mut [u8], i: usize, val: u8) {
    let byte = i * BITS / 8;
    let fb = (i * BITS) & 7;
    let fb8 = 8 - fb;
    let v = val as u32;
    regs[byte] &= !(REGISTER_MAX << fb) as u8;
    regs[byte] |= (v << fb) as u8;
    // The last register's second byte is the string's terminator in Redis, and both of
    // these operations leave it zero.
    if let Some(b1) = regs.get_mut(byte + 1) {
        *b1 &= !(REGISTER_MAX >> fb8) as u8;
        *b1 |= (v >> fb8) as u8;
    }
}

/// Raises register `i` to `count` if it is lower; true if it changed (hllDenseSet).
fn dense_raise(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_put(regs, i, count);
        true
    } else {
        false
    }
}

// ---- sparse opcodes -----------------------------------------------------------------------

fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}
fn is_zero(b: u8) -> bool {
    b & 0xc0 == 0
}
fn is_xzero(b: u8) -> bool {
    b & 0xc0 == XZERO_BIT
}
fn is_val(b: u8) -> bool {
    b & VAL_BIT != 0
}
fn zero_len(b: u8) -> usize {
    (b & 0x3f) as usize + 1
}
fn xzero_len(b: u8, b1: u8) -> usize {
    ((((b & 0x3f) as usize) << 8) | b1 as usize) + 1
}
fn val_value(b: u8) -> u8 {
    ((b >> 2) & 0x1f) + 1
}
fn val_len(b: u8) -> usize {
    (b & 0x3) as usize + 1
}
fn val_op(val: u8, len: usize) -> u8 {
    (((val - 1) << 2) | (len as u8 - 1)) | VAL_BIT
}
fn xzero_set(p: &mut [u8], len: usize) {
    let l = len - 1;
    p[0] = (l >> 8) as u8 | XZERO_BIT;
    p[1] = (l & 0xff) as u8;
}

/// The dense value a sparse one stands for (hllSparseToDense): the header is kept (cached
/// cardinality included), the encoding byte becomes dense.
pub fn sparse_to_dense(s: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR_SIZE].copy_from_slice(&s[..HDR_SIZE]);
    dense[4] = ENC_DENSE;
    let regs = &mut dense[HDR_SIZE..];
    let mut idx = 0usize;
    let mut p = HDR_SIZE;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            idx += zero_len(b);
            p += 1;
        } else if is_xzero(b) {
            idx += xzero_len(b, at(s, p + 1));
            p += 2;
        } else {
            let runlen = val_len(b);
            let regval = val_value(b);
            // Past the last register: corrupt (the CVE-2025-32023 fix Redis 7.0.15's
            // maintained builds carry; before it the run was silently dropped).
            if runlen + idx > REGISTERS {
                return Err(Corrupt);
            }
            for _ in 0..runlen {
                dense_put(regs, idx, regval);
                idx += 1;
            }
            p += 1;
        }
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(dense)
}

/// Raises register `index` of a sparse value to `count` (hllSparseSet), splitting opcodes as
/// Redis does and merging equal neighbours after; promotes the value to dense when `count`
/// does not fit a VAL opcode or the value would grow past `max_bytes`. True if a register
/// changed.
fn sparse_raise(s: &mut Vec<u8>, index: usize, count: u8, max_bytes: u64) -> Result<bool, Corrupt> {
    if count > VAL_MAX_VALUE {
        return promote(s, index, count);
    }
    let sparse = HDR_SIZE;
    let mut end = s.len();
    // Step 1: find the opcode covering `index`.
    let mut p = sparse;
    let mut first = 0usize;
    let mut prev: Option<usize> = None;
    let mut span = 0usize;
    while p < end {
        let b = s[p];
        let mut oplen = 1;
        if is_zero(b) {
            span = zero_len(b);
        } else if is_val(b) {
            span = val_len(b);
        } else {
            span = xzero_len(b, at(s, p + 1));
            oplen = 2;
        }
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += oplen;
        first += span;
    }
    if span == 0 || p >= end {
        return Err(Corrupt);
    }
    let b = s[p];
    let (zero, xzero, runlen) = if is_zero(b) {
        (true, false, zero_len(b))
    } else if is_xzero(b) {
        (false, true, xzero_len(b, at(s, p + 1)))
    } else {
        (false, false, val_len(b))
    };
    let val = !zero && !xzero;

    'update: {
        if val {
            if val_value(b) >= count {
                return Ok(false);
            }
            if runlen == 1 {
                s[p] = val_op(count, 1);
                break 'update;
            }
        }
        if zero && runlen == 1 {
            s[p] = val_op(count, 1);
            break 'update;
        }
        // Step 2: split the opcode into at most three.
        let mut seq = [0u8; 5];
        let mut n = 0;
        let last = first + span - 1;
        if zero || xzero {
            let put_zeroes = |seq: &mut [u8; 5], n: &mut usize, len: usize| {
                if len > ZERO_MAX_LEN {
                    xzero_set(&mut seq[*n..], len);
                    *n += 2;
                } else {
                    seq[*n] = (len - 1) as u8;
                    *n += 1;
                }
            };
            if index != first {
                put_zeroes(&mut seq, &mut n, index - first);
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                put_zeroes(&mut seq, &mut n, last - index);
            }
        } else {
            let curval = val_value(b);
            if index != first {
                seq[n] = val_op(curval, index - first);
                n += 1;
            }
            seq[n] = val_op(count, 1);
            n += 1;
            if index != last {
                seq[n] = val_op(curval, last - index);
                n += 1;
            }
        }
        // Step 3: put the new sequence in place of the old opcode.
        let oldlen = if xzero { 2 } else { 1 };
        let delta = n as isize - oldlen as isize;
        if delta > 0 && (s.len() as u64 + delta as u64) > max_bytes {
            return promote(s, index, count);
        }
        let new_len = (s.len() as isize + delta) as usize;
        let old_end = (p + oldlen).min(s.len());
        s.splice(p..old_end, seq[..n].iter().copied());
        // A truncated XZERO at the very end (a corrupted value) loses the sequence's last
        // byte to the length, as in Redis.
        s.truncate(new_len);
        end = new_len;
    }

    // Step 4: merge adjacent VAL opcodes of equal value, scanning five opcodes from prev.
    let mut p = prev.unwrap_or(sparse);
    let mut scanlen = 5;
    while p < end && scanlen > 0 {
        scanlen -= 1;
        let b = s[p];
        if is_xzero(b) {
            p += 2;
            continue;
        } else if is_zero(b) {
            p += 1;
            continue;
        }
        if p + 1 < end && is_val(s[p + 1]) {
            let v1 = val_value(b);
            let v2 = val_value(s[p + 1]);
            if v1 == v2 {
                let len = val_len(b) + val_len(s[p + 1]);
                if len <= VAL_MAX_LEN {
                    s[p + 1] = val_op(v1, len);
                    s.remove(p);
                    end -= 1;
                    continue;
                }
            }
        }
        p += 1;
    }
    invalidate(s);
    Ok(true)
}

fn promote(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    *s = sparse_to_dense(s)?;
    dense_raise(&mut s[HDR_SIZE..], index, count);
    Ok(true)
}

/// Raises register `index` to `count` in either encoding (a sparse value may become dense);
/// true if it changed. `max_bytes` is `hll-sparse-max-bytes`.
pub fn raise(s: &mut Vec<u8>, index: usize, count: u8, max_bytes: u64) -> Result<bool, Corrupt> {
    match s[4] {
        ENC_DENSE => Ok(dense_raise(&mut s[HDR_SIZE..], index, count)),
        _ => sparse_raise(s, index, count, max_bytes),
    }
}

/// Adds one element (hllAdd); true if a register changed. The cached cardinality is left to
/// the caller, as PFADD invalidates it once for all its elements.
pub fn add(s: &mut Vec<u8>, ele: &[u8], max_bytes: u64) -> Result<bool, Corrupt> {
    let (index, count) = pattern(ele);
    raise(s, index, count, max_bytes)
}

// ---- counting -----------------------------------------------------------------------------

/// Histogram of register values (index: value, 0..=63).
type Histogram = [i64; 64];

fn dense_histogram(regs: &[u8], h: &mut Histogram) {
    for i in 0..REGISTERS {
        h[dense_get(regs, i) as usize] += 1;
    }
}

/// Sparse histogram; false if the opcodes do not cover exactly the registers.
fn sparse_histogram(ops: &[u8], h: &mut Histogram) -> bool {
    let mut idx = 0usize;
    let mut p = 0usize;
    while p < ops.len() {
        let b = ops[p];
        if is_zero(b) {
            let run = zero_len(b);
            idx += run;
            h[0] += run as i64;
            p += 1;
        } else if is_xzero(b) {
            let run = xzero_len(b, at(ops, p + 1));
            idx += run;
            h[0] += run as i64;
            p += 2;
        } else {
            let run = val_len(b);
            idx += run;
            h[val_value(b) as usize] += run as i64;
            p += 1;
        }
    }
    idx == REGISTERS
}

/// Ertl's sigma (Redis's hllSigma).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let z_prime = z;
        z += x * y;
        y += y;
        if z_prime == z {
            return z;
        }
    }
}

/// Ertl's tau (Redis's hllTau).
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let z_prime = z;
        y *= 0.5;
        // pow(1 - x, 2) in Redis's C, which compilers turn into this product.
        let d = 1.0 - x;
        z -= d * d * y;
        if z_prime == z {
            return z / 3.0;
        }
    }
}

fn estimate(h: &Histogram) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - h[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += h[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(h[0] as f64 / m);
    (ALPHA_INF * m * m / z).round() as u64
}

/// The estimated cardinality of a checked HLL value (hllCount); `Corrupt` for sparse opcodes
/// that do not cover the registers.
pub fn count(s: &[u8]) -> Result<u64, Corrupt> {
    let mut h = [0i64; 64];
    if s[4] == ENC_DENSE {
        dense_histogram(&s[HDR_SIZE..], &mut h);
    } else if !sparse_histogram(&s[HDR_SIZE..], &mut h) {
        return Err(Corrupt);
    }
    Ok(estimate(&h))
}

/// Registers as one byte each: the union PFCOUNT and PFMERGE build.
pub type Raw = [u8; REGISTERS];

/// The estimated cardinality of a union built with [`merge_into`].
pub fn count_raw(regs: &Raw) -> u64 {
    let mut h = [0i64; 64];
    for &r in regs.iter() {
        h[r as usize] += 1;
    }
    estimate(&h)
}

/// `max[i] = MAX(max[i], hll[i])` for a checked HLL value (hllMerge).
pub fn merge_into(max: &mut Raw, s: &[u8]) -> Result<(), Corrupt> {
    if s[4] == ENC_DENSE {
        let regs = &s[HDR_SIZE..];
        for (i, m) in max.iter_mut().enumerate() {
            let v = dense_get(regs, i);
            if v > *m {
                *m = v;
            }
        }
        return Ok(());
    }
    let mut i = 0usize;
    let mut p = HDR_SIZE;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            i += zero_len(b);
            p += 1;
        } else if is_xzero(b) {
            i += xzero_len(b, at(s, p + 1));
            p += 2;
        } else {
            let run = val_len(b);
            let v = val_value(b);
            if run + i > REGISTERS {
                return Err(Corrupt); // as in sparse_to_dense
            }
            for m in &mut max[i..i + run] {
                if v > *m {
                    *m = v;
                }
            }
            i += run;
            p += 1;
        }
    }
    if i != REGISTERS {
        return Err(Corrupt);
    }
    Ok(())
}

/// PFMERGE's write of a union into its destination (an HLL value, sparse or dense): every
/// non-zero register raised in turn, so a sparse destination grows (and is promoted) exactly
/// as in Redis; the cached cardinality is invalidated.
pub fn store_raw(s: &mut Vec<u8>, max: &Raw, max_bytes: u64) {
    for (j, &v) in max.iter().enumerate() {
        if v != 0 {
            // Redis ignores a failure here: the destination was read (and checked) first.
            let _ = raise(s, j, v, max_bytes);
        }
    }
    invalidate(s);
}

/// PFDEBUG DECODE's text for a sparse value: `z:len`, `Z:len` and `v:value,len` opcodes.
pub fn decode(s: &[u8]) -> String {
    let mut out = String::new();
    let mut p = HDR_SIZE;
    while p < s.len() {
        let b = s[p];
        if is_zero(b) {
            out.push_str(&format!("z:{} ", zero_len(b)));
            p += 1;
        } else if is_xzero(b) {
            out.push_str(&format!("Z:{} ", xzero_len(b, at(s, p + 1))));
            p += 2;
        } else {
            out.push_str(&format!("v:{},{} ", val_value(b), val_len(b)));
            p += 1;
        }
    }
    out.trim_matches(' ').to_string()
}

/// Every register of a dense value, in order (PFDEBUG GETREG after its conversion).
pub fn registers(dense: &[u8]) -> Vec<u8> {
    let regs = &dense[HDR_SIZE..];
    (0..REGISTERS).map(|i| dense_get(regs, i)).collect()
}

/// PFSELFTEST: the dense register accessors against a plain array, then the estimate of 1 to
/// 10,000,000 distinct elements added to a dense and a sparse HLL together (the two must
/// agree, the sparse one must stay sparse while small, the error must stay under six standard
/// errors). `rand` stands for C's rand(); Redis's error texts are returned on failure.
pub fn selftest(max_bytes: u64, rand: impl FnMut() -> u32) -> Result<(), String> {
    selftest_upto(max_bytes, rand, 1000, 10_000_000)
}

/// [`selftest`] with `cycles` rounds of the register test and `elements` elements (unit tests
/// use fewer).
fn selftest_upto(
    max_bytes: u64,
    mut rand: impl FnMut() -> u32,
    cycles: usize,
    elements: u64,
) -> Result<(), String> {
    let mut dense = vec![0u8; DENSE_SIZE];
    let mut bytes = [0u8; REGISTERS];
    for _ in 0..cycles {
        for (i, b) in bytes.iter_mut().enumerate() {
            let r = (rand() & REGISTER_MAX) as u8;
            *b = r;
            dense_put(&mut dense[HDR_SIZE..], i, r);
        }
        for (i, &b) in bytes.iter().enumerate() {
            let v = dense_get(&dense[HDR_SIZE..], i);
            if v != b {
                return Err(format!("TESTFAILED Register {i} should be {b} but is {v}"));
            }
        }
    }

    for b in &mut dense[HDR_SIZE..] {
        *b = 0;
    }
    let mut sparse = new_sparse();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint: i64 = 1;
    let seed = rand() as u64 | (rand() as u64) << 32;
    for j in 1..=elements {
        let ele = (j ^ seed).to_le_bytes();
        let (index, cnt) = pattern(&ele);
        dense_raise(&mut dense[HDR_SIZE..], index, cnt);
        let _ = raise(&mut sparse, index, cnt, max_bytes);
        if j as i64 != checkpoint {
            continue;
        }
        if j < max_bytes / 2 && sparse[4] != ENC_SPARSE {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let dense_card = count(&dense).unwrap_or(0);
        if dense_card != count(&sparse).unwrap_or(0) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = (checkpoint - dense_card as i64).unsigned_abs();
        let mut maxerr = (relerr * 6.0 * checkpoint as f64).ceil() as u64;
        if j == 10 {
            maxerr = 1;
        }
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
#[path = "hll_tests.rs"]
mod tests;
