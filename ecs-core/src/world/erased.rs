//! Components known by id and `TypeId` rather than by a static type: a spawn of several
//! batches of entities whose components the caller writes one component at a time
//! ([`World::begin_spawn`]), and an entity's components read back ([`World::components_of`]).
//! What a loader of stored entities builds on: the `sigecs-level` crate spawns and saves
//! levels through these and nothing else of the world's internals.
//!
//! Values cross the boundary typed: a [`ComponentRows`] takes `T` values (checked against
//! the component's `TypeId` once per call) and a [`ComponentValue`] hands out `&T`, so a
//! caller writes no `unsafe`.
//!
//! A [`PendingSpawn`] issues every id and reserves every row when it begins; nothing is
//! visible until [`PendingSpawn::commit`], which checks that every component of every batch
//! was written. Dropped without a commit (an error of the caller's, or a panic in the code
//! that made a value: a `Deserialize`, an entity mapping), it retires the ids and drops every
//! value written so far, each exactly once, and the world is as it was (an undeclared set's
//! dynamic store made for the spawn stays, empty).

use super::{World, WorldError};
use crate::entity::{Entity, EntityError};
use crate::model::{ComponentInfo, WorldModel};
use crate::set::AnyComponentBits;
use crate::storage::{ColumnType, Store};
use std::any::TypeId;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// Consecutive rows of one batch of a [`PendingSpawn`]: rows `row..row + len` of batch
/// `batch` (rows count from 0 within the batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowRun {
    /// The batch, an index into the sets given to [`World::begin_spawn`].
    pub batch: usize,
    /// The first row, within the batch.
    pub row: usize,
    /// Number of rows.
    pub len: usize,
}

/// One batch: `count` entities of one store, at rows `first..first + count` beyond the
/// store's length; their ids are `ids[start..start + count]`.
struct Batch {
    store: u32,
    first: usize,
    count: usize,
    start: usize,
    /// Per slot of the store, how many of the batch's rows hold a value (always a prefix).
    written: Box<[usize]>,
}

/// A spawn in progress ([`World::begin_spawn`]): ids issued, rows reserved, components being
/// written. See the module docs (in the source).
pub struct PendingSpawn<'w, M: WorldModel> {
    world: &'w mut World<M>,
    batches: Vec<Batch>,
    ids: Vec<Entity>,
    committed: bool,
}

impl<M: WorldModel> World<M> {
    /// The id of the component whose type has `type_id` (its member in the world's component
    /// sets), or `None` when that type is no component of this world.
    pub fn component_id(type_id: TypeId) -> Option<u32> {
        M::tables().component_of_type(type_id)
    }

    /// The declared signatures' names, by store id (the ids [`World::signature_of_set`]
    /// gives).
    pub fn signature_names() -> impl ExactSizeIterator<Item = &'static str> {
        M::stores().iter().map(|s| s.name)
    }

    /// The declared signature whose components are exactly `set`, as its store id: where
    /// entities of that set live. `None` for a set no signature declares (a dynamic store of an
    /// open world holds them). An error when no store can hold such entities: a set with an id that is no
    /// component of this world, a sparse component (sparse components live beside the
    /// stores), or an undeclared set in a strict world ([`WorldError::NoSignature`]).
    pub fn signature_of_set(set: M::Set) -> Result<Option<u32>, WorldError> {
        let components = M::components();
        let names = || super::set_names::<M>(set);
        for c in set.ids() {
            match components.get(c as usize) {
                None => {
                    return Err(WorldError::NotInWorld {
                        kind: "component id",
                        type_name: "(an id past the last component)",
                    })
                }
                Some(info) if info.sparse => {
                    return Err(WorldError::SparseInSet {
                        set: names(),
                        component: info.name,
                    })
                }
                Some(_) => {}
            }
        }
        if let Some(store) = M::tables().store_with_mask(set) {
            return Ok(Some(store));
        }
        if M::STRICT {
            return Err(WorldError::NoSignature { set: names() });
        }
        Ok(None)
    }

    /// Begins a spawn of `batches`: batch `k` is `batches[k].1` entities with exactly the
    /// components `batches[k].0` (see [`World::signature_of_set`]). Issues every id at once and
    /// reserves every row; the caller then writes each component of each batch with
    /// [`PendingSpawn::rows`] and makes the entities live with [`PendingSpawn::commit`]. All
    /// or nothing: an error leaves the world as it was, and so does dropping the spawn
    /// uncommitted.
    ///
    /// Errors: a set no store can hold ([`World::signature_of_set`]), or more entities than the
    /// world can issue ([`WorldError::Entity`]).
    pub fn begin_spawn(
        &mut self,
        batches: &[(M::Set, usize)],
    ) -> Result<PendingSpawn<'_, M>, WorldError> {
        let mut stores: Vec<Option<u32>> = Vec::with_capacity(batches.len());
        for &(set, _) in batches {
            stores.push(Self::signature_of_set(set)?);
        }
        let total = batches.iter().fold(0usize, |t, b| t.saturating_add(b.1));
        let available = self.locations.entities().available();
        if total > available {
            return Err(WorldError::Entity(EntityError::Exhausted {
                requested: total,
                available,
            }));
        }
        // Nothing below fails: make the dynamic stores, place every batch after its store's
        // rows (and after an earlier batch of the same store), issue the ids, reserve.
        let mut runs: Vec<(u32, usize, usize)> = Vec::with_capacity(batches.len());
        let mut list: Vec<Batch> = Vec::with_capacity(batches.len());
        let mut start = 0;
        for (&(set, count), store) in batches.iter().zip(stores) {
            let store = store.unwrap_or_else(|| self.dynamic_store(set));
            let placed: usize = runs.iter().filter(|r| r.0 == store).map(|r| r.2).sum();
            let first = self.stores[store as usize].len() + placed;
            runs.push((store, first, count));
            let slots = self.stores[store as usize].info().slots.len();
            list.push(Batch {
                store,
                first,
                count,
                start,
                written: vec![0; slots].into_boxed_slice(),
            });
            start += count;
        }
        let mut ids = Vec::with_capacity(total);
        self.locations
            .create_runs(&runs, &mut ids)
            .map_err(WorldError::Entity)?;
        for (i, &(store, _, _)) in runs.iter().enumerate() {
            if runs[..i].iter().any(|r| r.0 == store) {
                continue; // Reserved with its first batch.
            }
            let rows: usize = runs.iter().filter(|r| r.0 == store).map(|r| r.2).sum();
            self.stores[store as usize].reserve(rows);
        }
        Ok(PendingSpawn {
            world: self,
            batches: list,
            ids,
            committed: false,
        })
    }

    /// The components `entity` holds in its store (sparse components, kept beside the
    /// stores, are not among them), in its store's slot order; `None` when it is not alive.
    pub fn components_of(&self, entity: Entity) -> Option<ComponentValues<'_>> {
        let loc = self.locations.locate(entity)?;
        Some(ComponentValues {
            store: &self.stores[loc.store as usize],
            components: M::components(),
            row: loc.row(),
            next: 0,
        })
    }
}

impl<M: WorldModel> PendingSpawn<'_, M> {
    /// The new entities, batch after batch (batch `k`'s in its rows' order). They are not
    /// alive before [`PendingSpawn::commit`].
    pub fn entities(&self) -> &[Entity] {
        &self.ids
    }

    /// The rows of `runs` for component `component` (an id of [`World::component_id`]),
    /// written through the [`ComponentRows`] in the order of the runs. The runs of one batch
    /// continue where its rows of `component` were last written (from row 0), so each row
    /// gets one value.
    ///
    /// # Panics
    /// When a run names a batch there is not, a batch whose set lacks `component`, or rows
    /// that are not the next ones of that batch (past its end, or already written).
    pub fn rows(&mut self, component: u32, runs: &[RowRun]) -> ComponentRows<'_> {
        let ty = &M::components()
            .get(component as usize)
            .unwrap_or_else(|| panic!("component id {component} is not one of this world's"))
            .ty;
        let mut next: Vec<Option<usize>> = vec![None; self.batches.len()];
        let mut targets = Vec::with_capacity(runs.len());
        for run in runs {
            let b = self.batches.get(run.batch).unwrap_or_else(|| {
                panic!(
                    "batch {} of a spawn of {} batches",
                    run.batch,
                    self.batches.len()
                )
            });
            let k = self
                .world
                .slot_index(b.store, component)
                .unwrap_or_else(|| panic!("batch {}'s set lacks component {component}", run.batch));
            let at = next[run.batch].get_or_insert(b.written[k]);
            assert!(
                run.row == *at && run.len <= b.count - run.row,
                "rows {}..{} of batch {} (of {} rows) are not the next ones of component \
                 {component}: {} rows are written",
                run.row,
                run.row.saturating_add(run.len),
                run.batch,
                b.count,
                *at
            );
            *at += run.len;
            let store = &self.world.stores[b.store as usize];
            let slot = store.info().slots[k];
            targets.push(Target {
                ptr: store.slot_ptr(slot, b.first + run.row),
                stride: store.info().columns[slot.column as usize].size,
                len: run.len,
                batch: run.batch,
                slot: k,
            });
        }
        ComponentRows {
            ty,
            targets,
            run: 0,
            at: 0,
            batches: &mut self.batches,
        }
    }

    /// Makes the entities live: every batch's rows become its store's rows, in batch order.
    ///
    /// # Panics
    /// When a component of a batch's set was not written for each of its rows (the spawn is
    /// then dropped: ids retired, values dropped).
    pub fn commit(mut self) {
        for (k, b) in self.batches.iter().enumerate() {
            if let Some(slot) = b.written.iter().position(|&w| w != b.count) {
                let c = self.world.stores[b.store as usize].info().slots[slot].component;
                panic!(
                    "component `{}` of batch {k} was written for {} of its {} rows",
                    M::components()[c as usize].name,
                    b.written[slot],
                    b.count
                );
            }
        }
        let stamp = self.world.locations.stamp();
        for b in &self.batches {
            let ids = &self.ids[b.start..b.start + b.count];
            // SAFETY: every slot of the batch's rows holds a value (checked above); the rows
            // are reserved and follow the store's committed rows (the batches of one store
            // are committed in the order their rows were placed).
            unsafe { self.world.stores[b.store as usize].commit_rows(ids, stamp) };
        }
        for b in &self.batches {
            self.world.note_dynamic_rows(b.store);
        }
        self.committed = true;
    }
}

impl<M: WorldModel> Drop for PendingSpawn<'_, M> {
    /// An uncommitted spawn: the ids are retired first (the world is consistent again), then
    /// every value written is dropped once; a panicking `Drop` does not stop the others.
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        for &id in &self.ids {
            self.world.locations.destroy(id);
        }
        let components = M::components();
        let mut panic = None;
        for b in &self.batches {
            let store = &self.world.stores[b.store as usize];
            for (k, &written) in b.written.iter().enumerate() {
                let slot = store.info().slots[k];
                let Some(drop_slice) = components[slot.component as usize].ty.drop_slice else {
                    continue;
                };
                let stride = store.info().columns[slot.column as usize].size;
                let size = components[slot.component as usize].ty.size;
                let first = store.slot_ptr(slot, b.first);
                let dropped = catch_unwind(AssertUnwindSafe(|| {
                    if stride == size {
                        // SAFETY: the slot's first `written` rows of the batch hold values of
                        // the component's type, contiguous in a column of that type; they are
                        // beyond the store's length and never read again.
                        unsafe { drop_slice(first, written) };
                    } else {
                        let mut panic = None;
                        for i in 0..written {
                            // SAFETY: as above, one value at a time in a column of row
                            // structs (`stride` bytes apart); a panic stops none of the others.
                            let one = catch_unwind(AssertUnwindSafe(|| unsafe {
                                drop_slice(first.wrapping_add(i * stride), 1)
                            }));
                            if let Err(p) = one {
                                panic.get_or_insert(p);
                            }
                        }
                        if let Some(p) = panic {
                            resume_unwind(p);
                        }
                    }
                }));
                if let Err(p) = dropped {
                    match panic {
                        None => panic = Some(p),
                        Some(_) => super::spawn::drop_quietly(p),
                    }
                }
            }
        }
        if let Some(p) = panic {
            if !std::thread::panicking() {
                resume_unwind(p);
            }
        }
    }
}

/// Where one run's values go: `len` values, the first at `ptr`, `stride` bytes apart.
struct Target {
    ptr: *mut u8,
    stride: usize,
    len: usize,
    batch: usize,
    slot: usize,
}

/// The rows of one component of a [`PendingSpawn`] ([`PendingSpawn::rows`]), filled in run
/// order with values of the component's type. What it wrote counts as written when it is
/// dropped, also when a panic unwinds through it (the spawn then drops those values).
pub struct ComponentRows<'s> {
    ty: &'static ColumnType,
    targets: Vec<Target>,
    /// The run being written, and how many of its values are.
    run: usize,
    at: usize,
    batches: &'s mut [Batch],
}

impl ComponentRows<'_> {
    /// Values still to write.
    pub fn remaining(&self) -> usize {
        let rest: usize = self.targets.iter().skip(self.run).map(|t| t.len).sum();
        rest - self.at
    }

    /// # Panics
    /// When `T` is not the component's type.
    fn check<T: 'static>(&self) {
        assert!(
            TypeId::of::<T>() == (self.ty.type_id)(),
            "a `{}` written into rows of `{}`",
            std::any::type_name::<T>(),
            (self.ty.type_name)()
        );
    }

    /// Skips runs that are full.
    fn settle(&mut self) {
        while self.run < self.targets.len() && self.at == self.targets[self.run].len {
            self.run += 1;
            self.at = 0;
        }
    }

    /// Writes the next value.
    ///
    /// # Panics
    /// When `T` is not the component's type, or every row is written.
    pub fn push<T: 'static>(&mut self, value: T) {
        self.check::<T>();
        self.settle();
        let Some(t) = self.targets.get(self.run) else {
            panic!("a value past the last row");
        };
        // SAFETY: `T` is the component's type (checked); the row is reserved, aligned for
        // the component, and holds no value yet (rows are written once, in order).
        unsafe {
            t.ptr
                .wrapping_add(self.at * t.stride)
                .cast::<T>()
                .write(value)
        };
        self.at += 1;
    }

    /// Writes the next `values.len()` values, copied (one copy per run in a store laid out in
    /// columns).
    ///
    /// # Panics
    /// When `T` is not the component's type, or fewer rows remain than values.
    pub fn extend_from_slice<T: Copy + 'static>(&mut self, values: &[T]) {
        self.check::<T>();
        assert!(
            values.len() <= self.remaining(),
            "{} values for {} rows",
            values.len(),
            self.remaining()
        );
        let mut rest = values;
        while !rest.is_empty() {
            self.settle();
            let t = &self.targets[self.run];
            let n = rest.len().min(t.len - self.at);
            let (now, later) = rest.split_at(n);
            let dst = t.ptr.wrapping_add(self.at * t.stride);
            if t.stride == size_of::<T>() {
                // SAFETY: `T` is the component's type; the run's rows from `at` on are
                // reserved, contiguous (the column holds `T`s) and hold nothing; `T: Copy`, so
                // copying leaves the source valid; the store and `values` do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(now.as_ptr(), dst.cast::<T>(), n) };
            } else {
                for (i, &v) in now.iter().enumerate() {
                    // SAFETY: as above, one value at a time in a column of row structs.
                    unsafe { dst.wrapping_add(i * t.stride).cast::<T>().write(v) };
                }
            }
            self.at += n;
            rest = later;
        }
    }

    /// Calls `f` on every value written so far, in run order: an entity mapping, say.
    ///
    /// # Panics
    /// When `T` is not the component's type; a panic of `f` leaves every value in place.
    pub fn for_each_mut<T: 'static>(&mut self, mut f: impl FnMut(&mut T)) {
        self.check::<T>();
        for (r, t) in self.targets.iter().enumerate().take(self.run + 1) {
            let n = if r < self.run { t.len } else { self.at };
            for i in 0..n {
                // SAFETY: `T` is the component's type; the value was written by this
                // `ComponentRows` and nothing else refers to it (`&mut self`).
                f(unsafe { &mut *t.ptr.wrapping_add(i * t.stride).cast::<T>() });
            }
        }
    }
}

impl Drop for ComponentRows<'_> {
    fn drop(&mut self) {
        for (r, t) in self.targets.iter().enumerate() {
            let n = match r.cmp(&self.run) {
                std::cmp::Ordering::Less => t.len,
                std::cmp::Ordering::Equal => self.at,
                std::cmp::Ordering::Greater => break,
            };
            self.batches[t.batch].written[t.slot] += n;
        }
    }
}

/// The components of one entity ([`World::components_of`]).
pub struct ComponentValues<'w> {
    store: &'w Store,
    components: &'static [ComponentInfo],
    row: usize,
    next: usize,
}

impl<'w> Iterator for ComponentValues<'w> {
    type Item = ComponentValue<'w>;

    fn next(&mut self) -> Option<ComponentValue<'w>> {
        let slot = *self.store.info().slots.get(self.next)?;
        self.next += 1;
        Some(ComponentValue {
            component: slot.component,
            ty: &self.components[slot.component as usize].ty,
            ptr: self.store.slot_ptr(slot, self.row).cast_const(),
            _world: PhantomData,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.store.info().slots.len() - self.next;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ComponentValues<'_> {}

/// One component value of an entity: its id, its type and a typed reference to it.
#[derive(Clone, Copy)]
pub struct ComponentValue<'w> {
    component: u32,
    ty: &'static ColumnType,
    ptr: *const u8,
    _world: PhantomData<&'w Store>,
}

impl<'w> ComponentValue<'w> {
    /// The component's id (see [`World::component_id`]).
    pub fn id(&self) -> u32 {
        self.component
    }

    /// The component type's `TypeId`.
    pub fn type_id(&self) -> TypeId {
        (self.ty.type_id)()
    }

    /// The value, if `T` is the component's type.
    pub fn downcast<T: 'static>(&self) -> Option<&'w T> {
        // SAFETY: `T` is the component's type, so the slot of the entity's live row holds an
        // initialised, aligned `T`; the world is borrowed shared for `'w`, so nothing writes it.
        (TypeId::of::<T>() == self.type_id()).then(|| unsafe { &*self.ptr.cast::<T>() })
    }
}

impl std::fmt::Debug for ComponentValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComponentValue")
            .field("id", &self.component)
            .field("type", &(self.ty.type_name)())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_model::{world, Model, A, B};
    use crate::ComponentBits;

    type Set = ComponentBits<1>;
    const A_ID: u32 = 0;
    const B_ID: u32 = 1;
    const S_ID: u32 = 2;

    fn set(ids: &[u32]) -> Set {
        ids.iter().fold(Set::EMPTY, |s, &c| s.with(c))
    }

    fn run(batch: usize, row: usize, len: usize) -> RowRun {
        RowRun { batch, row, len }
    }

    #[test]
    fn the_model_answers_by_type_and_set() {
        type W = World<Model>;
        assert_eq!(W::component_id(TypeId::of::<B>()), Some(B_ID));
        assert_eq!(W::component_id(TypeId::of::<u64>()), None);
        assert_eq!(W::signature_names().collect::<Vec<_>>(), ["JustA", "AB"]);
        assert_eq!(W::signature_of_set(set(&[A_ID])), Ok(Some(0)));
        assert_eq!(W::signature_of_set(set(&[A_ID, B_ID])), Ok(Some(1)));
        assert_eq!(
            W::signature_of_set(set(&[B_ID])),
            Ok(None),
            "a dynamic store's"
        );
        assert_eq!(
            W::signature_of_set(set(&[A_ID, S_ID])),
            Err(WorldError::SparseInSet {
                set: "A | S".into(),
                component: "S"
            })
        );
        assert!(matches!(
            W::signature_of_set(set(&[5])),
            Err(WorldError::NotInWorld { .. })
        ));
    }

    /// Three batches (a declared store twice, a dynamic one), written with every kind of
    /// write, in runs that interleave the batches; the rows follow the store's old ones.
    #[test]
    fn batches_are_written_in_runs_and_committed() {
        let (mut w, old) = world();
        let sets = [
            (set(&[A_ID, B_ID]), 3),
            (set(&[B_ID]), 2),
            (set(&[A_ID, B_ID]), 1),
        ];
        let mut spawn = w.begin_spawn(&sets).unwrap();
        let ids = spawn.entities().to_vec();
        assert_eq!(ids.len(), 6);
        {
            let mut rows = spawn.rows(A_ID, &[run(0, 0, 2), run(2, 0, 1), run(0, 2, 1)]);
            assert_eq!(rows.remaining(), 4);
            rows.extend_from_slice(&[A(10), A(11)]);
            rows.push(A(30));
            rows.for_each_mut(|a: &mut A| a.0 += 1);
            rows.push(A(12));
            assert_eq!(rows.remaining(), 0);
        }
        let mut rows = spawn.rows(B_ID, &[run(1, 0, 2), run(0, 0, 3)]);
        rows.extend_from_slice(&[B(20), B(21), B(100)]);
        drop(rows);
        // The rest of B, continued in a second call.
        let mut rows = spawn.rows(B_ID, &[run(0, 1, 2), run(2, 0, 1)]);
        rows.extend_from_slice(&[B(101), B(102), B(300)]);
        drop(rows);
        spawn.commit();
        w.check_invariants().unwrap();
        assert_eq!(w.len(), 10);
        let a = |e| w.get::<A>(e).map(|a| a.0);
        let b = |e| w.get::<B>(e).map(|b| b.0);
        assert_eq!(
            [a(ids[0]), a(ids[1]), a(ids[2])],
            [Some(11), Some(12), Some(12)]
        );
        assert_eq!(
            [b(ids[0]), b(ids[1]), b(ids[2])],
            [Some(100), Some(101), Some(102)]
        );
        assert_eq!(
            [a(ids[3]), b(ids[3]), b(ids[4])],
            [None, Some(20), Some(21)]
        );
        assert_eq!((a(ids[5]), b(ids[5])), (Some(31), Some(300)));
        assert_eq!(w.signature_name_of(ids[3]), Some("B"));
        assert_eq!(w.undeclared()[0].rows, 2);
        assert_eq!(
            w.store::<crate::test_model::AB>().entities(),
            [old[1], old[3], ids[0], ids[1], ids[2], ids[5]]
        );
        // Read back in slot order.
        let values: Vec<(u32, Option<u32>)> = w
            .components_of(ids[5])
            .unwrap()
            .map(|v| (v.id(), v.downcast::<A>().map(|a| a.0)))
            .collect();
        assert_eq!(values, [(A_ID, Some(31)), (B_ID, None)]);
        let b_value = w.components_of(ids[5]).unwrap().nth(1).unwrap();
        assert_eq!(b_value.type_id(), TypeId::of::<B>());
        assert_eq!(b_value.downcast::<B>(), Some(&B(300)));
        assert!(w.components_of(Entity::new(999, 0)).is_none());
    }

    #[test]
    fn an_uncommitted_spawn_leaves_the_world_as_it_was() {
        let (mut w, old) = world();
        let before = w.len();
        {
            let mut spawn = w
                .begin_spawn(&[(set(&[A_ID]), 2), (set(&[B_ID]), 1)])
                .unwrap();
            spawn.rows(A_ID, &[run(0, 0, 1)]).push(A(7));
        }
        w.check_invariants().unwrap();
        assert_eq!(w.len(), before);
        assert_eq!(w.get::<A>(old[0]), Some(&A(1)));
        // Committing without every value written panics, and nothing is spawned.
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut spawn = w.begin_spawn(&[(set(&[A_ID, B_ID]), 2)]).unwrap();
            spawn
                .rows(A_ID, &[run(0, 0, 2)])
                .extend_from_slice(&[A(1), A(2)]);
            spawn.rows(B_ID, &[run(0, 0, 1)]).push(B(1));
            spawn.commit();
        }));
        let message = r.unwrap_err();
        assert_eq!(
            message.downcast_ref::<String>().map(String::as_str),
            Some("component `B` of batch 0 was written for 1 of its 2 rows")
        );
        w.check_invariants().unwrap();
        assert_eq!(w.len(), before);
        let e = w.spawn(crate::test_model::JustA(A(9)));
        assert_eq!(w.get::<A>(e), Some(&A(9)));
    }

    #[test]
    fn refused_spawns_change_nothing() {
        let (mut w, _) = world();
        let before = w.len();
        assert!(matches!(
            w.begin_spawn(&[(set(&[A_ID]), 1), (set(&[A_ID, S_ID]), 1)]),
            Err(WorldError::SparseInSet { .. })
        ));
        let too_many = crate::entity::MAX_ENTITIES;
        assert!(matches!(
            w.begin_spawn(&[(set(&[B_ID]), too_many)]),
            Err(WorldError::Entity(EntityError::Exhausted { .. }))
        ));
        w.check_invariants().unwrap();
        assert_eq!(w.len(), before);
        assert!(w.undeclared().is_empty(), "no dynamic store made");
    }

    /// Writes that do not fit the rows panic before they write.
    #[test]
    fn wrong_writes_panic() {
        let (mut w, _) = world();
        let panics = |f: &dyn Fn(&mut PendingSpawn<'_, Model>)| {
            let (mut w, _) = world();
            let mut spawn = w.begin_spawn(&[(set(&[A_ID]), 2)]).unwrap();
            catch_unwind(AssertUnwindSafe(|| f(&mut spawn))).is_err()
        };
        assert!(panics(&|s| {
            s.rows(B_ID, &[run(0, 0, 1)]);
        }));
        assert!(panics(&|s| {
            s.rows(A_ID, &[run(1, 0, 1)]);
        }));
        assert!(panics(&|s| {
            s.rows(A_ID, &[run(0, 1, 1)]);
        }));
        assert!(panics(&|s| {
            s.rows(A_ID, &[run(0, 0, 3)]);
        }));
        assert!(panics(&|s| s.rows(A_ID, &[run(0, 0, 2)]).push(B(1))));
        assert!(panics(&|s| {
            s.rows(A_ID, &[run(0, 0, 1)])
                .extend_from_slice(&[A(1), A(2)])
        }));
        assert!(panics(&|s| {
            let mut rows = s.rows(A_ID, &[run(0, 0, 1)]);
            rows.push(A(1));
            rows.push(A(2));
        }));
        // A row written is not written again.
        assert!(panics(&|s| {
            s.rows(A_ID, &[run(0, 0, 1)]).push(A(1));
            s.rows(A_ID, &[run(0, 0, 1)]);
        }));
        w.check_invariants().unwrap();
        let spawn = w.begin_spawn(&[]).unwrap();
        assert!(spawn.entities().is_empty());
        spawn.commit();
    }
}
