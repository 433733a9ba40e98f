//! The search half of geo.c: the nine geohash boxes that cover a radius or a box
//! (geohashCalculateAreasByShapeWGS84), the members of the sorted set inside them, and their
//! order (glibc's stable qsort, or Redis's partial quicksort for COUNT).

use super::{
    align52, decode, deg_rad, distance, encode, lat_distance, rad_deg, score_to_lonlat, HashBits,
    EARTH_RADIUS_IN_METERS, LAT_RANGE, LONG_RANGE,
};
use crate::types::zset::{ScoreBound, ZSet};

const MERCATOR_MAX: f64 = 20_037_726.37;
fn move_x(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = hash.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64 >> (64 - hash.step as u32 * 2);
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - hash.step as u32 * 2);
    hash.bits = x | y;
}

fn move_y(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = hash.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - hash.step as u32 * 2);
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555_5555_5555_5555u64 >> (64 - hash.step as u32 * 2);
    hash.bits = x | y;
}

fn moved(hash: HashBits, dx: i8, dy: i8) -> HashBits {
    let mut h = hash;
    move_x(&mut h, dx);
    move_y(&mut h, dy);
    h
}

/// The eight boxes around a geohash.
#[derive(Debug, Clone, Copy, Default)]
struct Neighbors {
    north: HashBits,
    east: HashBits,
    west: HashBits,
    south: HashBits,
    north_east: HashBits,
    south_east: HashBits,
    north_west: HashBits,
    south_west: HashBits,
}

fn neighbors(hash: HashBits) -> Neighbors {
    Neighbors {
        east: moved(hash, 1, 0),
        west: moved(hash, -1, 0),
        south: moved(hash, 0, -1),
        north: moved(hash, 0, 1),
        north_west: moved(hash, -1, 1),
        north_east: moved(hash, 1, 1),
        south_east: moved(hash, 1, -1),
        south_west: moved(hash, -1, -1),
    }
}

/// geohashEstimateStepsByRadius: the precision whose boxes cover a radius.
fn estimate_steps(mut range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// What a search covers: a circle (BYRADIUS, GEORADIUS) or an axis-aligned box (BYBOX),
/// in the request's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Extent {
    /// Radius.
    Radius(f64),
    /// Width and height.
    Box {
        /// East-west size.
        width: f64,
        /// North-south size.
        height: f64,
    },
}

/// A search: the centre `[longitude, latitude]`, what it covers, and the unit's size in
/// meters (1, 1000, 0.3048 or 1609.34).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Centre `[longitude, latitude]`.
    pub center: [f64; 2],
    /// The area around it.
    pub extent: Extent,
    /// Meters per unit.
    pub conversion: f64,
}

/// The centre box and its neighbours a search visits, unused ones zeroed.
#[derive(Debug, Clone, Copy)]
struct Areas {
    hash: HashBits,
    neighbors: Neighbors,
}

/// geohashBoundingBox: `[min_lon, min_lat, max_lon, max_lat]`.
fn bounding_box(shape: &Shape) -> [f64; 4] {
    let [longitude, latitude] = shape.center;
    let (height, width) = match shape.extent {
        Extent::Radius(r) => (shape.conversion * r, shape.conversion * r),
        Extent::Box { width, height } => (
            shape.conversion * (height / 2.0),
            shape.conversion * (width / 2.0),
        ),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    let long_delta_top =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
    let long_delta_bottom =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
    let southern = latitude < 0.0;
    let long_delta = if southern {
        long_delta_bottom
    } else {
        long_delta_top
    };
    [
        longitude - long_delta,
        latitude - lat_delta,
        longitude + long_delta,
        latitude + lat_delta,
    ]
}

/// geohashCalculateAreasByShapeWGS84: the step, the centre box and which neighbours matter.
fn areas_by_shape(shape: &Shape) -> Areas {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(shape);
    let [longitude, latitude] = shape.center;
    let radius_meters = match shape.extent {
        Extent::Radius(r) => r,
        Extent::Box { width, height } => {
            ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
        }
    } * shape.conversion;
    let mut steps = estimate_steps(radius_meters, latitude);
    let zero = HashBits::default();
    let mut hash = encode(LONG_RANGE, LAT_RANGE, longitude, latitude, steps).unwrap_or(HashBits {
        bits: 0,
        step: steps,
    });
    let mut nb = neighbors(hash);
    let mut area = decode(LONG_RANGE, LAT_RANGE, hash);

    let north = decode(LONG_RANGE, LAT_RANGE, nb.north);
    let south = decode(LONG_RANGE, LAT_RANGE, nb.south);
    let east = decode(LONG_RANGE, LAT_RANGE, nb.east);
    let west = decode(LONG_RANGE, LAT_RANGE, nb.west);
    let decrease_step = north.latitude.max < max_lat
        || south.latitude.min > min_lat
        || east.longitude.max < max_lon
        || west.longitude.min > min_lon;
    if steps > 1 && decrease_step {
        steps -= 1;
        hash = encode(LONG_RANGE, LAT_RANGE, longitude, latitude, steps).unwrap_or(HashBits {
            bits: 0,
            step: steps,
        });
        nb = neighbors(hash);
        area = decode(LONG_RANGE, LAT_RANGE, hash);
    }
    if steps >= 2 {
        if area.latitude.min < min_lat {
            nb.south = zero;
            nb.south_west = zero;
            nb.south_east = zero;
        }
        if area.latitude.max > max_lat {
            nb.north = zero;
            nb.north_east = zero;
            nb.north_west = zero;
        }
        if area.longitude.min < min_lon {
            nb.west = zero;
            nb.south_west = zero;
            nb.north_west = zero;
        }
        if area.longitude.max > max_lon {
            nb.east = zero;
            nb.south_east = zero;
            nb.north_east = zero;
        }
    }
    Areas {
        hash,
        neighbors: nb,
    }
}

/// A member found by a search: its position, its distance from the centre in meters, its
/// score (the geohash) and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Decoded longitude.
    pub longitude: f64,
    /// Decoded latitude.
    pub latitude: f64,
    /// Meters from the centre.
    pub dist: f64,
    /// The member's score.
    pub score: f64,
    /// The member.
    pub member: Vec<u8>,
}

/// geoWithinShape: the decoded position and distance when a score lies in the search area.
fn within(shape: &Shape, score: f64) -> Option<([f64; 2], f64)> {
    let xy = score_to_lonlat(score);
    let [cx, cy] = shape.center;
    match shape.extent {
        Extent::Radius(r) => {
            let d = distance(cx, cy, xy[0], xy[1]);
            (d <= r * shape.conversion).then_some((xy, d))
        }
        Extent::Box { width, height } => {
            let (width_m, height_m) = (width * shape.conversion, height * shape.conversion);
            if lat_distance(xy[1], cy) > height_m / 2.0 {
                return None;
            }
            if distance(xy[0], xy[1], cx, xy[1]) > width_m / 2.0 {
                return None;
            }
            Some((xy, distance(cx, cy, xy[0], xy[1])))
        }
    }
}

/// Appends the members of one geohash box that lie in the area (geoGetPointsInRange over
/// scores `[min, max)`), stopping once `limit` points were found (0: no limit).
fn points_in_box(zset: &ZSet, hash: HashBits, shape: &Shape, out: &mut Vec<Point>, limit: usize) {
    let min = align52(hash) as f64;
    let max = align52(HashBits {
        bits: hash.bits.wrapping_add(1),
        step: hash.step,
    }) as f64;
    let lo = ScoreBound::inclusive(min);
    let hi = ScoreBound::exclusive(max);
    for (member, score) in zset.range_by_score(&lo, &hi, false) {
        if let Some((xy, dist)) = within(shape, score) {
            out.push(Point {
                longitude: xy[0],
                latitude: xy[1],
                dist,
                score,
                member: member.to_vec(),
            });
        }
        if !out.is_empty() && limit != 0 && out.len() >= limit {
            break;
        }
    }
}

/// Every member of `zset` inside the search area, in the order Redis finds them (the centre
/// box, then N, S, E, W, NE, NW, SE, SW, skipping a box equal to the one before); with
/// `limit` (COUNT ... ANY) it stops once that many were found.
pub fn search(zset: &ZSet, shape: &Shape, limit: usize) -> Vec<Point> {
    let a = areas_by_shape(shape);
    let n = &a.neighbors;
    let boxes = [
        a.hash,
        n.north,
        n.south,
        n.east,
        n.west,
        n.north_east,
        n.north_west,
        n.south_east,
        n.south_west,
    ];
    let mut out = Vec::new();
    let mut last_processed = 0usize;
    for (i, b) in boxes.iter().enumerate() {
        if b.is_zero() {
            continue;
        }
        if last_processed != 0 && *b == boxes[last_processed] {
            continue;
        }
        if !out.is_empty() && limit != 0 && out.len() >= limit {
            break;
        }
        points_in_box(zset, *b, shape, &mut out, limit);
        last_processed = i;
    }
    out
}

/// The order a search's results are given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    /// As found.
    None,
    /// Nearest first.
    Asc,
    /// Farthest first.
    Desc,
}

/// Sorts found points as Redis does: all of them with the C library's qsort (a stable merge
/// sort in glibc) when all are returned, else only enough for the first `returned` with
/// Redis's partial quicksort, whose order among equal distances this reproduces.
pub fn sort(points: &mut [Point], order: Sort, returned: usize) {
    let cmp = |a: &Point, b: &Point| -> std::cmp::Ordering {
        let o = if a.dist > b.dist {
            std::cmp::Ordering::Greater
        } else if a.dist == b.dist {
            std::cmp::Ordering::Equal
        } else {
            std::cmp::Ordering::Less
        };
        if order == Sort::Desc {
            o.reverse()
        } else {
            o
        }
    };
    match order {
        Sort::None => {}
        _ if returned >= points.len() => points.sort_by(cmp),
        _ if returned == 0 => {}
        _ => pqsort(points, &cmp, 0, returned - 1),
    }
}

/// Redis's pqsort.c (Bentley and McIlroy's quicksort that only recurses into partitions
/// overlapping ranks `lrange..=rrange`), over a slice.
fn pqsort<T>(
    a: &mut [T],
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
    lrange: usize,
    rrange: usize,
) {
    pqsort_at(a, 0, a.len(), cmp, lrange, rrange);
}

fn med3<T>(
    a: &[T],
    i: usize,
    j: usize,
    k: usize,
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
) -> usize {
    use std::cmp::Ordering::{Greater, Less};
    if cmp(&a[i], &a[j]) == Less {
        if cmp(&a[j], &a[k]) == Less {
            j
        } else if cmp(&a[i], &a[k]) == Less {
            k
        } else {
            i
        }
    } else if cmp(&a[j], &a[k]) == Greater {
        j
    } else if cmp(&a[i], &a[k]) == Less {
        i
    } else {
        k
    }
}

fn vecswap<T>(a: &mut [T], i: usize, j: usize, n: usize) {
    for k in 0..n {
        a.swap(i + k, j + k);
    }
}

/// One call of `_pqsort` on `a[base..base + n]` (elements, not bytes).
fn pqsort_at<T>(
    a: &mut [T],
    mut base: usize,
    mut n: usize,
    cmp: &impl Fn(&T, &T) -> std::cmp::Ordering,
    lrange: usize,
    rrange: usize,
) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    loop {
        if n < 7 {
            for pm in base + 1..base + n {
                let mut pl = pm;
                while pl > base && cmp(&a[pl - 1], &a[pl]) == Greater {
                    a.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = base + n / 2;
        if n > 7 {
            let mut pl = base;
            let mut pn = base + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(a, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(a, pm - d, pm, pm + d, cmp);
                pn = med3(a, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(a, pl, pm, pn, cmp);
        }
        a.swap(base, pm);
        let mut pa = base + 1;
        let mut pb = pa;
        let mut pc = base + n - 1;
        let mut pd = pc;
        loop {
            while pb <= pc {
                let r = cmp(&a[pb], &a[base]);
                if r == Greater {
                    break;
                }
                if r == Equal {
                    a.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let r = cmp(&a[pc], &a[base]);
                if r == Less {
                    break;
                }
                if r == Equal {
                    a.swap(pc, pd);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            a.swap(pb, pc);
            pb += 1;
            pc -= 1;
        }
        let pn = base + n;
        let r = (pa - base).min(pb - pa);
        vecswap(a, base, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(a, pb, pn - r, r);
        // Partitions of equal-to-pivot elements are done; recurse only into the ranks asked.
        let outside = |lo: usize, len: usize| {
            (lrange < lo && rrange < lo) || (lrange >= lo + len && rrange >= lo + len)
        };
        let r = pb - pa;
        if r > 1 && !outside(base, r) {
            pqsort_at(a, base, r, cmp, lrange, rrange);
        }
        let r = pd - pc;
        if r > 1 {
            base = pn - r;
            n = r;
            if !outside(base, n) {
                continue;
            }
        }
        return;
    }
}
