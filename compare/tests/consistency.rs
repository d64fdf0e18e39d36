//! Every implementation of every workload computes the same values: after `new` and after
//! `RUNS` runs, what each reads back through its own queries (entity counts, sums) must equal
//! the expected values, worked out by hand where they can be (and otherwise equal to the
//! one-`Vec`-per-field floor's). A query that silently matches nothing changes a count or a
//! sum and fails here, so it cannot produce a fast-looking number in the benchmarks.

use sigecs_compare::data::{heavy_transform, HEAVY_INVERSIONS, START};
use sigecs_compare::{
    for_each_impl, runs, AddRemoveSteps, Observation, SaveRestoreSteps, Workload, IMPLS, WORKLOADS,
};

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

/// save_restore: a save, a frame that changes every entity, the restore (which must give back
/// the values at the save), then the frame again and `RUNS` round trips (which must keep the
/// changed values; sigecs' round trip moves them into its second world, so a copy that
/// missed anything shows).
fn save_restore_steps<W: SaveRestoreSteps>(name: &'static str, n: usize) -> Observed {
    let mut w = W::new(n);
    let mut steps = vec![("after new", w.observe())];
    w.save();
    w.change();
    steps.push(("after the change", w.observe()));
    w.restore();
    steps.push(("after the restore", w.observe()));
    w.change();
    for _ in 0..RUNS {
        w.run();
    }
    steps.push(("after the change and the runs", w.observe()));
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
    ($group:expr, $runner:ident, $ty:ident, $n:expr) => {{
        let mut observed: Vec<Observed> = Vec::new();
        macro_rules! one {
            ($name:expr, $path:ty) => {
                observed.push($runner::<$path>($name, $n));
            };
        }
        for_each_impl!(one, $ty);
        // Every implementation the report expects for this workload, and no other.
        let names: Vec<&str> = observed.iter().map(|o| o.name).collect();
        let expected: Vec<&str> = IMPLS.iter().copied().filter(|i| runs(i, $group)).collect();
        assert_eq!(names, expected, "implementations of {}", $group);
        observed
    }};
}

fn obs(values: &[(&'static str, f64)]) -> Observation {
    values.to_vec()
}

#[test]
fn simple_insert() {
    let n = size("simple_insert");
    let observed = collect!("simple_insert", run_all, SimpleInsert, n);
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
    let observed = collect!(group, run_all, SimpleIter, n);
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
    let observed = collect!("frag_iter", run_all, FragIter, n);
    let entities = (26 * n) as f64;
    let at = |runs: i32| obs(&[("entities", entities), ("data", entities * 2f64.powi(runs))]);
    check("frag_iter", &observed, &[at(0), at(RUNS as i32)]);
}

/// heavy_compute after `runs` runs, worked out by hand for `inversions` inversions per run:
/// the start matrix is a rotation by 1.2 rad about X, so each row's matrix after `k` inversions
/// in all is a rotation by ±1.2 rad (`y_axis.z` = its sine), and each run rotates the position
/// (1, 1, 1) by the matrix it ends with (the coordinates' sum becomes 1 + 2 cos of the total
/// angle).
fn heavy_by_hand(n: usize, inversions: usize, runs: usize) -> [f64; 3] {
    let theta = 1.2f64;
    let sign = |k: usize| if k.is_multiple_of(2) { 1.0 } else { -1.0 };
    let angle: f64 = (1..=runs).map(|r| sign(r * inversions) * theta).sum();
    let n = n as f64;
    [
        n,
        n * sign(runs * inversions) * theta.sin(),
        n * (1.0 + 2.0 * angle.cos()),
    ]
}

fn values(o: &Observation) -> Vec<f64> {
    o.iter().map(|&(_, v)| v).collect()
}

fn close(got: &[f64], want: &[f64], tolerance: f64) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| (g - w).abs() <= tolerance)
}

#[test]
fn heavy_compute() {
    let n = size("heavy_compute");
    assert_eq!(HEAVY_INVERSIONS % 2, 1, "an even count cancels out");
    assert_eq!(
        heavy_transform(),
        glam::Mat4::from_axis_angle(glam::Vec3::X, 1.2)
    );
    assert_eq!(START, glam::Vec3::ONE);
    let observed = collect!("heavy_compute", run_all, HeavyCompute, n);
    // The floor's values, checked against the values worked out by hand (to f32 rounding: 303
    // inversions in all), are the reference every implementation must match exactly.
    let floor = &observed[0];
    assert_eq!(floor.name, "floor_vecs");
    let (before, after) = (&floor.steps[0].1, &floor.steps[1].1);
    let tolerance = 1e-3 * n as f64;
    assert!(
        close(
            &values(before),
            &heavy_by_hand(n, HEAVY_INVERSIONS, 0),
            tolerance
        ),
        "the floor's heavy_compute starts at {before:?}"
    );
    let done = heavy_by_hand(n, HEAVY_INVERSIONS, RUNS);
    assert!(
        close(&values(after), &done, tolerance),
        "the floor's heavy_compute after {RUNS} runs: {after:?}, worked out by hand: {done:?}"
    );
    // What an implementation that skipped the inversions, or inverted an even number of times,
    // would observe instead: far from the real values, so the check above tells them apart.
    for wrong in [0, HEAVY_INVERSIONS - 1] {
        let wrong = heavy_by_hand(n, wrong, RUNS);
        assert!(
            !close(&wrong, &done, 0.5 * n as f64),
            "skipped or even inversions would pass: {wrong:?} against {done:?}"
        );
    }
    let expected = [before.clone(), after.clone()];
    check("heavy_compute", &observed, &expected);
}

#[test]
fn schedule() {
    let n = size("schedule");
    let observed = collect!("schedule", run_all, Schedule, n);
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
    let observed = collect!("add_remove", add_remove_steps, AddRemove, n);
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

#[test]
fn save_restore() {
    let n = size("save_restore");
    let observed = collect!("save_restore", save_restore_steps, SaveRestore, n);
    // Entity i holds transform.w_axis.x = position.x = rotation.y = velocity.y = i; the change
    // adds 1 to transform.w_axis.x and velocity.x = 1 to position.x.
    let (s1, s2) = (
        (n * (n - 1) / 2) as f64,
        ((n - 1) * n * (2 * n - 1) / 6) as f64,
    );
    let count = n as f64;
    let saved = obs(&[
        ("entities", count),
        ("transform", s1),
        ("position", s1),
        ("rotation", s1),
        ("velocity", s1),
        ("rows", 2.0 * s2),
    ]);
    // Σ (i + 1)² + Σ i².
    let changed = obs(&[
        ("entities", count),
        ("transform", s1 + count),
        ("position", s1 + count),
        ("rotation", s1),
        ("velocity", s1),
        ("rows", (s2 + 2.0 * s1 + count) + s2),
    ]);
    check(
        "save_restore",
        &observed,
        &[saved.clone(), changed.clone(), saved, changed],
    );
}
