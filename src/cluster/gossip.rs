//! How the slot tables of the connected nodes of one process converge, by Redis Cluster's
//! rules for what a node learns from the others (cluster.c's clusterUpdateSlotsConfigWith
//! and the UPDATE message), applied at once instead of over the bus:
//!
//! - a master *claims* the slots its own table gives to itself, with its config epoch;
//! - a node rebinds a slot to a claimer when the slot is unbound or *unclaimed* in its table
//!   (bound to a node that no longer claims it), or bound to a node with a smaller config
//!   epoch, unless it is importing that slot;
//! - a slot bound to a node that stopped claiming it stays bound (the others keep sending
//!   clients to it): only the node that ran CLUSTER DELSLOTS forgets it;
//! - a master claiming a slot that another node binds to a claiming master with a greater
//!   epoch learns that owner (the UPDATE message) and stops claiming it.
//!
//! Every step binds a slot to a greater epoch or an unclaimed slot to a claimer, so the
//! rounds end; they are bounded anyway.

use super::slot::SLOTS;
use super::topology::{NodeIx, Topology};

/// Rounds of [`converge`] at most (one or two suffice: every node hears every other).
const MAX_ROUNDS: usize = 8;

/// Whether `n` claims `slot` in its own table.
fn claims(own: &[Topology], n: NodeIx, slot: u16) -> bool {
    own[n].owner(slot) == Some(n) && own[n].nodes[n].is_master()
}

/// The claimer with the greatest config epoch of every slot, among the connected masters
/// (`roles` gives roles and epochs).
pub fn best_claims(
    own: &[Topology],
    roles: &Topology,
    connected: &[bool],
) -> Vec<Option<NodeIx>> {
    let mut best: Vec<Option<NodeIx>> = vec![None; SLOTS];
    for n in 0..own.len() {
        if !connected[n] || !roles.nodes[n].is_master() {
            continue;
        }
        let epoch = roles.nodes[n].config_epoch;
        for s in 0..SLOTS as u16 {
            if own[n].owner(s) != Some(n) {
                continue;
            }
            let b = &mut best[s as usize];
            if b.is_none_or(|o| roles.nodes[o].config_epoch < epoch) {
                *b = Some(n);
            }
        }
    }
    best
}

/// Let the slot tables in `own` of the `connected` nodes learn from each other (see the
/// module documentation). Roles, epochs and open slots come from `roles`, the
/// configuration the connected nodes share. True if any table changed.
pub fn converge(own: &mut [Topology], roles: &Topology, connected: &[bool]) -> bool {
    let epoch = |n: NodeIx| roles.nodes[n].config_epoch;
    let mut any = false;
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        let best = best_claims(own, roles, connected);
        // What each node hears: every claim, the greatest epoch's first.
        for y in 0..own.len() {
            if !connected[y] {
                continue;
            }
            for s in 0..SLOTS as u16 {
                let Some(c) = best[s as usize] else { continue };
                let cur = own[y].owner(s);
                if cur == Some(c) || roles.nodes[y].importing.contains_key(&s) {
                    continue;
                }
                let unclaimed = match cur {
                    None => true,
                    // A node cut off is believed to claim what it claimed.
                    Some(o) => connected[o] && !claims(own, o, s),
                };
                if unclaimed || cur.is_some_and(|o| epoch(o) < epoch(c)) {
                    own[y].assign(s, Some(c));
                    changed = true;
                }
            }
        }
        // UPDATE: a master claiming a slot someone binds to a claiming master with a
        // greater epoch rebinds it to that master.
        for s in 0..SLOTS as u16 {
            let mut newest: Option<NodeIx> = None;
            for y in 0..own.len() {
                if !connected[y] {
                    continue;
                }
                let Some(o) = own[y].owner(s) else { continue };
                if connected[o] && !claims(own, o, s) {
                    continue;
                }
                if newest.is_none_or(|n| epoch(n) < epoch(o)) {
                    newest = Some(o);
                }
            }
            let Some(o) = newest else { continue };
            for x in 0..own.len() {
                if x != o
                    && connected[x]
                    && claims(own, x, s)
                    && roles.nodes[x].is_master()
                    && epoch(x) < epoch(o)
                    && !roles.nodes[x].importing.contains_key(&s)
                {
                    own[x].assign(s, Some(o));
                    changed = true;
                }
            }
        }
        any |= changed;
        if !changed {
            break;
        }
    }
    any
}
