//! How many nodes Redis's radix tree (rax.c) has for a set of 16-byte keys: XINFO STREAM's
//! `radix-tree-nodes` and the rax part of MEMORY USAGE.
//!
//! rax keeps a compressed trie whose shape depends only on the keys (insertions split
//! compressed nodes, deletions merge them back), so the count is computed from the sorted
//! keys: one node for the root, one per branching prefix below it, one per key (the leaf
//! after its last byte), and one more for every edge longer than a byte that leaves a
//! branching node (its first byte is in the branching node, the rest in a compressed node).

/// The number of rax nodes holding `keys`, which must be sorted and distinct.
pub(super) fn rax_nodes(keys: impl Iterator<Item = [u8; 16]>) -> usize {
    const DEPTH: usize = 16;
    let mut n = 0usize;
    let mut internal = 0usize;
    let mut extra = 0usize;
    // Depths of the branching prefixes on the current path, shallowest first.
    let mut stack: Vec<usize> = Vec::new();
    let mut shallowest = usize::MAX;
    let mut prev: Option<[u8; 16]> = None;
    // The LCP between the previous key and the one before it.
    let mut lcp_before: Option<usize> = None;
    let leaf_edge = |parent: Option<usize>, extra: &mut usize| {
        if let Some(d) = parent {
            if DEPTH - d > 1 {
                *extra += 1;
            }
        }
    };
    for k in keys {
        n += 1;
        if let Some(p) = prev {
            let l = p.iter().zip(k.iter()).take_while(|(a, b)| a == b).count();
            // The previous key's parent is the deeper of its two neighbouring prefixes.
            let parent = Some(lcp_before.map_or(l, |b| b.max(l)));
            leaf_edge(parent, &mut extra);
            while let Some(&top) = stack.last() {
                if top <= l {
                    break;
                }
                stack.pop();
                let parent = stack.last().map_or(l, |&t| t.max(l));
                if top - parent > 1 {
                    extra += 1;
                }
            }
            if stack.last().is_none_or(|&t| t < l) {
                stack.push(l);
                internal += 1;
                shallowest = shallowest.min(l);
            }
            lcp_before = Some(l);
        }
        prev = Some(k);
    }
    if n == 0 {
        return 1;
    }
    // The last key's parent is the prefix it shares with the key before it.
    leaf_edge(lcp_before, &mut extra);
    while let Some(top) = stack.pop() {
        if let Some(&parent) = stack.last() {
            if top - parent > 1 {
                extra += 1;
            }
        }
    }
    let root = usize::from(shallowest != 0);
    root + internal + n + extra
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ms: u64, seq: u64) -> [u8; 16] {
        ((u128::from(ms) << 64) | u128::from(seq)).to_be_bytes()
    }

    #[test]
    fn an_empty_tree_is_its_root_and_one_key_adds_its_leaf() {
        assert_eq!(rax_nodes(std::iter::empty()), 1);
        assert_eq!(rax_nodes([key(5, 0)].into_iter()), 2);
    }

    #[test]
    fn keys_differing_in_the_last_byte_share_one_branching_node() {
        // Root compressed over 15 bytes, one branching node, two leaves.
        assert_eq!(rax_nodes([key(1, 1), key(1, 2)].into_iter()), 4);
        assert_eq!(rax_nodes([key(1, 1), key(1, 2), key(1, 3)].into_iter()), 5);
    }

    #[test]
    fn an_edge_longer_than_a_byte_adds_a_compressed_node() {
        // Branching at byte 7 (ms differs in its last byte): each leaf hangs 8 bytes below,
        // so each edge is a branching byte plus a compressed node.
        assert_eq!(rax_nodes([key(1, 0), key(2, 0)].into_iter()), 1 + 1 + 2 + 2);
    }
}
