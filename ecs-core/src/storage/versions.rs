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
//! One record makes a chunk's **add** version, the same for every component: the chunk's
//! **add** stamp, raised when a row of it is spawned or gains a component (an insert moves it
//! in), and raised to the add stamp of the chunk a row comes from when a move brings the row
//! in (from another store, or as the last row filling a removed one): one comparison per move,
//! where a stamp per component would cost a search of the gained component in every move. A
//! write is not an add.
//!
//! So a filter has no false negative (every write or add stamps the chunk or the store it is
//! in, and a row that moves takes its adds along); its false positives are exactly the other
//! rows of a stamped chunk, every row of a component a pass wrote (written or not: `&mut C`
//! counts as a write, as in bevy), every component of a row a structural change wrote (for
//! `changed`), and every component of a chunk in which a row was added or into which a row
//! with a newer add moved (for `added`).
//!
//! A stamp's low [`TICK_BITS`] bits are the world's clock; the bits above count the world
//! states the world loaded (its *epoch*, see `crate::state`). The epoch orders writes for
//! incremental saves, which must see a load's writes as newer than anything before it even
//! though the load sets the clock back; change filters compare the clock bits alone
//! ([`tick`]), so a world behaves the same whatever its epoch. Add records keep the clock bits
//! alone: a move compares them, and an add always comes with a row stamp of its chunk, which
//! is what an incremental save looks at.

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
/// component to any of its rows (clock bits only). Kept together: a move writes both.
#[derive(Clone, Copy, Debug, Default)]
struct ChunkRecords {
    row: u64,
    added: u64,
}

/// The per-chunk and per-slot records of one store.
#[derive(Debug, Default)]
pub(crate) struct Versions {
    /// Per chunk: its structural and add records.
    chunks: Vec<ChunkRecords>,
    /// Per slot, per chunk: the last value written in place.
    cells: Box<[Vec<u64>]>,
}

impl Versions {
    /// Records for a store of `slots` components.
    pub(crate) fn new(slots: usize) -> Self {
        Versions {
            chunks: Vec::new(),
            cells: (0..slots).map(|_| Vec::new()).collect(),
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

    /// Rows `from..to` were spawned at `stamp`: every component written and added.
    #[inline]
    pub(crate) fn spawn_rows(&mut self, from: usize, to: usize, stamp: u64) {
        if from >= to {
            return;
        }
        let (first, last) = (chunk(from), chunk(to - 1));
        self.chunk_mut(last);
        self.chunks[first..=last].fill(ChunkRecords {
            row: stamp,
            added: tick(stamp),
        });
    }

    /// Row `row` was spawned at `stamp`. (No stamp is older than a record: a load sets the
    /// clock back only to the saved clock, which no record passes.)
    #[inline]
    pub(crate) fn spawn_row(&mut self, row: usize, stamp: u64) {
        *self.chunk_mut(chunk(row)) = ChunkRecords {
            row: stamp,
            added: tick(stamp),
        };
    }

    /// Row `row` was written structurally at `stamp` and holds adds up to `added` (clock
    /// bits): a move brought the row in, and `added` is [`Versions::added_at`] of the row's
    /// chunk where it was. Stamps only grow, so only the add compares. (A row that gained a
    /// component is a spawn here: [`Versions::spawn_row`].)
    #[inline(always)]
    pub(crate) fn enter_row(&mut self, row: usize, stamp: u64, added: u64) {
        let r = self.chunk_mut(chunk(row));
        r.row = stamp;
        r.added = r.added.max(added);
    }

    /// The value of slot `slot` in row `row` was written in place at `stamp`.
    #[inline]
    pub(crate) fn mark_cell(&mut self, slot: usize, row: usize, stamp: u64) {
        set(&mut self.cells[slot], chunk(row), stamp);
    }

    /// The add stamp of the chunk of `row`: what the row carries when it moves.
    #[inline(always)]
    pub(crate) fn added_at(&self, row: usize) -> u64 {
        self.chunk(chunk(row)).added
    }

    /// The row at `from` moved to `to` within the store (it fills a removed row): it takes its
    /// adds along, and `to` counts as written at `stamp`.
    #[inline(always)]
    pub(crate) fn move_within(&mut self, from: usize, to: usize, stamp: u64) {
        let carried = self.added_at(from);
        self.enter_row(to, stamp, carried);
    }

    /// The runs of rows (of a store of `len` rows) in chunks where any of `watched` (each
    /// with its pass stamp) changed or was added after `since`, in order, adjacent chunks
    /// merged.
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
        let (mut structural, mut added) = (false, false);
        for &(w, pass) in watched {
            if w.added {
                added = true;
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
        for c in 0..len.div_ceil(CHUNK) {
            let chunk = self.chunk(c);
            if (structural && tick(chunk.row) > since)
                || (added && chunk.added > since)
                || records.iter().any(|r| tick(at(r, c)) > since)
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
        self.chunk(c).added
    }

    /// Sets chunk `c`'s structural record.
    pub(crate) fn set_row_record(&mut self, c: usize, stamp: u64) {
        self.chunk_mut(c).row = stamp;
    }

    /// Sets slot `slot`'s in-place record of chunk `c`.
    pub(crate) fn set_cell_record(&mut self, slot: usize, c: usize, stamp: u64) {
        set(&mut self.cells[slot], c, stamp);
    }

    /// Sets chunk `c`'s add record (clock bits are kept alone).
    pub(crate) fn set_add_record(&mut self, c: usize, stamp: u64) {
        self.chunk_mut(c).added = tick(stamp);
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

    #[test]
    fn runs_cover_exactly_the_changed_chunks() {
        let mut v = Versions::new(2);
        let mut passes = [0u64; 2];
        let len = 5 * CHUNK + 10;
        v.spawn_rows(0, len, 1); // spawned at 1
        assert_eq!(runs(&v, &passes, &[changed(0)], len, 0), [0..len]);
        assert!(runs(&v, &passes, &[changed(0)], len, 1).is_empty());
        v.mark_cell(1, 2 * CHUNK + 3, 5); // one value of slot 1 in chunk 2
        v.enter_row(4 * CHUNK, 6, 0); // a row of chunk 4
        v.enter_row(5 * CHUNK + 9, 6, 0); // and of chunk 5, the last and partial one
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
    fn adds_are_spawns_and_gains_and_move_with_their_rows() {
        let mut v = Versions::new(2);
        let mut passes = [0u64; 2];
        let len = 4 * CHUNK;
        v.spawn_rows(0, len, 1);
        assert_eq!(
            runs(&v, &passes, &[added(0)], len, 0),
            [0..len],
            "spawned: added"
        );
        assert!(runs(&v, &passes, &[added(0)], len, 1).is_empty());
        v.mark_cell(0, 5, 2);
        v.enter_row(CHUNK, 2, 0);
        passes[1] = 2;
        assert!(
            runs(&v, &passes, &[added(0), added(1)], len, 1).is_empty(),
            "writes"
        );
        // A row that gained a component comes into chunk 3.
        v.enter_row(3 * CHUNK + 1, 3, 3);
        assert_eq!(runs(&v, &passes, &[added(1)], len, 2), [3 * CHUNK..len]);
        assert_eq!(
            runs(&v, &passes, &[added(0)], len, 2),
            [3 * CHUNK..len],
            "an add counts for every component of its chunk (bounded)"
        );
        // It moves into chunk 0 (it fills a removed row): its add goes with it.
        v.move_within(3 * CHUNK + 1, 2, 4);
        assert_eq!(
            runs(&v, &passes, &[added(1)], len, 2),
            [0..CHUNK, 3 * CHUNK..len],
            "the chunk it left keeps its stamp (a false positive, bounded)"
        );
        assert_eq!(
            runs(&v, &passes, &[changed(0)], len, 3),
            [0..CHUNK],
            "the row it fills is written"
        );
        // A row brought in from a chunk of older adds adds nothing.
        v.enter_row(CHUNK + 3, 5, 1);
        assert_eq!(
            runs(&v, &passes, &[added(0)], len, 2),
            [0..CHUNK, 3 * CHUNK..len]
        );
        assert_eq!(v.added_at(CHUNK + 3), 1);
        // Within one chunk a move changes no add.
        v.move_within(CHUNK + 7, CHUNK + 8, 7);
        assert!(runs(&v, &passes, &[added(0)], len, 4).is_empty());
        // A spawn in a chunk past the records.
        v.enter_row(len, 8, 8);
        assert_eq!(runs(&v, &passes, &[added(0)], len + 1, 7), [len..len + 1]);
    }

    #[test]
    fn filters_compare_clock_bits_and_add_records_keep_no_epoch() {
        let epoch = 3 << TICK_BITS;
        let mut v = Versions::new(1);
        let mut passes = [0u64; 1];
        v.spawn_rows(0, 2 * CHUNK, epoch | 5);
        assert_eq!(v.add_record(1), 5, "clock bits only");
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
        v.set_add_record(0, epoch | 9);
        assert_eq!(v.add_record(0), 9);
        v.truncate_chunks(1);
        assert_eq!((v.add_record(1), v.row_record(1)), (0, 0));
    }

    #[test]
    fn a_watch_is_one_number() {
        assert_eq!(Watch::from_number(6), changed(3));
        assert_eq!(Watch::from_number(7), added(3));
        assert_eq!(Watch::from_number(0), changed(0));
    }
}
