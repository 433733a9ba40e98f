//! Geo: GEOADD, GEODIST, GEOHASH, GEOPOS, GEORADIUS, GEORADIUSBYMEMBER and their _RO forms,
//! GEOSEARCH and GEOSEARCHSTORE, over sorted sets whose scores are 52-bit geohashes, with
//! geo.c's argument order, errors, result order and digits (`types::geo` computes them).
//!
//! GEOADD is ZADD with the coordinates turned into scores, as Redis runs it (its `zadd` event,
//! NX/XX/CH). A search reads the source set under its shard lock and copies the points out;
//! STORE and STOREDIST then write the destination on their own, as setKey does.

use crate::cmd::base::args::{is, Args};
use crate::cmd::families::zsets::zadd_generic;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::cmd::runtime::typed::{self, read, read_counted, zset_limits};
use crate::error::{self, RedisError};
use crate::keyspace::Value;
use crate::num::{c_ll, get_double};
use crate::reply::{CmdResult, Reply};
use crate::types::geo::{self, Extent, Point, Shape, Sort};
use crate::types::zset::ZSet;
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("geoadd", geoadd),
    Row::new("geodist", geodist),
    Row::new("geohash", geohash),
    Row::new("geopos", geopos),
    Row::new("georadius", georadius),
    Row::new("georadius_ro", georadius_ro),
    Row::new("georadiusbymember", georadiusbymember),
    Row::new("georadiusbymember_ro", georadiusbymember_ro),
    Row::new("geosearch", geosearch),
    Row::new("geosearchstore", geosearchstore),
];

/// getDoubleFromObjectOrReply: `msg` replaces `value is not a valid float`.
fn double(arg: &[u8], msg: &'static str) -> Result<f64, RedisError> {
    get_double(arg).ok_or(RedisError::new(msg))
}

/// extractLongLatOrReply: longitude then latitude, each a float, together in range.
fn lonlat(a: &[Bytes]) -> Result<[f64; 2], RedisError> {
    let lon = double(&a[0], error::NOT_FLOAT)?;
    let lat = double(&a[1], error::NOT_FLOAT)?;
    if !geo::valid_lonlat(lon, lat) {
        return Err(error::geo_invalid_pair(lon, lat));
    }
    Ok([lon, lat])
}

/// extractUnitOrReply: meters per unit.
fn unit(arg: &[u8]) -> Result<f64, RedisError> {
    Ok(if is(arg, "m") {
        1.0
    } else if is(arg, "km") {
        1000.0
    } else if is(arg, "ft") {
        0.3048
    } else if is(arg, "mi") {
        1609.34
    } else {
        return Err(RedisError::new(error::GEO_BAD_UNIT));
    })
}

/// extractDistanceOrReply: `radius unit` -> (radius, meters per unit).
fn radius(a: &[Bytes]) -> Result<(f64, f64), RedisError> {
    let r = double(&a[0], error::GEO_NEED_RADIUS)?;
    if r < 0.0 {
        return Err(RedisError::new(error::GEO_RADIUS_NEGATIVE));
    }
    Ok((r, unit(&a[1])?))
}

/// extractBoxOrReply: `width height unit` -> (width, height, meters per unit).
fn box_size(a: &[Bytes]) -> Result<(f64, f64, f64), RedisError> {
    let w = double(&a[0], error::GEO_NEED_WIDTH)?;
    let h = double(&a[1], error::GEO_NEED_HEIGHT)?;
    if h < 0.0 || w < 0.0 {
        return Err(RedisError::new(error::GEO_BOX_NEGATIVE));
    }
    Ok((w, h, unit(&a[2])?))
}

/// longLatFromMember: the position of a member, if it is in the set.
fn member_pos(z: &ZSet, member: &[u8]) -> Option<[f64; 2]> {
    z.score(member).map(geo::score_to_lonlat)
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD of geohash scores.
fn geoadd(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let (mut nx, mut xx) = (false, false);
    let mut longidx = 2;
    while longidx < a.len() {
        let o = &a[longidx];
        if is(o, "nx") {
            nx = true;
        } else if is(o, "xx") {
            xx = true;
        } else if !is(o, "ch") {
            break;
        }
        longidx += 1;
    }
    if !(a.len() - longidx).is_multiple_of(3) || (xx && nx) {
        return Err(RedisError::new(error::SYNTAX));
    }
    let mut argv: Vec<Bytes> = Vec::with_capacity(longidx + (a.len() - longidx) / 3 * 2);
    argv.push(Bytes::from_static(b"zadd"));
    argv.extend_from_slice(&a[1..longidx]);
    for triple in a[longidx..].chunks_exact(3) {
        let [lon, lat] = lonlat(triple)?;
        argv.push(Bytes::from(geo::lonlat_to_score(lon, lat).to_string()));
        argv.push(triple[2].clone());
    }
    zadd_generic(ctx, &argv, false)
}

/// GEODIST key member1 member2 [unit].
fn geodist(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let to_meter = match a.len() {
        5 => unit(&a[4])?,
        n if n > 5 => return Err(RedisError::new(error::SYNTAX)),
        _ => 1.0,
    };
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        let Some(z) = z else {
            return Reply::Nil;
        };
        match (z.score(&a[2]), z.score(&a[3])) {
            (Some(s1), Some(s2)) => {
                let p = geo::score_to_lonlat(s1);
                let q = geo::score_to_lonlat(s2);
                let d = geo::distance(p[0], p[1], q[0], q[1]) / to_meter;
                Reply::bulk(geo::format_distance(d))
            }
            _ => Reply::Nil,
        }
    })
}

/// GEOHASH key [member ...]: 11-character geohash strings, nil for missing members.
fn geohash(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Array(
            a[2..]
                .iter()
                .map(|m| match z.and_then(|z| z.score(m)) {
                    Some(s) => Reply::bulk(Bytes::copy_from_slice(&geo::geohash_string(s))),
                    None => Reply::Nil,
                })
                .collect(),
        )
    })
}

/// GEOPOS key [member ...]: `[longitude, latitude]` pairs, a null array for missing members.
fn geopos(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    read_counted(ctx, &a[1], |z: Option<&ZSet>| {
        Reply::Array(
            a[2..]
                .iter()
                .map(|m| match z.and_then(|z| member_pos(z, m)) {
                    Some([lon, lat]) => {
                        Reply::Array(vec![Reply::HumanDouble(lon), Reply::HumanDouble(lat)])
                    }
                    None => Reply::NilArray,
                })
                .collect(),
        )
    })
}

/// How a search command reads its arguments (georadiusGeneric's flags).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS[_RO] key longitude latitude radius unit ...
    Coords,
    /// GEORADIUSBYMEMBER[_RO] key member radius unit ...
    Member,
    /// GEOSEARCH key FROM... BY... ...
    Search,
    /// GEOSEARCHSTORE dest key FROM... BY... ...
    SearchStore,
}

fn georadius(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::Coords, false)
}
fn georadius_ro(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::Coords, true)
}
fn georadiusbymember(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::Member, false)
}
fn georadiusbymember_ro(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::Member, true)
}
fn geosearch(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::Search, true)
}
fn geosearchstore(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    search_generic(ctx, a, Form::SearchStore, false)
}

/// What a search decided under the source's lock.
enum Found {
    /// A reply to give as is.
    Reply(Reply),
    /// Points to store in `key` (at most `count` of them, already in order).
    Store {
        key: Bytes,
        points: Vec<Point>,
        storedist: bool,
        conversion: f64,
    },
}

/// georadiusGeneric: parse in Redis's order (the source's type first, then the centre and
/// area of the older forms, then the options left to right), search, sort, reply or store.
fn search_generic(ctx: &mut Ctx, a: &[Bytes], form: Form, nostore: bool) -> CmdResult {
    let src = if form == Form::SearchStore {
        &a[2]
    } else {
        &a[1]
    };
    // The source is looked up before the options are read (a hit or a keymiss either way).
    let mut hit = true;
    let found = read(ctx, src, |z: Option<&ZSet>| {
        hit = z.is_some();
        search_in(z, a, form, nostore)
    });
    crate::cmd::families::strings::note_read(ctx, src, hit);
    let found = found??;
    match found {
        Found::Reply(r) => Ok(r),
        Found::Store {
            key,
            points,
            storedist,
            conversion,
        } => {
            let n = points.len();
            if n > 0 {
                let mut z = ZSet::new_skiplist();
                let limits = zset_limits(ctx);
                for p in &points {
                    let score = if storedist {
                        p.dist / conversion
                    } else {
                        p.score
                    };
                    z.insert_or_update(&p.member, score, limits);
                }
                z.convert_to_listpack_if_small(limits);
                typed::store(ctx, &key, Value::ZSet(z));
                ctx.signal_modified(&key);
                let event = if matches!(form, Form::Search | Form::SearchStore) {
                    "geosearchstore"
                } else {
                    "georadiusstore"
                };
                ctx.notify(notify::ZSET, event, &key);
            } else if typed::delete(ctx, &key) {
                ctx.signal_modified(&key);
                ctx.notify(notify::GENERIC, "del", &key);
            }
            Ok(Reply::Int(n as i64))
        }
    }
}

fn search_in(
    z: Option<&ZSet>,
    a: &[Bytes],
    form: Form,
    nostore: bool,
) -> Result<Found, RedisError> {
    let mut storekey: Option<Bytes> = None;
    let mut storedist = false;
    let mut center = [0.0f64; 2];
    let mut extent = Extent::Radius(0.0);
    let mut conversion = 0.0;
    let base = match form {
        Form::Coords => {
            center = lonlat(&a[2..4])?;
            let (r, c) = radius(&a[4..6])?;
            (extent, conversion) = (Extent::Radius(r), c);
            6
        }
        Form::Member => {
            if let Some(z) = z {
                center = member_pos(z, &a[2]).ok_or(RedisError::new(error::GEO_NO_MEMBER))?;
                let (r, c) = radius(&a[3..5])?;
                (extent, conversion) = (Extent::Radius(r), c);
            }
            5
        }
        Form::Search => 2,
        Form::SearchStore => {
            storekey = Some(a[1].clone());
            3
        }
    };
    let geosearch = matches!(form, Form::Search | Form::SearchStore);
    let (mut withdist, mut withhash, mut withcoords) = (false, false, false);
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let mut sort = Sort::None;
    let mut any = false;
    let mut count: i64 = 0;
    let mut rest = Args::new(a, base);
    while let Some(arg) = rest.next() {
        // An option whose value is read only where it applies (otherwise it is another
        // case, or a syntax error).
        if is(arg, "withdist") {
            withdist = true;
        } else if is(arg, "withhash") {
            withhash = true;
        } else if is(arg, "withcoord") {
            withcoords = true;
        } else if is(arg, "any") {
            any = true;
        } else if is(arg, "asc") {
            sort = Sort::Asc;
        } else if is(arg, "desc") {
            sort = Sort::Desc;
        } else if let Some(v) = rest.value_of(arg, "count") {
            count = crate::cmd::base::args::int(v)?;
            if count <= 0 {
                return Err(RedisError::new(error::GEO_COUNT_POSITIVE));
            }
        } else if let Some(v) = (!nostore && !geosearch)
            .then(|| {
                rest.value_of(arg, "store")
                    .or_else(|| rest.value_of(arg, "storedist"))
            })
            .flatten()
        {
            storekey = Some(v.clone());
            storedist = is(arg, "storedist");
        } else if is(arg, "storedist") && form == Form::SearchStore {
            storedist = true;
        } else if let Some(v) = (geosearch && !fromloc)
            .then(|| rest.value_of(arg, "frommember"))
            .flatten()
        {
            if let Some(z) = z {
                center = member_pos(z, v).ok_or(RedisError::new(error::GEO_NO_MEMBER))?;
            }
            frommember = true;
        } else if let Some(v) = (geosearch && !frommember)
            .then(|| rest.values_of(arg, "fromlonlat", 2))
            .flatten()
        {
            center = lonlat(v)?;
            fromloc = true;
        } else if let Some(v) = (geosearch && !bybox)
            .then(|| rest.values_of(arg, "byradius", 2))
            .flatten()
        {
            let (r, c) = radius(v)?;
            (extent, conversion) = (Extent::Radius(r), c);
            byradius = true;
        } else if let Some(v) = (geosearch && !byradius)
            .then(|| rest.values_of(arg, "bybox", 3))
            .flatten()
        {
            let (w, h, c) = box_size(v)?;
            (extent, conversion) = (
                Extent::Box {
                    width: w,
                    height: h,
                },
                c,
            );
            bybox = true;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    if storekey.is_some() && (withdist || withhash || withcoords) {
        return Err(RedisError::new(if form == Form::SearchStore {
            error::GEOSEARCHSTORE_WITH
        } else {
            error::GEORADIUS_STORE_WITH
        }));
    }
    if geosearch && !(frommember || fromloc) {
        return Err(error::geo_need_from(&a[0]));
    }
    if geosearch && !(byradius || bybox) {
        return Err(error::geo_need_by(&a[0]));
    }
    if any && count == 0 {
        return Err(RedisError::new(error::GEO_ANY_NEEDS_COUNT));
    }
    let Some(z) = z else {
        return Ok(match storekey {
            Some(key) => Found::Store {
                key,
                points: Vec::new(),
                storedist,
                conversion,
            },
            None => Found::Reply(Reply::Array(Vec::new())),
        });
    };
    if count != 0 && sort == Sort::None && !any {
        sort = Sort::Asc;
    }
    let shape = Shape {
        center,
        extent,
        conversion,
    };
    let count = count as usize;
    let mut points = geo::search(z, &shape, if any { count } else { 0 });
    if points.is_empty() && storekey.is_none() {
        return Ok(Found::Reply(Reply::Array(Vec::new())));
    }
    let returned = if count == 0 || points.len() < count {
        points.len()
    } else {
        count
    };
    geo::sort(&mut points, sort, returned);
    points.truncate(returned);
    if let Some(key) = storekey {
        return Ok(Found::Store {
            key,
            points,
            storedist,
            conversion,
        });
    }
    let options = withdist as usize + withcoords as usize + withhash as usize;
    let items = points
        .into_iter()
        .map(|p| {
            let name = Reply::Bulk(Bytes::from(p.member));
            if options == 0 {
                return name;
            }
            let mut item = Vec::with_capacity(options + 1);
            item.push(name);
            if withdist {
                item.push(Reply::bulk(geo::format_distance(p.dist / conversion)));
            }
            if withhash {
                item.push(Reply::Int(c_ll(p.score)));
            }
            if withcoords {
                item.push(Reply::Array(vec![
                    Reply::HumanDouble(p.longitude),
                    Reply::HumanDouble(p.latitude),
                ]));
            }
            Reply::Array(item)
        })
        .collect();
    Ok(Found::Reply(Reply::Array(items)))
}
