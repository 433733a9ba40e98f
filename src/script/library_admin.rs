//! What the FUNCTION commands ask of [`Scripting`]: load, delete, flush, list, stats, the
//! libraries' codes for DUMP and RESTORE, and the memory figures INFO shows. The command layer
//! parses arguments and payloads; this side owns the libraries.

use super::functions::{self, Libraries, Target};
use super::{script_flags, Scripting};
use crate::error::{self, RedisError};
use crate::reply::Reply;
use bytes::Bytes;
use std::sync::atomic::Ordering;

/// FUNCTION RESTORE's policy for libraries that exist already.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RestorePolicy {
    /// Drop every existing library first.
    Flush,
    /// Add; a library or function name that exists fails the restore.
    Append,
    /// Add, replacing libraries of the same name; a function name that exists in another
    /// library still fails the restore.
    Replace,
}

/// The interpreter's figures for INFO memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScriptMemory {
    /// Bytes the Lua interpreter uses (EVAL scripts and functions share it).
    pub lua_bytes: usize,
    /// Scripts in the EVAL cache.
    pub cached_scripts: usize,
    /// Bytes of cached script text and SHAs.
    pub scripts_bytes: usize,
    /// Registered functions.
    pub functions: usize,
    /// Loaded libraries.
    pub libraries: usize,
    /// Bytes of library code and function names.
    pub functions_bytes: usize,
}

fn bulk(s: &str) -> Reply {
    Reply::bulk_str(s)
}

impl Scripting {
    /// FUNCTION LOAD: returns the library's name.
    pub fn function_load(&self, code: &Bytes, replace: bool) -> Result<String, RedisError> {
        self.with_engine(|eng| {
            let r = functions::create(eng, Target::Current, code, replace);
            self.libraries_changed(eng);
            r
        })
    }

    /// FUNCTION DELETE.
    pub fn function_delete(&self, name: &[u8]) -> Result<(), RedisError> {
        self.with_engine(|eng| {
            let r = eng.libs.delete(name);
            self.libraries_changed(eng);
            r
        })
    }

    /// FUNCTION FLUSH.
    pub fn function_flush(&self) {
        let _ = self.with_engine(|eng| {
            eng.libs = Libraries::default();
            self.libraries_changed(eng);
            let _ = eng.lua.gc_collect();
            Ok(())
        });
    }

    /// FUNCTION LIST: the libraries `keep` accepts by name, with their code if `with_code`.
    pub fn function_list(&self, keep: impl Fn(&[u8]) -> bool, with_code: bool) -> Reply {
        let r = self.with_engine(|eng| {
            let mut out = Vec::new();
            for (name, lib) in &eng.libs.libs {
                if !keep(name.as_bytes()) {
                    continue;
                }
                let funcs = lib
                    .functions
                    .values()
                    .map(|f| {
                        let flags = script_flags::NAMES
                            .iter()
                            .filter(|(flag, _)| f.flags & flag != 0)
                            .map(|(_, n)| Reply::simple(n))
                            .collect();
                        Reply::Map(vec![
                            (bulk("name"), bulk(&f.name)),
                            (
                                bulk("description"),
                                f.desc.clone().map_or(Reply::Nil, Reply::Bulk),
                            ),
                            (bulk("flags"), Reply::Set(flags)),
                        ])
                    })
                    .collect();
                let mut fields = vec![
                    (bulk("library_name"), bulk(name)),
                    (bulk("engine"), bulk("LUA")),
                    (bulk("functions"), Reply::Array(funcs)),
                ];
                if with_code {
                    fields.push((bulk("library_code"), Reply::Bulk(lib.code.clone())));
                }
                out.push(Reply::Map(fields));
            }
            Ok(Reply::Array(out))
        });
        r.unwrap_or_else(Reply::error)
    }

    /// FUNCTION STATS. Reads only what a running function leaves readable, so it can answer
    /// while one runs (it is allowed while a script is busy, and then runs without the lock).
    pub fn function_stats(&self) -> Result<Reply, RedisError> {
        let running = match self.watch.current.lock().as_ref() {
            None => Reply::Nil,
            Some(r) if r.is_eval => return Err(RedisError::new(error::BUSY)),
            Some(r) => {
                let (name, command) = match &r.function {
                    Some((name, args)) => (name.to_string(), args.to_vec()),
                    None => (String::new(), Vec::new()),
                };
                Reply::Map(vec![
                    (bulk("name"), bulk(&name)),
                    (
                        bulk("command"),
                        Reply::Array(command.into_iter().map(Reply::Bulk).collect()),
                    ),
                    (
                        bulk("duration_ms"),
                        Reply::Int(crate::clock::mono_since(r.started).as_millis() as i64),
                    ),
                ])
            }
        };
        let counts = self.function_counts.load(Ordering::Relaxed);
        let engine = Reply::Map(vec![
            (bulk("libraries_count"), Reply::Int((counts >> 32) as i64)),
            (
                bulk("functions_count"),
                Reply::Int((counts & 0xffff_ffff) as i64),
            ),
        ]);
        Ok(Reply::Map(vec![
            (bulk("running_script"), running),
            (bulk("engines"), Reply::Map(vec![(bulk("LUA"), engine)])),
        ]))
    }

    /// Every library's code, in order (FUNCTION DUMP).
    pub fn function_codes(&self) -> Vec<Bytes> {
        self.with_engine(|eng| Ok(eng.libs.libs.values().map(|l| l.code.clone()).collect()))
            .unwrap_or_default()
    }

    /// FUNCTION RESTORE of libraries given by their codes: all are loaded (with FUNCTION
    /// LOAD's checks and time limit) before any replaces what exists, so a failure changes
    /// nothing.
    pub fn function_restore(
        &self,
        codes: &[Bytes],
        policy: RestorePolicy,
    ) -> Result<(), RedisError> {
        self.with_engine(|eng| {
            let mut staged = Libraries::default();
            for code in codes {
                functions::create(eng, Target::Staging(&mut staged), code, false)?;
            }
            let r = match policy {
                RestorePolicy::Flush => {
                    eng.libs = staged;
                    Ok(())
                }
                RestorePolicy::Append => eng.libs.join(staged, false),
                RestorePolicy::Replace => eng.libs.join(staged, true),
            };
            self.libraries_changed(eng);
            r
        })
    }

    /// INFO memory's script figures. Answers zeros while a script runs rather than wait.
    pub fn memory(&self) -> ScriptMemory {
        let Some(g) = self.engine.try_lock() else {
            return ScriptMemory::default();
        };
        let Some(eng) = g.as_ref() else {
            return ScriptMemory::default();
        };
        let (libraries, functions) = eng.libs.counts();
        let functions_bytes = eng
            .libs
            .libs
            .iter()
            .map(|(n, l)| {
                n.len() + l.code.len() + l.functions.keys().map(|f| f.len()).sum::<usize>()
            })
            .sum();
        ScriptMemory {
            lua_bytes: eng.lua.used_memory(),
            cached_scripts: eng.scripts.len(),
            scripts_bytes: eng.scripts_memory(),
            functions,
            libraries,
            functions_bytes,
        }
    }
}
