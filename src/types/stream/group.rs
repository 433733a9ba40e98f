//! Consumer groups: the group's last delivered ID and read counter, its pending entries list
//! (PEL) and its consumers, each with its own PEL over the same pending entries, and the
//! operations of XREADGROUP, XACK, XPENDING, XCLAIM and XAUTOCLAIM on them.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use super::rax::rax_nodes;
use super::{rax_usage, Entry, Meta, Stream, StreamId, INVALID_ENTRIES_READ};

/// sizeof(streamCG), sizeof(streamNACK) and sizeof(streamConsumer) in Redis 7.0, for
/// MEMORY USAGE.
const REDIS_CG: usize = 40;
const REDIS_NACK: usize = 24;
const REDIS_CONSUMER: usize = 24;

/// A pending entry: delivered, not yet acknowledged (streamNACK).
#[derive(Clone, Debug)]
pub struct Nack {
    /// When it was last delivered (ms).
    pub delivery_time: i64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer it was last delivered to.
    consumer: Arc<[u8]>,
}

impl Nack {
    /// The name of the consumer that holds it.
    pub fn consumer(&self) -> &[u8] {
        &self.consumer
    }
}

/// A pending entry as a read or a claim left it (or, when its stream entry is gone and it is
/// dropped, as it was): what the command layer propagates as `XCLAIM key group consumer 0 id
/// TIME t RETRYCOUNT n FORCE JUSTID LASTID last` (streamPropagateXCLAIM), so that a replica
/// or the AOF holds the same PEL.
#[derive(Clone, Copy, Debug)]
pub struct PelChange<'a> {
    /// The entry.
    pub id: StreamId,
    /// Its place among the IDs given (XCLAIM propagates the ID as it was typed); 0 otherwise.
    pub arg: usize,
    /// The consumer that holds it.
    pub consumer: &'a [u8],
    /// Its delivery time (ms).
    pub delivery_time: i64,
    /// Its delivery count.
    pub delivery_count: u64,
    /// The group's last delivered ID at that point.
    pub last_id: StreamId,
}

/// A consumer of a group (streamConsumer; 7.0 keeps only its seen-time).
#[derive(Clone, Debug)]
pub struct Consumer {
    seen_time: i64,
    pel: BTreeSet<StreamId>,
}

impl Consumer {
    /// The last time it was active (ms): created, read, claimed.
    pub fn seen_time(&self) -> i64 {
        self.seen_time
    }

    /// Its pending entries.
    pub fn pel_len(&self) -> usize {
        self.pel.len()
    }
}

/// A consumer group (streamCG).
#[derive(Clone, Debug)]
pub struct Group {
    last_id: StreamId,
    entries_read: i64,
    pel: BTreeMap<StreamId, Nack>,
    consumers: BTreeMap<Arc<[u8]>, Consumer>,
}

/// Why a loaded consumer PEL entry was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadPelIssue {
    /// "Consumer entry not found in group global PEL".
    NotInGroup,
    /// "Duplicated consumer PEL entry  loading a stream consumer group".
    Duplicate,
}

/// XPENDING's summary form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSummary {
    /// Pending entries in the group.
    pub count: usize,
    /// The smallest and largest pending IDs (`None` when nothing is pending).
    pub bounds: Option<(StreamId, StreamId)>,
    /// Consumers with pending entries, by name, and how many each holds.
    pub consumers: Vec<(Arc<[u8]>, usize)>,
}

/// One line of XPENDING's extended form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingEntry {
    /// The entry's ID.
    pub id: StreamId,
    /// Its consumer.
    pub consumer: Arc<[u8]>,
    /// Milliseconds since its last delivery (never negative).
    pub idle: i64,
    /// Deliveries so far.
    pub delivery_count: u64,
}

/// XCLAIM's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaimOptions {
    /// Only claim entries idle at least this long (ms); 0 claims any.
    pub min_idle: i64,
    /// The delivery time to set (IDLE/TIME): `None` for now; a negative or future one is
    /// replaced by now, as Redis does rather than fail.
    pub delivery_time: Option<i64>,
    /// RETRYCOUNT (a negative one is taken as not given by the caller).
    pub retry_count: Option<u64>,
    /// FORCE: create pending entries for IDs that exist in the stream but are not pending.
    pub force: bool,
    /// JUSTID: the delivery count is left alone.
    pub justid: bool,
    /// LASTID: raise the group's last ID to this if it is higher.
    pub last_id: Option<StreamId>,
}

/// What XCLAIM did besides the entries it emitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    /// Entries claimed (and emitted).
    pub claimed: usize,
    /// The consumer was created (Redis raises `xgroup-createconsumer`).
    pub consumer_created: bool,
    /// Pending entries whose stream entry is gone were dropped.
    pub dropped: usize,
    /// LASTID raised the group's last ID.
    pub last_id_moved: bool,
}

/// What XAUTOCLAIM did besides the entries it emitted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoClaim {
    /// The cursor for the next call (0-0 when the scan reached the end).
    pub next: StreamId,
    /// Pending entries dropped because their stream entry is gone.
    pub deleted: Vec<StreamId>,
    /// Entries claimed.
    pub claimed: usize,
    /// The consumer was created.
    pub consumer_created: bool,
}

impl Group {
    pub(super) fn new(last_id: StreamId, entries_read: i64) -> Group {
        Group {
            last_id,
            entries_read,
            pel: BTreeMap::new(),
            consumers: BTreeMap::new(),
        }
    }

    /// The last ID delivered to the group.
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// The group's read counter (-1 when unknown).
    pub fn entries_read(&self) -> i64 {
        self.entries_read
    }

    /// XGROUP SETID.
    pub fn set_id(&mut self, id: StreamId, entries_read: i64) {
        self.last_id = id;
        self.entries_read = entries_read;
    }

    /// Pending entries.
    pub fn pel_len(&self) -> usize {
        self.pel.len()
    }

    /// The pending entries in ID order.
    pub fn pel(&self) -> impl Iterator<Item = (StreamId, &Nack)> {
        self.pel.iter().map(|(&id, n)| (id, n))
    }

    /// The number of consumers.
    pub fn consumer_count(&self) -> usize {
        self.consumers.len()
    }

    /// The consumers in name order.
    pub fn consumers(&self) -> impl Iterator<Item = (&[u8], &Consumer)> {
        self.consumers.iter().map(|(k, c)| (&k[..], c))
    }

    /// The consumer named `name` (no seen-time refresh).
    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.consumers.get(name)
    }

    /// A consumer's pending entries in ID order.
    pub fn consumer_pel<'a>(
        &'a self,
        c: &'a Consumer,
    ) -> impl Iterator<Item = (StreamId, &'a Nack)> + 'a {
        c.pel.iter().map(move |id| (*id, &self.pel[id]))
    }

    /// XGROUP CREATECONSUMER: false if it exists.
    pub fn create_consumer(&mut self, name: &[u8], now: i64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.consumers.insert(
            name.into(),
            Consumer {
                seen_time: now,
                pel: BTreeSet::new(),
            },
        );
        true
    }

    /// Finds the consumer and refreshes its seen-time, or creates it (streamLookupConsumer
    /// then streamCreateConsumer, as XREADGROUP and the claims do). True if created.
    pub fn touch_consumer(&mut self, name: &[u8], now: i64) -> bool {
        match self.consumers.get_mut(name) {
            Some(c) => {
                c.seen_time = now;
                false
            }
            None => self.create_consumer(name, now),
        }
    }

    /// The shared name of an existing consumer.
    fn consumer_key(&self, name: &[u8]) -> Arc<[u8]> {
        self.consumers
            .get_key_value(name)
            .map(|(k, _)| k.clone())
            .expect("consumer exists")
    }

    /// XGROUP DELCONSUMER: the consumer's pending entries leave the group too. Returns how
    /// many it had, or `None` if there is no such consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let c = self.consumers.remove(name)?;
        for id in &c.pel {
            self.pel.remove(id);
        }
        Some(c.pel.len())
    }

    /// Removes a pending entry from the group and its consumer.
    fn drop_nack(&mut self, id: StreamId) -> bool {
        match self.pel.remove(&id) {
            Some(n) => {
                if let Some(c) = self.consumers.get_mut(&n.consumer) {
                    c.pel.remove(&id);
                }
                true
            }
            None => false,
        }
    }

    /// XACK: acknowledges the pending ones among `ids`; returns how many.
    pub fn ack(&mut self, ids: &[StreamId]) -> usize {
        ids.iter().filter(|&&id| self.drop_nack(id)).count()
    }

    /// Gives the pending entry `id` to `consumer` (which exists), creating it if needed,
    /// with the given delivery time and count.
    fn assign(&mut self, id: StreamId, consumer: &Arc<[u8]>, time: i64, count: u64) {
        match self.pel.get_mut(&id) {
            Some(n) => {
                if n.consumer != *consumer {
                    let old = std::mem::replace(&mut n.consumer, consumer.clone());
                    if let Some(c) = self.consumers.get_mut(&old) {
                        c.pel.remove(&id);
                    }
                }
                n.delivery_time = time;
                n.delivery_count = count;
            }
            None => {
                self.pel.insert(
                    id,
                    Nack {
                        delivery_time: time,
                        delivery_count: count,
                        consumer: consumer.clone(),
                    },
                );
            }
        }
        self.consumers
            .get_mut(consumer)
            .expect("consumer exists")
            .pel
            .insert(id);
    }

    /// Loading a saved group: a pending entry, whose consumer comes with the consumers.
    /// False if the ID is pending already.
    pub fn load_nack(&mut self, id: StreamId, delivery_time: i64, delivery_count: u64) -> bool {
        if self.pel.contains_key(&id) {
            return false;
        }
        self.pel.insert(
            id,
            Nack {
                delivery_time,
                delivery_count,
                consumer: Arc::from(&b""[..]),
            },
        );
        true
    }

    /// Loading a saved group: a consumer. False if the name is taken.
    pub fn load_consumer(&mut self, name: &[u8], seen_time: i64) -> bool {
        self.create_consumer(name, seen_time)
    }

    /// Loading a saved group: `id` is in consumer `name`'s PEL. The entry must be pending in
    /// the group and held by no other consumer (Redis lets a later consumer take it over,
    /// leaving the first one a stale reference; that is refused here as corrupt).
    pub fn load_consumer_pel(&mut self, name: &[u8], id: StreamId) -> Result<(), LoadPelIssue> {
        let key = self.consumer_key(name);
        let c = self.consumers.get_mut(name).expect("loaded consumer");
        let Some(n) = self.pel.get_mut(&id) else {
            return Err(LoadPelIssue::NotInGroup);
        };
        if !n.consumer.is_empty() || !c.pel.insert(id) {
            return Err(LoadPelIssue::Duplicate);
        }
        n.consumer = key;
        Ok(())
    }

    /// Loading a saved group: whether every pending entry got its consumer.
    pub fn every_nack_owned(&self) -> bool {
        let owned: usize = self.consumers.values().map(|c| c.pel.len()).sum();
        owned == self.pel.len()
    }

    /// XPENDING's summary.
    pub fn pending_summary(&self) -> PendingSummary {
        let bounds = match (self.pel.keys().next(), self.pel.keys().next_back()) {
            (Some(&a), Some(&b)) => Some((a, b)),
            _ => None,
        };
        PendingSummary {
            count: self.pel.len(),
            bounds,
            consumers: self
                .consumers
                .iter()
                .filter(|(_, c)| !c.pel.is_empty())
                .map(|(k, c)| (k.clone(), c.pel.len()))
                .collect(),
        }
    }

    /// XPENDING's extended form: up to `count` pending entries from `start` to `end`, of one
    /// consumer or all, idle at least `min_idle` (0: any). An unknown consumer has none.
    pub fn pending_range(
        &self,
        start: StreamId,
        end: StreamId,
        count: usize,
        consumer: Option<&[u8]>,
        min_idle: i64,
        now: i64,
    ) -> Vec<PendingEntry> {
        let mut out = Vec::new();
        if count == 0 || start > end {
            return out;
        }
        let mut push = |id: StreamId, n: &Nack| {
            if min_idle != 0 && now.wrapping_sub(n.delivery_time) < min_idle {
                return true;
            }
            out.push(PendingEntry {
                id,
                consumer: n.consumer.clone(),
                idle: now.wrapping_sub(n.delivery_time).max(0),
                delivery_count: n.delivery_count,
            });
            out.len() < count
        };
        match consumer {
            Some(name) => {
                let Some(c) = self.consumers.get(name) else {
                    return Vec::new();
                };
                for id in c.pel.range(start..=end) {
                    if !push(*id, &self.pel[id]) {
                        break;
                    }
                }
            }
            None => {
                for (id, n) in self.pel.range(start..=end) {
                    if !push(*id, n) {
                        break;
                    }
                }
            }
        }
        out
    }

    /// MEMORY USAGE's share of this group.
    pub(super) fn mem_usage(&self) -> usize {
        let mut size = REDIS_CG;
        size += rax_usage(
            self.pel.len(),
            rax_nodes(self.pel.keys().map(|id| id.be_bytes())),
        );
        size += REDIS_NACK * self.pel.len();
        for (name, c) in &self.consumers {
            size += REDIS_CONSUMER + name.len();
            size += rax_usage(c.pel.len(), rax_nodes(c.pel.iter().map(|id| id.be_bytes())));
        }
        size
    }
}

impl Stream {
    /// Splits the stream into its entries and one group, for reads that deliver entries.
    fn entries_and_group(
        &mut self,
        group: &[u8],
    ) -> Option<(&std::collections::BTreeMap<u128, super::Node>, &mut Group)> {
        let i = &mut *self.inner;
        let g = i.groups.get_mut(group)?;
        Some((&i.nodes, g))
    }

    /// XREADGROUP `>` (streamReplyWithRange with a group): up to `count` (0: all) entries
    /// from `start` on are emitted and delivered to `consumer` (which must exist): the group's
    /// last ID and read counter advance, and unless `noack` each entry becomes pending for
    /// the consumer (taken from another consumer if it was pending there). Returns how many
    /// were emitted.
    #[allow(clippy::too_many_arguments)]
    pub fn read_group(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        start: StreamId,
        count: usize,
        noack: bool,
        now: i64,
        emit: impl FnMut(Entry<'_>),
    ) -> usize {
        self.read_group_noting(group, consumer, start, count, noack, now, emit, |_| {})
    }

    /// [`Stream::read_group`], telling `note` each entry that became pending.
    #[allow(clippy::too_many_arguments)]
    pub fn read_group_noting(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        start: StreamId,
        count: usize,
        noack: bool,
        now: i64,
        mut emit: impl FnMut(Entry<'_>),
        mut note: impl FnMut(PelChange<'_>),
    ) -> usize {
        let meta = self.meta();
        let Some((nodes, g)) = self.entries_and_group(group) else {
            return 0;
        };
        let name = g.consumer_key(consumer);
        let mut n = 0;
        for e in super::iter::range_in(nodes, start, StreamId::MAX, false) {
            if e.id > g.last_id {
                if g.entries_read != INVALID_ENTRIES_READ && !meta.range_has_tombstones(e.id) {
                    g.entries_read += 1;
                } else if meta.entries_added != 0 {
                    g.entries_read = meta
                        .distance_from_first(e.id)
                        .unwrap_or(INVALID_ENTRIES_READ);
                }
                g.last_id = e.id;
            }
            emit(e);
            if !noack {
                g.assign(e.id, &name, now, 1);
                note(PelChange {
                    id: e.id,
                    arg: 0,
                    consumer: &name,
                    delivery_time: now,
                    delivery_count: 1,
                    last_id: g.last_id,
                });
            }
            n += 1;
            if count != 0 && n == count {
                break;
            }
        }
        n
    }

    /// XREADGROUP with an ID (streamReplyWithRangeFromConsumerPEL): up to `count` (0: all) of
    /// the consumer's own pending entries from `start` on. Each is emitted with its entry, or
    /// `None` if the entry was deleted since; those found count as delivered again.
    #[allow(clippy::too_many_arguments)]
    pub fn read_history(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        start: StreamId,
        count: usize,
        now: i64,
        mut emit: impl FnMut(StreamId, Option<Entry<'_>>),
    ) -> usize {
        let Some((nodes, g)) = self.entries_and_group(group) else {
            return 0;
        };
        let Some(c) = g.consumers.get(consumer) else {
            return 0;
        };
        let ids: Vec<StreamId> = c
            .pel
            .range(start..)
            .take(if count == 0 { usize::MAX } else { count })
            .copied()
            .collect();
        for &id in &ids {
            let e = super::iter::range_in(nodes, id, id, false).next();
            if e.is_some() {
                let nack = g
                    .pel
                    .get_mut(&id)
                    .expect("consumer PEL entries are in the group's");
                nack.delivery_time = now;
                nack.delivery_count += 1;
            }
            emit(id, e);
        }
        ids.len()
    }

    /// XCLAIM: gives `consumer` the entries among `ids` that are pending and idle long
    /// enough (or, with FORCE, not pending at all), emitting each claimed entry; pending
    /// entries whose stream entry is gone are dropped. The group must exist.
    pub fn claim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        ids: &[StreamId],
        opts: &ClaimOptions,
        now: i64,
        emit: impl FnMut(Entry<'_>),
    ) -> Claim {
        self.claim_noting(group, consumer, ids, opts, now, emit, |_| {})
    }

    /// [`Stream::claim`], telling `note` each entry claimed, and each dropped as it was.
    #[allow(clippy::too_many_arguments)]
    pub fn claim_noting(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        ids: &[StreamId],
        opts: &ClaimOptions,
        now: i64,
        mut emit: impl FnMut(Entry<'_>),
        mut note: impl FnMut(PelChange<'_>),
    ) -> Claim {
        let mut out = Claim::default();
        let Some((nodes, g)) = self.entries_and_group(group) else {
            return out;
        };
        if let Some(last) = opts.last_id {
            if last > g.last_id {
                g.last_id = last;
                out.last_id_moved = true;
            }
        }
        let time = match opts.delivery_time {
            Some(t) if (0..=now).contains(&t) => t,
            _ => now,
        };
        let mut name: Option<Arc<[u8]>> = None;
        for (arg, &id) in ids.iter().enumerate() {
            let Some(e) = super::iter::range_in(nodes, id, id, false).next() else {
                if let Some(n) = g.pel.get(&id) {
                    note(PelChange {
                        id,
                        arg,
                        consumer: &n.consumer,
                        delivery_time: n.delivery_time,
                        delivery_count: n.delivery_count,
                        last_id: g.last_id,
                    });
                    g.drop_nack(id);
                    out.dropped += 1;
                }
                continue;
            };
            let count = match g.pel.get(&id) {
                Some(n) => {
                    if opts.min_idle != 0 && now.wrapping_sub(n.delivery_time) < opts.min_idle {
                        continue;
                    }
                    n.delivery_count
                }
                // A FORCE-created entry starts at one delivery (streamCreateNACK).
                None if opts.force => 1,
                None => continue,
            };
            let name = match &name {
                Some(n) => n.clone(),
                None => {
                    out.consumer_created = g.touch_consumer(consumer, now);
                    let n = g.consumer_key(consumer);
                    name = Some(n.clone());
                    n
                }
            };
            let count = match opts.retry_count {
                Some(r) => r,
                None if !opts.justid => count + 1,
                None => count,
            };
            g.assign(id, &name, time, count);
            emit(e);
            note(PelChange {
                id,
                arg,
                consumer: &name,
                delivery_time: time,
                delivery_count: count,
                last_id: g.last_id,
            });
            out.claimed += 1;
        }
        out
    }

    /// XAUTOCLAIM: scans the group's PEL from `start`, claiming for `consumer` up to `count`
    /// entries idle at least `min_idle`, and dropping (and listing) pending entries whose
    /// stream entry is gone, which also count; at most `count * 10` pending entries are
    /// looked at. The group must exist.
    #[allow(clippy::too_many_arguments)]
    pub fn autoclaim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle: i64,
        start: StreamId,
        count: usize,
        justid: bool,
        now: i64,
        emit: impl FnMut(Entry<'_>),
    ) -> AutoClaim {
        self.autoclaim_noting(
            group,
            consumer,
            min_idle,
            start,
            count,
            justid,
            now,
            emit,
            |_| {},
        )
    }

    /// [`Stream::autoclaim`], telling `note` each entry claimed, and each dropped as it was.
    #[allow(clippy::too_many_arguments)]
    pub fn autoclaim_noting(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle: i64,
        start: StreamId,
        count: usize,
        justid: bool,
        now: i64,
        mut emit: impl FnMut(Entry<'_>),
        mut note: impl FnMut(PelChange<'_>),
    ) -> AutoClaim {
        let mut out = AutoClaim::default();
        let Some((nodes, g)) = self.entries_and_group(group) else {
            return out;
        };
        let mut attempts = count.saturating_mul(10);
        let mut left = count;
        let mut cursor = Bound::Included(start);
        let mut eof = false;
        let mut name: Option<Arc<[u8]>> = None;
        while attempts > 0 && left > 0 {
            attempts -= 1;
            let Some((&id, n)) = g.pel.range((cursor, Bound::Unbounded)).next() else {
                eof = true;
                break;
            };
            cursor = Bound::Excluded(id);
            let Some(e) = super::iter::range_in(nodes, id, id, false).next() else {
                note(PelChange {
                    id,
                    arg: 0,
                    consumer: &n.consumer,
                    delivery_time: n.delivery_time,
                    delivery_count: n.delivery_count,
                    last_id: g.last_id,
                });
                g.drop_nack(id);
                out.deleted.push(id);
                left -= 1;
                continue;
            };
            if min_idle != 0 && now.wrapping_sub(n.delivery_time) < min_idle {
                continue;
            }
            let deliveries = n.delivery_count + u64::from(!justid);
            let name = match &name {
                Some(n) => n.clone(),
                None => {
                    out.consumer_created = g.touch_consumer(consumer, now);
                    let n = g.consumer_key(consumer);
                    name = Some(n.clone());
                    n
                }
            };
            g.assign(id, &name, now, deliveries);
            emit(e);
            note(PelChange {
                id,
                arg: 0,
                consumer: &name,
                delivery_time: now,
                delivery_count: deliveries,
                last_id: g.last_id,
            });
            out.claimed += 1;
            left -= 1;
        }
        out.next = if eof {
            StreamId::MIN
        } else {
            g.pel
                .range((cursor, Bound::Unbounded))
                .next()
                .map_or(StreamId::MIN, |(&id, _)| id)
        };
        out
    }

    /// A group's lag (XINFO), or `None` when it cannot be known.
    pub fn group_lag(&self, g: &Group) -> Option<i64> {
        Meta::lag(&self.meta(), g.last_id, g.entries_read)
    }
}
