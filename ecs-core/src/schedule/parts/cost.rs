//! The cost model: what a pass learned about its own cost ([`PassCost`]), when that makes it
//! worth splitting, and what each part's rows weigh in a split run's cut ([`Weights`]).

/// Chunks handed out per thread, so uneven progress of threads still balances.
pub(super) const CHUNKS_PER_THREAD: usize = 4;

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
pub(super) const WINDOW: usize = 4;

/// A split pass is run inline (and measured) once in this many runs, to notice that its work
/// fell under `SPLIT_WORK_NS`.
pub(crate) const PROBE_EVERY: u32 = 64;

/// A timed inline run of a pass not worth splitting times its parts once in this many runs
/// ([`PassCost::weighs_parts`]).
pub(super) const WEIGH_EVERY: u32 = 8;

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
    pub(super) samples: [u64; WINDOW],
    /// Inline runs measured so far (saturating).
    pub(super) measured: u32,
    /// Split runs since the last inline measurement.
    pub(super) since_probe: u32,
    /// The next run that could split measures itself inline instead.
    pub(super) probe: bool,
    /// Timed inline runs since the last one that timed its parts.
    pub(super) unweighed_runs: u32,
    /// Picoseconds per row of each part (in the order the pass hands them), the cheaper of
    /// the last two timed inline runs: the weights of a split run's cut ([`Weights`]). One
    /// stretch held up (an interrupt, another process) must not skew the cut until the next
    /// probe.
    pub(super) part_ps: Vec<u64>,
    /// The last timed inline run's own measurements, and a buffer for the next one's.
    pub(super) last_parts: Vec<u64>,
    pub(super) spare: Vec<u64>,
}

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
    pub(super) fn record_parts(&mut self, parts: Vec<u64>) {
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
    pub(super) fn ps_per_row(&self) -> Option<u64> {
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
    pub(super) fn job_rows(&self, rows: usize, threads: usize) -> usize {
        let threads = threads.max(1);
        let work_ns = (rows as u128) * (self.ps_per_row().unwrap_or(0) as u128) / 1000;
        let by_work = (work_ns / MIN_JOB_WORK_NS as u128).min(usize::MAX as u128) as usize;
        let per_thread = (by_work / threads).clamp(1, CHUNKS_PER_THREAD);
        rows.div_ceil(threads.saturating_mul(per_thread)).max(1)
    }

    /// Is `rows` rows of this pass enough work to split? Not before two inline runs were
    /// measured.
    pub(super) fn worth_splitting(&self, rows: usize) -> bool {
        self.ps_per_row()
            .is_some_and(|ps| (rows as u128) * (ps as u128) >= SPLIT_WORK_NS as u128 * 1000)
    }

    /// Does the next timed inline run, over `rows` rows, also time its parts? Only splits
    /// need weights, so only a pass not measured yet, or worth splitting on a pool where it
    /// `may_split` (a probe), times its parts every run; another does once in `WEIGH_EVERY`
    /// runs, which keeps its weights recent for when it grows, while a light pass (the
    /// `schedule` workload's, 8 µs) does not spend 3% of every run on the parts' clock reads.
    pub(super) fn weighs_parts(&mut self, rows: usize, may_split: bool) -> bool {
        let weighs = self.measured < 2
            || (may_split && self.worth_splitting(rows))
            || self.unweighed_runs + 1 >= WEIGH_EVERY;
        self.unweighed_runs = if weighs { 0 } else { self.unweighed_runs + 1 };
        weighs
    }

    /// Should the next run that would split measure itself inline instead?
    pub(super) fn probing(&self) -> bool {
        self.probe || self.since_probe >= PROBE_EVERY
    }
}

/// Picoseconds per row of a run of `rows` rows that took `elapsed`: at least 1, so that every
/// row weighs something.
pub(super) fn ps_per_row(elapsed: std::time::Duration, rows: usize) -> u64 {
    (elapsed.as_nanos() * 1000 / rows.max(1) as u128).clamp(1, u64::MAX as u128) as u64
}

/// What each part's rows weigh in a split run's cut: its picoseconds per row as its
/// [`PassCost`] measured them. Weights measured over another number of parts than the run has (a dynamic store
/// came or went, or a change-filtered pass's runs of changed rows differ) are not used, and
/// every row weighs the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Weights<'a>(pub(super) &'a [u64]);

impl<'a> Weights<'a> {
    /// Every row weighs the same.
    pub const ROWS: Weights<'static> = Weights(&[]);

    /// The weights for a run of `parts` parts: each part's, or all 1.
    pub(super) fn of(self, parts: usize) -> impl Fn(usize) -> u64 + Copy + 'a {
        let known = self.0.len() == parts;
        move |i| if known { self.0[i].max(1) } else { 1 }
    }
}
