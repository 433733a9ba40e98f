//! The command universe ACL rules speak about: every command and subcommand of Redis's table
//! (the recorded COMMAND INFO metadata, not only what resplock implements) with its ACL
//! categories, so `+@read` or `-@dangerous` cover what they cover in Redis.

use crate::cmd::base::meta;
use std::collections::HashMap;
use std::sync::OnceLock;

/// ACL CAT's categories, in Redis's order.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Every command and subcommand of Redis's table, with its categories.
pub struct Universe {
    /// Full names (`get`, `client|kill`), sorted.
    pub names: Vec<&'static str>,
    index: HashMap<&'static str, usize>,
    /// The subcommands of each entry.
    pub(super) children: Vec<Vec<usize>>,
    /// Bit i set: in category `CATEGORIES[i]`.
    pub(super) cats: Vec<u32>,
}

/// The command universe (built once from the recorded metadata).
pub fn universe() -> &'static Universe {
    static U: OnceLock<Universe> = OnceLock::new();
    U.get_or_init(|| {
        let names: Vec<&'static str> = meta::all().map(|m| m.name).collect();
        let index: HashMap<_, _> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut children = vec![Vec::new(); names.len()];
        let mut cats = vec![0u32; names.len()];
        for (i, m) in meta::all().enumerate() {
            if let Some((parent, _)) = m.name.split_once('|') {
                if let Some(&p) = index.get(parent) {
                    children[p].push(i);
                }
            }
            for c in m.acl_names() {
                let c = c.trim_start_matches('@');
                if let Some(b) = CATEGORIES.iter().position(|x| *x == c) {
                    cats[i] |= 1 << b;
                }
            }
        }
        Universe {
            names,
            index,
            children,
            cats,
        }
    })
}

impl Universe {
    /// The id of a full command name (any case).
    pub fn id(&self, fullname: &str) -> Option<usize> {
        self.index
            .get(fullname.to_ascii_lowercase().as_str())
            .copied()
    }

    /// Whether the command of this id is a container of subcommands.
    pub fn has_children(&self, id: usize) -> bool {
        !self.children[id].is_empty()
    }

    /// The commands of a category, in table order (ACL CAT name).
    pub fn in_category(&self, cat: usize) -> impl Iterator<Item = &'static str> + '_ {
        (0..self.names.len())
            .filter(move |&i| self.cats[i] & (1 << cat) != 0)
            .map(|i| self.names[i])
    }
}
