//! A client's queue of out-of-band frames (pub/sub messages, subscribe confirmations, and
//! later blocked-command wake-ups, tracking invalidations, MONITOR lines), already encoded,
//! with the byte accounting that Redis's client-output-buffer-limit is checked against.
//! Producers on any thread append under a short lock without ever blocking; the client's
//! connection takes whole batches and is woken only when the queue goes from empty to
//! non-empty.

use crate::protocol::encode;
use crate::reply::Reply;
use crate::wake::{Cancel, Rung};
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;

/// Redis's default `client-output-buffer-limit`.
pub const DEFAULT_OUTPUT_BUFFER_LIMITS: &str = crate::config::DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT;

/// The pubsub class of `client-output-buffer-limit` (0 disables a limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub hard_bytes: usize,
    pub soft_bytes: usize,
    pub soft_seconds: i64,
}

/// Redis's memtoull: a number with an optional unit (b, k, kb, m, mb, g, gb; any case).
fn parse_mem(s: &str) -> Option<usize> {
    let s = s.to_ascii_lowercase();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mul: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    num.parse::<usize>().ok()?.checked_mul(mul)
}

/// The `pubsub` class of a `client-output-buffer-limit` string (`class hard soft seconds`
/// groups), falling back to Redis's defaults when it is absent or malformed.
pub fn parse_pubsub_limits(s: &str) -> Limits {
    let words: Vec<&str> = s.split_whitespace().collect();
    for g in words.chunks(4) {
        if g.len() == 4 && g[0].eq_ignore_ascii_case("pubsub") {
            if let (Some(h), Some(soft), Ok(secs)) =
                (parse_mem(g[1]), parse_mem(g[2]), g[3].parse::<i64>())
            {
                return Limits {
                    hard_bytes: h,
                    soft_bytes: soft,
                    soft_seconds: secs,
                };
            }
        }
    }
    Limits {
        hard_bytes: 32 * 1024 * 1024,
        soft_bytes: 8 * 1024 * 1024,
        soft_seconds: 60,
    }
}

/// Frames at most this long are copied into the subscriber's queue (as Redis copies them into
/// its reply buffer): a memcpy of a few hundred bytes is cheaper than a reference count shared
/// by every subscriber's thread. Longer frames are queued as shared `Bytes`.
const COPY_MAX: usize = 1024;
/// Capacity of a queue chunk that small frames are copied into.
const CHUNK_BYTES: usize = 4096;

/// Queued output: small frames packed into chunks, large frames shared with every subscriber.
enum Chunk {
    Copied(BytesMut),
    Shared(Bytes),
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        match self {
            Chunk::Copied(b) => b,
            Chunk::Shared(b) => b,
        }
    }
}

/// `reply` encoded in protocol `resp`, for a caller that assembles frames itself.
pub fn encode_reply(reply: &Reply, resp: u8, out: &mut BytesMut) {
    encode(reply, resp, out);
}

/// The header of an array of `n` elements (the same in RESP2 and RESP3), for a caller that
/// encodes the elements one by one.
pub fn encode_array_header(n: usize, out: &mut BytesMut) {
    out.extend_from_slice(b"*");
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Pushes taken off a [`PushQueue`] by its connection, to be written in order.
#[derive(Default)]
pub struct Taken(Vec<Chunk>);

impl Taken {
    /// Whether nothing was taken.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Append the taken frames to `out` and forget them.
    pub fn write_to(&mut self, out: &mut BytesMut) {
        for c in self.0.drain(..) {
            out.extend_from_slice(c.bytes());
        }
        // A drained burst must not pin its chunk list.
        if self.0.capacity() > 1024 {
            self.0 = Vec::new();
        }
    }
}

#[derive(Default)]
struct Backlog {
    chunks: VecDeque<Chunk>,
    /// Bytes queued and not yet taken by the connection for writing.
    bytes: usize,
    /// When the backlog first went over the soft limit (clock ms), 0 while under it.
    soft_since_ms: i64,
}

/// One client's outgoing queue for out-of-band frames, already encoded in the protocol the
/// client spoke when each was queued (as Redis encodes into the client's buffer at publish
/// time). Publishers append under a short lock; the connection takes whole batches and is
/// woken only when the queue goes from empty to non-empty.
pub struct PushQueue {
    pub id: u64,
    backlog: Mutex<Backlog>,
    /// Whether `backlog` holds frames (written under its lock): lets the connection skip the
    /// lock after every reply when nothing is queued.
    nonempty: AtomicBool,
    /// The client's protocol (2 or 3), read by publishers to pick the encoding.
    resp: AtomicU8,
    /// Set once the client is being closed for its backlog: nothing more is queued.
    closing: AtomicBool,
    /// Bytes the connection took (replies and frames) and has not written yet: with the
    /// backlog, the client's output buffer the limits apply to, as Redis's reply list.
    unwritten: AtomicUsize,
    /// The client's CLIENT KILL; its doorbell is the one the connection waits on, so a
    /// queued frame rings it too.
    kill: Cancel,
}

impl PushQueue {
    pub fn new(id: u64, kill: Cancel) -> Arc<Self> {
        Arc::new(PushQueue {
            id,
            backlog: Mutex::new(Backlog::default()),
            nonempty: AtomicBool::new(false),
            resp: AtomicU8::new(2),
            closing: AtomicBool::new(false),
            unwritten: AtomicUsize::new(0),
            kill,
        })
    }

    /// Bytes queued for this client and not yet taken for writing.
    pub fn pending(&self) -> usize {
        self.backlog.lock().bytes
    }

    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    /// The protocol later frames are encoded in (HELLO, RESET).
    pub fn set_resp(&self, resp: u8) {
        self.resp.store(resp, Ordering::Relaxed);
    }

    pub fn resp(&self) -> u8 {
        self.resp.load(Ordering::Relaxed)
    }

    /// Resolves once frames may be waiting (possibly spuriously: `take` may find none), or
    /// the client was killed (the caller checks).
    pub fn notified(&self) -> Rung<'_> {
        self.kill.bell().rung()
    }

    /// The doorbell a queued frame, CLIENT KILL and shutdown ring (see [`notified`](Self::notified)).
    pub fn bell(&self) -> &crate::wake::Doorbell {
        self.kill.bell()
    }

    /// Whether frames are queued.
    pub fn has_frames(&self) -> bool {
        self.nonempty.load(Ordering::Acquire)
    }

    /// Take queued frames, in order, until at least `max_bytes` are taken (at least one
    /// frame) or the queue is empty. Releases them from the backlog. Returns true if frames
    /// remain; the next [`notified`](Self::notified) then resolves at once.
    pub fn take(&self, max_bytes: usize, into: &mut Taken) -> bool {
        if !self.nonempty.load(Ordering::Acquire) {
            return false;
        }
        let mut b = self.backlog.lock();
        let mut n = 0;
        while n < max_bytes {
            let Some(c) = b.chunks.pop_front() else { break };
            n += c.bytes().len();
            into.0.push(c);
        }
        b.bytes = b.bytes.saturating_sub(n);
        let more = !b.chunks.is_empty();
        if !more {
            self.nonempty.store(false, Ordering::Release);
        }
        drop(b);
        if more {
            self.kill.bell().ring();
        }
        more
    }

    /// Append a frame; the caller holds the lock. Returns true when the queue was empty (the
    /// connection must be woken).
    fn append(&self, b: &mut Backlog, frame: &Bytes) -> bool {
        let was_empty = b.chunks.is_empty();
        if was_empty {
            self.nonempty.store(true, Ordering::Release);
        }
        b.bytes += frame.len();
        if frame.len() <= COPY_MAX {
            if let Some(Chunk::Copied(c)) = b.chunks.back_mut() {
                if c.capacity() - c.len() >= frame.len() {
                    c.extend_from_slice(frame);
                    return was_empty;
                }
            }
            let mut c = BytesMut::with_capacity(CHUNK_BYTES);
            c.extend_from_slice(frame);
            b.chunks.push_back(Chunk::Copied(c));
        } else {
            b.chunks.push_back(Chunk::Shared(frame.clone()));
        }
        was_empty
    }

    /// Queue a reply frame of the client's own command (subscribe confirmations), encoded in
    /// the client's current protocol: ordered with the messages, never limited.
    pub fn push_own(&self, frame: Reply) {
        let mut buf = BytesMut::new();
        encode(&frame, self.resp(), &mut buf);
        let frame = buf.freeze();
        let wake = self.append(&mut self.backlog.lock(), &frame);
        if wake {
            self.kill.bell().ring();
        }
    }

    /// Queue bytes the client's own command produced, already encoded (EXEC's reply when its
    /// commands pushed frames of their own, which Redis 7.0 interleaves with their replies).
    pub fn push_own_encoded(&self, frame: Bytes) {
        let wake = self.append(&mut self.backlog.lock(), &frame);
        if wake {
            self.kill.bell().ring();
        }
    }

    /// The connection's bytes taken and not written yet (see the field).
    pub fn set_unwritten(&self, n: usize) {
        self.unwritten.store(n, Ordering::Relaxed);
    }

    /// clientsCron's closeClientOnOutputBufferLimitReached: a backlog that stayed over the
    /// soft limit long enough closes the client also when nothing more is published to it.
    /// Returns whether it was closed.
    pub fn check_limits(&self, limits: Limits, now_ms: i64) -> bool {
        if self.is_closing() {
            return false;
        }
        let mut b = self.backlog.lock();
        let used = b.bytes + self.unwritten.load(Ordering::Relaxed);
        if used == 0 || !over_limit(&mut b, used, limits, now_ms) {
            return false;
        }
        drop(b);
        self.close();
        true
    }

    /// Queue an encoded message without ever blocking. Returns false (and queues nothing)
    /// when the client is closed or is now closed because its backlog passed the limits, as
    /// Redis's checkClientOutputBufferLimits does on every append.
    pub fn deliver(&self, frame: &Bytes, limits: Limits, now_ms: i64) -> bool {
        if self.is_closing() {
            return false;
        }
        let mut b = self.backlog.lock();
        let used = b.bytes + frame.len() + self.unwritten.load(Ordering::Relaxed);
        if over_limit(&mut b, used, limits, now_ms) {
            drop(b);
            self.close();
            return false;
        }
        let wake = self.append(&mut b, frame);
        drop(b);
        if wake {
            self.kill.bell().ring();
        }
        true
    }

    /// Close the client asynchronously (Redis's freeClientAsync): its connection stops at once,
    /// even in the middle of a blocked write, and then forgets every subscription.
    fn close(&self) {
        if !self.closing.swap(true, Ordering::AcqRel) {
            crate::log::warning(&format!(
                "Client id={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                self.id
            ));
            self.kill.cancel();
        }
    }
}

fn over_limit(b: &mut Backlog, used: usize, l: Limits, now_ms: i64) -> bool {
    if l.hard_bytes > 0 && used >= l.hard_bytes {
        return true;
    }
    if l.soft_bytes > 0 && used >= l.soft_bytes {
        if b.soft_since_ms == 0 {
            b.soft_since_ms = now_ms.max(1);
            return false;
        }
        // Redis counts whole seconds and closes once more than soft_seconds elapsed.
        return (now_ms - b.soft_since_ms) / 1000 > l.soft_seconds;
    }
    b.soft_since_ms = 0;
    false
}
