//! Structural changes: despawn, and insert/remove, which move an entity's row to the store of
//! the signature with (or without) the component. A move follows a [`Transition`] computed
//! once per (store, component) pair that leads to a declared signature: one copy per shared
//! component, no lookup per component. It is written once here instead of once per
//! (component, signature) pair in the generated code.

use super::{Change, Location, World, WorldError};
use crate::entity::Entity;
use crate::model::MoveBatch;
use crate::model::{ComponentOf, MoveRef, WorldModel};
use crate::set::AnyComponentBits;
use crate::storage::Column;
use std::mem::{ManuallyDrop, MaybeUninit};

impl<M: WorldModel> World<M> {
    /// Despawns `entity`, dropping its components. The last row of its store moves into the
    /// hole. Returns false for a dead or stale id. The components are dropped after the world
    /// is consistent again, so a panicking `Drop` cannot corrupt it.
    ///
    /// An entity in the world's transform hierarchy (feature `transform`,
    /// `World::hierarchy`) takes its whole subtree with it.
    pub fn despawn(&mut self, entity: Entity) -> bool {
        #[cfg(feature = "transform")]
        // Only live entities have instances (`check_invariants`), so a dead or stale id finds
        // none here and falls through to `despawn_row`'s own `false`.
        if !self.hierarchy.is_empty() {
            if let Some(i) = self.hierarchy.lookup(entity) {
                self.despawn_tree(i);
                return true;
            }
        }
        self.despawn_row(entity)
    }

    /// Despawns `entity`'s row only (not its descendants in the hierarchy).
    pub(super) fn despawn_row(&mut self, entity: Entity) -> bool {
        let Some(loc) = self.locations.locate(entity) else {
            return false;
        };
        self.locations.destroy(entity);
        // Its sparse values leave their sets first and drop last, after the row's values, once
        // the world is consistent (or while a panicking row value unwinds).
        let held = self.sparse.take_all(entity);
        let table = &mut self.locations;
        let stamp = table.stamp();
        self.stores[loc.store as usize].swap_remove_drop(loc.row(), stamp, |moved| {
            if let Some(moved) = moved {
                table.relocate(moved, loc);
            }
        });
        drop(held);
        true
    }

    /// Despawns every entity, keeping the resources and the memory of the stores and of the
    /// entity locations for the next spawn (a level's restart, say). Every id issued so far
    /// becomes stale, as after [`World::despawn`]; later spawns may reuse the slots (the entity
    /// manager's rule). That is not by itself faster than spawning into a new world (see the README's
    /// restart rows).
    /// The ids are retired before any component is dropped, and a panicking `Drop` still
    /// leaves every store empty (the values after it leak), so the world stays consistent.
    pub fn clear(&mut self) {
        #[cfg(feature = "transform")]
        self.hierarchy.clear();
        for store in self.stores.iter() {
            for &e in store.entities() {
                self.locations.destroy(e);
            }
        }
        // The sparse sets are emptied even if a store's value panics when dropped.
        struct EmptySparse<'a, S: crate::set::AnyComponentBits>(&'a mut super::sparse::Sparse<S>);
        impl<S: crate::set::AnyComponentBits> Drop for EmptySparse<'_, S> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        let sparse = EmptySparse(&mut self.sparse);
        empty_stores(&mut self.stores);
        drop(sparse);
    }

    /// Adds `component` to `entity`, moving the entity to the store of its components plus
    /// this one: a declared signature's (one typed copy per component; the target comes from a
    /// table, no search), or else the dynamic store of that set (see [`World::undeclared`]). If
    /// the entity already has a `C`, the value is replaced and the old one returned. On error
    /// the entity is unchanged and `component` is dropped (a panic of its `Drop` is caught: the
    /// error is what the caller sees).
    #[inline]
    pub fn insert<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
        component: C,
    ) -> Result<Option<C>, WorldError> {
        if C::SPARSE {
            return self.insert_sparse(entity, component);
        }
        let Some(loc) = self.locations.locate(entity) else {
            super::spawn::drop_quietly(component);
            return Err(WorldError::NoSuchEntity(entity));
        };
        if (loc.store as usize) < self.declared() {
            match self.tables.slot_or_insert(loc.store, C::ID) {
                Ok(k) => return Ok(Some(self.replace(loc, k, component))),
                Err(Some(t)) => {
                    let mut value = ManuallyDrop::new(component);
                    // SAFETY: `t` adds component C::ID, and `value` is a C, moved into the
                    // target store by the call and never used or dropped here again.
                    unsafe {
                        self.move_entity(
                            entity,
                            loc,
                            t,
                            C::ID,
                            (&mut *value as *mut C).cast(),
                            None,
                        )
                    };
                    return Ok(None);
                }
                Err(None) => {}
            }
        } else if let Some(k) = self.slot_index(loc.store, C::ID) {
            return Ok(Some(self.replace(loc, k, component)));
        }
        self.insert_moving_undeclared(entity, loc, component)
    }

    /// Replaces the `C` in slot `k` of the live row at `loc`, returning the old value.
    #[inline]
    fn replace<C: ComponentOf<M>>(&mut self, loc: Location, k: usize, component: C) -> C {
        let stamp = self.locations.stamp();
        let store = &mut self.stores[loc.store as usize];
        let slot = store.info().slots[k];
        store.mark_cell(k, loc.row(), stamp);
        let ptr = store.slot_ptr(slot, loc.row());
        // SAFETY: the live row's slot k holds a C (ComponentOf contract and the caller's slot
        // lookup); `&mut self` makes this the only reference.
        let old = unsafe { &mut *ptr.cast::<C>() };
        std::mem::replace(old, component)
    }

    /// [`World::insert`] of a component the entity lacks, into a set without a declared move.
    #[inline(never)]
    fn insert_moving_undeclared<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
        loc: Location,
        component: C,
    ) -> Result<Option<C>, WorldError> {
        let mut value = ManuallyDrop::new(component);
        // SAFETY: `value` is an owned C, moved into the target store on success.
        match unsafe { self.insert_undeclared(entity, loc, C::ID, (&mut *value as *mut C).cast()) }
        {
            Ok(()) => Ok(None),
            Err(e) => {
                // The refusal is the error the caller sees, even if the value's `Drop` panics
                // (as for the same refusal through `Commands`).
                super::spawn::drop_quietly(ManuallyDrop::into_inner(value));
                Err(e)
            }
        }
    }

    /// Takes the `C` of `entity`, moving the entity to the store of its other components (a
    /// declared signature's, or else a dynamic store). On error the entity is unchanged.
    #[inline]
    pub fn remove<C: ComponentOf<M>>(&mut self, entity: Entity) -> Result<C, WorldError> {
        if C::SPARSE {
            return self.remove_sparse(entity);
        }
        // Not `ok_or(..)?`: that builds the error on every call and drops it (a call per
        // remove once `WorldError` holds a boxed `WorldError`; `add_remove` 1.07×).
        let Some(loc) = self.locations.locate(entity) else {
            return Err(WorldError::NoSuchEntity(entity));
        };
        let mut value = MaybeUninit::<C>::uninit();
        // SAFETY: on `Ok` the move wrote the removed C into `value`, which then owns it.
        unsafe {
            self.remove_into(entity, loc, C::ID, value.as_mut_ptr().cast())?;
            Ok(value.assume_init())
        }
    }

    /// Moves component `c` of the entity at `loc` out into `value` and the entity to the store
    /// without it: along its declared move, or else through the dynamic stores.
    ///
    /// # Safety
    /// `value` points to room for a value of component `c`, which the caller owns after `Ok`.
    #[inline]
    unsafe fn remove_into(
        &mut self,
        entity: Entity,
        loc: Location,
        c: u32,
        value: *mut u8,
    ) -> Result<(), WorldError> {
        if (loc.store as usize) < self.declared() {
            if let Some(t) = self.tables.remove_move(loc.store, c) {
                // SAFETY: `t` removes component c from the entity's store; the move writes the
                // removed value into `value` (the caller's room).
                unsafe { self.move_entity(entity, loc, t, c, value, None) };
                return Ok(());
            }
        }
        if self.slot_index(loc.store, c).is_none() {
            return Err(self.missing(entity, loc, c));
        }
        // SAFETY: the entity has `c`; `value` as the caller guarantees.
        unsafe { self.remove_undeclared(entity, loc, c, value) }
    }

    #[cold]
    pub(super) fn missing(&self, entity: Entity, loc: Location, c: u32) -> WorldError {
        WorldError::MissingComponent {
            entity,
            signature: self.stores[loc.store as usize].info().name,
            component: Self::component_name(c),
        }
    }

    /// [`World::insert`] for a boxed value of component `c` (commands). The box's contents
    /// are moved into the store and its allocation freed.
    pub(crate) fn insert_boxed(
        &mut self,
        entity: Entity,
        c: u32,
        value: Box<dyn std::any::Any + Send>,
    ) -> Result<(), WorldError> {
        let Some(loc) = self.locations.locate(entity) else {
            // Refused: dropped as every refused value is (a panic of its drop is caught; the
            // error is what the run reports).
            super::spawn::drop_quietly(value);
            return Err(WorldError::NoSuchEntity(entity));
        };
        let size = self.tables.sizes()[c as usize];
        let raw: *mut (dyn std::any::Any + Send) = Box::into_raw(value);
        if M::components()[c as usize].sparse {
            self.insert_boxed_sparse(entity, c, raw);
            return Ok(());
        }
        if let Some(k) = self.slot_index(loc.store, c) {
            // Replace in place: swap the old value into the box, then drop the box.
            let stamp = self.locations.stamp();
            let store = &mut self.stores[loc.store as usize];
            let at = store.info().slots[k];
            store.mark_cell(k, loc.row(), stamp);
            let slot = store.slot_ptr(at, loc.row());
            // SAFETY: the box holds a value of component c (the caller found c by the value's
            // TypeId), as does the slot; swapping bytes exchanges the two values, and the box
            // (from `into_raw`) then drops the old one.
            unsafe {
                std::ptr::swap_nonoverlapping(slot, raw.cast::<u8>(), size);
                drop(Box::from_raw(raw));
            }
            return Ok(());
        }
        let declared = if (loc.store as usize) < self.declared() {
            self.tables.insert_move(loc.store, c)
        } else {
            None
        };
        // SAFETY: the box holds a component c; its bytes are moved into the target store.
        let moved = unsafe {
            match declared {
                Some(t) => {
                    self.move_entity(entity, loc, t, c, raw.cast::<u8>(), None);
                    Ok(())
                }
                None => self.insert_undeclared(entity, loc, c, raw.cast::<u8>()),
            }
        };
        match moved {
            // SAFETY: the value's bytes were moved out: free the allocation without dropping.
            Ok(()) => unsafe {
                let layout = std::alloc::Layout::for_value(&*raw);
                if layout.size() != 0 {
                    std::alloc::dealloc(raw.cast::<u8>(), layout);
                }
            },
            // SAFETY: refused, the value is still in the box: re-box it to drop it normally.
            Err(_) => super::spawn::drop_quietly(unsafe { Box::from_raw(raw) }),
        }
        moved
    }

    /// [`World::remove`] of component `c`, dropping the value (commands).
    pub(crate) fn remove_dropping(&mut self, entity: Entity, c: u32) -> Result<(), WorldError> {
        let Some(loc) = self.locations.locate(entity) else {
            return Err(WorldError::NoSuchEntity(entity));
        };
        let ty = &M::components()[c as usize].ty;
        let mut held = Column::new(ty);
        held.reserve(0, 1);
        // SAFETY: on `Ok` the value moved into `held` (capacity 1, same type) and the rest of
        // the row into the target store (or out of its sparse set); `held` drops it once the
        // world is consistent again.
        unsafe {
            if M::components()[c as usize].sparse {
                self.remove_sparse_into(entity, loc, c, held.ptr_at(0))?;
            } else {
                self.remove_into(entity, loc, c, held.ptr_at(0))?;
            }
            held.drop_range(0, 1);
        }
        Ok(())
    }

    /// Moves `entity` from `loc` to the end of store `t.to` with the transition's move (see
    /// [`MoveFn`](crate::model::tables::MoveFn)): its shared components, the inserted value from
    /// `value` or the removed one out to `value`, the swap-remove of the source row, the entity
    /// ids and the locations. This is the whole cost of `insert`/`remove` (the `add_remove`
    /// benchmark): one indirect call to a move with static types and constant store ids, found
    /// in the (store, component) entry itself. The whole move runs inside that call, so that
    /// nothing here stays live across it: with the ids and locations updated here after the
    /// call, its registers were spilled and reloaded, which made a move 1.3× slower. With a
    /// `batch` (whose first item is `entity` and `value`), the move goes on with each next item
    /// while its entity lives in the same store; returns how many items moved.
    ///
    /// # Safety
    /// `t` is the move of component `c` from `loc.store`; for an insert `value` points to an
    /// owned value of the inserted component, which the caller then treats as moved; for a
    /// remove it points to room for the removed component's value, which the caller then
    /// owns; a batch is as [`MoveFn`](crate::model::tables::MoveFn) says.
    #[inline(always)]
    pub(super) unsafe fn move_entity(
        &mut self,
        entity: Entity,
        loc: Location,
        t: MoveRef<'_>,
        c: u32,
        value: *mut u8,
        batch: Option<&MoveBatch>,
    ) -> usize {
        debug_assert!(loc.store != t.to);
        // Room first, here rather than in the move, which then calls nothing and saves no
        // registers: nothing may fail once values start to move.
        let rows = self.run_room(loc, batch);
        self.stores[t.to as usize].reserve(rows);
        // SAFETY: `t` is a move from `loc.store`, the live location of `entity`; `value` and
        // the batch are as the caller guarantees (the `MoveFn` contract).
        unsafe {
            (t.run)(
                self.stores.as_mut_ptr(),
                &mut self.locations,
                entity,
                loc,
                value,
                c,
                batch,
            )
        }
    }

    /// The rows a move from `loc` makes room for in its target: one, or for a batch as many
    /// as its run can move (no more items than it has, no more rows than the source holds),
    /// so that the run is not cut at the target's capacity.
    #[inline(always)]
    pub(super) fn run_room(&self, loc: Location, batch: Option<&MoveBatch>) -> usize {
        batch.map_or(1, |b| b.len().min(self.stores[loc.store as usize].len()))
    }

    #[cold]
    pub(crate) fn undeclared_error(
        &self,
        entity: Entity,
        loc: Location,
        change: Change,
        component: u32,
    ) -> WorldError {
        let info = self.stores[loc.store as usize].info();
        let mask = self.store_mask(loc.store as usize);
        let missing = match change {
            Change::Insert => mask.with(component),
            Change::Remove => mask.without(component),
        };
        WorldError::UndeclaredSignature {
            entity,
            change,
            component: Self::component_name(component),
            signature: info.name,
            current: super::set_names::<M>(mask),
            missing: super::set_names::<M>(missing),
        }
    }
}

/// Empties every store, dropping their values; if a `Drop` panics, the stores after it are
/// emptied while unwinding, so no store keeps a row whose id was retired.
fn empty_stores(stores: &mut [crate::storage::Store]) {
    struct EmptyRest<'a>(&'a mut [crate::storage::Store]);
    impl Drop for EmptyRest<'_> {
        fn drop(&mut self) {
            empty_stores(self.0);
        }
    }
    if let Some((first, rest)) = stores.split_first_mut() {
        let rest = EmptyRest(rest);
        first.truncate(0);
        drop(rest);
    }
}
