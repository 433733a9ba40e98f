//! Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD, as t_zset.c's
//! zunionInterDiffGenericCommand computes them: inputs may be sorted sets or plain sets (whose
//! members score 1), WEIGHTS multiply (a NaN product counts as 0), AGGREGATE SUM/MIN/MAX
//! (inf + -inf sums to 0), and results come out sorted by score, then member.

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::families::zset_range::store_zset;
use crate::cmd::families::zsets::with_scores;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{read_many, wrongtype, zset_limits};
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::reply::{CmdResult, Reply};
use crate::types::set::Set;
use crate::types::zset::ZSet;
use bytes::Bytes;
use std::collections::HashMap;

pub const COMMANDS: &[Row] = &[
    Row::new("zunion", zunion),
    Row::new("zinter", zinter),
    Row::new("zdiff", zdiff),
    Row::new("zunionstore", zunionstore),
    Row::new("zinterstore", zinterstore),
    Row::new("zdiffstore", zdiffstore),
    Row::new("zintercard", zintercard),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

/// zunionInterAggregate.
fn aggregate(target: &mut f64, val: f64, how: Aggregate) {
    match how {
        Aggregate::Sum => {
            *target += val;
            if target.is_nan() {
                *target = 0.0;
            }
        }
        Aggregate::Min => {
            if val < *target {
                *target = val;
            }
        }
        Aggregate::Max => {
            if val > *target {
                *target = val;
            }
        }
    }
}

/// One input: a sorted set, a set (every score 1) or a missing key (empty).
#[derive(Clone, Copy)]
enum Src<'a> {
    None,
    Set(&'a Set),
    Z(&'a ZSet),
}

impl Src<'_> {
    fn len(&self) -> usize {
        match self {
            Src::None => 0,
            Src::Set(s) => s.len(),
            Src::Z(z) => z.len(),
        }
    }
    fn find(&self, m: &[u8]) -> Option<f64> {
        match self {
            Src::None => None,
            Src::Set(s) => s.contains(m).then_some(1.0),
            Src::Z(z) => z.score(m),
        }
    }
    /// Every (member, score), owned (set members of an intset are formatted on the fly).
    fn members(&self) -> Vec<(Vec<u8>, f64)> {
        match self {
            Src::None => Vec::new(),
            Src::Set(s) => s.iter().map(|m| (m.to_vec(), 1.0)).collect(),
            Src::Z(z) => z.iter().map(|(m, s)| (m.to_vec(), s)).collect(),
        }
    }
    fn same(&self, other: &Src) -> bool {
        match (self, other) {
            (Src::Set(a), Src::Set(b)) => std::ptr::eq(*a, *b),
            (Src::Z(a), Src::Z(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

/// The parsed command.
struct Spec {
    weights: Vec<f64>,
    how: Aggregate,
    withscores: bool,
    limit: usize,
}

/// The result: members with scores, sorted, or just a count (ZINTERCARD).
enum Out {
    Members(ZSet),
    Card(usize),
}

fn compute(srcs: &[Src], spec: &Spec, op: Op, card_only: bool) -> Out {
    let mut order: Vec<(Src, f64)> = srcs
        .iter()
        .copied()
        .zip(spec.weights.iter().copied())
        .collect();
    if op != Op::Diff {
        order.sort_by_key(|(s, _)| s.len());
    }
    // Built as a skiplist, as Redis's createZsetObject; the store converts back if small.
    let mut dst = ZSet::new_skiplist();
    let big = crate::types::zset::ZSetLimits {
        max_listpack_entries: 0,
        max_listpack_value: 0,
    };
    let mut card = 0usize;
    match op {
        Op::Inter => {
            let (first, w0) = order[0];
            if first.len() > 0 {
                for (m, s) in first.members() {
                    let mut score = w0 * s;
                    if score.is_nan() {
                        score = 0.0;
                    }
                    let mut all = true;
                    for (src, w) in &order[1..] {
                        let v = if src.same(&first) {
                            Some(s)
                        } else {
                            src.find(&m)
                        };
                        match v {
                            Some(v) => aggregate(&mut score, v * w, spec.how),
                            None => {
                                all = false;
                                break;
                            }
                        }
                    }
                    if !all {
                        continue;
                    }
                    if card_only {
                        card += 1;
                        if spec.limit > 0 && card >= spec.limit {
                            break;
                        }
                    } else {
                        dst.insert_or_update(&m, score, big);
                    }
                }
            }
        }
        Op::Union => {
            let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
            for (src, w) in &order {
                for (m, s) in src.members() {
                    let mut score = w * s;
                    if score.is_nan() {
                        score = 0.0;
                    }
                    match acc.get_mut(&m) {
                        Some(t) => aggregate(t, score, spec.how),
                        None => {
                            acc.insert(m, score);
                        }
                    }
                }
            }
            for (m, s) in acc {
                dst.insert_or_update(&m, s, big);
            }
        }
        Op::Diff => {
            let (first, _) = order[0];
            for (m, s) in first.members() {
                if !order[1..].iter().any(|(src, _)| src.find(&m).is_some()) {
                    dst.insert_or_update(&m, s, big);
                }
            }
        }
    }
    if card_only {
        Out::Card(card)
    } else {
        Out::Members(dst)
    }
}

/// zunionInterDiffGenericCommand: `numkeys` at `a[at]`, then the keys and options; `dst`
/// for the STORE forms.
fn generic(
    ctx: &mut Ctx,
    a: &[Bytes],
    at: usize,
    dst: Option<&Bytes>,
    op: Op,
    card_only: bool,
) -> CmdResult {
    let setnum = args::int(&a[at])?;
    if setnum < 1 {
        let name = String::from_utf8_lossy(&a[0]).to_ascii_lowercase();
        return Err(error::needs_one_key(&name));
    }
    if setnum as u64 > (a.len() - (at + 1)) as u64 {
        return Err(RedisError::new(error::SYNTAX));
    }
    let n = setnum as usize;
    let keys = &a[at + 1..at + 1 + n];
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let resp3 = ctx.client.resp > 2;
    let limits = zset_limits(ctx);
    // Which keys were looked up (Redis stops at the first of another type) and found.
    let mut looked: Vec<bool> = Vec::with_capacity(n);
    // Options are parsed after the lookups and type checks, as Redis does.
    let computed = read_many(ctx, &refs, |vals| -> Result<(Out, bool), RedisError> {
        let mut srcs = Vec::with_capacity(n);
        for v in vals {
            looked.push(v.is_some());
            srcs.push(match v {
                None => Src::None,
                Some(Value::Set(s)) => Src::Set(s),
                Some(Value::ZSet(z)) => Src::Z(z),
                Some(_) => return Err(wrongtype()),
            });
        }
        let spec = parse_options(a, at + 1 + n, n, op, dst.is_some(), card_only)?;
        Ok((compute(&srcs, &spec, op, card_only), spec.withscores))
    });
    // Each lookup counts as a hit or a miss (with its keymiss event), as lookupKeyRead does,
    // whether or not the options were valid.
    for (k, hit) in keys.iter().zip(looked) {
        crate::cmd::families::strings::note_read(ctx, k, hit);
    }
    let (out, withscores) = computed?;
    match (out, dst) {
        (Out::Card(c), _) => Ok(Reply::Int(c as i64)),
        (Out::Members(mut z), Some(dst)) => {
            z.convert_to_listpack_if_small(limits);
            let event = match op {
                Op::Union => "zunionstore",
                Op::Inter => "zinterstore",
                Op::Diff => "zdiffstore",
            };
            Ok(store_zset(ctx, dst, z, event))
        }
        (Out::Members(z), None) => Ok(Reply::Array(with_scores(z.iter(), withscores, resp3))),
    }
}

/// The options after the keys, with Redis's rules for which command takes which.
fn parse_options(
    a: &[Bytes],
    from: usize,
    n: usize,
    op: Op,
    store: bool,
    card_only: bool,
) -> Result<Spec, RedisError> {
    let mut spec = Spec {
        weights: vec![1.0; n],
        how: Aggregate::Sum,
        withscores: false,
        limit: 0,
    };
    // WEIGHTS and AGGREGATE for ZUNION and ZINTER, LIMIT for ZINTERCARD. An option of another
    // command ends in a syntax error below, whether or not its value was taken.
    let unions = op != Op::Diff && !card_only;
    let mut args = Args::new(a, from);
    while let Some(opt) = args.next() {
        let left = args.remaining();
        if unions && is(opt, "weights") && left >= n {
            let ws = args.take(n).unwrap_or_default();
            for (w, arg) in spec.weights.iter_mut().zip(ws) {
                // getDoubleFromObjectOrReply: an overflow or underflow (1e310, 1e-400) is refused.
                *w = crate::num::get_double(arg).ok_or(RedisError::new(error::WEIGHT_NOT_FLOAT))?;
            }
        } else if let Some(how) = args.value_of(opt, "aggregate").filter(|_| unions) {
            spec.how = if is(how, "sum") {
                Aggregate::Sum
            } else if is(how, "min") {
                Aggregate::Min
            } else if is(how, "max") {
                Aggregate::Max
            } else {
                return Err(RedisError::new(error::SYNTAX));
            };
        } else if !store && !card_only && is(opt, "withscores") {
            spec.withscores = true;
        } else if let Some(l) = args.value_of(opt, "limit").filter(|_| card_only) {
            spec.limit = match args::parse_i64(l) {
                Some(l) if l >= 0 => l as usize,
                _ => return Err(RedisError::new(error::LIMIT_NEGATIVE)),
            };
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    Ok(spec)
}

fn zunion(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 1, None, Op::Union, false)
}

fn zinter(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 1, None, Op::Inter, false)
}

fn zdiff(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 1, None, Op::Diff, false)
}

fn zunionstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 2, Some(&a[1]), Op::Union, false)
}

fn zinterstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 2, Some(&a[1]), Op::Inter, false)
}

fn zdiffstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 2, Some(&a[1]), Op::Diff, false)
}

fn zintercard(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    generic(ctx, a, 1, None, Op::Inter, true)
}
