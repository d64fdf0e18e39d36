//! How a pass's rows are cut into work for rayon's pool.
//!
//! A pass (one system, or one stage of fused systems) visits several stores. The generated code
//! hands the runner one *part* per store — a tuple of typed column slices — and one body that
//! runs the systems over a part. The runner sums the rows of all parts: under `2 × min_chunk`
//! rows (or on a one-thread pool) every part runs inline, in store order; otherwise the parts
//! are cut and grouped into jobs of equal work, a multiple of the thread count, so many small
//! stores share the cores as well as one large store does. A fused stage's stores differ in
//! cost (one runs three systems per row, another one cheap system): a measured pass weighs each
//! part's rows by what they cost in its recent timed inline runs, so a job of expensive rows
//! holds fewer of them. A pass split because its measured work is
//! large ([`PassCost`]) gets up to `CHUNKS_PER_THREAD` jobs per thread of at least
//! `MIN_JOB_WORK_NS` each; a split forced by the world's `min_chunk` gets jobs of at least
//! `min_chunk` rows ([`job_rows`]). Jobs
//! run on rayon's pool; each has its own [`Commands`] buffer, and the buffers are applied in
//! job order, which is row order.
//!
//! The runner is instantiated once per pass (its part type), not once per (pass, store).

use super::commands::{Command, Commands};
use crate::entity::EntityManager;
use rayon::prelude::*;

/// Chunks handed out per thread, so uneven progress of threads still balances.
const CHUNKS_PER_THREAD: usize = 4;

/// A pass is split only when its measured work is at least this many nanoseconds: handing
/// work to rayon's threads costs a few µs, so light passes (the `schedule` workload swaps two
/// floats per row, 40,000 rows in about 10 µs) run faster inline, while passes like the bundled
/// `integrate` over 60 stores of 1,000 rows (about 100 µs) gain from two threads. Measured
/// with `cargo bench --bench parallel` (groups `schedule`, `many_stores`, `min_chunk`).
pub(crate) const SPLIT_WORK_NS: u64 = 20_000;

/// The least measured work of one job when a pass is split on its cost: a few times what a
/// hand-off to another thread costs.
pub(crate) const MIN_JOB_WORK_NS: u64 = 5_000;

/// How many recent inline measurements a pass keeps: its estimate is the cheapest of them, so
/// one slow run (a cold cache, another process on the core) cannot make it split.
const WINDOW: usize = 4;

/// A split pass is run inline (and measured) once in this many runs, to notice that its work
/// fell under `SPLIT_WORK_NS`.
pub(crate) const PROBE_EVERY: u32 = 64;

/// A timed inline run of a pass not worth splitting times its parts once in this many runs
/// ([`PassCost::weighs_parts`]).
const WEIGH_EVERY: u32 = 8;

/// What a pass learned about its own cost, in one world (a world keeps one per generated pass,
/// so two worlds of one model decide apart). Every inline run that could have split is timed;
/// the estimate (picoseconds per row) is the cheapest of the last `WINDOW` of them, and none
/// is made before two: the first run of a fresh world is cold (allocation, page faults, cold
/// caches: 20× the steady cost was measured) and must not decide alone. A pass splits when
/// its estimated work is at least `SPLIT_WORK_NS`; a split pass is timed too, and runs inline
/// again to measure itself when its split run was so short that the work may have fallen under
/// the threshold, and anyway once in `PROBE_EVERY` runs. A timed inline run also times its
/// parts (every run of a pass that is worth splitting or not measured yet, else once in
/// `WEIGH_EVERY` runs), in up to `SEGMENTS` stretches of consecutive parts, so that a split
/// run can cut its jobs by work rather than by rows. The decision changes how a pass runs,
/// never what it computes (jobs apply their commands in row order).
#[derive(Clone, Debug, Default)]
pub struct PassCost {
    /// Picoseconds per row of recent inline runs (a ring; 0: empty).
    samples: [u64; WINDOW],
    /// Inline runs measured so far (saturating).
    measured: u32,
    /// Split runs since the last inline measurement.
    since_probe: u32,
    /// The next run that could split measures itself inline instead.
    probe: bool,
    /// Timed inline runs since the last one that timed its parts.
    unweighed_runs: u32,
    /// Picoseconds per row of each part (in the order the pass hands them), the cheaper of
    /// the last two timed inline runs: the weights of a split run's cut ([`Weights`]). One
    /// stretch held up (an interrupt, another process) must not skew the cut until the next
    /// probe.
    part_ps: Vec<u64>,
    /// The last timed inline run's own measurements, and a buffer for the next one's.
    last_parts: Vec<u64>,
    spare: Vec<u64>,
}

/// Stretches of consecutive parts a timed inline run times apart: few enough that reading the
/// clock (about 33 ns here) stays a small share of a pass worth timing (at least `2 ×
/// min_chunk` rows), enough to tell a fused stage's cheap stores from its expensive ones.
const SEGMENTS: usize = 16;

impl PassCost {
    /// Not measured yet.
    pub const fn new() -> Self {
        PassCost {
            samples: [0; WINDOW],
            measured: 0,
            since_probe: 0,
            probe: false,
            unweighed_runs: 0,
            part_ps: Vec::new(),
            last_parts: Vec::new(),
            spare: Vec::new(),
        }
    }

    /// Records the parts' picoseconds per row of a timed inline run (`parts`, which becomes
    /// the spare buffer of a later one): each part's weight is the cheaper of this run's and
    /// the last one's, when both measured as many parts.
    fn record_parts(&mut self, parts: Vec<u64>) {
        self.part_ps.clear();
        if self.last_parts.len() == parts.len() {
            let cheaper = parts.iter().zip(&self.last_parts).map(|(a, b)| *a.min(b));
            self.part_ps.extend(cheaper);
        } else {
            self.part_ps.extend_from_slice(&parts);
        }
        self.spare = std::mem::replace(&mut self.last_parts, parts);
    }

    /// The estimated cost of a row in picoseconds, once two inline runs were measured.
    fn ps_per_row(&self) -> Option<u64> {
        let filled = (self.measured as usize).min(WINDOW);
        (self.measured >= 2).then(|| self.samples[..filled].iter().copied().min().unwrap_or(0))
    }

    /// Records an inline run of `rows` rows that took `elapsed`.
    pub fn record_inline(&mut self, elapsed: std::time::Duration, rows: usize) {
        self.samples[self.measured as usize % WINDOW] = ps_per_row(elapsed, rows);
        self.measured = self.measured.saturating_add(1);
        self.since_probe = 0;
        self.probe = false;
    }

    /// Records a run split across `threads` threads that took `elapsed`: if even all of its
    /// threads' time together was under `SPLIT_WORK_NS`, the work may no longer be worth
    /// splitting, and the next run measures it inline.
    pub fn record_split(&mut self, elapsed: std::time::Duration, threads: usize) {
        self.since_probe = self.since_probe.saturating_add(1);
        if elapsed.as_nanos() * threads as u128 <= SPLIT_WORK_NS as u128 {
            self.probe = true;
        }
    }

    /// Rows per job for a pass of `rows` rows worth splitting (see [`PassCost::worth_splitting`])
    /// on `threads` threads: `CHUNKS_PER_THREAD` equal jobs per thread, or fewer (a multiple of
    /// `threads`, at least `threads`) so that each job holds at least `MIN_JOB_WORK_NS` of
    /// measured work. Sized by work rather than by `min_chunk`: while one thread wakes up or
    /// is held up by another process, the others take the remaining jobs, which two large jobs
    /// cannot do (`many_stores`: 60,000 light rows were 2 jobs of 30,000).
    fn job_rows(&self, rows: usize, threads: usize) -> usize {
        let threads = threads.max(1);
        let work_ns = (rows as u128) * (self.ps_per_row().unwrap_or(0) as u128) / 1000;
        let by_work = (work_ns / MIN_JOB_WORK_NS as u128).min(usize::MAX as u128) as usize;
        let per_thread = (by_work / threads).clamp(1, CHUNKS_PER_THREAD);
        rows.div_ceil(threads.saturating_mul(per_thread)).max(1)
    }

    /// Is `rows` rows of this pass enough work to split? Not before two inline runs were
    /// measured.
    fn worth_splitting(&self, rows: usize) -> bool {
        self.ps_per_row()
            .is_some_and(|ps| (rows as u128) * (ps as u128) >= SPLIT_WORK_NS as u128 * 1000)
    }

    /// Does the next timed inline run, over `rows` rows, also time its parts? Only splits
    /// need weights, so only a pass not measured yet, or worth splitting on a pool where it
    /// `may_split` (a probe), times its parts every run; another does once in `WEIGH_EVERY`
    /// runs, which keeps its weights recent for when it grows, while a light pass (the
    /// `schedule` workload's, 8 µs) does not spend 3% of every run on the parts' clock reads.
    fn weighs_parts(&mut self, rows: usize, may_split: bool) -> bool {
        let weighs = self.measured < 2
            || (may_split && self.worth_splitting(rows))
            || self.unweighed_runs + 1 >= WEIGH_EVERY;
        self.unweighed_runs = if weighs { 0 } else { self.unweighed_runs + 1 };
        weighs
    }

    /// Should the next run that would split measure itself inline instead?
    fn probing(&self) -> bool {
        self.probe || self.since_probe >= PROBE_EVERY
    }
}

/// Rows of a part of a pass: a column slice, or a tuple of slices of one length, that can be
/// cut in two.
pub trait SplitRows: Sized + Send {
    /// Number of rows.
    fn len(&self) -> usize;
    /// True when there are no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Rows `..mid` and `mid..`.
    fn split_at(self, mid: usize) -> (Self, Self);
}

impl<T: Send> SplitRows for &mut [T] {
    #[inline]
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        self.split_at_mut(mid)
    }
}

impl<T: Sync> SplitRows for &[T] {
    #[inline]
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        <[T]>::split_at(self, mid)
    }
}

/// A column that a store may lack (an `Option<&C>` parameter over a dynamic store): no rows
/// of its own (a part's length is its first column's), cut like the others when present.
impl<S: SplitRows> SplitRows for Option<S> {
    #[inline]
    fn len(&self) -> usize {
        self.as_ref().map_or(0, S::len)
    }
    #[inline]
    fn split_at(self, mid: usize) -> (Self, Self) {
        match self {
            Some(s) => {
                let (a, b) = s.split_at(mid);
                (Some(a), Some(b))
            }
            None => (None, None),
        }
    }
}

macro_rules! tuple_split {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: SplitRows),+> SplitRows for ($($name,)+) {
            #[inline]
            fn len(&self) -> usize {
                self.0.len()
            }
            #[inline]
            fn split_at(self, mid: usize) -> (Self, Self) {
                $( let $name = self.$idx.split_at(mid); )+
                (($($name.0,)+), ($($name.1,)+))
            }
        }
    };
}

#[allow(non_snake_case)]
mod tuples {
    use super::SplitRows;
    tuple_split!(A 0);
    tuple_split!(A 0, B 1);
    tuple_split!(A 0, B 1, C 2);
    tuple_split!(A 0, B 1, C 2, D 3);
    tuple_split!(A 0, B 1, C 2, D 3, E 4);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
    tuple_split!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
}

/// Rows per job for a pass over `total` rows on `threads` threads, or `None` when the pass
/// runs inline: fewer than `2 × min_chunk` rows (saturating: `usize::MAX` means never split),
/// or one thread. `min_chunk` 0 acts as 1.
///
/// Jobs are equal and never under `min_chunk` rows; when there are enough rows, their number
/// is a multiple of `threads` (up to `CHUNKS_PER_THREAD` each), so every thread gets the same
/// share: 60,000 rows with a `min_chunk` of 16,384 on 2 threads are 2 jobs of 30,000, not
/// 16,384 + 16,384 + 16,384 + 10,848 (which leaves one thread a third more work).
#[inline]
pub fn job_rows(total: usize, min_chunk: usize, threads: usize) -> Option<usize> {
    let min_chunk = min_chunk.max(1);
    // `total / 2 < min_chunk` is `total < 2 × min_chunk` without overflow.
    if total / 2 < min_chunk || threads <= 1 {
        return None;
    }
    // At least 2: every job has at least `min_chunk` rows.
    let max_jobs = total / min_chunk;
    let jobs = if max_jobs >= threads {
        threads.saturating_mul(CHUNKS_PER_THREAD.min(max_jobs / threads))
    } else {
        max_jobs
    };
    Some(total.div_ceil(jobs))
}

/// Rows per chunk for a single store of `len` rows on the current pool: `len` itself (one
/// chunk, inline) when the pass is too small to split or the pool has one thread.
#[cfg(test)]
fn chunk_len(len: usize, min_chunk: usize) -> usize {
    // The size test first: asking rayon for its thread count is not free (and starts its
    // global pool), and most stores are too small to split anyway.
    if len / 2 < min_chunk.max(1) {
        return len.max(1);
    }
    job_rows(len, min_chunk, rayon::current_num_threads()).unwrap_or(len.max(1))
}

/// Requested changes of a pass, in row order, for the world to apply.
#[doc(hidden)]
#[must_use]
pub struct Pending(pub(crate) Vec<Vec<Command>>);

impl Pending {
    /// The changes of one buffer; no allocation when there are none (most passes).
    #[inline]
    pub(crate) fn of(commands: Commands<'_>) -> Pending {
        let ops = commands.into_ops();
        Pending(if ops.is_empty() {
            Vec::new()
        } else {
            vec![ops]
        })
    }

    /// True when nothing was requested.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.iter().all(Vec::is_empty)
    }
}

/// Cuts `parts` into jobs of about `rows` rows each, in order.
#[cfg(test)]
fn jobs<P: SplitRows>(parts: impl IntoIterator<Item = P>, rows: usize) -> Vec<Vec<P>> {
    weighted_jobs(parts, rows, Weights::ROWS)
}

/// Cuts `parts` into jobs of about `rows` rows' worth of work each (rows weighed by
/// `weights`), in order.
#[cfg(test)]
fn weighted_jobs<P: SplitRows>(
    parts: impl IntoIterator<Item = P>,
    rows: usize,
    weights: Weights<'_>,
) -> Vec<Vec<P>> {
    let mut pieces = Vec::new();
    let ends = cut(parts.into_iter().collect(), rows, weights, &mut pieces).ends;
    let mut rest = pieces.into_iter();
    let mut start = 0;
    ends.iter()
        .map(|&end| {
            let job = rest.by_ref().take(end - start).collect();
            start = end;
            job
        })
        .collect()
}

/// Cuts `parts` (a pass's parts in order) into jobs of `job_rows` rows' worth of work each,
/// a row of part `i` weighing `weights`' `i`th: the pieces go to `pieces`, and the returned
/// ranges say where each job ends in it.
fn cut<P: SplitRows>(
    parts: Vec<P>,
    job_rows: usize,
    weights: Weights<'_>,
    pieces: &mut Vec<P>,
) -> JobRanges {
    let weight = weights.of(parts.len());
    let rows: usize = parts.iter().map(P::len).sum();
    let work = parts.iter().enumerate().fold(0u128, |work, (i, p)| {
        work.saturating_add(p.len() as u128 * weight(i) as u128)
    });
    // The share of the work `job_rows` of `rows` rows are: with even weights, `job_rows` rows.
    let job_work = work
        .saturating_mul(job_rows.max(1) as u128)
        .div_ceil(rows.max(1) as u128);
    let mut cut = Cut::new(job_work);
    for (i, part) in parts.into_iter().enumerate() {
        cut.push(pieces, part, weight(i));
    }
    cut.finish(pieces.len())
}

/// Parts cut into jobs of about `work` each, in order, as they come: the pieces go to one
/// list, and the cut keeps where each job ends in it. Only [`Cut::push`] depends on the part
/// type, so a pass compiles little of the splitting.
struct Cut {
    /// The work of one job (a row weighs its part's weight).
    work: u128,
    /// Work the current job still has room for.
    room: u128,
    /// The end of each finished job in the list of pieces.
    ends: Vec<usize>,
}

impl Cut {
    fn new(work: u128) -> Self {
        let work = work.max(1);
        Cut {
            work,
            room: work,
            ends: Vec::new(),
        }
    }

    /// Adds `part`, whose rows weigh `weight` each, to the jobs, cut where a job is full
    /// (a job takes at least one row); empty pieces are left out.
    fn push<P: SplitRows>(&mut self, pieces: &mut Vec<P>, mut part: P, weight: u64) {
        let weight = u128::from(weight.max(1));
        while !part.is_empty() {
            let work = part.len() as u128 * weight;
            if work < self.room {
                self.room -= work;
                pieces.push(part);
                return;
            }
            // The rows nearest to filling the job: at least one, at most the part.
            let rows = ((self.room + weight / 2) / weight).clamp(1, part.len() as u128) as usize;
            let (head, tail) = part.split_at(rows);
            pieces.push(head);
            self.ends.push(pieces.len());
            self.room = self.work;
            part = tail;
        }
    }

    /// The jobs of a list of `pieces` pieces.
    fn finish(mut self, pieces: usize) -> JobRanges {
        if self.ends.last().copied().unwrap_or(0) < pieces {
            self.ends.push(pieces);
        }
        JobRanges::new(self.ends, pieces)
    }
}

/// Where each job's pieces are in the list of a split pass's pieces, and whether the job was
/// taken: each job's range is claimed once.
struct JobRanges {
    /// The end of each job, ascending.
    ends: Vec<usize>,
    taken: Vec<std::sync::atomic::AtomicBool>,
}

impl JobRanges {
    /// Jobs ending at `ends` in a list of `pieces` pieces.
    ///
    /// # Panics
    /// When `ends` descend or pass `pieces`.
    fn new(ends: Vec<usize>, pieces: usize) -> Self {
        assert!(
            ends.windows(2).all(|w| w[0] <= w[1]) && ends.last().is_none_or(|&e| e <= pieces),
            "job ends ascend within the pieces"
        );
        let taken = ends.iter().map(|_| Default::default()).collect();
        JobRanges { ends, taken }
    }

    /// How many jobs there are.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Do the jobs end within a list of `pieces` pieces?
    fn within(&self, pieces: usize) -> bool {
        self.ends.last().is_none_or(|&e| e <= pieces)
    }

    /// The range of job `j` the first time it is asked for; `None` after that, or when there
    /// is no job `j`. Ranges are disjoint and within the list the jobs were made for.
    fn claim(&self, j: usize) -> Option<std::ops::Range<usize>> {
        let end = *self.ends.get(j)?;
        if self.taken[j].swap(true, std::sync::atomic::Ordering::AcqRel) {
            return None;
        }
        let start = if j == 0 { 0 } else { self.ends[j - 1] };
        Some(start..end)
    }
}

/// The pieces of a split pass, each moved out once, by the job that holds it. One list and
/// job ranges rather than a list per job: a pass instantiates no lock, vector of vectors or
/// iterator over its part type (at 512 systems those were a fifth of the crate's code).
struct Pieces<P> {
    /// Owns the buffer with its length set to 0: the pieces belong to the jobs, and dropping
    /// the vector frees the buffer without dropping any (a piece a panic left untaken leaks).
    buffer: Vec<P>,
    jobs: JobRanges,
}

// SAFETY: a shared `Pieces` only hands out pieces by value, each once (see `Pieces::take`), so
// sharing it between threads moves pieces between threads, which `P: Send` allows.
unsafe impl<P: Send> Sync for Pieces<P> {}

impl<P> Pieces<P> {
    /// The pieces of `buffer`, in `jobs` (made for a list of `buffer.len()` pieces).
    ///
    /// # Panics
    /// When `jobs` were made for a longer list.
    fn new(mut buffer: Vec<P>, jobs: JobRanges) -> Self {
        assert!(jobs.within(buffer.len()), "jobs within the pieces");
        // SAFETY: shortening a vector only forgets its elements; they stay initialized in the
        // buffer, and `take` moves each out once.
        unsafe { buffer.set_len(0) };
        Pieces { buffer, jobs }
    }

    /// Hands `f` the pieces of job `j` in order, moved out; nothing for a job already taken
    /// or out of range.
    fn take(&self, j: usize, f: &mut impl FnMut(P)) {
        let Some(range) = self.jobs.claim(j) else {
            return;
        };
        let base = self.buffer.as_ptr();
        for i in range {
            // SAFETY: job ranges end within the pieces `buffer` held (checked in `new`), so
            // `base + i` is an initialized piece in the buffer, which lives as long as `self`.
            // Ranges are disjoint and each is claimed once, so no piece is read twice:
            // reading it moves it out.
            f(unsafe { base.add(i).read() });
        }
    }
}

/// How a pass over `rows` rows runs: inline (timed when it could have split, see
/// [`PassCost`]), or split into jobs of about this many rows (timed too).
pub enum Plan<'c> {
    /// On the calling thread; the timer (if any) records the pass's cost when dropped.
    Inline(Option<Timer<'c>>),
    /// On rayon's pool, in jobs of about this many rows; the timer records the split run.
    Split(usize, Option<Timer<'c>>),
}

/// Measures a run for its [`PassCost`] (on drop); an inline run's parts too, when they are
/// handed to [`Timer::part_done`].
pub struct Timer<'c> {
    cost: &'c mut PassCost,
    rows: usize,
    /// `Some(threads)` for a split run.
    split: Option<usize>,
    start: std::time::Instant,
    /// Are this inline run's parts timed ([`PassCost::weighs_parts`])?
    weighs_parts: bool,
    /// The parts timed so far: their count, the stretch being timed, and each part's
    /// picoseconds per row in this run (the cost's spare vector, reused).
    parts: usize,
    stretch: Stretch,
    this_run: Vec<u64>,
}

/// The consecutive parts a timed run has not yet read the clock after.
#[derive(Clone, Copy)]
struct Stretch {
    first: usize,
    rows: usize,
    start: std::time::Instant,
}

impl<'c> Timer<'c> {
    /// Times a run of `rows` rows: split across `split` threads, or inline, when its parts
    /// are timed too if `weighs_parts`.
    fn start(
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
    fn part_done_at(&mut self, rows: usize, now: impl FnOnce() -> std::time::Instant) {
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

/// Picoseconds per row of a run of `rows` rows that took `elapsed`: at least 1, so that every
/// row weighs something.
fn ps_per_row(elapsed: std::time::Duration, rows: usize) -> u64 {
    (elapsed.as_nanos() * 1000 / rows.max(1) as u128).clamp(1, u64::MAX as u128) as u64
}

/// What each part's rows weigh in a split run's cut: its picoseconds per row as its
/// [`PassCost`] measured them. Weights measured over another number of parts than the run has (a dynamic store
/// came or went, or a change-filtered pass's runs of changed rows differ) are not used, and
/// every row weighs the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Weights<'a>(&'a [u64]);

impl<'a> Weights<'a> {
    /// Every row weighs the same.
    pub const ROWS: Weights<'static> = Weights(&[]);

    /// The weights for a run of `parts` parts: each part's, or all 1.
    fn of(self, parts: usize) -> impl Fn(usize) -> u64 + Copy + 'a {
        let known = self.0.len() == parts;
        move |i| if known { self.0[i].max(1) } else { 1 }
    }
}

/// The plan of a pass over `rows` rows (the rule of [`run_parts`]).
#[inline]
pub fn plan(
    rows: usize,
    world_min_chunk: Option<usize>,
    min_chunk: usize,
    cost: &mut PassCost,
) -> Plan<'_> {
    let forced = world_min_chunk.is_some();
    let min_chunk = world_min_chunk.unwrap_or(min_chunk);
    if rows / 2 < min_chunk.max(1) {
        return Plan::Inline(None);
    }
    let threads = rayon::current_num_threads();
    let by_size = job_rows(rows, min_chunk, threads);
    match by_size {
        Some(job) if forced => Plan::Split(job, None),
        Some(_) if cost.worth_splitting(rows) && !cost.probing() => {
            let job = cost.job_rows(rows, threads);
            Plan::Split(job, Some(Timer::start(cost, rows, Some(threads), false)))
        }
        _ => {
            let weighs_parts = cost.weighs_parts(rows, by_size.is_some());
            Plan::Inline(Some(Timer::start(cost, rows, None, weighs_parts)))
        }
    }
}

/// The parts of one pass, one per store it visits. A generated pass implements it for its
/// stores with one line per store (take the store's columns as its shape's variant), so the
/// list of stores is written once, whether the parts then run inline or in jobs; arrays of
/// parts implement it too.
pub trait Parts {
    /// One store's typed column slices.
    type Part: SplitRows;
    /// Rows of all parts together, counted before any part is made.
    fn rows(&self) -> usize;
    /// Makes each part, in store order, and hands it to `f`.
    fn each(self, f: &mut impl FnMut(Self::Part));
}

impl<P: SplitRows, const N: usize> Parts for [P; N] {
    type Part = P;
    fn rows(&self) -> usize {
        self.iter().map(P::len).sum()
    }
    fn each(self, f: &mut impl FnMut(P)) {
        for part in self {
            f(part);
        }
    }
}

/// Runs `body` over the parts in jobs of about `job_rows` rows' worth of work on rayon's pool,
/// the rows of each part weighed by `weights` ([`Weights::ROWS`]: by rows alone). Returns the
/// commands requested, in row order.
pub fn run_jobs<S: Parts, F: Fn(S::Part, &mut Commands<'_>) + Sync>(
    parts: S,
    job_rows: usize,
    weights: Weights<'_>,
    entities: &EntityManager,
    body: &F,
) -> Pending {
    let mut all = Vec::new();
    parts.each(&mut |part| all.push(part));
    let mut pieces = Vec::with_capacity(all.len());
    let jobs = cut(all, job_rows, weights, &mut pieces);
    let n = jobs.len();
    let pieces = Pieces::new(pieces, jobs);
    let run = |j: usize, commands: &mut Commands<'_>| {
        pieces.take(j, &mut |part| body(part, commands));
    };
    run_indexed(n, entities, &run)
}

/// Runs jobs `0..n` on rayon's pool, each with its own [`Commands`] buffer; returns the
/// buffers in job order. Not generic: rayon's parallel iterator is compiled once for every
/// pass of every world, rather than once per pass (at 512 systems that was hundreds of
/// instantiations of its splitting and collecting code, a large part of the build).
#[inline(never)]
fn run_indexed(
    n: usize,
    entities: &EntityManager,
    run: &(dyn Fn(usize, &mut Commands<'_>) + Sync),
) -> Pending {
    Pending(
        (0..n)
            .into_par_iter()
            .map(|j| {
                let mut commands = Commands::new(entities);
                run(j, &mut commands);
                commands.into_ops()
            })
            .collect(),
    )
}

/// Runs `body` over every part: inline for a small pass, else in jobs on rayon's pool (see the
/// module docs). Returns the commands requested, in row order. Every generated pass whose
/// systems write no resource runs through here.
///
/// `world_min_chunk` is the world's override ([`crate::World::set_min_chunk`]): when set, the
/// pass splits whenever it has at least twice that many rows, whatever its measured cost (so
/// tests and users can force parallel runs); otherwise `min_chunk` (the systems' own or the
/// default) applies and the pass must also have measured enough work (`SPLIT_WORK_NS`),
/// which `cost` (the world's record of this pass) keeps measuring.
#[inline]
pub fn run_parts<S: Parts, F: Fn(S::Part, &mut Commands<'_>) + Sync>(
    parts: S,
    world_min_chunk: Option<usize>,
    min_chunk: usize,
    cost: &mut PassCost,
    entities: &EntityManager,
    body: &F,
) -> Pending {
    match plan(parts.rows(), world_min_chunk, min_chunk, cost) {
        // Small: untimed.
        Plan::Inline(None) => run_parts_inline(parts, entities, &mut |p, c| body(p, c)),
        // Not worth splitting: timed, part by part (the timer records on drop).
        Plan::Inline(Some(mut timer)) => {
            let pending = run_inline(parts, entities, &mut |p, c| body(p, c), |rows| {
                timer.part_done(rows)
            });
            drop(timer);
            pending
        }
        Plan::Split(rows, timer) => {
            let weights = timer.as_ref().map_or(Weights::ROWS, Timer::weights);
            let pending = run_jobs(parts, rows, weights, entities, body);
            drop(timer);
            pending
        }
    }
}

/// Runs `body` over every part on the calling thread, in store order: the pass of a system
/// that writes a resource, and every pass too small to split.
#[inline]
pub fn run_parts_inline<S: Parts, F: FnMut(S::Part, &mut Commands<'_>)>(
    parts: S,
    entities: &EntityManager,
    body: &mut F,
) -> Pending {
    run_inline(parts, entities, body, |_| {})
}

/// [`run_parts_inline`], calling `part_done` with each part's rows after it (empty parts too,
/// so a timer counts every part).
#[inline]
fn run_inline<S: Parts, F: FnMut(S::Part, &mut Commands<'_>)>(
    parts: S,
    entities: &EntityManager,
    body: &mut F,
    mut part_done: impl FnMut(usize),
) -> Pending {
    let mut commands = Commands::new(entities);
    parts.each(&mut |part| {
        let rows = part.len();
        if rows > 0 {
            body(part, &mut commands);
        }
        part_done(rows);
        #[cfg(feature = "record")]
        super::record::part_done(rows);
    });
    Pending::of(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_rows_follow_the_size_rule() {
        assert_eq!(job_rows(100, 64, 2), None, "under 2 × min_chunk: inline");
        assert_eq!(job_rows(1_000_000, 1, 1), None, "one thread: inline");
        assert_eq!(job_rows(100_000, 1000, 2), Some(100_000usize.div_ceil(8)));
        assert_eq!(
            job_rows(10_000, 4000, 2),
            Some(5000),
            "one equal job per thread, never below min_chunk"
        );
        assert_eq!(
            job_rows(60_000, 16_384, 2),
            Some(30_000),
            "balanced: a multiple of the thread count"
        );
        assert_eq!(
            job_rows(40_000, 16_384, 8),
            Some(20_000),
            "fewer jobs than threads rather than jobs under min_chunk"
        );
        for (total, min_chunk, threads) in [(100_000, 7, 3), (50_000, 16_384, 2), (999, 10, 4)] {
            let rows = job_rows(total, min_chunk, threads).unwrap();
            assert!(rows >= min_chunk, "{total} {min_chunk} {threads}: {rows}");
        }
        assert_eq!(job_rows(10, 0, 2), Some(2), "min_chunk 0 acts as 1");
        assert_eq!(
            job_rows(usize::MAX, usize::MAX, 2),
            None,
            "usize::MAX never splits"
        );
        assert_eq!(job_rows(usize::MAX - 1, usize::MAX / 2 + 1, 2), None);
        assert!(
            job_rows(usize::MAX - 1, usize::MAX / 2, 2).is_some(),
            "exactly 2 × min_chunk splits"
        );
    }

    #[test]
    fn chunk_len_never_overflows() {
        assert_eq!(chunk_len(10, usize::MAX), 10);
        assert_eq!(chunk_len(0, usize::MAX), 1);
    }

    #[test]
    fn passes_split_only_when_their_measured_work_is_large() {
        let mut cost = PassCost::new();
        assert!(
            !cost.worth_splitting(1_000_000),
            "unknown cost: run inline and measure"
        );
        cost.record_inline(std::time::Duration::from_micros(10), 40_000);
        assert_eq!(cost.ps_per_row(), None, "one measurement does not decide");
        assert!(!cost.worth_splitting(1_000_000));
        cost.record_inline(std::time::Duration::from_micros(11), 40_000);
        assert_eq!(cost.ps_per_row(), Some(250), "the cheaper of the two");
        assert!(!cost.worth_splitting(40_000), "10 µs of work: inline");
        assert!(cost.worth_splitting(80_000), "20 µs: split");
        cost.record_inline(std::time::Duration::ZERO, 0);
        assert_eq!(cost.ps_per_row(), Some(1), "never back to unknown");
    }

    #[test]
    fn jobs_cut_and_group_parts_in_order() {
        let mut a: Vec<u32> = (0..10).collect();
        let mut b: Vec<u32> = (10..13).collect();
        let mut c: Vec<u32> = (13..30).collect();
        let parts = [&mut a[..], &mut b[..], &mut c[..]];
        let js = jobs(parts, 8);
        let flat: Vec<Vec<u32>> = js
            .iter()
            .map(|j| j.iter().flat_map(|p| p.iter().copied()).collect())
            .collect();
        assert_eq!(flat.len(), 4);
        assert_eq!(flat[0], (0..8).collect::<Vec<_>>());
        assert_eq!(
            flat[1],
            (8..16).collect::<Vec<_>>(),
            "small parts group together"
        );
        assert_eq!(flat[3], (24..30).collect::<Vec<_>>());
    }

    #[test]
    fn pieces_are_handed_out_once_by_job() {
        let words: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let pieces = Pieces::new(words, JobRanges::new(vec![2, 2, 5], 5));
        assert_eq!(pieces.jobs.len(), 3);
        let mut got = Vec::new();
        pieces.take(2, &mut |w| got.push(w));
        assert_eq!(got, ["c", "d", "e"]);
        pieces.take(2, &mut |w| got.push(w));
        assert_eq!(got.len(), 3, "a job is taken once");
        pieces.take(1, &mut |w| got.push(w));
        assert_eq!(got.len(), 3, "an empty job holds nothing");
        pieces.take(9, &mut |w| got.push(w));
        assert_eq!(got.len(), 3, "no job 9");
        pieces.take(0, &mut |w| got.push(w));
        assert_eq!(got, ["c", "d", "e", "a", "b"]);
        // Dropping `pieces` frees the buffer and drops no piece again (Miri checks both).
    }

    #[test]
    fn pieces_left_untaken_are_leaked_not_dropped_twice() {
        let words = vec![String::from("x"), String::from("y")];
        let pieces = Pieces::new(words, JobRanges::new(vec![1, 2], 2));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pieces.take(0, &mut |_| panic!("a body panics"));
        }));
        assert!(result.is_err());
        let mut rest = Vec::new();
        pieces.take(0, &mut |w| rest.push(w));
        pieces.take(1, &mut |w| rest.push(w));
        assert_eq!(rest, ["y"], "the panicking job is not run again");
    }

    #[test]
    #[should_panic(expected = "job ends ascend within the pieces")]
    fn pieces_refuse_job_ends_past_the_buffer() {
        let _ = JobRanges::new(vec![1, 3], 2);
    }

    #[test]
    #[should_panic(expected = "jobs within the pieces")]
    fn pieces_refuse_jobs_made_for_more_pieces() {
        let _ = Pieces::new(vec![1u8, 2], JobRanges::new(vec![3], 3));
    }

    #[test]
    #[should_panic(expected = "job ends ascend within the pieces")]
    fn pieces_refuse_descending_job_ends() {
        let _ = JobRanges::new(vec![2, 1], 2);
    }

    /// A cost with two inline runs of `elapsed` over `rows` rows recorded.
    pub(super) fn measured(elapsed: std::time::Duration, rows: usize) -> PassCost {
        let mut cost = PassCost::new();
        cost.record_inline(elapsed, rows);
        cost.record_inline(elapsed, rows);
        cost
    }

    #[test]
    fn run_parts_visits_every_row_once_on_any_pool() {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let manager = EntityManager::new();
            let mut a: Vec<u64> = vec![1; 5000];
            let mut b: Vec<u64> = vec![1; 30];
            // A cost that makes the pass split whenever the pool allows.
            let mut cost = measured(std::time::Duration::from_secs(1), 1);
            pool.install(|| {
                let pending = run_parts(
                    [&mut a[..], &mut b[..]],
                    None,
                    16,
                    &mut cost,
                    &manager,
                    &|p, _| {
                        for x in p {
                            *x += 1;
                        }
                    },
                );
                assert!(pending.0.iter().all(Vec::is_empty));
            });
            assert!(a.iter().chain(&b).all(|&x| x == 2), "{threads} threads");
        }
    }
}

/// The split decisions and job sizes, each asserted by its exact values.
#[cfg(test)]
mod exact_values {
    use super::tests::measured;
    use super::*;
    use crate::entity::Entity;

    fn two_threads<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(f)
    }

    /// The rows of each job, part by part.
    fn shape<P: SplitRows>(jobs: &[Vec<P>]) -> Vec<Vec<usize>> {
        jobs.iter()
            .map(|j| j.iter().map(SplitRows::len).collect())
            .collect()
    }

    #[test]
    fn jobs_never_hold_empty_parts_at_exact_boundaries() {
        let mut a: Vec<u32> = (0..16).collect();
        let mut b: Vec<u32> = Vec::new();
        let mut c: Vec<u32> = (16..24).collect();
        let mut d: Vec<u32> = (24..32).collect();
        let js = jobs([&mut a[..], &mut b[..], &mut c[..], &mut d[..]], 8);
        assert_eq!(shape(&js), [vec![8], vec![8], vec![8], vec![8]]);
        let flat: Vec<u32> = js
            .iter()
            .flatten()
            .flat_map(|p| p.iter().copied())
            .collect();
        assert_eq!(flat, (0..32).collect::<Vec<_>>());
    }

    #[test]
    fn jobs_cut_shared_slices_too() {
        let a: Vec<u32> = (0..10).collect();
        let b: Vec<u32> = (10..13).collect();
        let js = jobs([&a[..], &b[..]], 4);
        assert_eq!(shape(&js), [vec![4], vec![4], vec![2, 2], vec![1]]);
        let flat: Vec<Vec<u32>> = js
            .iter()
            .map(|j| j.iter().flat_map(|p| p.iter().copied()).collect())
            .collect();
        assert_eq!(flat[2], [8, 9, 10, 11]);
        assert_eq!(flat[3], [12]);
        assert_eq!(SplitRows::len(&&a[..]), 10);
        let (lo, hi) = SplitRows::split_at(&a[..], 3);
        assert_eq!((lo, hi.len()), (&[0u32, 1, 2][..], 7));
        let empty: &[u32] = &[];
        assert!(SplitRows::is_empty(&empty) && !SplitRows::is_empty(&&a[..]));
    }

    #[test]
    fn the_inline_runner_skips_empty_parts_and_visits_the_others_in_order() {
        let manager = EntityManager::new();
        let mut a: Vec<u32> = vec![1, 2];
        let mut b: Vec<u32> = Vec::new();
        let mut c: Vec<u32> = vec![3];
        let mut seen = Vec::new();
        let pending = run_parts_inline(
            [&mut a[..], &mut b[..], &mut c[..]],
            &manager,
            &mut |p: &mut [u32], _: &mut Commands<'_>| seen.push(p.to_vec()),
        );
        assert!(pending.is_empty() && pending.0.is_empty());
        assert_eq!(seen, [vec![1, 2], vec![3]]);
    }

    #[test]
    fn pending_is_empty_only_without_commands() {
        assert!(Pending(Vec::new()).is_empty());
        assert!(Pending(vec![Vec::new(), Vec::new()]).is_empty());
        let p = Pending(vec![Vec::new(), vec![Command::Despawn(Entity::new(1, 0))]]);
        assert!(!p.is_empty());
        let manager = EntityManager::new();
        let mut c = Commands::new(&manager);
        assert!(Pending::of(Commands::new(&manager)).0.is_empty());
        c.despawn(Entity::new(1, 0));
        let p = Pending::of(c);
        assert_eq!(p.0.len(), 1);
        assert!(!p.is_empty());
    }

    #[test]
    fn cost_jobs_are_a_multiple_of_threads_with_enough_work_each() {
        // 1 ns per row.
        let cost = measured(std::time::Duration::from_micros(100), 100_000);
        // 100 µs: 20 jobs' worth of 5 µs, capped at 4 per thread.
        assert_eq!(cost.job_rows(100_000, 2), 12_500);
        assert_eq!(cost.job_rows(100_000, 3), 8_334);
        // 12 µs on 2 threads: 2 jobs of 6 µs (never fewer than one per thread).
        assert_eq!(cost.job_rows(12_000, 2), 6_000);
        // Very little work still gives every thread a job.
        assert_eq!(cost.job_rows(10, 4), 3);
        assert_eq!(cost.job_rows(0, 2), 1);
    }

    /// The kind of plan, dropping its timer without recording (the tests record by hand).
    fn kind(plan: Plan<'_>) -> (bool, Option<usize>, bool) {
        let (split, rows, timed) = match &plan {
            Plan::Inline(t) => (false, None, t.is_some()),
            Plan::Split(rows, t) => (true, Some(*rows), t.is_some()),
        };
        match plan {
            Plan::Inline(Some(t)) | Plan::Split(_, Some(t)) => std::mem::forget(t),
            _ => {}
        }
        (split, rows, timed)
    }

    const INLINE_TIMED: (bool, Option<usize>, bool) = (false, None, true);
    const INLINE_UNTIMED: (bool, Option<usize>, bool) = (false, None, false);

    #[test]
    fn plan_follows_size_force_and_cost() {
        let us = std::time::Duration::from_micros;
        two_threads(|| {
            let mut cost = PassCost::new();
            // Under 2 × min_chunk: inline, untimed.
            assert_eq!(kind(plan(100, None, 64, &mut cost)), INLINE_UNTIMED);
            assert_eq!(kind(plan(127, None, 64, &mut cost)), INLINE_UNTIMED);
            // Exactly 2 × min_chunk, unknown cost: inline and timed.
            assert_eq!(kind(plan(128, None, 64, &mut cost)), INLINE_TIMED);
            // The timer records when dropped.
            match plan(1000, None, 1, &mut cost) {
                Plan::Inline(Some(timer)) => drop(timer),
                _ => panic!("unknown cost: inline and timed"),
            }
            assert_eq!(cost.measured, 1, "the timer recorded the pass");
            // Forced by the world: split whatever the cost, untimed.
            let mut unknown = PassCost::new();
            assert_eq!(
                kind(plan(1000, Some(1), 64, &mut unknown)),
                (true, Some(125), false)
            );
            assert_eq!(kind(plan(100, Some(64), 1, &mut unknown)), INLINE_UNTIMED);
            // Measured heavy: split (timed); measured light: inline (timed).
            let mut heavy = measured(std::time::Duration::from_secs(1), 1);
            assert_eq!(
                kind(plan(1000, None, 1, &mut heavy)),
                (true, Some(125), true)
            );
            let mut light = measured(std::time::Duration::from_nanos(1), 1000);
            assert_eq!(kind(plan(1000, None, 1, &mut light)), INLINE_TIMED);
            // Split on cost, jobs are sized by work, not by `min_chunk`: 60,000 rows of
            // 96 µs in all are 8 jobs of 7,500 rows (not 2 of 30,000 as `min_chunk` 16,384
            // would give), and 20 µs are 4 jobs of at least 5 µs each.
            let mut many = measured(us(96), 60_000);
            assert_eq!(
                kind(plan(60_000, None, 16_384, &mut many)),
                (true, Some(7_500), true)
            );
            let mut just = measured(us(20), 40_000);
            assert_eq!(
                kind(plan(40_000, None, 16_384, &mut just)),
                (true, Some(10_000), true)
            );
        });
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut cost = PassCost::new();
        one.install(|| assert_eq!(kind(plan(1000, Some(1), 1, &mut cost)), INLINE_TIMED));
    }

    /// The decisions of one pass over 40,000 rows, frame after frame, from measurements fed by
    /// hand (the clock injected): what each frame's plan is.
    #[test]
    fn the_split_decision_keeps_measuring() {
        let us = std::time::Duration::from_micros;
        let rows = 40_000;
        two_threads(|| {
            let mut cost = PassCost::new();
            let frame = |cost: &mut PassCost, elapsed: std::time::Duration| {
                let (split, _, timed) = kind(plan(rows, None, 16_384, cost));
                assert!(timed);
                if split {
                    cost.record_split(elapsed, 2);
                } else {
                    cost.record_inline(elapsed, rows);
                }
                split
            };
            // A cold first run (200 µs, 10× over the threshold) does not make the pass split:
            // the second, steady one (8 µs) decides, and it stays inline.
            assert!(!frame(&mut cost, us(200)));
            for _ in 0..100 {
                assert!(!frame(&mut cost, us(8)));
            }
            // The work grows (a slower system, more per row): after one run at 60 µs the
            // cheapest recent run is still 8 µs; once the window holds only slow runs, it
            // splits.
            let mut frames_until_split = 0;
            while !frame(&mut cost, us(60)) {
                frames_until_split += 1;
            }
            assert_eq!(
                frames_until_split, WINDOW,
                "the window of recent runs fills first"
            );
            // Split runs of 30 µs (60 µs of work on 2 threads) stay split, with an inline
            // probe once in `PROBE_EVERY` runs.
            let mut inline = 0;
            for _ in 0..=(2 * PROBE_EVERY) {
                let (split, _, _) = kind(plan(rows, None, 16_384, &mut cost));
                if split {
                    cost.record_split(us(30), 2);
                } else {
                    // The probe measures the same heavy work.
                    inline += 1;
                    cost.record_inline(us(60), rows);
                }
            }
            assert_eq!(inline, 2, "one probe per {PROBE_EVERY} split runs");
            // The work falls (5 µs split, 10 µs of work): the short split run makes the next
            // run inline, and light inline runs keep it inline.
            assert!(frame(&mut cost, us(5)));
            let (split, _, _) = kind(plan(rows, None, 16_384, &mut cost));
            assert!(!split, "a short split run is followed by an inline probe");
            for _ in 0..WINDOW {
                cost.record_inline(us(10), rows);
            }
            for _ in 0..10 {
                assert!(!frame(&mut cost, us(10)));
            }
        });
    }

    /// Runs `run_parts` over `rows` rows of ones; returns how many bodies ran.
    fn run(rows: usize, world: Option<usize>, min_chunk: usize, cost: &mut PassCost) -> usize {
        let manager = EntityManager::new();
        let mut a = vec![1u32; rows];
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let pending = run_parts(
            [&mut a[..]],
            world,
            min_chunk,
            cost,
            &manager,
            &|p: &mut [u32], _: &mut Commands<'_>| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                for x in p {
                    *x += 1;
                }
            },
        );
        assert!(pending.is_empty());
        assert!(a.iter().all(|&x| x == 2));
        calls.into_inner()
    }

    #[test]
    fn run_parts_times_only_passes_that_could_split() {
        two_threads(|| {
            let mut cost = PassCost::new();
            assert_eq!(run(100, None, 64, &mut cost), 1);
            assert_eq!(cost.measured, 0, "small: not timed");
            assert_eq!(run(127, None, 64, &mut cost), 1);
            assert_eq!(cost.measured, 0, "small: not timed");
            assert_eq!(run(128, None, 64, &mut cost), 1);
            assert_eq!(cost.measured, 1, "could split: timed");
            assert_eq!(run(1000, None, 1, &mut cost), 1);
            assert_eq!(cost.measured, 2, "could split: timed");
            // Forced: split into jobs of 125 rows, not timed.
            let mut unknown = PassCost::new();
            assert_eq!(run(1000, Some(1), 64, &mut unknown), 8);
            assert_eq!(unknown.measured, 0, "a forced split is not timed");
            // Split on cost: timed as a split run.
            let mut heavy = measured(std::time::Duration::from_secs(1), 1);
            assert_eq!(run(1000, None, 1, &mut heavy), 8);
            assert_eq!((heavy.measured, heavy.since_probe), (2, 1));
        });
    }

    #[test]
    fn run_jobs_runs_one_body_per_part_of_each_job() {
        let manager = EntityManager::new();
        let mut a = [1u32; 10];
        let mut b = [1u32; 3];
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let pending = run_jobs(
            [&mut a[..], &mut b[..]],
            4,
            Weights::ROWS,
            &manager,
            &|p: &mut [u32], c: &mut Commands<'_>| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                for x in p {
                    *x += 1;
                }
                c.despawn(Entity::new(1, 0));
            },
        );
        // Jobs [4], [4], [2, 2], [1]: one buffer per job, one command per part.
        assert_eq!(calls.into_inner(), 5);
        assert_eq!(
            pending.0.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 1, 2, 1]
        );
        assert!(a.iter().chain(&b).all(|&x| x == 2));
    }

    #[test]
    fn weighted_jobs_hold_equal_work_not_equal_rows() {
        let a: Vec<u32> = (0..12).collect();
        let b: Vec<u32> = (12..24).collect();
        // 24 rows in jobs of 6 rows' worth: a row of `a` costs 3, one of `b` 1, so the 48 of
        // work are 4 jobs of 12: 4 rows of `a` each, then all of `b`.
        let weighted = weighted_jobs([&a[..], &b[..]], 6, Weights(&[3, 1]));
        assert_eq!(shape(&weighted), [vec![4], vec![4], vec![4], vec![12]]);
        let flat: Vec<u32> = weighted
            .iter()
            .flatten()
            .flat_map(|p| p.iter().copied())
            .collect();
        assert_eq!(
            flat,
            (0..24).collect::<Vec<_>>(),
            "every row once, in order"
        );
        // Even weights, or weights of another number of parts: rows alone.
        let even = [vec![6], vec![6], vec![6, 0], vec![6]];
        for weights in [Weights::ROWS, Weights(&[5, 5]), Weights(&[3, 1, 7])] {
            let js = weighted_jobs([&a[..], &b[..]], 6, weights);
            assert_eq!(shape(&js)[..2], even[..2], "{weights:?}");
            assert_eq!(
                shape(&js),
                [vec![6], vec![6], vec![6], vec![6]],
                "{weights:?}"
            );
        }
        // Jobs of 1,001 (and 3,001): a row of `a` fills one, the last leaves room for one
        // row of `b` (a weight of 0 counts as 1); a row heavier than a job is a job alone.
        for heavy in [1000, 3000] {
            let js = weighted_jobs([&a[..4], &b[..4]], 2, Weights(&[heavy, 0]));
            assert_eq!(shape(&js), [vec![1], vec![1], vec![1], vec![1, 1], vec![3]]);
        }
        let js = weighted_jobs([&a[..4], &b[..4]], 1, Weights(&[100_000, 1]));
        assert_eq!(shape(&js), [vec![1], vec![1], vec![1], vec![1], vec![4]]);
    }

    #[test]
    fn a_timed_inline_run_weighs_its_parts_in_stretches() {
        let ns = std::time::Duration::from_nanos;
        let mut cost = PassCost::new();
        let rows = 16_000;
        let mut timer = Timer::start(&mut cost, rows, None, true);
        let t0 = timer.start;
        // A stretch closes once it holds a 16th of the rows (1,000): the empty part joins the
        // next one's stretch, and the clock is read only when a stretch closes.
        timer.part_done_at(1_000, || t0 + ns(1_000));
        timer.part_done_at(0, || unreachable!("an empty stretch stays open"));
        timer.part_done_at(1_000, || t0 + ns(1_500));
        timer.part_done_at(14_000, || t0 + ns(15_500));
        assert_eq!(timer.this_run, [1_000, 500, 500, 1_000]);
        drop(timer);
        assert_eq!(
            cost.part_ps,
            [1_000, 500, 500, 1_000],
            "kept for the next split"
        );
        assert_eq!(cost.measured, 1, "and the run as a whole recorded");
        // A split run reads them and keeps them; the next timed inline run replaces them.
        let split = Timer::start(&mut cost, rows, Some(2), false);
        assert_eq!(split.weights().0, [1_000, 500, 500, 1_000]);
        drop(split);
        assert_eq!(cost.part_ps.len(), 4);
        let mut inline = Timer::start(&mut cost, 10, None, true);
        let t1 = inline.start;
        inline.part_done_at(10, || t1 + ns(30));
        drop(inline);
        assert_eq!(cost.part_ps, [3_000]);
    }

    #[test]
    fn one_held_up_stretch_does_not_skew_the_weights() {
        let ns = std::time::Duration::from_nanos;
        let mut cost = PassCost::new();
        // Two parts of 1,000 rows: the pass's measured runs, each stretch's time by hand.
        let mut run = |first: u64, second: u64| {
            let mut timer = Timer::start(&mut cost, 2_000, None, true);
            let t0 = timer.start;
            timer.part_done_at(1_000, || t0 + ns(first));
            timer.part_done_at(1_000, || t0 + ns(first + second));
            drop(timer);
            cost.part_ps.clone()
        };
        assert_eq!(run(1_000, 4_000), [1_000, 4_000]);
        // The first part is held up 10 µs once: its weight keeps the cheaper run's.
        assert_eq!(run(11_000, 4_000), [1_000, 4_000]);
        // The costs really changed: after two runs the weights follow.
        assert_eq!(run(3_000, 1_000), [3_000, 1_000]);
        assert_eq!(run(3_000, 1_000), [3_000, 1_000]);
        // Another number of parts: the new run alone.
        let mut timer = Timer::start(&mut cost, 100, None, true);
        let t0 = timer.start;
        timer.part_done_at(100, || t0 + ns(700));
        drop(timer);
        assert_eq!(cost.part_ps, [7_000]);
    }

    #[test]
    fn a_timed_inline_run_skips_empty_parts_and_weighs_every_part() {
        two_threads(|| {
            let manager = EntityManager::new();
            let run = |cost: &mut PassCost| {
                let (mut a, mut b, mut c) = (vec![0u32; 3], Vec::new(), vec![0u32; 2]);
                let mut seen = Vec::new();
                let seen_cell = std::sync::Mutex::new(&mut seen);
                let pending = run_parts(
                    [&mut a[..], &mut b[..], &mut c[..]],
                    None,
                    1,
                    cost,
                    &manager,
                    &|p: &mut [u32], _: &mut Commands<'_>| seen_cell.lock().unwrap().push(p.len()),
                );
                assert!(pending.is_empty());
                assert_eq!(seen, [3, 2], "the empty part is not visited");
            };
            // Not measured yet: a timed inline run (2 × min_chunk rows or more) that weighs
            // its parts.
            let mut cost = PassCost::new();
            run(&mut cost);
            assert_eq!(cost.measured, 1, "the run was timed");
            assert_eq!(cost.part_ps.len(), 3, "and each of its parts weighed");
            assert!(cost.part_ps.iter().all(|&ps| ps >= 1));
            // Measured, on a pool where it cannot split (so its own timings, slow under Miri,
            // cannot make it split either): timed as a whole, its parts once in
            // `WEIGH_EVERY` runs.
            let mut light = measured(std::time::Duration::from_nanos(1), 1_000);
            light.part_ps = vec![7, 8, 9];
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            one.install(|| {
                for _ in 1..WEIGH_EVERY {
                    run(&mut light);
                    assert_eq!(light.part_ps, [7, 8, 9], "not its parts");
                }
                run(&mut light);
            });
            assert_eq!(light.measured, 2 + WEIGH_EVERY, "every run was timed");
            assert_ne!(light.part_ps, [7, 8, 9], "the eighth weighed its parts");
            assert_eq!(light.part_ps.len(), 3);
        });
    }

    #[test]
    fn a_pass_weighs_its_parts_when_it_may_split() {
        let mut cost = PassCost::new();
        assert!(cost.weighs_parts(1, true), "not measured yet");
        cost.record_inline(std::time::Duration::from_nanos(1), 1);
        assert!(cost.weighs_parts(1, true), "measured once");
        cost.record_inline(std::time::Duration::from_nanos(1), 1);
        // 1 ns a row: 20,000 rows are worth splitting (a probe's inline run).
        for _ in 0..3 {
            assert!(cost.weighs_parts(20_000, true));
        }
        let light: Vec<bool> = (0..16).map(|_| cost.weighs_parts(19_999, true)).collect();
        let eighth = |i| i % WEIGH_EVERY as usize == WEIGH_EVERY as usize - 1;
        assert_eq!(light, (0..16).map(eighth).collect::<Vec<_>>());
        // On a one-thread pool a pass worth splitting runs inline: its parts once in 8 too.
        let one_thread: Vec<bool> = (0..16).map(|_| cost.weighs_parts(20_000, false)).collect();
        assert_eq!(one_thread, light);
        // A run worth splitting restarts the count.
        assert!(!cost.weighs_parts(1, true));
        assert!(cost.weighs_parts(usize::MAX, true), "no overflow");
        assert!(!cost.weighs_parts(1, true));
        // The timer of a split run never times parts; an inline one when told to.
        let mut split = Timer::start(&mut cost, 10, Some(2), true);
        split.part_done(10);
        assert_eq!(split.parts, 0);
        drop(split);
        let mut inline = Timer::start(&mut cost, 10, None, false);
        inline.part_done(10);
        assert_eq!(
            inline.parts, 0,
            "part_done does nothing when parts are not timed"
        );
        drop(inline);
        let mut timed = Timer::start(&mut cost, 10, None, true);
        timed.part_done(10);
        assert_eq!(timed.parts, 1);
        drop(timed);
        // Any rows a caller reports: no overflow.
        let mut huge = Timer::start(&mut cost, usize::MAX, None, true);
        let t0 = huge.start;
        huge.part_done_at(usize::MAX / 32, || unreachable!("a 32nd stays open"));
        huge.part_done_at(usize::MAX, || t0);
        assert_eq!(huge.this_run, [1, 1], "one stretch, its rows saturated");
    }

    #[test]
    fn a_split_run_cuts_by_the_weights_its_inline_run_measured() {
        two_threads(|| {
            let bodies = |cost: &mut PassCost| {
                let manager = EntityManager::new();
                let (mut a, mut b) = (vec![0u32; 100], vec![0u32; 100]);
                let calls = std::sync::atomic::AtomicUsize::new(0);
                let pending = run_parts(
                    [&mut a[..], &mut b[..]],
                    None,
                    1,
                    cost,
                    &manager,
                    &|p: &mut [u32], _: &mut Commands<'_>| {
                        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        p.iter_mut().for_each(|x| *x += 1);
                    },
                );
                assert!(pending.is_empty());
                assert!(a.iter().chain(&b).all(|&x| x == 1), "every row once");
                calls.into_inner()
            };
            // Heavy enough for 8 jobs of 25 rows: `a` and `b` are 4 pieces each.
            let mut even = measured(std::time::Duration::from_secs(1), 1);
            assert_eq!(bodies(&mut even), 8);
            // A row of `a` costs 99 times one of `b`: 7 jobs of 13 rows of `a`, then one of
            // `a`'s last 9 rows with all of `b`.
            let mut weighed = measured(std::time::Duration::from_secs(1), 1);
            weighed.part_ps = vec![99, 1];
            assert_eq!(bodies(&mut weighed), 9);
            assert_eq!(weighed.part_ps, [99, 1], "a split run keeps the weights");
        });
    }

    #[test]
    fn chunk_len_of_the_largest_pass_does_not_overflow() {
        assert_eq!(chunk_len(usize::MAX, usize::MAX), usize::MAX);
        assert_eq!(chunk_len(100, 64), 100);
    }

    #[test]
    fn chunk_len_splits_from_exactly_twice_min_chunk() {
        two_threads(|| {
            assert_eq!(chunk_len(127, 64), 127, "under 2 × min_chunk: one chunk");
            assert_eq!(chunk_len(128, 64), 64, "2 × min_chunk: two chunks");
            assert_eq!(chunk_len(1000, 1), 125, "1000 rows / (2 threads × 4)");
            assert_eq!(chunk_len(0, 0), 1);
        });
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        one.install(|| assert_eq!(chunk_len(1000, 1), 1000, "one thread: one chunk"));
    }
}
