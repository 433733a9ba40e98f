//! Library functions as Lua sees them: an mlua callback wrapped in the C trampoline of
//! [`super::ffi`], so it can raise Redis's error tables ([`Out`]) and pass many results or
//! arguments packed in a table.

use mlua::{Function, Lua, MultiValue, Table, Value};

/// Results of a library function for [`super::ffi::tramp`]: `Ok` values are returned, `Raise`
/// is raised as is, `Where` is raised with the caller's position (luaL_error), `Arg` is raised
/// as luaL_argerror words it (`bad argument #N to 'name' (msg)`, the name taken from the call).
pub(crate) enum Out {
    Ok(Vec<Value>),
    Raise(Value),
    Where(String),
    Arg(i32, String),
    /// A loop saw the script asked to stop (`libs::Poll`): the trampoline unwinds as the
    /// patched Lua's own loops do, and the kill hook raises the kill's error.
    Stopped,
}

/// Wrap `f` as a Lua function that can raise what [`Out`] asks for.
/// Results beyond this many go to the trampoline in a table (see [`packed_lib_fn`]).
const MANY_RESULTS: usize = 64;

pub(crate) fn lib_fn<F>(lua: &Lua, make_tramp: &Function, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Out> + Send + 'static,
{
    packed_lib_fn(lua, make_tramp, move |lua, args| f(lua, unpack_args(args)?))
}

/// [`lib_fn`] for functions that take their arguments as [`super::ffi::tramp`] passes them:
/// packed when there are many (see [`lua_args`]), so thousands of strings never exist as mlua
/// handles at once (mlua holds at most about 8000).
pub(crate) fn packed_lib_fn<F>(lua: &Lua, make_tramp: &Function, f: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Out> + Send + 'static,
{
    let inner = lua.create_function(move |lua, args: MultiValue| {
        let mut v = Vec::new();
        match f(lua, args)? {
            Out::Ok(vals) if vals.len() > MANY_RESULTS => {
                // cmsgpack.unpack and struct.unpack may return thousands of values: they go
                // to the trampoline in a table, which it unpacks onto the Lua stack.
                let n = vals.len();
                let t = lua.create_table_with_capacity(n, 0)?;
                for (i, val) in vals.into_iter().enumerate() {
                    t.raw_set(i + 1, val)?;
                }
                v.push(Value::Table(t));
                v.push(Value::Integer(n as mlua::Integer));
            }
            Out::Ok(vals) => {
                v.push(Value::Boolean(false));
                v.extend(vals);
            }
            Out::Raise(e) => {
                v.push(Value::Boolean(true));
                v.push(e);
            }
            Out::Where(msg) => {
                v.push(Value::String(lua.create_string("where")?));
                v.push(Value::String(lua.create_string(msg)?));
            }
            Out::Arg(n, msg) => {
                v.push(Value::Integer(n as mlua::Integer));
                v.push(Value::String(lua.create_string(msg)?));
            }
            Out::Stopped => v.push(Value::LightUserData(mlua::LightUserData(
                super::ffi::stopped_marker(),
            ))),
        }
        Ok(MultiValue::from_vec(v))
    })?;
    make_tramp.call(inner)
}

/// Packed arguments (see [`super::ffi::tramp`]): the table and the count.
pub(crate) fn packed(args: &MultiValue) -> Option<(&Table, i64)> {
    match (args.front(), args.get(1), args.get(2), args.len()) {
        (Some(Value::LightUserData(p)), Some(Value::Table(t)), Some(n), 3)
            if p.0 == super::ffi::packed_marker() =>
        {
            let n = match n {
                Value::Integer(i) => *i,
                Value::Number(f) => *f as i64,
                _ => 0,
            };
            Some((t, n))
        }
        _ => None,
    }
}

/// The arguments [`super::ffi::tramp`] passed, unpacked if it packed them.
pub(crate) fn unpack_args(args: MultiValue) -> mlua::Result<MultiValue> {
    let Some((t, n)) = packed(&args) else {
        return Ok(args);
    };
    let mut out = MultiValue::with_capacity(n.max(0) as usize);
    for i in 1..=n {
        out.push_back(t.raw_get(i)?);
    }
    Ok(out)
}
