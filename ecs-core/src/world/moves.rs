//! The moves' shared half: what every insert/remove move does around its values, written once.
//! A generated typed move (one per declared transition) names only its stores, slots and
//! types, and [`move_rows`] does the rest; the byte-wise [`erased_move`] serves every other
//! transition. A move may take a [`MoveBatch`]: consecutive entities of one store that gain or
//! lose the same component move in one call, one row after another, each row's body inlined.

use crate::entity::Entity;
use crate::model::tables::{Edge, MoveBatch, MoveShape};
use crate::model::WorldModel;
use crate::storage::{copy_bytes, RunRecords, Store};
use crate::world::locations::{EntityLocations, Location};

/// One insert/remove move in progress, as [`move_row`] hands it to the move's body: the source
/// store and row, the target store and row (reserved, unwritten), the source's last row, and
/// the changed component's value outside the stores (the inserted value, read from; or where
/// the removed value goes, written to). A generated typed move's body calls [`RowMove::copy`]
/// for every component the stores share, [`RowMove::insert`] or [`RowMove::take`] for the
/// changed one, and [`RowMove::fill`] for every column of the source store (the swap-remove of
/// the source row); `move_row` does the rest (entity ids and locations).
#[doc(hidden)]
pub struct RowMove<'a> {
    pub(crate) from: &'a Store,
    pub(crate) to: &'a Store,
    pub(crate) row: usize,
    pub(crate) to_row: usize,
    pub(crate) last: usize,
    pub(crate) value: *mut u8,
}

impl<'a> RowMove<'a> {
    /// The move of `row` of `from` to the end of `to`: the target row is the target's first
    /// unwritten one, and the source's last row fills the vacated one.
    #[inline(always)]
    pub(crate) fn new(from: &'a Store, to: &'a Store, row: usize, value: *mut u8) -> Self {
        RowMove {
            from,
            to,
            row,
            to_row: to.len(),
            last: from.len().wrapping_sub(1),
            value,
        }
    }
}

/// Address of row `row`'s element of column `col` of `store`, as a `T`.
///
/// # Safety
/// The column exists and its elements are `T`s.
#[inline(always)]
unsafe fn element<T>(store: &Store, col: usize, row: usize) -> *mut T {
    // `wrapping_add` needs no in-bounds proof, and the callers only dereference rows within
    // the capacity.
    store.column_base(col).cast::<T>().wrapping_add(row)
}

/// Address of byte `offset` of row `row`'s element of column `col` of `store`, whose elements
/// are `E`s: the stride is `E`'s size, known statically, rather than read from the column.
///
/// # Safety
/// The column exists and its elements are `E`s.
#[inline(always)]
unsafe fn slot<E: 'static>(store: &Store, col: usize, offset: usize, row: usize) -> *mut u8 {
    // SAFETY: as `element`; the offset stays inside the element (the callers' slots).
    unsafe {
        debug_assert!(
            store.columns()[col].is_type::<E>(),
            "column {col} is not of E"
        );
        element::<E>(store, col, row)
            .cast::<u8>()
            .wrapping_add(offset)
    }
}

impl RowMove<'_> {
    /// Copies the `T` at byte `src_off` of the source row's element in column `src_col` (of
    /// `S`s) to byte `dst_off` of the target row's element in column `dst_col` (of `D`s). In a
    /// columns store the element is the component itself (`S` or `D` is `T`, offset 0).
    ///
    /// # Safety
    /// As [`MoveFn`](crate::model::tables::MoveFn); the slots are the model's slots of a `T` in the two
    /// stores, in columns of `S`s and `D`s.
    #[inline(always)]
    pub unsafe fn copy<T, S: 'static, D: 'static>(
        &self,
        src_col: usize,
        src_off: usize,
        dst_col: usize,
        dst_off: usize,
    ) {
        // SAFETY: the columns exist (model slots), the source row is live and the target row
        // reserved (the caller); both addresses hold or take a `T`, aligned (model contract).
        unsafe {
            let src = slot::<S>(self.from, src_col, src_off, self.row);
            let dst = slot::<D>(self.to, dst_col, dst_off, self.to_row);
            dst.cast::<T>().write(src.cast::<T>().read());
        }
    }

    /// Writes the inserted `T` at byte `dst_off` of the target row's element in column
    /// `dst_col` (of `D`s).
    ///
    /// # Safety
    /// As [`MoveFn`](crate::model::tables::MoveFn), for an insert of a `T` at that slot, in a column
    /// of `D`s.
    #[inline(always)]
    pub unsafe fn insert<T, D: 'static>(&self, dst_col: usize, dst_off: usize) {
        // SAFETY: `value` is the caller's owned `T`; the target slot is the model's, reserved.
        unsafe {
            let dst = slot::<D>(self.to, dst_col, dst_off, self.to_row);
            dst.cast::<T>()
                .write(self.value.cast::<T>().read_unaligned());
        }
    }

    /// Moves the removed `T` at byte `src_off` of the source row's element in column `src_col`
    /// (of `S`s) out, to `value`.
    ///
    /// # Safety
    /// As [`MoveFn`](crate::model::tables::MoveFn), for a remove of a `T` from that slot, in a column
    /// of `S`s.
    #[inline(always)]
    pub unsafe fn take<T, S: 'static>(&self, src_col: usize, src_off: usize) {
        // SAFETY: the source slot holds the live `T`; `value` has room for one (the caller).
        unsafe {
            let src = slot::<S>(self.from, src_col, src_off, self.row);
            self.value
                .cast::<T>()
                .write_unaligned(src.cast::<T>().read());
        }
    }

    /// Moves the source store's last element of column `col` (a `T`) into the source row,
    /// whose values have all been moved out: the swap-remove of the row, with a static type.
    ///
    /// # Safety
    /// As [`MoveFn`](crate::model::tables::MoveFn); `T` is the element type of the source's column `col`.
    #[inline(always)]
    pub unsafe fn fill<T>(&self, col: usize) {
        if self.row != self.last {
            // SAFETY: the column exists and holds `T`s (model contract); `last` is the live
            // last row, `row` a distinct row whose value was moved out.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    element::<T>(self.from, col, self.last),
                    element::<T>(self.from, col, self.row),
                    1,
                );
            }
        }
    }
}

/// Every move of one [`MoveFn`](crate::model::tables::MoveFn) call: without a batch, the one
/// row of `entity` at `loc` (with its value at `value`), swap-removed at once ([`move_row`]);
/// with one, the batch's first item (at `loc`), then each next item while its entity is live in
/// the same source store and the target has room ([`move_run`], a function of its own, so that
/// its loop's registers cost a single move nothing). Returns how many items moved. `shape`
/// returns the transition's `([from, to], carried, from_width)` ([`MoveShape`]). The row's
/// `body` and the `shape` are inlined either way, so a batch pays the transition lookup, the
/// call and its register saves once.
///
/// # Safety
/// As [`MoveFn`](crate::model::tables::MoveFn), and as [`move_row`] for the shape and body.
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn move_rows<'s>(
    stores: *mut Store,
    locations: &mut EntityLocations,
    entity: Entity,
    loc: Location,
    value: *mut u8,
    batch: Option<&MoveBatch>,
    shape: impl Fn() -> MoveShape<'s>,
    body: impl Fn(&RowMove<'_>),
) -> usize {
    let Some(batch) = batch else {
        let ([from, to], carried, from_width) = shape();
        // SAFETY: as the `MoveFn` contract says for a single move.
        unsafe {
            move_row(
                stores,
                locations,
                entity,
                loc,
                value,
                [from, to],
                carried,
                from_width,
                &body,
            )
        };
        return 1;
    };
    // SAFETY: as the `MoveFn` contract says for a batch.
    unsafe { move_run(stores, locations, loc, batch, shape, body) }
}

/// A batch's run of moves from store `from` to store `to`: each item's row is copied to the end
/// of `to` and its entity relocated there, but the source row is only vacated; once the run is
/// over, [`fill_vacated`] fills the source's vacated rows from its surviving last rows in one
/// pass. A run that empties a store then copies no row back, where swap-removing each row
/// would move half of them twice.
///
/// # Safety
/// As [`move_rows`] with a batch: `loc` is the live location of the batch's first entity in
/// `from`, `to` is another store of the model with room for a row, and `body` moves every value
/// of the row as the transition says (its fills do nothing when the row is its own last row,
/// as here).
#[inline(never)]
unsafe fn move_run<'s>(
    stores: *mut Store,
    locations: &mut EntityLocations,
    loc: Location,
    batch: &MoveBatch,
    shape: impl Fn() -> MoveShape<'s>,
    body: impl Fn(&RowMove<'_>),
) -> usize {
    let ([from, to], carried, _) = shape();
    debug_assert!(from == loc.store && from != to);
    // SAFETY: both are store ids of the model (the caller), so in bounds; they are distinct,
    // so the two references do not alias.
    let (src, dst) = unsafe {
        (
            &mut *stores.add(from as usize),
            &mut *stores.add(to as usize),
        )
    };
    let stamp = locations.stamp();
    let limit = batch.len().min(dst.capacity() - dst.len());
    let vacated = batch.vacated();
    let mut records = RunRecords::default();
    let mut loc = loc;
    let mut i = 0;
    loop {
        let row = loc.row();
        let to_row = dst.len();
        // SAFETY: item `i` exists (`i < limit <= len`).
        let entity = unsafe { batch.entity(i) };
        // `last: row`: the body's fills do nothing, and the row stays in place, vacated.
        body(&RowMove {
            from: src,
            to: dst,
            row,
            to_row,
            last: row,
            value: batch.value(i),
        });
        // SAFETY: `body` wrote every slot of row `to_row`, within the room counted in `limit`;
        // `row` is a live row of `src` (vacated rows stay in its length until the fill), and
        // `carried` is the transition's table (the caller). Room for one row per item at
        // `vacated`, and `i < len`.
        unsafe {
            dst.commit_run_row(entity, stamp, src, row, carried, &mut records);
            vacated.add(i).write(row as u32);
        }
        locations.relocate(entity, Location::new(to, to_row));
        i += 1;
        if i == limit {
            break;
        }
        // SAFETY: `i < len`. A moved entity is located in `to` now, so a vacated row is never
        // reached twice: every row met is live and distinct.
        match locations.locate(unsafe { batch.entity(i) }) {
            Some(next) if next.store == from => loc = next,
            _ => break,
        }
    }
    dst.end_run(stamp, &mut records);
    // SAFETY: the `i` rows written at `vacated` are distinct live rows of `src` whose values
    // were all moved out above, and their entities are located in `to` now.
    unsafe {
        let rows = std::slice::from_raw_parts(vacated, i);
        fill_vacated(src, from, locations, rows, stamp)
    };
    i
}

/// Removes the rows `vacated` (in any order) from store `from` (`src`) once a run moved their
/// entities out: the rows among the last `vacated.len()` whose entities are still located in
/// `from` fill the vacated rows before them, and the store shrinks by `vacated.len()`. A
/// vacated row's entity is known by its location, so no set of rows is sorted or kept.
///
/// # Safety
/// The rows of `vacated` are distinct live rows of `src` whose values were all moved out, and
/// their entities are located outside `from`; every other row's entity is located at its row.
unsafe fn fill_vacated(
    src: &mut Store,
    from: u32,
    locations: &mut EntityLocations,
    vacated: &[u32],
    stamp: u64,
) {
    let keep = src.len() - vacated.len();
    if keep == 0 {
        // The run emptied the store: nothing to fill.
        // SAFETY: every row was vacated.
        unsafe { src.truncate_vacated(0) };
        return;
    }
    let mut survivor = keep;
    for &hole in vacated {
        let hole = hole as usize;
        if hole >= keep {
            continue;
        }
        // As many rows from `keep` on are survivors as vacated rows lie before `keep`.
        while !matches!(locations.locate(src.entities()[survivor]), Some(l) if l.store == from) {
            survivor += 1;
        }
        // SAFETY: `survivor` is a live row past `keep` that was not vacated, `hole` a vacated
        // row before `keep` (the caller).
        let moved = unsafe { src.fill_row(survivor, hole, stamp) };
        locations.relocate(moved, Location::new(from, hole));
        survivor += 1;
    }
    // SAFETY: rows `keep..` were vacated or copied into the holes above.
    unsafe { src.truncate_vacated(keep) };
}

/// The whole of one insert/remove move, written once for every [`MoveFn`](crate::model::tables::MoveFn):
/// `body` moves the values (a generated typed move, or the byte-wise `erased_move`), then
/// the entity ids and locations. A typed move calls it with
/// its two store ids as constants, so after inlining every store access is at a fixed offset
/// and the bookkeeping runs inside the one indirect call, with nothing spilled around it;
/// `carried` says, per slot of the target store, which source slot's add the row keeps (or
/// [`GAINED`](crate::model::tables::GAINED)), and `from_width` is the source store's number of slots: constants too, so
/// the row's adds move in a few unrolled instructions.
///
/// # Safety
/// The first five arguments are a [`MoveFn`](crate::model::tables::MoveFn)'s, as its contract says;
/// `from` is `loc.store` and `to` the transition's target (distinct stores), and `body` moves
/// every value of the row as the transition says.
#[doc(hidden)]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn move_row(
    stores: *mut Store,
    locations: &mut EntityLocations,
    entity: Entity,
    loc: Location,
    value: *mut u8,
    [from, to]: [u32; 2],
    carried: &[u32],
    from_width: usize,
    body: impl FnOnce(&RowMove<'_>),
) {
    debug_assert!(from == loc.store && from != to);
    let row = loc.row();
    // SAFETY: both are store ids of the model (the caller), so in bounds; they are distinct,
    // so the two references do not alias.
    let (src, dst) = unsafe {
        (
            &mut *stores.add(from as usize),
            &mut *stores.add(to as usize),
        )
    };
    let to_row = dst.len();
    body(&RowMove::new(src, dst, row, value));
    let stamp = locations.stamp();
    // SAFETY: `body` wrote every slot of the new row, within the capacity the caller reserved,
    // and filled the source row with the source's last row.
    let moved = unsafe {
        dst.commit_row_reserved(entity, stamp, src, row, carried);
        src.swap_remove_entity(row, stamp, from_width)
    };
    if let Some(moved) = moved {
        locations.relocate(moved, Location::new(from, row));
    }
    locations.relocate(entity, Location::new(to, to_row));
}

/// The [`MoveFn`](crate::model::tables::MoveFn) of a transition the model has no typed move for: the
/// transition's [`CopyOp`](crate::model::tables::CopyOp)s (found by the store and component), the
/// changed component by its size, and the swap-remove column by column, all as bytes.
///
/// # Safety
/// As [`MoveFn`](crate::model::tables::MoveFn).
pub(crate) unsafe fn erased_move<M: WorldModel>(
    stores: *mut Store,
    locations: &mut EntityLocations,
    entity: Entity,
    loc: Location,
    value: *mut u8,
    c: u32,
    batch: Option<&MoveBatch>,
) -> usize {
    let tables = M::tables();
    let inserted = tables.insert_move(loc.store, c);
    let Some(m) = inserted.or_else(|| tables.remove_move(loc.store, c)) else {
        unreachable!(
            "the move of component {c} from store {} is declared",
            loc.store
        )
    };
    let edge = &m.transition().edge;
    // SAFETY: as `MoveFn`; the target store is the transition's.
    unsafe {
        move_rows(
            stores,
            locations,
            entity,
            loc,
            value,
            batch,
            || edge.shape(loc.store),
            |m| erased_body(m, edge),
        )
    }
}

/// The values' half of a byte-wise move along `t`: [`erased_move`]'s, and the moves in and
/// out of dynamic stores.
pub(crate) fn erased_body(m: &RowMove<'_>, t: &Edge) {
    let (src, dst) = (m.from.columns(), m.to.columns());
    // SAFETY: `Edge::between` made every copy from the two stores' slots, so its columns exist
    // in both stores and pair one component (same type and size). The source row is live, the
    // target row within the reserved capacity; `value` is the changed component's value or
    // room for it (the `MoveFn` contract); the fills move the live last row into the vacated
    // row of each column.
    unsafe {
        for op in t.copies.iter() {
            let s = src.get_unchecked(op.src_col as usize).ptr_at(m.row);
            let d = dst.get_unchecked(op.dst_col as usize).ptr_at(m.to_row);
            copy_bytes(
                s.add(op.src_off as usize),
                d.add(op.dst_off as usize),
                op.size as usize,
            );
        }
        if t.inserts {
            copy_bytes(m.value, m.to.slot_ptr(t.changed, m.to_row), t.changed_size);
        } else {
            copy_bytes(m.from.slot_ptr(t.changed, m.row), m.value, t.changed_size);
        }
        if m.row != m.last {
            for c in src {
                copy_bytes(c.ptr_at(m.last), c.ptr_at(m.row), c.elem_size());
            }
        }
    }
}
