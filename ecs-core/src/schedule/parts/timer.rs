//! The timer: measures a run of a pass for its [`PassCost`], and an inline run's parts in
//! stretches, so that a split run can cut by work.

use super::cost::{ps_per_row, PassCost, Weights};

/// Stretches of consecutive parts a timed inline run times apart: few enough that reading the
/// clock (about 33 ns here) stays a small share of a pass worth timing (at least `2 ×
/// min_chunk` rows), enough to tell a fused stage's cheap stores from its expensive ones.
pub(super) const SEGMENTS: usize = 16;

/// Measures a run for its [`PassCost`] (on drop); an inline run's parts too, when they are
/// handed to [`Timer::part_done`].
pub struct Timer<'c> {
    cost: &'c mut PassCost,
    rows: usize,
    /// `Some(threads)` for a split run.
    split: Option<usize>,
    pub(super) start: std::time::Instant,
    /// Are this inline run's parts timed ([`PassCost::weighs_parts`])?
    weighs_parts: bool,
    /// The parts timed so far: their count, the stretch being timed, and each part's
    /// picoseconds per row in this run (the cost's spare vector, reused).
    pub(super) parts: usize,
    stretch: Stretch,
    pub(super) this_run: Vec<u64>,
}

/// The consecutive parts a timed run has not yet read the clock after.
#[derive(Clone, Copy)]
pub(super) struct Stretch {
    first: usize,
    rows: usize,
    start: std::time::Instant,
}

impl<'c> Timer<'c> {
    /// Times a run of `rows` rows: split across `split` threads, or inline, when its parts
    /// are timed too if `weighs_parts`.
    pub(super) fn start(
        cost: &'c mut PassCost,
        rows: usize,
        split: Option<usize>,
        weighs_parts: bool,
    ) -> Self {
        let mut this_run = std::mem::take(&mut cost.spare);
        this_run.clear();
        let start = std::time::Instant::now();
        Timer {
            cost,
            rows,
            split,
            start,
            weighs_parts: weighs_parts && split.is_none(),
            parts: 0,
            stretch: Stretch {
                first: 0,
                rows: 0,
                start,
            },
            this_run,
        }
    }

    /// The weights of the pass's parts for a split run's cut ([`PassCost`]'s, from its timed
    /// inline runs).
    pub fn weights(&self) -> Weights<'_> {
        Weights(&self.cost.part_ps)
    }

    /// An inline run finished a part of `rows` rows: once the stretch of parts since the clock
    /// was last read holds a `SEGMENTS`th of the pass's rows, each of its parts is given the
    /// stretch's time per row. Does nothing when the run's parts are not timed.
    #[inline]
    pub fn part_done(&mut self, rows: usize) {
        if self.weighs_parts {
            self.part_done_at(rows, std::time::Instant::now);
        }
    }

    /// [`Timer::part_done`], reading the clock `now` only when the stretch closes.
    #[inline]
    pub(super) fn part_done_at(&mut self, rows: usize, now: impl FnOnce() -> std::time::Instant) {
        self.parts += 1;
        self.stretch.rows = self.stretch.rows.saturating_add(rows);
        if self.stretch.rows.saturating_mul(SEGMENTS) >= self.rows {
            self.close_stretch(now());
        }
    }

    /// Gives the parts of the current stretch its time per row, and starts the next at `now`.
    fn close_stretch(&mut self, now: std::time::Instant) {
        let Stretch { first, rows, start } = self.stretch;
        if self.parts > first {
            let ps = ps_per_row(now.duration_since(start), rows);
            self.this_run.resize(self.parts, ps);
            self.this_run[first..].fill(ps);
        }
        self.stretch = Stretch {
            first: self.parts,
            rows: 0,
            start: now,
        };
    }
}

impl Drop for Timer<'_> {
    fn drop(&mut self) {
        let now = std::time::Instant::now();
        let elapsed = now.duration_since(self.start);
        match self.split {
            None if self.weighs_parts => {
                self.close_stretch(now);
                self.cost.record_inline(elapsed, self.rows);
                self.cost.record_parts(std::mem::take(&mut self.this_run));
            }
            // The weights of the last run that timed its parts stay.
            None => {
                self.cost.record_inline(elapsed, self.rows);
                self.cost.spare = std::mem::take(&mut self.this_run);
            }
            Some(threads) => {
                self.cost.record_split(elapsed, threads);
                self.cost.spare = std::mem::take(&mut self.this_run);
            }
        }
    }
}
