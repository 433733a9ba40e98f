//! DEBUG DIGEST and DIGEST-VALUE: Redis's SHA-1 digests of the dataset and of values, computed
//! exactly as debug.c does (order-free XOR for unordered elements, chained for ordered ones),
//! so a digest taken here equals redis-server's for the same data.

use crate::keyspace::{Entry, Keyspace, Value};

/// A 20-byte digest.
pub type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    sha1_smol::Sha1::from(data).digest().bytes()
}

/// Redis's xorDigest: digest ^= SHA1(data), so the order of additions does not matter.
fn xor_digest(digest: &mut Digest, data: &[u8]) {
    for (d, h) in digest.iter_mut().zip(sha1(data)) {
        *d ^= h;
    }
}

/// Redis's mixDigest: digest = SHA1(digest ^ SHA1(data)), so the order matters.
fn mix_digest(digest: &mut Digest, data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1(&digest[..]);
}

/// Redis's object type numbers (OBJ_STRING...), which the digest mixes in.
fn type_code(v: &Value) -> u32 {
    match v {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    }
}

/// Redis's xorObjectDigest: mix `e`'s type and value (and the fact it has a TTL) into
/// `digest`.
pub fn mix_value(digest: &mut Digest, e: &Entry) {
    mix_digest(digest, &type_code(&e.value).to_be_bytes());
    match &e.value {
        Value::Str(s) => mix_digest(digest, s),
        // Ordered: each element chained into the digest.
        Value::List(l) => {
            for e in l.iter() {
                e.with_bytes(|b| mix_digest(digest, b));
            }
        }
        Value::Set(set) => {
            for m in set.iter() {
                xor_digest(digest, &m);
            }
        }
        // Each member with its score as %.17g, in either encoding.
        Value::ZSet(z) => {
            for (m, score) in z.iter() {
                let mut ele = [0u8; 20];
                mix_digest(&mut ele, m);
                mix_digest(&mut ele, crate::num::format_double(score).as_bytes());
                xor_digest(digest, &ele);
            }
        }
        Value::Hash(h) => {
            for (f, v) in h.iter() {
                let mut ele = [0u8; 20];
                mix_digest(&mut ele, f);
                mix_digest(&mut ele, v);
                xor_digest(digest, &ele);
            }
        }
        // Ordered: each entry's `ms.seq`, then its fields and values, chained in.
        Value::Stream(s) => {
            use crate::types::stream::StreamId;
            for entry in s.range(StreamId::MIN, StreamId::MAX, false) {
                mix_digest(
                    digest,
                    format!("{}.{}", entry.id.ms, entry.id.seq).as_bytes(),
                );
                for (f, v) in entry.fields() {
                    f.with_bytes(|b| mix_digest(digest, b));
                    v.with_bytes(|b| mix_digest(digest, b));
                }
            }
        }
    }
    if e.expires_at() != 0 {
        xor_digest(digest, b"!!expire!!");
    }
}

/// DEBUG DIGEST-VALUE's digest of one entry.
pub fn value_digest(e: &Entry) -> Digest {
    let mut d = [0u8; 20];
    mix_value(&mut d, e);
    d
}

/// Redis's computeDatasetDigest: every key of every non-empty database, expired or not
/// (Redis walks its dicts as they are).
pub fn dataset_digest(keyspace: &Keyspace) -> Digest {
    let mut out = [0u8; 20];
    for i in 0..keyspace.databases() {
        let db = keyspace.db(i);
        if db.is_empty() {
            continue;
        }
        mix_digest(&mut out, &(i as u32).to_be_bytes());
        let mut all = db.lock_all();
        for shard in all.shards() {
            for (k, e) in shard.map.iter() {
                let mut d = [0u8; 20];
                mix_digest(&mut d, k);
                mix_value(&mut d, e);
                xor_digest(&mut out, &d);
            }
        }
    }
    out
}

/// A digest as 40 lowercase hex characters.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
