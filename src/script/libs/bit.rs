//! LuaBitOp 1.0 as Redis bundles it: 32-bit operations on Lua numbers.

use super::*;
use crate::script::lib_fn::{lib_fn, Out};
use mlua::{Function, Lua, Result, Table, Value};

/// LuaBitOp's normalisation: round to nearest, keep the low 32 bits, signed.
fn tobit(d: f64) -> i32 {
    if !d.is_finite() {
        return 0;
    }
    let r = d.round_ties_even().rem_euclid(4294967296.0);
    r as u64 as u32 as i32
}

type BitOp = fn(i32, i32) -> i32;
type BitUnary = (&'static str, fn(i32) -> i32);

pub fn bit(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    let unary: [BitUnary; 3] = [
        ("tobit", |x| x),
        ("bnot", |x| !x),
        ("bswap", |x| x.swap_bytes()),
    ];
    for (name, f) in unary {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                match check_number(v.first(), 1) {
                    Ok(x) => Ok(Out::Ok(vec![num(f(tobit(x)) as f64)])),
                    Err(e) => Ok(e),
                }
            })?,
        )?;
    }
    let folds: [(&'static str, BitOp); 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, f) in folds {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                let mut acc = match check_number(v.first(), 1) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                for i in 1..v.len() {
                    match check_number(v.get(i), i + 1) {
                        Ok(x) => acc = f(acc, tobit(x)),
                        Err(e) => return Ok(e),
                    }
                }
                Ok(Out::Ok(vec![num(acc as f64)]))
            })?,
        )?;
    }
    let shifts: [(&'static str, BitOp); 5] = [
        ("lshift", |x, n| ((x as u32) << (n & 31)) as i32),
        ("rshift", |x, n| ((x as u32) >> (n & 31)) as i32),
        ("arshift", |x, n| x >> (n & 31)),
        ("rol", |x, n| (x as u32).rotate_left((n & 31) as u32) as i32),
        ("ror", |x, n| {
            (x as u32).rotate_right((n & 31) as u32) as i32
        }),
    ];
    for (name, f) in shifts {
        t.raw_set(
            name,
            lib_fn(lua, mt, move |_, a| {
                let v: Vec<Value> = a.into_iter().collect();
                let x = match check_number(v.first(), 1) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                let n = match check_number(v.get(1), 2) {
                    Ok(x) => tobit(x),
                    Err(e) => return Ok(e),
                };
                Ok(Out::Ok(vec![num(f(x, n) as f64)]))
            })?,
        )?;
    }
    t.raw_set(
        "tohex",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let x = match check_number(v.first(), 1) {
                Ok(x) => tobit(x) as u32,
                Err(e) => return Ok(e),
            };
            let n = match v.get(1) {
                None | Some(Value::Nil) => 8,
                other => match check_number(other, 2) {
                    Ok(n) => tobit(n),
                    Err(e) => return Ok(e),
                },
            };
            let upper = n < 0;
            let n = n.unsigned_abs().min(8) as usize;
            let s = if upper {
                format!("{x:08X}")
            } else {
                format!("{x:08x}")
            };
            Ok(Out::Ok(vec![Value::String(
                lua.create_string(&s[8 - n..])?,
            )]))
        })?,
    )?;
    Ok(t)
}
