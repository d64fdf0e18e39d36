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
//!
//! One concept per file: the runner here ([`run_parts`] and the jobs it makes), the cost
//! model in `cost.rs`, the cutter in `cutter.rs`, the timer in `timer.rs`.

mod cost;
mod cutter;
mod timer;

pub use cost::{PassCost, Weights};
pub use cutter::{job_rows, SplitRows};
pub use timer::Timer;

use super::commands::{Command, Commands};
use crate::entity::EntityManager;
use cutter::{cut, Pieces};
use rayon::prelude::*;

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

/// How a pass over `rows` rows runs: inline (timed when it could have split, see
/// [`PassCost`]), or split into jobs of about this many rows (timed too).
pub enum Plan<'c> {
    /// On the calling thread; the timer (if any) records the pass's cost when dropped.
    Inline(Option<Timer<'c>>),
    /// On rayon's pool, in jobs of about this many rows; the timer records the split run.
    Split(usize, Option<Timer<'c>>),
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
    if small(rows, min_chunk) {
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

/// A pass over `rows` rows with this `min_chunk` is too small to split: it runs inline,
/// untimed.
#[inline(always)]
fn small(rows: usize, min_chunk: usize) -> bool {
    rows / 2 < min_chunk.max(1)
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
/// which `cost` (the world's record of this pass) keeps measuring. `entities` are the world's:
/// their live count bounds the pass's rows (a pass with more rows than that may run inline
/// where it could have split; the results are the same either way).
#[inline]
pub fn run_parts<S: Parts, F: Fn(S::Part, &mut Commands<'_>) + Sync>(
    parts: S,
    world_min_chunk: Option<usize>,
    min_chunk: usize,
    cost: &mut PassCost,
    entities: &EntityManager,
    body: &F,
) -> Pending {
    // Small, the common case: untimed, decided here without a call (`plan`'s first rule).
    // Every row is a live entity, so in a world with too few of them for any pass to split,
    // the pass runs here, inlined into the system's code without counting its rows or
    // keeping room for the split path: 0.87x the time of `frag_iter` with that path here.
    if small(entities.len(), world_min_chunk.unwrap_or(min_chunk)) {
        return run_parts_inline(parts, entities, &mut |p, c| body(p, c));
    }
    run_parts_planned(parts, world_min_chunk, min_chunk, cost, entities, body)
}

/// [`run_parts`] in a world with enough entities for a pass to split: counts the pass's rows
/// and runs it inline if small, else as [`plan`] says.
#[inline(never)]
fn run_parts_planned<S: Parts, F: Fn(S::Part, &mut Commands<'_>) + Sync>(
    parts: S,
    world_min_chunk: Option<usize>,
    min_chunk: usize,
    cost: &mut PassCost,
    entities: &EntityManager,
    body: &F,
) -> Pending {
    let rows = parts.rows();
    if small(rows, world_min_chunk.unwrap_or(min_chunk)) {
        return run_parts_inline(parts, entities, &mut |p, c| body(p, c));
    }
    match plan(rows, world_min_chunk, min_chunk, cost) {
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
mod tests;

#[cfg(test)]
mod exact_values;
