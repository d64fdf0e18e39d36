//! Parallel execution, each workload beside hand-written baselines over one `Vec` per field,
//! sequential and with rayon, in one criterion group:
//!
//! - `schedule`: 10,000 entities each of (A,B), (A,B,C), (A,B,C,D), (A,B,C,E); systems swap
//!   (A,B), (C,D), (C,E). Light work: the generated schedule must stay within 10% of the faster
//!   hand-written baseline (parallelism must never make it slower than a sequential loop),
//!   in steady state and over the first 100 frames of a fresh world
//!   (`generated_2_threads_first_100_frames` against `hand_sequential_first_100_frames`).
//!   `generated_stages_apart_1_thread` runs the same world built with its stages apart (two
//!   passes instead of one fused pass).
//! - `heavy_compute`: 10,000 entities whose Mat4 is inverted 100 times. Target: within 2% of
//!   the hand-written rayon loop, and close to 2× the single-thread time on 2 cores.
//! - `min_chunk`: a light system (position += velocity) over growing stores, run inline (one
//!   thread) and split across two threads with a small `min_chunk`: where splitting starts to
//!   pay sets `sigecs::schedule::DEFAULT_MIN_CHUNK`.
//! - `many_stores`: 60 signatures × 1,000 entities, `integrate`-like work; the schedule on 1
//!   and on 2 threads (jobs sized by measured work: 8 of 7,500 rows), and on 2 threads in 2
//!   jobs of 30,000 rows (the earlier sizing, forced with `min_chunk`); the same work by hand
//!   over 60 sets of `Vec`s, sequential and with rayon. Target: 2 threads at least 1.7× faster.
//!
//! - `spawning_pass`: the commands fixture's frame (`breed` spawns a child for each of 20,000
//!   spawners every third tick and despawns or renames the last one; `tick`, `age` and the
//!   rest around it) in a deterministic world, whose passes that may spawn run on one thread
//!   so that spawned ids do not depend on the thread count, on 1 and 2 threads, beside the same
//!   world with `set_deterministic(false)` on 2 threads, whose every pass may split: what the
//!   one-thread rule costs such a frame.
//!
//! `python3 benches/ratios.py schedule` (and `heavy_compute`, `min_chunk`, `spawning_pass`)
//! prints medians and ratios after a run.

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Mat4, Vec3};
use sigecs::rayon::{self, prelude::*};
use sigecs_fixtures::bench::{
    heavy_compute as hc, many_stores as ms, schedule as sc, simple_iter as si, simple_iter_columns,
};
use sigecs_fixtures::commands as cm;
use std::hint::black_box;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

const N: usize = 10_000;

fn schedule_world() -> sc::World {
    sc::world(N)
}

/// The same data by hand: one `Vec<f32>` per component per signature.
struct HandSchedule {
    ab: [Vec<f32>; 2],
    abc: [Vec<f32>; 3],
    abcd: [Vec<f32>; 4],
    abce: [Vec<f32>; 4],
}

impl HandSchedule {
    fn new() -> Self {
        let col = |v: f32| vec![v; N];
        HandSchedule {
            ab: [col(0.0), col(1.0)],
            abc: [col(0.0), col(1.0), col(2.0)],
            abcd: [col(0.0), col(1.0), col(2.0), col(3.0)],
            abce: [col(0.0), col(1.0), col(2.0), col(4.0)],
        }
    }

    fn swap(x: &mut [f32], y: &mut [f32]) {
        for (a, b) in x.iter_mut().zip(y.iter_mut()) {
            std::mem::swap(a, b);
        }
    }

    fn par_swap(x: &mut [f32], y: &mut [f32]) {
        x.par_iter_mut()
            .zip(y.par_iter_mut())
            .for_each(|(a, b)| std::mem::swap(a, b));
    }

    fn run(&mut self, swap: fn(&mut [f32], &mut [f32])) {
        // (A, B) in every group.
        for cols in [
            &mut self.ab[..],
            &mut self.abc[..],
            &mut self.abcd[..],
            &mut self.abce[..],
        ] {
            let (a, rest) = cols.split_at_mut(1);
            swap(&mut a[0], &mut rest[0]);
        }
        // (C, D), then (C, E).
        let (c, d) = self.abcd.split_at_mut(3);
        swap(&mut c[2], &mut d[0]);
        let (c, e) = self.abce.split_at_mut(3);
        swap(&mut c[2], &mut e[0]);
    }
}

fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.throughput(Throughput::Elements(4 * N as u64));
    let (one, two) = (pool(1), pool(2));
    let mut w = schedule_world();
    group.bench_function("generated_1_thread", |b| {
        one.install(|| b.iter(|| black_box(&mut w).run_schedule()))
    });
    group.bench_function("generated_2_threads", |b| {
        two.install(|| b.iter(|| black_box(&mut w).run_schedule()))
    });
    // The same world with its stages apart (`ab` and `cd`, then `ce`): what fusing them gives.
    let mut apart = sigecs_fixtures::bench::schedule_apart::world(N);
    group.bench_function("generated_stages_apart_1_thread", |b| {
        one.install(|| b.iter(|| black_box(&mut apart).run_schedule()))
    });
    // The first 100 frames of a fresh world (made outside the timing): the cold first
    // frames must not make the passes split for good.
    group.bench_function("generated_2_threads_first_100_frames", |b| {
        two.install(|| {
            b.iter_batched(
                schedule_world,
                |mut w| {
                    for _ in 0..100 {
                        black_box(&mut w).run_schedule();
                    }
                    w
                },
                criterion::BatchSize::LargeInput,
            )
        })
    });
    group.bench_function("hand_sequential_first_100_frames", |b| {
        b.iter_batched(
            HandSchedule::new,
            |mut hand| {
                for _ in 0..100 {
                    black_box(&mut hand).run(HandSchedule::swap);
                }
                hand
            },
            criterion::BatchSize::LargeInput,
        )
    });
    let mut hand = HandSchedule::new();
    group.bench_function("hand_sequential", |b| {
        b.iter(|| black_box(&mut hand).run(HandSchedule::swap))
    });
    group.bench_function("hand_rayon", |b| {
        two.install(|| b.iter(|| black_box(&mut hand).run(HandSchedule::par_swap)))
    });
    group.finish();
}

fn invert(m: &mut Mat4) {
    for _ in 0..100 {
        *m = m.inverse();
    }
}

fn heavy_compute(c: &mut Criterion) {
    let mut group = c.benchmark_group("heavy_compute");
    group.throughput(Throughput::Elements(N as u64));
    let (one, two) = (pool(1), pool(2));
    let mut w = hc::World::new();
    w.spawn_batch((0..N).map(|i| simple_iter_columns::Data {
        transform: si::Transform(Mat4::from_axis_angle(Vec3::X, i as f32 * 0.001)),
        position: si::Position(Vec3::X),
        rotation: si::Rotation(Vec3::X),
        velocity: si::Velocity(Vec3::X),
    }));
    group.bench_function("generated_1_thread", |b| {
        one.install(|| b.iter(|| black_box(&mut w).run_invert()))
    });
    group.bench_function("generated_2_threads", |b| {
        two.install(|| b.iter(|| black_box(&mut w).run_invert()))
    });
    let mut hand: Vec<Mat4> = (0..N)
        .map(|i| Mat4::from_axis_angle(Vec3::X, i as f32 * 0.001))
        .collect();
    group.bench_function("hand_sequential", |b| {
        b.iter(|| black_box(&mut hand).iter_mut().for_each(invert))
    });
    group.bench_function("hand_rayon", |b| {
        two.install(|| b.iter(|| black_box(&mut hand).par_iter_mut().for_each(invert)))
    });
    group.finish();
}

fn min_chunk(c: &mut Criterion) {
    let mut group = c.benchmark_group("min_chunk");
    let (one, two) = (pool(1), pool(2));
    for n in [4_096usize, 8_192, 16_384, 65_536, 262_144, 1_048_576] {
        group.throughput(Throughput::Elements(n as u64));
        let mut w = simple_iter_columns::World::new();
        w.spawn_batch((0..n).map(|_| simple_iter_columns::Data {
            transform: si::Transform(Mat4::IDENTITY),
            position: si::Position(Vec3::X),
            rotation: si::Rotation(Vec3::X),
            velocity: si::Velocity(Vec3::X),
        }));
        // Split as finely as the pool allows (chunks of n / 8), or not at all.
        w.set_min_chunk(Some(1));
        group.bench_function(BenchmarkId::new("inline", n), |b| {
            one.install(|| b.iter(|| black_box(&mut w).run_advance()))
        });
        group.bench_function(BenchmarkId::new("split_2_threads", n), |b| {
            two.install(|| b.iter(|| black_box(&mut w).run_advance()))
        });
    }
    group.finish();
}

/// Many stores: 60 signatures × 1,000 entities, `integrate`-like work per row. The runner
/// counts the rows of every store a pass visits, so the many small stores share the cores.
/// Target: 2 threads at least 1.7× faster than 1.
fn many_stores(c: &mut Criterion) {
    let mut group = c.benchmark_group("many_stores");
    let (one, two) = (pool(1), pool(2));
    let mut w = ms::World::new();
    ms::populate(&mut w, 1_000);
    group.throughput(Throughput::Elements(w.len() as u64));
    group.bench_function("generated_1_thread", |b| {
        one.install(|| b.iter(|| black_box(&mut w).run_schedule()))
    });
    group.bench_function("generated_2_threads", |b| {
        two.install(|| b.iter(|| black_box(&mut w).run_schedule()))
    });
    // The floor: the same data as 60 hand-written sets of three `Vec`s, in a sequential loop
    // and in a rayon loop over the sets (what the hardware gives two threads on this work).
    let mut hand: Vec<[Vec<Vec3>; 3]> = (0..60)
        .map(|_| {
            [
                (0..1_000).map(|i| Vec3::new(i as f32, 0.0, 0.0)).collect(),
                (0..1_000)
                    .map(|i| Vec3::new(0.0, 1.0, i as f32 * 0.01))
                    .collect(),
                vec![Vec3::new(0.0, -9.81, 0.0); 1_000],
            ]
        })
        .collect();
    let integrate = |set: &mut [Vec<Vec3>; 3]| {
        let dt = 1.0 / 60.0;
        let [p, v, a] = set;
        for ((p, v), a) in p.iter_mut().zip(v.iter_mut()).zip(a.iter()) {
            *v += *a * dt;
            *p += *v * dt;
        }
    };
    group.bench_function("hand_sequential", |b| {
        b.iter(|| black_box(&mut hand).iter_mut().for_each(integrate))
    });
    group.bench_function("hand_rayon_2_threads", |b| {
        two.install(|| b.iter(|| black_box(&mut hand).par_iter_mut().for_each(integrate)))
    });
    // The earlier sizing, jobs of at least `min_chunk` rows (2 of 30,000), forced, beside the
    // default's jobs sized by measured work (8 of 7,500).
    w.set_min_chunk(Some(30_000));
    group.bench_function("generated_2_threads_2_jobs", |b| {
        two.install(|| b.iter(|| black_box(&mut w).run_schedule()))
    });
    group.finish();
}

/// A frame that spawns: 20,000 spawners of the commands fixture, each frame `run_schedule`
/// (its commands that fail on purpose, against entities in undeclared sets, are ignored).
fn spawning_pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawning_pass");
    let (one, two) = (pool(1), pool(2));
    let world = |deterministic: bool| {
        let mut w = cm::World::new();
        w.spawn_batch((0..20_000).map(|i| cm::Spawner {
            pos: cm::Pos(i),
            timer: cm::Timer(i as u32 % 6),
            link: cm::Link(None),
        }));
        w.set_deterministic(deterministic);
        // Past the first frames, whose children are all new.
        for _ in 0..12 {
            let _ = w.run_schedule();
        }
        w
    };
    let frame = |w: &mut cm::World| {
        let _ = black_box(w).run_schedule();
    };
    let mut w = world(true);
    group.bench_function("deterministic_1_thread", |b| {
        one.install(|| b.iter(|| frame(&mut w)))
    });
    let mut w = world(true);
    group.bench_function("deterministic_2_threads", |b| {
        two.install(|| b.iter(|| frame(&mut w)))
    });
    let mut w = world(false);
    group.bench_function("split_2_threads", |b| {
        two.install(|| b.iter(|| frame(&mut w)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = schedule, heavy_compute, min_chunk, many_stores, spawning_pass
}
criterion_main!(benches);
