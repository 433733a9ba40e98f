use super::*;

fn id(ms: u64, seq: u64) -> StreamId {
    StreamId::new(ms, seq)
}

fn add(s: &mut Stream, at: StreamId, pairs: &[&[u8]]) -> StreamId {
    s.add(AddId::Exact(at), pairs, 0, NodeLimits::default())
        .expect("added")
}

/// The entries of a range as (ID, [field, value, ...]) with owned bytes.
fn collect(r: Range<'_>) -> Vec<(StreamId, Vec<Vec<u8>>)> {
    r.map(|e| {
        let mut kv = Vec::new();
        for (f, v) in e.fields() {
            kv.push(f.to_vec());
            kv.push(v.to_vec());
        }
        (e.id, kv)
    })
    .collect()
}

fn ids<'a>(r: impl Iterator<Item = Entry<'a>>) -> Vec<StreamId> {
    r.map(|e| e.id).collect()
}

#[test]
fn ids_parse_with_redis_special_forms() {
    assert_eq!(parse_id(b"-", 0), Ok(StreamId::MIN));
    assert_eq!(parse_id(b"+", 0), Ok(StreamId::MAX));
    assert_eq!(parse_strict_id(b"-", 0), Err(StreamError::InvalidId));
    assert_eq!(parse_strict_id(b"+", 0), Err(StreamError::InvalidId));
    assert_eq!(parse_id(b"5", 0), Ok(id(5, 0)));
    assert_eq!(parse_id(b"5", u64::MAX), Ok(id(5, u64::MAX)));
    assert_eq!(parse_id(b"5-7", u64::MAX), Ok(id(5, 7)));
    assert_eq!(
        parse_id(b"18446744073709551615-18446744073709551615", 0),
        Ok(StreamId::MAX)
    );
    // strtoull's leniency: white space, '+', leading zeros.
    assert_eq!(parse_id(b" 5-+3", 0), Ok(id(5, 3)));
    assert_eq!(parse_id(b"007-01", 0), Ok(id(7, 1)));
    for bad in [
        &b""[..],
        b"-5",
        b"5-",
        b"5-x",
        b"1-2-3",
        b"abc",
        b"18446744073709551616",
        b"*",
        b"5-*",
    ] {
        assert_eq!(parse_id(bad, 0), Err(StreamError::InvalidId), "{bad:?}");
    }
    assert_eq!(parse_id(&[b'1'; 128], 0), Err(StreamError::InvalidId));
    // A NUL ends the C string Redis parses.
    assert_eq!(parse_id(b"5\x00-9", 3), Ok(id(5, 3)));
}

#[test]
fn xadd_ids_take_star_and_ms_star_forms() {
    assert_eq!(parse_add_id(b"5-*"), Ok(AddId::Ms(5)));
    assert_eq!(parse_add_id(b"5-3"), Ok(AddId::Exact(id(5, 3))));
    assert_eq!(parse_add_id(b"5"), Ok(AddId::Exact(id(5, 0))));
    assert_eq!(parse_add_id(b"*"), Err(StreamError::InvalidId));
    assert_eq!(parse_add_id(b"-"), Err(StreamError::InvalidId));
    assert_eq!(parse_add_id(b"5-**"), Err(StreamError::InvalidId));
}

#[test]
fn exclusive_bounds_move_to_the_neighbouring_id() {
    assert_eq!(parse_range_start(b"(5-3"), Ok(id(5, 4)));
    assert_eq!(parse_range_start(b"(5"), Ok(id(5, 1)));
    // An incomplete end means its largest sequence, so "(5" still takes 5-0.
    assert_eq!(parse_range_end(b"(5"), Ok(id(5, u64::MAX - 1)));
    assert_eq!(parse_range_end(b"5"), Ok(id(5, u64::MAX)));
    assert_eq!(parse_range_start(b"5"), Ok(id(5, 0)));
    assert_eq!(parse_range_start(b"(-"), Err(StreamError::InvalidId));
    assert_eq!(parse_range_end(b"(+"), Err(StreamError::InvalidId));
    // "(" alone is not exclusive, just invalid.
    assert_eq!(parse_range_start(b"("), Err(StreamError::InvalidId));
    assert_eq!(
        parse_range_start(b"(18446744073709551615-18446744073709551615"),
        Err(StreamError::InvalidStartInterval)
    );
    assert_eq!(
        parse_range_end(b"(0-0"),
        Err(StreamError::InvalidEndInterval)
    );
    assert_eq!(
        parse_range_start(b"(18446744073709551615"),
        Ok(id(u64::MAX, 1))
    );
}

#[test]
fn ids_print_as_ms_dash_seq_and_step_across_the_sequence() {
    assert_eq!(id(0, 0).to_vec(), b"0-0");
    assert_eq!(
        StreamId::MAX.to_vec(),
        b"18446744073709551615-18446744073709551615"
    );
    assert_eq!(id(3, u64::MAX).incr(), Some(id(4, 0)));
    assert_eq!(StreamId::MAX.incr(), None);
    assert_eq!(id(4, 0).decr(), Some(id(3, u64::MAX)));
    assert_eq!(StreamId::MIN.decr(), None);
}

#[test]
fn generated_ids_follow_the_clock_and_never_go_back() {
    let mut s = Stream::new();
    let l = NodeLimits::default();
    let f: &[&[u8]] = &[b"f", b"v"];
    assert_eq!(s.add(AddId::Auto, f, 1000, l), Ok(id(1000, 0)));
    assert_eq!(s.add(AddId::Auto, f, 1000, l), Ok(id(1000, 1)));
    assert_eq!(s.add(AddId::Auto, f, 1005, l), Ok(id(1005, 0)));
    // The clock went back: the last ms is kept and the sequence moves on.
    assert_eq!(s.add(AddId::Auto, f, 900, l), Ok(id(1005, 1)));
    assert_eq!(s.add(AddId::Ms(1005), f, 0, l), Ok(id(1005, 2)));
    assert_eq!(s.add(AddId::Ms(2000), f, 0, l), Ok(id(2000, 0)));
    assert_eq!(
        s.add(AddId::Ms(1999), f, 0, l),
        Err(StreamError::IdNotGreater)
    );
    assert_eq!(
        s.add(AddId::Exact(id(2000, 0)), f, 0, l),
        Err(StreamError::IdNotGreater)
    );
    assert_eq!(s.len(), 6);
    assert_eq!(s.meta().entries_added, 6);
    assert_eq!(s.meta().first_id, id(1000, 0));
    assert_eq!(s.last_id(), id(2000, 0));
}

#[test]
fn an_exhausted_sequence_is_refused() {
    let mut s = Stream::new();
    let l = NodeLimits::default();
    let f: &[&[u8]] = &[b"f", b"v"];
    add(&mut s, id(1, u64::MAX), f);
    assert_eq!(s.add(AddId::Ms(1), f, 0, l), Err(StreamError::SeqExhausted));
    add(&mut s, StreamId::MAX, f);
    // Past the largest ID generation wraps to 0-0, which is not greater.
    assert_eq!(s.add(AddId::Auto, f, 5, l), Err(StreamError::IdNotGreater));
    assert_eq!(s.len(), 2);
}

#[test]
fn entries_read_back_with_their_fields_compressed_or_not() {
    let mut s = Stream::new();
    let big = vec![b'z'; 5000];
    add(&mut s, id(1, 0), &[b"name", b"ann", b"age", b"42"]);
    add(&mut s, id(2, 0), &[b"name", b"bob", b"age", b"-7"]);
    add(&mut s, id(3, 0), &[b"age", b"", b"name", b"cy"]);
    add(&mut s, id(4, 0), &[b"x", &big]);
    add(
        &mut s,
        id(5, 0),
        &[b"name", b"9223372036854775807", b"age", b"007"],
    );
    let all = collect(s.range(StreamId::MIN, StreamId::MAX, false));
    assert_eq!(all.len(), 5);
    assert_eq!(
        all[0].1,
        vec![
            b"name".to_vec(),
            b"ann".to_vec(),
            b"age".to_vec(),
            b"42".to_vec()
        ]
    );
    assert_eq!(all[1].1[3], b"-7");
    assert_eq!(
        all[2].1,
        vec![
            b"age".to_vec(),
            b"".to_vec(),
            b"name".to_vec(),
            b"cy".to_vec()
        ]
    );
    assert_eq!(all[3].1, vec![b"x".to_vec(), big.clone()]);
    assert_eq!(all[4].1[1], b"9223372036854775807");
    assert_eq!(all[4].1[3], b"007");
    let mut back = collect(s.range(StreamId::MIN, StreamId::MAX, true));
    back.reverse();
    assert_eq!(back, all);
}

#[test]
fn ranges_are_inclusive_and_walk_either_way_across_nodes() {
    let mut s = Stream::new();
    let l = NodeLimits {
        max_bytes: 0,
        max_entries: 3,
    };
    for ms in 1..=10u64 {
        s.add(AddId::Exact(id(ms, 0)), &[&b"f"[..], b"v"], 0, l)
            .unwrap();
    }
    assert_eq!(s.node_count(), 4);
    assert_eq!(
        ids(s.range(id(3, 0), id(7, 0), false)),
        (3..=7).map(|m| id(m, 0)).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(s.range(id(3, 0), id(7, 0), true)),
        (3..=7).rev().map(|m| id(m, 0)).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(s.range(id(3, 1), id(6, 9), false)),
        vec![id(4, 0), id(5, 0), id(6, 0)]
    );
    assert!(ids(s.range(id(8, 0), id(7, 0), false)).is_empty());
    assert!(ids(s.range(id(11, 0), StreamId::MAX, false)).is_empty());
    assert!(ids(s.range(StreamId::MIN, id(0, 5), true)).is_empty());
    assert_eq!(
        ids(s.range(StreamId::MIN, StreamId::MAX, true).take(2)),
        vec![id(10, 0), id(9, 0)]
    );
    assert_eq!(s.get(id(4, 0)).map(|e| e.id), Some(id(4, 0)));
    assert!(s.get(id(4, 1)).is_none());
    assert_eq!(s.last_valid_id(), Some(id(10, 0)));
}

#[test]
fn nodes_split_on_entries_counting_tombstones_and_on_bytes() {
    let mut s = Stream::new();
    let l = NodeLimits {
        max_bytes: 0,
        max_entries: 2,
    };
    let f: &[&[u8]] = &[b"f", b"v"];
    s.add(AddId::Exact(id(1, 0)), f, 0, l).unwrap();
    s.add(AddId::Exact(id(2, 0)), f, 0, l).unwrap();
    assert_eq!(s.delete(&[id(2, 0)]), 1);
    // The tombstone still counts toward the node's size.
    s.add(AddId::Exact(id(3, 0)), f, 0, l).unwrap();
    assert_eq!(s.node_count(), 2);

    let mut s = Stream::new();
    let l = NodeLimits {
        max_bytes: 100,
        max_entries: 0,
    };
    let v = [b'a'; 40];
    for ms in 1..=4u64 {
        s.add(AddId::Exact(id(ms, 0)), &[&b"f"[..], &v], 0, l)
            .unwrap();
    }
    // A node of one entry is about 60 bytes; a second 40-byte value would reach 100.
    assert_eq!(s.node_count(), 4);
}

#[test]
fn xdel_leaves_tombstones_and_tracks_first_and_max_deleted() {
    let mut s = Stream::new();
    for ms in 1..=5u64 {
        add(&mut s, id(ms, 0), &[b"data", b"a"]);
    }
    assert_eq!(s.delete(&[id(2, 0)]), 1);
    assert_eq!(s.meta().first_id, id(1, 0));
    assert_eq!(s.meta().max_deleted, id(2, 0));
    assert_eq!(s.delete(&[id(1, 0), id(1, 0), id(9, 0)]), 1);
    assert_eq!(s.meta().first_id, id(3, 0));
    assert_eq!(s.meta().max_deleted, id(2, 0));
    assert_eq!(s.len(), 3);
    assert_eq!(
        ids(s.range(StreamId::MIN, StreamId::MAX, false)),
        vec![id(3, 0), id(4, 0), id(5, 0)]
    );
    assert_eq!(s.delete(&[id(3, 0), id(4, 0), id(5, 0)]), 3);
    // The node went with its last live entry.
    assert_eq!(s.node_count(), 0);
    assert_eq!(s.meta().first_id, StreamId::MIN);
    assert_eq!(s.meta().max_deleted, id(5, 0));
    assert_eq!(s.last_id(), id(5, 0));
    assert_eq!(s.last_valid_id(), None);
}

#[test]
fn exact_maxlen_trims_into_a_node_and_approximate_only_whole_nodes() {
    let l = NodeLimits {
        max_bytes: 0,
        max_entries: 10,
    };
    let build = || {
        let mut s = Stream::new();
        for ms in 1..=35u64 {
            s.add(AddId::Exact(id(ms, 0)), &[&b"f"[..], b"v"], 0, l)
                .unwrap();
        }
        s
    };
    let mut s = build();
    let maxlen = |n, approx| Trim {
        strategy: TrimStrategy::MaxLen(n),
        approx,
        limit: 0,
    };
    assert_eq!(s.trim(maxlen(22, true)), 10);
    assert_eq!(s.len(), 25);
    assert_eq!(s.meta().first_id, id(11, 0));
    assert_eq!(s.trim(maxlen(22, false)), 3);
    assert_eq!(s.len(), 22);
    assert_eq!(s.meta().first_id, id(14, 0));
    assert_eq!(s.trim(maxlen(22, false)), 0);

    let mut s = build();
    let limited = Trim {
        strategy: TrimStrategy::MaxLen(0),
        approx: true,
        limit: 25,
    };
    assert_eq!(s.trim(limited), 20);
    let mut s = build();
    assert_eq!(s.trim(maxlen(0, false)), 35);
    assert!(s.is_empty());
    assert_eq!(s.node_count(), 0);
    assert_eq!(s.meta().first_id, StreamId::MIN);
    assert_eq!(s.meta().entries_added, 35);
}

#[test]
fn minid_trims_entries_below_the_id() {
    let l = NodeLimits {
        max_bytes: 0,
        max_entries: 10,
    };
    let mut s = Stream::new();
    for ms in 1..=35u64 {
        s.add(AddId::Exact(id(ms, 0)), &[&b"f"[..], b"v"], 0, l)
            .unwrap();
    }
    let minid = |m, approx| Trim {
        strategy: TrimStrategy::MinId(id(m, 0)),
        approx,
        limit: 0,
    };
    assert_eq!(s.trim(minid(15, true)), 10);
    assert_eq!(s.trim(minid(15, false)), 4);
    assert_eq!(s.meta().first_id, id(15, 0));
    assert_eq!(s.trim(minid(15, false)), 0);
}

/// The figures of a redis-server 7.0.15 session (XINFO STREAM radix-tree-keys and
/// radix-tree-nodes, MEMORY USAGE SAMPLES 0 and the default 5 minus the key's 32 bytes)
/// for the same operations.
#[test]
fn node_layout_and_memory_usage_match_redis_server() {
    let l = NodeLimits::default();
    let check = |s: &Stream, len, keys, nodes, all: usize, five: usize| {
        assert_eq!(
            (
                s.len(),
                s.node_count(),
                s.rax_node_count(),
                s.mem_usage_samples(usize::MAX),
                s.mem_usage_samples(5)
            ),
            (len, keys, nodes, all - 32, five - 32)
        );
    };
    let mut s1 = Stream::new();
    let mut s1_ids = Vec::new();
    for i in 1..=1000u64 {
        let at = id(i, i % 7);
        let a = i.to_string();
        if i % 3 == 0 {
            let b = "x".repeat((i % 50) as usize);
            s1.add(
                AddId::Exact(at),
                &[b"a", a.as_bytes(), b"b", b.as_bytes()],
                0,
                l,
            )
            .unwrap();
        } else {
            s1.add(AddId::Exact(at), &[b"a", a.as_bytes()], 0, l)
                .unwrap();
        }
        s1_ids.push(at);
    }
    check(&s1, 1000, 10, 26, 33768, 33768);

    let mut s2 = Stream::new();
    for i in 1..=200u64 {
        let v = "y".repeat((i * 37 % 3000) as usize);
        s2.add(
            AddId::Exact(id(1000 + i * 1000, 0)),
            &[b"f", v.as_bytes()],
            0,
            l,
        )
        .unwrap();
    }
    check(&s2, 200, 92, 190, 349016, 406137);

    for i in (1..=1000).step_by(4) {
        s1.delete(&[s1_ids[i - 1]]);
    }
    check(&s1, 750, 10, 26, 33768, 33768);
    for i in 1..300 {
        s1.delete(&[s1_ids[i - 1]]);
    }
    check(&s1, 526, 8, 21, 27396, 27396);
    let t = |strategy, approx| Trim {
        strategy,
        approx,
        limit: if approx { 10_000 } else { 0 },
    };
    assert_eq!(s1.trim(t(TrimStrategy::MaxLen(500), true)), 1);
    check(&s1, 525, 7, 19, 24332, 24332);
    assert_eq!(s1.trim(t(TrimStrategy::MaxLen(321), false)), 204);
    check(&s1, 321, 5, 14, 17960, 17960);
    assert_eq!(s1.trim(t(TrimStrategy::MinId(id(800, 0)), true)), 96);
    check(&s1, 225, 3, 9, 11588, 11588);
    assert_eq!(s1.trim(t(TrimStrategy::MinId(id(850, 3)), false)), 111);
    check(&s1, 114, 2, 6, 8280, 8280);
    assert_eq!(
        ids(s1.range(StreamId::MIN, StreamId::MAX, false).take(2)),
        vec![id(850, 3), id(851, 4)]
    );
}

#[test]
fn small_streams_cost_what_redis_server_reports() {
    // MEMORY USAGE minus the key: one entry in a fresh node preallocated to 4 KB.
    let mut s = Stream::new();
    add(&mut s, StreamId::MAX, &[b"a", b"b"]);
    assert_eq!(s.mem_usage_samples(5), 4728 - 32);
    let l = NodeLimits {
        max_bytes: 4096,
        max_entries: 1,
    };
    let mut s = Stream::new();
    for seq in 1..=3 {
        s.add(AddId::Exact(id(1, seq)), &[&b"f"[..], b"v"], 0, l)
            .unwrap();
    }
    assert_eq!((s.node_count(), s.rax_node_count()), (3, 5));
    assert_eq!(s.mem_usage_samples(5), 5556 - 32);
}

#[test]
fn xsetid_refuses_to_go_below_the_top_entry_or_the_length() {
    let mut s = Stream::new();
    add(&mut s, id(5, 0), &[b"f", b"v"]);
    add(&mut s, id(6, 0), &[b"f", b"v"]);
    s.delete(&[id(6, 0)]);
    assert_eq!(
        s.set_id(id(4, 0), None, StreamId::MIN),
        Err(StreamError::SetIdTooSmall)
    );
    // The top live entry is 5-0: the deleted 6-0 does not count.
    assert_eq!(s.set_id(id(5, 0), None, StreamId::MIN), Ok(()));
    assert_eq!(s.last_id(), id(5, 0));
    assert_eq!(
        s.set_id(id(7, 0), Some(0), StreamId::MIN),
        Err(StreamError::EntriesAddedTooSmall)
    );
    assert_eq!(s.set_id(id(7, 0), Some(9), id(6, 0)), Ok(()));
    let m = s.meta();
    assert_eq!(
        (m.last_id, m.entries_added, m.max_deleted),
        (id(7, 0), 9, id(6, 0))
    );
    // An empty stream takes anything.
    let mut e = Stream::new();
    assert_eq!(e.set_id(id(1, 0), Some(0), StreamId::MIN), Ok(()));
}

#[test]
fn copies_are_independent() {
    let mut s = Stream::new();
    add(&mut s, id(1, 0), &[b"f", b"v"]);
    s.create_group(b"g", StreamId::MIN, 0);
    let c = s.clone();
    add(&mut s, id(2, 0), &[b"f", b"v"]);
    s.destroy_group(b"g");
    assert_eq!(c.len(), 1);
    assert_eq!(c.group_count(), 1);
}
