//! Structural changes: despawn, and insert/remove, which move an entity's row to the store of
//! the signature with (or without) the component. The move is type-erased — one copy per
//! component, through the model's slot tables — so it is written once here instead of once
//! per (component, signature) pair in the generated code.

use super::{Change, Location, World, WorldError};
use crate::entity::Entity;
use crate::model::{ComponentOf, Tables, WorldModel};
use crate::storage::{copy_bytes, Column, Store};
use std::mem::ManuallyDrop;

/// Two distinct stores, mutably.
fn two_stores(stores: &mut [Store], a: usize, b: usize) -> (&mut Store, &mut Store) {
    assert_ne!(a, b, "a move stays within one store");
    if a < b {
        let (lo, hi) = stores.split_at_mut(b);
        (&mut lo[a], &mut hi[0])
    } else {
        let (lo, hi) = stores.split_at_mut(a);
        (&mut hi[0], &mut lo[b])
    }
}

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

    /// Adds `component` to `entity`, moving the entity to the declared signature that has its
    /// components plus this one (one copy per component; the target comes from a table, no
    /// search). If the entity already has a `C`, the value is replaced and the old one
    /// returned. On error the entity is unchanged and `component` is dropped.
    pub fn insert<C: ComponentOf<M>>(
        &mut self,
        entity: Entity,
        component: C,
    ) -> Result<Option<C>, WorldError> {
        let loc = self
            .table
            .locate(entity)
            .ok_or(WorldError::NoSuchEntity(entity))?;
        if let Some(old) = self.get_mut::<C>(entity) {
            return Ok(Some(std::mem::replace(old, component)));
        }
        let tables = M::tables();
        let Some(to) = tables.insert_target(loc.store, C::ID) else {
            return Err(self.undeclared(entity, loc, Change::Insert, C::ID));
        };
        let mut value = ManuallyDrop::new(component);
        // SAFETY: `value` is a C (C::ID by the ComponentOf contract), moved into the target
        // store by the call and never used or dropped here again.
        unsafe { self.move_entity(entity, loc, to, Some((C::ID, (&mut *value as *mut C).cast()))) };
        Ok(None)
    }

    /// Takes the `C` of `entity`, moving the entity to the declared signature without it. On
    /// error the entity is unchanged.
    pub fn remove<C: ComponentOf<M>>(&mut self, entity: Entity) -> Result<C, WorldError> {
        let loc = self
            .table
            .locate(entity)
            .ok_or(WorldError::NoSuchEntity(entity))?;
        let to = self.remove_target(entity, loc, C::ID)?;
        // Room first: nothing may fail between reading the value out and the move.
        self.stores[to as usize].reserve(1);
        let store = &self.stores[loc.store as usize];
        let k = M::tables()
            .slot_index(loc.store, C::ID)
            .expect("remove_target checked that the store holds the component");
        // SAFETY: the slot holds an initialised C (ComponentOf contract, live row); reading it
        // out moves it: `move_entity` does not copy it (the target store has no C) and the
        // source row is forgotten, not dropped.
        let value = unsafe { store.slot_ptr(store.info().slots[k], loc.row()).cast::<C>().read() };
        // SAFETY: every other component of the row is copied to the target store.
        unsafe { self.move_entity(entity, loc, to, None) };
        Ok(value)
    }

    /// [`World::insert`] for a boxed value of component `c` (commands). The box's contents
    /// are moved into the store and its allocation freed.
    pub(crate) fn insert_boxed(
        &mut self,
        entity: Entity,
        c: u32,
        value: Box<dyn std::any::Any + Send>,
    ) -> Result<(), WorldError> {
        let loc = self
            .table
            .locate(entity)
            .ok_or(WorldError::NoSuchEntity(entity))?;
        let tables = M::tables();
        let size = tables.sizes()[c as usize];
        let raw: *mut (dyn std::any::Any + Send) = Box::into_raw(value);
        if let Some(k) = tables.slot_index(loc.store, c) {
            // Replace in place: swap the old value into the box, then drop the box.
            let store = &mut self.stores[loc.store as usize];
            let slot = store.slot_ptr(store.info().slots[k], loc.row());
            // SAFETY: the box holds a value of component c (the caller found c by the value's
            // TypeId), as does the slot; swapping bytes exchanges the two values.
            unsafe {
                std::ptr::swap_nonoverlapping(slot, raw.cast::<u8>(), size);
                drop(Box::from_raw(raw));
            }
            return Ok(());
        }
        let Some(to) = tables.insert_target(loc.store, c) else {
            // SAFETY: re-box the pointer from `into_raw` to drop the value normally.
            super::spawn::drop_quietly(unsafe { Box::from_raw(raw) });
            return Err(self.undeclared(entity, loc, Change::Insert, c));
        };
        // SAFETY: the box holds a component c; its bytes are moved into the target store,
        // after which the allocation is freed without dropping the value.
        unsafe {
            self.move_entity(entity, loc, to, Some((c, raw.cast::<u8>().cast_const())));
            let layout = std::alloc::Layout::for_value(&*raw);
            if layout.size() != 0 {
                std::alloc::dealloc(raw.cast::<u8>(), layout);
            }
        }
        Ok(())
    }

    /// [`World::remove`] of component `c`, dropping the value (commands).
    pub(crate) fn remove_dropping(&mut self, entity: Entity, c: u32) -> Result<(), WorldError> {
        let loc = self
            .table
            .locate(entity)
            .ok_or(WorldError::NoSuchEntity(entity))?;
        let to = self.remove_target(entity, loc, c)?;
        let ty = &M::components()[c as usize].ty;
        let mut held = Column::new(ty);
        held.reserve(0, 1);
        self.stores[to as usize].reserve(1);
        let store = &self.stores[loc.store as usize];
        let k = M::tables().slot_index(loc.store, c).expect("checked by remove_target");
        // SAFETY: the value moves into `held` (capacity 1, same type), the rest of the row into
        // the target store; `held` drops it once the world is consistent again.
        unsafe {
            copy_bytes(store.slot_ptr(store.info().slots[k], loc.row()), held.ptr_at(0), ty.size);
            self.move_entity(entity, loc, to, None);
            held.drop_range(0, 1);
        }
        Ok(())
    }

    fn remove_target(&self, entity: Entity, loc: Location, c: u32) -> Result<u32, WorldError> {
        let tables = M::tables();
        if tables.slot_index(loc.store, c).is_none() {
            return Err(WorldError::MissingComponent {
                entity,
                signature: M::stores()[loc.store as usize].name,
                component: Self::component_name(c),
            });
        }
        tables
            .remove_target(loc.store, c)
            .ok_or_else(|| self.undeclared(entity, loc, Change::Remove, c))
    }

    /// Moves `entity` from `loc` to the end of store `to`: every component `to` holds is copied
    /// from the source row, except `extra`'s component, whose value is copied from its pointer.
    /// The source row is then removed without dropping anything.
    ///
    /// # Safety
    /// `to`'s components are the source store's plus `extra`'s, or minus one component whose
    /// value the caller has moved out; `extra` points to an owned value of its component,
    /// which the caller then treats as moved.
    unsafe fn move_entity(&mut self, entity: Entity, loc: Location, to: u32, extra: Option<(u32, *const u8)>) {
        let tables: &Tables = M::tables();
        let (from_store, to_store) = two_stores(&mut self.stores, loc.store as usize, to as usize);
        to_store.reserve(1);
        let to_row = to_store.len();
        let from_slots = from_store.info().slots;
        // SAFETY: room for one row reserved; each copied slot holds the same component in
        // both stores (slot tables); the source row is live.
        unsafe {
            to_store.copy_row_from(from_store, loc.row(), tables.sizes(), |c| {
                tables.slot_index(loc.store, c).map(|k| from_slots[k])
            });
        }
        if let Some((c, ptr)) = extra {
            let k = tables.slot_index(to, c).expect("the target store holds the inserted component");
            let dst = to_store.slot_ptr(to_store.info().slots[k], to_row);
            // SAFETY: the caller's value of component c, into its slot of the new row.
            unsafe { copy_bytes(ptr, dst, tables.sizes()[c as usize]) };
        }
        // SAFETY: every slot of the new row is written (source components plus `extra`), and
        // every value of the source row was copied or moved out by the caller.
        let moved = unsafe {
            to_store.commit_row(entity);
            from_store.swap_remove_forget(loc.row())
        };
        if let Some(moved) = moved {
            self.table.relocate(moved, loc);
        }
        self.table.relocate(entity, Location::new(to, to_row));
    }

    #[cold]
    fn undeclared(&self, entity: Entity, loc: Location, change: Change, component: u32) -> WorldError {
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
