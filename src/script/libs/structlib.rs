//! Roberto Ierusalimschy's struct library as Redis bundles it (deps/lua/src/lua_struct.c).

use super::*;
use crate::script::lib_fn::{lib_fn, Out};
use mlua::{Function, Lua, MultiValue, Result, Table, Value};

// Roberto Ierusalimschy's struct library as Redis bundles it (deps/lua/src/lua_struct.c):
// integral sizes up to MAXINTSIZE, `!` alignment, native little endian.

const MAXINTSIZE: usize = 32;
const MAXALIGN: usize = 8;

struct Header {
    little: bool,
    align: usize,
}

/// getnum: the digits at `fmt[*i..]`, or `df` when there are none.
fn getnum(fmt: &[u8], i: &mut usize, df: usize) -> std::result::Result<usize, Out> {
    if !fmt.get(*i).is_some_and(|d| d.is_ascii_digit()) {
        return Ok(df);
    }
    let mut a: i32 = 0;
    while let Some(&d) = fmt.get(*i).filter(|d| d.is_ascii_digit()) {
        let dv = (d - b'0') as i32;
        if a > i32::MAX / 10 || a * 10 > i32::MAX - dv {
            return Err(Out::Where("integral size overflow".into()));
        }
        a = a * 10 + dv;
        *i += 1;
    }
    Ok(a as usize)
}

/// optsize: the size of one option (0 for options without a fixed one).
fn optsize(opt: u8, fmt: &[u8], i: &mut usize) -> std::result::Result<usize, Out> {
    Ok(match opt {
        b'B' | b'b' => 1,
        b'H' | b'h' => 2,
        b'L' | b'l' | b'T' => 8,
        b'f' => 4,
        b'd' => 8,
        b'x' => 1,
        b'c' => getnum(fmt, i, 1)?,
        b'i' | b'I' => {
            let sz = getnum(fmt, i, 4)?;
            if sz > MAXINTSIZE {
                return Err(Out::Where(format!(
                    "integral size {sz} is larger than limit of {MAXINTSIZE}"
                )));
            }
            sz
        }
        _ => 0,
    })
}

fn gettoalign(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    size.wrapping_sub(len & (size - 1)) & (size - 1)
}

fn controloptions(
    opt: u8,
    fmt: &[u8],
    i: &mut usize,
    h: &mut Header,
) -> std::result::Result<(), Out> {
    match opt {
        b' ' => Ok(()),
        b'>' => {
            h.little = false;
            Ok(())
        }
        b'<' => {
            h.little = true;
            Ok(())
        }
        b'!' => {
            let a = getnum(fmt, i, MAXALIGN)?;
            if a == 0 || a & (a - 1) != 0 {
                return Err(Out::Where(format!("alignment {a} is not a power of 2")));
            }
            h.align = a;
            Ok(())
        }
        _ => Err(Out::Arg(
            1,
            format!("invalid format option '{}'", opt as char),
        )),
    }
}

fn is_int_opt(opt: u8) -> bool {
    matches!(
        opt,
        b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I'
    )
}

fn struct_pack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut out = Vec::new();
    let mut arg = 2usize;
    let mut total = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = tri!(optsize(opt, &fmt, &mut i));
        let toalign = gettoalign(total, &h, opt, size);
        total += toalign;
        out.resize(out.len() + toalign, 0);
        match opt {
            _ if is_int_opt(opt) => {
                let n = tri!(check_number(v.get(arg - 1), arg));
                arg += 1;
                let mut value = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                let mut buf = [0u8; MAXINTSIZE];
                for k in 0..size {
                    let at = if h.little { k } else { size - 1 - k };
                    buf[at] = (value & 0xff) as u8;
                    value >>= 8;
                }
                out.extend_from_slice(&buf[..size]);
            }
            b'x' => out.push(0),
            b'f' | b'd' => {
                let n = tri!(check_number(v.get(arg - 1), arg));
                arg += 1;
                let mut b = if opt == b'f' {
                    (n as f32).to_le_bytes().to_vec()
                } else {
                    n.to_le_bytes().to_vec()
                };
                if !h.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            b'c' | b's' => {
                let s = tri!(check_string(lua, v.get(arg - 1), arg)?);
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // lua_struct.c checks after advancing `arg`, so it names the next one.
                    return Ok(Out::Arg(arg as i32, "string too short".into()));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                    size += 1;
                }
            }
            _ => tri!(controloptions(opt, &fmt, &mut i, &mut h)),
        }
        total += size;
    }
    Ok(Out::Ok(vec![Value::String(lua.create_string(&out)?)]))
}

/// getinteger: only the low 64 bits survive, and the sign mask uses the shift count modulo 64
/// as x86 does for lua_struct.c's oversized shifts.
fn getinteger(b: &[u8], little: bool, signed: bool) -> f64 {
    let size = b.len();
    let mut l: u64 = 0;
    for k in 0..size {
        let at = if little { size - 1 - k } else { k };
        l = (l << 8) | b[at] as u64;
    }
    if !signed {
        return l as f64;
    }
    let mask = u64::MAX << ((size * 8).wrapping_sub(1) & 63);
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn struct_unpack(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let data = tri!(check_string(lua, v.get(1), 2)?);
    let pos = tri!(opt_integer(v.get(2), 3, 1)) as u64 as usize;
    if pos == 0 {
        return Ok(Out::Arg(3, "offset must be 1 or greater".into()));
    }
    let mut pos = pos - 1;
    let ld = data.len();
    let mut h = Header {
        little: true,
        align: 1,
    };
    let too_short = || Out::Arg(2, "data string too short".into());
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let mut size = tri!(optsize(opt, &fmt, &mut i));
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Ok(too_short());
        }
        // luaL_checkstack(L, 2, "too many results"): the arguments and the results so far
        // share the C function's LUAI_MAXCSTACK slots.
        if v.len() + out.len() + 2 > super::MAX_C_STACK {
            return Ok(Out::Where("stack overflow (too many results)".into()));
        }
        match opt {
            _ if is_int_opt(opt) => {
                let signed = opt.is_ascii_lowercase();
                out.push(num(getinteger(&data[pos..pos + size], h.little, signed)));
            }
            b'x' => {}
            b'f' => {
                let mut b: [u8; 4] = data[pos..pos + 4].try_into().unwrap_or([0; 4]);
                if !h.little {
                    b.reverse();
                }
                out.push(num(f32::from_le_bytes(b) as f64));
            }
            b'd' => {
                let mut b: [u8; 8] = data[pos..pos + 8].try_into().unwrap_or([0; 8]);
                if !h.little {
                    b.reverse();
                }
                out.push(num(f64::from_le_bytes(b)));
            }
            b'c' => {
                if size == 0 {
                    let prev = out.last().and_then(|p| check_number(Some(p), 0).ok());
                    let Some(n) = prev else {
                        return Ok(Out::Where("format 'c0' needs a previous size".into()));
                    };
                    size = n as u64 as usize;
                    out.pop();
                    if !(size <= ld && pos <= ld - size) {
                        return Ok(too_short());
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(e) = data[pos..].iter().position(|&b| b == 0) else {
                    return Ok(Out::Where("unfinished string in data".into()));
                };
                size = e + 1;
                out.push(Value::String(lua.create_string(&data[pos..pos + e])?));
            }
            _ => tri!(controloptions(opt, &fmt, &mut i, &mut h)),
        }
        pos = pos.wrapping_add(size);
    }
    out.push(num(pos.wrapping_add(1) as f64));
    Ok(Out::Ok(out))
}

fn struct_size(lua: &Lua, a: MultiValue) -> Result<Out> {
    let v: Vec<Value> = a.into_iter().collect();
    let fmt = tri!(check_string(lua, v.first(), 1)?);
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut pos = 0usize;
    let mut i = 0;
    while i < fmt.len() {
        let opt = fmt[i];
        i += 1;
        let size = tri!(optsize(opt, &fmt, &mut i));
        pos = pos.wrapping_add(gettoalign(pos, &h, opt, size));
        if opt == b's' {
            return Ok(Out::Arg(1, "option 's' has no fixed size".into()));
        } else if opt == b'c' && size == 0 {
            return Ok(Out::Arg(1, "option 'c0' has no fixed size".into()));
        }
        if !opt.is_ascii_alphanumeric() {
            tri!(controloptions(opt, &fmt, &mut i, &mut h));
        }
        pos = pos.wrapping_add(size);
    }
    Ok(Out::Ok(vec![num(pos as f64)]))
}

pub fn structlib(lua: &Lua, mt: &Function) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("pack", lib_fn(lua, mt, struct_pack)?)?;
    t.raw_set("unpack", lib_fn(lua, mt, struct_unpack)?)?;
    t.raw_set("size", lib_fn(lua, mt, struct_size)?)?;
    Ok(t)
}
