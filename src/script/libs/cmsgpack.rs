//! lua-cmsgpack as Redis bundles it: MessagePack encoding of Lua values.

use super::*;
use crate::script::lib_fn::{lib_fn, Out};
use mlua::{Function, Lua, Result, Table, Value};

/// mp_encode_lua_type; false when `poll` says the script must stop.
fn mp_encode(out: &mut Vec<u8>, v: &Value, depth: usize, poll: &mut Poll) -> bool {
    if poll.stop() {
        return false;
    }
    match v {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => mp_int(out, *i),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.is_finite() && n.abs() < 9.2e18 {
                mp_int(out, *n as i64);
            } else if (*n as f32) as f64 == *n {
                out.push(0xca);
                out.extend_from_slice(&(*n as f32).to_be_bytes());
            } else {
                out.push(0xcb);
                out.extend_from_slice(&n.to_be_bytes());
            }
        }
        Value::String(s) => {
            let b = s.as_bytes();
            let l = b.len();
            if l < 32 {
                out.push(0xa0 | l as u8);
            } else if l <= 0xff {
                out.extend_from_slice(&[0xd9, l as u8]);
            } else if l <= 0xffff {
                out.push(0xda);
                out.extend_from_slice(&(l as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&(l as u32).to_be_bytes());
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if depth < 16 => {
            let len = t.raw_len();
            let count = t.pairs::<Value, Value>().count();
            if len > 0 && len == count {
                mp_len(out, len, 0x90, 0xdc);
                for i in 1..=len {
                    let v: Value = t.raw_get(i).unwrap_or(Value::Nil);
                    if !mp_encode(out, &v, depth + 1, poll) {
                        return false;
                    }
                }
            } else {
                mp_len(out, count, 0x80, 0xde);
                for (k, v) in t.pairs::<Value, Value>().flatten() {
                    if !mp_encode(out, &k, depth + 1, poll) || !mp_encode(out, &v, depth + 1, poll)
                    {
                        return false;
                    }
                }
            }
        }
        _ => out.push(0xc0),
    }
    true
}

fn mp_len(out: &mut Vec<u8>, n: usize, fix: u8, big: u8) {
    if n < 16 {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(big);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(big + 1);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

fn mp_int(out: &mut Vec<u8>, i: i64) {
    if (0..128).contains(&i) {
        out.push(i as u8);
    } else if (-32..0).contains(&i) {
        out.push(i as i8 as u8);
    } else if i >= 0 {
        if i <= 0xff {
            out.extend_from_slice(&[0xcc, i as u8]);
        } else if i <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(i as u16).to_be_bytes());
        } else if i <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(i as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(i as u64).to_be_bytes());
        }
    } else if i >= -128 {
        out.extend_from_slice(&[0xd0, i as i8 as u8]);
    } else if i >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(i as i16).to_be_bytes());
    } else if i >= i32::MIN as i64 {
        out.push(0xd2);
        out.extend_from_slice(&(i as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&i.to_be_bytes());
    }
}

/// Why decoding stopped: mp_cur's errors, lua_settable's refusal of a nil/NaN key, and
/// luaL_checkstack's refusal (raised with the caller's position).
enum MpErr {
    Eof,
    BadFmt,
    Raise(&'static str),
    Where(&'static str),
    Lua(mlua::Error),
    /// The script was asked to stop ([`Poll`]).
    Stopped,
}

impl From<mlua::Error> for MpErr {
    fn from(e: mlua::Error) -> Self {
        MpErr::Lua(e)
    }
}

type MpResult = std::result::Result<Value, MpErr>;

/// An array or map whose elements are being decoded.
enum Open {
    Arr {
        t: Table,
        next: usize,
        len: usize,
    },
    Map {
        t: Table,
        left: usize,
        key: Option<Value>,
    },
}

impl Open {
    fn is_empty(&self) -> bool {
        match self {
            Open::Arr { len, .. } => *len == 0,
            Open::Map { left, .. } => *left == 0,
        }
    }
}

/// What one decoding step produced.
enum Step {
    Value(Value),
    Open(Open),
}

struct MpDec<'a> {
    s: &'a [u8],
    i: usize,
    /// Lua stack slots lua_cmsgpack.c would hold in the C function's frame now (arguments,
    /// values decoded so far, tables and keys being filled): its luaL_checkstack calls refuse
    /// past LUAI_MAXCSTACK, and so does this decoder, at the same points and with the same
    /// messages, so no call can return more values than a C function may.
    slots: usize,
    poll: Poll<'a>,
}

const TOO_MANY_VALUES: &str =
    "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)";

impl MpDec<'_> {
    fn take(&mut self, n: usize) -> std::result::Result<&[u8], MpErr> {
        let end = self.i.checked_add(n).ok_or(MpErr::Eof)?;
        let b = self.s.get(self.i..end).ok_or(MpErr::Eof)?;
        self.i = end;
        Ok(b)
    }
    fn be(&mut self, n: usize) -> std::result::Result<u64, MpErr> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }
    /// mp_decode_to_lua_type for one value, nested arrays and maps included. Iterative: the
    /// containers being filled live on a heap stack, so nesting costs no native stack (Redis
    /// nests up to its Lua C stack limit, about 4000 levels, which recursion here could not).
    fn value(&mut self, lua: &Lua) -> MpResult {
        let mut open: Vec<Open> = Vec::new();
        loop {
            if self.poll.stop() {
                return Err(MpErr::Stopped);
            }
            let mut v = match self.step(lua)? {
                Step::Value(v) => v,
                Step::Open(o) => {
                    if o.is_empty() {
                        self.close(o)
                    } else {
                        open.push(o);
                        continue;
                    }
                }
            };
            // Hand `v` to the innermost container, closing every container it completes.
            loop {
                let Some(top) = open.last_mut() else {
                    return Ok(v);
                };
                let full = match top {
                    Open::Arr { t, next, len } => {
                        t.raw_set(*next, v)?;
                        *next += 1;
                        *next > *len
                    }
                    Open::Map { t, left, key } => match key.take() {
                        None => {
                            // The key stays on the C stack while its value is decoded.
                            *key = Some(v);
                            self.slots += 1;
                            false
                        }
                        Some(k) => {
                            self.slots -= 1;
                            match k {
                                Value::Nil => return Err(MpErr::Raise("table index is nil")),
                                Value::Number(n) if n.is_nan() => {
                                    return Err(MpErr::Raise("table index is NaN"))
                                }
                                k => t.raw_set(k, v)?,
                            }
                            *left -= 1;
                            *left == 0
                        }
                    },
                };
                if !full {
                    break;
                }
                let done = open.pop().expect("open container");
                v = self.close(done);
            }
        }
    }

    /// One mp_decode_to_lua_type step: a scalar, or a container opened (its table pushed).
    fn step(&mut self, lua: &Lua) -> std::result::Result<Step, MpErr> {
        if self.slots + 1 > super::MAX_C_STACK {
            return Err(MpErr::Where(TOO_MANY_VALUES));
        }
        let c = *self.s.get(self.i).ok_or(MpErr::Eof)?;
        self.i += 1;
        let n = |x: f64| Ok(Step::Value(Value::Number(x)));
        let v = |x: Value| Ok(Step::Value(x));
        match c {
            0x00..=0x7f => n(c as f64),
            0xe0..=0xff => n(c as i8 as f64),
            0xc0 => v(Value::Nil),
            0xc2 => v(Value::Boolean(false)),
            0xc3 => v(Value::Boolean(true)),
            0xcc => n(self.be(1)? as f64),
            0xcd => n(self.be(2)? as f64),
            0xce => n(self.be(4)? as f64),
            0xcf => n(self.be(8)? as f64),
            0xd0 => n(self.be(1)? as u8 as i8 as f64),
            0xd1 => n(self.be(2)? as u16 as i16 as f64),
            0xd2 => n(self.be(4)? as u32 as i32 as f64),
            0xd3 => n(self.be(8)? as i64 as f64),
            0xca => n(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => n(f64::from_bits(self.be(8)?)),
            0xa0..=0xbf => self.str(lua, (c & 0x1f) as usize),
            0xd9 => {
                let l = self.be(1)? as usize;
                self.str(lua, l)
            }
            0xda => {
                let l = self.be(2)? as usize;
                self.str(lua, l)
            }
            0xdb => {
                let l = self.be(4)? as usize;
                self.str(lua, l)
            }
            0x90..=0x9f => self.arr(lua, (c & 0x0f) as usize),
            0xdc => {
                let l = self.be(2)? as usize;
                self.arr(lua, l)
            }
            0xdd => {
                let l = self.be(4)? as usize;
                self.arr(lua, l)
            }
            0x80..=0x8f => self.map(lua, (c & 0x0f) as usize),
            0xde => {
                let l = self.be(2)? as usize;
                self.map(lua, l)
            }
            0xdf => {
                let l = self.be(4)? as usize;
                self.map(lua, l)
            }
            _ => Err(MpErr::BadFmt),
        }
    }

    fn str(&mut self, lua: &Lua, l: usize) -> std::result::Result<Step, MpErr> {
        let b = self.take(l)?;
        Ok(Step::Value(Value::String(lua.create_string(b)?)))
    }

    /// mp_decode_to_lua_array's start: the table, then luaL_checkstack for the index.
    fn arr(&mut self, lua: &Lua, len: usize) -> std::result::Result<Step, MpErr> {
        // No capacity from the declared length: a short input ends with Eof.
        let t = lua.create_table()?;
        if self.slots + 2 > super::MAX_C_STACK {
            return Err(MpErr::Where(
                "stack overflow (in function mp_decode_to_lua_array)",
            ));
        }
        // The table and the index being filled.
        self.slots += 2;
        Ok(Step::Open(Open::Arr { t, next: 1, len }))
    }

    /// mp_decode_to_lua_hash's start: the table.
    fn map(&mut self, lua: &Lua, left: usize) -> std::result::Result<Step, MpErr> {
        let t = lua.create_table()?;
        self.slots += 1;
        Ok(Step::Open(Open::Map { t, left, key: None }))
    }

    /// A container is complete: its slots are released and its table is the value.
    fn close(&mut self, o: Open) -> Value {
        match o {
            Open::Arr { t, .. } => {
                self.slots -= 2;
                Value::Table(t)
            }
            Open::Map { t, .. } => {
                self.slots -= 1;
                Value::Table(t)
            }
        }
    }
}

/// mp_unpack_full: `limit` values from byte `offset` (both 0: all values, no offset result).
/// `nargs`: the arguments left on the C stack (unpack_one and unpack_limit pop all but the
/// string).
fn mp_unpack_full(lua: &Lua, s: &[u8], limit: i64, offset: i64, nargs: usize) -> Result<Out> {
    let decode_all = limit == 0 && offset == 0;
    let len = s.len();
    if offset < 0 || limit < 0 {
        // lua_cmsgpack.c prints the input length where it says "limit".
        return Ok(Out::Where(format!(
            "Invalid request to unpack with offset of {} and limit of {}.",
            offset as i32, len as i32
        )));
    } else if offset as u64 > len as u64 {
        return Ok(Out::Where(format!(
            "Start offset {} greater than input length {}.",
            offset as i32, len as i32
        )));
    }
    let limit = if decode_all { i32::MAX as i64 } else { limit };
    let mut d = MpDec {
        s: &s[offset as usize..],
        i: 0,
        slots: nargs,
        poll: Poll::new(lua),
    };
    let mut out = Vec::new();
    let mut cnt = 0i64;
    while d.i < d.s.len() && cnt < limit {
        match d.value(lua) {
            Ok(v) => out.push(v),
            Err(MpErr::Eof) => return Ok(Out::Where("Missing bytes in input.".into())),
            Err(MpErr::BadFmt) => return Ok(Out::Where("Bad data format in input.".into())),
            Err(MpErr::Raise(m)) => return Ok(Out::Raise(Value::String(lua.create_string(m)?))),
            Err(MpErr::Where(m)) => return Ok(Out::Where(m.into())),
            Err(MpErr::Lua(e)) => return Err(e),
            Err(MpErr::Stopped) => return Ok(Out::Stopped),
        }
        cnt += 1;
        d.slots += 1;
    }
    if !decode_all {
        if d.slots + 1 > super::MAX_C_STACK {
            return Ok(Out::Where(
                "stack overflow (in function mp_unpack_full)".into(),
            ));
        }
        let left = d.s.len() - d.i;
        let next = if left == 0 { -1 } else { (len - left) as i64 };
        out.insert(0, num(next as f64));
    }
    Ok(Out::Ok(out))
}

pub fn cmsgpack(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lib_fn(lua, mt, |lua, a| {
            if a.is_empty() {
                return Ok(Out::Arg(0, "MessagePack pack needs input.".into()));
            }
            let mut out = Vec::new();
            let mut poll = Poll::new(lua);
            for v in a.iter() {
                if !mp_encode(&mut out, v, 0, &mut poll) {
                    return Ok(Out::Stopped);
                }
            }
            Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)]))
        })?,
    )?;
    t.raw_set(
        "unpack",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, 0, 0, v.len())
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let offset = tri!(opt_integer(v.get(1), 2, 0)) as i32 as i64;
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, 1, offset, 1)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lib_fn(lua, mt, |lua, a| {
            let v: Vec<Value> = a.into_iter().collect();
            let limit = tri!(check_integer(v.get(1), 2)) as i32 as i64;
            let offset = tri!(opt_integer(v.get(2), 3, 0)) as i32 as i64;
            let s = tri!(check_string(lua, v.first(), 1)?);
            mp_unpack_full(lua, &s, limit, offset, 1)
        })?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.raw_set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.raw_set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}
