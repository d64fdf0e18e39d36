//! A store's rows in a world state ([`StoreImage`]), and the save and load between a store and
//! its image, chunk by chunk (see `crate::state` for what a state is and the rules it keeps).
//!
//! **Save** copies into the image only the (column, chunk) pairs written at or after the
//! image's last save from this world: a chunk's structural record, the cell record or the
//! pass stamp (`versions.rs`) of a component in the column, at or past that moment, adjacent
//! chunks merged into one run per column. (A chunk's add record and its rows' adds change only
//! with its structural record: the rows' adds are copied with their entity ids, chunk by
//! chunk, and not at all for a chunk whose adds are uniform, whose add record says them all.)
//! Every chunk record is copied. Values are copied as bytes (`Copy` components:
//! one bulk copy per run) or with `clone_from` over the image's old values, which reuses their
//! allocations; rows the image lacks are cloned into it, rows it has too many of are dropped.
//! The save hashes nothing: it forgets the hash of each chunk it copied, and a checksum
//! recomputes those (so a save followed by a checksum hashes what was copied, and a save
//! nobody checksums costs only its copy).
//!
//! **Load** is the same walk the other way, in two steps so that a panicking `Clone` leaves
//! the store as it was: [`Store::stage_load`] clones what needs cloning into buffers apart,
//! then [`Store::commit_load`] moves everything in without calling user code (the values it
//! replaces are handed back, to be dropped once the whole world is consistent).

use super::{field_index, Column, Store};
use crate::entity::Entity;
use crate::model::{ComponentInfo, StoreInfo};
use crate::state::hash::StateHasher;
use crate::state::ops::{ComponentState, Copying, HashFn};
use crate::storage::column::{copy_bytes, ColumnType};
use crate::storage::versions::{tick, uniform, CHUNK};
use std::ops::Range;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// One component's place in a store, with how a state copies and hashes it.
#[derive(Clone, Copy)]
pub(crate) struct SlotPlan {
    /// Component id.
    pub(crate) component: u32,
    /// Column index in the store.
    pub(crate) column: usize,
    /// Byte offset in the column's element.
    pub(crate) offset: usize,
    /// The component's type.
    pub(crate) ty: &'static ColumnType,
    /// The slot is its column's whole element: its values are contiguous.
    pub(crate) whole: bool,
    pub(crate) copying: Copying,
    pub(crate) hash: Option<HashFn>,
    /// Hashed as its bytes (see `ComponentState::plain`).
    pub(crate) plain: bool,
}

impl SlotPlan {
    /// Is the component saved (not `no_rollback`)?
    #[inline]
    pub(crate) fn saved(&self) -> bool {
        !matches!(self.copying, Copying::NoRollback { .. })
    }
}

/// The slots of a store described by `info`, with their state entries.
pub(crate) fn slot_plans(
    info: &'static StoreInfo,
    states: &'static [ComponentState],
    components: &'static [ComponentInfo],
) -> Vec<SlotPlan> {
    info.slots
        .iter()
        .map(|s| {
            let c = s.component as usize;
            let ty = &components[c].ty;
            SlotPlan {
                component: s.component,
                column: s.column as usize,
                offset: s.offset as usize,
                ty,
                whole: s.offset == 0 && ty.size == info.columns[s.column as usize].size,
                copying: states[c].copying,
                hash: states[c].hash,
                plain: states[c].plain,
            }
        })
        .collect()
}

/// Does every slot of `column` copy as bytes? Then whole elements are copied at once.
fn bits_only(plans: &[SlotPlan], column: usize) -> bool {
    plans
        .iter()
        .filter(|p| p.column == column)
        .all(|p| matches!(p.copying, Copying::Bits))
}

/// The address of `plan`'s value in row `row` of `column`.
#[inline]
fn at(column: &Column, plan: &SlotPlan, row: usize) -> *mut u8 {
    column.ptr_at(row).wrapping_add(plan.offset)
}

/// The bytes of some entity ids (an `Entity` is its bits, every byte initialised).
#[inline]
pub(crate) fn entity_bytes(entities: &[Entity]) -> &[u8] {
    // SAFETY: `Entity` is `repr(transparent)` over an integer: its bytes are initialised and
    // the slice's memory is `size_of_val` bytes long.
    unsafe { std::slice::from_raw_parts(entities.as_ptr().cast(), size_of_val(entities)) }
}

/// What the destination rows of a copy hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Values of the slot: a `Clone` type is cloned over them (`clone_from`, which reuses
    /// their allocations).
    Values,
    /// Nothing yet: a `Clone` type is cloned into them, all or nothing (a panicking clone
    /// leaves the rows uninitialised).
    Empty,
}

/// Copies rows `rows` of `plan`'s component from `src` to `dst` (columns of the same element
/// type): as bytes, or with `Clone` (over the old values or into empty rows, as `into` says);
/// no_rollback slots are left alone.
///
/// # Safety
/// `rows` are initialised in `src` (for the saved slots) and within `dst`'s capacity,
/// initialised there as `into` says; the columns are distinct.
unsafe fn copy_rows(plan: &SlotPlan, src: &Column, dst: &Column, rows: Range<usize>, into: Dest) {
    let n = rows.len();
    let stride = src.elem_size();
    // SAFETY: in every arm, rows in bounds and initialised as the caller guarantees.
    unsafe {
        match plan.copying {
            Copying::Bits if plan.whole => {
                copy_bytes(src.ptr_at(rows.start), dst.ptr_at(rows.start), n * stride)
            }
            Copying::Bits => {
                for r in rows {
                    copy_bytes(at(src, plan, r), at(dst, plan, r), plan.ty.size);
                }
            }
            Copying::Clone { new, over } => {
                let clone = if into == Dest::Values { over } else { new };
                clone(
                    at(src, plan, rows.start),
                    stride,
                    at(dst, plan, rows.start),
                    stride,
                    n,
                )
            }
            Copying::NoRollback { .. } => {}
        }
    }
}

/// Copies runs of rows of column `k` from `src` to `dst` (columns of the same element type):
/// one bulk copy per run when every slot of the column copies as bytes, else slot by slot
/// ([`copy_rows`]).
///
/// # Safety
/// As [`copy_rows`], for every run.
unsafe fn copy_column(
    plans: &[SlotPlan],
    k: usize,
    src: &Column,
    dst: &Column,
    runs: &[Range<usize>],
    into: Dest,
) {
    if bits_only(plans, k) {
        for run in runs {
            // SAFETY: the rows are initialised in `src` and within `dst`'s capacity (the
            // caller); a bytes-only element has no drop glue to skip.
            unsafe {
                copy_bytes(
                    src.ptr_at(run.start),
                    dst.ptr_at(run.start),
                    run.len() * src.elem_size(),
                )
            };
        }
        return;
    }
    for p in plans.iter().filter(|p| p.column == k) {
        for run in runs {
            // SAFETY: as the caller guarantees.
            unsafe { copy_rows(p, src, dst, run.clone(), into) };
        }
    }
}

/// Drops the values of `plans`' saved slots in rows `rows` of `columns`. Every value is
/// dropped even when one panics; the first panic continues afterwards.
///
/// # Safety
/// Those values are initialised and never used again.
unsafe fn drop_saved(plans: &[SlotPlan], columns: &[Column], rows: Range<usize>) {
    let mut panic = None;
    for p in plans.iter().filter(|p| p.saved()) {
        let Some(drop) = p.ty.drop_slice else {
            continue;
        };
        let column = &columns[p.column];
        let calls: Box<dyn Iterator<Item = (usize, usize)>> = if p.whole {
            Box::new(std::iter::once((rows.start, rows.len())))
        } else {
            Box::new(rows.clone().map(|r| (r, 1)))
        };
        for (row, n) in calls.filter(|&(_, n)| n > 0) {
            // SAFETY: initialised values of the slot's type, dropped once (the caller); a
            // contiguous slice keeps dropping past a panicking element.
            let r = catch_unwind(AssertUnwindSafe(|| unsafe { drop(at(column, p, row), n) }));
            if let Err(payload) = r {
                panic.get_or_insert(payload);
            }
        }
    }
    if let Some(payload) = panic {
        resume_unwind(payload);
    }
}

/// A chunk's adds as a state keeps them: its add record, and whether the rows' adds are all
/// that record (then `rows` is not read: an image does not copy them).
#[derive(Clone, Copy)]
pub(crate) struct ChunkAdds<'a> {
    pub(crate) record: u64,
    pub(crate) uniform: bool,
    pub(crate) rows: &'a [u64],
}

impl ChunkAdds<'_> {
    /// Feeds the adds into a checksum, the same way whether or not they are known to be
    /// uniform: a marker no clock reaches when every add is the record, else every add.
    fn hash_into(&self, h: &mut StateHasher) {
        h.write_word(self.record);
        if self.uniform || uniform(self.rows, self.record) {
            h.write_word(u64::MAX);
        } else {
            h.write_words(self.rows);
        }
    }
}

/// The hash of chunk `chunk` (rows `rows`) of a store: its row count, entity ids, the values of
/// every component that can be hashed, each component's change version, the chunk's add
/// version and the rows' adds (clock bits): what `changed` and `added` filters see.
pub(crate) fn chunk_hash(
    plans: &[SlotPlan],
    columns: &[Column],
    entities: &[Entity],
    version: &dyn Fn(usize, usize) -> u64,
    adds: ChunkAdds<'_>,
    chunk: usize,
    rows: Range<usize>,
) -> u64 {
    let mut h = StateHasher::new();
    h.write_word(rows.len() as u64);
    h.write_bytes(entity_bytes(&entities[rows.clone()]));
    for (k, column) in columns.iter().enumerate() {
        if plain_column(plans, k, column.elem_size()) {
            // SAFETY: the rows' elements are initialised in every byte: their slots are plain
            // data and cover the whole element.
            let bytes = unsafe {
                std::slice::from_raw_parts(
                    column.ptr_at(rows.start),
                    rows.len() * column.elem_size(),
                )
            };
            h.write_bytes(bytes);
        }
    }
    for p in plans {
        if plain_column(plans, p.column, columns[p.column].elem_size()) {
            continue;
        }
        if let Some(hash) = p.hash {
            let column = &columns[p.column];
            // SAFETY: rows below the length hold initialised values of the slot's type, one
            // element apart.
            unsafe {
                hash(
                    at(column, p, rows.start),
                    column.elem_size(),
                    rows.len(),
                    &mut h,
                )
            };
        }
    }
    for slot in 0..plans.len() {
        h.write_word(version(slot, chunk));
    }
    adds.hash_into(&mut h);
    h.digest()
}

/// Is every byte of `column`'s elements a value hashed as bytes: its slots are all plain and
/// their sizes add up to the element (so there is no padding)? Then a run of elements is
/// hashed as one slice.
fn plain_column(plans: &[SlotPlan], column: usize, elem_size: usize) -> bool {
    let mut size = 0;
    for p in plans.iter().filter(|p| p.column == column) {
        if !p.plain || !p.saved() {
            return false;
        }
        size += p.ty.size;
    }
    size == elem_size && elem_size > 0
}

/// A chunk hash not computed yet. A chunk whose hash is this value is simply hashed again
/// at each checksum.
const UNHASHED: u64 = 0;

/// The rows of chunk `c` in a store of `len` rows.
#[inline]
fn chunk_rows(c: usize, len: usize) -> Range<usize> {
    c * CHUNK..((c + 1) * CHUNK).min(len)
}

/// A store's rows as a world state keeps them: the entity ids, a copy of every saved
/// component's values (no_rollback slots stay uninitialised), the change records of every
/// chunk, the store's capacities and one hash per chunk.
pub(crate) struct StoreImage {
    info: &'static StoreInfo,
    plans: Vec<SlotPlan>,
    len: usize,
    entities: Vec<Entity>,
    /// Same element types as the store's; rows `0..len` initialised in the saved slots.
    columns: Box<[Column]>,
    /// Per chunk, the structural record (as stamped).
    rows: Vec<u64>,
    /// Per slot, per chunk, the in-place record.
    cells: Box<[Vec<u64>]>,
    /// Per column, the pass stamp.
    written: Box<[u64]>,
    /// Per slot, its own pass stamp in a column of several components (else 0).
    fields: Box<[u64]>,
    /// Per chunk, the add record.
    added: Vec<u64>,
    /// Per chunk: its rows' adds are all its add record (and not copied into `adds`).
    uniform: Vec<bool>,
    /// Per row, per slot: its add (clock bits), row after row; meaningless in uniform chunks.
    adds: Vec<u64>,
    /// The store's capacities: entity ids, then each column.
    entity_cap: usize,
    column_caps: Box<[usize]>,
    /// Per chunk, [`chunk_hash`] once a checksum computed it, else [`UNHASHED`]. Atomic so
    /// that a checksum of a shared image keeps what it computed (two checksums at once
    /// compute and store the same values).
    hashes: Vec<AtomicU64>,
}

// SAFETY: the image owns component values, which are `Send + Sync`, in columns (which are),
// and plain data besides.
unsafe impl Send for StoreImage {}
// SAFETY: as above; `&StoreImage` reads only.
unsafe impl Sync for StoreImage {}

impl StoreImage {
    /// An empty image of stores described by `info`.
    pub(crate) fn new(
        info: &'static StoreInfo,
        states: &'static [ComponentState],
        components: &'static [ComponentInfo],
    ) -> Self {
        StoreImage {
            info,
            plans: slot_plans(info, states, components),
            len: 0,
            entities: Vec::new(),
            columns: info.columns.iter().map(Column::new).collect(),
            rows: Vec::new(),
            cells: info.slots.iter().map(|_| Vec::new()).collect(),
            written: vec![0; info.columns.len()].into_boxed_slice(),
            fields: vec![0; info.slots.len()].into_boxed_slice(),
            added: Vec::new(),
            uniform: Vec::new(),
            adds: Vec::new(),
            entity_cap: 0,
            column_caps: vec![0; info.columns.len()].into_boxed_slice(),
            hashes: Vec::new(),
        }
    }

    /// The description of the store it copies.
    #[inline]
    pub(crate) fn info(&self) -> &'static StoreInfo {
        self.info
    }

    /// The slots, with their state entries.
    #[inline]
    pub(crate) fn plans(&self) -> &[SlotPlan] {
        &self.plans
    }

    /// Rows held.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The entity of each row.
    #[inline]
    pub(crate) fn entities(&self) -> &[Entity] {
        &self.entities
    }

    /// Bytes of component values and entity ids held (what a save copies at most).
    pub(crate) fn bytes(&self) -> usize {
        self.len * (size_of::<Entity>() + self.columns.iter().map(Column::elem_size).sum::<usize>())
    }

    /// Feeds the image into a checksum: its row count and its chunks' hashes (computing, and
    /// keeping, those of the chunks copied since they were last computed).
    pub(crate) fn hash_into(&self, h: &mut StateHasher) {
        h.write_word(self.len as u64);
        for (c, hash) in self.hashes.iter().enumerate() {
            let mut value = hash.load(Ordering::Relaxed);
            if value == UNHASHED {
                let rows = chunk_rows(c, self.len);
                let width = self.info.slots.len();
                let adds = ChunkAdds {
                    record: self.added(c),
                    uniform: self.uniform[c],
                    rows: &self.adds[rows.start * width..rows.end * width],
                };
                value = chunk_hash(
                    &self.plans,
                    &self.columns,
                    &self.entities,
                    &|slot, c| self.version(slot, c),
                    adds,
                    c,
                    rows,
                );
                hash.store(value, Ordering::Relaxed);
            }
            h.write_word(value);
        }
    }

    /// The clock bits of chunk `c`'s change version of slot `slot`.
    fn version(&self, slot: usize, c: usize) -> u64 {
        let row = self.rows.get(c).copied().unwrap_or(0);
        let cell = self.cells[slot].get(c).copied().unwrap_or(0);
        let pass = tick(self.written[self.plans[slot].column]).max(tick(self.fields[slot]));
        pass.max(tick(row)).max(tick(cell))
    }

    /// The clock bits of chunk `c`'s add version.
    fn added(&self, c: usize) -> u64 {
        tick(self.added.get(c).copied().unwrap_or(0))
    }

    /// Copies `store` (described by the same `info`) into the image: every (column, chunk)
    /// written at or after `since` (`None`: everything), rows the image lacks, and the
    /// records; drops the rows it has too many of; forgets the hashes of the chunks it
    /// copied (a checksum recomputes them). If a `Clone`
    /// panics, the image holds valid values throughout (some new, some old): the caller marks
    /// it incomplete.
    pub(crate) fn save(&mut self, store: &Store, since: Option<u64>) {
        assert!(
            std::ptr::eq(self.info, store.info()),
            "an image of another store"
        );
        let (n, m) = (store.len(), self.len);
        if m > n {
            // The length first: a panicking drop leaves the rest out of the image.
            self.len = n;
            self.entities.truncate(n);
            self.adds.truncate(n * self.info.slots.len());
            // SAFETY: rows n..m were initialised, and are past the length now.
            unsafe { drop_saved(&self.plans, &self.columns, n..m) };
        }
        let common = n.min(m);
        let newer = |stamp: u64| since.is_none_or(|r| stamp >= r);
        let chunks = n.div_ceil(CHUNK);
        self.hashes.resize_with(chunks, || AtomicU64::new(UNHASHED));
        if n != m {
            // Chunks from the first resized one on changed their row count or are new.
            for hash in &mut self.hashes[common / CHUNK..] {
                *hash.get_mut() = UNHASHED;
            }
        }
        // Per column, the runs of rows written since (whole chunks, adjacent ones merged), each
        // copied at once; a copied chunk's hash is recomputed when a checksum asks for it. A
        // column is written in a chunk when the chunk's rows moved (structural record), a pass
        // wrote it or one of its components alone, or a cell record of one of its components.
        let passed = store.passed(newer);
        let mut runs = Vec::new();
        for (k, &passed) in passed.iter().enumerate() {
            runs.clear();
            for c in 0..common.div_ceil(CHUNK) {
                let dirty = passed
                    || newer(store.versions.row_record(c))
                    || self.plans.iter().enumerate().any(|(slot, p)| {
                        p.column == k && newer(store.versions.cell_record(slot, c))
                    });
                if dirty {
                    push_run(&mut runs, chunk_rows(c, common));
                    *self.hashes[c].get_mut() = UNHASHED;
                }
            }
            // SAFETY: rows below both lengths, initialised in the saved slots of both.
            unsafe {
                copy_column(
                    &self.plans,
                    k,
                    &store.columns[k],
                    &self.columns[k],
                    &runs,
                    Dest::Values,
                )
            };
        }
        let width = self.info.slots.len();
        let structural = self.structural_runs(store, since);
        for run in &structural {
            // A store without columns copies its ids alone.
            for c in run.start / CHUNK..run.end.div_ceil(CHUNK) {
                *self.hashes[c].get_mut() = UNHASHED;
            }
            self.entities[run.clone()].copy_from_slice(&store.entities[run.clone()]);
        }
        if n > m {
            self.grow(&store.columns, &store.entities, m, n);
        }
        // The rows' adds go with their ids (both change only with a structural write), those
        // of a uniform chunk not at all.
        self.adds.resize(n * width, 0);
        self.uniform.resize(chunks, false);
        let grown = (m < n).then(|| chunk_rows(m / CHUNK, n).start..n);
        for run in structural.iter().chain(&grown) {
            for c in run.start / CHUNK..run.end.div_ceil(CHUNK) {
                self.uniform[c] = store.versions.uniform(c);
                if !self.uniform[c] {
                    let rows = chunk_rows(c, n);
                    self.adds[rows.start * width..rows.end * width]
                        .copy_from_slice(store.versions.row_adds(rows));
                }
            }
        }
        self.rows.clear();
        self.rows
            .extend((0..chunks).map(|c| store.versions.row_record(c)));
        self.added.clear();
        self.added
            .extend((0..chunks).map(|c| store.versions.add_record(c)));
        for (slot, cells) in self.cells.iter_mut().enumerate() {
            cells.clear();
            cells.extend((0..chunks).map(|c| store.versions.cell_record(slot, c)));
            self.fields[slot] = store.field_written(slot);
        }
        for (k, cap) in self.column_caps.iter_mut().enumerate() {
            self.written[k] = store.columns[k].written();
            *cap = store.columns[k].capacity();
        }
        self.entity_cap = store.entities.capacity();
    }

    /// The rows below the lengths of both the image and `store` (described by the same
    /// `info`) whose entity ids a save since `since` copies: the chunks with a structural
    /// write at or after `since` (`None`: all), adjacent ones merged.
    pub(crate) fn structural_runs(&self, store: &Store, since: Option<u64>) -> Vec<Range<usize>> {
        let common = store.len().min(self.len);
        let mut runs = Vec::new();
        for c in 0..common.div_ceil(CHUNK) {
            if since.is_none_or(|r| store.versions.row_record(c) >= r) {
                push_run(&mut runs, chunk_rows(c, common));
            }
        }
        runs
    }

    /// Appends rows `m..n` of a store's (or an image's) `columns` and `entities` (`m` = the
    /// image's length; the columns of the image's element types): all or nothing.
    fn grow(&mut self, columns: &[Column], entities: &[Entity], m: usize, n: usize) {
        for column in self.columns.iter_mut() {
            column.reserve(m, n - m);
        }
        /// On unwind, drops the rows already copied into the slots done so far.
        struct Undo<'a> {
            plans: &'a [SlotPlan],
            columns: &'a [Column],
            done: usize,
            rows: Range<usize>,
        }
        impl Drop for Undo<'_> {
            fn drop(&mut self) {
                // SAFETY: the first `done` plans' rows were written by this growth, which did
                // not finish: nothing else refers to them.
                unsafe { drop_saved(&self.plans[..self.done], self.columns, self.rows.clone()) }
            }
        }
        let mut undo = Undo {
            plans: &self.plans,
            columns: &self.columns,
            done: 0,
            rows: m..n,
        };
        for p in undo.plans {
            let k = p.column;
            // SAFETY: rows m..n are initialised in the source, reserved and unwritten here.
            unsafe { copy_rows(p, &columns[k], &undo.columns[k], m..n, Dest::Empty) };
            undo.done += 1;
        }
        std::mem::forget(undo);
        self.entities.extend_from_slice(&entities[m..n]);
        self.len = n;
    }

    /// A copy of the image (cloning its values), for a state's `Clone`.
    pub(crate) fn duplicate(&self) -> StoreImage {
        let mut copy = StoreImage {
            info: self.info,
            plans: self.plans.clone(),
            len: 0,
            entities: Vec::new(),
            columns: self.info.columns.iter().map(Column::new).collect(),
            rows: self.rows.clone(),
            cells: self.cells.clone(),
            written: self.written.clone(),
            fields: self.fields.clone(),
            added: self.added.clone(),
            uniform: self.uniform.clone(),
            adds: self.adds.clone(),
            entity_cap: self.entity_cap,
            column_caps: self.column_caps.clone(),
            hashes: self
                .hashes
                .iter()
                .map(|h| AtomicU64::new(h.load(Ordering::Relaxed)))
                .collect(),
        };
        copy.grow(&self.columns, &self.entities, 0, self.len);
        copy
    }
}

impl Drop for StoreImage {
    fn drop(&mut self) {
        let len = std::mem::take(&mut self.len);
        // SAFETY: rows 0..len hold the saved values; the length is 0 now.
        unsafe { drop_saved(&self.plans, &self.columns, 0..len) };
    }
}

/// Which rows of a store a load restores from an image.
#[derive(Debug, Default)]
pub(crate) struct LoadPlan {
    /// Rows (below the image's length) restored whole: entity ids and every column. Runs of
    /// whole chunks, ascending.
    pub(crate) structural: Vec<Range<usize>>,
    /// Per column, the rows whose values are restored (the structural ones among them).
    pub(crate) columns: Vec<Vec<Range<usize>>>,
    /// Per column: its pass stamps are restored too.
    pub(crate) passes: Vec<bool>,
}

impl LoadPlan {
    /// The plan of a load into a store of no rows: every row of `image`, whole.
    pub(crate) fn everything(image: &StoreImage) -> LoadPlan {
        let m = image.len;
        let all: Vec<Range<usize>> = std::iter::once(0..m).filter(|r| !r.is_empty()).collect();
        let columns = image.columns.len();
        LoadPlan {
            structural: all.clone(),
            columns: vec![all; columns],
            passes: vec![true; columns],
        }
    }
}

/// Appends `rows` to `runs`, merging it with the last run when they touch.
fn push_run(runs: &mut Vec<Range<usize>>, rows: Range<usize>) {
    match runs.last_mut() {
        Some(last) if last.end == rows.start => last.end = rows.end,
        _ => runs.push(rows),
    }
}

/// Buffers of values cloned from an image for a load, before anything in the world changes.
/// After the commit they hold the values the load replaced, dropped with them.
#[derive(Default)]
pub(crate) struct Staged {
    pieces: Vec<Piece>,
}

/// The clones of one slot over one run of rows.
struct Piece {
    buf: Column,
    /// Indices of `buf` holding values to drop.
    live: Range<usize>,
}

impl Drop for Piece {
    fn drop(&mut self) {
        let live = std::mem::take(&mut self.live);
        // SAFETY: `live` values are initialised and owned by the piece.
        unsafe { self.buf.drop_range(live.start, live.end) };
    }
}

/// Values moved out of the world by a load, dropped once the world is consistent again.
#[derive(Default)]
pub(crate) struct Graveyard {
    graves: Vec<Piece>,
}

impl Graveyard {
    /// Takes ownership of `n` values of `ty` at `src`, `stride` bytes apart.
    ///
    /// # Safety
    /// They are initialised and nobody else drops them.
    pub(crate) unsafe fn bury(
        &mut self,
        ty: &'static ColumnType,
        src: *const u8,
        stride: usize,
        n: usize,
    ) {
        if ty.drop_slice.is_none() || n == 0 {
            return;
        }
        let mut buf = Column::new(ty);
        buf.reserve(0, n);
        for i in 0..n {
            // SAFETY: value `i` (the caller) moves into the buffer's slot `i`.
            unsafe { copy_bytes(src.add(i * stride), buf.ptr_at(i), ty.size) };
        }
        self.graves.push(Piece { buf, live: 0..n });
    }
}

impl Store {
    /// Per column: a pass stamped it, or one of its components alone, at a time `newer`
    /// accepts.
    fn passed(&self, newer: impl Fn(u64) -> bool) -> Vec<bool> {
        let mut passed: Vec<bool> = self.columns.iter().map(|c| newer(c.written())).collect();
        for slot in 0..self.info.slots.len() {
            passed[self.info.slots[slot].column as usize] |= newer(self.field_written(slot));
        }
        passed
    }

    /// Slot `slot`'s own pass stamp in a column of several components (else 0).
    fn field_written(&self, slot: usize) -> u64 {
        let column = self.info.slots[slot].column as usize;
        self.columns[column].field_written(field_index(self.info.slots, slot))
    }

    /// The rows a load of `image` restores, given that the image was saved from this store
    /// (of the same world) and nothing here written before `since` changed since (`None`:
    /// everything is restored).
    pub(crate) fn load_plan(&self, image: &StoreImage, since: Option<u64>) -> LoadPlan {
        let (n, m) = (self.len(), image.len);
        let newer = |stamp: u64| since.is_none_or(|r| stamp >= r);
        let columns = self.columns.len();
        let passed = self.passed(newer);
        let mut plan = LoadPlan {
            structural: Vec::new(),
            columns: vec![Vec::new(); columns],
            passes: passed.clone(),
        };
        let common = n.min(m);
        for c in 0..m.div_ceil(CHUNK) {
            let rows = chunk_rows(c, m);
            let resized = n != m && rows.end > common;
            let structural = resized || newer(self.versions.row_record(c));
            if structural {
                push_run(&mut plan.structural, rows.clone());
            }
            for (k, &passed) in passed.iter().enumerate() {
                let written =
                    image.plans.iter().enumerate().any(|(slot, p)| {
                        p.column == k && newer(self.versions.cell_record(slot, c))
                    });
                if structural || passed || written {
                    push_run(&mut plan.columns[k], rows.clone());
                }
            }
        }
        plan
    }

    /// Clones, from `image`, the values of `plan`'s rows that are copied with `Clone`, into
    /// buffers apart: all or nothing, the store untouched.
    pub(crate) fn stage_load(image: &StoreImage, plan: &LoadPlan) -> Staged {
        let mut staged = Staged::default();
        for (k, runs) in plan.columns.iter().enumerate() {
            for run in runs {
                for p in image.plans.iter().filter(|p| p.column == k) {
                    if !matches!(p.copying, Copying::Clone { .. }) {
                        continue;
                    }
                    let mut buf = Column::new(p.ty);
                    buf.reserve(0, run.len());
                    let Copying::Clone { new, .. } = p.copying else {
                        unreachable!()
                    };
                    // SAFETY: rows of the run are initialised in the image; the buffer has
                    // room for them, contiguous.
                    unsafe {
                        new(
                            at(&image.columns[k], p, run.start),
                            image.columns[k].elem_size(),
                            buf.base(),
                            p.ty.size,
                            run.len(),
                        )
                    };
                    staged.pieces.push(Piece {
                        buf,
                        live: 0..run.len(),
                    });
                }
            }
        }
        staged
    }

    /// Moves rows `from..` out of the store for a load that removes them: their saved values
    /// into `graveyard`, their no_rollback values to `carry` (with their entity and slot), and
    /// shortens the store.
    ///
    /// # Safety
    /// `plans` are this store's.
    pub(crate) unsafe fn take_tail(
        &mut self,
        from: usize,
        plans: &[SlotPlan],
        graveyard: &mut Graveyard,
        carry: &mut dyn FnMut(Entity, &SlotPlan, *mut u8),
    ) {
        let n = self.len();
        if from >= n {
            return;
        }
        for p in plans {
            let column = &self.columns[p.column];
            if p.saved() {
                // SAFETY: rows from..n are initialised; they leave the store below.
                unsafe { graveyard.bury(p.ty, at(column, p, from), column.elem_size(), n - from) };
            } else {
                for r in from..n {
                    carry(self.entities[r], p, at(column, p, r));
                }
            }
        }
        self.entities.truncate(from);
        self.versions.truncate_rows(from);
    }

    /// Installs `plan`'s rows of `image`: values as bytes or from `staged` (whose buffers then
    /// hold the values they replaced), entity ids, change records (stamped with `epoch`, the
    /// world's new epoch bits, over the image's clock bits), and the image's length and
    /// capacities. Calls no user code. no_rollback slots of the structural rows are left
    /// uninitialised: the caller fills them.
    ///
    /// # Safety
    /// `staged` was made by [`Store::stage_load`] from `image` and `plan`; the store's rows at
    /// or past `image.len()` were taken out ([`Store::take_tail`]), and so were the no_rollback
    /// values of `plan.structural`'s rows.
    pub(crate) unsafe fn commit_load(
        &mut self,
        image: &StoreImage,
        plan: &LoadPlan,
        staged: &mut Staged,
        epoch: u64,
    ) {
        let m = image.len;
        let n = self.len();
        debug_assert!(n <= m);
        for k in 0..self.columns.len() {
            self.columns[k].reserve(n, m - n);
            self.refresh_base(k);
        }
        self.entities.reserve(m - n);
        let mut pieces = staged.pieces.iter_mut();
        for (k, runs) in plan.columns.iter().enumerate() {
            let (src, dst) = (&image.columns[k], &self.columns[k]);
            if bits_only(&image.plans, k) {
                // SAFETY: the image's rows are initialised; the store's are within its capacity
                // and hold no value with drop glue (bits only).
                unsafe { copy_column(&image.plans, k, src, dst, runs, Dest::Empty) };
                continue;
            }
            for run in runs {
                for p in image.plans.iter().filter(|p| p.column == k) {
                    match p.copying {
                        Copying::Bits => {
                            // SAFETY: the image's rows are initialised; the store's are within
                            // its capacity, and the slot's bytes have no drop glue.
                            unsafe { copy_rows(p, src, dst, run.clone(), Dest::Empty) };
                        }
                        Copying::Clone { .. } => {
                            let piece = pieces.next().expect("a staged piece per cloned run");
                            for (i, r) in run.clone().enumerate() {
                                let (new, old) = (piece.buf.ptr_at(i), at(dst, p, r));
                                if r < n {
                                    // SAFETY: both hold a value; the piece keeps the old one.
                                    unsafe { std::ptr::swap_nonoverlapping(new, old, p.ty.size) };
                                } else {
                                    // SAFETY: the row is new: the value moves in.
                                    unsafe { copy_bytes(new, old, p.ty.size) };
                                }
                            }
                            piece.live = 0..n.saturating_sub(run.start).min(run.len());
                        }
                        Copying::NoRollback { .. } => {}
                    }
                }
            }
        }
        let width = self.info.slots.len();
        for run in &plan.structural {
            let kept = run.start.min(n)..run.end.min(n);
            self.entities[kept.clone()].copy_from_slice(&image.entities[kept]);
        }
        self.entities.extend_from_slice(&image.entities[n..m]);
        // The rows' adds, chunk by chunk: a uniform chunk's are its record (rows that hold
        // that record already, in a chunk that is uniform too, are left as they are).
        for run in &plan.structural {
            for c in run.start / CHUNK..run.end.div_ceil(CHUNK) {
                let rows = chunk_rows(c, m);
                if !image.uniform[c] {
                    let adds = &image.adds[rows.start * width..rows.end * width];
                    self.versions.set_row_adds(rows.start, adds);
                    continue;
                }
                let record = image.added[c];
                let same = self.versions.uniform(c) && self.versions.add_record(c) == record;
                let from = if same {
                    rows.end.min(n).max(rows.start)
                } else {
                    rows.start
                };
                self.versions.fill_row_adds(from..rows.end, record);
            }
        }
        let restamp = |stamp: u64| epoch | tick(stamp);
        for run in &plan.structural {
            for c in run.start / CHUNK..run.end.div_ceil(CHUNK) {
                self.versions.set_row_record(c, restamp(image.rows[c]));
                self.versions
                    .set_add_record(c, image.added[c], image.uniform[c]);
            }
        }
        for (slot, p) in image.plans.iter().enumerate() {
            for run in &plan.columns[p.column] {
                for c in run.start / CHUNK..run.end.div_ceil(CHUNK) {
                    self.versions
                        .set_cell_record(slot, c, restamp(image.cells[slot][c]));
                }
            }
            if plan.passes[p.column] {
                let field = field_index(self.info.slots, slot);
                self.columns[p.column].set_field_written(field, restamp(image.fields[slot]));
            }
        }
        for (k, column) in self.columns.iter().enumerate() {
            if plan.passes[k] {
                column.mark_written(restamp(image.written[k]));
            }
        }
        self.versions.truncate_chunks(m.div_ceil(CHUNK));
        // The capacities the store had when saved, so statistics and later growth agree.
        let target = image.entity_cap.max(m);
        if self.entities.capacity() < target {
            self.entities.reserve_exact(target - m);
        } else if self.entities.capacity() > target {
            self.entities.shrink_to(target);
        }
        let mut cap = self.entities.capacity();
        for (k, &want) in image.column_caps.iter().enumerate() {
            self.columns[k].set_capacity(m, want.max(m));
            self.refresh_base(k);
            cap = cap.min(self.columns[k].capacity());
        }
        self.versions.reserve_rows(cap);
        self.cap = cap;
    }

    /// Drops the epoch bits of every record (the world's epochs ran out; see `world/state.rs`).
    pub(crate) fn clear_epochs(&mut self) {
        self.versions.clear_epochs();
        for column in self.columns.iter() {
            column.clear_epochs();
        }
    }

    /// The hash of every chunk of the store, as an image saved from it holds them.
    pub(crate) fn hash_into(&self, plans: &[SlotPlan], h: &mut StateHasher) {
        let n = self.len();
        h.write_word(n as u64);
        for c in 0..n.div_ceil(CHUNK) {
            let rows = chunk_rows(c, n);
            let adds = ChunkAdds {
                record: self.versions.add_record(c),
                uniform: self.versions.uniform(c),
                rows: self.versions.row_adds(rows.clone()),
            };
            let hash = chunk_hash(
                plans,
                &self.columns,
                &self.entities,
                &|slot, c| self.versions.version_of(slot, self.pass_version(slot), c),
                adds,
                c,
                rows,
            );
            h.write_word(hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(adds: ChunkAdds<'_>) -> u64 {
        let mut h = StateHasher::new();
        adds.hash_into(&mut h);
        h.digest()
    }

    #[test]
    fn a_chunks_adds_hash_the_same_whether_or_not_known_uniform() {
        let adds = |record, uniform, rows| ChunkAdds {
            record,
            uniform,
            rows,
        };
        // An image does not copy a uniform chunk's adds: what it holds there is not read.
        let known = digest(adds(5, true, &[0, 9, 1]));
        assert_eq!(known, digest(adds(5, false, &[5, 5, 5])));
        assert_ne!(known, digest(adds(5, false, &[5, 4, 5])));
        assert_ne!(known, digest(adds(6, true, &[])));
        assert_ne!(
            digest(adds(5, false, &[4, 4, 4])),
            digest(adds(5, false, &[4, 4, 3]))
        );
    }
}
