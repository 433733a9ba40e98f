//! The Lua sandbox on arbitrary chunks, run as EVAL runs them (`Scripting::eval`, with a stub
//! host that answers `redis.call` with its arguments). Invariants: nothing panics or hangs
//! (the count hook kills a script after 50 ms, as SCRIPT KILL would); the memory limit holds
//! (the interpreter is capped at 32 MB, libFuzzer's RSS limit catches the rest); and no chunk
//! changes what later scripts see: a probe run after every chunk must print the same
//! fingerprint of the environment as on a fresh interpreter (globals and library members,
//! os/io/debug/require/dofile/loadfile absent, bytecode refused by loadstring).
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use resplock::Reply;
use resplock::script::{EvalKind, Host, Scripting};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Stub(u8);

impl Host for Stub {
    fn call(&mut self, args: &[Bytes]) -> Result<Reply, &'static str> {
        Ok(Reply::Array(
            args.iter().cloned().map(Reply::Bulk).collect(),
        ))
    }
    fn acl_check(&mut self, _: &[Bytes]) -> Result<bool, &'static str> {
        Ok(true)
    }
    fn resp(&self) -> u8 {
        self.0
    }
    fn set_resp(&mut self, resp: u8) {
        self.0 = resp;
    }
    fn set_readonly(&mut self, _: bool) {}
}

static SCRIPTING: OnceLock<Scripting> = OnceLock::new();

/// The count hook's tick: kill a script that has run for 50 ms.
fn tick() {
    if let Some(s) = SCRIPTING.get() {
        if s.running_for()
            .is_some_and(|t| t > Duration::from_millis(50))
        {
            let _ = s.kill(true);
        }
    }
}

const PROBE: &str = r#"
local t = {}
for _, n in ipairs({'os','io','debug','require','package','dofile','loadfile','module',
  'newproxy','getfenv','setfenv','print','load','loadstring','string','math','table',
  'coroutine','redis','cjson','bit','struct','cmsgpack','pcall','xpcall','error','type',
  'tostring','tonumber','rawget','rawset','rawequal','setmetatable','getmetatable','next',
  'pairs','ipairs','select','unpack','assert','_G','_VERSION','collectgarbage','gcinfo',
  'KEYS','ARGV'}) do
  local ok, v = pcall(function() return _G[n] end)
  t[#t+1] = n .. '=' .. (ok and type(v) or 'error')
end
for _, lib in ipairs({'string','math','table','coroutine','redis','cjson','bit','struct','cmsgpack'}) do
  local ks = {}
  for k, v in pairs(_G[lib]) do ks[#ks+1] = tostring(k) .. ':' .. type(v) end
  table.sort(ks)
  t[#t+1] = lib .. '{' .. table.concat(ks, ',') .. '}'
end
local dump = string.dump and string.dump(function() return 1 end) or '\27Lua'
t[#t+1] = 'bytecode=' .. tostring(loadstring(dump) == nil)
t[#t+1] = 'strmeta=' .. tostring(rawget(getmetatable(''), '__index') == string)
t[#t+1] = 'x=' .. tostring(('x'):rep(2))
return table.concat(t, ';')
"#;

fn eval(s: &Scripting, body: &[u8]) -> Reply {
    let args = [
        Bytes::from_static(b"eval"),
        Bytes::copy_from_slice(body),
        Bytes::from_static(b"1"),
        Bytes::from_static(b"key"),
        Bytes::from_static(b"arg"),
    ];
    s.eval(
        &mut Stub(2),
        EvalKind {
            by_sha: false,
            readonly: false,
        },
        &args,
    )
}

fn baseline() -> &'static Reply {
    static B: OnceLock<Reply> = OnceLock::new();
    B.get_or_init(|| eval(&Scripting::new(|| {}), PROBE.as_bytes()))
}

fuzz_target!(|data: &[u8]| {
    let s = SCRIPTING.get_or_init(|| {
        let s = Scripting::new(tick);
        s.set_memory_limit(32 << 20);
        s
    });
    let base = baseline();
    assert!(matches!(base, Reply::Bulk(_)), "probe failed: {base:?}");
    let started = Instant::now();
    let _ = eval(s, data);
    // The hook kills at 50 ms; C functions between hooks are bounded by the memory cap.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "script ran {:?}",
        started.elapsed()
    );
    let after = eval(s, PROBE.as_bytes());
    if &after != base {
        let show = |r: &Reply| match r {
            Reply::Bulk(b) => String::from_utf8_lossy(b).replace(';', "\n"),
            other => format!("{other:?}"),
        };
        panic!(
            "the chunk changed the environment: {:?}\n--- before\n{}\n--- after\n{}",
            String::from_utf8_lossy(data),
            show(base),
            show(&after)
        );
    }
});
