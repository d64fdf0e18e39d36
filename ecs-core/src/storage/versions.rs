//! Change versions of one store, for change filters (`#[system(changed(C))]`,
//! [`Changed`](crate::query::Changed)): per chunk of [`CHUNK`] rows, the last time the chunk
//! was written, so a filter skips whole chunks that did not change (Unity Entities' chunk
//! versions), with no cost per row.
//!
//! A version is a stamp of the world's clock (see `World::change_tick`). Three records make a
//! chunk's version of a column, the largest of which counts:
//!
//! - the column's **pass** stamp (in the [`Column`](super::Column)): a system pass that declares
//!   `&mut C` takes the column mutably and writes every row of it, so one stamp for the whole
//!   column is exact and costs nothing per chunk;
//! - the chunk's **row** stamp: a structural change wrote the row (a spawn, the row a move
//!   brings in, the row that fills a despawned one), which changes every column of it;
//! - the chunk's **cell** stamp for that column: a single value written in place (`get_mut`,
//!   an `insert` replacing a value).
//!
//! So a filter has no false negative (every write stamps the chunk or the column it is in); its
//! false positives are exactly the other rows of a changed chunk, every row of a column a
//! pass wrote (written or not: `&mut C` counts as a write, as in bevy), and every column of a
//! row a structural change wrote.
//!
//! A stamp's low [`TICK_BITS`] bits are the world's clock; the bits above count the world
//! states the world loaded (its *epoch*, see `crate::state`). The epoch orders writes for
//! incremental saves, which must see a load's writes as newer than anything before it even
//! though the load sets the clock back; change filters compare the clock bits alone
//! ([`tick`]), so a world behaves the same whatever its epoch.

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

/// The per-chunk records of one store (the pass stamps live in its columns).
#[derive(Debug, Default)]
pub(crate) struct Versions {
    /// Per chunk: the last structural write of any of its rows.
    rows: Vec<u64>,
    /// Per column, per chunk: the last value written in place.
    cells: Box<[Vec<u64>]>,
}

impl Versions {
    /// Records for a store of `columns` columns.
    pub(crate) fn new(columns: usize) -> Self {
        Versions {
            rows: Vec::new(),
            cells: (0..columns).map(|_| Vec::new()).collect(),
        }
    }

    /// Rows `from..to` were written structurally at `stamp`.
    #[inline]
    pub(crate) fn mark_rows(&mut self, from: usize, to: usize, stamp: u64) {
        if from >= to {
            return;
        }
        let (first, last) = (chunk(from), chunk(to - 1));
        if self.rows.len() <= last {
            self.rows.resize(last + 1, 0);
        }
        self.rows[first..=last].fill(stamp);
    }

    /// Row `row` was written structurally at `stamp`.
    #[inline]
    pub(crate) fn mark_row(&mut self, row: usize, stamp: u64) {
        let c = chunk(row);
        if let Some(v) = self.rows.get_mut(c) {
            *v = stamp;
        } else {
            self.mark_new_chunk(c, stamp);
        }
    }

    /// [`Versions::mark_row`] of a row in a chunk the records do not reach yet: apart and
    /// cold, so that a move (which marks two rows) keeps its registers instead of carrying
    /// the resize inline.
    #[cold]
    #[inline(never)]
    fn mark_new_chunk(&mut self, c: usize, stamp: u64) {
        self.rows.resize(c + 1, 0);
        self.rows[c] = stamp;
    }

    /// The value of column `column` in row `row` was written in place at `stamp`.
    #[inline]
    pub(crate) fn mark_cell(&mut self, column: usize, row: usize, stamp: u64) {
        let c = chunk(row);
        let cells = &mut self.cells[column];
        if cells.len() <= c {
            cells.resize(c + 1, 0);
        }
        cells[c] = stamp;
    }

    /// The version of chunk `c` of column `column` whose pass stamp is `pass`.
    #[inline]
    fn version(&self, column: usize, pass: u64, c: usize) -> u64 {
        let row = self.rows.get(c).copied().unwrap_or(0);
        let cell = self.cells[column].get(c).copied().unwrap_or(0);
        tick(pass).max(tick(row)).max(tick(cell))
    }

    /// The runs of rows (of a store of `len` rows) in chunks where any of `columns` (column
    /// index, pass stamp) changed after `since`, in order, adjacent chunks merged.
    pub(crate) fn changed(
        &self,
        columns: &[(usize, u64)],
        len: usize,
        since: u64,
    ) -> Vec<Range<usize>> {
        let mut runs: Vec<Range<usize>> = Vec::new();
        let since = tick(since);
        if columns.iter().any(|&(_, pass)| tick(pass) > since) {
            // A pass wrote a whole column: every row.
            if len > 0 {
                runs.push(0..len);
            }
            return runs;
        }
        for c in 0..len.div_ceil(CHUNK) {
            if columns
                .iter()
                .any(|&(column, pass)| self.version(column, pass, c) > since)
            {
                let rows = c * CHUNK..((c + 1) * CHUNK).min(len);
                match runs.last_mut() {
                    Some(last) if last.end == rows.start => last.end = rows.end,
                    _ => runs.push(rows),
                }
            }
        }
        runs
    }
}

/// The records one by one, for world states (`crate::state`): saved with the rows they
/// describe, restored with them.
impl Versions {
    /// The record of chunk `c`'s structural writes (0 past the records).
    #[inline]
    pub(crate) fn row_record(&self, c: usize) -> u64 {
        self.rows.get(c).copied().unwrap_or(0)
    }

    /// The record of column `column`'s in-place writes in chunk `c` (0 past the records).
    #[inline]
    pub(crate) fn cell_record(&self, column: usize, c: usize) -> u64 {
        self.cells[column].get(c).copied().unwrap_or(0)
    }

    /// Sets chunk `c`'s structural record.
    pub(crate) fn set_row_record(&mut self, c: usize, stamp: u64) {
        if self.rows.len() <= c {
            self.rows.resize(c + 1, 0);
        }
        self.rows[c] = stamp;
    }

    /// Sets column `column`'s in-place record of chunk `c`.
    pub(crate) fn set_cell_record(&mut self, column: usize, c: usize, stamp: u64) {
        let cells = &mut self.cells[column];
        if cells.len() <= c {
            cells.resize(c + 1, 0);
        }
        cells[c] = stamp;
    }

    /// Forgets the records of chunks `chunks..`: rows a load removed. (A record left there
    /// from a longer past could otherwise outlive the rows that grow back into the chunk.)
    pub(crate) fn truncate_chunks(&mut self, chunks: usize) {
        self.rows.truncate(chunks);
        for cells in self.cells.iter_mut() {
            cells.truncate(chunks);
        }
    }

    /// Drops the epoch bits of every record.
    pub(crate) fn clear_epochs(&mut self) {
        for r in self.rows.iter_mut().chain(self.cells.iter_mut().flatten()) {
            *r = tick(*r);
        }
    }

    /// The version of chunk `c` of `column` (pass stamp `pass`): the clock bits of the newest
    /// of its records, which is all a change filter compares.
    #[inline]
    pub(crate) fn version_of(&self, column: usize, pass: u64, c: usize) -> u64 {
        self.version(column, pass, c)
    }
}

#[cfg(test)]
#[allow(
    clippy::single_range_in_vec_init,
    reason = "a list of one run is what is meant"
)]
mod tests {
    use super::*;

    #[test]
    fn runs_cover_exactly_the_changed_chunks() {
        let mut v = Versions::new(2);
        let len = 5 * CHUNK + 10;
        v.mark_rows(0, len, 1); // spawned at 1
        assert_eq!(v.changed(&[(0, 0)], len, 0), [0..len]);
        assert!(v.changed(&[(0, 0)], len, 1).is_empty());
        v.mark_cell(1, 2 * CHUNK + 3, 5); // one value of column 1 in chunk 2
        v.mark_row(4 * CHUNK, 6); // a row of chunk 4
        v.mark_row(5 * CHUNK + 9, 6); // and of chunk 5, the last and partial one
        assert_eq!(
            v.changed(&[(1, 0)], len, 4),
            [2 * CHUNK..3 * CHUNK, 4 * CHUNK..len]
        );
        assert_eq!(
            v.changed(&[(0, 0)], len, 4),
            [4 * CHUNK..len],
            "not column 0's cell"
        );
        assert_eq!(
            v.changed(&[(0, 0), (1, 0)], len, 5),
            [4 * CHUNK..len],
            "any column"
        );
        // A pass stamp newer than `since`: the whole column.
        assert_eq!(v.changed(&[(0, 7)], len, 6), [0..len]);
        assert!(v.changed(&[(0, 7)], len, 7).is_empty());
        // Chunks past the records (rows grown without a mark) count as unchanged.
        assert!(v.changed(&[(0, 0)], 9 * CHUNK, 6).is_empty());
        assert!(v.changed(&[(0, 9)], 0, 0).is_empty(), "no rows, no run");
    }
}
