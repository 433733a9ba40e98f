use super::*;

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn stream(n: u64) -> Stream {
    let mut s = Stream::new();
    for ms in 1..=n {
        s.add(
            AddId::Exact(id(ms, 0)),
            &[&b"data"[..], b"x"],
            0,
            NodeLimits::default(),
        )
        .unwrap();
    }
    s
}

/// XREADGROUP `>` as the command layer runs it: consumer looked up or created, then the
/// entries after the group's last ID.
fn read(s: &mut Stream, g: &[u8], c: &[u8], count: usize, now: i64) -> Vec<StreamId> {
    s.group_mut(g).unwrap().touch_consumer(c, now);
    let start = s.group(g).unwrap().last_id().incr().unwrap();
    let mut out = Vec::new();
    s.read_group(g, c, start, count, false, now, |e| out.push(e.id));
    out
}

fn lag(s: &Stream, g: &[u8]) -> (i64, Option<i64>) {
    let grp = s.group(g).unwrap();
    (grp.entries_read(), s.group_lag(grp))
}

#[test]
fn groups_are_created_once_and_destroyed() {
    let mut s = stream(1);
    assert!(s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ));
    assert!(!s.create_group(b"g", id(1, 0), 0));
    assert!(s.create_group(b"a", id(1, 0), 0));
    assert_eq!(
        s.groups().map(|(n, _)| n.to_vec()).collect::<Vec<_>>(),
        vec![b"a".to_vec(), b"g".to_vec()]
    );
    assert!(s.destroy_group(b"g"));
    assert!(!s.destroy_group(b"g"));
    assert_eq!(s.group_count(), 1);
}

#[test]
fn a_group_read_delivers_new_entries_once_and_records_them_pending() {
    let mut s = stream(4);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    assert_eq!(
        read(&mut s, b"g", b"alice", 2, 100),
        vec![id(1, 0), id(2, 0)]
    );
    assert_eq!(read(&mut s, b"g", b"bob", 0, 200), vec![id(3, 0), id(4, 0)]);
    assert!(read(&mut s, b"g", b"bob", 0, 300).is_empty());
    let g = s.group(b"g").unwrap();
    assert_eq!(g.last_id(), id(4, 0));
    let sum = g.pending_summary();
    assert_eq!(sum.count, 4);
    assert_eq!(sum.bounds, Some((id(1, 0), id(4, 0))));
    assert_eq!(
        sum.consumers
            .iter()
            .map(|(n, c)| (n.to_vec(), *c))
            .collect::<Vec<_>>(),
        vec![(b"alice".to_vec(), 2), (b"bob".to_vec(), 2)]
    );
    assert_eq!(g.consumer(b"bob").unwrap().seen_time(), 300);
    let p = g.pending_range(StreamId::MIN, StreamId::MAX, 10, None, 0, 250);
    assert_eq!(p[0].idle, 150);
    assert_eq!(&*p[2].consumer, b"bob");
    assert_eq!(p[2].idle, 50);
    assert_eq!(p[3].delivery_count, 1);
    // IDLE filters, a consumer narrows, count limits, an unknown consumer has nothing.
    assert_eq!(
        g.pending_range(StreamId::MIN, StreamId::MAX, 10, None, 100, 250)
            .len(),
        2
    );
    assert_eq!(
        g.pending_range(id(2, 0), StreamId::MAX, 10, Some(b"alice"), 0, 250)
            .len(),
        1
    );
    assert_eq!(
        g.pending_range(StreamId::MIN, StreamId::MAX, 3, None, 0, 250)
            .len(),
        3
    );
    assert!(g
        .pending_range(StreamId::MIN, StreamId::MAX, 3, Some(b"carol"), 0, 250)
        .is_empty());
}

#[test]
fn noack_reads_advance_the_group_without_pending_entries() {
    let mut s = stream(3);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    s.group_mut(b"g").unwrap().touch_consumer(b"c", 0);
    let n = s.read_group(b"g", b"c", id(0, 1), 0, true, 5, |_| {});
    assert_eq!(n, 3);
    let g = s.group(b"g").unwrap();
    assert_eq!((g.last_id(), g.pel_len()), (id(3, 0), 0));
}

#[test]
fn history_reads_return_own_pending_entries_and_deleted_ones_as_none() {
    let mut s = stream(4);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"c", 0, 10);
    s.delete(&[id(2, 0)]);
    let mut seen = Vec::new();
    s.read_history(b"g", b"c", id(1, 0), 0, 50, |i, e| {
        seen.push((i, e.is_some()))
    });
    assert_eq!(
        seen,
        vec![
            (id(1, 0), true),
            (id(2, 0), false),
            (id(3, 0), true),
            (id(4, 0), true)
        ]
    );
    let g = s.group(b"g").unwrap();
    let p = g.pending_range(StreamId::MIN, StreamId::MAX, 10, None, 0, 50);
    // Found entries count as delivered again; the deleted one keeps its old delivery.
    assert_eq!((p[0].delivery_count, p[0].idle), (2, 0));
    assert_eq!((p[1].delivery_count, p[1].idle), (1, 40));
    let mut n = 0;
    s.read_history(b"g", b"c", id(2, 1), 1, 60, |_, _| n += 1);
    assert_eq!(n, 1);
}

#[test]
fn a_reread_entry_moves_to_the_new_consumer() {
    let mut s = stream(2);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 0, 1);
    s.group_mut(b"g")
        .unwrap()
        .set_id(StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"b", 1, 9);
    let g = s.group(b"g").unwrap();
    assert_eq!(g.consumer(b"a").unwrap().pel_len(), 1);
    assert_eq!(g.consumer(b"b").unwrap().pel_len(), 1);
    let p = g.pending_range(id(1, 0), id(1, 0), 1, None, 0, 9);
    assert_eq!((&*p[0].consumer, p[0].delivery_count), (&b"b"[..], 1));
}

#[test]
fn ack_and_consumer_deletion_clear_both_pels() {
    let mut s = stream(5);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 3, 0);
    read(&mut s, b"g", b"b", 0, 0);
    let g = s.group_mut(b"g").unwrap();
    assert_eq!(g.ack(&[id(1, 0), id(1, 0), id(9, 0), id(4, 0)]), 2);
    assert_eq!(g.consumer(b"a").unwrap().pel_len(), 2);
    assert_eq!(g.delete_consumer(b"a"), Some(2));
    assert_eq!(g.delete_consumer(b"a"), None);
    assert_eq!(g.pel_len(), 1);
    assert!(!g.create_consumer(b"b", 0));
    assert!(g.create_consumer(b"c", 0));
    assert_eq!(g.consumer_count(), 2);
}

#[test]
fn xclaim_takes_idle_entries_and_drops_deleted_ones() {
    let mut s = stream(4);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 0, 1000);
    s.delete(&[id(3, 0)]);
    let mut got = Vec::new();
    let opts = ClaimOptions {
        min_idle: 500,
        ..Default::default()
    };
    // Not idle long enough: nothing, and the consumer is not created.
    let c = s.claim(b"g", b"b", &[id(1, 0)], &opts, 1200, |e| got.push(e.id));
    assert_eq!((c.claimed, c.consumer_created), (0, false));
    assert!(s.group(b"g").unwrap().consumer(b"b").is_none());
    let c = s.claim(
        b"g",
        b"b",
        &[id(1, 0), id(3, 0), id(9, 0)],
        &opts,
        1600,
        |e| got.push(e.id),
    );
    assert_eq!((c.claimed, c.consumer_created, c.dropped), (1, true, 1));
    assert_eq!(got, vec![id(1, 0)]);
    let g = s.group(b"g").unwrap();
    assert_eq!(g.pel_len(), 3);
    let p = g.pending_range(id(1, 0), id(1, 0), 1, None, 0, 1600);
    assert_eq!(
        (&*p[0].consumer, p[0].delivery_count, p[0].idle),
        (&b"b"[..], 2, 0)
    );
    assert_eq!(g.consumer(b"a").unwrap().pel_len(), 2);
}

#[test]
fn xclaim_options_set_time_count_and_last_id() {
    let mut s = stream(4);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 2, 0);
    let opts = ClaimOptions {
        delivery_time: Some(40),
        retry_count: Some(7),
        justid: true,
        last_id: Some(id(3, 0)),
        ..Default::default()
    };
    s.claim(b"g", b"b", &[id(1, 0)], &opts, 100, |_| {});
    let g = s.group(b"g").unwrap();
    assert_eq!(g.last_id(), id(3, 0));
    let p = g.pending_range(id(1, 0), id(1, 0), 1, None, 0, 100);
    assert_eq!((p[0].idle, p[0].delivery_count), (60, 7));
    // JUSTID leaves the count; a future time means now.
    let opts = ClaimOptions {
        delivery_time: Some(5000),
        justid: true,
        ..Default::default()
    };
    s.claim(b"g", b"b", &[id(2, 0)], &opts, 100, |_| {});
    let p = s
        .group(b"g")
        .unwrap()
        .pending_range(id(2, 0), id(2, 0), 1, None, 0, 100);
    assert_eq!((p[0].idle, p[0].delivery_count), (0, 1));
}

#[test]
fn xclaim_force_creates_pending_entries_for_existing_ones_only() {
    let mut s = stream(4);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    let force = ClaimOptions {
        force: true,
        min_idle: 1_000_000,
        ..Default::default()
    };
    let c = s.claim(b"g", b"c", &[id(4, 0), id(5, 0)], &force, 10, |_| {});
    assert_eq!(c.claimed, 1);
    let p = s
        .group(b"g")
        .unwrap()
        .pending_range(StreamId::MIN, StreamId::MAX, 9, None, 0, 10);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].delivery_count, 2);
    let justid = ClaimOptions {
        force: true,
        justid: true,
        ..Default::default()
    };
    s.claim(b"g", b"c", &[id(3, 0)], &justid, 10, |_| {});
    let p = s
        .group(b"g")
        .unwrap()
        .pending_range(id(3, 0), id(3, 0), 9, None, 0, 10);
    assert_eq!(p[0].delivery_count, 1);
}

#[test]
fn xautoclaim_scans_from_a_cursor_and_lists_deleted_entries() {
    let mut s = stream(6);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 0, 0);
    s.delete(&[id(2, 0)]);
    let mut got = Vec::new();
    let r = s.autoclaim(b"g", b"b", 10, StreamId::MIN, 2, false, 100, |e| {
        got.push(e.id)
    });
    // 1-0 claimed, 2-0 dropped (both count), the cursor is the next pending ID.
    assert_eq!(got, vec![id(1, 0)]);
    assert_eq!(r.deleted, vec![id(2, 0)]);
    assert_eq!(r.next, id(3, 0));
    assert!(r.consumer_created);
    got.clear();
    let r = s.autoclaim(b"g", b"b", 10, r.next, 10, true, 100, |e| got.push(e.id));
    assert_eq!(got, vec![id(3, 0), id(4, 0), id(5, 0), id(6, 0)]);
    assert_eq!(r.next, StreamId::MIN);
    let g = s.group(b"g").unwrap();
    assert_eq!(g.consumer(b"a").unwrap().pel_len(), 0);
    let p = g.pending_range(StreamId::MIN, StreamId::MAX, 9, None, 0, 100);
    // Without JUSTID the delivery count went up; with it, not.
    assert_eq!(
        p.iter().map(|p| p.delivery_count).collect::<Vec<_>>(),
        vec![2, 1, 1, 1, 1]
    );
    // Nothing idle enough: the scan stops after count * 10 looks.
    let r = s.autoclaim(b"g", b"b", 1000, StreamId::MIN, 1, false, 100, |_| {});
    assert_eq!((r.claimed, r.next), (0, StreamId::MIN));
}

#[test]
fn xautoclaim_stops_after_ten_looks_per_count() {
    let mut s = stream(30);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    read(&mut s, b"g", b"a", 0, 0);
    let r = s.autoclaim(b"g", b"b", 1000, StreamId::MIN, 2, false, 10, |_| {});
    assert_eq!(
        (r.claimed, r.next, r.consumer_created),
        (0, id(21, 0), false)
    );
}

#[test]
fn read_counter_and_lag_follow_redis_in_a_stream_without_deletions() {
    let mut s = stream(5);
    s.create_group(b"g1", StreamId::MIN, INVALID_ENTRIES_READ);
    assert_eq!(lag(&s, b"g1"), (-1, Some(5)));
    read(&mut s, b"g1", b"c11", 1, 0);
    assert_eq!(lag(&s, b"g1"), (1, Some(4)));
    read(&mut s, b"g1", b"c12", 10, 0);
    assert_eq!(lag(&s, b"g1"), (5, Some(0)));
    s.add(
        AddId::Exact(id(6, 0)),
        &[&b"data"[..], b"f"],
        0,
        NodeLimits::default(),
    )
    .unwrap();
    assert_eq!(lag(&s, b"g1"), (5, Some(1)));
}

#[test]
fn read_counter_and_lag_with_deletions_follow_redis() {
    let mut s = stream(5);
    s.delete(&[id(3, 0)]);
    s.create_group(b"g1", StreamId::MIN, INVALID_ENTRIES_READ);
    s.create_group(b"g2", StreamId::MIN, INVALID_ENTRIES_READ);
    assert_eq!(lag(&s, b"g1"), (-1, None));
    for _ in 0..3 {
        read(&mut s, b"g1", b"c11", 1, 0);
        assert_eq!(lag(&s, b"g1"), (-1, None));
    }
    read(&mut s, b"g1", b"c11", 1, 0);
    assert_eq!(lag(&s, b"g1"), (5, Some(0)));
    s.add(
        AddId::Exact(id(6, 0)),
        &[&b"data"[..], b"f"],
        0,
        NodeLimits::default(),
    )
    .unwrap();
    assert_eq!(lag(&s, b"g1"), (5, Some(1)));
    let exact = |m| Trim {
        strategy: TrimStrategy::MinId(id(m, 0)),
        approx: false,
        limit: 0,
    };
    s.trim(exact(3));
    assert_eq!(lag(&s, b"g1"), (5, Some(1)));
    assert_eq!(lag(&s, b"g2"), (-1, Some(3)));
    s.trim(exact(5));
    assert_eq!(lag(&s, b"g1"), (5, Some(1)));
    assert_eq!(lag(&s, b"g2"), (-1, Some(2)));
}

#[test]
fn an_empty_stream_has_no_lag() {
    let mut s = Stream::new();
    s.create_group(b"g1", StreamId::MIN, INVALID_ENTRIES_READ);
    assert_eq!(lag(&s, b"g1"), (-1, Some(0)));
    s.add(
        AddId::Exact(id(1, 0)),
        &[&b"data"[..], b"a"],
        0,
        NodeLimits::default(),
    )
    .unwrap();
    s.delete(&[id(1, 0)]);
    assert_eq!(s.meta().max_deleted, id(1, 0));
    assert_eq!(lag(&s, b"g1"), (-1, Some(0)));
}

#[test]
fn group_memory_counts_pels_and_consumers_as_redis_does() {
    let mut s = stream(3);
    let base = s.mem_usage_samples(5);
    s.create_group(b"g", StreamId::MIN, INVALID_ENTRIES_READ);
    // An empty group: the struct and an empty PEL tree (one node).
    assert_eq!(s.mem_usage_samples(5), base + 40 + 244);
    read(&mut s, b"g", b"cons", 0, 0);
    // Three pending entries differing in the ms byte: 16 each, a root, a branching node,
    // three leaves and three compressed edges; the consumer's PEL is the same tree.
    let pel = 3 * 16 + 8 * 244;
    assert_eq!(
        s.mem_usage_samples(5),
        base + 40 + pel + 3 * 24 + 24 + 4 + pel
    );
}
