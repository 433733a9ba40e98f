//! DUMP payloads: an RDB object (type byte and value), then the RDB version (2 bytes) and the
//! CRC-64 of everything before (8 bytes), both little-endian. RESTORE and FUNCTION RESTORE
//! accept a payload only if both check out.

use super::crc::crc64;
use super::decode::RDB_VERSION;
use super::decode::{LoadError, Reader};
use super::object::{self, read_object, Limits};
use crate::keyspace::Value;

/// Close a payload as DUMP does: the RDB version, then the CRC-64 of everything before.
pub fn put_footer(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// verifyDumpPayload: at least the 10-byte footer, a version this server reads, a matching
/// checksum. Returns the body (the payload without its footer).
pub fn verify_payload(p: &[u8]) -> Option<&[u8]> {
    if p.len() < 10 {
        return None;
    }
    let (body, footer) = p.split_at(p.len() - 10);
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return None;
    }
    let crc = crc64(0, &p[..p.len() - 8]);
    (footer[2..] == crc.to_le_bytes()).then_some(body)
}

/// DUMP's payload for `v` (createDumpPayload); `compress` is rdbcompression.
pub fn dump(v: &Value, compress: bool) -> Vec<u8> {
    let mut out = object::serialize(v, compress);
    put_footer(&mut out);
    out
}

/// Why RESTORE refuses a payload.
#[derive(Debug)]
pub enum RestoreError {
    /// Wrong version or checksum: "DUMP payload version or checksum are wrong".
    Footer,
    /// The body does not decode: "Bad data format" (the reason is logged at verbose level).
    BadData(LoadError),
}

/// RESTORE's reading of a payload: the footer checked, then one object. An empty aggregate
/// is bad data here (Redis's rdbLoadObject returns no object for it).
pub fn restore(p: &[u8], limits: &Limits) -> Result<Value, RestoreError> {
    let body = verify_payload(p).ok_or(RestoreError::Footer)?;
    let mut r = Reader::new(body);
    let t = r.read_u8().map_err(RestoreError::BadData)?;
    if !object::types::is_object_type(t) {
        return Err(RestoreError::BadData(LoadError::Eof));
    }
    match read_object(&mut r, t, limits) {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(RestoreError::BadData(LoadError::Eof)),
        Err(e) => Err(RestoreError::BadData(e)),
    }
}
