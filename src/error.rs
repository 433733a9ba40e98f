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
/// RESPLOCK.FAULT ERROR's text must be one line (it is sent as an error reply).
pub const TEST_FAULT_ERROR_TEXT: &str = "ERR the error text must be non-empty and on one line";
/// RESPLOCK.RESTART FROM a snapshot RESPLOCK.SNAPSHOT never took.
pub const TEST_NO_SUCH_SNAPSHOT: &str = "ERR no such snapshot";

/// One Redis error reply: the text after `-`, e.g. `ERR syntax error`. Bytes, not a string:
/// Redis echoes a client's arguments in errors byte for byte, valid UTF-8 or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RedisError(pub Cow<'static, [u8]>);

impl RedisError {
    pub const fn new(text: &'static str) -> Self {
        RedisError(Cow::Borrowed(text.as_bytes()))
    }
    pub fn owned(text: String) -> Self {
        RedisError(Cow::Owned(text.into_bytes()))
    }
    pub fn from_bytes(text: Vec<u8>) -> Self {
        RedisError(Cow::Owned(text))
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    /// The text for logs and messages (invalid UTF-8 shown as U+FFFD).
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
    pub fn into_bytes(self) -> Bytes {
        match self.0 {
            Cow::Borrowed(s) => Bytes::from_static(s),
            Cow::Owned(s) => Bytes::from(s),
        }
    }
}

impl fmt::Display for RedisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl From<&'static str> for RedisError {
    fn from(s: &'static str) -> Self {
        RedisError::new(s)
    }
}

/// Redis's addReplyErrorFormat: CR and LF are trimmed from both ends, and any left inside
/// become spaces, so a client's argument can never break the reply line.
fn sanitize(mut v: Vec<u8>) -> RedisError {
    let start = v
        .iter()
        .position(|b| !matches!(b, b'\r' | b'\n'))
        .unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !matches!(b, b'\r' | b'\n'))
        .map_or(start, |p| p + 1);
    v.truncate(end);
    v.drain(..start);
    for b in v.iter_mut() {
        if matches!(*b, b'\r' | b'\n') {
            *b = b' ';
        }
    }
    RedisError::from_bytes(v)
}

/// Concatenate the pieces of an error text.
fn join(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// `ERR wrong number of arguments for 'get' command`; `fullname` is `get` or `client|setname`.
pub fn wrong_arity(fullname: &str) -> RedisError {
    RedisError::owned(format!(
        "ERR wrong number of arguments for '{fullname}' command"
    ))
}

/// C's `%s` stops at a NUL byte; Redis formats arguments with it.
fn until_nul(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// Redis formats the first arguments of an unknown command, each quoted and followed by a space,
/// stopping once the list reaches 128 bytes; names and arguments are cut at 128 bytes.
fn args_beginning(args: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in args {
        if out.len() >= 128 {
            break;
        }
        let room = 128 - out.len();
        let a = until_nul(a);
        out.push(b'\'');
        out.extend_from_slice(&a[..a.len().min(room)]);
        out.extend_from_slice(b"' ");
    }
    out
}

/// `%.128s`
fn cut128(b: &[u8]) -> &[u8] {
    let b = until_nul(b);
    &b[..b.len().min(128)]
}

/// `ERR unknown command 'foo', with args beginning with: 'a' 'b' `
pub fn unknown_command(name: &[u8], args: &[Bytes]) -> RedisError {
    sanitize(join(&[
        b"ERR unknown command '",
        cut128(name),
        b"', with args beginning with: ",
        &args_beginning(args),
    ]))
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.`
pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> RedisError {
    sanitize(join(&[
        b"ERR unknown subcommand '",
        cut128(sub),
        b"'. Try ",
        cmd.to_ascii_uppercase().as_bytes(),
        b" HELP.",
    ]))
}

/// `ERR invalid expire time in 'set' command`
pub fn invalid_expire(cmd: &str) -> RedisError {
    RedisError::owned(format!("ERR invalid expire time in '{cmd}' command"))
}

/// Any error text built at run time (already carrying its code).
pub fn err(text: impl Into<String>) -> RedisError {
    sanitize(text.into().into_bytes())
}

pub const EXPIRE_NX_CONFLICT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const EXPIRE_GT_LT_CONFLICT: &str = "ERR GT and LT options at the same time are not compatible";
pub const INVALID_FIRST_DB: &str = "ERR invalid first DB index";
pub const INVALID_SECOND_DB: &str = "ERR invalid second DB index";

/// `ERR Unsupported option x` (EXPIRE's flags); Redis prints the option with %s, so it stops
/// at a NUL byte.
pub fn unsupported_option(opt: &[u8]) -> RedisError {
    sanitize(join(&[b"ERR Unsupported option ", until_nul(opt)]))
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
    sanitize(join(&[
        b"ERR unknown subcommand or wrong number of arguments for '",
        cut128(sub),
        b"'. Try ",
        &cmd.to_ascii_uppercase(),
        b" HELP.",
    ]))
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

// ---- transactions ----
pub const MULTI_NESTED: &str = "ERR MULTI calls can not be nested";
pub const DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const WATCH_IN_MULTI: &str = "ERR WATCH inside MULTI is not allowed";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const NOT_ALLOWED_IN_MULTI: &str = "ERR Command not allowed inside a transaction";

/// `EXECABORT Transaction discarded because of: <error>` (EXEC itself was rejected). Redis
/// quotes the error as it was built, before addReplyError put `ERR ` in front of plain
/// messages, so a leading `ERR ` is left out while other codes (BUSY, NOAUTH) stay.
pub fn execabort_because(why: &RedisError) -> RedisError {
    let text = why.as_bytes();
    let text = text.strip_prefix(b"ERR ").unwrap_or(text);
    sanitize(join(&[
        b"EXECABORT Transaction discarded because of: ",
        text,
    ]))
}

// ---- lists and blocking pops ----
pub const INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const COUNT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const MAXLEN_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const NUMKEYS_NOT_POSITIVE: &str = "ERR numkeys should be greater than 0";
pub const COUNT_NOT_POSITIVE: &str = "ERR count should be greater than 0";
pub const UNBLOCK_REASON: &str = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
pub const UNBLOCKED_BY_CLIENT: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

/// `ERR value is out of range, value must between MIN and MAX` (getRangeLongFromObject
/// without a message of its own).
pub fn out_of_range_between(min: i64, max: i64) -> RedisError {
    RedisError::owned(format!(
        "ERR value is out of range, value must between {min} and {max}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_bytes_are_echoed_exactly_with_line_breaks_trimmed_then_mapped() {
        assert_eq!(
            unsupported_option(b"\r\n").as_bytes(),
            b"ERR Unsupported option "
        );
        assert_eq!(
            unsupported_option(b"\r\nfoo").as_bytes(),
            b"ERR Unsupported option   foo"
        );
        assert_eq!(
            unknown_command(b"\xff", &[Bytes::from_static(b"a")]).as_bytes(),
            b"ERR unknown command '\xff', with args beginning with: 'a' "
        );
    }
}
