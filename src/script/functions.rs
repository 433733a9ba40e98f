//! Function libraries (functions.c, function_lua.c): library name -> code and functions,
//! function name -> flags, description and callback. FUNCTION LOAD runs a library's code in a
//! loading sandbox where only `redis.register_function`, `redis.log` and the version
//! constants exist; the callbacks it registers run later through the same path as EVAL.
//!
//! Library names are case-sensitive and function names are not, as in Redis's dictionaries.
//! Libraries and their functions are listed in load order.

use super::engine::Engine;
use super::host::RunCtx;
use super::registration::{valid_name, FunctionInfo, Loading};
use crate::error::{self, RedisError};
use bytes::Bytes;
use indexmap::IndexMap;
use mlua::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long FUNCTION LOAD lets a library's code run (LOAD_TIMEOUT_MS).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// One library: its full code (shebang included) and its functions in registration order.
pub(super) struct Library {
    pub code: Bytes,
    pub functions: IndexMap<String, Arc<FunctionInfo>>,
}

/// A set of libraries (functionsLibCtx): the server's current one, or a RESTORE payload's.
#[derive(Default)]
pub(super) struct Libraries {
    pub libs: IndexMap<String, Library>,
    /// Lowercased function name -> function, across all libraries.
    functions: HashMap<String, Arc<FunctionInfo>>,
    /// Functions counted per library, as Redis's engine stats count them.
    function_count: usize,
}

impl Libraries {
    /// FCALL's lookup, case-insensitive.
    pub fn function(&self, name: &[u8]) -> Option<&Arc<FunctionInfo>> {
        let mut buf = [0u8; 64];
        if name.len() <= buf.len() {
            for (d, s) in buf.iter_mut().zip(name) {
                *d = s.to_ascii_lowercase();
            }
            let key = std::str::from_utf8(&buf[..name.len()]).ok()?;
            return self.functions.get(key);
        }
        let key = String::from_utf8(name.to_ascii_lowercase()).ok()?;
        self.functions.get(&key)
    }

    /// (libraries, functions), FUNCTION STATS's engine counts.
    pub fn counts(&self) -> (usize, usize) {
        (self.libs.len(), self.function_count)
    }

    fn link(&mut self, name: String, lib: Library) {
        for f in lib.functions.values() {
            self.functions
                .entry(f.name.to_ascii_lowercase())
                .or_insert_with(|| f.clone());
        }
        self.function_count += lib.functions.len();
        self.libs.insert(name, lib);
    }

    fn unlink(&mut self, name: &str) -> Option<Library> {
        let lib = self.libs.shift_remove(name)?;
        for f in lib.functions.values() {
            self.functions.remove(&f.name.to_ascii_lowercase());
        }
        self.function_count -= lib.functions.len();
        Some(lib)
    }

    /// FUNCTION DELETE.
    pub fn delete(&mut self, name: &[u8]) -> Result<(), RedisError> {
        let name = std::str::from_utf8(name).unwrap_or("\u{fffd}");
        match self.unlink(name) {
            Some(_) => Ok(()),
            None => Err(RedisError::new(error::FUNCTION_LIBRARY_NOT_FOUND)),
        }
    }

    fn colliding_function<'a>(&self, lib: &'a Library) -> Option<&'a str> {
        lib.functions
            .values()
            .find(|f| self.functions.contains_key(&f.name.to_ascii_lowercase()))
            .map(|f| &*f.name)
    }

    /// libraryJoin: move every library of `src` in. A library name that exists already fails
    /// the whole join unless `replace`; a function name that exists in another library always
    /// does. On failure nothing changes.
    pub fn join(&mut self, src: Libraries, replace: bool) -> Result<(), RedisError> {
        let mut replaced = Vec::new();
        for name in src.libs.keys() {
            if self.libs.contains_key(name) {
                if !replace {
                    self.relink(replaced);
                    return Err(error::err(format!("ERR Library {name} already exists")));
                }
                let old = self.unlink(name).expect("library present");
                replaced.push((name.clone(), old));
            }
        }
        for lib in src.libs.values() {
            if let Some(f) = self.colliding_function(lib) {
                let e = error::err(format!("ERR Function {f} already exists"));
                self.relink(replaced);
                return Err(e);
            }
        }
        for (name, lib) in src.libs {
            self.link(name, lib);
        }
        Ok(())
    }

    fn relink(&mut self, libs: Vec<(String, Library)>) {
        for (name, lib) in libs {
            self.link(name, lib);
        }
    }
}

/// A library's shebang: `#!<engine> name=<name>` (functionExtractLibMetaData), and where its
/// code starts (at the shebang's line feed, so positions count the shebang line).
struct Metadata {
    engine: Vec<u8>,
    name: Vec<u8>,
    code_start: usize,
}

fn metadata(code: &[u8]) -> Result<Metadata, RedisError> {
    if !code.starts_with(b"#!") {
        return Err(error::err("ERR Missing library metadata"));
    }
    let end = code
        .iter()
        .position(|&c| c == b'\n')
        .ok_or_else(|| error::err("ERR Invalid library metadata"))?;
    let parts = match crate::config::split_args(&code[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err(error::err("ERR Invalid library metadata")),
    };
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(error::err(
                    "ERR Invalid metadata value, name argument was given multiple times",
                ));
            }
            name = Some(part[5..].to_vec());
            continue;
        }
        return Err(error::err(format!(
            "ERR Invalid metadata value given: {}",
            String::from_utf8_lossy(part)
        )));
    }
    let name = name.ok_or_else(|| error::err("ERR Library name was not given"))?;
    Ok(Metadata {
        engine: parts[0][2..].to_vec(),
        name,
        code_start: end,
    })
}

/// functionsCreateWithLibraryCtx: load `code` into `libs` (the engine's own libraries, or a
/// RESTORE payload's): parse the shebang, run the code in the loading sandbox, check what it
/// registered. Returns the library's name.
pub(super) fn create(
    eng: &mut Engine,
    mut target: Target,
    code: &Bytes,
    replace: bool,
) -> Result<String, RedisError> {
    let md = metadata(code)?;
    if !valid_name(&md.name) {
        return Err(RedisError::new(error::FUNCTION_BAD_NAME));
    }
    if !md.engine.eq_ignore_ascii_case(b"lua") {
        return Err(error::err(format!(
            "ERR Engine '{}' not found",
            String::from_utf8_lossy(&md.engine)
        )));
    }
    let name = String::from_utf8(md.name).expect("validated name is ASCII");
    let exists = target.libs(eng).libs.contains_key(&name);
    if exists && !replace {
        return Err(error::err(format!("ERR Library '{name}' already exists")));
    }
    let functions = run_library(eng, &code[md.code_start..])?;
    if functions.is_empty() {
        return Err(error::err("ERR No functions registered"));
    }
    let lib = Library {
        code: code.clone(),
        functions,
    };
    let libs = target.libs(eng);
    let old = if exists { libs.unlink(&name) } else { None };
    if let Some(f) = libs.colliding_function(&lib) {
        let e = error::err(format!("ERR Function {f} already exists"));
        if let Some(old) = old {
            libs.link(name, old);
        }
        return Err(e);
    }
    libs.link(name.clone(), lib);
    Ok(name)
}

/// Where [`create`] puts a library.
pub(super) enum Target<'a> {
    /// The server's libraries.
    Current,
    /// A set being built (FUNCTION RESTORE's payload).
    Staging(&'a mut Libraries),
}

impl Target<'_> {
    fn libs<'e>(&'e mut self, eng: &'e mut Engine) -> &'e mut Libraries {
        match self {
            Target::Current => &mut eng.libs,
            Target::Staging(l) => l,
        }
    }
}

/// luaEngineCreate: compile and run a library's body in the loading sandbox, for at most
/// [`LOAD_TIMEOUT`] (Redis lets a restored payload run unbounded; resplock bounds it too, so
/// no payload can hang the server).
fn run_library(
    eng: &mut Engine,
    body: &[u8],
) -> Result<IndexMap<String, Arc<FunctionInfo>>, RedisError> {
    let lua = &eng.lua;
    let to_err = |e: mlua::Error| error::err(format!("ERR {e}"));
    let body = lua.create_string(body).map_err(to_err)?;
    if let Some(mut rc) = lua.app_data_mut::<RunCtx>() {
        rc.loading = Some(Loading::default());
    }
    let deadline = Instant::now() + LOAD_TIMEOUT;
    let deadline_ptr = &deadline as *const Instant as *mut std::ffi::c_void;
    let env = &eng.functions;
    let result = env.load.call::<(i64, Value)>((
        &env.env,
        &env.env_meta,
        &env.library_api,
        &env.globals,
        body,
        mlua::LightUserData(deadline_ptr),
    ));
    let loading = lua
        .app_data_mut::<RunCtx>()
        .and_then(|mut rc| rc.loading.take())
        .unwrap_or_default();
    match result.map_err(to_err)? {
        (0, _) => Ok(loading.functions),
        (1, v) => Err(error::err(format!(
            "ERR Error compiling function: {}",
            value_text(&v)
        ))),
        (_, v) => Err(error::err(format!(
            "ERR Error registering functions: {}",
            error_message(&v)
        ))),
    }
}

/// luaExtractErrorInformation's message: a string error gets `ERR `, a table gives its `err`.
fn error_message(v: &Value) -> String {
    match v {
        Value::String(s) => format!("ERR {}", s.to_string_lossy()),
        Value::Integer(_) | Value::Number(_) => format!("ERR {}", value_text(v)),
        Value::Table(t) => match t.raw_get::<Value>("err") {
            Ok(e @ (Value::String(_) | Value::Integer(_) | Value::Number(_))) => value_text(&e),
            _ => "(null)".into(),
        },
        _ => "(null)".into(),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => crate::num::format_g(*n, 14),
        _ => String::new(),
    }
}
