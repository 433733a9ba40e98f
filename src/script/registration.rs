//! What FUNCTION LOAD's code registers (`redis.register_function`): a function's name,
//! description, flags and callback, gathered in the library being loaded.

use crate::error;
use crate::script::script_flags;
use bytes::Bytes;
use indexmap::IndexMap;
use mlua::RegistryKey;
use std::sync::Arc;

/// One registered function.
pub(crate) struct FunctionInfo {
    pub name: Arc<str>,
    pub desc: Option<Bytes>,
    pub flags: u32,
    /// The callback, in the Lua registry (kept as `engine::Script` keeps a compiled script).
    pub callback: RegistryKey,
}

/// functionsVerifyName: `[A-Za-z0-9_]+`.
pub(crate) fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The functions a library's code registered while FUNCTION LOAD ran it.
#[derive(Default)]
pub(crate) struct Loading {
    pub functions: IndexMap<String, Arc<FunctionInfo>>,
}

/// `redis.register_function`'s checks (luaRegisterFunctionReadArgs and
/// functionLibCreateFunction), with Redis's texts; adds the function to the library being
/// loaded.
pub(crate) fn register(
    loading: &mut Loading,
    name: Vec<u8>,
    desc: Option<Bytes>,
    flags: u32,
    callback: RegistryKey,
) -> Result<(), &'static str> {
    if !valid_name(&name) {
        return Err(error::LUA_REGISTER_BAD_NAME);
    }
    let name = String::from_utf8(name).expect("validated name is ASCII");
    if loading.functions.contains_key(&name) {
        return Err(error::LUA_REGISTER_DUPLICATE);
    }
    let info = Arc::new(FunctionInfo {
        name: Arc::from(name.as_str()),
        desc,
        flags,
        callback,
    });
    loading.functions.insert(name, info);
    Ok(())
}

/// The flags `redis.register_function` accepts, by their (case-insensitive) names.
pub(crate) fn flag_by_name(name: &[u8]) -> Option<u32> {
    script_flags::by_name(name, true)
}
