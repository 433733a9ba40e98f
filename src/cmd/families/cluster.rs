//! CLUSTER, READONLY, READWRITE and ASKING. On a node of an in-process cluster
//! (`--cluster N`) they answer as a redis-server 7.0.15 node with `cluster-enabled yes`
//! (the topology replies are in `cluster_view.rs`); on any other server as one started
//! without it: cluster clients probe CLUSTER INFO or CLUSTER SLOTS to tell a cluster from a
//! single node, and Redis 7.0 answers every subcommand (HELP included) with the same error
//! once the subcommand name and its arity have passed the command table's checks.

use crate::cluster::{key_slot, NodeIx, SLOTS};
use crate::cmd::base::args::{self, is};
use crate::cmd::families::cluster_view as view;
use crate::cmd::runtime::cluster::ops::{self, Takeover};
use crate::cmd::runtime::cluster::registry::{client_flags, ClusterNode};
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::table::container;
use crate::cmd::runtime::table::Row;
use crate::error::{self, RedisError};
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;

pub const COMMANDS: &[Row] = &[
    Row::new("cluster", container).subs(CLUSTER_SUBS),
    Row::new("readonly", readonly),
    Row::new("readwrite", readwrite),
    Row::new("asking", asking),
];

const CLUSTER_SUBS: &[Row] = &[
    Row::new("addslots", addslots),
    Row::new("addslotsrange", addslotsrange),
    Row::new("bumpepoch", bumpepoch),
    Row::new("count-failure-reports", view::count_failure_reports),
    Row::new("countkeysinslot", countkeysinslot),
    Row::new("delslots", delslots),
    Row::new("delslotsrange", delslotsrange),
    Row::new("failover", failover),
    Row::new("flushslots", flushslots),
    Row::new("forget", forget),
    Row::new("getkeysinslot", getkeysinslot),
    Row::new("help", help),
    Row::new("info", view::info),
    Row::new("keyslot", keyslot),
    Row::new("links", view::links),
    Row::new("meet", meet),
    Row::new("myid", myid),
    Row::new("nodes", view::nodes),
    Row::new("replicas", view::replicas),
    Row::new("replicate", replicate),
    Row::new("reset", reset),
    Row::new("saveconfig", saveconfig),
    Row::new("set-config-epoch", set_config_epoch),
    Row::new("setslot", setslot),
    Row::new("shards", view::shards),
    Row::new("slaves", view::replicas),
    Row::new("slots", view::slots),
];

/// The node, or the error every cluster command gets on a server without cluster support
/// (clusterCommand's first check).
pub(crate) fn node<'a>(ctx: &Ctx<'a>) -> Result<&'a ClusterNode, RedisError> {
    ctx.state
        .cluster
        .as_deref()
        .ok_or(RedisError::new(error::CLUSTER_DISABLED))
}

fn readonly(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    node(ctx)?;
    ctx.client.cluster_flags |= client_flags::READONLY;
    Ok(Reply::ok())
}

fn readwrite(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    node(ctx)?;
    ctx.client.cluster_flags &= !client_flags::READONLY;
    Ok(Reply::ok())
}

fn asking(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    node(ctx)?;
    ctx.client.cluster_flags |= client_flags::ASKING;
    Ok(Reply::ok())
}

fn help(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    node(ctx)?;
    const LINES: &[&str] = &[
        "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ADDSLOTS <slot> [<slot> ...]",
        "    Assign slots to current node.",
        "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Assign slots which are between <start-slot> and <end-slot> to current node.",
        "BUMPEPOCH",
        "    Advance the cluster config epoch.",
        "COUNT-FAILURE-REPORTS <node-id>",
        "    Return number of failure reports for <node-id>.",
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "DELSLOTS <slot> [<slot> ...]",
        "    Delete slots information from current node.",
        "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
        "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
        "FAILOVER [FORCE|TAKEOVER]",
        "    Promote current replica node to being a master.",
        "FORGET <node-id>",
        "    Remove a node from the cluster.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return key names stored by current node in a slot.",
        "FLUSHSLOTS",
        "    Delete current node own slots information.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MEET <ip> <port> [<bus-port>]",
        "    Connect nodes into a working cluster.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return cluster configuration seen by node. Output format:",
        "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
        "REPLICATE <node-id>",
        "    Configure current node as replica to <node-id>.",
        "RESET [HARD|SOFT]",
        "    Reset current node (default: soft).",
        "SET-CONFIG-EPOCH <epoch>",
        "    Set config epoch of current node.",
        "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
        "    Set slot state.",
        "REPLICAS <node-id>",
        "    Return <node-id> replicas.",
        "SAVECONFIG",
        "    Force saving cluster configuration on disk.",
        "SLOTS",
        "    Return information about slots range mappings. Each range is made of:",
        "    start, end, master and replicas IP addresses, ports and ids",
        "SHARDS",
        "    Return information about slot range mappings and the nodes associated with them.",
        "LINKS",
        "    Return information about all network links between this node and its peers.",
        "    Output format is an array where each array element is a map containing attributes of a link",
        "HELP",
        "    Prints this help.",
    ];
    Ok(crate::cmd::base::help::help_reply(LINES))
}

fn myid(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let v = node.shared.membership.view(node.me);
    Ok(Reply::bulk_str(&v.nodes[node.me].id))
}

fn keyslot(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    node(ctx)?;
    Ok(Reply::Int(key_slot(&a[2]) as i64))
}

fn countkeysinslot(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    node(ctx)?;
    let slot = args::int(&a[2])?;
    if !(0..SLOTS as i64).contains(&slot) {
        return Err(error::err("ERR Invalid slot"));
    }
    Ok(Reply::Int(ops::count_in_slot(ctx.state, slot as u16) as i64))
}

fn getkeysinslot(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    node(ctx)?;
    let slot = args::int(&a[2])?;
    let max = args::int(&a[3])?;
    if !(0..SLOTS as i64).contains(&slot) || max < 0 {
        return Err(error::err("ERR Invalid slot or number of keys"));
    }
    // `usize::MAX as i64` is -1: a cap through it would make every count unlimited.
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let keys = ops::keys_in_slot(ctx.state, slot as u16, max);
    Ok(Reply::Array(keys.into_iter().map(Reply::Bulk).collect()))
}

/// getSlotOrReply.
fn slot_arg(a: &[u8]) -> Result<u16, RedisError> {
    match args::parse_i64(a) {
        Some(s) if (0..SLOTS as i64).contains(&s) => Ok(s as u16),
        _ => Err(RedisError::new(error::INVALID_SLOT)),
    }
}

/// ADDSLOTS/DELSLOTS (`del`) of `ranges`, checked first as Redis checks them: every slot
/// busy (or unassigned) and given once.
fn change_slots(ctx: &mut Ctx, ranges: &[(u16, u16)], del: bool) -> CmdResult {
    let node = node(ctx)?;
    let me = node.me;
    node.shared.membership.update(me, |t| {
        let mut seen = vec![false; SLOTS];
        for &(a, b) in ranges {
            for s in a..=b {
                if del && t.owner(s).is_none() {
                    return Err(error::err(format!("ERR Slot {s} is already unassigned")));
                }
                if !del && t.owner(s).is_some() {
                    return Err(error::err(format!("ERR Slot {s} is already busy")));
                }
                if std::mem::replace(&mut seen[s as usize], true) {
                    return Err(error::err(format!("ERR Slot {s} specified multiple times")));
                }
            }
        }
        for &(a, b) in ranges {
            for s in a..=b {
                t.nodes[me].importing.remove(&s);
                t.assign(s, if del { None } else { Some(me) });
            }
        }
        Ok(Reply::ok())
    })
}

fn addslots(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    slots_list(ctx, a, false)
}

fn delslots(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    slots_list(ctx, a, true)
}

fn slots_list(ctx: &mut Ctx, a: &[Bytes], del: bool) -> CmdResult {
    node(ctx)?;
    let slots = a[2..]
        .iter()
        .map(|s| slot_arg(s))
        .collect::<Result<Vec<u16>, _>>()?;
    let ranges: Vec<(u16, u16)> = slots.into_iter().map(|s| (s, s)).collect();
    change_slots(ctx, &ranges, del)
}

fn addslotsrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    slot_ranges(ctx, a, false)
}

fn delslotsrange(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    slot_ranges(ctx, a, true)
}

fn slot_ranges(ctx: &mut Ctx, a: &[Bytes], del: bool) -> CmdResult {
    node(ctx)?;
    if a.len() % 2 == 1 {
        let name = if del {
            "cluster|delslotsrange"
        } else {
            "cluster|addslotsrange"
        };
        return Err(error::wrong_arity(name));
    }
    let mut ranges = Vec::new();
    for pair in a[2..].chunks(2) {
        let (x, y) = (slot_arg(&pair[0])?, slot_arg(&pair[1])?);
        if x > y {
            return Err(error::err(format!(
                "ERR start slot number {x} is greater than end slot number {y}"
            )));
        }
        ranges.push((x, y));
    }
    change_slots(ctx, &ranges, del)
}

fn flushslots(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    if !ctx.state.keyspace.db(0).is_empty() {
        return Err(error::err(
            "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.",
        ));
    }
    let me = node.me;
    node.shared.membership.update(me, |t| {
        for s in 0..SLOTS as u16 {
            if t.owner(s) == Some(me) {
                t.assign(s, None);
            }
        }
    });
    Ok(Reply::ok())
}

fn bumpepoch(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let me = node.me;
    let (bumped, epoch) = node
        .shared
        .membership
        .update(me, |t| (t.bump_epoch(me), t.nodes[me].config_epoch));
    let word = if bumped { "BUMPED" } else { "STILL" };
    Ok(Reply::Simple(Bytes::from(format!("{word} {epoch}"))))
}

fn saveconfig(ctx: &mut Ctx, _: &[Bytes]) -> CmdResult {
    // The configuration lives in the process (there is no nodes.conf to write).
    node(ctx)?;
    Ok(Reply::ok())
}

fn set_config_epoch(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let epoch = args::int(&a[2])?;
    if epoch < 0 {
        return Err(error::err(format!(
            "ERR Invalid config epoch specified: {epoch}"
        )));
    }
    if node.shared.membership.len() > 1 {
        return Err(error::err(
            "ERR The user can assign a config epoch only when the node does not know any other node.",
        ));
    }
    let me = node.me;
    node.shared.membership.update(me, |t| {
        if t.nodes[me].config_epoch != 0 {
            return Err(error::err("ERR Node config epoch is already non-zero"));
        }
        t.nodes[me].config_epoch = epoch as u64;
        t.current_epoch = t.current_epoch.max(epoch as u64);
        Ok(Reply::ok())
    })
}

fn meet(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    node(ctx)?;
    if a.len() != 4 && a.len() != 5 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let port = args::parse_i64(&a[3]).ok_or_else(|| {
        error::err(format!(
            "ERR Invalid TCP base port specified: {}",
            String::from_utf8_lossy(&a[3])
        ))
    })?;
    let cport = match a.get(4) {
        Some(c) => args::parse_i64(c).ok_or_else(|| {
            error::err(format!(
                "ERR Invalid TCP bus port specified: {}",
                String::from_utf8_lossy(c)
            ))
        })?,
        None => port + 10000,
    };
    let ip_ok = std::str::from_utf8(&a[2])
        .ok()
        .and_then(|s| s.parse::<std::net::IpAddr>().ok())
        .is_some();
    if !ip_ok || !(1..=65535).contains(&port) || !(1..=65535).contains(&cport) {
        return Err(error::err(format!(
            "ERR Invalid node address specified: {}:{}",
            String::from_utf8_lossy(&a[2]),
            String::from_utf8_lossy(&a[3])
        )));
    }
    // The nodes of this process already know each other; a node elsewhere would have to
    // answer on a cluster bus, which no node here has: like a real node whose handshake
    // never completes, this one accepts the request and nothing comes of it.
    Ok(Reply::ok())
}

fn forget(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let view = node.shared.membership.view(node.me);
    let Some(n) = view.find(&a[2]) else {
        return Err(error::err(format!(
            "ERR Unknown node {}",
            String::from_utf8_lossy(&a[2])
        )));
    };
    if n == node.me {
        return Err(error::err("ERR I tried hard but I can't forget myself..."));
    }
    if view.nodes[node.me].master == Some(n) {
        return Err(error::err("ERR Can't forget my master!"));
    }
    // The nodes of one process share their configuration: a node cannot drop another from
    // its own view while the others keep it (see README, "What differs from a real cluster").
    Err(error::err(
        "ERR CLUSTER FORGET is not supported by resplock's in-process cluster: its nodes share one configuration",
    ))
}

fn replicate(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let me = node.me;
    let view = node.shared.membership.view(me);
    let Some(n) = view.find(&a[2]) else {
        return Err(error::err(format!(
            "ERR Unknown node {}",
            String::from_utf8_lossy(&a[2])
        )));
    };
    if n == me {
        return Err(error::err("ERR Can't replicate myself"));
    }
    if view.nodes[n].master.is_some() {
        return Err(error::err(
            "ERR I can only replicate a master, not a replica.",
        ));
    }
    if view.nodes[me].master.is_none()
        && (view.slot_count(me) != 0 || !ctx.state.keyspace.db(0).is_empty())
    {
        return Err(error::err(
            "ERR To set a master the node must be empty and without assigned slots.",
        ));
    }
    node.shared.membership.update(me, |t| {
        t.nodes[me].master = Some(n);
        t.nodes[me].migrating.clear();
        t.nodes[me].importing.clear();
    });
    resync_later(node);
    Ok(Reply::ok())
}

fn reset(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    if let Some(mode) = a.get(2) {
        if !is(mode, "hard") && !is(mode, "soft") {
            return Err(RedisError::new(error::SYNTAX));
        }
    }
    let me = node.me;
    let view = node.shared.membership.view(me);
    if view.nodes[me].master.is_none() && !ctx.db().is_empty() {
        return Err(error::err(
            "ERR CLUSTER RESET can't be called with master nodes containing keys",
        ));
    }
    // A reset node is a master without slots; its peers stay known (see README).
    node.shared.membership.update(me, |t| {
        for s in 0..SLOTS as u16 {
            if t.owner(s) == Some(me) {
                t.assign(s, None);
            }
        }
        let n = &mut t.nodes[me];
        n.master = None;
        n.migrating.clear();
        n.importing.clear();
    });
    if view.nodes[me].master.is_some() {
        // A replica that resets keeps its data but stops following (clusterReset flushes
        // only a master's, which has none here).
        resync_later(node);
    }
    Ok(Reply::ok())
}

/// Make the replicas follow what the configuration now says, after this command returns
/// (it holds this node's lock; a resync takes others').
fn resync_later(node: &ClusterNode) {
    let shared = node.shared.clone();
    shared.rt.clone().spawn(async move {
        let _ops = shared.ops.lock().await;
        ops::reconcile(&shared, &[]).await;
    });
}

fn setslot(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    let me = node.me;
    let view = node.shared.membership.view(me);
    if view.nodes[me].master.is_some() {
        return Err(error::err("ERR Please use SETSLOT only with masters."));
    }
    let slot = slot_arg(&a[2])?;
    let id = a.get(4);
    let target = |missing: &str| -> Result<NodeIx, RedisError> {
        let id = id.expect("checked by the caller");
        let n = view
            .find(id)
            .ok_or_else(|| error::err(format!("ERR {missing} {}", String::from_utf8_lossy(id))))?;
        if view.nodes[n].master.is_some() {
            return Err(error::err("ERR Target node is not a master"));
        }
        Ok(n)
    };
    let action = &a[3];
    if is(action, "migrating") && a.len() == 5 {
        if view.owner(slot) != Some(me) {
            return Err(error::err(format!(
                "ERR I'm not the owner of hash slot {slot}"
            )));
        }
        let n = target("I don't know about node")?;
        node.shared.membership.update(me, |t| {
            t.nodes[me].migrating.insert(slot, n);
        });
    } else if is(action, "importing") && a.len() == 5 {
        if view.owner(slot) == Some(me) {
            return Err(error::err(format!(
                "ERR I'm already the owner of hash slot {slot}"
            )));
        }
        let n = target("I don't know about node")?;
        node.shared.membership.update(me, |t| {
            t.nodes[me].importing.insert(slot, n);
        });
    } else if is(action, "stable") && a.len() == 4 {
        node.shared.membership.update(me, |t| {
            t.nodes[me].importing.remove(&slot);
            t.nodes[me].migrating.remove(&slot);
        });
    } else if is(action, "node") && a.len() == 5 {
        let n = target("Unknown node")?;
        let keys = ops::count_in_slot(ctx.state, slot);
        if view.owner(slot) == Some(me) && n != me && keys != 0 {
            return Err(error::err(format!(
                "ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."
            )));
        }
        let allow_migration = ctx
            .state
            .config
            .read()
            .get("cluster-allow-replica-migration")
            .as_deref()
            == Some("yes");
        let became_replica = node.shared.membership.update(me, |t| {
            if keys == 0 {
                t.nodes[me].migrating.remove(&slot);
            }
            let was_mine = t.owner(slot) == Some(me);
            t.assign(slot, Some(n));
            let mut became_replica = false;
            if was_mine && n != me && t.slot_count(me) == 0 && allow_migration {
                crate::log::warning(&format!(
                    "Configuration change detected. Reconfiguring myself as a replica of {}",
                    t.nodes[n].id
                ));
                t.nodes[me].master = Some(n);
                t.nodes[me].migrating.clear();
                t.nodes[me].importing.clear();
                became_replica = true;
            }
            if n == me && t.nodes[me].importing.remove(&slot).is_some() && t.bump_epoch(me) {
                crate::log::warning(&format!("configEpoch updated after importing slot {slot}"));
            }
            became_replica
        });
        if became_replica {
            resync_later(node);
        }
        crate::cmd::runtime::cluster::hooks::redirect_blocked(ctx.state);
    } else {
        return Err(error::err(
            "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP",
        ));
    }
    Ok(Reply::ok())
}

fn failover(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let node = node(ctx)?;
    if a.len() > 3 {
        return Err(error::subcommand_syntax(&a[1], &a[0]));
    }
    let how = match a.get(2) {
        None => Takeover::Manual,
        Some(o) if is(o, "force") => Takeover::Force,
        Some(o) if is(o, "takeover") => Takeover::Takeover,
        Some(_) => return Err(RedisError::new(error::SYNTAX)),
    };
    let me = node.me;
    let m = &node.shared.membership;
    let view = m.view(me);
    let Some(master) = view.nodes[me].master else {
        return Err(error::err(
            "ERR You should send CLUSTER FAILOVER to a replica",
        ));
    };
    if how == Takeover::Manual && (view.nodes[master].fail || view.nodes[master].unreachable()) {
        return Err(error::err(
            "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE",
        ));
    }
    // Redis answers at once and fails over in the background; so does this node, once this
    // command has released its lock.
    let shared = node.shared.clone();
    shared.rt.clone().spawn(async move {
        let _ops = shared.ops.lock().await;
        ops::failover(&shared, me, how).await;
    });
    Ok(Reply::ok())
}
