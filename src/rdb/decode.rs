//! Reading RDB's primitives (lengths, strings in their three encodings, times, doubles) from
//! a slice (DUMP payloads) or a stream (files, replication), and the errors a load reports,
//! worded as redis-server words them in its log.

use super::lzf;
use std::fmt;
use std::io::Read;

/// The RDB version resplock writes and the newest it reads (redis-server 7.0's).
pub const RDB_VERSION: u16 = 10;

/// Why a load stopped. `Display` gives the line redis-server logs for the same failure.
#[derive(Debug)]
pub enum LoadError {
    /// The input ended inside a value (rdbLoadRio's `eoferr`).
    Eof,
    /// A structure is malformed (rdbReportCorruptRDB); `line` is where redis-server 7.0.15's
    /// rdb.c raises the same complaint, as its log names it.
    Corrupt {
        /// rdb.c's line.
        line: u32,
        /// What is wrong.
        reason: String,
    },
    /// A read that redis-server reports as a read error rather than corruption
    /// (rdbReportReadError), with its rdb.c line.
    Read {
        /// rdb.c's line.
        line: u32,
        /// What failed.
        reason: String,
    },
    /// The file does not start with "REDIS".
    Signature,
    /// An RDB version this server does not read.
    Version(u32),
    /// The CRC-64 footer does not match the contents.
    Checksum {
        /// Computed over the contents.
        expected: u64,
        /// Stored in the footer.
        got: u64,
    },
    /// SELECTDB names a database this server does not have.
    TooManyDbs {
        /// The server's `databases`.
        databases: usize,
    },
    /// The same key twice in one database (redis-server panics).
    DuplicateKey {
        /// The key.
        key: Vec<u8>,
        /// Its database.
        db: usize,
    },
    /// A function library failed to load ("Failed loading library, ...").
    Function(String),
    /// Module data no module here can read.
    Module(String),
    /// The operating system refused a read.
    Io(std::io::Error),
}

impl LoadError {
    pub(crate) fn corrupt(line: u32, reason: impl Into<String>) -> Self {
        LoadError::Corrupt {
            line,
            reason: reason.into(),
        }
    }

    pub(crate) fn read(line: u32, reason: impl Into<String>) -> Self {
        LoadError::Read {
            line,
            reason: reason.into(),
        }
    }

    /// The warning lines redis-server logs for this failure while loading a file, in order;
    /// `offset` is how far the load got.
    pub fn log_lines(&self, offset: u64) -> Vec<String> {
        let internal = |line: u32, reason: &str| {
            format!(
                "Internal error in RDB reading offset {offset}, function at rdb.c:{line} -> {reason}"
            )
        };
        match self {
            LoadError::Eof | LoadError::Io(_) => vec![
                "Short read or OOM loading DB. Unrecoverable error, aborting now.".into(),
                internal(3240, "Unexpected EOF reading RDB file"),
            ],
            LoadError::Corrupt { line, reason } | LoadError::Read { line, reason } => {
                vec![internal(*line, reason)]
            }
            LoadError::Checksum { expected, got } => vec![
                format!(
                    "Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now."
                ),
                internal(3216, "RDB CRC error"),
            ],
            LoadError::Function(e) => vec![
                format!("Failed loading library, {e}"),
                "Short read or OOM loading DB. Unrecoverable error, aborting now.".into(),
                internal(3240, "Unexpected EOF reading RDB file"),
            ],
            other => vec![other.to_string()],
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Eof => f.write_str("Unexpected EOF reading RDB file"),
            LoadError::Corrupt { reason, .. } | LoadError::Read { reason, .. } => {
                f.write_str(reason)
            }
            LoadError::Signature => f.write_str("Wrong signature trying to load DB from file"),
            LoadError::Version(v) => write!(f, "Can't handle RDB format version {v}"),
            LoadError::Checksum { expected, got } => write!(
                f,
                "Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now."
            ),
            LoadError::TooManyDbs { databases } => write!(
                f,
                "FATAL: Data file was created with a Redis server configured to handle more than {databases} databases. Exiting"
            ),
            LoadError::DuplicateKey { key, db } => write!(
                f,
                "RDB has duplicated key '{}' in DB {db}",
                String::from_utf8_lossy(key)
            ),
            LoadError::Function(e) => write!(f, "Failed loading library, {e}"),
            LoadError::Module(e) => f.write_str(e),
            LoadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Where a decoder's bytes come from.
pub trait Source {
    /// Fill `buf` completely, or fail with [`LoadError::Eof`] (or an I/O error).
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), LoadError>;
    /// Bytes consumed so far.
    fn consumed(&self) -> u64;
    /// Bytes known to remain (a slice knows; a stream does not): lets a declared length be
    /// refused before anything is allocated for it.
    fn known_remaining(&self) -> Option<usize>;
    /// The CRC-64 of every byte consumed so far.
    fn crc(&self) -> u64;
}

/// A payload in memory.
pub struct SliceSource<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Source for SliceSource<'_> {
    #[inline]
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), LoadError> {
        let end = self.pos.checked_add(buf.len()).ok_or(LoadError::Eof)?;
        let s = self.data.get(self.pos..end).ok_or(LoadError::Eof)?;
        buf.copy_from_slice(s);
        self.pos = end;
        Ok(())
    }

    fn consumed(&self) -> u64 {
        self.pos as u64
    }

    fn known_remaining(&self) -> Option<usize> {
        Some(self.data.len() - self.pos)
    }

    fn crc(&self) -> u64 {
        super::crc::crc64(0, &self.data[..self.pos])
    }
}

/// A file or socket, read through a buffer, checksummed as it is read.
pub struct StreamSource<R: Read> {
    inner: std::io::BufReader<R>,
    pos: u64,
    crc: u64,
}

impl<R: Read> StreamSource<R> {
    /// Read `inner` from its current position.
    pub fn new(inner: R) -> Self {
        StreamSource {
            inner: std::io::BufReader::with_capacity(1 << 16, inner),
            pos: 0,
            crc: 0,
        }
    }

    /// The underlying reader (to read what follows the RDB, as an AOF tail).
    pub fn into_inner(self) -> std::io::BufReader<R> {
        self.inner
    }
}

impl<R: Read> Source for StreamSource<R> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<(), LoadError> {
        match self.inner.read_exact(buf) {
            Ok(()) => {
                self.pos += buf.len() as u64;
                self.crc = super::crc::crc64(self.crc, buf);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(LoadError::Eof),
            Err(e) => Err(LoadError::Io(e)),
        }
    }

    fn consumed(&self) -> u64 {
        self.pos
    }

    fn known_remaining(&self) -> Option<usize> {
        None
    }

    fn crc(&self) -> u64 {
        self.crc
    }
}

/// Reads RDB primitives from a [`Source`].
pub struct Decoder<S: Source> {
    src: S,
}

/// A decoder over a payload in memory, with the option-returning reads FUNCTION RESTORE uses.
pub type Reader<'a> = Decoder<SliceSource<'a>>;

/// rdbLoadLenByRef's result: a length, or the special encoding of a string that follows.
enum Len {
    Plain(u64),
    Encoded(u8),
}

/// Strings longer than this are read in steps of this size, so a corrupt length in a stream
/// costs only the bytes that actually arrive.
const READ_STEP: usize = 1 << 20;

impl<'a> Decoder<SliceSource<'a>> {
    /// Read `data` from its start.
    pub fn new(data: &'a [u8]) -> Self {
        Decoder {
            src: SliceSource { data, pos: 0 },
        }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.src.data.len() - self.src.pos
    }

    /// One byte (rdbLoadType).
    pub fn byte(&mut self) -> Option<u8> {
        self.read_u8().ok()
    }

    /// A length (rdbLoadLen).
    pub fn length(&mut self) -> Option<u64> {
        self.read_len().ok()
    }

    /// A string in any of its encodings.
    pub fn string(&mut self) -> Option<Vec<u8>> {
        self.read_string().ok()
    }
}

impl<S: Source> Decoder<S> {
    /// Decode from `src`.
    pub fn from_source(src: S) -> Self {
        Decoder { src }
    }

    /// The source (to read what follows).
    pub fn into_source(self) -> S {
        self.src
    }

    /// Bytes consumed so far.
    pub fn consumed(&self) -> u64 {
        self.src.consumed()
    }

    /// The CRC-64 of the bytes consumed so far.
    pub fn crc(&self) -> u64 {
        self.src.crc()
    }

    /// One byte.
    #[inline]
    pub fn read_u8(&mut self) -> Result<u8, LoadError> {
        let mut b = [0u8; 1];
        self.src.fill(&mut b)?;
        Ok(b[0])
    }

    /// `N` bytes.
    #[inline]
    pub fn read_array<const N: usize>(&mut self) -> Result<[u8; N], LoadError> {
        let mut b = [0u8; N];
        self.src.fill(&mut b)?;
        Ok(b)
    }

    /// `n` bytes, allocated only as they arrive (a corrupt length fails at the end of the
    /// input, not in the allocator).
    pub fn read_bytes(&mut self, n: u64) -> Result<Vec<u8>, LoadError> {
        let n = usize::try_from(n).map_err(|_| LoadError::Eof)?;
        if let Some(rem) = self.src.known_remaining() {
            if n > rem {
                return Err(LoadError::Eof);
            }
            let mut v = vec![0u8; n];
            self.src.fill(&mut v)?;
            return Ok(v);
        }
        let mut v = Vec::with_capacity(n.min(READ_STEP));
        while v.len() < n {
            let at = v.len();
            let step = (n - at).min(READ_STEP);
            v.resize(at + step, 0);
            self.src.fill(&mut v[at..])?;
        }
        Ok(v)
    }

    fn read_len_or_enc(&mut self) -> Result<Len, LoadError> {
        let b = self.read_u8()?;
        Ok(match b >> 6 {
            0 => Len::Plain((b & 0x3f) as u64),
            1 => Len::Plain((((b & 0x3f) as u64) << 8) | self.read_u8()? as u64),
            3 => Len::Encoded(b & 0x3f),
            _ if b == 0x80 => Len::Plain(u32::from_be_bytes(self.read_array()?) as u64),
            _ if b == 0x81 => Len::Plain(u64::from_be_bytes(self.read_array()?)),
            _ => {
                return Err(LoadError::corrupt(
                    236,
                    format!("Unknown length encoding {} in rdbLoadLen()", b >> 6),
                ))
            }
        })
    }

    /// rdbLoadLen: a length (the encoded-string marker reads as its 6 bits, as there).
    pub fn read_len(&mut self) -> Result<u64, LoadError> {
        Ok(match self.read_len_or_enc()? {
            Len::Plain(n) => n,
            Len::Encoded(e) => e as u64,
        })
    }

    /// rdbGenericLoadStringObject: a raw, integer-encoded or LZF-compressed string.
    pub fn read_string(&mut self) -> Result<Vec<u8>, LoadError> {
        match self.read_len_or_enc()? {
            Len::Plain(n) => self.read_bytes(n),
            Len::Encoded(0) => Ok((self.read_u8()? as i8).to_string().into_bytes()),
            Len::Encoded(1) => Ok(i16::from_le_bytes(self.read_array()?)
                .to_string()
                .into_bytes()),
            Len::Encoded(2) => Ok(i32::from_le_bytes(self.read_array()?)
                .to_string()
                .into_bytes()),
            Len::Encoded(3) => {
                let clen = self.read_len()?;
                let len = self.read_len()?;
                let compressed = self.read_bytes(clen)?;
                let len = usize::try_from(len).map_err(|_| LoadError::Eof)?;
                if len > lzf::max_expansion(compressed.len()) {
                    return Err(LoadError::corrupt(413, "Invalid LZF compressed string"));
                }
                lzf::decompress(&compressed, len)
                    .ok_or_else(|| LoadError::corrupt(413, "Invalid LZF compressed string"))
            }
            Len::Encoded(e) => Err(LoadError::corrupt(
                529,
                format!("Unknown RDB string encoding type {e}"),
            )),
        }
    }

    /// rdbLoadDoubleValue: the text form of a double (RDB_TYPE_ZSET), 253/254/255 for NaN,
    /// +inf and -inf.
    pub fn read_text_double(&mut self) -> Result<f64, LoadError> {
        let len = self.read_u8()?;
        match len {
            255 => Ok(f64::NEG_INFINITY),
            254 => Ok(f64::INFINITY),
            253 => Ok(f64::NAN),
            n => {
                let b = self.read_bytes(n as u64)?;
                parse_c_double(&b).ok_or(LoadError::Eof)
            }
        }
    }

    /// rdbLoadBinaryDoubleValue: eight bytes little-endian.
    pub fn read_binary_double(&mut self) -> Result<f64, LoadError> {
        Ok(f64::from_le_bytes(self.read_array()?))
    }

    /// rdbLoadMillisecondTime (RDB 9 and later are little-endian, as are older files
    /// written on the little-endian machines this runs on).
    pub fn read_ms_time(&mut self) -> Result<i64, LoadError> {
        Ok(i64::from_le_bytes(self.read_array()?))
    }

    /// rdbLoadTime: seconds as a 32-bit integer (RDB_OPCODE_EXPIRETIME).
    pub fn read_secs_time(&mut self) -> Result<i64, LoadError> {
        Ok(i32::from_le_bytes(self.read_array()?) as i64)
    }
}

/// C's strtod/sscanf("%lg") over the leading part of `b` that forms a number; None if none
/// does. Scores stored as text (old sorted sets, listpack scores) go through it.
pub fn parse_c_double(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?.trim_start();
    // The longest prefix that parses, as strtod stops at the first character it cannot use.
    let mut end = s.len();
    while end > 0 {
        if let Some(prefix) = s.get(..end) {
            let t = prefix.to_ascii_lowercase();
            let t = t.trim_start_matches('+');
            let v = match t {
                "inf" | "infinity" => Some(f64::INFINITY),
                "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
                "nan" | "-nan" => Some(f64::NAN),
                _ => t.parse::<f64>().ok(),
            };
            if v.is_some() {
                return v;
            }
        }
        end -= 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rdb::encode::put_len;

    #[test]
    fn lengths_round_trip_in_every_width() {
        for n in [
            0u64,
            63,
            64,
            16383,
            16384,
            u32::MAX as u64,
            u32::MAX as u64 + 1,
        ] {
            let mut v = Vec::new();
            put_len(&mut v, n);
            assert_eq!(Reader::new(&v).length(), Some(n));
        }
        assert!(matches!(
            Reader::new(&[0x85]).read_len(),
            Err(LoadError::Corrupt { line: 236, .. })
        ));
    }

    #[test]
    fn strings_read_in_their_integer_and_compressed_encodings() {
        assert_eq!(Reader::new(&[0xC0, 0xFB]).string(), Some(b"-5".to_vec()));
        assert_eq!(
            Reader::new(&[0xC1, 0x39, 0x30]).string(),
            Some(b"12345".to_vec())
        );
        assert_eq!(
            Reader::new(&[0xC2, 0x00, 0x00, 0x00, 0x80]).string(),
            Some(b"-2147483648".to_vec())
        );
        // "ababab" as LZF: clen 5, len 6.
        assert_eq!(
            Reader::new(&[0xC3, 5, 6, 0x01, b'a', b'b', 0x40, 0x01]).string(),
            Some(b"ababab".to_vec())
        );
        assert!(matches!(
            Reader::new(&[0xC3, 5, 7, 0x01, b'a', b'b', 0x40, 0x01]).read_string(),
            Err(LoadError::Corrupt { line: 413, .. })
        ));
        assert!(matches!(
            Reader::new(&[0xC4]).read_string(),
            Err(LoadError::Corrupt { line: 529, .. })
        ));
    }

    #[test]
    fn a_stream_refuses_a_huge_declared_length_without_allocating_it() {
        let mut v = Vec::new();
        put_len(&mut v, u64::MAX / 2);
        v.extend_from_slice(b"short");
        let mut d = Decoder::from_source(StreamSource::new(&v[..]));
        assert!(matches!(d.read_string(), Err(LoadError::Eof)));
        let mut d = Reader::new(&v);
        assert!(matches!(d.read_string(), Err(LoadError::Eof)));
    }

    #[test]
    fn text_doubles_parse_as_strtod_does() {
        assert_eq!(parse_c_double(b"1.5"), Some(1.5));
        assert_eq!(parse_c_double(b" -2e3xyz"), Some(-2000.0));
        assert_eq!(parse_c_double(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_c_double(b"abc"), None);
        let mut r = Reader::new(&[3, b'2', b'.', b'5', 254, 255]);
        assert_eq!(r.read_text_double().ok(), Some(2.5));
        assert_eq!(r.read_text_double().ok(), Some(f64::INFINITY));
        assert_eq!(r.read_text_double().ok(), Some(f64::NEG_INFINITY));
    }
}
