//! Redis's math.random and math.randomseed (redisLrand48), the same sequence on every platform.

use super::*;
use crate::script::lib_fn::{lib_fn, Out};
use mlua::{Function, Lua, Result, Table, Value};

/// rand.c's redisLrand48 state after `redisSrand48(seed)`.
pub fn srand48_state(seed: i32) -> u64 {
    let s = seed as u32 as u64;
    ((s >> 16) << 32) | ((s & 0xffff) << 16) | 0x330E
}

/// redisLrand48: one step of the 48-bit LCG, the top 31 bits.
fn lrand48(state: &std::sync::atomic::AtomicU64) -> i32 {
    use std::sync::atomic::Ordering;
    let x = state.load(Ordering::Relaxed);
    let x = 0x5DEECE66Du64.wrapping_mul(x).wrapping_add(0xB) & ((1u64 << 48) - 1);
    state.store(x, Ordering::Relaxed);
    (x >> 17) as i32
}

/// luaL_checkint.
fn check_int(v: Option<&Value>, i: usize) -> std::result::Result<i32, Out> {
    check_integer(v, i).map(|n| n as i32)
}

fn with_rand<T>(lua: &Lua, f: impl FnOnce(&std::sync::atomic::AtomicU64) -> T) -> T {
    match lua.app_data_ref::<crate::script::host::RunCtx>() {
        Some(rc) => f(&rc.rand),
        None => f(&std::sync::atomic::AtomicU64::new(srand48_state(0))),
    }
}

/// Redis's redis_math_random / redis_math_randomseed, which replace Lua's own so scripts get
/// the same sequence on every platform.
pub fn math_random(lua: &Lua, mt: &Function, math: &Table) -> Result<()> {
    math.raw_set(
        "random",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let max = i32::MAX;
            let r = with_rand(lua, |s| (lrand48(s) % max) as f64 / max as f64);
            let x = match v.len() {
                0 => r,
                1 => {
                    let u = tri!(check_int(v.first(), 1));
                    if u < 1 {
                        return Ok(Out::Arg(1, "interval is empty".into()));
                    }
                    (r * u as f64).floor() + 1.0
                }
                2 => {
                    let l = tri!(check_int(v.first(), 1));
                    let u = tri!(check_int(v.get(1), 2));
                    if l > u {
                        return Ok(Out::Arg(2, "interval is empty".into()));
                    }
                    (r * u.wrapping_sub(l).wrapping_add(1) as f64).floor() + l as f64
                }
                _ => return Ok(Out::Where("wrong number of arguments".into())),
            };
            Ok(Out::Ok(vec![num(x)]))
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let seed = tri!(check_int(v.first(), 1));
            with_rand(lua, |s| {
                s.store(srand48_state(seed), std::sync::atomic::Ordering::Relaxed)
            });
            Ok(Out::Ok(vec![]))
        })?,
    )?;
    Ok(())
}
