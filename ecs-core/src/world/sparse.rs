//! The world's sparse components (`#[component(sparse)]`): one [`SparseSet`] per component,
//! beside the stores. An entity's row lives in the store of its store components only; its
//! sparse components are found by entity. So `insert` and `remove` of a sparse component move
//! no row: they set or clear one slot of its set. Despawning an entity takes its values out of
//! every set before its row goes, and drops them once the world is consistent again. Queries
//! select rows by these sets (`query.rs`); generated system passes look values up through
//! [`SparseView`](crate::__private::SparseView)s (`schedule/sparse.rs`). Either way a row's
//! sparse value is found by its entity: a lookup per row where a column is a walk.

use super::{Location, World, WorldError};
use crate::entity::Entity;
use crate::model::{ComponentOf, WorldModel};
use crate::set::AnyComponentBits;
use crate::storage::{Column, SparseSet};

/// The sparse sets of a world, and where each component's set is.
pub(super) struct Sparse<S> {
    /// One set per sparse component, in component id order.
    sets: Box<[SparseSet]>,
    /// Per component id, the index of its set, or `u32::MAX` for a store component.
    index: Box<[u32]>,
    /// The sparse components.
    mask: S,
}

impl<S: AnyComponentBits> Sparse<S> {
    /// The sets of model `M`'s sparse components, empty.
    pub(super) fn new<M: WorldModel<Set = S>>() -> Self {
        let mut sets = Vec::new();
        let mut mask = S::EMPTY;
        let index = M::components()
            .iter()
            .enumerate()
            .map(|(c, info)| {
                if info.sparse {
                    sets.push(SparseSet::new(&info.ty));
                    mask = mask.with(c as u32);
                    sets.len() as u32 - 1
                } else {
                    u32::MAX
                }
            })
            .collect();
        Sparse {
            sets: sets.into_boxed_slice(),
            index,
            mask,
        }
    }

    /// The set of component `c`, if it is sparse.
    #[inline]
    pub(super) fn set(&self, c: u32) -> Option<&SparseSet> {
        self.sets.get(*self.index.get(c as usize)? as usize)
    }

    /// The set of component `c`, mutable, if it is sparse.
    #[inline]
    pub(super) fn set_mut(&mut self, c: u32) -> Option<&mut SparseSet> {
        self.sets.get_mut(*self.index.get(c as usize)? as usize)
    }

    /// The sets, lent to a pass stamped `tick`.
    pub(super) fn pass_view(&self, tick: u64) -> crate::__private::SparseSets<'_> {
        crate::__private::SparseSets {
            sets: &self.sets,
            index: &self.index,
            tick,
        }
    }

    /// The sparse components of the model.
    #[inline]
    pub(super) fn mask(&self) -> S {
        self.mask
    }

    /// The sparse components `entity` has.
    pub(super) fn of(&self, entity: Entity) -> S {
        let mut set = S::EMPTY;
        for c in self.mask.ids() {
            if self.set(c).is_some_and(|s| s.position(entity).is_some()) {
                set = set.with(c);
            }
        }
        set
    }

    /// Takes `entity`'s values out of every set; they drop when the result does. Allocates
    /// nothing when the model has no sparse component.
    pub(super) fn take_all(&mut self, entity: Entity) -> Held {
        let mut held = Vec::new();
        for set in self.sets.iter_mut() {
            if let Some(at) = set.position(entity) {
                let mut one = Column::new(set.ty());
                one.reserve(0, 1);
                // SAFETY: `at` is a value's position; `one` has room for one value of the
                // set's type and owns it from here on (dropped by `Held`).
                unsafe { set.take(at, one.ptr_at(0)) };
                held.push(one);
            }
        }
        Held(held)
    }

    /// Empties every set, dropping the values; a panicking `Drop` still leaves every set
    /// empty (the sets after it are emptied while unwinding).
    pub(super) fn clear(&mut self) {
        fn empty(sets: &mut [SparseSet]) {
            struct Rest<'a>(&'a mut [SparseSet]);
            impl Drop for Rest<'_> {
                fn drop(&mut self) {
                    empty(self.0);
                }
            }
            if let Some((first, rest)) = sets.split_first_mut() {
                let rest = Rest(rest);
                first.clear();
                drop(rest);
            }
        }
        empty(&mut self.sets);
    }

    /// Every set is consistent and holds only entities `alive` accepts.
    pub(super) fn check(&self, alive: impl Fn(Entity) -> bool) -> Result<(), String> {
        for set in self.sets.iter() {
            set.check()?;
            if let Some(&e) = set.entities().iter().find(|&&e| !alive(e)) {
                return Err(format!(
                    "entity {e} has a sparse component but is not alive"
                ));
            }
        }
        Ok(())
    }
}

/// The sets one by one, for world states (`world/state.rs`).
impl<S: AnyComponentBits> Sparse<S> {
    /// The sets, in component id order (the order of [`Sparse::mask`]'s ids).
    pub(super) fn sets(&self) -> &[SparseSet] {
        &self.sets
    }

    /// The sets, mutable.
    pub(super) fn sets_mut(&mut self) -> &mut [SparseSet] {
        &mut self.sets
    }
}

/// Values taken out of sparse sets, each in a one-value column, dropped with it.
pub(super) struct Held(Vec<Column>);

impl Drop for Held {
    fn drop(&mut self) {
        /// Drops the values after the one being dropped, also when its `Drop` panics.
        struct Rest<'a>(&'a mut [Column]);
        impl Drop for Rest<'_> {
            fn drop(&mut self) {
                drop_each(self.0);
            }
        }
        fn drop_each(columns: &mut [Column]) {
            if let Some((first, rest)) = columns.split_first_mut() {
                let rest = Rest(rest);
                // SAFETY: each column holds exactly one initialised value, dropped once here
                // (the world is already consistent: a panic leaves nothing to undo).
                unsafe { first.drop_range(0, 1) };
                drop(rest);
            }
        }
        drop_each(&mut self.0);
    }
}

impl<M: WorldModel> World<M> {
    /// [`World::get`] of a sparse component.
    #[inline]
    pub(super) fn get_sparse<C: ComponentOf<M>>(&self, entity: Entity) -> Option<&C> {
        let set = self.sparse.set(C::ID)?;
        let at = set.position(entity)?;
        // SAFETY: the set holds values of C (its ComponentInfo's type); `at` is a value's
        // position; `&self` excludes writers.
        Some(unsafe { &*set.ptr_at(at).cast::<C>() })
    }

    /// [`World::get_mut`] of a sparse component.
    #[inline]
    pub(super) fn get_mut_sparse<C: ComponentOf<M>>(&mut self, entity: Entity) -> Option<&mut C> {
        let stamp = self.locations.stamp();
        let set = self.sparse.set_mut(C::ID)?;
        let at = set.position(entity)?;
        set.mark(at, stamp);
        // SAFETY: as in `get_sparse`; `&mut self` makes this the only reference.
        Some(unsafe { &mut *set.ptr_at(at).cast::<C>() })
    }

    /// [`World::insert`] of a sparse component: into its set, or over the entity's value.
    #[inline]
    pub(super) fn insert_sparse<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
        component: C,
    ) -> Result<Option<C>, WorldError> {
        if self.locations.locate(entity).is_none() {
            super::spawn::drop_quietly(component);
            return Err(WorldError::NoSuchEntity(entity));
        }
        let stamp = self.locations.stamp();
        let set = self
            .sparse
            .set_mut(C::ID)
            .expect("a sparse component has a set");
        if let Some(at) = set.position(entity) {
            set.mark(at, stamp);
            // SAFETY: the value at `at` is a C; `&mut self` makes this the only reference.
            let old = unsafe { &mut *set.ptr_at(at).cast::<C>() };
            return Ok(Some(std::mem::replace(old, component)));
        }
        // SAFETY: the set holds values of C; the entity has no C (checked above).
        unsafe { set.push_typed(entity, component, stamp) };
        Ok(None)
    }

    /// [`World::remove`] of a sparse component.
    #[inline]
    pub(super) fn remove_sparse<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
    ) -> Result<C, WorldError> {
        // A set holds live entities only, so finding the exact id proves it alive: the entity
        // table is asked only to word the error.
        let set = self
            .sparse
            .set_mut(C::ID)
            .expect("a sparse component has a set");
        let Some(at) = set.position(entity) else {
            return Err(match self.locations.locate(entity) {
                Some(loc) => self.missing(entity, loc, C::ID),
                None => WorldError::NoSuchEntity(entity),
            });
        };
        // SAFETY: `at` is a value's position in the set of C's values.
        Ok(unsafe { set.take_typed::<C>(at) })
    }

    /// Moves the value of sparse component `c` of the live entity at `loc` out to `value`.
    ///
    /// # Safety
    /// `c` is sparse; `value` has room for one of its values, which the caller owns after `Ok`.
    pub(super) unsafe fn remove_sparse_into(
        &mut self,
        entity: Entity,
        loc: Location,
        c: u32,
        value: *mut u8,
    ) -> Result<(), WorldError> {
        let set = self
            .sparse
            .set_mut(c)
            .expect("a sparse component has a set");
        let Some(at) = set.position(entity) else {
            return Err(self.missing(entity, loc, c));
        };
        // SAFETY: `at` is a value's position; `value` as the caller guarantees.
        unsafe { set.take(at, value) };
        Ok(())
    }

    /// [`World::insert`] of a boxed value of sparse component `c` (commands).
    pub(super) fn insert_boxed_sparse(
        &mut self,
        entity: Entity,
        c: u32,
        raw: *mut (dyn std::any::Any + Send),
    ) {
        let stamp = self.locations.stamp();
        let set = self
            .sparse
            .set_mut(c)
            .expect("a sparse component has a set");
        let size = set.ty().size;
        match set.position(entity) {
            Some(at) => {
                set.mark(at, stamp);
                // SAFETY: the box holds a value of component c, as does the set at `at`:
                // swapping bytes exchanges them, and the box (from `into_raw`) then drops the
                // old one.
                unsafe {
                    std::ptr::swap_nonoverlapping(set.ptr_at(at), raw.cast::<u8>(), size);
                    drop(Box::from_raw(raw));
                }
            }
            None => {
                // SAFETY: the box holds a value of c, moved into the set; the allocation is
                // then freed without dropping it.
                unsafe {
                    set.push(entity, raw.cast::<u8>(), stamp);
                    let layout = std::alloc::Layout::for_value(&*raw);
                    if layout.size() != 0 {
                        std::alloc::dealloc(raw.cast::<u8>(), layout);
                    }
                }
            }
        }
    }
}

impl<M: WorldModel> World<M> {
    /// The sparse components of the model.
    #[inline]
    pub(crate) fn sparse_mask(&self) -> M::Set {
        self.sparse.mask()
    }

    /// Sparse component `c`'s values for a query: (base and stride of the values, the set's
    /// slots), if `c` is sparse. A row's value is found through its entity's slot (see
    /// [`SparseSet::raw`]).
    pub(crate) fn sparse_column(&self, c: u32) -> Option<(crate::storage::RawColumn, &[u32])> {
        let set = self.sparse.set(c)?;
        let (ptr, slots) = set.raw();
        Some((
            crate::storage::RawColumn {
                ptr,
                stride: set.ty().size,
            },
            slots,
        ))
    }

    /// A mutable query may write every value of sparse component `c`: stamped for change
    /// filters.
    pub(crate) fn mark_sparse_written(&self, c: u32) {
        if let Some(set) = self.sparse.set(c) {
            set.mark_written(self.locations.stamp());
        }
    }

    /// The entities of sparse component `c`'s values, in value order, if `c` is sparse.
    pub(crate) fn sparse_entities(&self, c: u32) -> Option<&[Entity]> {
        Some(self.sparse.set(c)?.entities())
    }

    /// The rows of `rows` in store `store` whose entity passes the sparse filters `[required,
    /// excluded, changed, added]`: it has every sparse component of `required`, none of
    /// `excluded`, a value of each of `changed` written after `since`, and a value of each of
    /// `added` inserted after `since`; as runs of consecutive rows.
    pub(crate) fn sparse_rows(
        &self,
        store: usize,
        rows: std::ops::Range<usize>,
        filters: [M::Set; 4],
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        let entities = self.store_entities(store);
        self.rows_having(entities, rows, filters, since)
    }

    /// [`World::sparse_rows`] over the positions of sparse component `lead`'s set (a query
    /// walking it): all of them, as one run, when nothing else filters.
    pub(crate) fn walk_rows(
        &self,
        lead: u32,
        filters: [M::Set; 4],
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        let entities = self.sparse_entities(lead).unwrap_or(&[]);
        if entities.is_empty() {
            Vec::new()
        } else if filters.iter().all(|set| set.is_empty()) {
            std::iter::once(0..entities.len()).collect()
        } else {
            self.rows_having(entities, 0..entities.len(), filters, since)
        }
    }

    /// The rows of `rows` whose entity (in `entities`) passes the sparse filters (see
    /// [`World::sparse_rows`]), as runs.
    fn rows_having(
        &self,
        entities: &[Entity],
        rows: std::ops::Range<usize>,
        filters: [M::Set; 4],
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        let [required, excluded, changed, added] = filters.map(|mask| -> Vec<&SparseSet> {
            mask.ids().filter_map(|c| self.sparse.set(c)).collect()
        });
        let entities = &entities[rows.clone()];
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        for (row, &e) in rows.zip(entities) {
            let keep = required.iter().all(|s| s.position(e).is_some())
                && excluded.iter().all(|s| s.position(e).is_none())
                && changed
                    .iter()
                    .all(|s| s.position(e).is_some_and(|at| s.changed(at, since)))
                && added
                    .iter()
                    .all(|s| s.position(e).is_some_and(|at| s.added(at, since)));
            if keep {
                match runs.last_mut() {
                    Some(last) if last.end == row => last.end += 1,
                    _ => runs.push(row..row + 1),
                }
            }
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use crate::test_model::{world, Model, A, S};
    use crate::{World, WorldError};

    #[test]
    fn a_sparse_component_is_added_and_removed_without_moving_the_row() {
        let (mut w, es) = world();
        let before = w.signature_name_of(es[0]);
        assert_eq!(w.insert(es[0], S(5)), Ok(None));
        assert_eq!(w.signature_name_of(es[0]), before, "the row did not move");
        assert_eq!(w.get::<S>(es[0]), Some(&S(5)));
        assert_eq!(w.get::<S>(es[1]), None);
        assert_eq!(
            w.insert(es[0], S(6)),
            Ok(Some(S(5))),
            "replaced, old value back"
        );
        w.get_mut::<S>(es[0]).unwrap().0 += 1;
        assert_eq!(w.get::<S>(es[0]), Some(&S(7)));
        assert_eq!(
            w.set_of(es[0]).map(|s| s.contains(2)),
            Some(true),
            "the component set lists the sparse component"
        );
        assert_eq!(w.remove::<S>(es[0]), Ok(S(7)));
        assert!(matches!(
            w.remove::<S>(es[0]),
            Err(WorldError::MissingComponent { component: "S", .. })
        ));
        assert_eq!(w.check_invariants(), Ok(()));
    }

    #[test]
    fn despawn_takes_the_sparse_values_and_stale_ids_never_see_them() {
        let (mut w, es) = world();
        w.insert(es[1], S(1)).unwrap();
        w.insert(es[2], S(2)).unwrap();
        assert!(w.despawn(es[1]));
        assert_eq!(w.get::<S>(es[1]), None);
        assert_eq!(w.get::<S>(es[2]), Some(&S(2)));
        assert_eq!(w.check_invariants(), Ok(()));
        // A new entity that reuses the slot has no S (slots are reused once more than
        // `MINIMUM_FREE_INDICES` wait, oldest first).
        let extra: Vec<_> = (0..crate::entity::MINIMUM_FREE_INDICES as u32)
            .map(|i| w.spawn(crate::test_model::JustA(A(i))))
            .collect();
        for e in extra {
            w.despawn(e);
        }
        let e = w.spawn(crate::test_model::JustA(A(9)));
        assert_eq!(e.index(), es[1].index(), "the oldest freed slot is reused");
        assert_eq!(w.get::<S>(e), None);
        assert_eq!(
            w.insert(es[1], S(3)),
            Err(WorldError::NoSuchEntity(es[1])),
            "a stale id is refused"
        );
        w.clear();
        assert_eq!(w.get::<S>(es[2]), None);
        assert_eq!(w.check_invariants(), Ok(()));
    }

    #[test]
    fn a_world_without_entities_refuses_sparse_inserts_and_removes() {
        let mut w = World::<Model>::new();
        let ghost = crate::Entity::new(0, 0);
        assert_eq!(w.insert(ghost, S(1)), Err(WorldError::NoSuchEntity(ghost)));
        assert_eq!(w.remove::<S>(ghost), Err(WorldError::NoSuchEntity(ghost)));
    }

    #[test]
    fn queries_see_sparse_components_row_by_row() {
        use crate::query::{Changed, With, Without};
        use crate::Entity;
        let (mut w, es) = world();
        w.insert(es[1], S(10)).unwrap();
        w.insert(es[2], S(20)).unwrap();
        let with_s: Vec<(Entity, u32)> = w.query::<(Entity, &S)>().map(|(e, s)| (e, s.0)).collect();
        let mut sorted = with_s.clone();
        sorted.sort();
        assert_eq!(sorted, vec![(es[1], 10), (es[2], 20)]);
        assert_eq!(w.query::<(Entity, &S)>().len(), 2, "exact size");
        let optional: Vec<(u32, Option<u32>)> = w
            .query::<(&A, Option<&S>)>()
            .map(|(a, s)| (a.0, s.map(|s| s.0)))
            .collect();
        assert_eq!(optional.len(), 4);
        for (a, s) in optional {
            let expected = match a {
                2 => Some(10),
                4 => Some(20),
                _ => None,
            };
            assert_eq!(s, expected, "entity with A({a})");
        }
        let mut without: Vec<u32> = w.query_filtered::<&A, Without<S>>().map(|a| a.0).collect();
        without.sort();
        assert_eq!(without, vec![1, 5]);
        let mut with: Vec<u32> = w.query_filtered::<&A, With<S>>().map(|a| a.0).collect();
        with.sort();
        assert_eq!(with, vec![2, 4]);
        assert_eq!(w.query_one::<&S>(es[2]).map(|s| s.0), Ok(20));
        assert!(matches!(
            w.query_one::<&S>(es[0]),
            Err(WorldError::MissingComponent { component: "S", .. })
        ));
        // Writes through a mutable query, and change filters per value.
        let since = w.change_tick();
        for s in w.query_mut::<&mut S>().unwrap() {
            s.0 += 1;
        }
        assert_eq!(w.get::<S>(es[1]), Some(&S(11)));
        assert_eq!(w.query_changed::<&S, Changed<S>>(since).count(), 2);
        // The clock moves on at each pass (as `run_schedule` does).
        w.locations.advance();
        let later = w.change_tick();
        assert_eq!(w.query_changed::<&S, Changed<S>>(later).count(), 0);
        w.get_mut::<S>(es[2]).unwrap().0 = 0;
        let changed: Vec<u32> = w
            .query_changed::<&S, Changed<S>>(later)
            .map(|s| s.0)
            .collect();
        assert_eq!(changed, vec![0], "only the value written since");
        // A sparse component named twice mutably is refused like any other.
        assert!(matches!(
            w.query_mut::<(&mut S, &S)>(),
            Err(WorldError::AliasedQuery { .. })
        ));
    }

    /// `Added<S>` of a sparse component: the values inserted since, not the ones written or
    /// replaced, and an add stays with its value when another value fills a removed one's
    /// place; with a table filter too (checked row by row).
    #[test]
    fn a_sparse_add_is_an_insert_and_not_a_write() {
        use crate::query::{Added, Changed};
        use crate::Entity;
        let (mut w, es) = world();
        w.insert(es[0], S(1)).unwrap();
        w.insert(es[1], S(2)).unwrap();
        w.locations.advance();
        let since = w.change_tick();
        let added = |w: &World<Model>| -> Vec<Entity> {
            let mut v: Vec<Entity> = w.query_changed::<Entity, Added<S>>(since).collect();
            v.sort();
            v
        };
        assert!(added(&w).is_empty(), "inserted before the tick");
        w.get_mut::<S>(es[0]).unwrap().0 = 5;
        assert_eq!(w.insert(es[1], S(6)), Ok(Some(S(2))), "a replace");
        assert!(added(&w).is_empty(), "writes only");
        assert_eq!(w.query_changed::<Entity, Changed<S>>(since).count(), 2);
        // es[3]'s value goes last; removing es[0]'s moves it into the first place.
        w.insert(es[3], S(7)).unwrap();
        assert_eq!(w.remove::<S>(es[0]), Ok(S(5)));
        assert_eq!(added(&w), [es[3]]);
        // Beside a table filter (the store's chunks, then each row's value).
        let with_a: Vec<Entity> = w
            .query_changed::<Entity, (Added<S>, Changed<A>)>(0)
            .collect();
        assert_eq!(with_a.len(), 2, "{with_a:?}");
    }

    #[test]
    fn a_query_of_sparse_components_alone_walks_the_set_in_its_order() {
        use crate::Entity;
        let (mut w, es) = world();
        // Inserted out of store order: the walk follows the set, not the stores.
        for (e, v) in [(es[3], 3), (es[0], 0), (es[2], 2)] {
            w.insert(e, S(v)).unwrap();
        }
        let walked: Vec<(Entity, u32)> = w.query::<(Entity, &S)>().map(|(e, s)| (e, s.0)).collect();
        assert_eq!(walked, vec![(es[3], 3), (es[0], 0), (es[2], 2)]);
        // A table element, even optional, makes the query visit the stores: the same items.
        let mut by_store: Vec<(Entity, u32)> = w
            .query::<(Entity, &S, Option<&A>)>()
            .map(|(e, s, _)| (e, s.0))
            .collect();
        by_store.sort();
        let mut sorted = walked;
        sorted.sort();
        assert_eq!(by_store, sorted);
        // Removing the first value moves the last into its place.
        w.remove::<S>(es[3]).unwrap();
        let values = |w: &World<Model>| w.query::<&S>().map(|s| s.0).collect::<Vec<_>>();
        assert_eq!(values(&w), vec![2, 0]);
        // Mutable and optional elements walk the set too (its order, not the stores').
        let order: Vec<Entity> = w
            .query_mut::<(Entity, &mut S)>()
            .unwrap()
            .map(|(e, _)| e)
            .collect();
        assert_eq!(order, vec![es[2], es[0]]);
        let optional: Vec<(Entity, Option<u32>)> = w
            .query::<(Entity, &S, Option<&S>)>()
            .map(|(e, _, s)| (e, s.map(|s| s.0)))
            .collect();
        assert_eq!(optional, vec![(es[2], Some(2)), (es[0], Some(0))]);
        // `for_each` walks the values as one packed column, writing each once.
        w.query_mut::<&mut S>().unwrap().for_each(|s| s.0 += 10);
        assert_eq!(values(&w), vec![12, 10]);
        assert_eq!(w.get::<S>(es[0]), Some(&S(10)));
    }
}
