//! Geohashes, distances, searches and their digits against replies recorded from
//! redis-server 7.0.15.

use super::*;
use crate::num::format_human;
use crate::types::zset::{ZSet, ZSetLimits};

fn zset(points: &[(f64, f64, &str)]) -> ZSet {
    let mut z = ZSet::new();
    for &(lon, lat, m) in points {
        z.insert_or_update(
            m.as_bytes(),
            lonlat_to_score(lon, lat) as f64,
            ZSetLimits::default(),
        );
    }
    z
}

fn sicily() -> ZSet {
    zset(&[
        (13.361389, 38.115556, "Palermo"),
        (15.087269, 37.502669, "Catania"),
        (12.758489, 38.788135, "edge1"),
        (17.241510, 38.788135, "edge2"),
    ])
}

fn names(points: &[Point]) -> Vec<String> {
    points
        .iter()
        .map(|p| String::from_utf8(p.member.clone()).unwrap())
        .collect()
}

#[test]
fn geoadd_scores_are_redis_52_bit_geohashes() {
    assert_eq!(lonlat_to_score(13.361389, 38.115556), 3479099956230698);
    assert_eq!(lonlat_to_score(15.087269, 37.502669), 3479447370796909);
    assert_eq!(lonlat_to_score(12.758489, 38.788135), 3479273021651468);
    assert_eq!(lonlat_to_score(17.241510, 38.788135), 3481342659049484);
}

#[test]
fn positions_print_with_redis_digits() {
    let [lon, lat] = score_to_lonlat(3479099956230698.0);
    assert_eq!(format_human(lon), "13.36138933897018433");
    assert_eq!(format_human(lat), "38.11555639549629859");
    let [lon, lat] = score_to_lonlat(3479447370796909.0);
    assert_eq!(format_human(lon), "15.08726745843887329");
    assert_eq!(format_human(lat), "37.50266842333162032");
}

#[test]
fn geohash_strings_use_the_standard_latitude_range() {
    assert_eq!(&geohash_string(3479099956230698.0), b"sqc8b49rny0");
    assert_eq!(&geohash_string(3479447370796909.0), b"sqdtr74hyu0");
}

#[test]
fn distances_print_with_four_decimals() {
    let a = score_to_lonlat(3479099956230698.0);
    let b = score_to_lonlat(3479447370796909.0);
    let d = distance(a[0], a[1], b[0], b[1]);
    assert_eq!(format_distance(d), "166274.1516");
    assert_eq!(format_distance(d / 1609.34), "103.3182");
    assert_eq!(format_distance(0.0), "0.0000");
    assert_eq!(format_distance(0.00004), "0.0000");
    assert_eq!(format_distance(0.0012), "0.0012");
}

#[test]
fn radius_search_finds_members_in_redis_order() {
    let z = sicily();
    let shape = Shape {
        center: [15.0, 37.0],
        extent: Extent::Radius(200.0),
        conversion: 1000.0,
    };
    let mut found = search(&z, &shape, 0);
    let n = found.len();
    sort(&mut found, Sort::Asc, n);
    assert_eq!(names(&found), ["Catania", "Palermo"]);
    assert_eq!(format_distance(found[0].dist / 1000.0), "56.4413");
    assert_eq!(format_distance(found[1].dist / 1000.0), "190.4424");
    assert_eq!(found[0].score as i64, 3479447370796909);
}

#[test]
fn box_search_sorts_descending() {
    let z = sicily();
    let shape = Shape {
        center: [15.0, 37.0],
        extent: Extent::Box {
            width: 400.0,
            height: 400.0,
        },
        conversion: 1000.0,
    };
    let mut found = search(&z, &shape, 0);
    let n = found.len();
    sort(&mut found, Sort::Desc, n);
    assert_eq!(names(&found), ["edge1", "edge2", "Palermo", "Catania"]);
    assert_eq!(format_distance(found[0].dist / 1000.0), "279.7405");
    assert_eq!(format_distance(found[1].dist / 1000.0), "279.7403");
}

/// Sixty members on three positions: COUNT's partial sort leaves ties in the order Redis's
/// pqsort leaves them (GEORADIUS t 1 1 500 km ASC COUNT 7 / DESC COUNT 9).
#[test]
fn count_breaks_distance_ties_as_redis_partial_sort() {
    let pts: Vec<(f64, f64, String)> = (0..60)
        .map(|i| ((i % 3) as f64 + 0.5, (i % 3) as f64 + 0.25, format!("m{i}")))
        .collect();
    let refs: Vec<(f64, f64, &str)> = pts.iter().map(|(a, b, m)| (*a, *b, m.as_str())).collect();
    let z = zset(&refs);
    let shape = Shape {
        center: [1.0, 1.0],
        extent: Extent::Radius(500.0),
        conversion: 1000.0,
    };
    let mut found = search(&z, &shape, 0);
    sort(&mut found, Sort::Asc, 7);
    assert_eq!(
        names(&found[..7]),
        ["m7", "m10", "m13", "m16", "m19", "m22", "m25"]
    );
    let mut found = search(&z, &shape, 0);
    sort(&mut found, Sort::Desc, 9);
    assert_eq!(
        names(&found[..9]),
        ["m11", "m59", "m56", "m53", "m50", "m5", "m47", "m44", "m41"]
    );
}

#[test]
fn any_stops_after_count_found() {
    let z = sicily();
    let shape = Shape {
        center: [15.0, 37.0],
        extent: Extent::Radius(1000.0),
        conversion: 1000.0,
    };
    assert_eq!(search(&z, &shape, 2).len(), 2);
    assert_eq!(search(&z, &shape, 0).len(), 4);
}

#[test]
fn limits_reject_poles_and_accept_the_antimeridian() {
    assert!(valid_lonlat(180.0, 85.05112878));
    assert!(valid_lonlat(-180.0, -85.05112878));
    assert!(!valid_lonlat(180.0001, 0.0));
    assert!(!valid_lonlat(0.0, 85.06));
}

#[test]
fn scores_no_geoadd_wrote_decode_like_c_casts() {
    // A negative score casts to a huge u64 and decodes at the limits, as in redis-server.
    let [lon, lat] = score_to_lonlat(-1.0);
    assert_eq!(
        (format_human(lon), format_human(lat)),
        ("180".into(), "85.0511287799999991".into())
    );
    assert_eq!(score_to_lonlat(0.0), score_to_lonlat(f64::INFINITY));
}

#[test]
fn coordinates_drop_trailing_zeroes_and_negative_zero() {
    assert_eq!(format_human(-0.0), "0");
    assert_eq!(format_human(1.5), "1.5");
    assert_eq!(format_human(2.0), "2");
    assert_eq!(format_human(-0.000000000000000001), "0");
}
