//! RDB files and DUMP payloads exchanged with redis-server 7.0.15, in both directions.
//!
//! The same dataset (every type in each of its encodings, TTLs, three databases) is built in
//! an in-process resplock with [`DATASET`]'s commands. Then:
//!
//! - `cargo test --test rdb_redis`: the DUMP payloads and the RDB file recorded from
//!   redis-server for that dataset (`tests/rdb/`) load here into values equal to resplock's.
//! - `RDB_REDIS=127.0.0.1:PORT cargo test --test rdb_redis`: live, against a redis-server
//!   started with `--enable-debug-command yes`: the dataset is built there too; every DUMP
//!   of it loads here, and every payload written here RESTOREs there with an equal value
//!   (DEBUG DIGEST-VALUE); an RDB file redis-server SAVEs loads here, and a file written
//!   here loads there (DEBUG RELOAD NOSAVE) with an equal DEBUG DIGEST, TTLs included.
//! - `RDB_RECORD=127.0.0.1:PORT cargo test --test rdb_redis -- --nocapture`: re-record the
//!   files in `tests/rdb/` from that redis-server.

use resplock::keyspace::{Entry, Value};
use resplock::rdb::file::{self, AccessSave, Aux, Event, FileWriter, KeyFormat, LoadOptions};
use resplock::rdb::{object::Limits, payload, Reader};
use resplock::{BlockingServer, Config, Reply};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// 2100-01-01: a fixed expiry, so recorded files keep their TTL keys.
const FAR: &str = "4102444800000";

/// Per (database, key), its entry.
type Dataset = BTreeMap<(usize, Vec<u8>), Entry>;

/// (database, command) pairs that build the dataset.
fn dataset() -> Vec<(usize, Vec<String>)> {
    let mut out: Vec<(usize, Vec<String>)> = Vec::new();
    let mut c =
        |db: usize, args: &[&str]| out.push((db, args.iter().map(|s| s.to_string()).collect()));
    c(0, &["SET", "str:int", "12"]);
    c(0, &["SET", "str:neg", "-40000"]);
    c(0, &["SET", "str:i64", "1234567890123"]);
    c(0, &["SET", "str:text", "hello world"]);
    c(0, &["SET", "str:empty", ""]);
    let long = "lock-owner-".repeat(30);
    c(0, &["SET", "str:long", &long]);
    c(
        0,
        &[
            "SET",
            "lock:1",
            "550e8400-e29b-41d4-a716-446655440000",
            "PXAT",
            FAR,
        ],
    );
    c(
        0,
        &[
            "HSET",
            "redisson:1",
            "6f0e2c1a-3b7d-4c1e-9b2a-1d2c3e4f5a6b:1",
            "1",
        ],
    );
    c(0, &["PEXPIREAT", "redisson:1", FAR]);
    c(
        0,
        &[
            "RPUSH",
            "list:small",
            "a",
            "1",
            "-7",
            "bb",
            "100000",
            "9223372036854775807",
        ],
    );
    let many: Vec<String> = (0..2000)
        .map(|i| {
            if i % 3 == 0 {
                i.to_string()
            } else {
                format!("element-{i}")
            }
        })
        .collect();
    let mut args = vec!["RPUSH".to_string(), "list:big".into()];
    args.extend(many.iter().cloned());
    out.push((0, args));
    let mut c =
        |db: usize, args: &[&str]| out.push((db, args.iter().map(|s| s.to_string()).collect()));
    c(0, &["SADD", "set:int", "3", "-1", "70000", "1099511627776"]);
    c(0, &["SADD", "set:str", "a", "b", "c", "12"]);
    c(
        0,
        &[
            "ZADD",
            "zset:small",
            "1",
            "a",
            "2.5",
            "b",
            "-inf",
            "c",
            "inf",
            "d",
            "1e300",
            "e",
            "0.1",
            "f",
        ],
    );
    c(
        0,
        &["HSET", "hash:small", "f1", "v1", "n", "5", "neg", "-3"],
    );
    let long_value = "v".repeat(100);
    c(0, &["HSET", "hash:longvalue", "f", &long_value]);
    c(1, &["SET", "db1:key", "one"]);
    c(1, &["PEXPIREAT", "db1:key", FAR]);
    out.extend((0..200).map(|i| {
        (
            1,
            vec![
                "ZADD".into(),
                "zset:big".into(),
                format!("{}", i as f64 / 7.0),
                format!("m{i}"),
            ],
        )
    }));
    out.extend((0..600).map(|i| {
        (
            2,
            vec![
                "HSET".into(),
                "hash:big".into(),
                format!("field{i}"),
                format!("{i}"),
            ],
        )
    }));
    out.extend((0..600).map(|i| {
        (
            2,
            vec!["SADD".into(), "set:bigint".into(), format!("{}", i * 3)],
        )
    }));
    out
}

/// A value's encoding and its contents in a comparable form.
fn describe(v: &Value) -> (String, Vec<Vec<u8>>) {
    let enc = Entry::new(v.clone()).encoding().to_string();
    let items = match v {
        Value::Str(b) => vec![b.to_vec()],
        Value::List(l) => l.iter().map(|e| e.to_vec()).collect(),
        Value::Set(s) => {
            let mut m: Vec<Vec<u8>> = s.iter().map(|m| m.to_vec()).collect();
            m.sort();
            m
        }
        Value::ZSet(z) => z
            .iter()
            .flat_map(|(m, sc)| [m.to_vec(), format!("{sc:e}").into_bytes()])
            .collect(),
        Value::Hash(h) => {
            let mut m: Vec<Vec<u8>> = h.iter().map(|(f, v)| [f, b"=", v].concat()).collect();
            m.sort();
            m
        }
        #[allow(unreachable_patterns)]
        _ => vec![b"(other type)".to_vec()],
    };
    (enc, items)
}

/// The dataset built in an in-process resplock: per (db, key), its entry.
fn resplock_dataset() -> Dataset {
    let server = BlockingServer::start(Config::ephemeral()).expect("starts");
    for (db, args) in dataset() {
        let r = server.db(db).command(&args);
        assert!(!matches!(r, Reply::Error(_)), "{args:?}: {r:?}");
    }
    let snap = server.snapshot();
    let mut out = BTreeMap::new();
    for db in 0..3 {
        for (k, e) in snap.db(db) {
            out.insert((db, k.to_vec()), e.clone());
        }
    }
    out
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/rdb")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Load a whole file: per (db, key), its entry; and the function libraries' code.
fn load_file(data: &[u8]) -> (Dataset, Vec<Vec<u8>>) {
    let mut r = Reader::new(data);
    let version = file::read_header(&mut r, false).expect("header");
    let mut keys = BTreeMap::new();
    let mut functions = Vec::new();
    let opts = LoadOptions {
        now_ms: 1_700_000_000_000,
        ..Default::default()
    };
    file::load_body(&mut r, version, &opts, &mut |ev| {
        match ev {
            Event::Key { db, key, entry } => {
                assert!(keys.insert((db, key), entry).is_none(), "duplicate");
            }
            Event::Function(code) => functions.push(code),
            _ => {}
        }
        Ok(())
    })
    .expect("loads");
    (keys, functions)
}

/// Write a whole file of `data` as resplock would save it.
fn write_file(data: &Dataset) -> Vec<u8> {
    let aux = Aux {
        ctime: 1_700_000_000,
        ..Default::default()
    };
    let mut w = FileWriter::begin(Vec::new(), &aux, true).expect("vec");
    let f = KeyFormat {
        compress: true,
        access: AccessSave::None,
        now_ms: 1_700_000_000_000,
    };
    for db in 0..3 {
        let keys: Vec<_> = data.iter().filter(|((d, _), _)| *d == db).collect();
        let expires = keys.iter().filter(|(_, e)| e.expires_at() != 0).count();
        w.select_db(db, keys.len() as u64, expires as u64)
            .expect("vec");
        for ((_, k), e) in keys {
            let mut b = Vec::new();
            file::put_key(&mut b, k, e, &f);
            w.write(&b).expect("vec");
        }
    }
    w.finish().expect("vec")
}

fn assert_same(what: &str, got: &Dataset, want: &Dataset) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: keys"
    );
    for (k, e) in want {
        let g = &got[k];
        assert_eq!(describe(&g.value), describe(&e.value), "{what}: {k:?}");
        assert_eq!(g.expires_at(), e.expires_at(), "{what}: TTL of {k:?}");
    }
}

#[test]
fn redis_payloads_and_files_load_into_values_equal_to_resplocks() {
    let mine = resplock_dataset();
    let dumps = std::fs::read_to_string(fixtures().join("dumps.txt")).expect("recorded dumps");
    let mut seen = 0;
    for line in dumps
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let mut parts = line.split(' ');
        let db: usize = parts.next().expect("db").parse().expect("db");
        let key = parts.next().expect("key").as_bytes().to_vec();
        let p = unhex(parts.next().expect("payload"));
        let v = payload::restore(&p, &Limits::default()).expect("restores");
        let want = &mine[&(db, key.clone())];
        assert_eq!(
            describe(&v),
            describe(&want.value),
            "{}",
            String::from_utf8_lossy(&key)
        );
        seen += 1;
    }
    assert_eq!(seen, mine.len());
    let file = unhex(
        &std::fs::read_to_string(fixtures().join("redis-7.0.15.rdb.hex")).expect("recorded file"),
    );
    let (keys, functions) = load_file(&file);
    assert_same("redis-server's file", &keys, &mine);
    assert!(functions.is_empty());
    // And resplock's own file of the same data reads back equal.
    let (again, _) = load_file(&write_file(&mine));
    assert_same("resplock's file", &again, &mine);
}

/// A minimal synchronous RESP client for the live checks.
struct Redis(redis::Connection);

impl Redis {
    fn open(addr: &str) -> Self {
        let c = redis::Client::open(format!("redis://{addr}")).expect("url");
        Redis(c.get_connection().expect("redis-server reachable"))
    }
    fn val(&mut self, args: &[&[u8]]) -> redis::Value {
        let mut cmd = redis::cmd(std::str::from_utf8(args[0]).expect("name"));
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<redis::Value>(&mut self.0)
            .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(args[0])))
    }
    fn bytes(&mut self, args: &[&[u8]]) -> Vec<u8> {
        match self.val(args) {
            redis::Value::BulkString(b) => b,
            redis::Value::SimpleString(s) => s.into_bytes(),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(args[0])),
        }
    }
    fn str(&mut self, args: &[&str]) -> String {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        String::from_utf8(self.bytes(&a)).expect("utf8")
    }
    fn ok(&mut self, args: &[&str]) {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<redis::Value>(&mut self.0)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    }
    fn build(&mut self) {
        for db in 0..3 {
            self.ok(&["SELECT", &db.to_string()]);
            self.ok(&["FLUSHDB"]);
        }
        for (db, args) in dataset() {
            self.ok(&["SELECT", &db.to_string()]);
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            self.ok(&a);
        }
    }
}

fn live_addr(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|s| !s.is_empty())
}

#[test]
fn live_payloads_and_files_cross_with_redis_server() {
    let Some(addr) = live_addr("RDB_REDIS").or_else(|| live_addr("RDB_RECORD")) else {
        return;
    };
    let record = live_addr("RDB_RECORD").is_some();
    let mine = resplock_dataset();
    let mut r = Redis::open(&addr);
    r.build();

    // redis-server's DUMP -> resplock, and resplock's payload -> redis-server's RESTORE.
    let mut dumps = String::from(
        "# db key DUMP-payload, recorded from redis-server 7.0.15 by tests/rdb_redis.rs\n",
    );
    for ((db, key), e) in &mine {
        r.ok(&["SELECT", &db.to_string()]);
        let p = r.bytes(&[b"DUMP", key]);
        dumps.push_str(&format!(
            "{db} {} {}\n",
            String::from_utf8_lossy(key),
            hex(&p)
        ));
        let v = payload::restore(&p, &Limits::default()).expect("redis payload restores here");
        assert_eq!(describe(&v), describe(&e.value), "{key:?}");
        let copy = [b"copy:".as_slice(), key].concat();
        let ours = payload::dump(&e.value, true);
        // Byte for byte, except where Redis writes a hash table in its dict's order.
        if describe(&e.value).0 != "hashtable" {
            assert_eq!(
                hex(&ours),
                hex(&p),
                "DUMP of {:?}",
                String::from_utf8_lossy(key)
            );
        }
        let ttl = e.expires_at().to_string();
        r.val(&[
            b"RESTORE",
            &copy,
            ttl.as_bytes(),
            &ours,
            b"REPLACE",
            b"ABSTTL",
        ]);
        let digests = r.val(&[b"DEBUG", b"DIGEST-VALUE", key, &copy]);
        r.val(&[b"DEL", &copy]);
        match digests {
            redis::Value::Array(d) if d.len() == 2 => assert_eq!(d[0], d[1], "{key:?}"),
            other => panic!("DIGEST-VALUE: {other:?}"),
        }
    }

    // redis-server's file -> resplock.
    r.ok(&["SELECT", "0"]);
    r.ok(&["SAVE"]);
    let dir = redis::cmd("CONFIG")
        .arg("GET")
        .arg("dir")
        .query::<Vec<String>>(&mut r.0)
        .expect("dir")[1]
        .clone();
    let name = redis::cmd("CONFIG")
        .arg("GET")
        .arg("dbfilename")
        .query::<Vec<String>>(&mut r.0)
        .expect("dbfilename")[1]
        .clone();
    let path = PathBuf::from(dir).join(name);
    let theirs = std::fs::read(&path).expect("redis-server's file");
    let (keys, _) = load_file(&theirs);
    assert_same("redis-server's file", &keys, &mine);

    // resplock's file -> redis-server, which then holds the same dataset (DEBUG DIGEST
    // covers every key, value and expiry).
    let before = r.str(&["DEBUG", "DIGEST"]);
    std::fs::write(&path, write_file(&mine)).expect("write into redis-server's dir");
    r.ok(&["DEBUG", "RELOAD", "NOSAVE"]);
    assert_eq!(
        r.str(&["DEBUG", "DIGEST"]),
        before,
        "redis-server loaded resplock's file"
    );

    if record {
        std::fs::create_dir_all(fixtures()).expect("dir");
        std::fs::write(fixtures().join("dumps.txt"), dumps).expect("write");
        r.ok(&["SAVE"]);
        let file = std::fs::read(&path).expect("file");
        std::fs::write(fixtures().join("redis-7.0.15.rdb.hex"), hex(&file) + "\n").expect("write");
        println!(
            "recorded {} payloads and a {}-byte file",
            mine.len(),
            file.len()
        );
    }
}
