//! The command table as the generator reads it: every command and subcommand of the reference
//! server's COMMAND DOCS (argument grammar, group) and COMMAND INFO (arity, flags, ACL
//! categories, tips), and whether resplock's COMMAND LIST has it. A command added to resplock
//! is generated from the day it appears there.

use super::conn::Conn;
use super::resp::{parse, V};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Key,
    Str,
    Int,
    Double,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

#[derive(Clone, Debug)]
pub struct Arg {
    pub name: String,
    pub kind: Kind,
    pub token: Option<String>,
    pub optional: bool,
    pub multiple: bool,
    pub multiple_token: bool,
    pub children: Vec<Arg>,
}

#[derive(Clone, Debug)]
pub struct Spec {
    /// `set`, or `client|kill` for a subcommand.
    pub name: String,
    /// The words that name it on the wire: `["SET"]`, `["CLIENT", "KILL"]`.
    pub words: Vec<String>,
    /// COMMAND DOCS's group: the family it is counted in.
    pub group: String,
    pub arity: i64,
    pub flags: BTreeSet<String>,
    pub categories: BTreeSet<String>,
    pub tips: BTreeSet<String>,
    pub args: Vec<Arg>,
    /// A container (CLIENT, CONFIG...): its subcommands are the specs that run.
    pub container: bool,
    /// resplock's COMMAND LIST names it.
    pub in_resplock: bool,
}

impl Spec {
    pub fn flag(&self, f: &str) -> bool {
        self.flags.contains(f)
    }
    pub fn tip(&self, t: &str) -> bool {
        self.tips.iter().any(|x| x == t)
    }
}

fn text(v: &V) -> String {
    String::from_utf8_lossy(v.text().unwrap_or_default()).into_owned()
}

fn strings(v: Option<&V>) -> BTreeSet<String> {
    v.and_then(|v| v.items())
        .map(|xs| xs.iter().map(text).collect())
        .unwrap_or_default()
}

fn parse_arg(m: &V) -> Arg {
    let kind = match m.field(b"type").map(text).as_deref() {
        Some("key") => Kind::Key,
        Some("integer") => Kind::Int,
        Some("double") => Kind::Double,
        Some("pattern") => Kind::Pattern,
        Some("unix-time") => Kind::UnixTime,
        Some("pure-token") => Kind::PureToken,
        Some("oneof") => Kind::OneOf,
        Some("block") => Kind::Block,
        _ => Kind::Str,
    };
    let flags = strings(m.field(b"flags"));
    Arg {
        name: m.field(b"name").map(text).unwrap_or_default(),
        kind,
        token: m.field(b"token").map(text),
        optional: flags.contains("optional"),
        multiple: flags.contains("multiple"),
        multiple_token: flags.contains("multiple_token"),
        children: m
            .field(b"arguments")
            .and_then(|a| a.items())
            .map(|xs| xs.iter().map(parse_arg).collect())
            .unwrap_or_default(),
    }
}

struct Info {
    arity: i64,
    flags: BTreeSet<String>,
    categories: BTreeSet<String>,
    tips: BTreeSet<String>,
}

fn collect_info(entry: &V, out: &mut BTreeMap<String, Info>) {
    let Some(items) = entry.items() else { return };
    if items.len() < 10 {
        return;
    }
    let name = text(&items[0]).to_ascii_lowercase();
    out.insert(
        name,
        Info {
            arity: super::resp::int_of(&items[1]).unwrap_or(0),
            flags: strings(Some(&items[2])),
            categories: strings(Some(&items[6])),
            tips: strings(Some(&items[7])),
        },
    );
    for sub in items[9].items().unwrap_or_default() {
        collect_info(sub, out);
    }
}

fn collect_docs(name: &str, doc: &V, info: &BTreeMap<String, Info>, out: &mut Vec<Spec>) {
    let subs = doc.field(b"subcommands").and_then(|s| s.items());
    let words: Vec<String> = name.split('|').map(|w| w.to_ascii_uppercase()).collect();
    let i = info.get(name);
    out.push(Spec {
        name: name.to_string(),
        words,
        group: doc.field(b"group").map(text).unwrap_or_default(),
        arity: i.map_or(0, |i| i.arity),
        flags: i.map(|i| i.flags.clone()).unwrap_or_default(),
        categories: i.map(|i| i.categories.clone()).unwrap_or_default(),
        tips: i.map(|i| i.tips.clone()).unwrap_or_default(),
        args: doc
            .field(b"arguments")
            .and_then(|a| a.items())
            .map(|xs| xs.iter().map(parse_arg).collect())
            .unwrap_or_default(),
        container: subs.is_some(),
        in_resplock: false,
    });
    if let Some(subs) = subs {
        for pair in subs.chunks(2) {
            collect_docs(&text(&pair[0]).to_ascii_lowercase(), &pair[1], info, out);
        }
    }
}

/// The reference server's table, marked with what resplock (`ours`) lists.
pub async fn load(reference: &mut Conn, ours: &mut Conn) -> Vec<Spec> {
    let docs = parse(&reference.cmd(&["COMMAND", "DOCS"]).await).expect("COMMAND DOCS parses");
    let infos = parse(&reference.cmd(&["COMMAND", "INFO"]).await).expect("COMMAND INFO parses");
    let mut info = BTreeMap::new();
    for e in infos.items().unwrap_or_default() {
        collect_info(e, &mut info);
    }
    let mut specs = Vec::new();
    for pair in docs.items().unwrap_or_default().chunks(2) {
        collect_docs(
            &text(&pair[0]).to_ascii_lowercase(),
            &pair[1],
            &info,
            &mut specs,
        );
    }
    let listed = parse(&ours.cmd(&["COMMAND", "LIST"]).await).expect("COMMAND LIST parses");
    let ours_names: BTreeSet<String> = listed
        .items()
        .unwrap_or_default()
        .iter()
        .map(|v| text(v).to_ascii_lowercase())
        .collect();
    for s in specs.iter_mut() {
        s.in_resplock = ours_names.contains(&s.name);
    }
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    specs
}

/// Names resplock lists that the reference does not have (each one a divergence).
pub async fn only_in_resplock(specs: &[Spec], ours: &mut Conn) -> Vec<String> {
    let known: BTreeSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    let listed = parse(&ours.cmd(&["COMMAND", "LIST"]).await).expect("COMMAND LIST parses");
    listed
        .items()
        .unwrap_or_default()
        .iter()
        .map(|v| text(v).to_ascii_lowercase())
        .filter(|n| !known.contains(n.as_str()))
        .collect()
}
