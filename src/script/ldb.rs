//! Redis 7.0's Lua debugger (LDB, eval.c's `ldb*`): the session `SCRIPT DEBUG YES|SYNC` starts
//! at the client's next EVAL. A line hook stops the script (step, breakpoints,
//! `redis.breakpoint()`, a script running past busy-reply-threshold), sends what it logged as
//! an array of status lines straight to the debugging client, and reads the client's
//! debugger commands (`step`, `continue`, `list`, `print`, `eval`, `redis`...) until one
//! resumes the script. `redis.call` logs each command and its reply while stepping.
//!
//! This layer knows no sockets: the caller hands over a [`DebugConn`] (blocking reads with a
//! timeout and writes on the client's connection, as Redis's `connBlock` makes its socket).
//! There is one session at a time, on the thread running the script; it is found through a
//! thread-local pointer set for the length of the run, so the hook, `redis.call` and
//! `redis.debug` reach it without a lookup in Lua. Nothing here holds a Rust value with a
//! destructor across a Lua call that may raise, except the session itself, which the run
//! owns.

use super::ffi as sffi;
use super::host::HookState;
use crate::reply::Reply;
use mlua::ffi;
use std::cell::Cell;
use std::ffi::CStr;
use std::os::raw::c_int;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What a read from the debugging client gave.
pub enum Read {
    /// This many bytes arrived.
    Data(usize),
    /// Nothing within the timeout; the connection is still open.
    Idle,
    /// The client closed the connection (or it failed).
    Closed,
}

/// The debugging client's connection, used blocking from inside the script's run.
pub trait DebugConn: Send {
    /// Read what arrived, waiting at most `wait`.
    fn read(&mut self, buf: &mut [u8], wait: Duration) -> Read;
    /// Write all of `data` (Redis gives up after a 5 s send timeout; errors show at the
    /// next read).
    fn write(&mut self, data: &[u8]);
}

/// What EVAL needs to run under the debugger.
pub struct DebugSession {
    /// The debugging client's connection.
    pub conn: Box<dyn DebugConn>,
    /// busy-reply-threshold (ms, 0: 5000): a script running that long without stopping is
    /// stopped ("timeout reached, infinite loop?").
    pub timeout_ms: u64,
}

/// Breakpoints at most (LDB_BREAKPOINTS_MAX).
const MAX_BREAKPOINTS: usize = 64;
/// Default trimming of logged replies and values (LDB_MAX_LEN_DEFAULT).
const MAXLEN_DEFAULT: usize = 256;
/// Nesting printed at most (LDB_MAX_VALUES_DEPTH = LUA_MINSTACK/2).
const MAX_DEPTH: usize = 10;
/// How long one wait for the client lasts before the hook's tick runs again.
const READ_SLICE: Duration = Duration::from_millis(100);
/// Instructions between two count events of the debugger's hook (as Redis).
pub(super) const HOOK_COUNT: c_int = 100_000;

/// The state of a debugging session (Redis's `struct ldbState`).
pub(super) struct Ldb {
    conn: Box<dyn DebugConn>,
    logs: Vec<Vec<u8>>,
    bp: Vec<i32>,
    /// Stop at the next line whatever the breakpoints.
    step: bool,
    /// Stop at the next line: `redis.breakpoint()` was called.
    luabp: bool,
    src: Vec<Vec<u8>>,
    currentline: i32,
    /// The client's unparsed input.
    cbuf: Vec<u8>,
    maxlen: usize,
    maxlen_hint_sent: bool,
    /// When the script last resumed (the timeout counts from there).
    resumed: Instant,
    timeout_ms: u64,
    hook: *const HookState,
}

thread_local! {
    static SESSION: Cell<*mut Ldb> = const { Cell::new(std::ptr::null_mut()) };
}

/// The session of the script running on this thread, if it is being debugged.
fn session<'a>() -> Option<&'a mut Ldb> {
    let p = SESSION.with(|s| s.get());
    // SAFETY: set only for the length of a run on this thread (`begin`/`end`), during which
    // the box it points into is not otherwise touched.
    unsafe { p.as_mut() }
}

/// The session when it logs the script's Redis commands (ldbIsEnabled: active and stepping).
pub(super) fn stepping<'a>() -> Option<&'a mut Ldb> {
    session().filter(|s| s.step)
}

/// Start a session for an EVAL of `body`: its source split into lines (trailing newlines
/// dropped) for `list`. The returned session must be given to [`end`] before it is dropped.
pub(super) fn begin(s: DebugSession, body: &[u8], hook: *const HookState) -> Session {
    let mut end = body.len();
    while end > 0 && (body[end - 1] == b'\n' || body[end - 1] == b'\r') {
        end -= 1;
    }
    let src = body[..end].split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
    let mut ldb = Box::new(Ldb {
        conn: s.conn,
        logs: Vec::new(),
        bp: Vec::new(),
        step: true,
        luabp: false,
        src,
        currentline: 0,
        cbuf: Vec::new(),
        maxlen: MAXLEN_DEFAULT,
        maxlen_hint_sent: false,
        resumed: Instant::now(),
        timeout_ms: s.timeout_ms,
        hook,
    });
    let p: *mut Ldb = &mut *ldb;
    SESSION.with(|c| c.set(p));
    Session(ldb)
}

/// A running session, owned by the run. Boxed: the thread-local pointer points into it.
pub(super) struct Session(Box<Ldb>);

/// End the session: the remaining logs and `<endsession>` go to the client.
pub(super) fn end(session: Session) {
    SESSION.with(|c| c.set(std::ptr::null_mut()));
    let mut ldb = session.0;
    ldb.log(b"<endsession>".to_vec());
    ldb.send_logs();
}

impl Ldb {
    fn log(&mut self, entry: Vec<u8>) {
        self.logs.push(entry);
    }

    /// ldbLogWithMaxLen: trimmed to maxlen, with a hint the first time.
    fn log_max(&mut self, mut entry: Vec<u8>) {
        let mut trimmed = false;
        if self.maxlen > 0 && entry.len() > self.maxlen {
            entry.truncate(self.maxlen);
            entry.extend_from_slice(b" ...");
            trimmed = true;
        }
        self.log(entry);
        if trimmed && !self.maxlen_hint_sent {
            self.maxlen_hint_sent = true;
            self.log(
                b"<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.".to_vec(),
            );
        }
    }

    /// ldbSendLogs: the logs as an array of status lines (CR and LF made spaces).
    fn send_logs(&mut self) {
        let mut proto = format!("*{}\r\n", self.logs.len()).into_bytes();
        for mut l in self.logs.drain(..) {
            for c in l.iter_mut() {
                if *c == b'\r' || *c == b'\n' {
                    *c = b' ';
                }
            }
            proto.push(b'+');
            proto.extend_from_slice(&l);
            proto.extend_from_slice(b"\r\n");
        }
        self.conn.write(&proto);
    }

    fn source_line(&self, line: i32) -> &[u8] {
        let idx = line as i64 - 1;
        if idx < 0 || idx >= self.src.len() as i64 {
            return b"<out of range source code line>";
        }
        &self.src[idx as usize]
    }

    fn is_breakpoint(&self, line: i32) -> bool {
        self.bp.contains(&line)
    }

    /// ldbLogSourceLine: `-> `, `  #`, `->#` or spaces, the number left-aligned in 3.
    fn log_source_line(&mut self, line: i32) {
        let bp = self.is_breakpoint(line);
        let prefix = match (self.currentline == line, bp) {
            (true, true) => "->#",
            (true, false) => "-> ",
            (false, true) => "  #",
            (false, false) => "   ",
        };
        let mut s = format!("{prefix}{line:<3} ").into_bytes();
        s.extend_from_slice(self.source_line(line));
        self.log(s);
    }

    fn list(&mut self, around: i32, context: i32) {
        for j in 1..=self.src.len() as i32 {
            if around != 0 && (around - j).abs() > context {
                continue;
            }
            self.log_source_line(j);
        }
    }

    /// `<redis> cmd args...` as luaRedisGenericCommand logs it (ten arguments at most).
    pub(super) fn log_command(&mut self, args: &[bytes::Bytes]) {
        let mut s = b"<redis>".to_vec();
        for (j, a) in args.iter().enumerate() {
            if j == 10 {
                s.extend_from_slice(format!(" ... ({} more)", args.len() - j - 1).as_bytes());
                break;
            }
            s.push(b' ');
            // sdscatsds of a C string argument stops at nothing: the bytes as they are.
            s.extend_from_slice(a);
        }
        self.log(s);
    }

    /// `<error> msg` (luaPushErrorBuff while stepping).
    pub(super) fn log_error(&mut self, msg: &[u8]) {
        let mut s = b"<error> ".to_vec();
        s.extend_from_slice(msg);
        self.log(s);
    }

    /// `<reply> ...`: a command's reply as ldbRedisProtocolToHuman prints it, in the
    /// protocol the script speaks.
    pub(super) fn log_reply(&mut self, r: &Reply, resp: u8) {
        let mut s = b"<reply> ".to_vec();
        human(&mut s, r, resp >= 3);
        self.log_max(s);
    }

    fn add_breakpoint(&mut self, line: i64) -> bool {
        if line <= 0 || line > self.src.len() as i64 {
            return false;
        }
        let line = line as i32;
        if !self.is_breakpoint(line) && self.bp.len() != MAX_BREAKPOINTS {
            self.bp.push(line);
            return true;
        }
        false
    }

    fn break_cmd(&mut self, argv: &[Vec<u8>]) {
        if argv.len() == 1 {
            if self.bp.is_empty() {
                self.log(b"No breakpoints set. Use 'b <line>' to add one.".to_vec());
            } else {
                self.log(format!("{} breakpoints set:", self.bp.len()).into_bytes());
                for line in self.bp.clone() {
                    self.log_source_line(line);
                }
            }
            return;
        }
        for arg in &argv[1..] {
            let Some(line) = crate::num::parse_ll(arg) else {
                let mut s = b"Invalid argument:'".to_vec();
                s.extend_from_slice(cstr(arg));
                s.push(b'\'');
                self.log(s);
                continue;
            };
            if line == 0 {
                self.bp.clear();
                self.log(b"All breakpoints removed.".to_vec());
            } else if line > 0 {
                if self.bp.len() == MAX_BREAKPOINTS {
                    self.log(b"Too many breakpoints set.".to_vec());
                } else if self.add_breakpoint(line) {
                    self.list(line as i32, 1);
                } else {
                    self.log(b"Wrong line number.".to_vec());
                }
            } else {
                let target = line.unsigned_abs();
                match self.bp.iter().position(|&b| b as u64 == target) {
                    Some(j) => {
                        self.bp.remove(j);
                        self.log(b"Breakpoint removed.".to_vec());
                    }
                    None => self.log(b"No breakpoint in the specified line.".to_vec()),
                }
            }
        }
    }

    fn maxlen_cmd(&mut self, argv: &[Vec<u8>]) {
        if argv.len() == 2 {
            let mut v = atoi(&argv[1]);
            self.maxlen_hint_sent = true;
            if v != 0 && v <= 60 {
                v = 60;
            }
            // size_t in Redis: a negative value wraps to a huge limit.
            self.maxlen = v as i64 as usize;
        }
        if self.maxlen > 0 {
            let shown = self.maxlen as i32;
            self.log(format!("<value> replies are truncated at {shown} bytes.").into_bytes());
        } else {
            self.log(b"<value> replies are unlimited.".to_vec());
        }
    }

    fn help(&mut self) {
        for l in HELP {
            self.log(l.as_bytes().to_vec());
        }
    }

    /// ldbReplParseCommand: one request of the client's (multi-bulk only, each argument 1 to
    /// 1024 bytes, at most 1024 of them), `Ok(None)` to read more, `Err` for a protocol error.
    /// C string rules: a NUL ends the headers' search as in Redis.
    fn parse_command(&self) -> Result<Option<Vec<Vec<u8>>>, ()> {
        let b = &self.cbuf;
        if b.is_empty() {
            return Ok(None);
        }
        let Some(star) = find_byte(b, 0, b'*') else {
            return Err(());
        };
        let Some(eol) = find_crlf(b, star) else {
            return Ok(None);
        };
        let argc = atoi(&b[star + 1..eol]);
        if argc <= 0 || argc > 1024 {
            return Err(());
        }
        let mut p = eol + 2;
        let mut argv = Vec::with_capacity(argc as usize);
        while (argv.len() as i32) < argc {
            if p >= b.len() || b[p] == 0 {
                return Ok(None);
            }
            if b[p] != b'$' {
                return Err(());
            }
            let Some(eol) = find_crlf(b, p) else {
                return Ok(None);
            };
            let slen = atoi(&b[p + 1..eol]);
            if slen <= 0 || slen > 1024 {
                return Err(());
            }
            p = eol + 2;
            let slen = slen as usize;
            if p + slen + 2 > b.len() {
                return Ok(None);
            }
            argv.push(b[p..p + slen].to_vec());
            p += slen;
            if b[p] != b'\r' || b[p + 1] != b'\n' {
                return Err(());
            }
            p += 2;
        }
        Ok(Some(argv))
    }

    /// Wait for a whole request of the client's. `Err(Some(msg))`: raise `msg`; `Err(None)`:
    /// the client is gone (or the server stops).
    fn next_command(&mut self) -> Result<Vec<Vec<u8>>, Option<&'static str>> {
        loop {
            match self.parse_command() {
                Ok(Some(argv)) => {
                    self.cbuf.clear();
                    return Ok(argv);
                }
                Err(()) => return Err(Some("protocol error")),
                Ok(None) => {}
            }
            let mut buf = [0u8; 1024];
            let n = loop {
                // SAFETY: the hook state outlives the run.
                let hook = unsafe { &*self.hook };
                if hook.kill.load(Ordering::Acquire) {
                    return Err(None);
                }
                match self.conn.read(&mut buf, READ_SLICE) {
                    Read::Data(n) => break n,
                    Read::Closed => return Err(None),
                    Read::Idle => (hook.tick)(),
                }
            };
            self.cbuf.extend_from_slice(&buf[..n]);
            if self.cbuf.len() > 1 << 20 {
                self.cbuf = Vec::new();
                return Err(Some("max client buffer reached"));
            }
        }
    }
}

/// What the debugger's command loop ends with.
enum Resume {
    /// Back to the script.
    Run,
    /// The client left: the script runs on without stops.
    Gone,
    /// Raise `{err="ERR <msg>"}` in the script.
    Raise(&'static str),
}

/// ldbRepl: serve the client's debugger commands until one resumes the script.
///
/// # Safety
/// `l` is the running script's state, inside the debugger's hook.
unsafe fn repl(l: *mut ffi::lua_State, s: &mut Ldb) -> Resume {
    loop {
        let argv = match s.next_command() {
            Ok(a) => a,
            Err(None) => {
                s.step = false;
                s.bp.clear();
                return Resume::Gone;
            }
            Err(Some(msg)) => return Resume::Raise(msg),
        };
        let name = cstr(&argv[0]);
        let is = |a: &str, b: &str| name.eq_ignore_ascii_case(a.as_bytes()) || name.eq_ignore_ascii_case(b.as_bytes());
        if is("h", "help") {
            s.help();
        } else if is("s", "step") || is("n", "next") {
            s.step = true;
            return Resume::Run;
        } else if is("c", "continue") {
            return Resume::Run;
        } else if is("t", "trace") {
            trace(l, s);
        } else if is("m", "maxlen") {
            s.maxlen_cmd(&argv);
        } else if is("b", "break") {
            s.break_cmd(&argv);
        } else if is("e", "eval") {
            eval(l, s, &argv);
        } else if is("a", "abort") {
            return Resume::Raise("script aborted for user request");
        } else if argv.len() > 1 && is("r", "redis") {
            redis(l, s, &argv);
        } else if is("p", "print") {
            if argv.len() == 2 {
                print(l, s, cstr(&argv[1]));
            } else {
                print_all(l, s);
            }
        } else if is("l", "list") {
            let mut around = s.currentline;
            let mut ctx = 5;
            if argv.len() > 1 {
                let num = atoi(&argv[1]);
                if num > 0 {
                    around = num;
                }
            }
            if argv.len() > 2 {
                ctx = atoi(&argv[2]);
            }
            s.list(around, ctx);
        } else if is("w", "whole") {
            s.list(1, 1_000_000);
        } else {
            s.log(
                b"<error> Unknown Redis Lua debugger command or wrong number of arguments."
                    .to_vec(),
            );
        }
        s.send_logs();
    }
}

/// luaLdbLineHook: called at every new line of the script (and every [`HOOK_COUNT`]
/// instructions), it stops where it should and runs the debugger's command loop.
pub(super) unsafe extern "C-unwind" fn ldb_hook(l: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    let Some(s) = session() else {
        return;
    };
    // SAFETY: the hook state outlives the run.
    let hook = &*s.hook;
    if hook.kill.load(Ordering::Acquire) {
        // SHUTDOWN or the server's end stops a debugged script as it stops any other.
        sffi::lua_clearinterrupt(l);
        ffi::lua_sethook(l, None, 0, 0);
        raise(l, crate::error::SCRIPT_KILLED);
    }
    let event = (*ar).event;
    if event == ffi::LUA_HOOKCOUNT {
        (hook.tick)();
    }
    ffi::lua_getstack(l, 0, ar);
    ffi::lua_getinfo(l, c"Sl".as_ptr(), ar);
    s.currentline = (*ar).currentline;
    let bp = s.is_breakpoint(s.currentline) || s.luabp;
    let short_src = CStr::from_ptr((*ar).short_src.as_ptr()).to_bytes();
    if !contains(short_src, b"user_script") {
        return;
    }
    let mut timeout = false;
    if event == ffi::LUA_HOOKCOUNT && !s.step && !bp {
        let limit = if s.timeout_ms > 0 { s.timeout_ms } else { 5000 };
        if s.resumed.elapsed().as_millis() as u64 >= limit {
            timeout = true;
            s.step = true;
        } else {
            return;
        }
    }
    if !(s.step || bp) {
        return;
    }
    let reason = if bp {
        if s.luabp {
            "redis.breakpoint() called"
        } else {
            "break point"
        }
    } else if timeout {
        "timeout reached, infinite loop?"
    } else {
        "step over"
    };
    s.step = false;
    s.luabp = false;
    s.log(format!("* Stopped at {}, stop reason = {reason}", s.currentline).into_bytes());
    s.log_source_line(s.currentline);
    s.send_logs();
    match repl(l, s) {
        Resume::Run => {}
        Resume::Gone if timeout => {
            raise(l, "ERR timeout during Lua debugging with client closing connection")
        }
        Resume::Gone => {}
        Resume::Raise(msg) => raise_err(l, msg),
    }
    s.resumed = Instant::now();
}

/// Raise `{err=msg}` (nothing owned is alive in the callers' frames at this point).
unsafe fn raise(l: *mut ffi::lua_State, msg: &str) -> ! {
    ffi::lua_createtable(l, 0, 1);
    ffi::lua_pushlstring(l, msg.as_ptr() as *const _, msg.len());
    ffi::lua_setfield(l, -2, c"err".as_ptr());
    ffi::lua_error(l)
}

/// luaPushError + luaError for a message without a code: `{err="ERR <msg>"}`.
unsafe fn raise_err(l: *mut ffi::lua_State, msg: &'static str) -> ! {
    match msg {
        "protocol error" => raise(l, "ERR protocol error"),
        "max client buffer reached" => raise(l, "ERR max client buffer reached"),
        _ => raise(l, "ERR script aborted for user request"),
    }
}

/// `redis.breakpoint()`: stop at the next line (true), or false outside a session.
pub(super) fn breakpoint() -> bool {
    match session() {
        Some(s) => {
            s.luabp = true;
            true
        }
        None => false,
    }
}

/// `redis.debug(...)`: `<debug> line N: v1, v2...` in the session's log (nothing outside
/// one). A C function, so the values are read off the stack as Redis reads them.
pub(super) unsafe extern "C-unwind" fn redis_debug(l: *mut ffi::lua_State) -> c_int {
    let Some(s) = session() else {
        return 0;
    };
    let argc = ffi::lua_gettop(l);
    let mut out = format!("<debug> line {}: ", s.currentline).into_bytes();
    for i in 1..=argc {
        cat_value(&mut out, l, i - argc - 1, 0);
        if i != argc {
            out.extend_from_slice(b", ");
        }
    }
    s.log(out);
    0
}

/// ldbCatStackValueRec: a Lua value as the debugger prints it (strings quoted, tables as
/// `{a; b}` or `{[k]=v; ...}`, functions and userdata by address). `idx` is relative (< 0).
unsafe fn cat_value(out: &mut Vec<u8>, l: *mut ffi::lua_State, idx: c_int, level: usize) {
    if level == MAX_DEPTH {
        out.extend_from_slice(b"<max recursion level reached! Nested table?>");
        return;
    }
    let level = level + 1;
    let t = ffi::lua_type(l, idx);
    match t {
        ffi::LUA_TSTRING => {
            let mut len = 0usize;
            let p = ffi::lua_tolstring(l, idx, &mut len);
            repr(out, std::slice::from_raw_parts(p as *const u8, len));
        }
        ffi::LUA_TBOOLEAN => out.extend_from_slice(if ffi::lua_toboolean(l, idx) != 0 {
            b"true"
        } else {
            b"false"
        }),
        ffi::LUA_TNUMBER => {
            out.extend_from_slice(crate::num::format_g(ffi::lua_tonumber(l, idx), 6).as_bytes())
        }
        ffi::LUA_TNIL => out.extend_from_slice(b"nil"),
        ffi::LUA_TTABLE => {
            let mut expected = 1.0;
            let mut is_array = true;
            let mut repr1 = Vec::new();
            let mut repr2 = Vec::new();
            ffi::lua_pushnil(l);
            while ffi::lua_next(l, idx - 1) != 0 {
                if is_array
                    && (ffi::lua_type(l, -2) != ffi::LUA_TNUMBER
                        || ffi::lua_tonumber(l, -2) != expected)
                {
                    is_array = false;
                }
                cat_value(&mut repr1, l, -1, level);
                repr1.extend_from_slice(b"; ");
                repr2.push(b'[');
                cat_value(&mut repr2, l, -2, level);
                repr2.extend_from_slice(b"]=");
                cat_value(&mut repr2, l, -1, level);
                repr2.extend_from_slice(b"; ");
                ffi::lua_settop(l, -2);
                expected += 1.0;
            }
            repr1.truncate(repr1.len().saturating_sub(2));
            repr2.truncate(repr2.len().saturating_sub(2));
            out.push(b'{');
            out.extend_from_slice(if is_array { &repr1 } else { &repr2 });
            out.push(b'}');
        }
        ffi::LUA_TFUNCTION | ffi::LUA_TUSERDATA | ffi::LUA_TTHREAD | ffi::LUA_TLIGHTUSERDATA => {
            let p = ffi::lua_topointer(l, idx);
            let name = match t {
                ffi::LUA_TFUNCTION => "function",
                ffi::LUA_TUSERDATA => "userdata",
                ffi::LUA_TTHREAD => "thread",
                _ => "light-userdata",
            };
            if p.is_null() {
                out.extend_from_slice(format!("\"{name}@(nil)\"").as_bytes());
            } else {
                out.extend_from_slice(format!("\"{name}@{p:p}\"").as_bytes());
            }
        }
        _ => out.extend_from_slice(b"\"<unknown-lua-type>\""),
    }
}

/// ldbLogStackValue: the value on top, after `prefix`, trimmed to maxlen.
unsafe fn log_top(l: *mut ffi::lua_State, s: &mut Ldb, prefix: &[u8]) {
    let mut out = prefix.to_vec();
    cat_value(&mut out, l, -1, 0);
    s.log_max(out);
}

/// ldbPrint: the first local called `name` from the innermost frame out, or KEYS/ARGV.
unsafe fn print(l: *mut ffi::lua_State, s: &mut Ldb, name: &[u8]) {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let mut level = 0;
    while ffi::lua_getstack(l, level, &mut ar) != 0 {
        level += 1;
        let mut i = 1;
        loop {
            let n = ffi::lua_getlocal(l, &ar, i);
            if n.is_null() {
                break;
            }
            i += 1;
            if CStr::from_ptr(n).to_bytes() == name {
                log_top(l, s, b"<value> ");
                ffi::lua_settop(l, -2);
                return;
            }
            ffi::lua_settop(l, -2);
        }
    }
    if name == b"ARGV" || name == b"KEYS" {
        let g = if name == b"ARGV" { c"ARGV" } else { c"KEYS" };
        ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, g.as_ptr());
        log_top(l, s, b"<value> ");
        ffi::lua_settop(l, -2);
    } else {
        s.log(b"No such variable.".to_vec());
    }
}

/// ldbPrintAll: every local of the current frame but Lua's temporaries.
unsafe fn print_all(l: *mut ffi::lua_State, s: &mut Ldb) {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let mut vars = 0;
    if ffi::lua_getstack(l, 0, &mut ar) != 0 {
        let mut i = 1;
        loop {
            let n = ffi::lua_getlocal(l, &ar, i);
            if n.is_null() {
                break;
            }
            i += 1;
            let name = CStr::from_ptr(n).to_bytes();
            if !contains(name, b"(*temporary)") {
                let mut prefix = b"<value> ".to_vec();
                prefix.extend_from_slice(name);
                prefix.extend_from_slice(b" = ");
                log_top(l, s, &prefix);
                vars += 1;
            }
            ffi::lua_settop(l, -2);
        }
    }
    if vars == 0 {
        s.log(b"No local variables in the current context.".to_vec());
    }
}

/// ldbTrace: the script's frames from the current one out.
unsafe fn trace(l: *mut ffi::lua_State, s: &mut Ldb) {
    let mut ar: ffi::lua_Debug = std::mem::zeroed();
    let mut level = 0;
    while ffi::lua_getstack(l, level, &mut ar) != 0 {
        ffi::lua_getinfo(l, c"Snl".as_ptr(), &mut ar);
        let short_src = CStr::from_ptr(ar.short_src.as_ptr()).to_bytes();
        if contains(short_src, b"user_script") {
            let name = if ar.name.is_null() {
                "top level".to_string()
            } else {
                CStr::from_ptr(ar.name).to_string_lossy().into_owned()
            };
            let which = if level == 0 { "In" } else { "From" };
            s.log(format!("{which} {name}:").into_bytes());
            s.log_source_line(ar.currentline);
        }
        level += 1;
    }
    if level == 0 {
        s.log(b"<error> Can't retrieve Lua stack.".to_vec());
    }
}

/// ldbEval: the arguments joined by spaces, compiled as `return <code>` or else as a
/// statement, run in its own frame; the result (or error) logged.
unsafe fn eval(l: *mut ffi::lua_State, s: &mut Ldb, argv: &[Vec<u8>]) {
    let code = argv[1..].join(&b' ');
    let mut expr = b"return ".to_vec();
    expr.extend_from_slice(&code);
    let name = c"@ldb_eval".as_ptr();
    if ffi::luaL_loadbuffer(l, expr.as_ptr() as *const _, expr.len(), name) != 0 {
        ffi::lua_settop(l, -2);
        if ffi::luaL_loadbuffer(l, code.as_ptr() as *const _, code.len(), name) != 0 {
            log_error_on_top(l, s);
            return;
        }
    }
    if ffi::lua_pcall(l, 0, 1, 0) != 0 {
        log_error_on_top(l, s);
        return;
    }
    log_top(l, s, b"<retval> ");
    ffi::lua_settop(l, -2);
}

/// `<error> <message on top>` (%s of lua_tostring: up to a NUL), popping it.
unsafe fn log_error_on_top(l: *mut ffi::lua_State, s: &mut Ldb) {
    let p = ffi::lua_tostring(l, -1);
    let msg = if p.is_null() {
        b"(null)".to_vec()
    } else {
        CStr::from_ptr(p).to_bytes().to_vec()
    };
    s.log_error(&msg);
    ffi::lua_settop(l, -2);
}

/// ldbRedis: `redis.call` with the arguments, stepping so the command and its reply log.
unsafe fn redis(l: *mut ffi::lua_State, s: &mut Ldb, argv: &[Vec<u8>]) {
    let argc = argv.len() as c_int;
    if ffi::lua_checkstack(l, argc + 1) == 0 {
        s.log(b"<reply> ".to_vec());
        return;
    }
    ffi::lua_getfield(l, ffi::LUA_GLOBALSINDEX, c"redis".as_ptr());
    ffi::lua_pushstring(l, c"call".as_ptr());
    ffi::lua_gettable(l, -2);
    for a in &argv[1..] {
        ffi::lua_pushlstring(l, a.as_ptr() as *const _, a.len());
    }
    s.step = true;
    ffi::lua_pcall(l, argc - 1, 1, 0);
    s.step = false;
    ffi::lua_settop(l, -3);
}

/// A reply as ldbRedisProtocolToHuman reads its encoding (RESP2 or RESP3).
fn human(out: &mut Vec<u8>, r: &Reply, r3: bool) {
    let list = |out: &mut Vec<u8>, items: &[Reply], open: &[u8], close: u8| {
        out.extend_from_slice(open);
        for (j, it) in items.iter().enumerate() {
            human(out, it, r3);
            if j + 1 != items.len() {
                out.push(b',');
            }
        }
        out.push(close);
    };
    match r {
        Reply::Simple(b) => repr(out, &[b"+".as_slice(), b].concat()),
        Reply::Error(b) => repr(out, &[b"-".as_slice(), b].concat()),
        Reply::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        Reply::Bulk(b) => repr(out, b),
        Reply::Nil | Reply::NilArray if r3 => out.extend_from_slice(b"(null)"),
        Reply::Nil | Reply::NilArray => out.extend_from_slice(b"NULL"),
        Reply::Array(items) | Reply::Push(items) => list(out, items, b"[", b']'),
        Reply::Set(items) if r3 => list(out, items, b"~(", b')'),
        Reply::Set(items) => list(out, items, b"[", b']'),
        Reply::Map(pairs) if r3 => {
            out.push(b'{');
            for (j, (k, v)) in pairs.iter().enumerate() {
                human(out, k, r3);
                out.extend_from_slice(b" => ");
                human(out, v, r3);
                if j + 1 != pairs.len() {
                    out.push(b',');
                }
            }
            out.push(b'}');
        }
        Reply::Map(pairs) => {
            let flat: Vec<Reply> = pairs
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect();
            list(out, &flat, b"[", b']');
        }
        Reply::Double(d) if r3 => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(crate::num::format_double(*d).as_bytes());
        }
        Reply::Double(d) => repr(out, crate::num::format_double(*d).as_bytes()),
        Reply::HumanDouble(d) if r3 => {
            out.extend_from_slice(b"(double) ");
            out.extend_from_slice(crate::num::format_human(*d).as_bytes());
        }
        Reply::HumanDouble(d) => repr(out, crate::num::format_human(*d).as_bytes()),
        Reply::Bool(b) if r3 => out.extend_from_slice(if *b { b"#true" } else { b"#false" }),
        Reply::Bool(b) => out.push(if *b { b'1' } else { b'0' }),
        // RESP3's verbatim strings and big numbers are types Redis's reader skips.
        Reply::Verbatim(_) | Reply::BigNumber(_) if r3 => {}
        Reply::Verbatim(b) | Reply::BigNumber(b) => repr(out, b),
        // RESP2 sends the reply alone; RESP3's attribute frame is a type Redis's reader skips.
        Reply::Attributed(_, inner) if !r3 => human(out, inner, r3),
        Reply::Attributed(..) => {}
        Reply::NoReply => {}
    }
}

/// sdscatrepr: quoted, with C escapes and `\xHH` for what isprint refuses.
fn repr(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    for &c in b {
        match c {
            b'\\' | b'"' => {
                out.push(b'\\');
                out.push(c);
            }
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            0x20..=0x7e => out.push(c),
            _ => out.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

/// An argument as C's string functions see it: up to its first NUL.
fn cstr(a: &[u8]) -> &[u8] {
    match a.iter().position(|&c| c == 0) {
        Some(p) => &a[..p],
        None => a,
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// strchr from `from`: stops at a NUL.
fn find_byte(b: &[u8], from: usize, c: u8) -> Option<usize> {
    for (i, &x) in b.iter().enumerate().skip(from) {
        if x == c {
            return Some(i);
        }
        if x == 0 {
            return None;
        }
    }
    None
}

/// strstr(.., "\r\n") from `from`: stops at a NUL.
fn find_crlf(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < b.len() && b[i] != 0 {
        if b[i] == b'\r' && i + 1 < b.len() && b[i + 1] == b'\n' {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// C's atoi: leading blanks, a sign, digits; anything else ends it (0 if none).
fn atoi(b: &[u8]) -> i32 {
    let b = cstr(b);
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        neg = b[i] == b'-';
        i += 1;
    }
    let mut v: i64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        v = (v * 10 + (b[i] - b'0') as i64).min(1 << 40);
        i += 1;
    }
    (if neg { -v } else { v }) as i32
}

/// The debugger's help, line by line (ldbRepl's `help`).
const HELP: &[&str] = &[
    "Redis Lua debugger help:",
    "[h]elp               Show this help.",
    "[s]tep               Run current line and stop again.",
    "[n]ext               Alias for step.",
    "[c]ontinue           Run till next breakpoint.",
    "[l]ist               List source code around current line.",
    "[l]ist [line]        List source code around [line].",
    "                     line = 0 means: current position.",
    "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
    "                     to show before/after [line].",
    "[w]hole              List all source code. Alias for 'list 1 1000000'.",
    "[p]rint              Show all the local variables.",
    "[p]rint <var>        Show the value of the specified variable.",
    "                     Can also show global vars KEYS and ARGV.",
    "[b]reak              Show all breakpoints.",
    "[b]reak <line>       Add a breakpoint to the specified line.",
    "[b]reak -<line>      Remove breakpoint from the specified line.",
    "[b]reak 0            Remove all breakpoints.",
    "[t]race              Show a backtrace.",
    "[e]val <code>        Execute some Lua code (in a different callframe).",
    "[r]edis <cmd>        Execute a Redis command.",
    "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
    "                     Specifying zero as <len> means unlimited.",
    "[a]bort              Stop the execution of the script. In sync",
    "                     mode dataset changes will be retained.",
    "",
    "Debugger functions you can call from Lua scripts:",
    "redis.debug()        Produce logs in the debugger console.",
    "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
    "                     next line of code.",
];
