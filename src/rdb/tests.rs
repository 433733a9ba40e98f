//! Round trips of every type and encoding through objects, payloads and whole files.

use super::file::{self, AccessSave, Aux, Event, FileWriter, KeyFormat, LoadOptions};
use super::object::{self, Limits};
use super::*;
use crate::keyspace::{Entry, Value};
use crate::types::hash::Hash;
use crate::types::list::List;
use crate::types::set::Set;
use crate::types::stream::StreamId;
use crate::types::zset::ZSet;
use bytes::Bytes;

fn s(v: &str) -> Value {
    Value::Str(Bytes::copy_from_slice(v.as_bytes()))
}

pub(super) fn sample_values() -> Vec<(&'static str, Value)> {
    let mut out = vec![
        ("str-small-int", s("12")),
        ("str-big-int", s("12345678901234")),
        ("str-text", s("hello")),
        (
            "str-long",
            Value::Str(Bytes::from("lock-owner:".repeat(40))),
        ),
        ("str-empty", s("")),
    ];
    let mut l = List::new();
    for i in 0..1000 {
        l.push_back(format!("elem-{i}").as_bytes(), -2);
        l.push_back(i.to_string().as_bytes(), -2);
    }
    out.push(("list", Value::List(l)));
    let mut l = List::new();
    l.push_back(b"a", -2);
    out.push(("list-one", Value::List(l)));
    let mut set = Set::new();
    for v in [5i64, -3, 70000, 1 << 40] {
        set.add(v.to_string().as_bytes(), 512);
    }
    out.push(("set-intset", Value::Set(set)));
    let mut set = Set::new();
    for m in ["a", "b", "1", "zz"] {
        set.add(m.as_bytes(), 512);
    }
    out.push(("set-table", Value::Set(set)));
    let mut z = ZSet::new();
    for (i, m) in ["x", "y", "100", "w"].iter().enumerate() {
        z.insert_or_update(m.as_bytes(), i as f64 * 1.5 - 2.0, Default::default());
    }
    z.insert_or_update(b"inf", f64::INFINITY, Default::default());
    z.insert_or_update(b"big", 1e300, Default::default());
    out.push(("zset-listpack", Value::ZSet(z)));
    let mut z = ZSet::new();
    for i in 0..300 {
        z.insert_or_update(
            format!("m{i}").as_bytes(),
            (i % 17) as f64 / 3.0,
            Default::default(),
        );
    }
    out.push(("zset-skiplist", Value::ZSet(z)));
    let mut h = Hash::new();
    h.set(b"uuid:1", b"1");
    h.set(b"f", b"value");
    out.push(("hash-listpack", Value::Hash(h)));
    let mut h = Hash::new();
    for i in 0..600 {
        h.set(format!("field{i}").as_bytes(), i.to_string().as_bytes());
    }
    out.push(("hash-table", Value::Hash(h)));
    out.push(("stream", Value::Stream(sample_stream())));
    out
}

/// A stream over several nodes, with a tombstone, two groups, pending entries and consumers.
fn sample_stream() -> crate::types::stream::Stream {
    use crate::types::stream::{AddId, NodeLimits, Stream, StreamId};
    let mut x = Stream::new();
    for i in 1..=250u64 {
        let v = format!("v{i}");
        let pairs: [&[u8]; 4] = [b"field", v.as_bytes(), b"n", b"42"];
        x.add(
            AddId::Exact(StreamId::new(i, 0)),
            &pairs,
            0,
            NodeLimits::default(),
        )
        .unwrap();
    }
    x.delete(&[StreamId::new(7, 0)]);
    x.create_group(b"g1", StreamId::MIN, -1);
    x.create_group(b"g2", StreamId::new(100, 0), 100);
    x.group_mut(b"g1").unwrap().touch_consumer(b"alice", 5);
    x.read_group(b"g1", b"alice", StreamId::new(0, 1), 5, false, 10, |_| {});
    x.group_mut(b"g1").unwrap().create_consumer(b"bob", 20);
    x
}

/// The elements of a value in a comparable form (and its encoding).
pub(super) fn describe(v: &Value) -> (String, Vec<Vec<u8>>) {
    let e = Entry::new(v.clone());
    let enc = e.encoding().to_string();
    let items = match v {
        Value::Str(b) => vec![b.to_vec()],
        Value::List(l) => l.iter().map(|e| e.to_vec()).collect(),
        Value::Set(set) => {
            let mut m: Vec<Vec<u8>> = set.iter().map(|m| m.to_vec()).collect();
            m.sort();
            m
        }
        Value::ZSet(z) => z
            .iter()
            .flat_map(|(m, sc)| [m.to_vec(), sc.to_bits().to_string().into_bytes()])
            .collect(),
        Value::Hash(h) => {
            let mut m: Vec<Vec<u8>> = h.iter().map(|(f, v)| [f, b"=", v].concat()).collect();
            m.sort();
            m
        }
        Value::Stream(st) => st
            .range(StreamId::MIN, StreamId::MAX, false)
            .flat_map(|e| {
                let mut row = vec![e.id.to_string().into_bytes()];
                for (f, v) in e.fields() {
                    row.push(f.with_bytes(|f| v.with_bytes(|v| [f, b"=", v].concat())));
                }
                row
            })
            .collect(),
    };
    (enc, items)
}

#[test]
fn every_type_and_encoding_round_trips_through_a_payload() {
    for compress in [false, true] {
        for (name, v) in sample_values() {
            let p = payload::dump(&v, compress);
            let back = payload::restore(&p, &Limits::default())
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(describe(&back), describe(&v), "{name}");
            assert_eq!(p[0], object::object_type(&v), "{name}");
        }
    }
}

#[test]
fn a_payload_with_a_flipped_byte_or_a_newer_version_is_refused() {
    let p = payload::dump(&s("value"), true);
    for i in 0..p.len() {
        let mut bad = p.clone();
        bad[i] ^= 0x20;
        assert!(matches!(
            payload::restore(&bad, &Limits::default()),
            Err(payload::RestoreError::Footer)
        ));
    }
    let mut newer = object::serialize(&s("value"), true);
    newer.extend_from_slice(&11u16.to_le_bytes());
    let crc = crc64(0, &newer);
    newer.extend_from_slice(&crc.to_le_bytes());
    assert!(payload::restore(&newer, &Limits::default()).is_err());
}

#[test]
fn truncated_or_garbled_bodies_are_bad_data_never_a_panic() {
    for (name, v) in sample_values() {
        let body = object::serialize(&v, true);
        let step = (body.len() / 200).max(1);
        for cut in (0..body.len()).step_by(step) {
            let mut p = body[..cut].to_vec();
            put_footer(&mut p);
            assert!(
                payload::restore(&p, &Limits::default()).is_err(),
                "{name} at {cut}"
            );
        }
        for i in (1..body.len()).step_by(step) {
            let mut p = body.clone();
            p[i] = p[i].wrapping_add(0x5b);
            put_footer(&mut p);
            // Either refused or some value: never a panic.
            let _ = payload::restore(&p, &Limits::default());
        }
    }
}

fn write_file(entries: &[(usize, &str, Entry)], functions: &[&[u8]], f: &KeyFormat) -> Vec<u8> {
    let mut w = FileWriter::begin(Vec::new(), &Aux::default(), true).expect("vec");
    for code in functions {
        w.function(code, f.compress).expect("vec");
    }
    let mut dbs: Vec<usize> = entries.iter().map(|e| e.0).collect();
    dbs.sort();
    dbs.dedup();
    for db in dbs {
        let mine: Vec<_> = entries.iter().filter(|e| e.0 == db).collect();
        let expires = mine.iter().filter(|e| e.2.expires_at() != 0).count();
        w.select_db(db, mine.len() as u64, expires as u64)
            .expect("vec");
        for (_, k, e) in mine {
            let mut b = Vec::new();
            file::put_key(&mut b, k.as_bytes(), e, f);
            w.write(&b).expect("vec");
        }
    }
    w.finish().expect("vec")
}

/// Keys (db, key, entry) and function libraries found in a file.
type Loaded = (Vec<(usize, Vec<u8>, Entry)>, Vec<Vec<u8>>);

fn load_all(data: &[u8], opts: &LoadOptions) -> Result<Loaded, LoadError> {
    let mut r = Reader::new(data);
    let version = file::read_header(&mut r, false)?;
    let mut keys = Vec::new();
    let mut functions = Vec::new();
    file::load_body(&mut r, version, opts, &mut |ev| {
        match ev {
            Event::Key { db, key, entry } => keys.push((db, key, entry)),
            Event::Function(code) => functions.push(code),
            _ => {}
        }
        Ok(())
    })?;
    Ok((keys, functions))
}

#[test]
fn a_file_round_trips_keys_expiries_databases_and_functions() {
    let now = 1_800_000_000_000;
    let mut entries = Vec::new();
    for (i, (name, v)) in sample_values().into_iter().enumerate() {
        let at = if i % 2 == 0 { now + 1000 * i as i64 } else { 0 };
        entries.push((i % 3, name, Entry::with_expiry(v, at)));
    }
    entries.push((0, "gone", Entry::with_expiry(s("x"), now - 1)));
    let f = KeyFormat {
        compress: true,
        access: AccessSave::None,
        now_ms: now,
    };
    let data = write_file(
        &entries,
        &[b"#!lua name=lib\nredis.register_function('f', function() return 1 end)"],
        &f,
    );
    assert_eq!(&data[..9], b"REDIS0010");
    let opts = LoadOptions {
        now_ms: now,
        ..Default::default()
    };
    let (keys, functions) = load_all(&data, &opts).expect("loads");
    assert_eq!(functions.len(), 1);
    assert_eq!(keys.len(), entries.len() - 1, "the expired key is dropped");
    for (db, k, e) in &keys {
        let (wdb, _, we) = entries
            .iter()
            .find(|(_, n, _)| n.as_bytes() == &k[..])
            .expect("written");
        assert_eq!(db, wdb);
        assert_eq!(e.expires_at(), we.expires_at());
        assert_eq!(describe(&e.value), describe(&we.value));
    }
    // Kept when asked (an AOF base keeps what the log after it expects).
    let keep = LoadOptions {
        drop_expired: false,
        ..opts.clone()
    };
    assert_eq!(
        load_all(&data, &keep).expect("loads").0.len(),
        entries.len()
    );
}

#[test]
fn a_damaged_file_is_refused_and_a_disabled_checksum_is_not_checked() {
    let entries = vec![(0, "k", Entry::new(s("v")))];
    let f = KeyFormat {
        compress: false,
        access: AccessSave::None,
        now_ms: 0,
    };
    let data = write_file(&entries, &[], &f);
    let opts = LoadOptions::default();
    for cut in 0..data.len() {
        assert!(load_all(&data[..cut], &opts).is_err(), "cut at {cut}");
    }
    let mut bad = data.clone();
    let at = bad.len() - 12;
    bad[at] ^= 1; // inside the value "v"
    assert!(matches!(
        load_all(&bad, &opts),
        Err(LoadError::Checksum { .. })
    ));
    let mut zero = data.clone();
    let n = zero.len();
    zero[n - 8..].fill(0);
    zero[at] ^= 1;
    assert!(load_all(&zero, &opts).is_ok());
    let mut wrong = data.clone();
    wrong[..5].copy_from_slice(b"RODIS");
    assert!(matches!(load_all(&wrong, &opts), Err(LoadError::Signature)));
    let mut newer = data.clone();
    newer[5..9].copy_from_slice(b"0011");
    assert!(matches!(
        load_all(&newer, &opts),
        Err(LoadError::Version(11))
    ));
    let few = LoadOptions {
        databases: 0,
        ..opts.clone()
    };
    assert!(matches!(
        load_all(&data, &few),
        Err(LoadError::TooManyDbs { .. })
    ));
}

#[test]
fn idle_times_and_counters_survive_a_file() {
    use crate::keyspace::AccessPolicy;
    let now = 1_800_000_000_000;
    let mut e = Entry::new(s("v"));
    e.set_access(crate::keyspace::access::from_idle(now, 500));
    let lru = KeyFormat {
        compress: false,
        access: AccessSave::Lru,
        now_ms: now,
    };
    let data = write_file(&[(0, "k", e)], &[], &lru);
    let opts = LoadOptions {
        now_ms: now + 10_000,
        ..Default::default()
    };
    let (keys, _) = load_all(&data, &opts).expect("loads");
    assert_eq!(keys[0].2.idle_ms(now + 10_000), 500_000);

    let lfu = AccessPolicy {
        lfu: true,
        ..Default::default()
    };
    let mut e = Entry::new(s("v"));
    e.set_access(crate::keyspace::access::from_freq(now, 42));
    let f = KeyFormat {
        compress: false,
        access: AccessSave::Lfu(lfu),
        now_ms: now,
    };
    let data = write_file(&[(0, "k", e)], &[], &f);
    let opts = LoadOptions {
        now_ms: now,
        policy: lfu,
        ..Default::default()
    };
    let (keys, _) = load_all(&data, &opts).expect("loads");
    assert_eq!(keys[0].2.lfu_freq(now, lfu), 42);
}

/// DUMP payloads of these strings recorded from redis-server 7.0.15 (rdbcompression
/// yes): type 0, then 0xC3, the lengths and liblzf's output.
#[test]
fn compression_matches_redis_byte_for_byte() {
    let cases: &[(Vec<u8>, &str)] = &[
        (
            b"lock-owner-".repeat(30),
            "c316414a0b6c6f636b2d6f776e65722d6ce0ff0ae12b0701722d",
        ),
        (vec![b'a'; 21], "c30615016161e00a00"),
        (
            b"abcabcabcabcabcabcabcabc".to_vec(),
            "c30a180361626361e00a020063",
        ),
        (
            [vec![b'x'; 1000], vec![b'y'; 1000]].concat(),
            "c32047d0017878e0ff00e0ff00e0ff00e0c5000079e0ff00e0ff00e0ff00e0c400017979",
        ),
        (
            b"hello world, ".repeat(7)[..90].to_vec(),
            "c315405a0d68656c6c6f20776f726c642c2068e0410c01642c",
        ),
        (
            b"0123456789".repeat(5),
            "c312320a3031323334353637383930e01c09013839",
        ),
    ];
    for (input, want) in cases {
        let mut v = Vec::new();
        encode::put_raw_string(&mut v, input, true);
        let got: String = v.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(&got, want, "{} bytes", input.len());
    }
}
