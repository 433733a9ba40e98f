//! Requests in: multibulk and inline, with Redis's limits and protocol error texts.
//!
//! Memory follows the bytes that arrived, never a declared length: an argument of
//! [`BIG_ARG`] bytes or more, once its first megabyte has arrived, gets a buffer of its own,
//! sized for it and filled only as its bytes come in (Redis's PROTO_MBULK_BIG_ARG path; pages
//! not yet written cost no memory), so a large request costs its arguments once, and each
//! completed argument is handed on without a copy.

use crate::num::parse_ll;
use bytes::{Buf, Bytes, BytesMut};

/// Longest inline request, or count line, Redis accepts (PROTO_INLINE_MAX_SIZE).
pub const PROTO_INLINE_MAX_SIZE: usize = 64 * 1024;
/// proto-max-bulk-len's default.
pub const PROTO_MAX_BULK_LEN: i64 = 512 * 1024 * 1024;
/// Largest multibulk count accepted: Redis 7.0 takes up to INT_MAX (memory is bounded by the
/// bytes that actually arrive, never by the declared count).
const PROTO_MAX_MULTIBULK: i64 = i32::MAX as i64;
/// Arguments this long or longer are read into a buffer of their own (PROTO_MBULK_BIG_ARG).
pub const BIG_ARG: usize = 32 * 1024;
/// Bytes of a big argument that must have arrived before it gets a buffer of its full
/// declared size (what arrived so far is copied once into it).
const EAGER_ROOM: usize = 1024 * 1024;
/// Arguments before a big one, in all, up to which they are copied out of the buffer that
/// held the big argument's first bytes (see `make_room_for_big_arg`).
const HEAD_COPY_MAX: usize = 64 * 1024;
/// Largest multibulk count a client that still has to authenticate may declare.
pub const UNAUTH_MAX_MULTIBULK: i64 = 10;
/// Longest bulk a client that still has to authenticate may declare.
pub const UNAUTH_MAX_BULK: i64 = 16 * 1024;

/// What a client may send, checked as the request is read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// proto-max-bulk-len.
    pub max_bulk_len: i64,
    /// The client must still authenticate: Redis caps what it may declare (at most
    /// [`UNAUTH_MAX_MULTIBULK`] arguments of at most [`UNAUTH_MAX_BULK`] bytes) so that an
    /// unauthenticated peer cannot make the server buffer much.
    pub unauthenticated: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: PROTO_MAX_BULK_LEN,
            unauthenticated: false,
        }
    }
}

/// Progress through a multibulk request that has not fully arrived, so a large request that
/// trickles in is scanned once rather than from its start on every read.
#[derive(Debug, Default)]
pub struct ParseState {
    /// Arguments still expected.
    remaining: usize,
    /// Offset in the buffer of the next unparsed argument.
    pos: usize,
    /// (start, len) of the arguments located in the buffer and not yet split off.
    spans: Vec<(usize, usize)>,
    /// Arguments already split off the buffer (they precede `spans`).
    args: Vec<Bytes>,
    /// The length of the big argument whose header was consumed and whose bytes the buffer
    /// holds from offset 0.
    big: Option<usize>,
    /// The length of a big argument whose header was read and which has not got its own
    /// buffer yet (less than [`EAGER_ROOM`] of it arrived).
    declared_big: Option<usize>,
    /// What [`peek_requests`] found, so the parse proper does not scan those requests again.
    ahead: Ahead,
}

/// Requests [`peek_requests`] walked over and that have not been parsed yet: for each, its
/// length and argument count, then its arguments' (start, len) from the request's first byte,
/// in one vector read from `at`. Valid while they stay at the front of the buffer in order:
/// every parse of a request that does not take the first of them (an unauthenticated client,
/// a smaller proto-max-bulk-len) forgets them all. The vector is lent by a per-thread pool
/// while the client has bytes to parse, like its query buffer.
#[derive(Debug, Default)]
struct Ahead {
    entries: Vec<(u32, u32)>,
    at: usize,
}

/// Look-ahead vectors kept per thread; more are freed.
const AHEAD_KEEP: usize = 64;
/// A look-ahead vector larger than this (a long request walked over) is freed, not kept.
const AHEAD_MAX: usize = 1024;

thread_local! {
    static AHEAD_FREE: std::cell::RefCell<Vec<Vec<(u32, u32)>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Ahead {
    fn clear(&mut self) {
        self.entries.clear();
        self.at = 0;
    }

    /// Room to record into: a pooled vector if none is held.
    fn lend(&mut self) {
        if self.entries.capacity() == 0 {
            if let Some(v) = AHEAD_FREE.with(|f| f.borrow_mut().pop()) {
                self.entries = v;
            }
        }
    }

    /// Give the vector back to the pool.
    fn release(&mut self) {
        let mut v = std::mem::take(&mut self.entries);
        self.at = 0;
        if v.capacity() == 0 || v.capacity() > AHEAD_MAX {
            return;
        }
        v.clear();
        AHEAD_FREE.with(|f| {
            let mut f = f.borrow_mut();
            if f.len() < AHEAD_KEEP {
                f.push(v);
            }
        });
    }
}

impl ParseState {
    /// Give back the argument vector of a request that has run: the next request's
    /// arguments are collected in it (its room reused) unless it is large.
    pub fn recycle(&mut self, mut args: Vec<Bytes>) {
        if self.args.capacity() == 0 && args.capacity() <= RECYCLE_MAX_ARGS {
            args.clear();
            self.args = args;
        }
    }

    /// Bytes the current big argument still needs (its `\r\n` included), if the request is
    /// in one: the connection reads no more than that, into the room the parser made.
    pub fn big_arg_missing(&self, buf: &BytesMut) -> Option<usize> {
        self.big.map(|len| (len + 2).saturating_sub(buf.len()))
    }

    /// The length of the big argument being read, once its header arrived (whether or not
    /// it has its own buffer yet): Redis sizes the query buffer for it at that point, which
    /// is what client memory accounting counts.
    pub fn big_arg_len(&self) -> Option<usize> {
        self.big.or(self.declared_big)
    }

    /// Bytes held by the arguments of the unfinished request that left the buffer.
    pub fn held_bytes(&self) -> usize {
        self.args.iter().map(|a| a.len()).sum()
    }

    /// Give the look-ahead's room back (an idle client keeps none).
    pub fn release(&mut self) {
        self.ahead.release();
    }
}

/// A request that violates the protocol: the text after `-ERR Protocol error: `, bytes as
/// Redis sends them (a client's byte is echoed raw; CR and LF become spaces). The connection
/// replies with it and closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub Vec<u8>);

fn perr(s: &str) -> ProtocolError {
    ProtocolError(s.as_bytes().to_vec())
}

/// Largest argument vector [`ParseState::recycle`] keeps.
const RECYCLE_MAX_ARGS: usize = 64;

/// Find `\r` from `from`; Redis looks for CR, and then requires LF to be buffered too. Redis
/// searches with strchr, which stops at a NUL byte: we do the same.
fn find_cr(buf: &[u8], from: usize) -> Option<usize> {
    find_before_nul(&buf[from..], b'\r').map(|p| p + from)
}

fn find_before_nul(buf: &[u8], needle: u8) -> Option<usize> {
    match buf.iter().position(|&b| b == needle || b == 0) {
        Some(p) if buf[p] == needle => Some(p),
        _ => None,
    }
}

/// Parse one request from the front of `buf`, consuming it. `Ok(None)`: more bytes are
/// needed (nothing consumed). `Ok(Some(vec![]))`: an empty request (blank line, `*0`) was
/// consumed and needs no reply. Arguments share `buf`'s memory (no copy).
/// `state` carries progress between calls and must be used with the same buffer.
pub fn parse_request(
    buf: &mut BytesMut,
    state: &mut ParseState,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    state.declared_big = None;
    if state.remaining > 0 {
        return parse_bulks(buf, state, limits);
    }
    if buf.is_empty() {
        return Ok(None);
    }
    if let Some(args) = take_ahead(buf, state, limits) {
        return Ok(Some(args));
    }
    if buf[0] == b'*' {
        parse_multibulk(buf, state, limits)
    } else {
        parse_inline(buf)
    }
}

/// Longest request [`peek_requests`] walks over: beyond this many arguments it stops (a look
/// ahead that costs as much as the parse itself is no saving).
const PEEK_MAX_ARGS: usize = 64;

/// Look ahead over the complete multibulk requests at the front of `buf`, up to `max` of
/// them, without consuming or allocating anything: `f` gets each one's first arguments (at
/// most `N`). Returns how many it walked over. It stops at the first request that has not
/// fully arrived, is inline, has more than [`PEEK_MAX_ARGS`] arguments or looks malformed
/// (the parse proper reports that). For a look ahead only (a connection prefetching keys):
/// it checks no limit.
pub fn peek_requests<'a, const N: usize>(
    buf: &'a [u8],
    state: &mut ParseState,
    max: usize,
    mut f: impl FnMut(&[&'a [u8]]),
) -> usize {
    state.ahead.clear();
    if state.remaining > 0 || buf.len() > u32::MAX as usize {
        return 0;
    }
    let ahead = &mut state.ahead;
    ahead.lend();
    let mut at = 0;
    let mut walked = 0;
    while walked < max && buf.get(at) == Some(&b'*') {
        // The header's LF must have arrived too: the arguments start after it.
        let Some(nl) = find_cr(buf, at).filter(|&nl| nl + 2 <= buf.len()) else {
            break;
        };
        let count = match parse_ll(&buf[at + 1..nl]) {
            Some(n) if n > 0 && n as usize <= PEEK_MAX_ARGS => n as usize,
            _ => break,
        };
        let mut out: [&'a [u8]; N] = [&[]; N];
        let header = ahead.entries.len();
        ahead.entries.push((0, count as u32));
        let mut pos = nl + 2;
        let mut complete = true;
        for i in 0..count {
            let len = match (buf.get(pos), find_cr(buf, pos)) {
                (Some(b'$'), Some(nl)) => match parse_ll(&buf[pos + 1..nl]) {
                    Some(n) if n >= 0 => Some((nl, n as usize)),
                    _ => None,
                },
                _ => None,
            };
            let Some((nl, len)) = len else {
                complete = false;
                break;
            };
            let start = nl + 2;
            let end = start.saturating_add(len);
            if end.saturating_add(2) > buf.len() {
                complete = false;
                break;
            }
            if let Some(slot) = out.get_mut(i) {
                *slot = &buf[start..end];
            }
            ahead.entries.push(((start - at) as u32, len as u32));
            pos = end + 2;
        }
        if !complete {
            ahead.entries.truncate(header);
            break;
        }
        ahead.entries[header].0 = (pos - at) as u32;
        f(&out[..count.min(N)]);
        walked += 1;
        at = pos;
    }
    walked
}

/// The request at the front of `buf`, if [`peek_requests`] already located its arguments
/// and they pass `limits` (else the look ahead is forgotten and the request parsed afresh).
fn take_ahead(
    buf: &mut BytesMut,
    state: &mut ParseState,
    limits: &Limits,
) -> Option<Vec<Bytes>> {
    let ahead = &mut state.ahead;
    let &(len, count) = ahead.entries.get(ahead.at)?;
    let first = ahead.at + 1;
    let range = first..first + count as usize;
    let fits = !limits.unauthenticated
        && ahead.entries[range.clone()]
            .iter()
            .all(|&(_, l)| l as i64 <= limits.max_bulk_len);
    if !fits || (len as usize) > buf.len() {
        ahead.clear();
        return None;
    }
    ahead.at = range.end;
    let spans = &ahead.entries[range];
    let frame = buf.split_to(len as usize).freeze();
    let mut args = std::mem::take(&mut state.args);
    args.clear();
    args.reserve_exact(spans.len());
    // As in `parse_bulks`: the last argument takes the frame's own reference.
    let (&(s, l), rest) = spans.split_last()?;
    args.extend(rest.iter().map(|&(s, l)| frame.slice(s as usize..(s + l) as usize)));
    let mut last = frame;
    last.advance(s as usize);
    last.truncate(l as usize);
    args.push(last);
    Some(args)
}

fn parse_multibulk(
    buf: &mut BytesMut,
    state: &mut ParseState,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let nl = match find_cr(buf, 0) {
        Some(p) => p,
        None => {
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return Err(perr("too big mbulk count string"));
            }
            return Ok(None);
        }
    };
    if nl + 1 >= buf.len() {
        return Ok(None);
    }
    let count = match parse_ll(&buf[1..nl]) {
        Some(n) if n <= PROTO_MAX_MULTIBULK => n,
        _ => return Err(perr("invalid multibulk length")),
    };
    if count > UNAUTH_MAX_MULTIBULK && limits.unauthenticated {
        return Err(perr("unauthenticated multibulk length"));
    }
    if count <= 0 {
        buf.advance(nl + 2);
        return Ok(Some(Vec::new()));
    }
    state.remaining = count as usize;
    state.pos = nl + 2;
    // The spans list is kept between requests (no allocation per request), unless a long
    // request left it big.
    if state.spans.capacity() > 16 {
        state.spans = Vec::new();
    }
    state.spans.clear();
    state.spans.reserve((count as usize).min(1024));
    // A recycled vector (see `ParseState::recycle`) is kept; its room is reused.
    state.args.clear();
    parse_bulks(buf, state, limits)
}

/// Locate the remaining arguments of a multibulk request; consume it once all have arrived.
fn parse_bulks(
    buf: &mut BytesMut,
    state: &mut ParseState,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    while state.remaining > 0 {
        if let Some(len) = state.big {
            // The buffer holds this argument from offset 0, in room made for it.
            if buf.len() < len + 2 {
                return Ok(None);
            }
            let whole = buf.len() == len + 2;
            let mut arg = buf.split_to(len + 2);
            arg.truncate(len);
            state.args.push(arg.freeze());
            if whole {
                // The argument's buffer went with it: start afresh (the connection makes room).
                *buf = BytesMut::new();
            }
            state.big = None;
            state.pos = 0;
            state.remaining -= 1;
            continue;
        }
        let pos = state.pos;
        let nl = match find_cr(buf, pos) {
            Some(p) => p,
            None => {
                if buf.len() - pos > PROTO_INLINE_MAX_SIZE {
                    return Err(perr("too big bulk count string"));
                }
                return Ok(None);
            }
        };
        if nl + 1 >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            // addReplyErrorFormat: the byte raw, CR and LF as spaces.
            let got = match buf[pos] {
                b'\r' | b'\n' => b' ',
                b => b,
            };
            let mut msg = b"expected '$', got '".to_vec();
            msg.extend_from_slice(&[got, b'\'']);
            return Err(ProtocolError(msg));
        }
        let len = match parse_ll(&buf[pos + 1..nl]) {
            Some(n) if n >= 0 && n <= limits.max_bulk_len => n,
            _ => return Err(perr("invalid bulk length")),
        };
        if len > UNAUTH_MAX_BULK && limits.unauthenticated {
            return Err(perr("unauthenticated bulk length"));
        }
        let len = len as usize;
        let start = nl + 2;
        if len >= BIG_ARG && buf.len() - start < len + 2 {
            // Room for the whole argument once a good part of it has arrived: a declared
            // length alone allocates nothing.
            if buf.len() - start >= (len + 2).min(EAGER_ROOM) {
                make_room_for_big_arg(buf, state, start, len);
                continue;
            }
            state.declared_big = Some(len);
            return Ok(None);
        }
        if buf.len() < start + len + 2 {
            return Ok(None);
        }
        state.spans.push((start, len));
        state.pos = start + len + 2;
        state.remaining -= 1;
    }
    let frame = buf.split_to(state.pos).freeze();
    state.pos = 0;
    let mut args = std::mem::take(&mut state.args);
    args.reserve_exact(state.spans.len());
    // Each argument holds a reference to the request's bytes; the last one takes the frame's
    // own (a reference count is an atomic add, and another to drop it).
    if let Some(&(s, l)) = state.spans.last() {
        let n = state.spans.len() - 1;
        args.extend(state.spans[..n].iter().map(|&(s, l)| frame.slice(s..s + l)));
        let mut last = frame;
        last.advance(s);
        last.truncate(l);
        args.push(last);
    }
    state.spans.clear();
    Ok(Some(args))
}

/// A big argument starts at `start` and has not fully arrived: split the arguments before it
/// off the buffer, and move what arrived of it into a buffer of exactly its size, which the
/// connection then fills (Redis's sdsMakeRoomForNonGreedy for a big argument). Untouched room
/// costs no resident memory, so memory grows with the bytes received, not the length declared.
fn make_room_for_big_arg(buf: &mut BytesMut, state: &mut ParseState, start: usize, len: usize) {
    let head = buf.split_to(start).freeze();
    // The arguments before it (SET and a key) are copied out when small, so the buffer the
    // first megabyte grew in is freed now rather than held by them until the big argument
    // has arrived: with a few clients sending 10 MB values at once, those buffers raised
    // the peak RSS above redis-server's.
    let head = if state.spans.iter().map(|&(_, l)| l).sum::<usize>() <= HEAD_COPY_MAX {
        Bytes::copy_from_slice(&head)
    } else {
        head
    };
    for (s, l) in state.spans.drain(..) {
        state.args.push(head.slice(s..s + l));
    }
    let mut room = BytesMut::with_capacity(len + 2);
    room.extend_from_slice(buf);
    *buf = room;
    state.pos = 0;
    state.big = Some(len);
}

fn parse_inline(buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let nl = match find_before_nul(buf, b'\n') {
        Some(p) => p,
        None => {
            if buf.len() > PROTO_INLINE_MAX_SIZE {
                return Err(perr("too big inline request"));
            }
            return Ok(None);
        }
    };
    let line = buf.split_to(nl + 1);
    let mut end = nl;
    if end > 0 && line[end - 1] == b'\r' {
        end -= 1;
    }
    match split_args(&line[..end]) {
        Some(args) => Ok(Some(args)),
        None => Err(perr("unbalanced quotes in request")),
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c)
}

fn hex_val(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Redis's sdssplitargs: space-separated words, "double quoted" with C escapes and \xHH,
/// 'single quoted' with \' only. A closing quote must be followed by a space or the end.
pub fn split_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let mut args = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && is_space(line[i]) {
            i += 1;
        }
        if i >= n {
            return Some(args);
        }
        let mut cur = Vec::new();
        let mut inq = false;
        let mut insq = false;
        loop {
            if inq {
                if i >= n {
                    return None;
                }
                let c = line[i];
                if c == b'\\'
                    && i + 3 < n
                    && line[i + 1] == b'x'
                    && hex_val(line[i + 2]).is_some()
                    && hex_val(line[i + 3]).is_some()
                {
                    cur.push(hex_val(line[i + 2]).unwrap() * 16 + hex_val(line[i + 3]).unwrap());
                    i += 3;
                } else if c == b'\\' && i + 1 < n {
                    i += 1;
                    cur.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        o => o,
                    });
                } else if c == b'"' {
                    if i + 1 < n && !is_space(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else if insq {
                if i >= n {
                    return None;
                }
                let c = line[i];
                if c == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    i += 1;
                    cur.push(b'\'');
                } else if c == b'\'' {
                    if i + 1 < n && !is_space(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    cur.push(c);
                }
            } else {
                if i >= n {
                    break;
                }
                match line[i] {
                    c if is_space(c) => break,
                    b'"' => inq = true,
                    b'\'' => insq = true,
                    c => cur.push(c),
                }
            }
            i += 1;
        }
        args.push(Bytes::from(cur));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &[u8]) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        parse_request(
            &mut BytesMut::from(s),
            &mut ParseState::default(),
            &Limits::default(),
        )
    }

    fn text(e: ProtocolError) -> String {
        String::from_utf8(e.0).unwrap()
    }

    #[test]
    fn peek_requests_walks_only_over_requests_that_have_fully_arrived() {
        let mut st = ParseState::default();
        let b = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$2\r\ncc";
        let mut seen = Vec::new();
        let n = peek_requests::<2>(b, &mut st, 16, |a| seen.push(a.to_vec()));
        assert_eq!(n, 2);
        assert_eq!(
            seen,
            vec![vec![&b"GET"[..], &b"a"[..]], vec![&b"SET"[..], &b"b"[..]]]
        );
        let mut count = 0;
        assert_eq!(peek_requests::<2>(b, &mut st, 1, |_| count += 1), 1);
        assert_eq!(count, 1);
        assert_eq!(peek_requests::<2>(b"PING\r\n", &mut st, 16, |_| {}), 0);
        assert_eq!(peek_requests::<2>(b"*1\r\n$4\r\nPI", &mut st, 16, |_| {}), 0);
    }

    #[test]
    fn peek_requests_stops_at_a_header_whose_line_feed_has_not_arrived() {
        // A pipeline cut right after a request header's CR (a mass insert read a megabyte at
        // a time): the look ahead used to index past the end and panic.
        let mut st = ParseState::default();
        let b = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*3\r";
        assert_eq!(peek_requests::<2>(b, &mut st, 16, |_| {}), 1);
        assert_eq!(peek_requests::<2>(b"*3\r", &mut st, 16, |_| {}), 0);
    }

    /// Every request the look ahead located parses to the arguments a fresh parse gives,
    /// and the partial request after them still resumes.
    fn parse_all_after_peek(input: &[u8], limits: &Limits) -> Vec<Result<Option<Vec<Bytes>>, ProtocolError>> {
        let mut st = ParseState::default();
        let mut b = BytesMut::from(input);
        let copy = b.clone();
        peek_requests::<2>(&copy, &mut st, 16, |_| {});
        let mut got = Vec::new();
        loop {
            let r = parse_request(&mut b, &mut st, limits);
            let more = matches!(r, Ok(Some(_)));
            got.push(r);
            if !more {
                return got;
            }
        }
    }

    #[test]
    fn requests_found_by_the_look_ahead_parse_as_without_it() {
        let input = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$2\r\ncc";
        let fresh = {
            let mut st = ParseState::default();
            let mut b = BytesMut::from(&input[..]);
            let mut got = Vec::new();
            loop {
                let r = parse_request(&mut b, &mut st, &Limits::default());
                let more = matches!(r, Ok(Some(_)));
                got.push(r);
                if !more {
                    break got;
                }
            }
        };
        assert_eq!(fresh.len(), 4);
        assert_eq!(parse_all_after_peek(input, &Limits::default()), fresh);
    }

    #[test]
    fn an_unauthenticated_client_gets_its_limits_checked_after_a_look_ahead() {
        let mut input = b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$20000\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 20000));
        input.extend_from_slice(b"\r\n");
        let limits = Limits {
            unauthenticated: true,
            ..Limits::default()
        };
        let got = parse_all_after_peek(&input, &limits);
        assert_eq!(got[0], Ok(Some(vec![Bytes::from("GET"), Bytes::from("a")])));
        assert_eq!(got[1], Err(perr("unauthenticated bulk length")));
        let small = Limits {
            max_bulk_len: 10_000,
            ..Limits::default()
        };
        assert_eq!(parse_all_after_peek(&input, &small)[1], Err(perr("invalid bulk length")));
    }

    #[test]
    fn request_split_across_reads_resumes() {
        let mut st = ParseState::default();
        let mut b = BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\nk"[..]);
        assert_eq!(
            parse_request(&mut b, &mut st, &Limits::default()).unwrap(),
            None
        );
        b.extend_from_slice(b"\r\n$2\r\nvv\r\nPING\r\n");
        let v = parse_request(&mut b, &mut st, &Limits::default())
            .unwrap()
            .unwrap();
        assert_eq!(
            v,
            vec![Bytes::from("SET"), Bytes::from("k"), Bytes::from("vv")]
        );
        assert_eq!(
            parse_request(&mut b, &mut st, &Limits::default())
                .unwrap()
                .unwrap(),
            vec![Bytes::from("PING")]
        );
    }

    #[test]
    fn multibulk_needs_whole_frame() {
        assert_eq!(parse(b"*2\r\n$3\r\nGET\r\n$1\r\nk").unwrap(), None);
        assert_eq!(
            parse(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n").unwrap().unwrap(),
            vec![Bytes::from("GET"), Bytes::from("k")]
        );
    }

    #[test]
    fn huge_declared_bulk_waits_without_allocating() {
        let mut b = BytesMut::from(&b"*1\r\n$500000000\r\nabc"[..]);
        assert_eq!(
            parse_request(&mut b, &mut ParseState::default(), &Limits::default()).unwrap(),
            None
        );
        assert!(b.capacity() < 1024 * 1024);
    }

    #[test]
    fn arguments_before_a_big_one_leave_the_buffer_its_first_bytes_arrived_in() {
        let len = 3 * EAGER_ROOM;
        let mut b = BytesMut::from(format!("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n${len}\r\n").as_bytes());
        b.extend_from_slice(&vec![b'v'; EAGER_ROOM + 10]);
        let first = b.as_ptr() as usize..b.as_ptr() as usize + b.capacity();
        let mut state = ParseState::default();
        let limits = Limits::default();
        assert_eq!(parse_request(&mut b, &mut state, &limits).unwrap(), None);
        assert_eq!(state.big_arg_missing(&b), Some(len + 2 - (EAGER_ROOM + 10)));
        for a in &state.args {
            assert!(
                !first.contains(&(a.as_ptr() as usize)),
                "{a:?} still holds the first buffer"
            );
        }
        b.extend_from_slice(&vec![b'v'; len - EAGER_ROOM - 10]);
        b.extend_from_slice(b"\r\n");
        let args = parse_request(&mut b, &mut state, &limits).unwrap().unwrap();
        assert_eq!(&args[0][..], b"SET");
        assert_eq!(&args[1][..], b"key");
        assert_eq!(args[2].len(), len);
        assert!(args[2].iter().all(|&c| c == b'v'));
        assert!(b.is_empty());
    }

    #[test]
    fn protocol_errors_match_redis_texts() {
        assert_eq!(
            parse(b"*x\r\n").map_err(text).unwrap_err(),
            "invalid multibulk length"
        );
        assert_eq!(
            parse(b"*1\r\n!3\r\n").map_err(text).unwrap_err(),
            "expected '$', got '!'"
        );
        assert_eq!(
            parse(b"*1\r\n$-2\r\n").map_err(text).unwrap_err(),
            "invalid bulk length"
        );
        assert_eq!(
            parse(b"*1\r\n$536870913\r\n").map_err(text).unwrap_err(),
            "invalid bulk length"
        );
        assert_eq!(
            parse(b"set \"a\r\n").map_err(text).unwrap_err(),
            "unbalanced quotes in request"
        );
    }

    #[test]
    fn inline_splits_quotes_and_escapes() {
        let v = parse(b"set \"a b\\x41\" 'c\\'d'\r\n").unwrap().unwrap();
        assert_eq!(
            v,
            vec![Bytes::from("set"), Bytes::from("a bA"), Bytes::from("c'd")]
        );
        assert_eq!(parse(b"\r\n").unwrap().unwrap(), Vec::<Bytes>::new());
    }
}
