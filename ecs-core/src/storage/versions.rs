//! Change and add versions of one store, for the filters `changed(C)` and `added(C)` of
//! systems and queries ([`Changed`](crate::query::Changed), [`Added`](crate::query::Added)):
//! per chunk of [`CHUNK`] rows, the last time a component was written or gained in the chunk,
//! so a filter skips whole chunks (Unity Entities' chunk versions), with no cost per row.
//!
//! A version is a stamp of the world's clock (see `World::change_tick`). Three records make a
//! chunk's **change** version of a component (its slot in the store), the largest of which
//! counts:
//!
//! - the slot's **pass** stamp: a system pass or a mutable query that takes `&mut C` may
//!   write every row of it, so one stamp for the whole store is exact and costs nothing per
//!   chunk. In a `rows` store it stamps only the components the pass writes, not the others
//!   of the row struct;
//! - the chunk's **row** stamp: a structural change wrote the row (a spawn, the row a move
//!   brings in, the row that fills a despawned one), which changes every component of it;
//! - the chunk's **cell** stamp for that slot: a single value written in place (`get_mut`, an
//!   `insert` replacing a value).
//!
//! Adds are exact: each row keeps, per component, the clock bits of the moment its entity
//! gained it (bevy's added ticks), and a chunk's **add** record, the newest of its rows',
//! lets a filter skip the chunks where nothing was added. A chunk also knows when its adds are
//! *uniform* (every add of every row is the add record, as after a batch spawn), so a world
//! state keeps one number for it instead of a copy of its rows' adds. That knowledge is kept
//! from the chunk records alone, with no look at a row's adds on a move: it may say "not
//! uniform" of a chunk that is (after a row gains a component, say), never the reverse.
//!
//! A spawn adds every component of its row; a move to another store carries the adds of the components the entity keeps and
//! adds the one it gains (the move's table of carried slots says which is which: a constant
//! in a typed move); a row that fills a removed one takes its adds along. A write is not an
//! add.
//!
//! So a filter has no false negative (every write or add stamps the chunk or the store it is
//! in, and a row that moves takes its adds along); its false positives are exactly the other
//! rows of a stamped chunk, every row of a component a pass wrote (written or not: `&mut C`
//! counts as a write, as in bevy) and every component of a row a structural change wrote
//! (for `changed`); an `added` filter has none.
//!
//! A stamp's low [`TICK_BITS`] bits are the world's clock; the bits above count the world
//! states the world loaded (its *epoch*, see `crate::state`). The epoch orders writes for
//! incremental saves, which must see a load's writes as newer than anything before it even
//! though the load sets the clock back; change filters compare the clock bits alone
//! ([`tick`]), so a world behaves the same whatever its epoch. Add records keep the clock bits
//! alone: an add always comes with a row stamp of its chunk, which is what an incremental
//! save looks at.

use crate::model::tables::GAINED;
use std::ops::Range;

/// Bits of a stamp that are the world's clock: 2^40 passes, 580 years at 60 frames of 1,000
/// passes a second.
pub(crate) const TICK_BITS: u32 = 40;

/// The clock bits of a stamp: what change filters compare.
#[inline]
pub(crate) const fn tick(stamp: u64) -> u64 {
    stamp & ((1 << TICK_BITS) - 1)
}

/// Rows per chunk: a filter keeps or skips this many rows at a time. Chosen with
/// `cargo bench --bench changes` (group `changed_filter`): smaller chunks filter finer but cost
/// more to scan; at 256 a filter over 1,000,000 rows with 1% of its chunks changed scans 3,907
/// versions and visits 10,000 rows.
pub const CHUNK: usize = 256;

/// The chunk of `row`.
#[inline]
pub(crate) fn chunk(row: usize) -> usize {
    row / CHUNK
}

/// What a filter watches in a store: a component (by its slot) and whether it keeps to its
/// changes or its adds. Generated passes write it as one number, `slot << 1 | added`
/// ([`Watch::from_number`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Watch {
    /// The component's slot in the store.
    pub(crate) slot: usize,
    /// Adds (`added(C)`) rather than changes (`changed(C)`).
    pub(crate) added: bool,
}

impl Watch {
    /// The watch a generated pass writes as `slot << 1 | added`.
    #[inline]
    pub(crate) fn from_number(n: usize) -> Self {
        Watch {
            slot: n >> 1,
            added: n & 1 == 1,
        }
    }
}

/// The stamp at `c`, 0 past the records (a chunk never stamped).
#[inline]
fn at(v: &[u64], c: usize) -> u64 {
    v.get(c).copied().unwrap_or(0)
}

/// Sets the stamp at `c`, growing the records as needed.
#[inline]
fn set(v: &mut Vec<u64>, c: usize, stamp: u64) {
    if let Some(s) = v.get_mut(c) {
        *s = stamp;
    } else {
        v.resize(c + 1, 0);
        v[c] = stamp;
    }
}

/// A chunk's records: the last structural write of any of its rows, and the newest add of any
/// component to any of its rows (clock bits) with, in bit [`UNIFORM`], whether every add of
/// every row is that one (false when unsure). Kept together: a move writes both; in one word,
/// so that a move tests "uniform, and the same add" with one comparison.
#[derive(Clone, Copy, Debug, Default)]
struct ChunkRecords {
    row: u64,
    added: u64,
}

/// The bit of a chunk's add record that says its adds are uniform (above any clock bits).
const UNIFORM: u64 = 1 << 63;

impl ChunkRecords {
    /// The newest add (clock bits).
    #[inline(always)]
    fn newest(self) -> u64 {
        self.added & !UNIFORM
    }

    /// Every add of every row is [`ChunkRecords::newest`].
    #[inline(always)]
    fn uniform(self) -> bool {
        self.added & UNIFORM != 0
    }

    /// After a row with adds no newer than `newest` came in among the others, from a chunk
    /// whose add record is `theirs` (0 when the row gained a component): still uniform when
    /// both chunks are, with the same record.
    #[inline(always)]
    fn joined(&mut self, newest: u64, theirs: u64) {
        if !(self.uniform() && theirs == self.added) {
            self.set_added(self.newest().max(newest));
        }
    }

    /// A row with adds no newer than `newest` came in (a world that keeps no [`UNIFORM`]
    /// bits).
    #[inline(always)]
    fn took(&mut self, newest: u64) {
        self.set_added(self.added.max(newest));
    }

    /// Sets the add record, writing only when it changes: consecutive moves into one chunk
    /// then read a record no store is pending on, rather than each waiting for the last
    /// move's store to reach its load.
    #[inline(always)]
    fn set_added(&mut self, added: u64) {
        if added != self.added {
            self.added = added;
        }
    }

    /// Sets the structural record, writing only when it changes (as [`ChunkRecords::set_added`]).
    #[inline(always)]
    fn set_row(&mut self, stamp: u64) {
        if stamp != self.row {
            self.row = stamp;
        }
    }
}

/// `added` marked uniform or not.
#[inline(always)]
fn marked(added: u64, uniform: bool) -> u64 {
    added | ((uniform as u64) << 63)
}

/// What a run of moves keeps for the chunk records it has not written yet: the newest add of
/// the rows it entered into the current chunk (see [`Versions::enter_run_row`]).
#[derive(Debug, Default)]
pub(crate) struct RunRecords {
    newest: u64,
}

/// The per-chunk, per-slot and per-row records of one store.
#[derive(Debug, Default)]
pub(crate) struct Versions {
    /// Per chunk: its structural and add records.
    chunks: Vec<ChunkRecords>,
    /// Per slot, per chunk: the last value written in place.
    cells: Box<[Vec<u64>]>,
    /// Per row, per slot (row after row, `width` each): when the row's entity gained the
    /// component (clock bits). Always as long as the store's rows times `width`.
    adds: Vec<u64>,
    /// The store's number of slots.
    width: usize,
    /// Keep the [`UNIFORM`] bits (a world that saves its state; others pay nothing for them).
    keep_uniform: bool,
}

impl Versions {
    /// Records for a store of `slots` components, which keep the [`UNIFORM`] bits when
    /// `keep_uniform`.
    pub(crate) fn new(slots: usize, keep_uniform: bool) -> Self {
        Versions {
            chunks: Vec::new(),
            cells: (0..slots).map(|_| Vec::new()).collect(),
            adds: Vec::new(),
            width: slots,
            keep_uniform,
        }
    }

    /// The records of chunk `c`, grown as needed.
    #[inline(always)]
    fn chunk_mut(&mut self, c: usize) -> &mut ChunkRecords {
        if c < self.chunks.len() {
            &mut self.chunks[c]
        } else {
            self.grow(c)
        }
    }

    /// Records up to chunk `c` (the new ones never stamped), and chunk `c`'s.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, c: usize) -> &mut ChunkRecords {
        self.chunks.resize(c + 1, ChunkRecords::default());
        &mut self.chunks[c]
    }

    /// The records of chunk `c` (0s past the records).
    #[inline(always)]
    fn chunk(&self, c: usize) -> ChunkRecords {
        self.chunks.get(c).copied().unwrap_or_default()
    }

    /// Rows `from..to` (`from` = the rows so far) were spawned at `stamp`: every component
    /// written and added.
    #[inline]
    pub(crate) fn spawn_rows(&mut self, from: usize, to: usize, stamp: u64) {
        if from >= to {
            return;
        }
        debug_assert_eq!(self.adds.len(), from * self.width);
        self.adds.resize(to * self.width, tick(stamp));
        let (first, last) = (chunk(from), chunk(to - 1));
        let head = self.spawned_into(from, stamp);
        self.chunk_mut(last);
        self.chunks[first..=last].fill(ChunkRecords {
            row: stamp,
            added: marked(tick(stamp), self.keep_uniform),
        });
        self.chunks[first] = head;
    }

    /// The records of the chunk of `row` (= the rows so far) once rows spawned at `stamp`
    /// come in there.
    #[inline(always)]
    fn spawned_into(&mut self, row: usize, stamp: u64) -> ChunkRecords {
        let now = tick(stamp);
        if !self.keep_uniform {
            return ChunkRecords {
                row: stamp,
                added: now,
            };
        }
        let r = self.chunk_mut(chunk(row));
        // The chunk's first place starts it afresh.
        let uniform = row.is_multiple_of(CHUNK) || r.added == marked(now, true);
        ChunkRecords {
            row: stamp,
            added: marked(now, uniform),
        }
    }

    /// Row `row` (= the rows so far) was spawned at `stamp`. (No stamp is older than a record:
    /// a load sets the clock back only to the saved clock, which no record passes.)
    #[inline]
    pub(crate) fn spawn_row(&mut self, row: usize, stamp: u64) {
        debug_assert_eq!(self.adds.len(), row * self.width);
        self.adds
            .extend(std::iter::repeat_n(tick(stamp), self.width));
        let r = self.spawned_into(row, stamp);
        *self.chunk_mut(chunk(row)) = r;
    }

    /// Room for the adds of `rows` rows (the store's capacity), so that a move's
    /// [`Versions::enter_row`] writes its row's adds with no capacity check.
    #[inline]
    pub(crate) fn reserve_rows(&mut self, rows: usize) {
        let want = rows.saturating_mul(self.width);
        if want > self.adds.capacity() {
            self.adds.reserve(want - self.adds.len());
        }
    }

    /// Row `row` (= the rows so far) is `src`'s row `from`, which a move brought in at
    /// `stamp` (a structural write): per slot, `carried` names the slot of `src` whose add it
    /// keeps (the same component), or [`GAINED`] for a component added now.
    ///
    /// # Safety
    /// `from` is a row of `src`, every slot `carried` names other than [`GAINED`] is one of
    /// `src`'s, `carried` has one entry per slot of this store, and
    /// [`Versions::reserve_rows`] made room for row `row`. (A typed move's `carried` is a
    /// constant, so its loop unrolls and every address is a constant offset.)
    #[inline(always)]
    pub(crate) unsafe fn enter_row(
        &mut self,
        row: usize,
        stamp: u64,
        src: &Versions,
        from: usize,
        carried: &[u32],
    ) {
        // SAFETY: as this function's contract.
        let newest = unsafe { self.enter_adds(row, stamp, src, from, carried) };
        if !self.keep_uniform {
            let r = self.chunk_mut(chunk(row));
            r.set_row(stamp);
            r.took(newest);
            return;
        }
        // Still uniform when the row gains nothing and comes from a uniform chunk of the same
        // add record (a constant test in a typed move, whose `carried` is a constant).
        let theirs = if carried.contains(&GAINED) {
            0
        } else {
            src.chunk(chunk(from)).added
        };
        let r = self.chunk_mut(chunk(row));
        r.set_row(stamp);
        if row.is_multiple_of(CHUNK) {
            r.added = marked(newest, theirs & UNIFORM != 0);
        } else {
            r.joined(newest, theirs);
        }
    }

    /// [`Versions::enter_row`] for one row of a run of moves into consecutive rows. Where no
    /// [`UNIFORM`] bits are kept, a chunk's records are written once, when the run enters its
    /// last row or ends ([`Versions::end_run`]), and `run` keeps the newest add meanwhile: a
    /// record written by every row made each row wait on the last row's write (0.92x the time
    /// of a batched `add_remove` without it). Elsewhere they are written now, as `enter_row`
    /// does.
    ///
    /// # Safety
    /// As [`Versions::enter_row`].
    #[inline(always)]
    pub(crate) unsafe fn enter_run_row(
        &mut self,
        row: usize,
        stamp: u64,
        src: &Versions,
        from: usize,
        carried: &[u32],
        run: &mut RunRecords,
    ) {
        if self.keep_uniform {
            // SAFETY: as this function's contract.
            return unsafe { self.enter_row(row, stamp, src, from, carried) };
        }
        // SAFETY: as this function's contract.
        let newest = unsafe { self.enter_adds(row, stamp, src, from, carried) };
        run.newest = run.newest.max(newest);
        if (row + 1).is_multiple_of(CHUNK) {
            self.record_run(row, stamp, run);
        }
    }

    /// A run of [`Versions::enter_run_row`] at `stamp` entered rows up to `len`: the chunk of
    /// its last rows takes its records, unless the last row ended the chunk (already done).
    #[inline]
    pub(crate) fn end_run(&mut self, len: usize, stamp: u64, run: &mut RunRecords) {
        if !self.keep_uniform && !len.is_multiple_of(CHUNK) {
            self.record_run(len - 1, stamp, run);
        }
    }

    /// The records of the chunk of `row`, once a run entered its rows up to `row`: written at
    /// `stamp`, and the newest add the run kept.
    #[inline(always)]
    fn record_run(&mut self, row: usize, stamp: u64, run: &mut RunRecords) {
        let r = self.chunk_mut(chunk(row));
        r.set_row(stamp);
        r.took(run.newest);
        run.newest = 0;
    }

    /// The adds half of [`Versions::enter_row`]: writes row `row`'s adds and returns the
    /// newest.
    ///
    /// # Safety
    /// As [`Versions::enter_row`].
    #[inline(always)]
    unsafe fn enter_adds(
        &mut self,
        row: usize,
        stamp: u64,
        src: &Versions,
        from: usize,
        carried: &[u32],
    ) -> u64 {
        debug_assert_eq!(self.adds.len(), row * self.width);
        debug_assert_eq!(carried.len(), self.width);
        debug_assert!(self.adds.capacity() >= (row + 1) * self.width);
        debug_assert!((from + 1) * src.width <= src.adds.len());
        let now = tick(stamp);
        let mut newest = 0;
        // SAFETY: row `from` of `src` is live and `carried`'s slots are `src`'s (the caller),
        // so every read is within `src.adds`; the row's `width` adds fit the capacity the
        // caller reserved, and they are all written before the length covers them.
        unsafe {
            let theirs = src.adds.as_ptr().add(from * src.width);
            let ours = self.adds.as_mut_ptr().add(row * carried.len());
            for (k, &slot) in carried.iter().enumerate() {
                let added = if slot == GAINED {
                    now
                } else {
                    *theirs.add(slot as usize)
                };
                newest = newest.max(added);
                ours.add(k).write(added);
            }
            self.adds.set_len((row + 1) * carried.len());
        }
        newest
    }

    /// The value of slot `slot` in row `row` was written in place at `stamp`.
    #[inline]
    pub(crate) fn mark_cell(&mut self, slot: usize, row: usize, stamp: u64) {
        set(&mut self.cells[slot], chunk(row), stamp);
    }

    /// The row at `from` moved to `to` within the store (it fills a removed row): it takes its
    /// adds along, and `to` counts as written at `stamp`. `width` is the store's number of
    /// slots (a constant where a typed move inlines this, so the copy unrolls).
    ///
    /// # Safety
    /// `from` and `to` are rows of the store and `width` is its number of slots.
    #[inline(always)]
    pub(crate) unsafe fn move_within(&mut self, from: usize, to: usize, stamp: u64, width: usize) {
        debug_assert_eq!(width, self.width);
        debug_assert!(from.max(to) * width < self.adds.len() || width == 0);
        let mut newest = 0;
        // SAFETY: both rows are live (the caller), so their `width` adds are within `adds`.
        unsafe {
            let adds = self.adds.as_mut_ptr();
            for k in 0..width {
                let added = *adds.add(from * width + k);
                *adds.add(to * width + k) = added;
                newest = newest.max(added);
            }
        }
        if !self.keep_uniform {
            let r = self.chunk_mut(chunk(to));
            r.set_row(stamp);
            r.took(newest);
            return;
        }
        // Still uniform when the row comes from a uniform chunk of the same add record.
        let theirs = self.chunk(chunk(from)).added;
        let r = self.chunk_mut(chunk(to));
        r.set_row(stamp);
        r.joined(newest, theirs);
    }

    /// Forgets the adds of rows `len..` (rows that left the store).
    #[inline(always)]
    pub(crate) fn truncate_rows(&mut self, len: usize) {
        self.adds.truncate(len * self.width);
    }

    /// The runs of rows (of a store of `len` rows) where any of `watched` (each with its pass
    /// stamp) changed or was added after `since`, in order, adjacent runs merged: changes by
    /// whole chunks, adds row by row.
    pub(crate) fn changed(
        &self,
        watched: &[(Watch, u64)],
        len: usize,
        since: u64,
    ) -> Vec<Range<usize>> {
        let mut runs: Vec<Range<usize>> = Vec::new();
        let since = tick(since);
        // The records whose largest stamp in a chunk is the version of a watch there.
        let mut records: Vec<&[u64]> = Vec::new();
        let mut added: Vec<usize> = Vec::new();
        let mut structural = false;
        for &(w, pass) in watched {
            if w.added {
                added.push(w.slot);
            } else if tick(pass) > since {
                // A pass wrote a whole component: every row.
                if len > 0 {
                    runs.push(0..len);
                }
                return runs;
            } else {
                structural = true;
                records.push(&self.cells[w.slot]);
            }
        }
        let width = self.width;
        for c in 0..len.div_ceil(CHUNK) {
            let chunk = self.chunk(c);
            let rows = c * CHUNK..((c + 1) * CHUNK).min(len);
            if (structural && tick(chunk.row) > since)
                || records.iter().any(|r| tick(at(r, c)) > since)
            {
                push_run(&mut runs, rows);
            } else if !added.is_empty() && chunk.newest() > since {
                if chunk.uniform() {
                    push_run(&mut runs, rows);
                    continue;
                }
                for row in rows {
                    let adds = &self.adds[row * width..(row + 1) * width];
                    if added.iter().any(|&slot| adds[slot] > since) {
                        push_run(&mut runs, row..row + 1);
                    }
                }
            }
        }
        runs
    }
}

/// Is every add in `adds` equal to `record`?
pub(crate) fn uniform(adds: &[u64], record: u64) -> bool {
    adds.iter().all(|&a| a == record)
}

/// Appends `rows` to `runs`, merged with the last run when they touch.
#[inline]
fn push_run(runs: &mut Vec<Range<usize>>, rows: Range<usize>) {
    match runs.last_mut() {
        Some(last) if last.end == rows.start => last.end = rows.end,
        _ => runs.push(rows),
    }
}

/// The records one by one, for world states (`crate::state`): saved with the rows they
/// describe, restored with them.
impl Versions {
    /// The record of chunk `c`'s structural writes (0 past the records).
    #[inline]
    pub(crate) fn row_record(&self, c: usize) -> u64 {
        self.chunk(c).row
    }

    /// The record of slot `slot`'s in-place writes in chunk `c` (0 past the records).
    #[inline]
    pub(crate) fn cell_record(&self, slot: usize, c: usize) -> u64 {
        at(&self.cells[slot], c)
    }

    /// The record of chunk `c`'s adds (0 past the records).
    #[inline]
    pub(crate) fn add_record(&self, c: usize) -> u64 {
        self.chunk(c).newest()
    }

    /// The adds of rows `rows`, row after row (one per slot).
    #[inline]
    pub(crate) fn row_adds(&self, rows: Range<usize>) -> &[u64] {
        let width = self.width;
        &self.adds[rows.start * width..rows.end * width]
    }

    /// Are the adds of a store of `len` rows consistent with its chunk records: one per row and
    /// slot, none newer than its chunk's add record, and all of them that record in a chunk
    /// known to be uniform? (For `World::check_invariants`.)
    pub(crate) fn check_adds(&self, len: usize) -> Result<(), String> {
        if self.adds.len() != len * self.width {
            return Err(format!(
                "{} adds for {len} rows of {} components",
                self.adds.len(),
                self.width
            ));
        }
        for c in 0..len.div_ceil(CHUNK) {
            let rows = c * CHUNK..((c + 1) * CHUNK).min(len);
            let r = self.chunk(c);
            let adds = self.row_adds(rows);
            if adds.iter().any(|&a| a > r.newest()) {
                return Err(format!("chunk {c} has an add newer than its record"));
            }
            if r.uniform() && !uniform(adds, r.newest()) {
                return Err(format!("chunk {c} is said uniform but its adds differ"));
            }
        }
        Ok(())
    }

    /// Are chunk `c`'s adds known to be uniform: is every add of every row its add record?
    /// (False when unsure, and past the records.)
    #[inline]
    pub(crate) fn uniform(&self, c: usize) -> bool {
        self.chunk(c).uniform()
    }

    /// Sets the adds of the rows from `row` on (existing rows, or the next ones to come when
    /// `row` is the number of rows so far) to `adds`, row after row.
    pub(crate) fn set_row_adds(&mut self, row: usize, adds: &[u64]) {
        let rows = row..row + adds.len() / self.width.max(1);
        self.row_adds_mut(rows).copy_from_slice(adds);
    }

    /// Sets every add of rows `rows` (existing rows, or the next ones to come) to `added`.
    pub(crate) fn fill_row_adds(&mut self, rows: Range<usize>, added: u64) {
        self.row_adds_mut(rows).fill(added);
    }

    /// The adds of rows `rows`, grown when they reach past the rows so far.
    fn row_adds_mut(&mut self, rows: Range<usize>) -> &mut [u64] {
        let (start, end) = (rows.start * self.width, rows.end * self.width);
        if end > self.adds.len() {
            debug_assert!(start <= self.adds.len());
            self.adds.resize(end, 0);
        }
        &mut self.adds[start..end]
    }

    /// Sets chunk `c`'s structural record.
    pub(crate) fn set_row_record(&mut self, c: usize, stamp: u64) {
        self.chunk_mut(c).row = stamp;
    }

    /// Sets slot `slot`'s in-place record of chunk `c`.
    pub(crate) fn set_cell_record(&mut self, slot: usize, c: usize, stamp: u64) {
        set(&mut self.cells[slot], c, stamp);
    }

    /// Sets chunk `c`'s add record (clock bits are kept alone) and whether its rows' adds are
    /// known to be all that record.
    pub(crate) fn set_add_record(&mut self, c: usize, stamp: u64, uniform: bool) {
        self.chunk_mut(c).added = marked(tick(stamp), uniform);
    }

    /// Forgets the records of chunks `chunks..`: rows a load removed. (A record left there
    /// from a longer past could otherwise outlive the rows that grow back into the chunk.)
    pub(crate) fn truncate_chunks(&mut self, chunks: usize) {
        self.chunks.truncate(chunks);
        for cells in self.cells.iter_mut() {
            cells.truncate(chunks);
        }
    }

    /// Drops the epoch bits of every record.
    pub(crate) fn clear_epochs(&mut self) {
        for c in self.chunks.iter_mut() {
            c.row = tick(c.row);
        }
        for r in self.cells.iter_mut().flatten() {
            *r = tick(*r);
        }
    }

    /// The change version of chunk `c` of slot `slot` whose pass stamp is `pass`: the clock
    /// bits of the newest of its records, which is all a `changed` filter compares.
    #[inline]
    pub(crate) fn version_of(&self, slot: usize, pass: u64, c: usize) -> u64 {
        tick(pass)
            .max(tick(self.row_record(c)))
            .max(tick(self.cell_record(slot, c)))
    }
}

#[cfg(test)]
#[allow(
    clippy::single_range_in_vec_init,
    reason = "a list of one run is what is meant"
)]
mod tests {
    use super::*;
    use crate::model::Slot;

    fn changed(slot: usize) -> Watch {
        Watch { slot, added: false }
    }
    fn added(slot: usize) -> Watch {
        Watch { slot, added: true }
    }
    fn runs(
        v: &Versions,
        passes: &[u64],
        watched: &[Watch],
        len: usize,
        since: u64,
    ) -> Vec<Range<usize>> {
        let watched: Vec<(Watch, u64)> = watched.iter().map(|&w| (w, passes[w.slot])).collect();
        v.changed(&watched, len, since)
    }

    /// Records for a store of `components` (ids), in that slot order.
    fn versions(components: &[u32]) -> Versions {
        Versions::new(components.len(), true)
    }

    /// [`Versions::enter_row`] with its contract checked: row `from` of `src` exists and
    /// room is reserved.
    fn enter(
        v: &mut Versions,
        row: usize,
        stamp: u64,
        src: &Versions,
        from: usize,
        carried: &[u32],
    ) {
        assert!((from + 1) * src.width <= src.adds.len() && carried.len() == v.width);
        assert!(carried
            .iter()
            .all(|&s| s == GAINED || (s as usize) < src.width));
        v.reserve_rows(row + 1);
        // SAFETY: checked above.
        unsafe { v.enter_row(row, stamp, src, from, carried) }
    }

    /// [`Versions::enter_run_row`] with the contract checked as in [`enter`].
    fn enter_run(
        v: &mut Versions,
        row: usize,
        stamp: u64,
        src: &Versions,
        from: usize,
        carried: &[u32],
        run: &mut RunRecords,
    ) {
        assert!((from + 1) * src.width <= src.adds.len() && carried.len() == v.width);
        v.reserve_rows(row + 1);
        // SAFETY: checked above.
        unsafe { v.enter_run_row(row, stamp, src, from, carried, run) }
    }

    #[test]
    fn a_run_writes_the_chunk_records_that_row_by_row_entries_write() {
        // An insert (the row gains a component, added at the run's stamp) and a remove (the
        // row keeps only the source's add).
        for (carried, width) in [(&[0, GAINED][..], 2), (&[0][..], 1)] {
            for keep_uniform in [false, true] {
                // A source of 700 rows added at three times, the newest last.
                let mut src = Versions::new(1, keep_uniform);
                src.spawn_rows(0, 300, 5);
                src.spawn_rows(300, 600, 7);
                src.spawn_rows(600, 700, 9);
                let mut rows = Versions::new(width, keep_uniform);
                let mut runs = Versions::new(width, keep_uniform);
                rows.spawn_rows(0, 100, 2);
                runs.spawn_rows(0, 100, 2);
                // Two runs: rows 100..700 (from mid-chunk across two chunk ends; the newest
                // adds come first, so a chunk that took an earlier chunk's newest add shows),
                // then 700..768 (ending on a chunk's last row).
                let mut row = 100;
                for (stamp, count) in [(11, 600), (13, 68)] {
                    let mut run = RunRecords::default();
                    for k in 0..count {
                        let from = (k + 600) % 700;
                        enter(&mut rows, row, stamp, &src, from, carried);
                        enter_run(&mut runs, row, stamp, &src, from, carried, &mut run);
                        row += 1;
                    }
                    runs.end_run(row, stamp, &mut run);
                    assert_eq!(runs.row_adds(0..row), rows.row_adds(0..row));
                    for c in 0..4 {
                        assert_eq!(
                            (runs.row_record(c), runs.add_record(c)),
                            (rows.row_record(c), rows.add_record(c)),
                            "chunk {c} after the run at {stamp}, {carried:?}, \
                             uniform bits kept: {keep_uniform}"
                        );
                    }
                }
                assert_eq!(row, 3 * CHUNK);
                if width == 1 {
                    // Chunk 1 holds source rows 56..311: added at 5 and 7, not 9.
                    assert_eq!(rows.add_record(1) & !UNIFORM, 7);
                }
            }
        }
    }

    /// [`Versions::move_within`] with its contract checked: both rows exist.
    fn within(v: &mut Versions, from: usize, to: usize, stamp: u64, width: usize) {
        assert!(width == v.width && from.max(to) < v.adds.len() / width.max(1));
        // SAFETY: checked above.
        unsafe { v.move_within(from, to, stamp, width) }
    }

    /// The carried slots of a move from a store of components `from` to one of `to`.
    fn carried(from: &[u32], to: &[u32]) -> Box<[u32]> {
        let slots = |ids: &[u32]| -> Vec<Slot> {
            ids.iter()
                .enumerate()
                .map(|(k, &c)| Slot::new(c, k as u32, 0))
                .collect()
        };
        crate::model::tables::carried_slots(&slots(from), &slots(to))
    }

    #[test]
    fn runs_cover_exactly_the_changed_chunks() {
        let mut v = versions(&[0, 1]);
        let mut passes = [0u64; 2];
        let len = 5 * CHUNK + 10;
        v.spawn_rows(0, len, 1); // spawned at 1
        assert_eq!(runs(&v, &passes, &[changed(0)], len, 0), [0..len]);
        assert!(runs(&v, &passes, &[changed(0)], len, 1).is_empty());
        v.mark_cell(1, 2 * CHUNK + 3, 5); // one value of slot 1 in chunk 2
        within(&mut v, 4 * CHUNK + 1, 4 * CHUNK, 6, 2); // a row of chunk 4 written
        within(&mut v, 5 * CHUNK + 8, 5 * CHUNK + 9, 6, 2); // and of chunk 5, the last, partial one
        assert_eq!(
            runs(&v, &passes, &[changed(1)], len, 4),
            [2 * CHUNK..3 * CHUNK, 4 * CHUNK..len]
        );
        assert_eq!(
            runs(&v, &passes, &[changed(0)], len, 4),
            [4 * CHUNK..len],
            "not slot 0's cell"
        );
        assert_eq!(
            runs(&v, &passes, &[changed(0), changed(1)], len, 5),
            [4 * CHUNK..len],
            "any slot"
        );
        // A pass stamp newer than `since`: every row, of that slot only.
        passes[0] = 7;
        assert_eq!(runs(&v, &passes, &[changed(0)], len, 6), [0..len]);
        assert!(runs(&v, &passes, &[changed(0)], len, 7).is_empty());
        assert!(
            runs(&v, &passes, &[changed(1)], len, 6).is_empty(),
            "slot 1 not passed"
        );
        assert!(
            runs(&v, &passes, &[added(0)], len, 6).is_empty(),
            "a write is no add"
        );
        // Chunks past the records (rows grown without a mark) count as unchanged.
        assert!(runs(&v, &passes, &[changed(1)], 9 * CHUNK, 7).is_empty());
        assert!(
            runs(&v, &passes, &[changed(0)], 0, 0).is_empty(),
            "no rows, no run"
        );
    }

    #[test]
    fn adds_are_exact_per_row_and_component_and_move_with_their_rows() {
        // Components 5, 7, 3 in that slot order; the other store holds 7 and 3 (as 3, 7).
        let mut v = versions(&[5, 7, 3]);
        let mut other = versions(&[3, 7]);
        let mut passes = [0u64; 3];
        let len = 2 * CHUNK;
        v.spawn_rows(0, len, 1);
        assert_eq!(
            runs(&v, &passes, &[added(0)], len, 0),
            [0..len],
            "spawned: added"
        );
        assert!(runs(&v, &passes, &[added(0)], len, 1).is_empty());
        // Writes are not adds.
        v.mark_cell(0, 5, 2);
        within(&mut v, CHUNK + 1, CHUNK, 2, 3);
        passes[1] = 2;
        assert!(runs(&v, &passes, &[added(0), added(1), added(2)], len, 1).is_empty());
        // An entity spawned at 2 in the other store gains component 5 at 4: it comes in as
        // row `len`, with 7 and 3 added at 2 and 5 at 4.
        other.spawn_row(0, 2);
        enter(&mut v, len, 4, &other, 0, &carried(&[3, 7], &[5, 7, 3]));
        let len = len + 1;
        assert_eq!(runs(&v, &passes, &[added(0)], len, 3), [len - 1..len]);
        assert!(runs(&v, &passes, &[added(1), added(2)], len, 3).is_empty());
        assert_eq!(
            runs(&v, &passes, &[added(2)], len, 1),
            [len - 1..len],
            "3 kept its add"
        );
        assert_eq!(v.row_adds(len - 1..len), [4, 2, 2]);
        // It fills row 5 (a removed row): its adds go with it, and nothing else is added.
        within(&mut v, len - 1, 5, 5, 3);
        v.truncate_rows(len - 1);
        let len = len - 1;
        assert_eq!(runs(&v, &passes, &[added(0)], len, 3), [5..6]);
        assert_eq!(
            runs(&v, &passes, &[changed(1)], len, 4),
            [0..CHUNK],
            "the row it fills is written"
        );
        // Back to the other store, losing 5: 7 and 3 keep their adds.
        let mut back = versions(&[7, 3]);
        back.spawn_rows(0, 1, 1);
        enter(&mut back, 1, 6, &v, 5, &carried(&[5, 7, 3], &[7, 3]));
        assert_eq!(back.row_adds(1..2), [2, 2]);
        assert!(runs(&back, &[0, 0], &[added(0), added(1)], 2, 2).is_empty());
        // Adds are filtered row by row, in order, touching rows merged.
        let mut w = versions(&[1]);
        w.spawn_rows(0, 3, 1);
        w.spawn_rows(3, 6, 8);
        w.spawn_row(6, 9);
        assert_eq!(runs(&w, &[0], &[added(0)], 7, 1), [3..7]);
        assert_eq!(runs(&w, &[0], &[added(0)], 7, 8), [6..7]);
        within(&mut w, 0, 4, 10, 1);
        assert_eq!(runs(&w, &[0], &[added(0)], 7, 1), [3..4, 5..7]);
    }

    #[test]
    fn filters_compare_clock_bits_and_add_records_keep_no_epoch() {
        let epoch = 3 << TICK_BITS;
        let mut v = versions(&[0]);
        let mut passes = [0u64; 1];
        v.spawn_rows(0, 2 * CHUNK, epoch | 5);
        assert_eq!(v.add_record(1), 5, "clock bits only");
        assert_eq!(v.row_adds(0..1), [5], "clock bits only");
        assert_eq!(v.row_record(1), epoch | 5);
        assert!(runs(&v, &passes, &[changed(0), added(0)], 2 * CHUNK, 5).is_empty());
        assert_eq!(runs(&v, &passes, &[added(0)], 2 * CHUNK, 4), [0..2 * CHUNK]);
        passes[0] = epoch | 6;
        assert_eq!(
            runs(&v, &passes, &[changed(0)], 2 * CHUNK, 5),
            [0..2 * CHUNK]
        );
        assert_eq!(v.version_of(0, passes[0], 0), 6);
        v.clear_epochs();
        assert_eq!(v.row_record(0), 5);
        v.set_add_record(0, epoch | 9, false);
        assert_eq!(v.add_record(0), 9);
        v.set_row_adds(1, &[9, 9]);
        assert_eq!(v.row_adds(0..3), [5, 9, 9]);
        v.truncate_chunks(1);
        assert_eq!((v.add_record(1), v.row_record(1)), (0, 0));
    }

    #[test]
    fn a_chunk_is_known_uniform_only_while_every_add_in_it_is_its_record() {
        let passes = [0u64; 2];
        let mut v = versions(&[0, 1]);
        // A batch at 3 fills chunk 0 and part of chunk 1: both uniform; a uniform chunk's
        // rows are taken whole by a filter.
        v.spawn_rows(0, CHUNK + 20, 3);
        let len = CHUNK + 20;
        assert!(v.uniform(0) && v.uniform(1));
        assert_eq!(runs(&v, &passes, &[added(1)], len, 2), [0..len]);
        // More rows at 3 keep chunk 1 uniform; a row at 4 does not, and a filter then reads
        // its rows one by one.
        v.spawn_row(len, 3);
        assert!(v.uniform(1));
        v.spawn_rows(len + 1, len + 2, 4);
        assert!(!v.uniform(1));
        assert_eq!(
            runs(&v, &passes, &[added(0)], len + 2, 3),
            [len + 1..len + 2]
        );
        // A row that gains a component brings an add of its own: not uniform. One that only
        // loses components, from a uniform chunk of the same record, keeps it uniform.
        let mut one = versions(&[1]);
        one.spawn_rows(0, 2, 5);
        let mut w = versions(&[0, 1]);
        w.spawn_rows(0, 2, 5);
        enter(&mut w, 2, 5, &one, 0, &carried(&[1], &[0, 1]));
        assert!(!w.uniform(0), "a gained component");
        let mut two = versions(&[0, 1]);
        two.spawn_rows(0, 1, 5);
        enter(&mut one, 2, 6, &two, 0, &carried(&[0, 1], &[1]));
        assert!(
            one.uniform(0),
            "a lost component, adds at 5 among adds at 5"
        );
        let mut older = versions(&[0, 1]);
        older.spawn_rows(0, 1, 2);
        enter(&mut one, 3, 7, &older, 0, &carried(&[0, 1], &[1]));
        assert!(!one.uniform(0), "an add at 2 among adds at 5");
        assert_eq!(one.row_adds(0..4), [5, 5, 5, 2]);
        // A row that fills the chunk's first place starts it afresh.
        one.truncate_rows(0);
        enter(&mut one, 0, 8, &older, 0, &carried(&[0, 1], &[1]));
        assert!(one.uniform(0));
        assert_eq!(one.add_record(0), 2);
        // A row moving within the store keeps the chunk it fills uniform only if it comes from
        // a uniform chunk of the same record.
        let mut y = versions(&[0]);
        y.spawn_rows(0, CHUNK, 2);
        y.spawn_rows(CHUNK, CHUNK + 2, 6);
        within(&mut y, CHUNK + 1, 3, 9, 1);
        assert!(!y.uniform(0), "an add at 6 among adds at 2");
        assert!(y.uniform(1), "the row that left takes nothing from it");
        let mut z = versions(&[0]);
        z.spawn_rows(0, CHUNK + 2, 2);
        within(&mut z, CHUNK + 1, 3, 9, 1);
        assert!(z.uniform(0) && z.uniform(1));
        // A load says so itself.
        z.set_add_record(1, 2, false);
        assert!(!z.uniform(1));
        z.fill_row_adds(CHUNK..CHUNK + 3, 4);
        assert_eq!(z.row_adds(CHUNK..CHUNK + 3), [4; 3]);
        z.set_row_adds(CHUNK + 1, &[7]);
        assert_eq!(z.row_adds(CHUNK..CHUNK + 3), [4, 7, 4]);
        assert!(uniform(&[4, 4], 4) && !uniform(&[4, 3], 4) && uniform(&[], 4));
        // The invariant check sees a chunk said uniform whose adds differ, and an add newer
        // than its record.
        let mut c = versions(&[0, 1]);
        c.spawn_rows(0, 3, 2);
        assert_eq!(c.check_adds(3), Ok(()));
        assert_eq!(
            c.check_adds(4),
            Err("6 adds for 4 rows of 2 components".to_string())
        );
        c.set_row_adds(1, &[2, 1]);
        assert_eq!(
            c.check_adds(3),
            Err("chunk 0 is said uniform but its adds differ".to_string())
        );
        c.set_add_record(0, 2, false);
        assert_eq!(c.check_adds(3), Ok(()));
        c.set_row_adds(1, &[2, 3]);
        assert_eq!(
            c.check_adds(3),
            Err("chunk 0 has an add newer than its record".to_string())
        );
        // A world that does not save its state keeps no such knowledge.
        let mut plain = Versions::new(1, false);
        plain.spawn_rows(0, 3, 2);
        within(&mut plain, 2, 0, 3, 1);
        assert!(!plain.uniform(0));
        assert_eq!(plain.add_record(0), 2);
    }

    #[test]
    fn a_watch_is_one_number() {
        assert_eq!(Watch::from_number(6), changed(3));
        assert_eq!(Watch::from_number(7), added(3));
        assert_eq!(Watch::from_number(0), changed(0));
    }
}
