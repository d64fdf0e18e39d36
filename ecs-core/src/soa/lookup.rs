//! Entity → instance lookups: how a [`SoaStore`](super::SoaStore) finds an entity's row.
//! [`HashLookup`] is the classic SoA manager's hash index, [`DenseLookup`] its per-entity-index array.

use rustc_hash::FxHashMap;

use crate::entity::Entity;

/// Instance value meaning "no instance" in [`DenseLookup`].
const NIL: u32 = u32::MAX;

mod sealed_lookup {
    #[doc(hidden)]
    pub trait Sealed {}
}

/// How a store maps an entity to its instance: [`HashLookup`] or [`DenseLookup`]. Sealed. Every
/// implementation matches the full entity, generation included. Hidden with the store: a user
/// picks one with `#[soa(lookup = "hash")]` or `"dense"`.
#[doc(hidden)]
pub trait Lookup: Default + sealed_lookup::Sealed {
    /// A short name for `Debug` output.
    const NAME: &'static str;

    /// The instance of `entity`, if it has one. `entities` is the store's entity column.
    #[doc(hidden)]
    fn find(&self, entity: Entity, entities: &[Entity]) -> Option<u32>;

    /// Records that `entity` (which has no entry) now owns instance `instance`.
    #[doc(hidden)]
    fn insert(&mut self, entity: Entity, instance: u32, entities: &[Entity]);

    /// Forgets `entity`, whose entry is `instance`.
    #[doc(hidden)]
    fn remove(&mut self, entity: Entity, instance: u32);

    /// `entity`'s instance moved from `from` to `to`.
    #[doc(hidden)]
    fn relocate(&mut self, entity: Entity, from: u32, to: u32);

    /// Forgets every entry.
    #[doc(hidden)]
    fn clear(&mut self);

    /// Prepares for `additional` more entries.
    #[doc(hidden)]
    fn reserve(&mut self, additional: usize);

    /// Checks the implementation's own invariants against the store's entity column.
    #[cfg(test)]
    fn assert_invariants(&self, _entities: &[Entity]) {}
}

/// The classic SoA manager's hash index, the default: an [`FxHashMap`] from the full entity to its instance. Uses
/// memory in proportion to the number of instances.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct HashLookup {
    map: FxHashMap<Entity, u32>,
}

impl sealed_lookup::Sealed for HashLookup {}

impl Lookup for HashLookup {
    const NAME: &'static str = "hash";

    #[inline]
    fn find(&self, entity: Entity, _entities: &[Entity]) -> Option<u32> {
        self.map.get(&entity).copied()
    }

    fn insert(&mut self, entity: Entity, instance: u32, _entities: &[Entity]) {
        self.map.insert(entity, instance);
    }

    fn remove(&mut self, entity: Entity, _instance: u32) {
        self.map.remove(&entity);
    }

    fn relocate(&mut self, entity: Entity, _from: u32, to: u32) {
        self.map.insert(entity, to);
    }

    fn clear(&mut self) {
        self.map.clear();
    }

    fn reserve(&mut self, additional: usize) {
        self.map.reserve(additional);
    }
}

/// The classic SoA manager's direct map: one `u32` per entity index (nil when absent), for components almost
/// every entity has. A lookup is one array read plus a check of the entity column, so a stale
/// id (same index, older generation) finds nothing.
///
/// The classic SoA manager's array holds one instance per index, but with lazy GC a dead entity's component can
/// outlive the reuse of its index. The newest entity then takes the slot and the older one moves
/// to a side map (`displaced`, almost always empty), so every instance stays reachable.
#[doc(hidden)]
#[derive(Clone, Debug, Default)]
pub struct DenseLookup {
    /// Instance per entity index, or `NIL`.
    slots: Vec<u32>,
    /// Instances of entities whose index slot holds another entity's instance. Invariant: a
    /// displaced entity's slot is not `NIL`.
    displaced: FxHashMap<Entity, u32>,
}

impl sealed_lookup::Sealed for DenseLookup {}

impl Lookup for DenseLookup {
    const NAME: &'static str = "dense";

    #[inline]
    fn find(&self, entity: Entity, entities: &[Entity]) -> Option<u32> {
        let i = *self.slots.get(entity.index() as usize)?;
        if i == NIL {
            None
        } else if entities.get(i as usize) == Some(&entity) {
            Some(i)
        } else if self.displaced.is_empty() {
            None
        } else {
            self.displaced.get(&entity).copied()
        }
    }

    fn insert(&mut self, entity: Entity, instance: u32, entities: &[Entity]) {
        let idx = entity.index() as usize;
        if idx >= self.slots.len() {
            self.slots.resize(idx + 1, NIL);
        }
        let held = self.slots[idx];
        if held != NIL {
            // Another generation of this index has an instance: move it aside.
            self.displaced.insert(entities[held as usize], held);
        }
        self.slots[idx] = instance;
    }

    fn remove(&mut self, entity: Entity, instance: u32) {
        let idx = entity.index() as usize;
        if self.slots.get(idx) == Some(&instance) {
            self.slots[idx] = NIL;
            if !self.displaced.is_empty() {
                // Keep the invariant: promote a displaced entity with the same index, if any.
                let promoted = self
                    .displaced
                    .iter()
                    .find(|(e, _)| e.index() as usize == idx)
                    .map(|(e, i)| (*e, *i));
                if let Some((e, i)) = promoted {
                    self.displaced.remove(&e);
                    self.slots[idx] = i;
                }
            }
        } else {
            self.displaced.remove(&entity);
        }
    }

    fn relocate(&mut self, entity: Entity, from: u32, to: u32) {
        let idx = entity.index() as usize;
        if self.slots.get(idx) == Some(&from) {
            self.slots[idx] = to;
        } else {
            self.displaced.insert(entity, to);
        }
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.displaced.clear();
    }

    fn reserve(&mut self, _additional: usize) {}

    #[cfg(test)]
    fn assert_invariants(&self, entities: &[Entity]) {
        let mut reached = 0;
        for (idx, &i) in self.slots.iter().enumerate() {
            if i != NIL {
                assert_eq!(entities[i as usize].index() as usize, idx);
                reached += 1;
            }
        }
        for (e, &i) in &self.displaced {
            assert_eq!(entities[i as usize], *e);
            let slot = self.slots[e.index() as usize];
            assert_ne!(slot, NIL, "displaced entity with a free slot");
            assert_ne!(slot, i);
        }
        assert_eq!(reached + self.displaced.len(), entities.len());
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::entity::Generation;
    use crate::soa::{ent, Instance, SoaStore};

    #[test]
    fn stale_ids_find_nothing_in_either_lookup() {
        fn run<L: Lookup>(s: &mut SoaStore<(u32,), L>) {
            let old = ent(7, 0);
            let new = ent(7, 1);
            s.create(old, (1,)).unwrap();
            assert_eq!(s.lookup(new), None, "same index, other generation");
            assert_eq!(s.lookup(ent(8, 0)), None);
            assert_eq!(s.lookup(ent(100_000, 0)), None, "beyond the dense array");
            // The old entity died but was not collected; its index is reused.
            s.create(new, (2,)).unwrap();
            assert_eq!(s.lookup(old), Some(Instance::new(0)));
            assert_eq!(s.lookup(new), Some(Instance::new(1)));
            assert_eq!(s.fields().0[s.lookup(new).unwrap().index()], 2);
            assert!(s.destroy_entity(old));
            assert_eq!(s.lookup(old), None);
            assert_eq!(s.lookup(new), Some(Instance::new(0)));
            s.create(old, (3,)).unwrap();
            assert!(s.destroy_entity(new));
            assert_eq!(s.lookup(new), None);
            assert_eq!(s.lookup(old), Some(Instance::new(0)));
            assert_eq!(s.fields().0, &[3]);
        }
        let mut h: SoaStore<(u32,), HashLookup> = SoaStore::new();
        run(&mut h);
        h.assert_invariants();
        let mut d: SoaStore<(u32,), DenseLookup> = SoaStore::new();
        run(&mut d);
        d.assert_invariants();
    }

    #[test]
    fn dense_and_hash_lookups_agree_on_random_operations() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut h: SoaStore<(u64,), HashLookup> = SoaStore::new();
        let mut d: SoaStore<(u64,), DenseLookup> = SoaStore::new();
        let mut model: HashMap<Entity, u64> = HashMap::new();
        // Under Miri each step's 96 lookups through the SoA buffer cost about 0.4 s.
        let steps: u64 = if cfg!(miri) { 100 } else { 20_000 };
        for step in 0..steps {
            // Few indices, several generations: lots of displaced entries.
            let e = ent(next(12) as u32, next(4) as Generation);
            match next(3) {
                0 => {
                    let expect_ok = !model.contains_key(&e);
                    assert_eq!(h.create(e, (step,)).is_ok(), expect_ok);
                    assert_eq!(d.create(e, (step,)).is_ok(), expect_ok);
                    model.entry(e).or_insert(step);
                }
                1 => {
                    let had = model.remove(&e).is_some();
                    assert_eq!(h.destroy_entity(e), had);
                    assert_eq!(d.destroy_entity(e), had);
                }
                _ if !h.is_empty() => {
                    let row = next(h.len() as u64) as u32;
                    let victim = h.entity(Instance::new(row));
                    h.destroy(Instance::new(row));
                    d.destroy_entity(victim);
                    model.remove(&victim);
                }
                _ => {}
            }
            assert_eq!(h.len(), model.len());
            assert_eq!(d.len(), model.len());
            for idx in 0..12 {
                for g in 0..4 {
                    let e = ent(idx, g);
                    let want = model.get(&e).copied();
                    assert_eq!(h.lookup(e).map(|i| h.fields().0[i.index()]), want);
                    assert_eq!(d.lookup(e).map(|i| d.fields().0[i.index()]), want);
                }
            }
            if step % 64 == 0 {
                h.assert_invariants();
                d.assert_invariants();
            }
        }
    }
}
