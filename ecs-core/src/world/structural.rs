//! Structural changes: despawn, and insert/remove, which move an entity's row to the store of
//! the signature with (or without) the component. A move follows a [`Transition`] computed
//! once per (store, component) pair that leads to a declared signature: one copy per shared
//! component, no lookup per component. It is written once here instead of once per
//! (component, signature) pair in the generated code.

use super::{Change, Location, World, WorldError};
use crate::entity::Entity;
use crate::model::{ComponentOf, Transition, WorldModel};
use crate::storage::{copy_bytes, Column, Store};
use std::mem::ManuallyDrop;

/// Two distinct stores, mutably.
#[inline]
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
        let value = ManuallyDrop::new(component);
        // SAFETY: `t` adds component C::ID, and `value` is a C, moved into the target store by
        // the call and never used or dropped here again.
        unsafe { self.move_entity(entity, loc, t, Some((&*value as *const C).cast())) };
        Ok(None)
    }

    /// Takes the `C` of `entity`, moving the entity to the declared signature without it. On
    /// error the entity is unchanged.
    #[inline]
    pub fn remove<C: ComponentOf<M>>(&mut self, entity: Entity) -> Result<C, WorldError> {
        let loc = self
            .table
            .locate(entity)
            .ok_or(WorldError::NoSuchEntity(entity))?;
        let t = self.remove_move(entity, loc, C::ID)?;
        // Room first: nothing may fail between reading the value out and the move.
        self.stores[t.to as usize].reserve(1);
        let store = &self.stores[loc.store as usize];
        // SAFETY: `t.changed` is C's slot in the live source row (ComponentOf contract);
        // reading moves the value out: the move does not copy it and forgets the source row.
        let value = unsafe { store.slot_ptr(t.changed, loc.row()).cast::<C>().read() };
        // SAFETY: every other component of the row is copied by `t`.
        unsafe { self.move_entity(entity, loc, t, None) };
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
            self.move_entity(entity, loc, t, Some(raw.cast::<u8>().cast_const()));
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
        let t = self.remove_move(entity, loc, c)?;
        let ty = &M::components()[c as usize].ty;
        let mut held = Column::new(ty);
        held.reserve(0, 1);
        self.stores[t.to as usize].reserve(1);
        let store = &self.stores[loc.store as usize];
        // SAFETY: the value moves into `held` (capacity 1, same type), the rest of the row into
        // the target store; `held` drops it once the world is consistent again.
        unsafe {
            copy_bytes(
                store.slot_ptr(t.changed, loc.row()),
                held.ptr_at(0),
                ty.size,
            );
            self.move_entity(entity, loc, t, None);
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
    ) -> Result<&'static Transition, WorldError> {
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

    /// Moves `entity` from `loc` to the end of store `t.to`: the copies of `t`, then, for an
    /// insert, the new component from `extra`. The source row is then removed without dropping
    /// anything. Written with raw addresses and without per-copy bounds checks: this is the
    /// whole cost of `insert`/`remove` (the `add_remove` benchmark), and the tables it follows
    /// were checked against the model once, when they were built.
    ///
    /// # Safety
    /// `t` is a move from `loc.store`; for an insert `extra` points to an owned value of the
    /// inserted component, which the caller then treats as moved; for a remove (`extra` is
    /// `None`) the caller has moved the removed component's value out.
    #[inline(always)]
    unsafe fn move_entity(
        &mut self,
        entity: Entity,
        loc: Location,
        t: &Transition,
        extra: Option<*const u8>,
    ) {
        let (from, to) = two_stores(&mut self.stores, loc.store as usize, t.to as usize);
        to.reserve(1);
        let (row, to_row) = (loc.row(), to.len());
        if let Some(run) = t.typed {
            // SAFETY: `t` is the transition from `from` to `to` (the model's moves are keyed
            // by transition); the row is live, `to_row` reserved above and unwritten; `extra`
            // is the caller's owned value for an insert (null is never read for a remove).
            unsafe { run(from, to, row, to_row, extra.unwrap_or(std::ptr::null())) };
        } else {
            let (src, dst) = (from.columns(), to.columns());
            for op in t.copies.iter() {
                // SAFETY: `Tables::build` made every copy from the two stores' slots, so its
                // columns exist in both stores and pair one component (same type and size).
                // The source row is live, the target row within the capacity reserved above.
                unsafe {
                    let s = src.get_unchecked(op.src_col as usize).ptr_at(row);
                    let d = dst.get_unchecked(op.dst_col as usize).ptr_at(to_row);
                    copy_bytes(
                        s.add(op.src_off as usize),
                        d.add(op.dst_off as usize),
                        op.size as usize,
                    )
                };
            }
            if let Some(value) = extra {
                // SAFETY: the caller's value of the inserted component, into its slot.
                unsafe { copy_bytes(value, to.slot_ptr(t.changed, to_row), t.changed_size) };
            }
        }
        // SAFETY: every slot of the new row is written (shared components plus the inserted
        // one), and every value of the source row was copied or moved out by the caller.
        let moved = unsafe {
            to.commit_row(entity);
            from.swap_remove_forget(row)
        };
        if let Some(moved) = moved {
            self.table.relocate(moved, loc);
        }
        self.table.relocate(entity, Location::new(t.to, to_row));
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
