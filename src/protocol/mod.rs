//! RESP on the wire: requests in (multibulk and inline), replies out (RESP2 and RESP3).
//! Knows nothing of commands or keys.
//!
//! Requests are parsed by hand rather than with a generic RESP codec because a server must
//! reproduce Redis's own request rules: only arrays of bulk strings or inline lines are commands,
//! each violation has its own `Protocol error: ...` text, and a declared length must never be
//! allocated before the bytes arrive.

mod encode;
mod output;
mod parse;

pub use encode::{encode, encode_bulks, Sink};
pub use output::{Output, MAX_SLICES, SHARE_MIN};
pub use parse::{
    parse_request, peek_requests, split_args, Limits, ParseState, ProtocolError, BIG_ARG, PROTO_INLINE_MAX_SIZE,
    PROTO_MAX_BULK_LEN, UNAUTH_MAX_BULK, UNAUTH_MAX_MULTIBULK,
};
