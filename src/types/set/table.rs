//! The hashtable encoding: members in a dense array indexed by a hash table, and the
//! process-wide hasher that set and sorted-set tables share.

use std::sync::OnceLock;

use ahash::RandomState;
use hashbrown::HashTable;

use super::DictModel;

/// The hash-table encoding: members in a dense array (O(1) uniform random access; removal
/// swaps the last member into the hole) and a table of their positions keyed by member.
#[derive(Clone)]
pub struct SetTable {
    pub(super) members: Vec<Box<[u8]>>,
    pub(super) index: HashTable<u32>,
    /// What Redis's dict for the same operations would look like, for MEMORY USAGE.
    pub(super) dict: DictModel,
}

impl SetTable {
    pub(super) fn find(&self, member: &[u8]) -> Option<usize> {
        let members = &self.members;
        self.index
            .find(hash_bytes(member), |&i| &*members[i as usize] == member)
            .map(|&i| i as usize)
    }

    /// Append a member known to be absent.
    pub(super) fn push_new(&mut self, member: &[u8]) {
        let i = self.members.len() as u32;
        self.members.push(member.into());
        let members = &self.members;
        self.index
            .insert_unique(hash_bytes(member), i, |&j| hash_bytes(&members[j as usize]));
    }

    pub(super) fn add(&mut self, member: &[u8]) -> bool {
        // dictAddRaw: one rehash step, then the lookup that may expand the table.
        self.dict.rehash_step();
        if self.find(member).is_some() {
            return false;
        }
        self.dict.expand_if_needed(self.members.len());
        self.push_new(member);
        true
    }

    pub(super) fn remove(&mut self, member: &[u8]) -> bool {
        match self.find(member) {
            Some(i) => {
                self.remove_at(i);
                true
            }
            None => {
                self.dict.rehash_step();
                false
            }
        }
    }

    /// Remove the member at position `i`, moving the last member into its place.
    pub(super) fn remove_at(&mut self, i: usize) -> Box<[u8]> {
        // dictDelete (a rehash step), then setTypeRemove's htNeedsResize/dictResize.
        self.dict.rehash_step();
        let members = &self.members;
        let h = hash_bytes(&members[i]);
        if let Ok(e) = self.index.find_entry(h, |&j| j as usize == i) {
            e.remove();
        }
        let last = self.members.len() - 1;
        if i != last {
            let h = hash_bytes(&self.members[last]);
            if let Some(slot) = self.index.find_mut(h, |&j| j as usize == last) {
                *slot = i as u32;
            }
        }
        let out = self.members.swap_remove(i);
        self.dict.resize_if_needed(self.members.len());
        self.shrink();
        out
    }

    /// Give memory back once the set has shrunk to a quarter of its capacity.
    fn shrink(&mut self) {
        let n = self.members.len();
        if n > 16 && n * 4 < self.members.capacity() {
            self.members.shrink_to(n * 2);
            let members = &self.members;
            self.index
                .shrink_to(n * 2, |&j| hash_bytes(&members[j as usize]));
        }
    }
}

/// One process-wide hasher for set and sorted-set tables (randomly keyed at start, so
/// members cannot be chosen to collide), instead of 32 bytes of state per value.
pub(in crate::types) fn hash_bytes(b: &[u8]) -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    STATE.get_or_init(RandomState::new).hash_one(b)
}
