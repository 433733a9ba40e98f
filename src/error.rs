//! Every error text Redis 7.0 sends that resplock can send, spelled once.
//!
//! Handlers return [`RedisError`], whose text is the whole error line without the leading `-`
//! (so the code, `ERR`/`WRONGTYPE`/..., is part of it), exactly as Redis writes it.

use bytes::Bytes;
use std::borrow::Cow;
use std::fmt;

pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const SYNTAX: &str = "ERR syntax error";
pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
pub const NOT_FLOAT: &str = "ERR value is not a valid float";
pub const HASH_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const HASH_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
pub const DECR_OVERFLOW: &str = "ERR decrement would overflow";
pub const INCR_NAN_OR_INF: &str = "ERR increment would produce NaN or Infinity";
pub const NO_SUCH_KEY: &str = "ERR no such key";
pub const DB_INDEX_OUT_OF_RANGE: &str = "ERR DB index is out of range";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const AUTH_NO_PASSWORD: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const STRING_TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
pub const TIMEOUT_NOT_FLOAT: &str = "ERR timeout is not a float or out of range";
pub const INVALID_CURSOR: &str = "ERR invalid cursor";
pub const MAX_CLIENTS: &str = "ERR max number of clients reached";
pub const SAME_OBJECT: &str = "ERR source and destination objects are the same";
pub const VALUE_OUT_OF_RANGE_POSITIVE: &str = "ERR value is out of range, must be positive";

/// One Redis error reply: the text after `-`, e.g. `ERR syntax error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisError(pub Cow<'static, str>);

impl RedisError {
    pub const fn new(text: &'static str) -> Self {
        RedisError(Cow::Borrowed(text))
    }
    pub fn owned(text: String) -> Self {
        RedisError(Cow::Owned(text))
    }
    pub fn text(&self) -> &str {
        &self.0
    }
    pub fn into_bytes(self) -> Bytes {
        match self.0 {
            Cow::Borrowed(s) => Bytes::from_static(s.as_bytes()),
            Cow::Owned(s) => Bytes::from(s),
        }
    }
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&'static str> for RedisError {
    fn from(s: &'static str) -> Self {
        RedisError::new(s)
    }
}

/// Redis replaces CR and LF in error texts by spaces (addReplyErrorFormat).
fn sanitize(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

/// `ERR wrong number of arguments for 'get' command`; `fullname` is `get` or `client|setname`.
pub fn wrong_arity(fullname: &str) -> RedisError {
    RedisError::owned(sanitize(&format!(
        "ERR wrong number of arguments for '{fullname}' command"
    )))
}

/// C's `%s` stops at a NUL byte; Redis formats arguments with it.
fn until_nul(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// Redis formats the first arguments of an unknown command, each quoted and followed by a space,
/// stopping once the list reaches 128 bytes; names and arguments are cut at 128 bytes.
fn args_beginning(args: &[Bytes]) -> String {
    let mut out = String::new();
    for a in args {
        if out.len() >= 128 {
            break;
        }
        let room = 128 - out.len();
        let a = until_nul(a);
        let s = String::from_utf8_lossy(&a[..a.len().min(room)]);
        out.push('\'');
        out.push_str(&s);
        out.push_str("' ");
    }
    out
}

fn cut128(b: &[u8]) -> String {
    let b = until_nul(b);
    String::from_utf8_lossy(&b[..b.len().min(128)]).into_owned()
}

/// `ERR unknown command 'foo', with args beginning with: 'a' 'b' `
pub fn unknown_command(name: &[u8], args: &[Bytes]) -> RedisError {
    RedisError::owned(sanitize(&format!(
        "ERR unknown command '{}', with args beginning with: {}",
        cut128(name),
        args_beginning(args)
    )))
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.`
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> RedisError {
    RedisError::owned(sanitize(&format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        cut128(sub),
        cmd.to_ascii_uppercase()
    )))
}

/// `ERR invalid expire time in 'set' command`
pub fn invalid_expire(cmd: &str) -> RedisError {
    RedisError::owned(format!("ERR invalid expire time in '{cmd}' command"))
}

/// Any error text built at run time (already carrying its code).
pub fn err(text: impl Into<String>) -> RedisError {
    RedisError::owned(sanitize(&text.into()))
}

pub const EXPIRE_NX_CONFLICT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const EXPIRE_GT_LT_CONFLICT: &str = "ERR GT and LT options at the same time are not compatible";
pub const INVALID_FIRST_DB: &str = "ERR invalid first DB index";
pub const INVALID_SECOND_DB: &str = "ERR invalid second DB index";

/// `ERR Unsupported option x` (EXPIRE's flags); Redis prints the option with %s, so it stops
/// at a NUL byte.
pub fn unsupported_option(opt: &[u8]) -> RedisError {
    let end = opt.iter().position(|&b| b == 0).unwrap_or(opt.len());
    err(format!(
        "ERR Unsupported option {}",
        String::from_utf8_lossy(&opt[..end])
    ))
}

// Hashes, connection and server commands.
pub const VALUE_NAN_OR_INF: &str = "ERR value is NaN or Infinity";
pub const VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
pub const NO_SUCH_CLIENT: &str = "ERR No such client";
pub const CLIENT_ID_INVALID: &str = "ERR client-id should be greater than 0";
pub const INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
pub const CLIENT_NAME_INVALID: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
pub const HELLO_PROTO_NOT_INT: &str = "ERR Protocol version is not an integer or out of range";
pub const HELLO_NOAUTH: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
pub const NO_CONFIG_FILE: &str = "ERR The server is running without a config file";
pub const TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";

/// `ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.`
/// (Redis's addReplySubcommandSyntaxError: the subcommand as typed, the command upper-cased.)
pub fn subcommand_syntax(sub: &[u8], cmd: &[u8]) -> RedisError {
    RedisError::owned(sanitize(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        cut128(sub),
        String::from_utf8_lossy(cmd).to_ascii_uppercase()
    )))
}

/// `ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are
/// allowed in this context` (RESP2 subscribed mode).
pub fn pubsub_context(fullname: &str) -> RedisError {
    RedisError::owned(format!(
        "ERR Can't execute '{fullname}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    ))
}

// ---- scripting ----
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";
pub const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const SCRIPT_TOO_MANY_KEYS: &str = "ERR Number of keys can't be greater than number of args";
pub const SCRIPT_NEGATIVE_KEYS: &str = "ERR Number of keys can't be negative";
pub const SCRIPT_INVALID_SHEBANG: &str = "ERR Invalid script shebang";
pub const SCRIPT_INVALID_ENGINE: &str = "ERR Invalid engine in script shebang";
pub const SCRIPT_BINARY_CHUNK: &str =
    "ERR Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'";
pub const SCRIPT_RO_WITH_WRITE_FLAG: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
pub const SCRIPT_FLUSH_OPTION: &str = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
