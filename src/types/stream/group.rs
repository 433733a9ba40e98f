//! Consumer groups: the group's last delivered ID and read counter, its pending entries list
//! (PEL) and its consumers, each with its own PEL over the same pending entries, and the
//! operations on them (XACK, XPENDING, what XREADGROUP and the claims of
//! `delivery.rs` change).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::rax::rax_nodes;
use super::{rax_usage, StreamId};

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
    pub(super) consumer: Arc<[u8]>,
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
    pub(super) seen_time: i64,
    pub(super) pel: BTreeSet<StreamId>,
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
    pub(super) last_id: StreamId,
    pub(super) entries_read: i64,
    pub(super) pel: BTreeMap<StreamId, Nack>,
    pub(super) consumers: BTreeMap<Arc<[u8]>, Consumer>,
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
    pub(super) fn consumer_key(&self, name: &[u8]) -> Arc<[u8]> {
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
    pub(super) fn drop_nack(&mut self, id: StreamId) -> bool {
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
    pub(super) fn assign(&mut self, id: StreamId, consumer: &Arc<[u8]>, time: i64, count: u64) {
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
