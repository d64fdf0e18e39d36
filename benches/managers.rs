//! Component managers against signature arrays, one criterion group each:
//!
//! - `point_mass` at 10,000 and 1,000,000 instances: `PointMassManager::simulate(dt)`
//!   (`manager_simulate`) against the generated `integrate` system over one `columns` store of
//!   (Position, Velocity, Acceleration, Mass) (`generated_columns`) and a hand-written loop over
//!   one `Vec` per field (`hand_vecs`); all do v += a·dt, p += v·dt.
//! - `two_managers_join` at 10,000 entities: p += v·dt where Position and Velocity live in two
//!   separate `#[derive(SoaManager)]` managers. As in a classic manager join, the loop walks the position
//!   manager's instances and looks each entity's velocity up in the other manager. Variants:
//!   hash or dense lookup, velocity manager filled in the same entity order or shuffled
//!   (`managers_{hash,dense}_{same_order,shuffled}`), against the generated system over one
//!   signature array holding both (`generated_one_store`) and two plain `Vec`s (`hand_vecs`).
//! - `transform_forest`: a `TransformManager` forest of 10,000 nodes in chains of 1 to 5 nodes,
//!   created level by level (roots first, so chains are scattered over the arrays). Per frame
//!   (one iteration) 1% (`1pct`: every 101st root, 34 of 3,334) or 100% (`100pct`) of the
//!   roots get a new local matrix, with `set_local` one at a time or one `set_local_many`; the
//!   `_sorted` variants run after `sort_parents_first`. `hand_chains` is the floor: contiguous
//!   chains in flat arrays, world[j] = world[j-1] * local[j].
//!
//! `python3 benches/ratios.py <group>` prints the medians and ratios to the fastest `hand_`
//! variant; `python3 benches/ratios.py two_managers_join generated` gives ratios to the
//! generated system.

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Mat4, Quat, Vec3};
use sigecs::entity::EntityManager;
use sigecs::rayon;
use sigecs::transform::{Instance, TransformManager};
use sigecs::{Entity, SoaManager};
use sigecs_demo::components::{
    physics as pm,
    resources::Time,
    signatures::{Body, Particle},
};
use sigecs_fixtures::point_mass::{PointMass, PointMassManager};
use std::hint::black_box;

const DT: f32 = 1.0 / 60.0;
const GRAVITY: Vec3 = Vec3::new(0.0, -9.81, 0.0);

// ---------------------------------------------------------------------------------------------
// point_mass
// ---------------------------------------------------------------------------------------------

fn entities(n: usize) -> Vec<Entity> {
    EntityManager::new()
        .create_many(n)
        .expect("the entity space holds the benchmark")
}

/// One `Vec` per field, as a hand-written structure of arrays.
struct PointMassVecs {
    _mass: Vec<f32>,
    position: Vec<Vec3>,
    velocity: Vec<Vec3>,
    acceleration: Vec<Vec3>,
}

fn point_mass(c: &mut Criterion) {
    let mut group = c.benchmark_group("point_mass");
    for n in [10_000usize, 1_000_000] {
        group.throughput(Throughput::Elements(n as u64));

        let mut manager = PointMassManager::with_capacity(n);
        for e in entities(n) {
            manager
                .create(
                    e,
                    PointMass {
                        mass: 1.0,
                        position: Vec3::ZERO,
                        velocity: Vec3::X,
                        acceleration: GRAVITY,
                    },
                )
                .unwrap();
        }
        group.bench_function(BenchmarkId::new("manager_simulate", n), |b| {
            b.iter(|| black_box(&mut manager).simulate(black_box(DT)))
        });
        drop(manager);

        let mut world = sigecs_demo::World::new();
        world.resource_mut::<Time>().dt = DT;
        world.spawn_batch((0..n).map(|_| Body {
            position: pm::Position(Vec3::ZERO),
            velocity: pm::Velocity(Vec3::X),
            acceleration: pm::Acceleration(GRAVITY),
            mass: pm::Mass(1.0),
        }));
        // On one thread, like the manager and the hand loop; the split is shown apart.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        group.bench_function(BenchmarkId::new("generated_columns", n), |b| {
            one.install(|| b.iter(|| black_box(&mut world).run_integrate()))
        });
        if n >= 100_000 {
            group.bench_function(BenchmarkId::new("generated_columns_2_threads", n), |b| {
                b.iter(|| black_box(&mut world).run_integrate())
            });
        }
        drop(world);

        let mut vecs = PointMassVecs {
            _mass: vec![1.0; n],
            position: vec![Vec3::ZERO; n],
            velocity: vec![Vec3::X; n],
            acceleration: vec![GRAVITY; n],
        };
        group.bench_function(BenchmarkId::new("hand_vecs", n), |b| {
            b.iter(|| {
                let s = black_box(&mut vecs);
                let dt = black_box(DT);
                for ((p, v), a) in s
                    .position
                    .iter_mut()
                    .zip(s.velocity.iter_mut())
                    .zip(s.acceleration.iter())
                {
                    *v += *a * dt;
                    *p += *v * dt;
                }
            })
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// two_managers_join
// ---------------------------------------------------------------------------------------------

/// A position held by its own manager (hash lookup).
#[derive(SoaManager)]
#[soa(manager = "PositionManager")]
pub struct PositionC {
    pub position: Vec3,
}

/// A velocity held by its own manager (hash lookup).
#[derive(SoaManager)]
#[soa(manager = "VelocityManager")]
pub struct VelocityC {
    pub velocity: Vec3,
}

/// A position held by its own manager (dense lookup).
#[derive(SoaManager)]
#[soa(manager = "DensePositionManager", lookup = "dense")]
pub struct DensePositionC {
    pub position: Vec3,
}

/// A velocity held by its own manager (dense lookup).
#[derive(SoaManager)]
#[soa(manager = "DenseVelocityManager", lookup = "dense")]
pub struct DenseVelocityC {
    pub velocity: Vec3,
}

const JOIN_N: usize = 10_000;

fn velocity_of(e: Entity) -> Vec3 {
    Vec3::new(1.0, (e.index() % 7) as f32, 0.5)
}

/// A deterministic shuffle (xorshift Fisher–Yates).
fn shuffled(mut v: Vec<Entity>) -> Vec<Entity> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// The manager join: walk the position manager, look each entity up in the velocity
/// manager. One macro for both lookups, since the managers are distinct types.
macro_rules! join_bench {
    ($group:expr, $name:expr, $pos:ty, $pos_row:ident, $vel:ty, $vel_row:ident, $order:expr) => {{
        let es = entities(JOIN_N);
        let mut positions = <$pos>::with_capacity(JOIN_N);
        for &e in &es {
            positions
                .create(
                    e,
                    $pos_row {
                        position: Vec3::ZERO,
                    },
                )
                .unwrap();
        }
        let mut velocities = <$vel>::with_capacity(JOIN_N);
        for e in $order(es) {
            velocities
                .create(
                    e,
                    $vel_row {
                        velocity: velocity_of(e),
                    },
                )
                .unwrap();
        }
        $group.bench_function(BenchmarkId::new($name, JOIN_N), |b| {
            b.iter(|| {
                let velocities = black_box(&velocities);
                let dt = black_box(DT);
                let columns = black_box(&mut positions).columns_mut();
                for (e, p) in columns.entities.iter().zip(columns.position.iter_mut()) {
                    if let Some(j) = velocities.lookup(*e) {
                        *p += *velocities.velocity(j) * dt;
                    }
                }
            })
        });
    }};
}

fn two_managers_join(c: &mut Criterion) {
    let n = JOIN_N;
    let mut group = c.benchmark_group("two_managers_join");
    group.throughput(Throughput::Elements(n as u64));

    // The bundled world's `drift` (p += v·dt) over `Particle`, a columns store: it reads the
    // position and velocity columns only, never the lifetime column.
    let mut world = sigecs_demo::World::new();
    world.resource_mut::<Time>().dt = DT;
    world.spawn_batch(entities(n).into_iter().map(|e| Particle {
        position: pm::Position(Vec3::ZERO),
        velocity: pm::Velocity(velocity_of(e)),
        lifetime: pm::Lifetime(f32::MAX),
    }));
    group.bench_function(BenchmarkId::new("generated_one_store", n), |b| {
        b.iter(|| black_box(&mut world).run_drift())
    });
    drop(world);

    let same = |es: Vec<Entity>| es;
    join_bench!(
        group,
        "managers_hash_same_order",
        PositionManager,
        PositionC,
        VelocityManager,
        VelocityC,
        same
    );
    join_bench!(
        group,
        "managers_hash_shuffled",
        PositionManager,
        PositionC,
        VelocityManager,
        VelocityC,
        shuffled
    );
    join_bench!(
        group,
        "managers_dense_same_order",
        DensePositionManager,
        DensePositionC,
        DenseVelocityManager,
        DenseVelocityC,
        same
    );
    join_bench!(
        group,
        "managers_dense_shuffled",
        DensePositionManager,
        DensePositionC,
        DenseVelocityManager,
        DenseVelocityC,
        shuffled
    );

    let mut position = vec![Vec3::ZERO; n];
    let velocity: Vec<Vec3> = entities(n).into_iter().map(velocity_of).collect();
    group.bench_function(BenchmarkId::new("hand_vecs", n), |b| {
        b.iter(|| {
            let dt = black_box(DT);
            for (p, v) in black_box(&mut position).iter_mut().zip(&velocity) {
                *p += *v * dt;
            }
        })
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// transform_forest
// ---------------------------------------------------------------------------------------------

const FOREST_NODES: usize = 10_000;
const MAX_CHAIN: usize = 5;
/// Root step for the 1% frame (see [`moved_roots`]).
const ONE_PERCENT: usize = 101;

/// Chain lengths 1, 2, 3, 4, 5, 1, 2, … summing to exactly `FOREST_NODES`.
fn chain_lengths() -> Vec<usize> {
    let mut lens = Vec::new();
    let mut total = 0;
    while total < FOREST_NODES {
        let len = (lens.len() % MAX_CHAIN + 1).min(FOREST_NODES - total);
        lens.push(len);
        total += len;
    }
    lens
}

/// The local matrix of a non-root node.
fn child_local() -> Mat4 {
    Mat4::from_rotation_translation(Quat::from_rotation_z(0.1), Vec3::new(1.0, 0.0, 0.0))
}

/// A root's local matrix in frame `frame`.
fn root_local(frame: u32, k: usize) -> Mat4 {
    Mat4::from_translation(Vec3::new(frame as f32 * 0.01, k as f32, 0.0))
}

/// The forest, created level by level (every root, then every second node, …) so that a
/// chain's nodes are far apart in the arrays until `sort_parents_first`. Returns the manager
/// and the root entities.
fn forest() -> (TransformManager, Vec<Entity>) {
    let lens = chain_lengths();
    let mut em = EntityManager::new();
    let mut tm = TransformManager::with_capacity(FOREST_NODES);
    let mut last: Vec<Instance> = Vec::with_capacity(lens.len());
    let mut roots = Vec::with_capacity(lens.len());
    for _ in &lens {
        let e = em.create().unwrap();
        last.push(tm.create(e, Mat4::IDENTITY).unwrap());
        roots.push(e);
    }
    for depth in 1..MAX_CHAIN {
        for (chain, &len) in lens.iter().enumerate() {
            if depth < len {
                let e = em.create().unwrap();
                let i = tm.create(e, child_local()).unwrap();
                tm.link(i, last[chain]).unwrap();
                last[chain] = i;
            }
        }
    }
    assert_eq!(tm.len(), FOREST_NODES);
    (tm, roots)
}

/// The moved roots for a fraction: every root (`step` 1), or every `step`-th. `ONE_PERCENT` is
/// 101, not 100: chain lengths cycle with period 5, so every 100th chain would always be a
/// single node, while every 101st walks through all five lengths.
fn moved_roots(tm: &TransformManager, roots: &[Entity], step: usize) -> Vec<Instance> {
    roots
        .iter()
        .step_by(step)
        .map(|&e| tm.lookup(e).unwrap())
        .collect()
}

/// Hand-written chains: one contiguous range per chain, root first.
struct Chains {
    local: Vec<Mat4>,
    world: Vec<Mat4>,
    /// (start, len) of each chain.
    ranges: Vec<(u32, u32)>,
}

impl Chains {
    fn new() -> Self {
        let mut c = Chains {
            local: Vec::with_capacity(FOREST_NODES),
            world: Vec::with_capacity(FOREST_NODES),
            ranges: Vec::new(),
        };
        for len in chain_lengths() {
            c.ranges.push((c.local.len() as u32, len as u32));
            c.local.push(Mat4::IDENTITY);
            c.world.push(Mat4::IDENTITY);
            for _ in 1..len {
                c.local.push(child_local());
                let w = *c.world.last().unwrap() * child_local();
                c.world.push(w);
            }
        }
        c
    }

    #[inline]
    fn set_root(&mut self, chain: usize, m: Mat4) {
        let (start, len) = self.ranges[chain];
        let (start, end) = (start as usize, (start + len) as usize);
        self.local[start] = m;
        self.world[start] = m;
        for j in start + 1..end {
            self.world[j] = self.world[j - 1] * self.local[j];
        }
    }
}

fn transform_forest(c: &mut Criterion) {
    let mut group = c.benchmark_group("transform_forest");
    for (param, step) in [("1pct", ONE_PERCENT), ("100pct", 1)] {
        for sorted in [false, true] {
            let suffix = if sorted { "_sorted" } else { "" };
            let (mut tm, roots) = forest();
            if sorted {
                tm.sort_parents_first();
            }
            let moved = moved_roots(&tm, &roots, step);
            group.throughput(Throughput::Elements(moved.len() as u64));

            let mut frame = 0u32;
            group.bench_function(BenchmarkId::new(format!("set_local{suffix}"), param), |b| {
                b.iter(|| {
                    frame = frame.wrapping_add(1);
                    let tm = black_box(&mut tm);
                    for (k, &i) in moved.iter().enumerate() {
                        tm.set_local(i, root_local(frame, k)).unwrap();
                    }
                })
            });

            let mut batch: Vec<(Instance, Mat4)> = Vec::with_capacity(moved.len());
            group.bench_function(
                BenchmarkId::new(format!("set_local_many{suffix}"), param),
                |b| {
                    b.iter(|| {
                        frame = frame.wrapping_add(1);
                        batch.clear();
                        batch.extend(
                            moved
                                .iter()
                                .enumerate()
                                .map(|(k, &i)| (i, root_local(frame, k))),
                        );
                        black_box(&mut tm).set_local_many(&batch).unwrap()
                    })
                },
            );

            // Every node's world matrix is still its parent's times its local.
            for i in (0..tm.len() as u32).map(Instance::new) {
                let want = match tm.parent(i).unwrap() {
                    Some(p) => tm.world(p).unwrap() * tm.local(i).unwrap(),
                    None => tm.local(i).unwrap(),
                };
                assert_eq!(tm.world(i).unwrap(), want);
            }
        }

        let mut chains = Chains::new();
        let moved: Vec<usize> = (0..chains.ranges.len()).step_by(step).collect();
        group.throughput(Throughput::Elements(moved.len() as u64));
        let mut frame = 0u32;
        group.bench_function(BenchmarkId::new("hand_chains", param), |b| {
            b.iter(|| {
                frame = frame.wrapping_add(1);
                let chains = black_box(&mut chains);
                for (k, &chain) in moved.iter().enumerate() {
                    chains.set_root(chain, root_local(frame, k));
                }
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = point_mass, two_managers_join, transform_forest
}
criterion_main!(benches);
