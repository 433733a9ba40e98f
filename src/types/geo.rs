//! Geo indexes as Redis 7.0 keeps them in a sorted set: each member's score is the 52-bit
//! interleaved geohash of its longitude and latitude, and a search walks the sorted set over
//! the nine geohash boxes around the centre (Redis's geohash.c, geohash_helper.c and the
//! search half of geo.c), so results, their order and every printed digit match
//! redis-server's.

use super::zset::{ScoreBound, ZSet};

/// Bits of precision per coordinate (26 * 2 = 52 bits, what a double holds exactly).
pub const STEP_MAX: u8 = 26;
/// The latitude limits (EPSG:900913): no poles.
pub const LAT_MIN: f64 = -85.051_128_78;
/// See [`LAT_MIN`].
pub const LAT_MAX: f64 = 85.051_128_78;
/// The longitude limits.
pub const LONG_MIN: f64 = -180.0;
/// See [`LONG_MIN`].
pub const LONG_MAX: f64 = 180.0;

/// Earth's quadratic mean radius for WGS-84, the one Redis measures with.
const EARTH_RADIUS_IN_METERS: f64 = 6_372_797.560_856;
const MERCATOR_MAX: f64 = 20_037_726.37;
/// M_PI / 180.0, as geohash_helper.c's `D_R`.
const D_R: f64 = std::f64::consts::PI / 180.0;

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}
fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// A geohash: `step` bits of each coordinate, interleaved (latitude in the even bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashBits {
    /// The interleaved bits.
    pub bits: u64,
    /// Bits per coordinate; 0 with zero bits marks an unused box.
    pub step: u8,
}

impl HashBits {
    fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

/// A coordinate interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Range {
    /// Lower end.
    pub min: f64,
    /// Upper end.
    pub max: f64,
}

/// The box a geohash stands for.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Area {
    /// The geohash.
    pub hash: HashBits,
    /// Its longitudes.
    pub longitude: Range,
    /// Its latitudes.
    pub latitude: Range,
}

const LONG_RANGE: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

fn interleave64(xlo: u32, ylo: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0F0F_0F0F_0F0F_0F0F,
        0x00FF_00FF_00FF_00FF,
        0x0000_FFFF_0000_FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let mut x = xlo as u64;
    let mut y = ylo as u64;
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555_5555_5555_5555,
        0x3333_3333_3333_3333,
        0x0F0F_0F0F_0F0F_0F0F,
        0x00FF_00FF_00FF_00FF,
        0x0000_FFFF_0000_FFFF,
        0x0000_0000_FFFF_FFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let mut x = interleaved;
    let mut y = interleaved >> 1;
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// geohashEncode: `None` outside the supported coordinates or the given ranges.
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<HashBits> {
    if step > 32 || step == 0 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    let scale = (1u64 << step) as f64;
    lat_offset *= scale;
    long_offset *= scale;
    Some(HashBits {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// geohashEncodeWGS84 with Redis's limits.
pub fn encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<HashBits> {
    encode(LONG_RANGE, LAT_RANGE, longitude, latitude, step)
}

/// geohashDecode: the box of a hash (any bits are accepted, as Redis accepts any score).
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Area {
    let sep = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = sep as u32;
    let ilono = (sep >> 32) as u32;
    let div = (1u64 << hash.step) as f64;
    Area {
        hash,
        latitude: Range {
            min: lat_range.min + (ilato as f64 / div) * lat_scale,
            // `ilato + 1` is 32-bit arithmetic in C: it wraps for a score with high bits.
            max: lat_range.min + (ilato.wrapping_add(1) as f64 / div) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (ilono as f64 / div) * long_scale,
            max: long_range.min + (ilono.wrapping_add(1) as f64 / div) * long_scale,
        },
    }
}

/// The centre of a box, clamped to the supported coordinates: `[longitude, latitude]`.
fn area_center(area: &Area) -> [f64; 2] {
    let lon = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [lon, lat]
}

/// C's `(uint64_t)` of a double as x86-64 compilers emit it (values from 2^63 up go through
/// a subtraction), so scores no GEOADD wrote decode as in Redis.
fn c_double_to_u64(x: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    // cvttsd2si: the "integer indefinite" value for NaN and out-of-range inputs.
    let cvt = |v: f64| -> u64 {
        if v.is_nan() || !(-TWO63..TWO63).contains(&v) {
            1u64 << 63
        } else {
            v as i64 as u64
        }
    };
    if x >= TWO63 {
        cvt(x - TWO63) ^ (1u64 << 63)
    } else {
        cvt(x)
    }
}

/// The position a sorted-set score stands for (decodeGeohash): `[longitude, latitude]`.
pub fn score_to_lonlat(score: f64) -> [f64; 2] {
    let hash = HashBits {
        bits: c_double_to_u64(score),
        step: STEP_MAX,
    };
    area_center(&decode(LONG_RANGE, LAT_RANGE, hash))
}

/// The score GEOADD stores for a position already checked against the limits.
pub fn lonlat_to_score(longitude: f64, latitude: f64) -> u64 {
    let hash = encode_wgs84(longitude, latitude, STEP_MAX).unwrap_or(HashBits {
        bits: 0,
        step: STEP_MAX,
    });
    align52(hash)
}

/// Whether a position is inside the limits GEOADD and the searches accept.
pub fn valid_lonlat(longitude: f64, latitude: f64) -> bool {
    (LONG_MIN..=LONG_MAX).contains(&longitude) && (LAT_MIN..=LAT_MAX).contains(&latitude)
}

fn align52(hash: HashBits) -> u64 {
    hash.bits << (52 - hash.step as u32 * 2)
}

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

/// Distance on the sphere between two latitudes on one meridian.
pub fn lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2d) - deg_rad(lat1d)).abs()
}

/// geohashGetDistance: the haversine distance in meters.
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lon1r = deg_rad(lon1d);
    let lon2r = deg_rad(lon2d);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1d, lat2d);
    }
    let lat1r = deg_rad(lat1d);
    let lat2r = deg_rad(lat2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
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

/// GEOHASH's 11-character string: the position re-encoded with the standard -90..90
/// latitude range, the eleventh character standing for two missing bits (always `0`).
pub fn geohash_string(score: f64) -> [u8; 11] {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [lon, lat] = score_to_lonlat(score);
    let bits = encode(
        Range {
            min: -180.0,
            max: 180.0,
        },
        Range {
            min: -90.0,
            max: 90.0,
        },
        lon,
        lat,
        26,
    )
    .map_or(0, |h| h.bits);
    let mut out = [0u8; 11];
    for (i, c) in out.iter_mut().enumerate() {
        let idx = if i == 10 {
            0
        } else {
            (bits >> (52 - (i + 1) * 5)) & 0x1f
        };
        *c = ALPHABET[idx as usize];
    }
    out
}

/// A distance as Redis prints it (fixedpoint_d2string with 4 decimals, the value rounded
/// to the nearest, ties to even).
pub fn format_distance(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".to_string();
    }
    let scaled = d * 10_000.0;
    // llrint: the current rounding mode (nearest, ties to even); out of range gives
    // LLONG_MIN, as x86-64's conversion.
    let r = scaled.round_ties_even();
    let svalue: i64 =
        if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
            i64::MIN
        } else {
            r as i64
        };
    let negative = svalue < 0;
    let digits = svalue.unsigned_abs().to_string();
    let digits = if digits.len() < 5 {
        format!("{digits:0>5}")
    } else {
        digits
    };
    let (int, frac) = digits.split_at(digits.len() - 4);
    format!("{}{int}.{frac}", if negative { "-" } else { "" })
}

/// A coordinate as Redis prints it (addReplyHumanLongDouble: `%.17Lf` of the value, trailing
/// zeroes and a trailing dot removed, `-0` written `0`).
pub fn format_coord(d: f64) -> String {
    if d.is_infinite() {
        return if d > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    if d.is_nan() {
        return if d.is_sign_negative() { "-nan" } else { "nan" }.to_string();
    }
    let mut s = format!("{d:.17}");
    if s.contains('.') {
        let trimmed = s.trim_end_matches('0').trim_end_matches('.').len();
        s.truncate(trimmed);
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

#[cfg(test)]
#[path = "geo_tests.rs"]
mod tests;
