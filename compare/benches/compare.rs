//! The comparison: one criterion group per workload, every implementation in it, so that the
//! ratios are measured side by side in one run. `cargo run --release --bin report` turns the
//! medians into `results.md` and `results.png` (`run.sh` does both).
//!
//! Sequential workloads are timed inside a one-thread rayon pool, for every implementation:
//! sigecs splits large stores across rayon by default and no peer iterates in parallel unless
//! asked to. heavy_compute (parallel by definition) and schedule (each library's own
//! scheduler) run with every library's default parallelism on all cores.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use sigecs_compare::{for_each_impl, one_thread_pool, Workload, WorkloadInfo, WORKLOADS};
use std::hint::black_box;
use std::time::Duration;

fn info(group: &str) -> &'static WorkloadInfo {
    WORKLOADS
        .iter()
        .find(|w| w.group == group)
        .unwrap_or_else(|| panic!("no workload {group}"))
}

/// Times `W::run` as `name` in `group`; afterwards checks that the implementation still sees
/// its entities (the full check of the values is `tests/consistency.rs`).
fn bench_one<W: Workload>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    workload: &WorkloadInfo,
    name: &str,
) {
    let mut w = W::new(workload.n);
    group.bench_function(name, |b| b.iter(|| black_box(&mut w).run()));
    // One more run, so that a workload filtered out on the command line (or simple_insert,
    // whose world appears in `run`) has something to observe.
    w.run();
    let observed = w.observe();
    assert!(
        observed[0].1 > 0.0,
        "{}/{name} sees no entities after the benchmark: {observed:?}",
        workload.group
    );
}

macro_rules! bench_group {
    ($c:expr, $group:expr, $ty:ident) => {{
        let workload = info($group);
        let mut group = $c.benchmark_group(workload.group);
        group.throughput(Throughput::Elements(workload.n as u64));
        macro_rules! one {
            ($name:expr, $path:ty) => {
                bench_one::<$path>(&mut group, workload, $name);
            };
        }
        for_each_impl!(one, $ty);
        group.finish();
    }};
}

fn simple_insert(c: &mut Criterion) {
    bench_group!(c, "simple_insert", SimpleInsert);
}

fn simple_iter_10k(c: &mut Criterion) {
    bench_group!(c, "simple_iter_10k", SimpleIter);
}

fn simple_iter_1m(c: &mut Criterion) {
    bench_group!(c, "simple_iter_1m", SimpleIter);
}

fn frag_iter(c: &mut Criterion) {
    bench_group!(c, "frag_iter", FragIter);
}

fn heavy_compute(c: &mut Criterion) {
    bench_group!(c, "heavy_compute", HeavyCompute);
}

fn schedule(c: &mut Criterion) {
    bench_group!(c, "schedule", Schedule);
}

fn add_remove(c: &mut Criterion) {
    bench_group!(c, "add_remove", AddRemove);
}

fn save_restore(c: &mut Criterion) {
    bench_group!(c, "save_restore", SaveRestore);
}

/// Short measurements, so that the whole suite (9 or 10 implementations × 7 workloads) runs in
/// about a quarter of an hour; the report takes medians.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(25)
        .warm_up_time(Duration::from_millis(700))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

type Group = fn(&mut Criterion);

/// Every group, in report order, with whether it runs in parallel.
const GROUPS: &[(&str, Group)] = &[
    ("simple_insert", simple_insert),
    ("simple_iter_10k", simple_iter_10k),
    ("simple_iter_1m", simple_iter_1m),
    ("frag_iter", frag_iter),
    ("heavy_compute", heavy_compute),
    ("schedule", schedule),
    ("add_remove", add_remove),
    ("save_restore", save_restore),
];

fn run_groups(parallel: bool) {
    let mut c = config();
    for &(group, bench) in GROUPS {
        if info(group).parallel == parallel {
            bench(&mut c);
        }
    }
    c.final_summary();
}

/// Sequential workloads run with criterion itself on the one worker of a one-thread rayon pool,
/// so that every rayon call in them (sigecs' passes) stays on that thread; parallel ones run
/// from the main thread, where rayon means its global pool (all cores).
fn main() {
    one_thread_pool().install(|| run_groups(false));
    run_groups(true);
}
