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

use crate::glob::Glob;
use crate::outbox::{parse_pubsub_limits, Limits, PushQueue, DEFAULT_OUTPUT_BUFFER_LIMITS};
use crate::protocol::encode_bulks;
use ahash::RandomState;
use bytes::{Bytes, BytesMut};
use indexmap::{IndexMap, IndexSet};
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

const CHANNEL_SHARDS: usize = 16;

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
            encode_bulks(parts)
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
    fn deliver(
        &mut self,
        subs: &Subscribers,
        limits: Limits,
        now_ms: i64,
        noted: &mut dyn FnMut(u64),
    ) -> usize {
        let mut receivers = 0;
        for (&id, q) in subs {
            if !q.is_closing() {
                q.deliver(self.encoded(q.resp()), limits, now_ms);
                noted(id);
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

    /// Every channel, shard channel and pattern (flagged true) client `id` is subscribed to:
    /// a scan of all subscriptions, for the rare administrative path that needs one client's
    /// (ACL SETUSER taking channels away from a user).
    pub fn subscriptions_of(&self, id: u64) -> Vec<(Bytes, bool)> {
        let mut out = Vec::new();
        for m in self.channels.iter().chain(self.shard_channels.iter()) {
            for (ch, subs) in m.read().iter() {
                if subs.contains_key(&id) {
                    out.push((ch.clone(), false));
                }
            }
        }
        for (p, pat) in self.patterns.read().iter() {
            if pat.subs.contains_key(&id) {
                out.push((p.clone(), true));
            }
        }
        out
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
        self.publish_noting(channel, msg, limits, now_ms, &mut |_| {})
    }

    /// [`PubSub::publish`], telling `noted` the id of every client a message was queued for
    /// (whose output buffer grew: the caller may count it against a memory limit).
    pub fn publish_noting(
        &self,
        channel: &[u8],
        msg: &[u8],
        limits: Limits,
        now_ms: i64,
        noted: &mut dyn FnMut(u64),
    ) -> usize {
        // No subscriber anywhere (Redis's dictFind on an empty dict): no hash, no lock.
        if self.subscriptions.load(Ordering::Acquire) == 0 {
            return 0;
        }
        let mut receivers = 0;
        {
            let m = self.map(Kind::Channel, channel).read();
            if let Some(subs) = m.get(channel) {
                receivers += Message::new(b"message", None, channel, msg)
                    .deliver(subs, limits, now_ms, noted);
            }
        }
        if self.npatterns.load(Ordering::Acquire) > 0 {
            let m = self.patterns.read();
            for (pat, p) in m.iter() {
                if p.glob.matches(channel) {
                    receivers += Message::new(b"pmessage", Some(pat), channel, msg)
                        .deliver(&p.subs, limits, now_ms, noted);
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
        Message::new(b"smessage", None, channel, msg).deliver(subs, limits, now_ms, &mut |_| {})
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
