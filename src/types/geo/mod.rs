//! Geo indexes as Redis 7.0 keeps them in a sorted set: each member's score is the 52-bit
//! interleaved geohash of its longitude and latitude, and a search walks the sorted set over
//! the nine geohash boxes around the centre (Redis's geohash.c, geohash_helper.c and the
//! search half of geo.c), so results, their order and every printed digit match
//! redis-server's.

mod search;

pub use search::{search, sort, Extent, Point, Shape, Sort};

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

#[cfg(test)]
mod tests;
