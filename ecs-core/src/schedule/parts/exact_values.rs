//! The split decisions and job sizes, each asserted by its exact values.

use super::cost::*;
use super::cutter::*;
use super::tests::measured;
use super::timer::*;
use super::*;
use crate::entity::Entity;

/// The entities of a world holding `rows` rows: `run_parts` bounds a pass's rows by them.
fn manager_of(rows: usize) -> EntityManager {
    let mut manager = EntityManager::new();
    for _ in 0..rows {
        manager.create().expect("an id");
    }
    manager
}

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
    let manager = manager_of(rows);
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
        let manager = manager_of(5);
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
            let manager = manager_of(200);
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
