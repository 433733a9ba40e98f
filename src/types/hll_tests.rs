//! The HLL encodings against values recorded from redis-server 7.0.15 (`GET` of the key after
//! the same PFADDs, as hex or as the SHA-1 of the value when it is large).

use super::*;

fn hex(s: &[u8]) -> String {
    s.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha1(s: &[u8]) -> String {
    sha1_smol::Sha1::from(s).digest().to_string()
}

fn elements(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("e{i}").into_bytes()).collect()
}

/// PFADD key ele...: the value and whether any register changed (creation counts).
fn pfadd(s: &mut Vec<u8>, eles: &[Vec<u8>], max_bytes: u64) -> bool {
    let mut changed = false;
    for e in eles {
        changed |= add(s, e, max_bytes).unwrap();
    }
    if changed {
        invalidate(s);
    }
    changed
}

/// PFCOUNT on one key: the cached value or a fresh one, stored.
fn pfcount(s: &mut [u8]) -> u64 {
    if let Some(c) = cached(s) {
        return c;
    }
    let c = count(s).unwrap();
    set_cached(s, c);
    c
}

#[test]
fn three_elements_give_redis_sparse_bytes() {
    let mut s = new_sparse();
    pfadd(&mut s, &[b"a".to_vec(), b"b".to_vec(), b"c".to_vec()], 3000);
    assert_eq!(
        hex(&s),
        "48594c4c01000000000000000000008060f38050b1844bfb80425a"
    );
}

#[test]
fn hundred_elements_give_redis_sparse_bytes_count_and_decode() {
    let mut s = new_sparse();
    pfadd(&mut s, &elements(100), 3000);
    assert_eq!(pfcount(&mut s), 100);
    let want = "48594c4c01000000640000000000000036843c8040a9a40e88409084406c9c048840e28041358840d380411d8840898041168c419080098040e08040948041578440a280408384405d8440e1844199844081803c844047840780404e80408f840984405184268441258440d38042638040a280404b8c406f80420b8c41798041478041638040668440f98c0184218811804182844062803088407984228040de8440d3884045800a88420090118440c184018041138440848c1684228040a88440e180422a84410384168041178441658c414e802680058040598040ec882e88413c880380405b841b803f80409b802184412e88408f90407e80408480415f8033844079844193844058902e80406a840d8039801380409a882880408c";
    assert_eq!(hex(&s), want);
    let d = decode(&s);
    assert!(d.starts_with("z:55 v:2,1 z:61 v:1,1 Z:170 v:10,1 z:15 v:3,1 Z:145"));
    assert!(d.ends_with("v:1,1 Z:155 v:3,1 z:41 v:1,1 Z:141"));
}

#[test]
fn sparse_value_past_max_bytes_is_promoted_to_redis_dense_bytes() {
    let mut s = new_sparse();
    pfadd(&mut s, &elements(2000), 3000);
    assert_eq!(check(&s), Ok(Encoding::Dense));
    assert_eq!(pfcount(&mut s), 2000);
    assert_eq!(sha1(&s), "683f7fda3b42d2dbc42371094fe33dfcca528e46");
}

#[test]
fn higher_sparse_max_bytes_keeps_redis_sparse_bytes() {
    let mut s = new_sparse();
    pfadd(&mut s, &elements(2000), 7000);
    assert_eq!(check(&s), Ok(Encoding::Sparse));
    assert_eq!(s.len(), 3475);
    assert_eq!(pfcount(&mut s), 2000);
    assert_eq!(sha1(&s), "fd0a9d46e89beec224196e94c18db52470e87a9f");
}

#[test]
fn sparse_and_dense_of_the_same_elements_agree() {
    let mut sparse = new_sparse();
    let mut dense = sparse_to_dense(&new_sparse()).unwrap();
    let eles = elements(2000);
    pfadd(&mut sparse, &eles, 1 << 20);
    pfadd(&mut dense, &eles, 1 << 20);
    assert_eq!(check(&sparse), Ok(Encoding::Sparse));
    assert_eq!(sparse_to_dense(&sparse).unwrap(), dense);
    assert_eq!(count(&sparse), count(&dense));
}

#[test]
fn merge_of_sparse_into_dense_destination_matches_redis() {
    // PFMERGE h5 h2 h3 with h2 sparse (100 elements) and h3 dense (2000): the union is h3's
    // registers, dense; after PFCOUNT the bytes are redis-server's.
    let mut h2 = new_sparse();
    pfadd(&mut h2, &elements(100), 3000);
    let mut h3 = new_sparse();
    pfadd(&mut h3, &elements(2000), 3000);
    let mut max = [0u8; REGISTERS];
    merge_into(&mut max, &h2).unwrap();
    merge_into(&mut max, &h3).unwrap();
    assert_eq!(count_raw(&max), 2000);
    let mut dest = sparse_to_dense(&new_sparse()).unwrap();
    store_raw(&mut dest, &max, 3000);
    assert_eq!(pfcount(&mut dest), 2000);
    assert_eq!(sha1(&dest), "683f7fda3b42d2dbc42371094fe33dfcca528e46");
}

#[test]
fn adding_known_elements_again_changes_nothing() {
    let mut s = new_sparse();
    let eles = elements(50);
    assert!(pfadd(&mut s, &eles, 3000));
    pfcount(&mut s);
    assert!(!pfadd(&mut s, &eles, 3000));
    assert_eq!(
        cached(&s),
        Some(50),
        "an unchanged HLL keeps its cached cardinality"
    );
}

#[test]
fn empty_hll_counts_zero_in_both_encodings() {
    assert_eq!(count(&new_sparse()), Ok(0));
    assert_eq!(count(&sparse_to_dense(&new_sparse()).unwrap()), Ok(0));
    assert_eq!(decode(&new_sparse()), "Z:16384");
}

#[test]
fn strings_without_magic_or_with_bad_length_are_not_hlls() {
    assert_eq!(check(b"HYLL"), Err(NotHll));
    let mut s = new_sparse();
    s[0] = b'0';
    assert_eq!(check(&s), Err(NotHll));
    let mut s = new_sparse();
    s[4] = b'x';
    assert_eq!(check(&s), Err(NotHll), "unknown encoding");
    let mut s = new_sparse();
    s[4] = 0;
    assert_eq!(
        check(&s),
        Err(NotHll),
        "dense encoding with a sparse length"
    );
}

#[test]
fn sparse_opcodes_not_covering_every_register_are_corrupt() {
    let mut s = new_sparse();
    pfadd(&mut s, &[b"a".to_vec()], 3000);
    s.extend_from_slice(b"hello");
    assert_eq!(count(&s), Err(Corrupt));
    assert_eq!(sparse_to_dense(&s), Err(Corrupt));
    assert_eq!(merge_into(&mut [0; REGISTERS], &s), Err(Corrupt));
    let mut short = new_sparse();
    short.truncate(HDR_SIZE);
    assert_eq!(add(&mut short, b"x", 3000), Err(Corrupt));
}

#[test]
fn truncated_xzero_at_the_end_is_read_with_a_zero_byte() {
    // A lone XZERO byte reads the string's terminator as its second byte: 0x7f then 0 covers
    // (0x3f << 8) + 1 = 16129 registers, not all of them.
    let mut s = new_sparse();
    s.truncate(HDR_SIZE);
    s.push(0x7f);
    assert_eq!(count(&s), Err(Corrupt));
    assert_eq!(decode(&s), "Z:16129");
}

#[test]
fn dense_registers_keep_their_neighbours() {
    let mut regs = vec![0u8; DENSE_SIZE - HDR_SIZE];
    for i in 0..REGISTERS {
        dense_put(&mut regs, i, (i % 64) as u8);
    }
    for i in 0..REGISTERS {
        assert_eq!(dense_get(&regs, i), (i % 64) as u8);
    }
}

#[test]
fn selftest_passes() {
    let mut rng = fastrand::Rng::with_seed(7);
    assert_eq!(
        selftest_upto(3000, || rng.u32(..) & 0x7fff_ffff, 10, 100_000),
        Ok(())
    );
}
