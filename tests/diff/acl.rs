//! The ACL mode: random users from every rule form Redis documents, in random order, made
//! through several ACL SETUSER calls (a selector sometimes split over arguments) or through an
//! aclfile both servers load, then commands as those users: plain, queued in MULTI, from
//! scripts (`redis.call`, `redis.acl_check_cmd`, functions), and ACL DRYRUN; ACL GETUSER, ACL
//! LIST, ACL LOG (without ages and client details) and the saved aclfile compared along the
//! way. Every step is a scenario step (`scenario.rs`): connection 0 is the default user's, the
//! others log in as the generated users.

use super::classic::Rng;
use super::gen::{norm_of, sha1_smol_256, TableGen};
use super::scenario::{act, Act, Scenario};
use super::spec::Spec;

const CMDS: &[&str] = &[
    "get",
    "set",
    "del",
    "flushall",
    "keys",
    "config",
    "config|get",
    "config|set",
    "client",
    "client|id",
    "client|setname",
    "acl",
    "acl|whoami",
    "select",
    "eval",
    "evalsha",
    "fcall",
    "hset",
    "hget",
    "lpush",
    "lrange",
    "publish",
    "subscribe",
    "info",
    "ping",
    "incr",
    "mget",
    "sort",
    "scan",
    "object",
    "debug",
    "function",
    "script|load",
    "exists",
    "type",
];

const CATS: &[&str] = &[
    "all",
    "read",
    "write",
    "keyspace",
    "dangerous",
    "admin",
    "string",
    "hash",
    "list",
    "set",
    "sortedset",
    "pubsub",
    "scripting",
    "connection",
    "fast",
    "slow",
    "blocking",
    "transaction",
    "server",
    "bitmap",
    "generic",
];

const KEYPATS: &[&str] = &["*", "s*", "h?", "k[0-3]", "l*", "z*", "S0", "x", "s1"];
const CHPATS: &[&str] = &["*", "ch*", "news.?", "ch0", "x"];

/// One rule of a command, key or channel kind (what a selector may hold).
fn permission(r: &mut Rng) -> String {
    match r.below(16) {
        0 | 1 => format!("+{}", r.pick(CMDS)),
        2 | 3 => format!("-{}", r.pick(CMDS)),
        4 | 5 => format!("+@{}", r.pick(CATS)),
        6 => format!("-@{}", r.pick(CATS)),
        7 => r
            .pick::<str>(&["+@all", "allcommands", "-@all", "nocommands"])
            .into(),
        8 | 9 => format!("~{}", r.pick(KEYPATS)),
        10 => format!(
            "%{}~{}",
            r.pick::<str>(&["R", "W", "RW", "WR"]),
            r.pick(KEYPATS)
        ),
        11 => r.pick::<str>(&["allkeys", "resetkeys"]).into(),
        12 => format!("&{}", r.pick(CHPATS)),
        13 => r.pick::<str>(&["allchannels", "resetchannels"]).into(),
        14 => format!(
            "+{}",
            r.pick::<str>(&[
                "select|0",
                "select|1",
                "client|setname|x",
                "config|get|maxmemory"
            ])
        ),
        _ => format!("-{}", r.pick::<str>(&["select|0", "get|s0"])),
    }
}

/// One rule of any form: permissions, selectors, passwords, on/off, reset, and some refused.
fn rule(r: &mut Rng, pw: &str) -> Vec<String> {
    match r.below(30) {
        0..=15 => vec![permission(r)],
        16..=19 => {
            // A selector, as one argument or split over several (Redis joins them).
            let inner: Vec<String> = (0..1 + r.below(3)).map(|_| permission(r)).collect();
            let text = format!("({})", inner.join(" "));
            if r.chance(30) && inner.len() > 1 {
                let mut parts: Vec<String> = inner.clone();
                parts[0] = format!("({}", parts[0]);
                let last = parts.len() - 1;
                parts[last] = format!("{})", parts[last]);
                parts
            } else {
                vec![text]
            }
        }
        20 => vec!["clearselectors".into()],
        21 => vec![format!(">{pw}")],
        22 => vec![format!("<{}", r.pick::<str>(&[pw, "other"]))],
        23 => vec![format!("#{}", sha1_smol_256(pw))],
        24 => vec![format!("!{}", sha1_smol_256("other"))],
        25 => vec![r.pick::<str>(&["nopass", "resetpass", "on", "off"]).into()],
        26 => vec!["reset".into()],
        27 => vec![r
            .pick::<str>(&["sanitize-payload", "skip-sanitize-payload"])
            .into()],
        _ => vec![r
            .pick::<str>(&[
                "bogus", "~", "+", "-@", "%~x", "%Q~x", "(", "()", ">", "#abc", "+@nosuch",
                "+nosuch",
            ])
            .into()],
    }
}

/// A user's rules, in random order, and the password it logs in with.
fn user(r: &mut Rng) -> (Vec<Vec<String>>, String) {
    let pw = r.pick::<str>(&["p1", "p2"]).to_string();
    let mut rules: Vec<Vec<String>> = Vec::new();
    for _ in 0..1 + r.below(6) {
        rules.push(rule(r, &pw));
    }
    // Mostly users that can log in: on and a password, placed anywhere.
    if r.chance(90) {
        let at = r.below(rules.len() as u64 + 1) as usize;
        rules.insert(at, vec!["on".into()]);
    }
    if r.chance(90) {
        let at = r.below(rules.len() as u64 + 1) as usize;
        rules.insert(at, vec![format!(">{pw}")]);
    }
    (rules, pw)
}

fn words(ws: &[&str]) -> Vec<Vec<u8>> {
    ws.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// A command of the table for a user, loose unless its reply compares exactly.
fn user_command(g: &mut TableGen, specs: &[Spec]) -> (Vec<Vec<u8>>, bool) {
    let s = g.pick_spec(specs).clone();
    let args = g.invocation(specs, &s);
    // EXEC's reply holds the queued commands' replies, some of which only compare normalized.
    let loose = norm_of(&s) != super::classic::Norm::Exact || s.name == "exec";
    (args, loose)
}

/// An EXEC whose transaction queued a command compared loosely is compared loosely too (its
/// reply holds that command's).
fn loose_exec(acts: &mut [Act]) {
    let mut queued_loose: std::collections::HashMap<usize, bool> = Default::default();
    for a in acts.iter_mut() {
        let up = a
            .args
            .first()
            .map(|w| w.to_ascii_uppercase())
            .unwrap_or_default();
        match up.as_slice() {
            b"MULTI" => {
                // A nested MULTI is refused and leaves the transaction as it was.
                queued_loose.entry(a.conn).or_insert(false);
            }
            b"EXEC" | b"DISCARD" => {
                if queued_loose.remove(&a.conn) == Some(true) {
                    a.loose = true;
                }
            }
            _ => {
                if let Some(l) = queued_loose.get_mut(&a.conn) {
                    *l |= a.loose;
                }
            }
        }
    }
}

/// A random ACL scenario.
pub fn generate(g: &mut TableGen, specs: &[Spec]) -> Scenario {
    let nusers = 1 + g.rng().below(3) as usize;
    let n = nusers + 1;
    let resp3: Vec<bool> = (0..n).map(|_| g.rng().chance(30)).collect();
    let mut acts: Vec<Act> = Vec::new();
    let mut pws = Vec::new();
    let names: Vec<String> = (0..nusers).map(|i| format!("u{i}")).collect();
    g.users = names.clone();
    let via_file = g.rng().chance(35);
    let mut file = String::new();
    for name in &names {
        let (rules, pw) = user(g.rng());
        pws.push(pw);
        if via_file {
            // An unmatched parenthesis in an aclfile crashes redis-server 7.0.15
            // (ACLLoadFromFile goes on with no merged arguments): such lines are left out.
            let flat: Vec<String> = rules.into_iter().flatten().filter(|w| w != "(").collect();
            file.push_str(&format!("user {name} {}\n", flat.join(" ")));
        } else {
            // The rules over one to three SETUSER calls.
            let calls = 1 + g.rng().below(3) as usize;
            let per = rules.len().div_ceil(calls).max(1);
            for chunk in rules.chunks(per) {
                let mut a = words(&["ACL", "SETUSER", name]);
                a.extend(chunk.iter().flatten().map(|w| w.as_bytes().to_vec()));
                acts.push(act(0, a));
            }
        }
    }
    if via_file {
        if g.rng().chance(10) {
            file.push_str(g.rng().pick::<str>(&[
                "user\n",
                "bogus line\n",
                "user u0 on\n",
                "user default +@all ~* on nopass\n",
            ]));
        }
        let mut load = act(0, words(&["ACL", "LOAD"]));
        load.write_file = Some(file.into_bytes());
        acts.push(load);
    }
    acts.push(act(0, words(&["ACL", "LIST"])));
    for name in &names {
        acts.push(act(0, words(&["ACL", "GETUSER", name])));
    }
    acts.push(act(0, words(&["ACL", "USERS"])));
    acts.push(act(
        0,
        vec![
            b"FUNCTION".to_vec(),
            b"LOAD".to_vec(),
            b"REPLACE".to_vec(),
            super::gen::LIBRARY.as_bytes().to_vec(),
        ],
    ));
    for (i, name) in names.iter().enumerate() {
        let pw = if g.rng().chance(90) {
            pws[i].clone()
        } else {
            "wrong".to_string()
        };
        acts.push(act(i + 1, words(&["AUTH", name, &pw])));
        acts.push(act(i + 1, words(&["ACL", "WHOAMI"])));
    }
    let steps = 8 + g.rng().below(25);
    for _ in 0..steps {
        let c = 1 + g.rng().below(nusers as u64) as usize;
        let x = g.rng().below(20);
        match x {
            0..=8 => {
                let (args, loose) = user_command(g, specs);
                acts.push(Act {
                    loose,
                    ..act(c, args)
                });
            }
            9 | 10 => {
                acts.push(act(c, words(&["MULTI"])));
                let mut loose_any = false;
                for _ in 0..1 + g.rng().below(3) {
                    let (args, loose) = user_command(g, specs);
                    loose_any |= loose;
                    acts.push(Act {
                        loose,
                        ..act(c, args)
                    });
                }
                acts.push(Act {
                    loose: loose_any,
                    ..act(c, words(&["EXEC"]))
                });
            }
            11 | 12 => {
                let (inner, loose) = user_command(g, specs);
                let script = if g.rng().chance(50) {
                    "return redis.call(unpack(ARGV))"
                } else {
                    "return redis.pcall(unpack(ARGV))"
                };
                let mut a = words(&["EVAL", script, "0"]);
                a.extend(inner);
                acts.push(Act { loose, ..act(c, a) });
            }
            13 | 14 => {
                let (inner, _) = user_command(g, specs);
                let mut a = words(&["EVAL", "return redis.acl_check_cmd(unpack(ARGV))", "0"]);
                a.extend(inner);
                acts.push(act(c, a));
            }
            15 => {
                let (inner, loose) = user_command(g, specs);
                let f = g.rng().pick::<str>(&["call", "check"]).to_string();
                let mut a = words(&["FCALL", &f, "0"]);
                a.extend(inner);
                acts.push(Act {
                    loose: loose && f == "call",
                    ..act(c, a)
                });
            }
            16 => {
                let (inner, _) = user_command(g, specs);
                let u = names[g.rng().below(nusers as u64) as usize].clone();
                let mut a = words(&["ACL", "DRYRUN", &u]);
                a.extend(inner);
                acts.push(act(0, a));
            }
            17 => {
                let ch = g
                    .rng()
                    .pick::<str>(&["ch0", "ch1", "news.1", "x"])
                    .to_string();
                acts.push(act(c, words(&["PUBLISH", &ch, "m"])));
            }
            18 => {
                // A change to a logged-in user: new rules, or the user deleted (its
                // connections are closed).
                let u = names[g.rng().below(nusers as u64) as usize].clone();
                if g.rng().chance(80) {
                    let pw = "p1".to_string();
                    let mut a = words(&["ACL", "SETUSER", &u]);
                    for r in rule(g.rng(), &pw) {
                        a.push(r.into_bytes());
                    }
                    acts.push(act(0, a));
                } else {
                    acts.push(act(0, words(&["ACL", "DELUSER", &u])));
                }
                acts.push(act(0, words(&["ACL", "GETUSER", &u])));
            }
            _ => acts.push(act(0, words(&["ACL", "LOG", "5"]))),
        }
    }
    loose_exec(&mut acts);
    acts.push(act(0, words(&["ACL", "LOG"])));
    if g.rng().chance(30) {
        let mut save = act(0, words(&["ACL", "SAVE"]));
        save.read_file = true;
        acts.push(save);
        acts.push(act(0, words(&["ACL", "LOAD"])));
        acts.push(act(0, words(&["ACL", "LIST"])));
    }
    Scenario {
        kind: if via_file { "aclfile" } else { "setuser" },
        resp3,
        acts,
    }
}
