//! Every implementation of every workload computes the same values: after `new` and after
//! `RUNS` runs, what each reads back through its own queries (entity counts, sums) must equal
//! the expected values, worked out by hand where they can be (and otherwise equal to the
//! one-`Vec`-per-field floor's). A query that silently matches nothing changes a count or a
//! sum and fails here, so it cannot produce a fast-looking number in the benchmarks.

use sigecs_compare::{for_each_impl, AddRemoveSteps, Observation, Workload, WORKLOADS};

/// Odd, so that swapped values differ from the start values.
const RUNS: usize = 3;

fn size(group: &str) -> usize {
    WORKLOADS
        .iter()
        .find(|w| w.group == group)
        .unwrap_or_else(|| panic!("no workload {group}"))
        .n
}

/// What one implementation observed, per step.
struct Observed {
    name: &'static str,
    steps: Vec<(&'static str, Observation)>,
}

fn run_all<W: Workload>(name: &'static str, n: usize) -> Observed {
    let mut w = W::new(n);
    let before = w.observe();
    for _ in 0..RUNS {
        w.run();
    }
    let after = w.observe();
    Observed {
        name,
        steps: vec![("after new", before), ("after the runs", after)],
    }
}

fn add_remove_steps<W: AddRemoveSteps>(name: &'static str, n: usize) -> Observed {
    let mut w = W::new(n);
    let mut steps = vec![("after new", w.observe())];
    w.add();
    steps.push(("after add", w.observe()));
    w.remove();
    steps.push(("after remove", w.observe()));
    for _ in 0..RUNS {
        w.run();
    }
    steps.push(("after the runs", w.observe()));
    Observed { name, steps }
}

/// Compares every implementation with `expected` (one observation per step), reporting every
/// mismatch at once.
fn check(workload: &str, observed: &[Observed], expected: &[Observation]) {
    let mut errors = Vec::new();
    for o in observed {
        assert_eq!(o.steps.len(), expected.len());
        for ((step, got), want) in o.steps.iter().zip(expected) {
            if got != want {
                errors.push(format!(
                    "{workload}/{}: {step}: observed {got:?}, expected {want:?}",
                    o.name
                ));
            }
        }
    }
    assert!(
        errors.is_empty(),
        "{} mismatches:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

macro_rules! collect {
    ($runner:ident, $ty:ident, $n:expr) => {{
        let mut observed: Vec<Observed> = Vec::new();
        macro_rules! one {
            ($name:expr, $path:ty) => {
                observed.push($runner::<$path>($name, $n));
            };
        }
        for_each_impl!(one, $ty);
        assert_eq!(observed.len(), sigecs_compare::IMPLS.len());
        observed
    }};
}

fn obs(values: &[(&'static str, f64)]) -> Observation {
    values.to_vec()
}

#[test]
fn simple_insert() {
    let n = size("simple_insert");
    let observed = collect!(run_all, SimpleInsert, n);
    let n = n as f64;
    check(
        "simple_insert",
        &observed,
        &[
            obs(&[("entities", 0.0), ("sum", 0.0)]),
            obs(&[("entities", n), ("sum", 4.0 * n)]),
        ],
    );
}

fn simple_iter(group: &str) {
    let n = size(group);
    let observed = collect!(run_all, SimpleIter, n);
    let n = n as f64;
    let at = |runs: usize| {
        obs(&[
            ("entities", n),
            ("position.x", n * (1 + runs) as f64),
            ("velocity.x", n),
        ])
    };
    check(group, &observed, &[at(0), at(RUNS)]);
}

#[test]
fn simple_iter_10k() {
    simple_iter("simple_iter_10k");
}

#[test]
fn simple_iter_1m() {
    simple_iter("simple_iter_1m");
}

#[test]
fn frag_iter() {
    let n = size("frag_iter");
    let observed = collect!(run_all, FragIter, n);
    let entities = (26 * n) as f64;
    let at = |runs: i32| obs(&[("entities", entities), ("data", entities * 2f64.powi(runs))]);
    check("frag_iter", &observed, &[at(0), at(RUNS as i32)]);
}

#[test]
fn heavy_compute() {
    let n = size("heavy_compute");
    let observed = collect!(run_all, HeavyCompute, n);
    // The matrices and positions after 3 × 100 inversions are not worked out by hand: the
    // floor's values are the reference, and they must have moved.
    let floor = &observed[0];
    assert_eq!(floor.name, "floor_vecs");
    let (before, after) = (&floor.steps[0].1, &floor.steps[1].1);
    assert_eq!(before[0], ("entities", n as f64));
    assert_eq!(after[0], ("entities", n as f64));
    assert_ne!(
        before[1], after[1],
        "the floor's heavy_compute changed nothing"
    );
    let expected = [before.clone(), after.clone()];
    check("heavy_compute", &observed, &expected);
}

#[test]
fn schedule() {
    let n = size("schedule");
    let observed = collect!(run_all, Schedule, n);
    let n = n as f64;
    let start = obs(&[
        ("A count", 4.0 * n),
        ("A sum", 4.0 * n),
        ("B count", 4.0 * n),
        ("B sum", 8.0 * n),
        ("C count", 3.0 * n),
        ("C sum", 9.0 * n),
        ("D count", n),
        ("D sum", 4.0 * n),
        ("E count", n),
        ("E sum", 5.0 * n),
    ]);
    // After an odd number of runs: A and B swapped everywhere; C and D swapped on (A,B,C,D),
    // C and E on (A,B,C,E).
    let swapped = obs(&[
        ("A count", 4.0 * n),
        ("A sum", 8.0 * n),
        ("B count", 4.0 * n),
        ("B sum", 4.0 * n),
        ("C count", 3.0 * n),
        ("C sum", (3.0 + 4.0 + 5.0) * n),
        ("D count", n),
        ("D sum", 3.0 * n),
        ("E count", n),
        ("E sum", 3.0 * n),
    ]);
    check("schedule", &observed, &[start, swapped]);
}

#[test]
fn add_remove() {
    let n = size("add_remove");
    let observed = collect!(add_remove_steps, AddRemove, n);
    let (count, sum) = (n as f64, (n * (n - 1) / 2) as f64);
    let without_b = obs(&[
        ("A count", count),
        ("A sum", sum),
        ("B count", 0.0),
        ("B sum", 0.0),
    ]);
    let with_b = obs(&[
        ("A count", count),
        ("A sum", sum),
        ("B count", count),
        ("B sum", sum),
    ]);
    check(
        "add_remove",
        &observed,
        &[without_b.clone(), with_b, without_b.clone(), without_b],
    );
}
