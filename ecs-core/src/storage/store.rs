//! One signature's packed store: the entity id of every row and the columns that hold its
//! components, all of one length.
//!
//! A `columns` store has one [`Column`] per component; a `rows` store has one column of
//! generated row structs (the hot components) and, when it has cold components, one column of
//! cold structs. Either way a component lives at a [`Slot`]: a column and a byte offset in the
//! column's element. The store is packed: rows `0..len` are live, removal is swap-remove.

mod image;

pub(crate) use image::{
    entity_bytes, slot_plans, Graveyard, LoadPlan, SlotPlan, Staged, StoreImage,
};

use super::column::{copy_bytes, Column};
use super::versions::{tick, RunRecords, Versions, Watch};
use crate::entity::Entity;
use crate::model::{ComponentInfo, Slot, StoreInfo};
use std::any::TypeId;

/// How many of a store's first columns keep their data's address in the store itself as well
/// as in their [`Column`]: a pass over many small stores then reaches a column's rows without
/// first reading the store's column array (`frag_iter`, 26 stores of 20 rows: 0.9x the time).
pub(crate) const HOT_COLUMNS: usize = 4;

/// A copy of a column's data address (see [`HOT_COLUMNS`]), made again whenever the column's
/// buffer moves.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ColumnBase(*mut u8);

// SAFETY: an address copied from a `Column`, which is `Send + Sync`; what is read or written
// through it is under the column's borrow rules (`StoreColumns`), as through the column.
unsafe impl Send for ColumnBase {}
// SAFETY: as above.
unsafe impl Sync for ColumnBase {}

/// Column `k`'s data address, from a store's hot `bases` for its first columns (one load, no
/// read of the column array, which a pass over many small stores pays for each store), else
/// from the column.
///
/// # Panics
/// When `k` is not a column of `columns` (past the hot bases).
#[inline(always)]
pub(crate) fn column_base(
    bases: &[ColumnBase; HOT_COLUMNS],
    columns: &[Column],
    k: usize,
) -> *mut u8 {
    match bases.get(k) {
        Some(b) => {
            debug_assert_eq!(b.0, columns[k].base(), "column {k}'s hot base is stale");
            b.0
        }
        None => columns[k].base(),
    }
}

/// The rows of one signature.
pub struct Store {
    entities: Vec<Entity>,
    columns: Box<[Column]>,
    /// The data addresses of the first [`HOT_COLUMNS`] columns (null past the last column):
    /// every change of a column's buffer is followed at once by [`Store::refresh_base`].
    bases: [ColumnBase; HOT_COLUMNS],
    info: &'static StoreInfo,
    /// The `TypeId` of each slot's component, for the checks of typed and erased writes.
    slot_types: Box<[TypeId]>,
    /// Rows every column (and the entity column) has room for: `reserve` returns at once
    /// below it, which is the common case of every push and move.
    cap: usize,
    /// When each component of each chunk of rows was last written or gained, for change and
    /// add filters.
    versions: Versions,
}

/// Slot `slot`'s place among the components of its column, in slot order (0 in a column of
/// one component): the index of its own pass stamp in the column ([`Column::mark_field`]).
#[inline]
pub(crate) fn field_index(slots: &[Slot], slot: usize) -> usize {
    let column = slots[slot].column;
    slots[..slot].iter().filter(|s| s.column == column).count()
}

impl Store {
    /// An empty store laid out as `info` says, of components described by `components`; one of
    /// a world that saves its state when `states`.
    pub(crate) fn new(
        info: &'static StoreInfo,
        components: &'static [ComponentInfo],
        states: bool,
    ) -> Self {
        let mut store = Store {
            entities: Vec::new(),
            columns: info
                .columns
                .iter()
                .enumerate()
                .map(|(k, ty)| {
                    let n = info.slots.iter().filter(|s| s.column as usize == k).count();
                    Column::new(ty).with_fields(n)
                })
                .collect(),
            bases: [ColumnBase(std::ptr::null_mut()); HOT_COLUMNS],
            info,
            slot_types: info
                .slots
                .iter()
                .map(|s| (components[s.component as usize].ty.type_id)())
                .collect(),
            cap: 0,
            versions: Versions::new(info.slots.len(), states),
        };
        for k in 0..store.columns.len() {
            store.refresh_base(k);
        }
        store
    }

    /// Copies column `k`'s data address into the hot bases, if it is one of the first
    /// [`HOT_COLUMNS`]: called right after anything that may move the column's buffer, before
    /// anything else can fail.
    #[inline]
    fn refresh_base(&mut self, k: usize) {
        if let Some(b) = self.bases.get_mut(k) {
            *b = ColumnBase(self.columns[k].base());
        }
    }

    /// The data addresses of the first [`HOT_COLUMNS`] columns, the same as their `base()`.
    #[inline(always)]
    pub(crate) fn bases(&self) -> &[ColumnBase; HOT_COLUMNS] {
        &self.bases
    }

    /// Column `k`'s data address ([`column_base`]).
    #[inline(always)]
    pub(crate) fn column_base(&self, k: usize) -> *mut u8 {
        column_base(&self.bases, &self.columns, k)
    }

    /// Do the hot bases match their columns (`check_invariants`)?
    pub(crate) fn check_bases(&self) -> Result<(), String> {
        for (k, c) in self.columns.iter().enumerate().take(HOT_COLUMNS) {
            if self.bases[k].0 != c.base() {
                return Err(format!(
                    "store {}: column {k}'s hot base is not its data address",
                    self.info.name
                ));
            }
        }
        Ok(())
    }

    /// Are the rows' adds consistent with the chunks' add records (`Versions::check_adds`)?
    pub(crate) fn check_adds(&self) -> Result<(), String> {
        self.versions.check_adds(self.len())
    }

    /// The value of slot `slot` in `row` was written in place at `stamp`.
    #[inline]
    pub(crate) fn mark_cell(&mut self, slot: usize, row: usize, stamp: u64) {
        self.versions.mark_cell(slot, row, stamp);
    }

    /// Slot `slot` may be written in every row at `stamp` (a mutable query or pass).
    #[inline]
    pub(crate) fn mark_pass(&self, slot: usize, stamp: u64) {
        let column = self.info.slots[slot].column as usize;
        self.columns[column].mark_field(field_index(self.info.slots, slot), stamp);
    }

    /// The clock bits of slot `slot`'s pass stamp: the newer of its column's and its own.
    pub(crate) fn pass_version(&self, slot: usize) -> u64 {
        let column = &self.columns[self.info.slots[slot].column as usize];
        let field = column.field_written(field_index(self.info.slots, slot));
        tick(column.written()).max(tick(field))
    }

    /// The runs of rows in chunks where any of `watched` changed (or was added) after
    /// `since`.
    pub(crate) fn changed(
        &self,
        watched: impl Iterator<Item = Watch>,
        since: u64,
    ) -> Vec<std::ops::Range<usize>> {
        let watched: Vec<(Watch, u64)> = watched
            .map(|w| {
                (
                    w,
                    if w.added {
                        0
                    } else {
                        self.pass_version(w.slot)
                    },
                )
            })
            .collect();
        self.versions.changed(&watched, self.len(), since)
    }

    /// The `TypeId` of the component in each slot.
    #[inline]
    pub(crate) fn slot_types(&self) -> &[TypeId] {
        &self.slot_types
    }

    /// The store's description.
    #[inline]
    pub(crate) fn info(&self) -> &'static StoreInfo {
        self.info
    }

    /// Number of rows.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entities.len()
    }

    /// True when the store holds no row.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Rows that fit without reallocating any column.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// The entity of each row.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// The columns.
    #[inline]
    pub(crate) fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Makes room for `additional` more rows in every column.
    #[inline]
    pub(crate) fn reserve(&mut self, additional: usize) {
        if self.len().saturating_add(additional) > self.cap {
            self.grow(additional);
        }
    }

    /// Makes room for `additional` more rows after `written` rows already written beyond the
    /// length (a batch in progress): the written rows are kept.
    #[inline]
    pub(crate) fn reserve_beyond(&mut self, written: usize, additional: usize) {
        let needed = written.saturating_add(additional);
        if self.len().saturating_add(needed) > self.cap {
            self.grow(needed);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) {
        // Columns keep `len + additional` elements' worth of bytes when they move, which
        // covers rows written beyond the length (`reserve_beyond` counts them in).
        let len = self.len();
        self.entities.reserve(additional);
        let mut cap = self.entities.capacity();
        for k in 0..self.columns.len() {
            self.columns[k].reserve(len, additional);
            self.refresh_base(k);
            cap = cap.min(self.columns[k].capacity());
        }
        self.versions.reserve_rows(cap);
        self.cap = cap;
    }

    /// Address of the component at `slot` in `row` (which may be one past the end, for a
    /// write after [`Store::reserve`]).
    #[inline]
    pub(crate) fn slot_ptr(&self, slot: Slot, row: usize) -> *mut u8 {
        self.ptr(slot.column, slot.offset, row)
    }

    /// Address of byte `offset` of `row`'s element in `column`.
    #[inline]
    pub(crate) fn ptr(&self, column: u32, offset: u32, row: usize) -> *mut u8 {
        self.columns[column as usize]
            .ptr_at(row)
            .wrapping_add(offset as usize)
    }

    /// Appends `entity` as a new row whose values the caller has already written at row
    /// `len()` of every slot.
    ///
    /// # Safety
    /// Every component slot of row `len()` is initialised, within reserved capacity.
    #[inline]
    pub(crate) unsafe fn commit_row(&mut self, entity: Entity, stamp: u64) {
        self.versions.spawn_row(self.entities.len(), stamp);
        self.entities.push(entity);
    }

    /// Appends one row per entity of `entities`, whose values the caller has already written
    /// at rows `len()..len() + entities.len()` of every slot.
    ///
    /// # Safety
    /// Every component slot of those rows is initialised, within reserved capacity.
    #[inline]
    pub(crate) unsafe fn commit_rows(&mut self, entities: &[Entity], stamp: u64) {
        let len = self.entities.len();
        self.versions.spawn_rows(len, len + entities.len(), stamp);
        self.entities.extend_from_slice(entities);
    }

    /// Drops the values of rows `from..to`, which lie beyond the length: rows a batch wrote
    /// but did not commit.
    ///
    /// # Safety
    /// `len() <= from`, and rows `from..to` are initialised and not used again.
    pub(crate) unsafe fn drop_uncommitted(&mut self, from: usize, to: usize) {
        debug_assert!(from == to || self.len() <= from);
        // SAFETY: guaranteed by the caller.
        unsafe { drop_columns(&mut self.columns, from, to) };
    }

    /// Removes `row` by moving the last row into it. `relocate` is told which entity moved
    /// (if any) while the removed values are still held apart; they are dropped afterwards, so
    /// a panicking `Drop` finds the store and the caller's entity locations consistent, and the
    /// row's other values are still dropped ([`drop_columns`]).
    ///
    /// # Panics
    /// When `row` is not a live row (before anything changes).
    pub(crate) fn swap_remove_drop(
        &mut self,
        row: usize,
        stamp: u64,
        relocate: impl FnOnce(Option<Entity>),
    ) {
        assert!(
            row < self.len(),
            "row {row} of a store of {} rows",
            self.len()
        );
        let last = self.len() - 1;
        if row != last {
            // The last row moves in: a structural write of the row, with its adds.
            // SAFETY: `row` (asserted) and `last` are live rows; the width is the store's.
            unsafe {
                self.versions
                    .move_within(last, row, stamp, self.info.slots.len())
            };
        }
        self.versions.truncate_rows(last);
        for c in self.columns.iter_mut() {
            if row == last {
                continue;
            }
            if c.ty().drop_slice.is_none() {
                // A value without drop glue needs no drop: the last row's is copied over it
                // (half the work of a swap, and sized copies for the common sizes).
                // SAFETY: row and last are distinct initialised elements of the column; `last`
                // is past the new length and its drop below does nothing for this type.
                unsafe { copy_bytes(c.ptr_at(last), c.ptr_at(row), c.elem_size()) };
            } else {
                // The removed value is dropped last, once the store is consistent.
                // SAFETY: row and last are distinct initialised elements of the column.
                unsafe {
                    std::ptr::swap_nonoverlapping(c.ptr_at(row), c.ptr_at(last), c.elem_size())
                };
            }
        }
        self.entities.swap_remove(row);
        relocate(self.entities.get(row).copied());
        if self.columns.iter().any(|c| c.ty().drop_slice.is_some()) {
            // SAFETY: element `last` of every column holds the removed values; the store's
            // length is `last` now, so nothing reads them again.
            unsafe { drop_columns(&mut self.columns, last, last + 1) };
        }
    }

    /// Removes `row`'s entity by moving the last row's entity into it, once the columns did
    /// the same (the column half of a swap-remove, done by a [`MoveFn`](crate::model::tables::MoveFn)).
    /// `width` is the store's number of slots (a constant in a typed move). Returns the entity
    /// that moved into `row`, if any.
    ///
    /// # Safety
    /// `row` is a live row, and the columns already hold the last row's values at `row` (or
    /// `row` is the last row).
    #[inline(always)]
    pub(crate) unsafe fn swap_remove_entity(
        &mut self,
        row: usize,
        stamp: u64,
        width: usize,
    ) -> Option<Entity> {
        let last = self.entities.len() - 1;
        debug_assert!(row <= last);
        if row != last {
            // SAFETY: `row` and `last` are live rows (the caller); `width` is the store's.
            unsafe { self.versions.move_within(last, row, stamp, width) };
        }
        self.versions.truncate_rows(last);
        let ids = self.entities.as_mut_ptr();
        // SAFETY: `row` is a live row (the caller) and `last` the last one, both in bounds;
        // shrinking the length by one drops nothing (`Entity` is `Copy`).
        unsafe {
            let moved = *ids.add(last);
            *ids.add(row) = moved;
            self.entities.set_len(last);
            (row != last).then_some(moved)
        }
    }

    /// Moves live row `from` into row `to`, whose values were all moved out (nothing is
    /// dropped): the row keeps its adds and counts as written at `stamp`. Returns its entity.
    /// Row `from` is left as `to` was, for [`Store::truncate_vacated`].
    ///
    /// # Safety
    /// `from` and `to` are distinct live rows, and every value in row `to` was moved out.
    #[inline]
    pub(crate) unsafe fn fill_row(&mut self, from: usize, to: usize, stamp: u64) -> Entity {
        debug_assert!(from != to && from.max(to) < self.len());
        for c in self.columns.iter() {
            // SAFETY: distinct live elements of the column (the caller).
            unsafe { copy_bytes(c.ptr_at(from), c.ptr_at(to), c.elem_size()) };
        }
        // SAFETY: both rows are live; the width is the store's number of slots.
        unsafe {
            self.versions
                .move_within(from, to, stamp, self.info.slots.len())
        };
        let moved = self.entities[from];
        self.entities[to] = moved;
        moved
    }

    /// Shrinks the store to its first `keep` rows, whose values are all live: the rows past
    /// them were moved out or into rows before `keep` ([`Store::fill_row`]), so nothing is
    /// dropped.
    ///
    /// # Safety
    /// Every value of rows `keep..` was moved out or copied into a live row.
    #[inline]
    pub(crate) unsafe fn truncate_vacated(&mut self, keep: usize) {
        self.versions.truncate_rows(keep);
        self.entities.truncate(keep);
    }

    /// Appends `entity` as a new row whose values the caller has already written at row
    /// `len()` of every slot, without a capacity check: the row a move brings in from row
    /// `from` of `src`, which counts as written at `stamp`, keeps the adds of the components
    /// both stores hold and adds the others now (`carried`: per slot, the slot of `src` of
    /// the same component, or `GAINED`).
    ///
    /// # Safety
    /// As [`Store::commit_row`], and `len() < capacity()` ([`Store::reserve`] was called);
    /// `from` is a live row of `src`, and `carried` has an entry per slot of this store, each
    /// a slot of `src` or `GAINED` (the move's table).
    #[inline(always)]
    pub(crate) unsafe fn commit_row_reserved(
        &mut self,
        entity: Entity,
        stamp: u64,
        src: &Store,
        from: usize,
        carried: &[u32],
    ) {
        debug_assert!(self.len() < self.cap);
        // SAFETY: `from` is a live row of `src` and `carried` is the move's table from it to
        // this store (the caller); `reserve` reserved the row's adds with its capacity.
        unsafe {
            self.versions
                .enter_row(self.len(), stamp, &src.versions, from, carried);
            self.push_entity_reserved(entity);
        }
    }

    /// [`Store::commit_row_reserved`] for one row of a run of moves: the rows' chunk records
    /// may wait in `run` for [`Store::end_run`] ([`Versions::enter_run_row`]).
    ///
    /// # Safety
    /// As [`Store::commit_row_reserved`].
    #[inline(always)]
    pub(crate) unsafe fn commit_run_row(
        &mut self,
        entity: Entity,
        stamp: u64,
        src: &Store,
        from: usize,
        carried: &[u32],
        run: &mut RunRecords,
    ) {
        debug_assert!(self.len() < self.cap);
        // SAFETY: as in `commit_row_reserved`.
        unsafe {
            self.versions
                .enter_run_row(self.len(), stamp, &src.versions, from, carried, run);
            self.push_entity_reserved(entity);
        }
    }

    /// A run of [`Store::commit_run_row`] at `stamp` is over: the chunk records still waiting.
    #[inline]
    pub(crate) fn end_run(&mut self, stamp: u64, run: &mut RunRecords) {
        self.versions.end_run(self.len(), stamp, run);
    }

    /// Appends `entity` to the entity ids without a capacity check.
    ///
    /// # Safety
    /// `len() < capacity()`.
    #[inline(always)]
    unsafe fn push_entity_reserved(&mut self, entity: Entity) {
        let len = self.entities.len();
        // SAFETY: `cap` never exceeds the entity vector's capacity (`grow`), so slot `len`
        // is allocated; writing it and growing the length by one initialises it.
        unsafe {
            self.entities.as_mut_ptr().add(len).write(entity);
            self.entities.set_len(len + 1);
        }
    }

    /// Drops rows `len..` (also during unwinding of a batch): lengths first, then values,
    /// every column's even when one `Drop` panics ([`drop_columns`]).
    pub(crate) fn truncate(&mut self, len: usize) {
        let old = self.len();
        if len >= old {
            return;
        }
        self.entities.truncate(len);
        self.versions.truncate_rows(len);
        // SAFETY: rows len..old were initialised and are beyond the new length.
        unsafe { drop_columns(&mut self.columns, len, old) };
    }

    /// Bytes allocated for components.
    pub(crate) fn component_bytes(&self) -> usize {
        self.columns.iter().map(Column::allocated_bytes).sum()
    }

    /// Bytes allocated for entity ids.
    pub(crate) fn entity_bytes(&self) -> usize {
        self.entities.capacity() * size_of::<Entity>()
    }
}

/// Drops elements `from..to` of every column. If a value's `Drop` panics, the rest of its
/// column is dropped (a slice's drop rule) and so are the later columns, while unwinding, so a
/// panic leaks nothing but what a second panic would abort on.
///
/// # Safety
/// As [`Column::drop_range`], for every column.
unsafe fn drop_columns(columns: &mut [Column], from: usize, to: usize) {
    /// Drops the columns after the one being dropped, also when its drop panics.
    struct Rest<'a> {
        columns: &'a mut [Column],
        from: usize,
        to: usize,
    }
    impl Drop for Rest<'_> {
        fn drop(&mut self) {
            // SAFETY: `drop_columns`'s contract, passed on for these columns.
            unsafe { drop_columns(self.columns, self.from, self.to) }
        }
    }
    if let Some((first, rest)) = columns.split_first_mut() {
        let rest = Rest {
            columns: rest,
            from,
            to,
        };
        // SAFETY: the caller's contract, for this column.
        unsafe { first.drop_range(from, to) };
        drop(rest);
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.truncate(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Layout;
    use crate::storage::ColumnType;
    use std::cell::RefCell;

    /// A component that logs the value it is dropped with.
    struct Logged(u64);
    thread_local!(static DROPPED: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) });
    impl Drop for Logged {
        fn drop(&mut self) {
            DROPPED.with(|d| d.borrow_mut().push(self.0));
        }
    }
    fn dropped() -> Vec<u64> {
        DROPPED.with(|d| std::mem::take(&mut *d.borrow_mut()))
    }

    impl crate::Component for Logged {
        const COLD: bool = false;
    }
    static COMPONENTS: [ComponentInfo; 1] = [ComponentInfo::of::<Logged>("Logged")];
    static INFO: StoreInfo = StoreInfo {
        name: "Logs",
        layout: Layout::Columns,
        columns: &[ColumnType::of::<Logged>()],
        slots: &[Slot::new(0, 0, 0)],
        signature: TypeId::of::<Logged>,
    };

    fn entity(i: u32) -> Entity {
        Entity::new(i, 0)
    }

    /// Writes `Logged(value)` at `row` (which may lie beyond the length).
    fn write(s: &Store, row: usize, value: u64) {
        assert!(row < s.capacity());
        // SAFETY: the row is within the capacity and holds no value yet.
        unsafe {
            s.slot_ptr(INFO.slots[0], row)
                .cast::<Logged>()
                .write(Logged(value))
        };
    }

    fn read(s: &Store, row: usize) -> u64 {
        assert!(row < s.len());
        // SAFETY: a live row of the Logged column.
        unsafe { (*s.slot_ptr(INFO.slots[0], row).cast::<Logged>()).0 }
    }

    fn push(s: &mut Store, value: u64) {
        s.reserve(1);
        write(s, s.len(), value);
        // SAFETY: the row's only slot was written just above.
        unsafe { s.commit_row(entity(value as u32), 1) };
    }

    /// Reserving what the capacity already holds moves nothing: no needless reallocation.
    #[test]
    fn reserving_within_the_capacity_keeps_the_allocation() {
        let mut s = Store::new(&INFO, &COMPONENTS, false);
        push(&mut s, 1);
        let cap = s.capacity();
        let base = s.columns()[0].base();
        s.reserve(cap - s.len());
        s.reserve_beyond(0, cap - s.len());
        assert_eq!((s.capacity(), s.columns()[0].base()), (cap, base));
        s.reserve(cap - s.len() + 1);
        assert!(s.capacity() > cap);
        drop(s);
        assert_eq!(dropped(), [1]);
    }

    #[test]
    fn a_store_grows_keeps_rows_and_drops_each_value_once() {
        let mut s = Store::new(&INFO, &COMPONENTS, false);
        assert!(s.is_empty());
        assert_eq!((s.len(), s.capacity()), (0, 0));
        for v in 0..3 {
            push(&mut s, v);
        }
        assert!(!s.is_empty());
        assert_eq!(s.len(), 3);
        assert!(s.capacity() >= 3);
        // A batch writes rows beyond the length, growing on the way; they survive the growth.
        s.reserve_beyond(0, 2);
        assert!(s.capacity() >= 5);
        write(&s, 3, 3);
        write(&s, 4, 4);
        let target = s.capacity() + 10;
        s.reserve_beyond(2, target - 5);
        assert!(s.capacity() >= target, "{} < {target}", s.capacity());
        // SAFETY: rows 3 and 4 were written above.
        unsafe { s.commit_rows(&[entity(3), entity(4)], 1) };
        assert_eq!(
            (0..5).map(|r| read(&s, r)).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(dropped(), [] as [u64; 0]);
        // What the stats report: whole allocations, at least the capacity's worth.
        let (ids, values) = (s.entity_bytes(), s.component_bytes());
        assert_eq!(ids % size_of::<Entity>(), 0);
        assert!(ids >= s.capacity() * size_of::<Entity>(), "{ids}");
        assert_eq!(values, s.columns()[0].capacity() * size_of::<Logged>());
        assert!(values >= s.capacity() * size_of::<Logged>(), "{values}");

        // Removing row 1 drops its value and moves the last row (entity 4) into it.
        let mut moved = None;
        s.swap_remove_drop(1, 1, |m| moved = Some(m));
        assert_eq!(moved, Some(Some(entity(4))));
        assert_eq!(dropped(), [1]);
        assert_eq!(s.entities(), [entity(0), entity(4), entity(2), entity(3)]);
        assert_eq!(
            (0..4).map(|r| read(&s, r)).collect::<Vec<_>>(),
            [0, 4, 2, 3]
        );
        // Removing the last row moves nothing.
        s.swap_remove_drop(3, 1, |m| moved = Some(m));
        assert_eq!(moved, Some(None));
        assert_eq!(dropped(), [3]);
        s.truncate(1);
        assert_eq!(dropped(), [4, 2]);
        drop(s);
        assert_eq!(dropped(), [0]);
    }
}

/// Removing rows whose first column's `Drop` panics.
#[cfg(test)]
mod panicking_drops {
    use super::*;
    use crate::stats::Layout;
    use crate::storage::ColumnType;
    use std::cell::Cell;
    use std::panic::{catch_unwind, AssertUnwindSafe};

    thread_local!(static DROPS: Cell<(u32, u32)> = const { Cell::new((0, 0)) });

    /// Panics when dropped with `true` (unless already unwinding).
    struct Bomb(bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            DROPS.with(|d| d.set((d.get().0 + 1, d.get().1)));
            if self.0 && !std::thread::panicking() {
                panic!("bomb");
            }
        }
    }
    /// Counts its drops.
    struct Mate;
    impl Drop for Mate {
        fn drop(&mut self) {
            DROPS.with(|d| d.set((d.get().0, d.get().1 + 1)));
        }
    }

    impl crate::Component for Bomb {
        const COLD: bool = false;
    }
    impl crate::Component for Mate {
        const COLD: bool = false;
    }
    static COMPONENTS: [ComponentInfo; 2] = [
        ComponentInfo::of::<Bomb>("Bomb"),
        ComponentInfo::of::<Mate>("Mate"),
    ];
    static INFO: StoreInfo = StoreInfo {
        name: "Trap",
        layout: Layout::Columns,
        columns: &[ColumnType::of::<Bomb>(), ColumnType::of::<Mate>()],
        slots: &[Slot::new(0, 0, 0), Slot::new(1, 1, 0)],
        signature: std::any::TypeId::of::<Bomb>,
    };

    fn store(armed: &[bool]) -> Store {
        let mut s = Store::new(&INFO, &COMPONENTS, false);
        for (i, &a) in armed.iter().enumerate() {
            s.reserve(1);
            let row = s.len();
            // SAFETY: both slots of the reserved row are written, then the row is committed.
            unsafe {
                s.slot_ptr(INFO.slots[0], row).cast::<Bomb>().write(Bomb(a));
                s.slot_ptr(INFO.slots[1], row).cast::<Mate>().write(Mate);
                s.commit_row(Entity::new(i as u32, 0), 1);
            }
        }
        DROPS.with(|d| d.set((0, 0)));
        s
    }

    fn drops() -> (u32, u32) {
        DROPS.with(Cell::get)
    }

    #[test]
    fn a_removed_rows_mates_are_dropped_when_its_first_value_panics() {
        let mut s = store(&[false, true, false]);
        let mut moved = None;
        let r = catch_unwind(AssertUnwindSafe(|| s.swap_remove_drop(1, 1, |m| moved = m)));
        assert!(r.is_err());
        assert_eq!(drops(), (1, 1), "the mate of the panicking bomb is dropped");
        assert_eq!(moved, Some(Entity::new(2, 0)));
        assert_eq!(s.entities(), [Entity::new(0, 0), Entity::new(2, 0)]);
        drop(s);
        assert_eq!(drops(), (3, 3));
    }

    #[test]
    fn truncating_drops_every_column_when_one_value_panics() {
        let mut s = store(&[false, true, false, false]);
        let r = catch_unwind(AssertUnwindSafe(|| s.truncate(1)));
        assert!(r.is_err());
        assert_eq!(s.len(), 1);
        assert_eq!(
            drops(),
            (3, 3),
            "the rest of the bomb column and the whole mate column"
        );
        drop(s);
        assert_eq!(drops(), (4, 4));
    }

    #[test]
    fn removing_from_an_empty_store_panics_before_touching_it() {
        let mut s = store(&[]);
        let r = catch_unwind(AssertUnwindSafe(|| s.swap_remove_drop(0, 1, |_| {})));
        assert!(r.is_err());
        assert!(s.is_empty());
        assert_eq!(drops(), (0, 0));
    }
}
