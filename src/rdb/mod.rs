//! Redis's RDB format, version 10 as redis-server 7.0 writes it, in both directions: the
//! primitives ([`encode`], [`decode`]), the packed encodings values travel in ([`blob`]),
//! values ([`object`]), whole files ([`file`]) and DUMP payloads ([`payload`]).
//!
//! A file written here loads in redis-server 7.0 with every key, value and TTL equal, and a
//! file redis-server wrote (any version 1..=10 it reads) loads here. Corrupt or truncated
//! input is refused with the complaint redis-server logs for it, never half-trusted: every
//! length is checked against the bytes that exist before anything is allocated for it.

pub mod blob;
mod crc;
pub mod decode;
pub mod encode;
pub mod file;
pub mod lzf;
pub mod object;
pub mod payload;
pub mod snapshot;
pub mod stream;

pub use crc::crc64;
pub use decode::{Decoder, LoadError, Reader, SliceSource, Source, StreamSource, RDB_VERSION};
pub use encode::{put_len, put_string};
pub use payload::{put_footer, verify_payload};
pub use stream::put_stream;

/// A function library's code (RDB_OPCODE_FUNCTION2).
pub const OPCODE_FUNCTION2: u8 = file::opcode::FUNCTION2;
/// The function library format of 7.0's release candidates (RDB_OPCODE_FUNCTION).
pub const OPCODE_FUNCTION: u8 = file::opcode::FUNCTION;

#[cfg(test)]
mod tests;
