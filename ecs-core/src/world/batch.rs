//! Inserts and removes for many entities at once. Each item does what [`World::insert`] or
//! [`World::remove`] would do, in order; a run of consecutive entities of one store moves in
//! one call of the transition's move (declared, or the edge to a dynamic store), with the
//! row's body in a loop ([`move_rows`](super::moves::move_rows)): the transition lookup, the
//! indirect call and its register saves are paid once per run instead of once per entity, and
//! the rows the run vacates are filled once it is over, each at most once. Every entity ends
//! with the values the one-by-one calls would give it; a store's rows may come in another
//! order.

use super::{World, WorldError};
use crate::entity::Entity;
use crate::model::MoveBatch;
use crate::model::{ComponentOf, WorldModel};
use std::mem::size_of;

impl<M: WorldModel> World<M> {
    /// Adds each `(entity, component)` pair as [`World::insert`] would, in order: an entity
    /// that already has a `C` gets the new value (the old one is dropped), one that lacks it
    /// moves to the store of its components plus `C`. Consecutive entities of one store move
    /// together, which makes a batch faster than a loop of `insert`
    /// (`docs/benchmarks.md`, add_remove: half the time). Each entity ends with the values the
    /// loop would give it; the rows of a store may come in another order than the loop's
    /// (the same one on every run).
    ///
    /// An item `insert` would refuse (a dead or stale entity, or an undeclared set in a
    /// world that allows none) is skipped and its value dropped; the others are still
    /// applied, and the first refusal is returned once every item has been tried.
    pub fn insert_batch<C: ComponentOf<M>>(
        &mut self,
        items: impl IntoIterator<Item = (Entity, C)>,
    ) -> Result<(), WorldError> {
        let mut items = Items::new(items.into_iter().collect());
        let mut vacated = Vec::new();
        let mut first_error = None;
        while let Some(entity) = items.next_entity() {
            if let Some(n) = self.insert_run(&mut items, entity, &mut vacated) {
                items.next += n;
                continue;
            }
            let value = items.take_next();
            match self.insert(entity, value) {
                Ok(old) => drop(old),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The run of `items` from `items.next` (whose entity is `entity`) along the move that
    /// inserts `C` into the entity's store: the declared one, typed or byte-wise, or else the
    /// edge to the dynamic store of its set plus `C`. `None` when the item goes one by one (a
    /// sparse `C`, a dead entity, one that has a `C`, a strict world's undeclared set);
    /// else how many items moved. `vacated` is the moves' scratch room (see [`MoveBatch`]).
    #[inline]
    fn insert_run<C: ComponentOf<M>>(
        &mut self,
        items: &mut Items<C>,
        entity: Entity,
        vacated: &mut Vec<u32>,
    ) -> Option<usize> {
        if C::SPARSE {
            return None;
        }
        let loc = self.locations.locate(entity)?;
        let declared = if (loc.store as usize) < self.declared() {
            match self.tables.slot_or_insert(loc.store, C::ID) {
                Ok(_) => return None,
                Err(t) => t,
            }
        } else if self.slot_index(loc.store, C::ID).is_some() {
            return None;
        } else {
            None
        };
        let (entities, values, len) = items.rest();
        let stride = size_of::<(Entity, C)>();
        let batch = MoveBatch::new(entities, stride, values.cast(), stride, vacated, len);
        let Some(t) = declared else {
            let edge = self.edge(loc.store, C::ID)?;
            // SAFETY: the edge inserts C::ID from `loc.store` (the entity lacks it, checked
            // above), where the first item's entity lives at `loc`; the items' entities and
            // values are readable at the batch's strides, and the values are owned Cs that the
            // move takes for the items it reports.
            return Some(unsafe {
                self.move_along(entity, loc, edge, values.cast(), Some(&batch))
            });
        };
        // SAFETY: `t` inserts component C::ID into `loc.store`, where the first item's entity
        // lives at `loc`; the items' entities and values are readable at the batch's strides,
        // and the values are owned Cs that the move takes for the items it reports (`Items`
        // then treats them as moved).
        Some(unsafe { self.move_entity(entity, loc, t, C::ID, values.cast(), Some(&batch)) })
    }

    /// Takes the `C` of each entity as [`World::remove`] would, in order, appending the
    /// removed values to `removed` (whose capacity can be kept from frame to frame).
    /// Consecutive entities of one store move together, which makes a batch faster than a
    /// loop of `remove`; as for [`World::insert_batch`], a store's rows may come in another
    /// order than the loop's.
    ///
    /// An entity `remove` would refuse (dead, stale, or without a `C`) is skipped and
    /// unchanged; the others are still removed, and the first refusal is returned once every
    /// entity has been tried. The values removed before and after it are in `removed` either
    /// way.
    pub fn remove_batch<C: ComponentOf<M>>(
        &mut self,
        entities: &[Entity],
        removed: &mut Vec<C>,
    ) -> Result<(), WorldError> {
        // Each entity adds at most one value: the moves below write into this room.
        removed.reserve(entities.len());
        let mut vacated = Vec::new();
        let mut first_error = None;
        let mut i = 0;
        while i < entities.len() {
            if let Some(n) = self.remove_run(&entities[i..], removed, &mut vacated) {
                i += n;
                continue;
            }
            match self.remove::<C>(entities[i]) {
                Ok(value) => removed.push(value),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
            i += 1;
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The run of `entities` from the first along the move that removes `C` from its store
    /// (declared, or else the edge to a dynamic store), appending the values to `removed`
    /// (which has room for one per entity); `None` when the first goes one by one (a sparse
    /// `C`, a dead entity, one without a `C`, a strict world's undeclared set); else how many
    /// entities moved. `vacated` is the moves' scratch room (see [`MoveBatch`]).
    #[inline]
    fn remove_run<C: ComponentOf<M>>(
        &mut self,
        entities: &[Entity],
        removed: &mut Vec<C>,
        vacated: &mut Vec<u32>,
    ) -> Option<usize> {
        if C::SPARSE {
            return None;
        }
        let entity = *entities.first()?;
        let loc = self.locations.locate(entity)?;
        let declared = if (loc.store as usize) < self.declared() {
            self.tables.remove_move(loc.store, C::ID)
        } else {
            None
        };
        if declared.is_none() {
            self.slot_index(loc.store, C::ID)?;
        }
        assert!(removed.capacity() - removed.len() >= entities.len());
        // SAFETY: within the capacity (asserted above): room for a value per entity.
        let out = unsafe { removed.as_mut_ptr().add(removed.len()) };
        let batch = MoveBatch::new(
            entities.as_ptr(),
            size_of::<Entity>(),
            out.cast(),
            size_of::<C>(),
            vacated,
            entities.len(),
        );
        let n = match declared {
            // SAFETY: `t` removes component C::ID from `loc.store`, where the first entity
            // lives at `loc`; the entities are readable, and the move writes each removed C
            // into the next slot of `removed`'s room.
            Some(t) => unsafe { self.move_entity(entity, loc, t, C::ID, out.cast(), Some(&batch)) },
            None => {
                let edge = self.edge(loc.store, C::ID)?;
                // SAFETY: the edge removes C::ID from `loc.store` (the entity has it, checked
                // above), where the first entity lives at `loc`; as above for the batch.
                unsafe { self.move_along(entity, loc, edge, out.cast(), Some(&batch)) }
            }
        };
        // SAFETY: the move wrote `n` values into the room after the length.
        unsafe { removed.set_len(removed.len() + n) };
        Some(n)
    }
}

/// A batch's `(entity, value)` pairs, owned value by value: the values before `next` were
/// moved into the world (or taken out to insert), and the rest are dropped with the batch
/// (a panic of their `Drop` is caught, as for a refused value), even while unwinding.
struct Items<C> {
    pairs: Vec<(Entity, C)>,
    len: usize,
    next: usize,
}

impl<C> Items<C> {
    fn new(mut pairs: Vec<(Entity, C)>) -> Self {
        let len = pairs.len();
        // SAFETY: from here on `Items` owns the values and drops the ones not moved out; the
        // vector only keeps the allocation.
        unsafe { pairs.set_len(0) };
        Items {
            pairs,
            len,
            next: 0,
        }
    }

    /// The entity of the next item, if any is left.
    fn next_entity(&self) -> Option<Entity> {
        // SAFETY: `next < len`: an item of the original vector, not yet moved out.
        (self.next < self.len).then(|| unsafe { (*self.pairs.as_ptr().add(self.next)).0 })
    }

    /// Moves the next item's value out (the caller owns it).
    fn take_next(&mut self) -> C {
        assert!(self.next < self.len);
        // SAFETY: item `next` holds a value not yet moved out; `next` then moves past it.
        let value = unsafe { std::ptr::read(&(*self.pairs.as_ptr().add(self.next)).1) };
        self.next += 1;
        value
    }

    /// Where the items from `next` on start (the first one's entity and value) and how many
    /// there are.
    fn rest(&mut self) -> (*const Entity, *mut C, usize) {
        assert!(self.next < self.len, "a run starts at an item");
        // SAFETY: `next < len`: an item within the allocation.
        let item = unsafe { self.pairs.as_mut_ptr().add(self.next) };
        // SAFETY: `item` points to an initialized pair; the field addresses are computed
        // without reading.
        unsafe {
            (
                std::ptr::addr_of!((*item).0),
                std::ptr::addr_of_mut!((*item).1),
                self.len - self.next,
            )
        }
    }
}

impl<C> Drop for Items<C> {
    fn drop(&mut self) {
        while self.next < self.len {
            super::spawn::drop_quietly(self.take_next());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_model::{world, A, B, S};
    use crate::{Entity, WorldError};

    /// An entity's `(A, B, S)` values, if it is live.
    type Contents = Option<(u32, Option<u32>, Option<u32>)>;

    /// Every entity's values, in the order of `es`.
    fn contents(w: &crate::World<crate::test_model::Model>, es: &[Entity]) -> Vec<Contents> {
        es.iter()
            .map(|&e| {
                let a = w.get::<A>(e)?.0;
                Some((a, w.get::<B>(e).map(|b| b.0), w.get::<S>(e).map(|s| s.0)))
            })
            .collect()
    }

    #[test]
    fn an_insert_batch_matches_inserts_one_by_one_and_reports_the_first_refusal() {
        let (mut batch, es) = world();
        let (mut single, _) = world();
        let dead = es[3];
        assert!(batch.despawn(dead) && single.despawn(dead));
        // A run of two in JustA, an entity that has a B (replaced), a dead one, a duplicate.
        let items = [
            (es[0], 10),
            (es[2], 20),
            (es[1], 30),
            (dead, 40),
            (es[0], 50),
        ];
        let got = batch.insert_batch(items.iter().map(|&(e, v)| (e, B(v))));
        let mut first = None;
        for &(e, v) in &items {
            if let Err(err) = single.insert(e, B(v)) {
                first.get_or_insert(err);
            }
        }
        assert_eq!(got, Err(WorldError::NoSuchEntity(dead)));
        assert_eq!(first, Some(WorldError::NoSuchEntity(dead)));
        assert_eq!(contents(&batch, &es), contents(&single, &es));
        assert_eq!(
            contents(&batch, &es),
            [
                Some((1, Some(50), None)),
                Some((2, Some(30), None)),
                Some((4, Some(20), None)),
                None
            ]
        );
        batch.check_invariants().unwrap();
    }

    #[test]
    fn a_remove_batch_appends_every_removed_value_in_order() {
        let (mut w, es) = world();
        let mut removed = vec![B(99)];
        // es[0] has no B: skipped and reported; es[3] twice: the second is refused too.
        let got = w.remove_batch::<B>(&[es[1], es[0], es[3], es[3]], &mut removed);
        assert_eq!(
            got,
            Err(WorldError::MissingComponent {
                entity: es[0],
                signature: "JustA",
                component: "B",
            })
        );
        assert_eq!(removed, [B(99), B(3), B(6)]);
        assert_eq!(
            contents(&w, &es),
            [
                Some((1, None, None)),
                Some((2, None, None)),
                Some((4, None, None)),
                Some((5, None, None))
            ]
        );
        w.check_invariants().unwrap();
    }

    #[test]
    fn a_run_fills_the_rows_it_vacated_from_the_surviving_last_rows() {
        use crate::test_model::{JustA, Model};
        let mut w = crate::World::<Model>::new();
        let es: Vec<Entity> = (0..6).map(|i| w.spawn(JustA(A(i)))).collect();
        let store = |w: &crate::World<Model>, e| w.locations.locate(e).unwrap().store as usize;
        let rows = |w: &crate::World<Model>, s: usize| w.stores[s].entities().to_vec();
        let just_a = store(&w, es[0]);
        // es[1] and es[4] leave: row 1 takes row 5 (row 4 left too), and 4 rows stay.
        w.insert_batch([(es[1], B(10)), (es[4], B(40))]).unwrap();
        assert_eq!(rows(&w, just_a), [es[0], es[5], es[2], es[3]]);
        let ab = store(&w, es[1]);
        assert_eq!(rows(&w, ab), [es[1], es[4]]);
        assert_eq!(w.get::<A>(es[5]), Some(&A(5)));
        assert_eq!(
            (w.get::<A>(es[4]), w.get::<B>(es[4])),
            (Some(&A(4)), Some(&B(40)))
        );
        w.check_invariants().unwrap();
        // A run that empties its store: both come back, in the batch's order.
        let mut removed = Vec::new();
        w.remove_batch::<B>(&[es[4], es[1]], &mut removed).unwrap();
        assert_eq!(removed, [B(40), B(10)]);
        assert!(rows(&w, ab).is_empty());
        assert_eq!(rows(&w, just_a), [es[0], es[5], es[2], es[3], es[4], es[1]]);
        w.check_invariants().unwrap();
    }

    #[test]
    fn sparse_components_go_through_the_one_by_one_path() {
        let (mut w, es) = world();
        w.insert_batch(es.iter().map(|&e| (e, S(e.index()))))
            .unwrap();
        let mut removed = Vec::new();
        w.remove_batch::<S>(&es[..2], &mut removed).unwrap();
        assert_eq!(removed, [S(es[0].index()), S(es[1].index())]);
        assert_eq!(w.get::<S>(es[2]).unwrap().0, es[2].index());
        w.check_invariants().unwrap();
    }
}
