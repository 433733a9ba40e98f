//! MIGRATE (Redis's cluster.c migrateCommand): keys sent to another instance as RESTORE (or
//! RESTORE-ASKING on a cluster node) with DUMP's payload, then deleted here once the target
//! acknowledged each. As in Redis the command holds the server lock while it waits on the
//! target (bounded by its timeout), so no other command of this server sees a key half
//! moved; the socket steps leave this worker's other tasks to other threads
//! (`runtime::migrate`).

use crate::cmd::base::args::{self, is, Args};
use crate::cmd::runtime::handoff;
use crate::cmd::runtime::keyspace_events as notify;
use crate::cmd::runtime::migrate::{Failure, Target};
use crate::cmd::runtime::persist;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::rdb::payload;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::time::Duration;

/// MIGRATE: waits on another server, so the dispatcher keeps it off a current-thread
/// runtime's only thread.
pub const COMMANDS: &[Row] =
    &[Row::new("migrate", migrate).flags(crate::cmd::base::flags::NETWORK)];

/// The options after the timeout.
struct Options<'a> {
    copy: bool,
    replace: bool,
    username: Option<&'a [u8]>,
    password: Option<&'a [u8]>,
    /// The keys to move: `a[3]`, or those after KEYS.
    keys: &'a [Bytes],
}

/// Redis's option loop, in its order: a syntax error or a KEYS with a key argument stops it.
fn options(a: &[Bytes]) -> Result<Options<'_>, RedisError> {
    let mut o = Options {
        copy: false,
        replace: false,
        username: None,
        password: None,
        keys: &a[3..4],
    };
    let mut rest = Args::new(a, 6);
    while let Some(opt) = rest.next() {
        if is(opt, "copy") {
            o.copy = true;
        } else if is(opt, "replace") {
            o.replace = true;
        } else if is(opt, "auth") {
            let Some(p) = rest.next() else {
                return Err(RedisError::new(error::SYNTAX));
            };
            o.password = Some(p.as_ref());
        } else if is(opt, "auth2") {
            let Some(v) = rest.take(2) else {
                return Err(RedisError::new(error::SYNTAX));
            };
            o.username = Some(v[0].as_ref());
            o.password = Some(v[1].as_ref());
        } else if is(opt, "keys") {
            if !a[3].is_empty() {
                return Err(RedisError::new(error::MIGRATE_KEYS_WITH_KEY));
            }
            o.keys = rest.rest();
            break;
        } else {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    Ok(o)
}

/// A key found here: its name, the TTL to restore it with (0: none) and its payload.
struct Item {
    key: Bytes,
    expires_at: i64,
    payload: Vec<u8>,
}

/// What the target answered to one attempt (the socket steps, run without touching the
/// keyspace).
struct Answers {
    auth: Option<Vec<u8>>,
    select: Option<Vec<u8>>,
    /// One line per key, up to the first failed read.
    restores: Vec<Vec<u8>>,
    /// The read that failed, if one did.
    failed: Option<Failure>,
}

/// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
/// AUTH2 username password] [KEYS key ...].
fn migrate(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let o = options(a)?;
    let mut timeout = args::int(&a[5])?;
    let dbid = args::int(&a[4])?;
    if timeout <= 0 {
        timeout = 1000;
    }
    let timeout = Duration::from_millis(timeout as u64);
    let items = lookup(ctx, o.keys);
    if items.is_empty() {
        return Ok(Reply::Simple(Bytes::from_static(b"NOKEY")));
    }
    let mut name = a[1].to_vec();
    name.push(b':');
    name.extend_from_slice(&a[2]);
    let cache = &ctx.state.migrate_sockets;
    let mut may_retry = true;
    loop {
        let now_s = ctx.state.clock.now_ms().div_euclid(1000);
        let target =
            handoff::blocking(|| cache.take_or_connect(&name, &a[1], &a[2], timeout, now_s));
        let Some(mut target) = target else {
            return Err(RedisError::new(error::MIGRATE_CONNECT));
        };
        let select = target.last_dbid != dbid;
        let (request, sent) = request(ctx, &o, select, dbid, &items);
        if let Err(f) = handoff::blocking(|| target.write_all(&request, timeout)) {
            // The connection is dropped (closed); a retry reconnects.
            if f != Failure::TimedOut && may_retry {
                may_retry = false;
                continue;
            }
            return Err(RedisError::new(error::MIGRATE_WRITING));
        }
        let answers =
            handoff::blocking(|| read_answers(&mut target, &o, select, sent.len(), timeout));
        let header_failed = answers.failed.is_some()
            && (o.password.is_some() && answers.auth.is_none()
                || select && answers.select.is_none());
        if header_failed {
            // AUTH's or SELECT's reply never came: as a first RESTORE reply lost.
            if answers.failed != Some(Failure::TimedOut) && may_retry {
                may_retry = false;
                continue;
            }
            return Err(RedisError::new(error::MIGRATE_READING));
        }
        let refused = |line: &Option<Vec<u8>>| line.as_ref().is_some_and(|l| l[0] == b'-');
        let header_error = if refused(&answers.auth) {
            answers.auth.as_deref()
        } else if refused(&answers.select) {
            answers.select.as_deref()
        } else {
            None
        };
        let mut from_target: Option<RedisError> = None;
        let mut deleted: Vec<Bytes> = Vec::new();
        for (line, item) in answers.restores.iter().zip(&sent) {
            if header_error.is_some() || line[0] == b'-' {
                if from_target.is_none() {
                    target.last_dbid = -1;
                    let text = header_error.unwrap_or(line);
                    from_target = Some(error::migrate_target_error(&text[1..]));
                }
            } else if !o.copy {
                let key = &item.key;
                ctx.db().lock(key).remove(key, ctx.now);
                ctx.signal_modified(key);
                ctx.notify(notify::GENERIC, "del", key);
                deleted.push(key.clone());
            }
        }
        let socket_error = answers.failed;
        if from_target.is_none()
            && socket_error.is_some_and(|f| f != Failure::TimedOut)
            && answers.restores.is_empty()
            && may_retry
        {
            may_retry = false;
            continue;
        }
        if !deleted.is_empty() {
            let mut del = Vec::with_capacity(deleted.len() + 1);
            del.push(Bytes::from_static(b"DEL"));
            del.extend(deleted);
            ctx.propagate_as(del);
        }
        if let Some(e) = from_target {
            if socket_error.is_none() {
                cache.put_back(name, target);
            }
            return Err(e);
        }
        if socket_error.is_some() {
            return Err(RedisError::new(error::MIGRATE_READING));
        }
        target.last_dbid = dbid;
        cache.put_back(name, target);
        return Ok(Reply::ok());
    }
}

/// The keys that exist, read as Redis's lookupKeyRead reads them (hits, misses, `keymiss`),
/// each with its expiry and payload.
fn lookup(ctx: &Ctx, keys: &[Bytes]) -> Vec<Item> {
    let compress = persist::settings::compression(&ctx.state.config.read());
    let stats = &ctx.state.stats;
    let mut items = Vec::new();
    for key in keys {
        let found = ctx
            .db()
            .lock(key)
            .get(key, ctx.now)
            .map(|e| (e.expires_at(), payload::dump(&e.value, compress)));
        match found {
            Some((expires_at, payload)) => {
                stats.keyspace_hits.add(1, ctx.state.lock.held_here());
                items.push(Item {
                    key: key.clone(),
                    expires_at,
                    payload,
                });
            }
            None => {
                stats.keyspace_misses.add(1, ctx.state.lock.held_here());
                ctx.notify(notify::KEY_MISS, "keymiss", key);
            }
        }
    }
    items
}

/// The request to the target: AUTH if asked, SELECT if the connection has another database,
/// a RESTORE per key still alive (RESTORE-ASKING on a cluster node), with its remaining TTL
/// (at least 1 ms) and REPLACE if asked. Also the items it carries.
fn request<'i>(
    ctx: &Ctx,
    o: &Options,
    select: bool,
    dbid: i64,
    items: &'i [Item],
) -> (Vec<u8>, Vec<&'i Item>) {
    let mut out = Vec::new();
    if let Some(password) = o.password {
        match o.username {
            Some(user) => multibulk(&mut out, &[b"AUTH", user, password]),
            None => multibulk(&mut out, &[b"AUTH", password]),
        }
    }
    if select {
        multibulk(&mut out, &[b"SELECT", dbid.to_string().as_bytes()]);
    }
    let restore: &[u8] = if ctx.state.cluster.is_some() {
        b"RESTORE-ASKING"
    } else {
        b"RESTORE"
    };
    let mut sent = Vec::with_capacity(items.len());
    for item in items {
        let mut ttl = 0;
        if item.expires_at != 0 {
            ttl = item.expires_at - ctx.now;
            if ttl < 0 {
                continue;
            }
            ttl = ttl.max(1);
        }
        let ttl = ttl.to_string();
        if o.replace {
            multibulk(
                &mut out,
                &[
                    restore,
                    &item.key,
                    ttl.as_bytes(),
                    &item.payload,
                    b"REPLACE",
                ],
            );
        } else {
            multibulk(
                &mut out,
                &[restore, &item.key, ttl.as_bytes(), &item.payload],
            );
        }
        sent.push(item);
    }
    (out, sent)
}

/// One command in RESP.
fn multibulk(out: &mut Vec<u8>, parts: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", parts.len()).as_bytes());
    for p in parts {
        out.extend_from_slice(format!("${}\r\n", p.len()).as_bytes());
        out.extend_from_slice(p);
        out.extend_from_slice(b"\r\n");
    }
}

/// Read AUTH's and SELECT's replies if they were sent, then one line per RESTORE, stopping
/// at the first read that fails.
fn read_answers(
    target: &mut Target,
    o: &Options,
    select: bool,
    sent: usize,
    timeout: Duration,
) -> Answers {
    let mut answers = Answers {
        auth: None,
        select: None,
        restores: Vec::with_capacity(sent),
        failed: None,
    };
    if o.password.is_some() {
        match target.read_line(timeout) {
            Ok(l) => answers.auth = Some(l),
            Err(f) => {
                answers.failed = Some(f);
                return answers;
            }
        }
    }
    if select {
        match target.read_line(timeout) {
            Ok(l) => answers.select = Some(l),
            Err(f) => {
                answers.failed = Some(f);
                return answers;
            }
        }
    }
    for _ in 0..sent {
        match target.read_line(timeout) {
            Ok(l) => answers.restores.push(l),
            Err(f) => {
                answers.failed = Some(f);
                break;
            }
        }
    }
    answers
}
