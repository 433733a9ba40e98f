//! Entries delivered to a group's consumers, where the stream and one of its groups are
//! needed together: XREADGROUP (new entries and a consumer's history), XCLAIM and XAUTOCLAIM
//! (pending entries moved between consumers, those whose entry is gone dropped), and a
//! group's lag.

use std::ops::Bound;
use std::sync::Arc;

use super::{Entry, Group, Meta, PelChange, Stream, StreamId, INVALID_ENTRIES_READ};

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
