//! Spawning: one entity from a signature value, a batch into one store, and (for commands) a
//! type-erased signature value.

use super::{Location, World, WorldError};
use crate::__private::FieldSink;
use crate::component::{Component, Signature};
use crate::entity::{Entity, EntityError};
use crate::model::{SignatureOf, WorldModel};
use crate::storage::{copy_bytes, Store};
use std::any::TypeId;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Writes a signature's parts into row `row` of a store, slot by slot, checking each value's
/// type against the slot (one compare of constants per component), so a signature whose parts
/// disagree with its store panics instead of writing the wrong bytes.
struct RowWriter<'a> {
    store: &'a mut Store,
    row: usize,
    next: usize,
}

impl FieldSink for RowWriter<'_> {
    #[inline(always)]
    fn put<C: Component>(&mut self, value: C) {
        let k = self.next;
        assert!(
            self.store.slot_types().get(k) == Some(&TypeId::of::<C>()),
            "signature part {k} is not the store's component {k}"
        );
        let ptr = self.store.slot_ptr(self.store.info().slots[k], self.row);
        // SAFETY: slot k holds a C (checked above), the row is within reserved capacity, and
        // the slot is not initialised yet (each part is put once, in order).
        unsafe { ptr.cast::<C>().write(value) };
        self.next += 1;
    }
}

/// Where a batch writes one slot: the column's base (already offset to the slot) and stride.
/// Valid until the store's columns reallocate.
struct Target {
    base: *mut u8,
    stride: usize,
    type_id: TypeId,
}

fn targets(store: &Store) -> Vec<Target> {
    store
        .info()
        .slots
        .iter()
        .zip(store.slot_types())
        .map(|(&slot, &type_id)| Target {
            base: store.slot_ptr(slot, 0),
            stride: store.info().columns[slot.column as usize].size,
            type_id,
        })
        .collect()
}

/// [`RowWriter`] for batches: the slot addresses are computed once per batch, and the parts'
/// types are checked against the slots when `CHECK` is set. A batch checks its first row
/// only: every later value is of the same signature type, whose parts are the same types in
/// the same order (the `SignatureOf` contract), so the check would repeat a known answer.
///
/// `COLUMNS`: the store is laid out in columns, so each slot's column holds exactly its
/// component (the `WorldModel` contract) and its stride is the component's size, a constant:
/// a load and a multiply fewer per component.
struct BatchWriter<'a, const CHECK: bool, const COLUMNS: bool> {
    targets: &'a [Target],
    row: usize,
    next: usize,
}

impl<const CHECK: bool, const COLUMNS: bool> FieldSink for BatchWriter<'_, CHECK, COLUMNS> {
    #[inline(always)]
    fn put<C: Component>(&mut self, value: C) {
        let k = self.next;
        let t = if CHECK {
            let t = &self.targets[k];
            assert!(
                t.type_id == TypeId::of::<C>(),
                "signature part {k} is not the store's component {k}"
            );
            t
        } else {
            // SAFETY: the first row of the batch was written with CHECK and put exactly
            // `targets.len()` parts (asserted by `write_row`); every value of one signature type
            // puts the same parts (the `SignatureOf` contract), so `k` is in bounds.
            unsafe { self.targets.get_unchecked(k) }
        };
        // SAFETY: slot k holds a C (checked on the batch's first row, and the same for every
        // row of one signature type); `base` is the slot's address in row 0 of the current
        // allocation, the row is within reserved capacity, and the slot is not initialised yet
        // (each part is put once, in order).
        unsafe {
            let ptr = if COLUMNS {
                t.base.cast::<C>().wrapping_add(self.row)
            } else {
                t.base.wrapping_add(self.row * t.stride).cast::<C>()
            };
            ptr.write(value)
        };
        self.next += 1;
    }
}

/// Writes `value` into row `row` of a batch (capacity reserved, beyond the store's length).
#[inline(always)]
fn write_row<S: Signature, const CHECK: bool, const COLUMNS: bool>(
    targets: &[Target],
    row: usize,
    value: S,
) {
    let mut w = BatchWriter::<CHECK, COLUMNS> {
        targets,
        row,
        next: 0,
    };
    value.write_fields(&mut w);
    if CHECK {
        assert_eq!(w.next, targets.len(), "signature wrote too few fields");
    } else {
        // The checked first row put every part; the `SignatureOf` contract makes every later
        // value of the type put the same ones.
        debug_assert_eq!(w.next, targets.len(), "signature wrote too few fields");
    }
}

/// Writes `value` as row `len()` of `store` (capacity reserved) and commits it for `entity`,
/// stamped `stamp`.
#[inline(always)]
fn push_value<S: Signature>(store: &mut Store, entity: Entity, value: S, stamp: u64) {
    let row = store.len();
    let mut w = RowWriter {
        store,
        row,
        next: 0,
    };
    value.write_fields(&mut w);
    assert_eq!(
        w.next,
        w.store.info().slots.len(),
        "signature wrote too few fields"
    );
    // SAFETY: every slot of the row was written (checked above).
    unsafe { w.store.commit_row(entity, stamp) };
}

/// Drops `value`, catching a panic of its `Drop`: used on error paths, which report the error
/// rather than a destructor's panic.
pub(crate) fn drop_quietly<T>(value: T) {
    let _ = catch_unwind(AssertUnwindSafe(move || drop(value)));
}

/// Drops the rows a batch wrote beyond the store's length unless disarmed: the rollback of a
/// batch whose iterator panicked or whose ids could not be issued. The rows were never
/// committed, so the store's length is right throughout; only their values need dropping.
struct Uncommitted<'a> {
    store: &'a mut Store,
    first: usize,
    written: usize,
}

impl Drop for Uncommitted<'_> {
    fn drop(&mut self) {
        let (store, first, written) = (&mut *self.store, self.first, self.written);
        if written == 0 {
            // Committed (or nothing written): nothing to drop.
            return;
        }
        // A panicking Drop is caught so a rollback during unwinding cannot abort; the store is
        // consistent either way (these rows are beyond its length).
        // SAFETY: rows first..first + written were written by the batch and not committed.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
            store.drop_uncommitted(first, first + written)
        }));
    }
}

/// Writes every value as a row of the batch, beyond the store's length, growing the store when
/// it is full. `COLUMNS` as in [`BatchWriter`]: true only for a store laid out in columns.
#[inline(always)]
fn write_rows<S: Signature, const COLUMNS: bool>(
    batch: &mut Uncommitted<'_>,
    values: impl Iterator<Item = S>,
) {
    let first = batch.first;
    let mut capacity = batch.store.capacity();
    let mut targets = targets(batch.store);
    let mut values = values;
    if let Some(value) = values.next() {
        if first == capacity {
            batch.store.reserve_beyond(0, 1);
            capacity = batch.store.capacity();
            targets = self::targets(batch.store);
        }
        write_row::<S, true, COLUMNS>(&targets, first, value);
        batch.written = 1;
    }
    for value in values {
        let row = first + batch.written;
        if row == capacity {
            batch.store.reserve_beyond(batch.written, 1);
            capacity = batch.store.capacity();
            targets = self::targets(batch.store);
        }
        write_row::<S, false, COLUMNS>(&targets, row, value);
        batch.written += 1;
    }
}

impl<M: WorldModel> World<M> {
    /// Spawns one entity from a value of a declared signature.
    ///
    /// # Panics
    /// When all entity slots are in use; see [`World::try_spawn`].
    #[inline]
    #[track_caller]
    pub fn spawn<S: SignatureOf<M>>(&mut self, value: S) -> Entity {
        match self.try_spawn(value) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        }
    }

    /// Spawns one entity, or returns an error (dropping `value`) when the entity index space
    /// is exhausted.
    #[inline]
    pub fn try_spawn<S: SignatureOf<M>>(&mut self, value: S) -> Result<Entity, WorldError> {
        let store = &mut self.stores[S::STORE as usize];
        let row = store.len();
        let entity = match self.locations.create_at(Location::new(S::STORE, row)) {
            Ok(e) => e,
            Err(e) => {
                drop_quietly(value);
                return Err(e.into());
            }
        };
        store.reserve(1);
        push_value(store, entity, value, self.locations.stamp());
        Ok(entity)
    }

    /// Spawns one entity per value, all into one store, reserving space once.
    ///
    /// # Panics
    /// When the entity index space is exhausted; see [`World::try_spawn_batch`].
    #[track_caller]
    pub fn spawn_batch<S: SignatureOf<M>>(
        &mut self,
        values: impl IntoIterator<Item = S>,
    ) -> Vec<Entity> {
        match self.try_spawn_batch(values) {
            Ok(e) => e,
            Err(e) => panic!("{e}"),
        }
    }

    /// Spawns one entity per value, all into one store; all or nothing. When the index space
    /// cannot hold the batch, returns an error and spawns nothing: a batch of known length is
    /// refused before any value is taken, a batch of unknown length is rolled back. Refused
    /// values are dropped; a panic from their `Drop` is caught, so the error is what the
    /// caller sees. If the iterator panics, the rows it produced are rolled back and the panic
    /// continues.
    pub fn try_spawn_batch<S: SignatureOf<M>>(
        &mut self,
        values: impl IntoIterator<Item = S>,
    ) -> Result<Vec<Entity>, WorldError> {
        let values = values.into_iter();
        let (lower, upper) = values.size_hint();
        let available = self.locations.entities().available();
        if upper == Some(lower) && lower > available {
            drop_quietly(values);
            return Err(EntityError::Exhausted {
                requested: lower,
                available,
            }
            .into());
        }
        let store_id = S::STORE;
        let store = &mut self.stores[store_id as usize];
        let first = store.len();
        store.reserve(lower);
        // Rows first, beyond the store's length; if the iterator panics or ids run out, the
        // guard drops them.
        let mut batch = Uncommitted {
            store,
            first,
            written: 0,
        };
        if M::stores()[store_id as usize].layout == crate::Layout::Columns {
            write_rows::<S, true>(&mut batch, values);
        } else {
            write_rows::<S, false>(&mut batch, values);
        }
        let count = batch.written;
        let mut entities = Vec::with_capacity(count);
        // All or nothing: on exhaustion the guard drops the new rows.
        self.locations
            .create_run(store_id, first, count, &mut entities)?;
        batch.written = 0;
        // SAFETY: rows first..first + count were written, within capacity.
        unsafe { batch.store.commit_rows(&entities, self.locations.stamp()) };
        Ok(entities)
    }

    /// Spawns a type-erased signature value as the reserved (flushed, unplaced) `entity`. An
    /// id that is not such a reservation of this world (a second spawn of one id, or an id
    /// reserved from another entity manager) is refused before anything is written.
    pub(crate) fn spawn_erased(
        &mut self,
        entity: Entity,
        value: Box<dyn crate::schedule::SpawnValue>,
    ) -> Result<(), WorldError> {
        if !self.locations.is_unplaced(entity) {
            drop_quietly(value);
            return Err(WorldError::NoSuchEntity(entity));
        }
        let Some(store_id) = self.tables.store_of_type(value.signature_type()) else {
            let type_name = value.type_name();
            drop_quietly(value);
            return Err(WorldError::NotInWorld {
                kind: "signature",
                type_name,
            });
        };
        let store = &mut self.stores[store_id as usize];
        let row = store.len();
        store.reserve(1);
        let mut sink = ErasedRowWriter {
            store,
            row,
            next: 0,
        };
        value.write_into(&mut sink);
        assert_eq!(
            sink.next,
            sink.store.info().slots.len(),
            "signature wrote too few fields"
        );
        // SAFETY: every slot was written (checked above).
        unsafe { store_commit(sink.store, entity, self.locations.stamp()) };
        self.locations
            .place_reserved(entity, Location::new(store_id, row));
        Ok(())
    }
}

/// # Safety
/// As [`Store::commit_row`].
unsafe fn store_commit(store: &mut Store, entity: Entity, stamp: u64) {
    // SAFETY: forwarded.
    unsafe { store.commit_row(entity, stamp) }
}

/// [`RowWriter`] for values whose type is known only by `TypeId`.
struct ErasedRowWriter<'a> {
    store: &'a mut Store,
    row: usize,
    next: usize,
}

impl crate::schedule::RawSink for ErasedRowWriter<'_> {
    unsafe fn put_raw(&mut self, type_id: TypeId, size: usize, value: *mut u8) {
        let k = self.next;
        assert!(
            self.store.slot_types().get(k) == Some(&type_id),
            "signature part {k} is not the store's component {k}"
        );
        let dst = self.store.slot_ptr(self.store.info().slots[k], self.row);
        // SAFETY: the caller passes ownership of `size` bytes of a value of type `type_id`,
        // which is the slot's component (checked); the row is in reserved capacity.
        unsafe { copy_bytes(value, dst, size) };
        self.next += 1;
    }
}
