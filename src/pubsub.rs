//! The pub/sub registry: channels, patterns and shard channels -> the subscribers' push queues.
//!
//! Publishing never blocks and never waits for a subscriber: a message is encoded once per
//! protocol in use and appended to each subscriber's queue (drained by its connection task);
//! the bytes queued but not yet written are counted per subscriber. A subscriber whose backlog passes Redis's pubsub
//! output-buffer limits (hard 32 MB, or soft 8 MB for 60 s by default) is closed, as Redis
//! does, so a vanished or slow reader costs at most its limit in memory.
//!
//! Channel maps are sharded by hash so concurrent PUBLISH/SUBSCRIBE on different channels do
//! not contend; patterns are few in practice and live in one map that PUBLISH skips with one
//! atomic load when it is empty. Empty channels and patterns are dropped at once, so
//! subscribe/unsubscribe cycles leave nothing behind.

use crate::client::Client;
use crate::glob::Glob;
use crate::protocol::encode;
use crate::reply::Reply;
use crate::shared::Shared;
use ahash::RandomState;
use bytes::{Bytes, BytesMut};
use indexmap::{IndexMap, IndexSet};
use parking_lot::{Mutex, RwLock};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Redis's default `client-output-buffer-limit`.
pub const DEFAULT_OUTPUT_BUFFER_LIMITS: &str = crate::config::DEFAULT_CLIENT_OUTPUT_BUFFER_LIMIT;

const CHANNEL_SHARDS: usize = 16;

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

/// Pushes taken off a [`PushQueue`] by its connection, to be written in order.
#[derive(Default)]
pub struct Taken(Vec<Chunk>);

impl Taken {
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
    wake: Notify,
    /// The client's protocol (2 or 3), read by publishers to pick the encoding.
    resp: AtomicU8,
    /// Set once the client is being closed for its backlog: nothing more is queued.
    closing: AtomicBool,
    kill: CancellationToken,
}

impl PushQueue {
    pub fn new(id: u64, kill: CancellationToken) -> Arc<Self> {
        Arc::new(PushQueue {
            id,
            backlog: Mutex::new(Backlog::default()),
            nonempty: AtomicBool::new(false),
            wake: Notify::new(),
            resp: AtomicU8::new(2),
            closing: AtomicBool::new(false),
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

    /// Resolves once frames may be waiting (possibly spuriously: `take` may find none).
    pub async fn notified(&self) {
        self.wake.notified().await
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
            self.wake.notify_one();
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
            self.wake.notify_one();
        }
    }

    /// Queue an encoded message without ever blocking. Returns false (and queues nothing)
    /// when the client is closed or is now closed because its backlog passed the limits, as
    /// Redis's checkClientOutputBufferLimits does on every append.
    pub fn deliver(&self, frame: &Bytes, limits: Limits, now_ms: i64) -> bool {
        if self.is_closing() {
            return false;
        }
        let mut b = self.backlog.lock();
        let used = b.bytes + frame.len();
        if over_limit(&mut b, used, limits, now_ms) {
            drop(b);
            self.close();
            return false;
        }
        let wake = self.append(&mut b, frame);
        drop(b);
        if wake {
            self.wake.notify_one();
        }
        true
    }

    /// Close the client asynchronously (Redis's freeClientAsync): its connection stops at once,
    /// even in the middle of a blocked write, and then forgets every subscription.
    fn close(&self) {
        if !self.closing.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                "closing client id={} for overcoming of output buffer limits (pubsub)",
                self.id
            );
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

/// One published message, encoded lazily: once in RESP2 on first need, and in RESP3 (the
/// same bytes with a push header) on first need, then shared by every subscriber.
struct Message<'a> {
    kind: &'static [u8],
    pattern: Option<&'a [u8]>,
    channel: &'a [u8],
    body: &'a [u8],
    resp2: Option<Bytes>,
    resp3: Option<Bytes>,
}

impl<'a> Message<'a> {
    fn new(
        kind: &'static [u8],
        pattern: Option<&'a [u8]>,
        channel: &'a [u8],
        body: &'a [u8],
    ) -> Self {
        Message {
            kind,
            pattern,
            channel,
            body,
            resp2: None,
            resp3: None,
        }
    }

    fn encoded(&mut self, resp: u8) -> &Bytes {
        let r2 = self.resp2.get_or_insert_with(|| {
            let parts: &[&[u8]] = match self.pattern {
                Some(p) => &[self.kind, p, self.channel, self.body],
                None => &[self.kind, self.channel, self.body],
            };
            let len = 4 + parts.iter().map(|p| p.len() + 24).sum::<usize>();
            let mut out = BytesMut::with_capacity(len);
            let mut n = itoa::Buffer::new();
            out.extend_from_slice(b"*");
            out.extend_from_slice(n.format(parts.len()).as_bytes());
            out.extend_from_slice(b"\r\n");
            for p in parts {
                out.extend_from_slice(b"$");
                out.extend_from_slice(n.format(p.len()).as_bytes());
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(p);
                out.extend_from_slice(b"\r\n");
            }
            out.freeze()
        });
        if resp < 3 {
            return r2;
        }
        let r2 = r2.clone();
        self.resp3.get_or_insert_with(|| {
            let mut out = BytesMut::from(&r2[..]);
            out[0] = b'>';
            out.freeze()
        })
    }

    /// Queue this message for every subscriber in `subs` that is not being closed; returns
    /// how many there were (Redis counts a receiver even if this append closes it).
    fn deliver(&mut self, subs: &Subscribers, limits: Limits, now_ms: i64) -> usize {
        let mut receivers = 0;
        for q in subs.values() {
            if !q.is_closing() {
                q.deliver(self.encoded(q.resp()), limits, now_ms);
                receivers += 1;
            }
        }
        receivers
    }
}

/// What one client is subscribed to (in subscription order; Redis lists patterns that way).
#[derive(Default, Debug)]
pub struct ClientSubs {
    pub channels: IndexSet<Bytes, RandomState>,
    pub patterns: IndexSet<Bytes, RandomState>,
    pub shard_channels: IndexSet<Bytes, RandomState>,
}

type Subscribers = IndexMap<u64, Arc<PushQueue>, RandomState>;
type ChannelMap = HashMap<Bytes, Subscribers, RandomState>;

struct Pattern {
    glob: Glob,
    subs: Subscribers,
}

/// Ordinary channels or shard channels (SSUBSCRIBE/SPUBLISH): separate namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Channel,
    Shard,
}

pub struct PubSub {
    channels: Box<[RwLock<ChannelMap>]>,
    shard_channels: Box<[RwLock<ChannelMap>]>,
    patterns: RwLock<IndexMap<Bytes, Pattern, RandomState>>,
    /// Distinct patterns (PUBSUB NUMPAT); 0 lets PUBLISH skip the pattern map.
    npatterns: AtomicUsize,
    /// Channel plus pattern subscriptions of every client: keyspace notifications return at
    /// once while it is 0.
    subscriptions: AtomicUsize,
    hasher: RandomState,
    limits: CachedLimits,
}

/// The parsed limits in atomics, refreshed by [`PubSub::refresh_limits`] when the
/// configuration changes: every PUBLISH reads them, and a lock shared by all publishers would
/// bounce between cores. A reader racing a refresh may mix old and new fields once, which is
/// harmless.
struct CachedLimits {
    hard_bytes: AtomicUsize,
    soft_bytes: AtomicUsize,
    soft_seconds: AtomicI64,
}

impl Default for PubSub {
    fn default() -> Self {
        Self::new()
    }
}

impl PubSub {
    pub fn new() -> Self {
        let maps = || -> Box<[RwLock<ChannelMap>]> {
            (0..CHANNEL_SHARDS)
                .map(|_| RwLock::new(HashMap::default()))
                .collect()
        };
        PubSub {
            channels: maps(),
            shard_channels: maps(),
            patterns: RwLock::new(IndexMap::default()),
            npatterns: AtomicUsize::new(0),
            subscriptions: AtomicUsize::new(0),
            hasher: RandomState::new(),
            limits: {
                let l = parse_pubsub_limits(DEFAULT_OUTPUT_BUFFER_LIMITS);
                CachedLimits {
                    hard_bytes: AtomicUsize::new(l.hard_bytes),
                    soft_bytes: AtomicUsize::new(l.soft_bytes),
                    soft_seconds: AtomicI64::new(l.soft_seconds),
                }
            },
        }
    }

    fn map(&self, kind: Kind, channel: &[u8]) -> &RwLock<ChannelMap> {
        let i = (self.hasher.hash_one(channel) as usize) % CHANNEL_SHARDS;
        match kind {
            Kind::Channel => &self.channels[i],
            Kind::Shard => &self.shard_channels[i],
        }
    }

    /// Channel plus pattern subscriptions of all clients.
    pub fn subscriptions(&self) -> usize {
        self.subscriptions.load(Ordering::Acquire)
    }

    pub fn subscribe(&self, kind: Kind, channel: Bytes, q: &Arc<PushQueue>) {
        let mut m = self.map(kind, &channel).write();
        m.entry(channel).or_default().insert(q.id, q.clone());
        if kind == Kind::Channel {
            self.subscriptions.fetch_add(1, Ordering::AcqRel);
        }
    }

    pub fn unsubscribe(&self, kind: Kind, channel: &[u8], id: u64) {
        let mut m = self.map(kind, channel).write();
        if let Some(subs) = m.get_mut(channel) {
            if subs.swap_remove(&id).is_some() && kind == Kind::Channel {
                self.subscriptions.fetch_sub(1, Ordering::AcqRel);
            }
            if subs.is_empty() {
                m.remove(channel);
                shrink_if_sparse(&mut m);
            }
        }
    }

    pub fn psubscribe(&self, pattern: Bytes, q: &Arc<PushQueue>) {
        let mut m = self.patterns.write();
        let p = m.entry(pattern).or_insert_with_key(|k| Pattern {
            glob: Glob::new(k, false),
            subs: IndexMap::default(),
        });
        p.subs.insert(q.id, q.clone());
        self.npatterns.store(m.len(), Ordering::Release);
        self.subscriptions.fetch_add(1, Ordering::AcqRel);
    }

    pub fn punsubscribe(&self, pattern: &[u8], id: u64) {
        let mut m = self.patterns.write();
        let now_empty = match m.get_mut(pattern) {
            Some(p) => {
                if p.subs.swap_remove(&id).is_some() {
                    self.subscriptions.fetch_sub(1, Ordering::AcqRel);
                }
                p.subs.is_empty()
            }
            None => false,
        };
        if now_empty {
            m.swap_remove(pattern);
            let len = m.len();
            if m.capacity() > 64 && len * 4 < m.capacity() {
                m.shrink_to(len * 2);
            }
        }
        self.npatterns.store(m.len(), Ordering::Release);
    }

    /// The pubsub output-buffer limits in force.
    pub fn limits(&self) -> Limits {
        let c = &self.limits;
        Limits {
            hard_bytes: c.hard_bytes.load(Ordering::Relaxed),
            soft_bytes: c.soft_bytes.load(Ordering::Relaxed),
            soft_seconds: c.soft_seconds.load(Ordering::Relaxed),
        }
    }

    /// Take the pubsub class of `client-output-buffer-limit` from the configuration (at
    /// start and after every CONFIG SET).
    pub fn refresh_limits(&self, config: &crate::config::Config) {
        let fresh = parse_pubsub_limits(&config.client_output_buffer_limit);
        let c = &self.limits;
        c.hard_bytes.store(fresh.hard_bytes, Ordering::Relaxed);
        c.soft_bytes.store(fresh.soft_bytes, Ordering::Relaxed);
        c.soft_seconds.store(fresh.soft_seconds, Ordering::Relaxed);
    }

    /// Deliver `msg` to the subscribers of `channel` and of every matching pattern; returns
    /// the number of receivers as Redis counts them (one per channel subscriber plus one per
    /// matching (pattern, client) subscription). Each frame is encoded once per protocol in
    /// use and copied into (or shared with) each subscriber's queue, so a backlog never pins
    /// request buffers.
    pub fn publish(&self, channel: &[u8], msg: &[u8], limits: Limits, now_ms: i64) -> usize {
        let mut receivers = 0;
        {
            let m = self.map(Kind::Channel, channel).read();
            if let Some(subs) = m.get(channel) {
                receivers +=
                    Message::new(b"message", None, channel, msg).deliver(subs, limits, now_ms);
            }
        }
        if self.npatterns.load(Ordering::Acquire) > 0 {
            let m = self.patterns.read();
            for (pat, p) in m.iter() {
                if p.glob.matches(channel) {
                    receivers += Message::new(b"pmessage", Some(pat), channel, msg)
                        .deliver(&p.subs, limits, now_ms);
                }
            }
        }
        receivers
    }

    /// SPUBLISH: shard channel subscribers only (patterns never see shard messages).
    pub fn spublish(&self, channel: &[u8], msg: &[u8], limits: Limits, now_ms: i64) -> usize {
        let m = self.map(Kind::Shard, channel).read();
        let Some(subs) = m.get(channel) else {
            return 0;
        };
        Message::new(b"smessage", None, channel, msg).deliver(subs, limits, now_ms)
    }

    /// Active channels (with at least one subscriber) matching `pattern`, if given.
    pub fn channels(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let glob = pattern.map(|p| Glob::new(p, false));
        let maps = match kind {
            Kind::Channel => &self.channels,
            Kind::Shard => &self.shard_channels,
        };
        let mut out = Vec::new();
        for m in maps.iter() {
            let m = m.read();
            out.extend(
                m.keys()
                    .filter(|c| glob.as_ref().is_none_or(|g| g.matches(c)))
                    .cloned(),
            );
        }
        out
    }

    /// Subscribers of one channel, excluding pattern subscriptions (PUBSUB NUMSUB).
    pub fn numsub(&self, kind: Kind, channel: &[u8]) -> usize {
        self.map(kind, channel)
            .read()
            .get(channel)
            .map_or(0, |s| s.len())
    }

    /// Distinct patterns with at least one subscriber (PUBSUB NUMPAT).
    pub fn numpat(&self) -> usize {
        self.npatterns.load(Ordering::Acquire)
    }

    /// Remove one client from everything it subscribed to (disconnect, RESET).
    pub fn forget(&self, id: u64, subs: &ClientSubs) {
        for c in &subs.channels {
            self.unsubscribe(Kind::Channel, c, id);
        }
        for c in &subs.shard_channels {
            self.unsubscribe(Kind::Shard, c, id);
        }
        for p in &subs.patterns {
            self.punsubscribe(p, id);
        }
    }
}

/// Give memory back after a burst of channels is gone (a subscription storm must not pin its
/// peak table size forever).
fn shrink_if_sparse(m: &mut ChannelMap) {
    let len = m.len();
    if m.capacity() > 64 && len * 4 < m.capacity() {
        m.shrink_to(len * 2);
    }
}

/// The pubsub class of the configured `client-output-buffer-limit`.
/// Drop every subscription of a client without replying (RESET): in the registry, in the
/// client's own sets and in its counters (CLIENT LIST).
pub fn forget_client(shared: &Shared, client: &mut Client) {
    let subs = std::mem::take(&mut client.pubsub);
    shared.pubsub.forget(client.id, &subs);
    zero_counts(client);
}

/// Remove a closed connection from every channel and pattern at once.
pub fn client_gone(shared: &Shared, client: &Client) {
    shared.pubsub.forget(client.id, &client.pubsub);
    zero_counts(client);
}

fn zero_counts(client: &Client) {
    client.info.subscriptions.store(0, Ordering::Relaxed);
    client
        .info
        .pattern_subscriptions
        .store(0, Ordering::Relaxed);
    client.info.shard_subscriptions.store(0, Ordering::Relaxed);
}

/// Publish a message as PUBLISH does, from anywhere in the server (keyspace notifications).
pub fn publish(shared: &Shared, channel: &[u8], msg: &[u8]) -> usize {
    let now = shared.clock.now_ms();
    let limits = shared.pubsub.limits();
    shared.pubsub.publish(channel, msg, limits, now)
}
