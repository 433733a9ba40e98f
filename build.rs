//! Compiles the embedded Lua 5.1 from `vendor/lua-src/lua-5.1.5` (patched as redis-server
//! patches its Lua: read-only tables and the rest, see `vendor/lua-src/PATCHES.md`) and links it
//! into resplock itself.
//!
//! Why here and not through mlua's `vendored` feature: that builds the registry's unpatched
//! `lua-src`, and a `[patch.crates-io]` in our manifest reaches only our own workspace, so a
//! crate depending on resplock got plain Lua and failed to link (`lua_enablereadonlytable`).
//! mlua-sys's `external` feature (enabled in Cargo.toml) leaves compiling and linking Lua to
//! us; the flags below are the ones lua-src 551.0.2 uses for Lua 5.1, so the interpreter is
//! built exactly as before.

use std::env;
use std::path::Path;

fn main() {
    let src = Path::new("vendor/lua-src/lua-5.1.5");
    println!("cargo:rerun-if-changed=vendor/lua-src/lua-5.1.5");
    println!("cargo:rerun-if-changed=build.rs");

    let target = env::var("TARGET").expect("cargo sets TARGET");
    let mut cc = cc::Build::new();
    cc.warnings(false);
    // lua-src's platform choices for 5.1: the Linux set (dlopen, mkstemp, popen) on Linux, the
    // BSDs and macOS, POSIX on the other Unixes, nothing on Windows.
    if target.contains("linux")
        || target.contains("bsd")
        || target.contains("dragonfly")
        || target.contains("apple-darwin")
    {
        cc.define("LUA_USE_LINUX", None);
    } else if target.contains("windows") {
        // Lua 5.1 needs no define on Windows.
    } else if env::var("CARGO_CFG_UNIX").is_ok() {
        cc.define("LUA_USE_POSIX", None);
    } else {
        panic!("resplock: don't know how to build Lua 5.1 for {target}");
    }
    // As lua-src: a debug build (the build script itself built with debug assertions, as
    // Cargo does for the dev profile) checks every Lua API call and keeps C debug info.
    if cfg!(debug_assertions) {
        cc.define("LUA_USE_APICHECK", None);
        cc.debug(true);
    }
    cc.include(src).flag_if_supported("-fno-common");
    let mut files: Vec<_> = std::fs::read_dir(src)
        .expect("vendor/lua-src/lua-5.1.5 is part of the package")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    files.sort();
    cc.files(files);
    // Emits the static link of liblua5.1.a into this crate (and so into every binary using it).
    cc.compile("lua5.1");
}
