//! Replies as values. Handlers build them; the connection encodes them in the client's RESP
//! version (see `protocol::encode`), and the Lua bridge converts them to Lua values, so one
//! handler serves RESP2, RESP3 and scripts.

use crate::error::RedisError;
use bytes::Bytes;

/// A command's reply, before it is encoded for the client's protocol (RESP2 or RESP3). The
/// embedding API's direct access returns it as RESP3 types.
///
/// ```
/// use resplock::Reply;
/// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
/// let db = server.db(0);
/// assert_eq!(db.command(&["INCR", "n"]), Reply::Int(1));
/// assert_eq!(db.command(&["GET", "missing"]), Reply::Nil);
/// assert_eq!(db.command(&["HGETALL", "missing"]), Reply::Map(vec![])); // RESP3 types
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`
    Simple(Bytes),
    /// `-ERR ...` (text without the `-`)
    Error(Bytes),
    /// `:1`
    Int(i64),
    /// `$3\r\nabc`: a binary-safe string.
    Bulk(Bytes),
    /// Null bulk string: `$-1` in RESP2, `_` in RESP3.
    Nil,
    /// Null array: `*-1` in RESP2, `_` in RESP3.
    NilArray,
    /// `*n`: an array of replies.
    Array(Vec<Reply>),
    /// RESP3 map; a flat array of key, value, ... in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 set; an array in RESP2.
    Set(Vec<Reply>),
    /// RESP3 double; a bulk string in RESP2.
    Double(f64),
    /// A double printed as Redis's addReplyHumanLongDouble prints it (`%.17Lf`, trailing
    /// zeroes removed: GEOPOS's and WITHCOORD's coordinates): RESP3 double, RESP2 bulk string.
    HumanDouble(f64),
    /// RESP3 boolean; `:1`/`:0` in RESP2.
    Bool(bool),
    /// RESP3 verbatim string (`=len\r\ntxt:...`); a bulk string in RESP2.
    Verbatim(Bytes),
    /// RESP3 big number; a bulk string in RESP2.
    BigNumber(Bytes),
    /// RESP3 push (`>`); an array in RESP2.
    Push(Vec<Reply>),
    /// A RESP3 attribute (`|n` and its pairs) ahead of the reply it describes; RESP2 clients and
    /// scripts get the reply alone, as Redis drops attributes there (DEBUG PROTOCOL attrib).
    Attributed(Vec<(Reply, Reply)>, Box<Reply>),
    /// Nothing is written: the handler already queued all its output on the client's push
    /// queue (SUBSCRIBE and friends send one confirmation per channel).
    NoReply,
}

impl Reply {
    /// `+OK`.
    ///
    /// ```
    /// assert_eq!(resplock::Reply::ok(), resplock::Reply::simple("OK"));
    /// ```
    pub const fn ok() -> Reply {
        Reply::Simple(Bytes::from_static(b"OK"))
    }
    /// A status reply.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert_eq!(server.db(0).command(&["PING"]), resplock::Reply::simple("PONG"));
    /// ```
    pub const fn simple(s: &'static str) -> Reply {
        Reply::Simple(Bytes::from_static(s.as_bytes()))
    }
    /// A bulk string.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("k", "v");
    /// assert_eq!(server.db(0).command(&["GET", "k"]), resplock::Reply::bulk(bytes::Bytes::from_static(b"v")));
    /// ```
    pub fn bulk(b: impl Into<Bytes>) -> Reply {
        Reply::Bulk(b.into())
    }
    /// A bulk string copied from `s`.
    ///
    /// ```
    /// assert_eq!(resplock::Reply::bulk_str("v"), resplock::Reply::bulk_static("v"));
    /// ```
    pub fn bulk_str(s: &str) -> Reply {
        Reply::Bulk(Bytes::copy_from_slice(s.as_bytes()))
    }
    /// A bulk string of static text.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// server.db(0).set("lock:a", "owner-1");
    /// let reply = server.db(0).command(&["GET", "lock:a"]);
    /// assert_eq!(reply, resplock::Reply::bulk_static("owner-1"));
    /// ```
    pub const fn bulk_static(s: &'static str) -> Reply {
        Reply::Bulk(Bytes::from_static(s.as_bytes()))
    }
    /// An error reply.
    ///
    /// ```
    /// assert!(resplock::Reply::error("ERR no such key".into()).is_error());
    /// ```
    pub fn error(e: RedisError) -> Reply {
        Reply::Error(e.into_bytes())
    }
    /// Whether this is an error reply.
    ///
    /// ```
    /// # let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    /// assert!(server.db(0).command(&["NOSUCHCOMMAND"]).is_error());
    /// assert!(!server.db(0).command(&["PING"]).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

impl From<RedisError> for Reply {
    fn from(e: RedisError) -> Self {
        Reply::error(e)
    }
}

pub type CmdResult = Result<Reply, RedisError>;
