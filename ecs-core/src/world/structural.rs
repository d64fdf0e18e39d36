//! Structural changes: despawn, and insert/remove, which move an entity's row to the store of
//! the signature with (or without) the component. A move follows a [`Transition`] computed
//! once per (store, component) pair that leads to a declared signature: one copy per shared
//! component, no lookup per component. It is written once here instead of once per
//! (component, signature) pair in the generated code.

use super::{Change, Location, World, WorldError};
use crate::entity::Entity;
use crate::model::{ComponentOf, MoveRef, WorldModel};
use crate::storage::Column;
use std::mem::{ManuallyDrop, MaybeUninit};

impl<M: WorldModel> World<M> {
    /// Despawns `entity`, dropping its components. The last row of its store moves into the
    /// hole. Returns false for a dead or stale id. The components are dropped after the world
    /// is consistent again, so a panicking `Drop` cannot corrupt it.
    pub fn despawn(&mut self, entity: Entity) -> bool {
        let Some(loc) = self.table.locate(entity) else {
            return false;
        };
        self.table.destroy(entity);
        let table = &mut self.table;
        self.stores[loc.store as usize].swap_remove_drop(loc.row(), |moved| {
            if let Some(moved) = moved {
                table.relocate(moved, loc);
            }
        });
        true
    }

    /// Despawns every entity, keeping the resources and the memory of the stores and of the
    /// entity table for the next spawn (a level's restart, say). Every id issued so far becomes
    /// stale, as after [`World::despawn`]; later spawns may reuse the slots (seed part 1's
    /// rule). That is not by itself faster than spawning into a new world (see the README's
    /// restart rows).
    /// The ids are retired before any component is dropped, and a panicking `Drop` still
    /// leaves every store empty (the values after it leak), so the world stays consistent.
    pub fn clear(&mut self) {
        for store in self.stores.iter() {
            for &e in store.entities() {
                self.table.destroy(e);
            }
        }
        empty_stores(&mut self.stores);
    }

    /// Adds `component` to `entity`, moving the entity to the declared signature that has its
    /// components plus this one (one copy per component; the target comes from a table, no
    /// search). If the entity already has a `C`, the value is replaced and the old one
    /// returned. On error the entity is unchanged and `component` is dropped (a panic of its
    /// `Drop` is caught: the error is what the caller sees).
    #[inline]
    pub fn insert<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
        component: C,
    ) -> Result<Option<C>, WorldError> {
        let Some(loc) = self.table.locate(entity) else {
            super::spawn::drop_quietly(component);
            return Err(WorldError::NoSuchEntity(entity));
        };
        let t = match self.tables.slot_or_insert(loc.store, C::ID) {
            Ok(k) => {
                let store = &mut self.stores[loc.store as usize];
                let ptr = store.slot_ptr(store.info().slots[k], loc.row());
                // SAFETY: the live row's slot holds a C (ComponentOf contract); `&mut self`.
                let old = unsafe { &mut *ptr.cast::<C>() };
                return Ok(Some(std::mem::replace(old, component)));
            }
            Err(Some(t)) => t,
            Err(None) => {
                // The refusal is the error the caller sees, even if the value's `Drop` panics
                // (as for the same refusal through `Commands`).
                super::spawn::drop_quietly(component);
                return Err(self.undeclared(entity, loc, Change::Insert, C::ID));
            }
        };
        let mut value = ManuallyDrop::new(component);
        // SAFETY: `t` adds component C::ID, and `value` is a C, moved into the target store by
        // the call and never used or dropped here again.
        unsafe { self.move_entity(entity, loc, t, C::ID, (&mut *value as *mut C).cast()) };
        Ok(None)
    }

    /// Takes the `C` of `entity`, moving the entity to the declared signature without it. On
    /// error the entity is unchanged.
    #[inline]
    pub fn remove<C: ComponentOf<M>>(&mut self, entity: Entity) -> Result<C, WorldError> {
        // Not `ok_or(..)?`: that builds the error on every call and drops it (a call per
        // remove once `WorldError` holds a boxed `WorldError`; `add_remove` 1.07×).
        let Some(loc) = self.table.locate(entity) else {
            return Err(WorldError::NoSuchEntity(entity));
        };
        let t = self.remove_move(entity, loc, C::ID)?;
        let mut value = MaybeUninit::<C>::uninit();
        // SAFETY: `t` removes component C::ID from the entity's store; the move writes the
        // removed C into `value`, which then owns it.
        unsafe {
            self.move_entity(entity, loc, t, C::ID, value.as_mut_ptr().cast());
            Ok(value.assume_init())
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
        // Not `ok_or(..)?`: that builds the error on every call and drops it (a call per
        // remove once `WorldError` holds a boxed `WorldError`; `add_remove` 1.07×).
        let Some(loc) = self.table.locate(entity) else {
            return Err(WorldError::NoSuchEntity(entity));
        };
        let size = self.tables.sizes()[c as usize];
        let raw: *mut (dyn std::any::Any + Send) = Box::into_raw(value);
        let t = match self.tables.slot_or_insert(loc.store, c) {
            Ok(k) => {
                // Replace in place: swap the old value into the box, then drop the box.
                let store = &mut self.stores[loc.store as usize];
                let slot = store.slot_ptr(store.info().slots[k], loc.row());
                // SAFETY: the box holds a value of component c (the caller found c by the value's
                // TypeId), as does the slot; swapping bytes exchanges the two values, and the box
                // (from `into_raw`) then drops the old one.
                unsafe {
                    std::ptr::swap_nonoverlapping(slot, raw.cast::<u8>(), size);
                    drop(Box::from_raw(raw));
                }
                return Ok(());
            }
            Err(Some(t)) => t,
            Err(None) => {
                // SAFETY: re-box the pointer from `into_raw` to drop the value normally.
                super::spawn::drop_quietly(unsafe { Box::from_raw(raw) });
                return Err(self.undeclared(entity, loc, Change::Insert, c));
            }
        };
        // SAFETY: the box holds a component c; its bytes are moved into the target store,
        // after which the allocation is freed without dropping the value.
        unsafe {
            self.move_entity(entity, loc, t, c, raw.cast::<u8>());
            let layout = std::alloc::Layout::for_value(&*raw);
            if layout.size() != 0 {
                std::alloc::dealloc(raw.cast::<u8>(), layout);
            }
        }
        Ok(())
    }

    /// [`World::remove`] of component `c`, dropping the value (commands).
    pub(crate) fn remove_dropping(&mut self, entity: Entity, c: u32) -> Result<(), WorldError> {
        // Not `ok_or(..)?`: that builds the error on every call and drops it (a call per
        // remove once `WorldError` holds a boxed `WorldError`; `add_remove` 1.07×).
        let Some(loc) = self.table.locate(entity) else {
            return Err(WorldError::NoSuchEntity(entity));
        };
        let t = self.remove_move(entity, loc, c)?;
        let ty = &M::components()[c as usize].ty;
        let mut held = Column::new(ty);
        held.reserve(0, 1);
        // SAFETY: the value moves into `held` (capacity 1, same type), the rest of the row into
        // the target store; `held` drops it once the world is consistent again.
        unsafe {
            self.move_entity(entity, loc, t, c, held.ptr_at(0));
            held.drop_range(0, 1);
        }
        Ok(())
    }

    /// The move that removes component `c` from the entity at `loc`, or why there is none.
    #[inline]
    fn remove_move(
        &self,
        entity: Entity,
        loc: Location,
        c: u32,
    ) -> Result<MoveRef<'static>, WorldError> {
        let tables = self.tables;
        match tables.remove_move(loc.store, c) {
            Some(t) => Ok(t),
            None if tables.slot_index(loc.store, c).is_none() => {
                Err(WorldError::MissingComponent {
                    entity,
                    signature: M::stores()[loc.store as usize].name,
                    component: Self::component_name(c),
                })
            }
            None => Err(self.undeclared(entity, loc, Change::Remove, c)),
        }
    }

    /// Moves `entity` from `loc` to the end of store `t.to` with the transition's move (see
    /// [`MoveFn`](crate::model::MoveFn)): its shared components, the inserted value from
    /// `value` or the removed one out to `value`, the swap-remove of the source row, the entity
    /// ids and the locations. This is the whole cost of `insert`/`remove` (the `add_remove`
    /// benchmark): one indirect call to a move with static types and constant store ids, found
    /// in the (store, component) entry itself. The whole move runs inside that call, so that
    /// nothing here stays live across it: with the ids and locations updated here after the
    /// call, its registers were spilled and reloaded, which made a move 1.3× slower.
    ///
    /// # Safety
    /// `t` is the move of component `c` from `loc.store`; for an insert `value` points to an
    /// owned value of the inserted component, which the caller then treats as moved; for a
    /// remove it points to room for the removed component's value, which the caller then
    /// owns.
    #[inline(always)]
    unsafe fn move_entity(
        &mut self,
        entity: Entity,
        loc: Location,
        t: MoveRef<'_>,
        c: u32,
        value: *mut u8,
    ) {
        debug_assert!(loc.store != t.to);
        // Room first, here rather than in the move, which then calls nothing and saves no
        // registers: nothing may fail once values start to move.
        self.stores[t.to as usize].reserve(1);
        // SAFETY: `t` is a move from `loc.store`, the live location of `entity`; `value` is as
        // the caller guarantees (the `MoveFn` contract).
        unsafe {
            (t.run)(
                self.stores.as_mut_ptr(),
                &mut self.table,
                entity,
                loc,
                value,
                c,
            )
        };
    }

    #[cold]
    fn undeclared(
        &self,
        entity: Entity,
        loc: Location,
        change: Change,
        component: u32,
    ) -> WorldError {
        let names: Vec<&str> = M::components().iter().map(|c| c.name).collect();
        let info = &M::stores()[loc.store as usize];
        let bit = 1u128 << component;
        let missing = match change {
            Change::Insert => info.mask | bit,
            Change::Remove => info.mask & !bit,
        };
        WorldError::UndeclaredSignature {
            entity,
            change,
            component: Self::component_name(component),
            signature: info.name,
            current: super::set_names(info.mask, &names),
            missing: super::set_names(missing, &names),
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
