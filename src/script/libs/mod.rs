//! Redis's bundled Lua libraries, rewritten in Rust: `bit` (LuaBitOp), `cjson` (lua-cjson 2.1
//! with Redis's defaults), `struct` (Roberto's struct, common formats), `cmsgpack` and
//! Redis's own `math.random`. Errors are raised with the caller's position, as luaL_error
//! does. This file holds the argument checks they share (lauxlib's, with its texts).

/// LUAI_MAXCSTACK: the most Lua stack slots a C function may hold (its arguments and the
/// results it pushes). Redis's C libraries hit it through luaL_checkstack with their own
/// messages; the Rust ports check it where they do, so a call never returns more values than
/// Lua can take (mlua would fail to push them).
pub(crate) const MAX_C_STACK: usize = 8000;

mod bit;
mod cjson;
mod cmsgpack;
mod math;
mod structlib;

pub use bit::bit;
pub use cjson::cjson;
pub use cmsgpack::cmsgpack;
pub use math::math_random;
pub use structlib::structlib;

use super::lib_fn::Out;
use mlua::{Lua, Result, Value};

/// Steps of a library loop between two looks at the kill request.
const POLL_EVERY: u32 = 1024;

/// A library loop's look, every [`POLL_EVERY`] steps, at whether the script was asked to
/// stop (SCRIPT KILL): the patched Lua's own long loops check its interrupt flag, and these
/// loops (encoding or decoding a big table) run in Rust where no Lua check is.
pub(super) struct Poll<'a> {
    lua: &'a Lua,
    steps: u32,
}

impl<'a> Poll<'a> {
    pub(super) fn new(lua: &'a Lua) -> Self {
        Poll { lua, steps: 0 }
    }

    /// One step: true when the loop must stop and answer [`Out::Stopped`].
    pub(super) fn stop(&mut self) -> bool {
        self.steps = self.steps.wrapping_add(1);
        if !self.steps.is_multiple_of(POLL_EVERY) {
            return false;
        }
        let mut pending = false;
        // SAFETY: reads the state's interrupt flag; a soft interrupt (2) runs its callback
        // and goes on. Should a kill land between the read and that call, it unwinds, which
        // the protected call catches: the loop stops then too.
        let r = unsafe {
            self.lua.exec_raw::<()>((), |l| {
                let flag = std::ptr::read_volatile(super::ffi::lua_getinterrupt(l));
                if flag == 2 {
                    super::ffi::lua_checkinterrupt(l);
                }
                pending = flag == 1;
            })
        };
        pending || r.is_err()
    }
}

/// Why a library's encoder or decoder gave up: an error to raise with the caller's
/// position, or a kill ([`Poll`]).
pub(super) enum Fail {
    Msg(String),
    Stopped,
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Msg(s)
    }
}

impl Fail {
    /// What the library function answers.
    pub(super) fn out(self) -> Out {
        match self {
            Fail::Msg(m) => Out::Where(m),
            Fail::Stopped => Out::Stopped,
        }
    }
}

/// `?` for library functions: a Lua error result ends the call.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(out) => return Ok(out),
        }
    };
}
pub(crate) use tri;

pub(super) fn type_name(v: Option<&Value>) -> &'static str {
    match v {
        None => "no value",
        Some(Value::Nil) => "nil",
        Some(Value::Boolean(_)) => "boolean",
        Some(Value::Integer(_)) | Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Table(_)) => "table",
        Some(Value::Function(_)) => "function",
        Some(Value::Thread(_)) => "thread",
        _ => "userdata",
    }
}

/// luaL_checknumber: numbers and numeric strings; the error is luaL_typerror's.
pub(super) fn check_number(v: Option<&Value>, i: usize) -> std::result::Result<f64, Out> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => match s.to_str().ok().and_then(|t| str2d(&t)) {
            Some(n) => Ok(n),
            None => Err(type_err(i, "number", v)),
        },
        other => Err(type_err(i, "number", other)),
    }
}

/// luaL_typerror: `bad argument #i to 'f' (T expected, got U)`.
pub(super) fn type_err(i: usize, expected: &str, got: Option<&Value>) -> Out {
    Out::Arg(
        i as i32,
        format!("{expected} expected, got {}", type_name(got)),
    )
}

/// luaO_str2d: strtod (decimal or hex) with surrounding whitespace only.
pub(super) fn str2d(t: &str) -> Option<f64> {
    let t = t.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        let v = u64::from_str_radix(h, 16).ok()? as f64;
        return Some(if neg { -v } else { v });
    }
    if body.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        let l = body.to_ascii_lowercase();
        if l != "inf" && l != "infinity" && l != "nan" {
            return None;
        }
    }
    t.parse::<f64>().ok()
}

/// luaL_checkinteger / luaL_optinteger: the number truncated toward zero.
pub(super) fn check_integer(v: Option<&Value>, i: usize) -> std::result::Result<i64, Out> {
    check_number(v, i).map(|n| n as i64)
}

pub(super) fn opt_integer(v: Option<&Value>, i: usize, def: i64) -> std::result::Result<i64, Out> {
    match v {
        None | Some(Value::Nil) => Ok(def),
        other => check_integer(other, i),
    }
}

/// luaL_checklstring: strings, and numbers converted to strings.
pub(super) fn check_string(
    lua: &Lua,
    v: Option<&Value>,
    i: usize,
) -> Result<std::result::Result<Vec<u8>, Out>> {
    match v {
        Some(Value::String(s)) => Ok(Ok(s.as_bytes().to_vec())),
        Some(x @ (Value::Integer(_) | Value::Number(_))) => match lua.coerce_string(x.clone())? {
            Some(s) => Ok(Ok(s.as_bytes().to_vec())),
            None => Ok(Err(type_err(i, "string", v))),
        },
        other => Ok(Err(type_err(i, "string", other))),
    }
}

pub(super) fn num(n: f64) -> Value {
    Value::Number(n)
}
