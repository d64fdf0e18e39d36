//! Parenting at any depth: `hierarchy_build` parents N entities (10,000, 100,000 and
//! 1,000,000) into one chain, built from the root down or from the leaf up, against a wide tree
//! of the same size (one parent, N − 1 children). Each is built through the world's own
//! hierarchy (`World::set_parent`, and through `Commands` in one stage), and with a standalone
//! `TransformManager` (`link`). Every entity has a transform (a translation) before the timing
//! starts; the timed part is the parenting and one read of the last entity's world transform,
//! which brings any deferred update up to date. Target: the chains within 2× the wide tree at
//! every size (linear in N whatever the depth).
//!
//! `python3 benches/ratios.py hierarchy_build world_wide` prints the medians and the ratios to
//! the world's wide tree after a run.
//!
//! Instruction counts, free of the machine's noise: `HIERARCHY_ONCE=VARIANT/SHAPE/N` (say
//! `manager/chain_leaf_up/1000000`) builds one tree and exits, and callgrind counts the timed
//! part alone, the `parent_*` functions:
//!
//! ```sh
//! cargo bench --bench hierarchy --no-run
//! HIERARCHY_ONCE=world/wide/1000000 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='hierarchy::parent_*' target/release/deps/hierarchy-*[^d]
//! ```

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, BatchSize, BenchmarkId, Criterion};
use sigecs::entity::EntityManager;
use sigecs::glam::{Mat4, Vec3};
use sigecs::transform::{Instance, TransformManager};
use sigecs::Entity;
use sigecs_fixtures::hierarchy::{Adoptions, Drone, DroneBody, World};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];

/// Which tree, as (child, parent) pairs in the order they are made.
#[derive(Clone, Copy)]
enum Shape {
    /// Entity 0 is the parent of every other.
    Wide,
    /// Entity k is the child of k − 1, parented from the root down.
    RootDown,
    /// The same chain, parented from the leaf up: each link puts the chain built so far under
    /// a new root.
    LeafUp,
}

impl Shape {
    fn pairs(self, n: usize) -> Vec<(usize, usize)> {
        match self {
            Shape::Wide => (1..n).map(|k| (k, 0)).collect(),
            Shape::RootDown => (1..n).map(|k| (k, k - 1)).collect(),
            Shape::LeafUp => (1..n).rev().map(|k| (k, k - 1)).collect(),
        }
    }

    /// The entity whose world transform is read last: the deepest.
    fn last(self, n: usize) -> usize {
        n - 1
    }
}

const SHAPES: [(&str, Shape); 3] = [
    ("wide", Shape::Wide),
    ("chain_root_down", Shape::RootDown),
    ("chain_leaf_up", Shape::LeafUp),
];

fn local(k: usize) -> Mat4 {
    Mat4::from_translation(Vec3::new(1.0, (k % 3) as f32, 0.0))
}

/// A world of `n` drones, each with a transform and no parent.
fn world(n: usize) -> (World, Vec<Entity>) {
    let mut w = World::new();
    let es = w.spawn_batch((0..n as u32).map(|k| DroneBody { drone: Drone(k) }));
    let transforms: Vec<(Entity, Mat4)> =
        es.iter().enumerate().map(|(k, &e)| (e, local(k))).collect();
    w.set_transforms(&transforms).unwrap();
    (w, es)
}

/// A standalone manager of `n` roots.
fn manager(n: usize) -> (TransformManager, Vec<Instance>) {
    let mut em = EntityManager::new();
    let mut tm = TransformManager::with_capacity(n);
    let instances = (0..n)
        .map(|k| tm.create(em.create().unwrap(), local(k)).unwrap())
        .collect();
    (tm, instances)
}

/// The timed part through the world: every parenting, then a read of the deepest entity.
#[inline(never)]
fn parent_world(w: &mut World, es: &[Entity], pairs: &[(usize, usize)], last: usize) {
    for &(c, p) in pairs {
        w.set_parent(es[c], es[p]).unwrap();
    }
    black_box(w.world_transform(es[last]));
}

/// The timed part through `Commands`: one stage applies every parenting, then a read.
#[inline(never)]
fn parent_commands(w: &mut World, es: &[Entity], last: usize) {
    w.run_adopt().unwrap();
    black_box(w.world_transform(es[last]));
}

/// The timed part with a standalone manager: every link, then a read.
#[inline(never)]
fn parent_manager(
    tm: &mut TransformManager,
    is: &[Instance],
    pairs: &[(usize, usize)],
    last: usize,
) {
    for &(c, p) in pairs {
        tm.link(is[c], is[p]).unwrap();
    }
    black_box(tm.world(is[last]).unwrap());
}

/// A world of `n` drones with the parentings of `pairs` waiting as `adopt`'s requests.
fn world_with_requests(n: usize, pairs: &[(usize, usize)]) -> (World, Vec<Entity>) {
    let (mut w, es) = world(n);
    w.resource_mut::<Adoptions>().pairs = pairs.iter().map(|&(c, p)| (es[c], es[p])).collect();
    (w, es)
}

fn hierarchy_build(c: &mut Criterion) {
    let mut group = c.benchmark_group("hierarchy_build");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in SIZES {
        for (name, shape) in SHAPES {
            let pairs = shape.pairs(n);
            let last = shape.last(n);
            let id = |variant: &str| BenchmarkId::new(format!("{variant}_{name}"), n);
            group.bench_function(id("world"), |b| {
                b.iter_batched(
                    || world(n),
                    |(mut w, es)| {
                        parent_world(&mut w, &es, &pairs, last);
                        (w, es)
                    },
                    BatchSize::PerIteration,
                )
            });
            group.bench_function(id("commands"), |b| {
                b.iter_batched(
                    || world_with_requests(n, &pairs),
                    |(mut w, es)| {
                        parent_commands(&mut w, &es, last);
                        (w, es)
                    },
                    BatchSize::PerIteration,
                )
            });
            group.bench_function(id("manager"), |b| {
                b.iter_batched(
                    || manager(n),
                    |(mut tm, is)| {
                        parent_manager(&mut tm, &is, &pairs, last);
                        (tm, is)
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

/// `VARIANT/SHAPE/N`: one build, for callgrind.
fn build_once(spec: &str) {
    let parts: Vec<&str> = spec.split('/').collect();
    let [variant, shape, n] = parts[..] else {
        panic!("HIERARCHY_ONCE is VARIANT/SHAPE/N, not {spec}");
    };
    let shape = SHAPES
        .iter()
        .find(|(name, _)| *name == shape)
        .unwrap_or_else(|| panic!("no shape {shape}"))
        .1;
    let n: usize = n.parse().expect("N is a number");
    let (pairs, last) = (shape.pairs(n), shape.last(n));
    match variant {
        "world" => {
            let (mut w, es) = world(n);
            parent_world(&mut w, &es, &pairs, last);
        }
        "commands" => {
            let (mut w, es) = world_with_requests(n, &pairs);
            parent_commands(&mut w, &es, last);
        }
        "manager" => {
            let (mut tm, is) = manager(n);
            parent_manager(&mut tm, &is, &pairs, last);
        }
        _ => panic!("no variant {variant} (world, commands, manager)"),
    }
}

criterion_group!(benches, hierarchy_build);

fn main() {
    if let Ok(spec) = std::env::var("HIERARCHY_ONCE") {
        build_once(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
