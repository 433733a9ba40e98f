//! Sets and sorted sets through a real client: behaviour the recorded conformance cases cannot
//! pin down because Redis's own answer varies (random picks, hash-table order, SCAN pages),
//! checked here as properties.

mod common;
use common::*;
use redis::AsyncCommands;
use std::collections::{BTreeSet, HashSet};

#[tokio::test]
async fn hash_table_set_answers_every_member_once_in_an_unordered_reply() {
    // A set with strings is a hash table: SMEMBERS, SINTER, SUNION and SDIFF answer in an
    // order Redis does not define (and resplock's differs from Redis's), so compare as sets.
    let s = server().await;
    let mut c = client(&s).await;
    let members: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let _: i64 = c.sadd("s", &members).await.unwrap();
    let got: Vec<String> = c.smembers("s").await.unwrap();
    assert_eq!(got.len(), 300);
    let uniq: HashSet<&String> = got.iter().collect();
    assert_eq!(uniq, members.iter().collect());
    s.shutdown().await;
}

#[tokio::test]
async fn sscan_returns_every_member_present_throughout_exactly_once() {
    let s = server().await;
    let mut c = client(&s).await;
    let members: Vec<String> = (0..2000).map(|i| format!("member:{i}")).collect();
    let _: i64 = c.sadd("s", &members).await.unwrap();
    let mut seen: Vec<String> = Vec::new();
    let mut cursor: u64 = 0;
    let mut rounds = 0;
    loop {
        let (next, page): (u64, Vec<String>) = redis::cmd("SSCAN")
            .arg("s")
            .arg(cursor)
            .arg("COUNT")
            .arg(50)
            .query_async(&mut c)
            .await
            .unwrap();
        seen.extend(page);
        // Churn that must not disturb members present for the whole scan.
        let _: i64 = c.sadd("s", format!("extra:{rounds}")).await.unwrap();
        let _: i64 = c.srem("s", format!("extra:{rounds}")).await.unwrap();
        rounds += 1;
        cursor = next;
        if cursor == 0 || rounds > 1000 {
            break;
        }
    }
    assert_eq!(cursor, 0, "the scan finished");
    let stable: Vec<&String> = seen.iter().filter(|m| m.starts_with("member:")).collect();
    assert_eq!(stable.len(), 2000, "no member twice, none missing");
    let uniq: HashSet<&&String> = stable.iter().collect();
    assert_eq!(uniq.len(), 2000);
    s.shutdown().await;
}

#[tokio::test]
async fn spop_with_count_removes_exactly_what_it_returns_in_every_case() {
    let s = server().await;
    let mut c = client(&s).await;
    // Counts covering t_set.c's cases: a few (case 2), most (case 3), all (case 1).
    for (size, count) in [(100usize, 3usize), (100, 90), (100, 100), (100, 150)] {
        for encoding in ["int", "str"] {
            let members: Vec<String> = (0..size)
                .map(|i| {
                    if encoding == "int" {
                        i.to_string()
                    } else {
                        format!("s{i}")
                    }
                })
                .collect();
            let _: () = c.del("s").await.unwrap();
            let _: i64 = c.sadd("s", &members).await.unwrap();
            let popped: Vec<String> = redis::cmd("SPOP")
                .arg("s")
                .arg(count)
                .query_async(&mut c)
                .await
                .unwrap();
            assert_eq!(popped.len(), count.min(size));
            let left: Vec<String> = c.smembers("s").await.unwrap();
            let popped_set: BTreeSet<&String> = popped.iter().collect();
            assert_eq!(popped_set.len(), popped.len(), "distinct members");
            let mut all: BTreeSet<&String> = left.iter().collect();
            assert!(
                popped_set.iter().all(|m| !all.contains(*m)),
                "popped left the set"
            );
            all.extend(popped_set);
            assert_eq!(all, members.iter().collect(), "nothing lost or invented");
        }
    }
    s.shutdown().await;
}

#[tokio::test]
async fn srandmember_and_zrandmember_pick_only_members() {
    let s = server().await;
    let mut c = client(&s).await;
    let _: i64 = c.sadd("s", &["a", "b", "c"]).await.unwrap();
    let _: i64 = c
        .zadd_multiple("z", &[(1, "a"), (2, "b"), (3, "c")])
        .await
        .unwrap();
    let picks: Vec<String> = redis::cmd("SRANDMEMBER")
        .arg("s")
        .arg(-50)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(picks.len(), 50);
    assert!(picks.iter().all(|p| ["a", "b", "c"].contains(&p.as_str())));
    let picks: Vec<String> = redis::cmd("SRANDMEMBER")
        .arg("s")
        .arg(2)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(
        picks.iter().collect::<HashSet<_>>().len(),
        2,
        "a positive count picks distinct members"
    );
    let picks: Vec<String> = redis::cmd("ZRANDMEMBER")
        .arg("z")
        .arg(-20)
        .arg("WITHSCORES")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(picks.len(), 40);
    for pair in picks.chunks(2) {
        let want = match pair[0].as_str() {
            "a" => "1",
            "b" => "2",
            "c" => "3",
            other => panic!("not a member: {other}"),
        };
        assert_eq!(pair[1], want, "the score goes with its member");
    }
    s.shutdown().await;
}

#[tokio::test]
async fn a_large_sorted_set_agrees_with_a_model_on_ranks_ranges_and_removals() {
    // Past zset-max-listpack-entries the set is a skiplist; check it against a sorted model.
    let s = server().await;
    let mut c = client(&s).await;
    let mut model: Vec<(i64, String)> = Vec::new();
    let mut rng = 12345u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..1000 {
        let score = (next() % 500) as i64;
        let member = format!("m{i}");
        let _: i64 = c.zadd("z", &member, score).await.unwrap();
        model.push((score, member));
    }
    model.sort();
    for probe in [0usize, 1, 499, 998, 999] {
        let (_, m) = &model[probe];
        let r: i64 = c.zrank("z", m).await.unwrap();
        assert_eq!(r as usize, probe);
        let rr: i64 = c.zrevrank("z", m).await.unwrap();
        assert_eq!(rr as usize, 999 - probe);
    }
    let got: Vec<String> = c.zrange("z", 100, 109).await.unwrap();
    let want: Vec<String> = model[100..110].iter().map(|(_, m)| m.clone()).collect();
    assert_eq!(got, want);
    let got: Vec<String> = redis::cmd("ZRANGE")
        .arg("z")
        .arg("(100")
        .arg("200")
        .arg("BYSCORE")
        .arg("LIMIT")
        .arg(5)
        .arg(10)
        .query_async(&mut c)
        .await
        .unwrap();
    let want: Vec<String> = model
        .iter()
        .filter(|(s, _)| *s > 100 && *s <= 200)
        .skip(5)
        .take(10)
        .map(|(_, m)| m.clone())
        .collect();
    assert_eq!(got, want);
    let removed: i64 = c.zrembyscore("z", 0, 99).await.unwrap();
    assert_eq!(
        removed as usize,
        model.iter().filter(|(s, _)| *s <= 99).count()
    );
    let card: i64 = c.zcard("z").await.unwrap();
    assert_eq!(card as usize, 1000 - removed as usize);
    s.shutdown().await;
}

#[tokio::test]
async fn zscan_of_a_skiplist_pairs_each_member_with_its_score_once() {
    let s = server().await;
    let mut c = client(&s).await;
    let items: Vec<(f64, String)> = (0..500)
        .map(|i| (i as f64 + 0.5, format!("m{i}")))
        .collect();
    let _: i64 = c.zadd_multiple("z", &items).await.unwrap();
    let mut seen = HashSet::new();
    let mut cursor: u64 = 0;
    for _ in 0..1000 {
        let (next, page): (u64, Vec<String>) = redis::cmd("ZSCAN")
            .arg("z")
            .arg(cursor)
            .query_async(&mut c)
            .await
            .unwrap();
        for pair in page.chunks(2) {
            let i: usize = pair[0][1..].parse().unwrap();
            assert_eq!(pair[1], format!("{}.5", i));
            assert!(seen.insert(i), "member {i} twice");
        }
        cursor = next;
        if cursor == 0 {
            break;
        }
    }
    assert_eq!(seen.len(), 500);
    s.shutdown().await;
}
