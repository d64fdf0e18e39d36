//! Structural workloads of ecs_bench_suite, one criterion group each, the generated
//! world beside hand-written baselines:
//!
//! - `add_remove`: 10,000 entities with an `A`; add a `B` to every entity, then remove it from
//!   every entity (20,000 moves between two stores per iteration, back to the all-`A` state).
//!   `generated` uses `insert`/`remove`, `generated_batch` `insert_batch`/`remove_batch`;
//!   `hand_sparse` keeps `B` in a `Vec<Option<f32>>`
//!   indexed by entity (set, then cleared); `hand_tables` moves rows between two hand-written
//!   tables with a location array, the same work the generated world does;
//!   `generated_dynamic` adds and removes a component no signature declares with `A`, so
//!   every entity moves to and from a dynamic store (byte-wise moves along cached edges),
//!   `generated_dynamic_batch` the same through `insert_batch`/`remove_batch`;
//!   `generated_sparse` adds and removes a `#[component(sparse)]` one (no row moves).
//!   Target: `generated` under 100 µs.
//! - `frag_iter`: 26 signatures of 20 entities, each with a `Data` and its own letter; double
//!   every `Data`. `generated_system` runs `#[system] fn double`, `query_for_each` uses
//!   `world.query_mut::<&mut Data>()`, `hand_26_vecs` loops over 26 `Vec<f32>` and
//!   `hand_26_vecs_blocks` does so in blocks of 4 values (as the passes do); `sparse_walk`
//!   runs the same system with `Data` a `#[component(sparse)]` (its pass walks one packed
//!   array), `sparse_query_for_each` the same through `query_mut` (which walks the set too),
//!   `hand_one_vec` doubles the 520 values in one `Vec`: the floor.
//!   Targets: `generated_system` within 20% of `hand_26_vecs_blocks`, `sparse_walk` within 20% of
//!   `hand_one_vec`.
//! - `simple_insert`: a fresh world each iteration, then 10,000 entities of (Transform,
//!   Position, Rotation, Velocity) with `spawn` one by one (`generated_spawn`) and with
//!   `spawn_batch` (`generated_spawn_batch`), against pushing the same values into one reserved
//!   `Vec` per field (`hand_vecs`), and without `reserve` (`hand_vecs_grow`, the growth
//!   pattern of `spawn`). Creating and dropping the containers is timed for all.
//!   Target: `generated_spawn_batch` no slower than `hand_vecs`.
//!
//! - `sparse_read`: 10,000 entities of `{A, B}` that also have a sparse `SparseB` of the same
//!   value; `table` runs `#[system] fn add_from_table(a: &mut A, b: &B)`, `sparse` runs
//!   `add_from_sparse(a: &mut A, b: &SparseB)`: the cost of finding a component by entity in
//!   its sparse set instead of walking its column.
//!
//! `python3 benches/ratios.py <group>` prints the medians and ratios after a run.

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Mat4, Vec3};
use sigecs::Entity;
use sigecs_fixtures::bench::add_remove::{self as ar, AWithB, JustA};
use sigecs_fixtures::bench::frag_iter::{self as fi, *};
use sigecs_fixtures::bench::frag_iter_sparse as fi_sparse;
use sigecs_fixtures::bench::{simple_iter as si, simple_iter_columns as columns};
use std::hint::black_box;

// ---------------------------------------------------------------------------------------------
// add_remove
// ---------------------------------------------------------------------------------------------

const ADD_REMOVE_N: usize = 10_000;

/// `B` stored sparsely: one slot per entity index, `None` when absent.
struct Sparse {
    _a: Vec<f32>,
    b: Vec<Option<f32>>,
}

/// Where a hand-written table entity lives: table 0 holds `A`, table 1 holds `A` and `B`.
#[derive(Clone, Copy)]
struct Loc {
    table: u32,
    row: u32,
}

/// Two hand-written archetype tables and a location per entity index: the moves the generated
/// world makes, without generations, error paths or generated dispatch.
#[derive(Default)]
struct Tables {
    loc: Vec<Loc>,
    a_ids: Vec<u32>,
    a_a: Vec<f32>,
    ab_ids: Vec<u32>,
    ab_a: Vec<f32>,
    ab_b: Vec<f32>,
}

impl Tables {
    fn new(n: usize) -> Self {
        let mut t = Tables::default();
        for i in 0..n {
            t.loc.push(Loc {
                table: 0,
                row: i as u32,
            });
            t.a_ids.push(i as u32);
            t.a_a.push(i as f32);
        }
        t
    }

    #[inline]
    fn add_b(&mut self, id: u32, b: f32) {
        let loc = self.loc[id as usize];
        assert_eq!(loc.table, 0, "entity already has a B");
        let row = loc.row as usize;
        let a = self.a_a.swap_remove(row);
        self.a_ids.swap_remove(row);
        if let Some(&moved) = self.a_ids.get(row) {
            self.loc[moved as usize].row = row as u32;
        }
        self.loc[id as usize] = Loc {
            table: 1,
            row: self.ab_ids.len() as u32,
        };
        self.ab_ids.push(id);
        self.ab_a.push(a);
        self.ab_b.push(b);
    }

    #[inline]
    fn remove_b(&mut self, id: u32) -> f32 {
        let loc = self.loc[id as usize];
        assert_eq!(loc.table, 1, "entity has no B");
        let row = loc.row as usize;
        let a = self.ab_a.swap_remove(row);
        let b = self.ab_b.swap_remove(row);
        self.ab_ids.swap_remove(row);
        if let Some(&moved) = self.ab_ids.get(row) {
            self.loc[moved as usize].row = row as u32;
        }
        self.loc[id as usize] = Loc {
            table: 0,
            row: self.a_ids.len() as u32,
        };
        self.a_ids.push(id);
        self.a_a.push(a);
        b
    }
}

fn sparse_read(c: &mut Criterion) {
    let n = ADD_REMOVE_N;
    let mut group = c.benchmark_group("sparse_read");
    group.throughput(Throughput::Elements(n as u64));
    let mut world = ar::World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..n).map(|i| AWithB {
        a: ar::A(0.0),
        b: ar::B(i as f32),
    }));
    for (i, &e) in entities.iter().enumerate() {
        world.insert(e, ar::SparseB(i as f32)).unwrap();
    }
    // One run of each adds the same value to every `A`.
    world.run_add_from_table();
    world.run_add_from_sparse();
    let doubled = |w: &ar::World| {
        (entities.iter().enumerate()).all(|(i, &e)| w.get::<ar::A>(e).unwrap().0 == 2.0 * i as f32)
    };
    assert!(doubled(&world));
    group.bench_function(BenchmarkId::new("table", n), |b| {
        b.iter(|| black_box(&mut world).run_add_from_table())
    });
    group.bench_function(BenchmarkId::new("sparse", n), |b| {
        b.iter(|| black_box(&mut world).run_add_from_sparse())
    });
}

fn add_remove(c: &mut Criterion) {
    let n = ADD_REMOVE_N;
    let mut group = c.benchmark_group("add_remove");
    group.throughput(Throughput::Elements(2 * n as u64));

    let mut world = ar::World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..n).map(|i| JustA { a: ar::A(i as f32) }));
    // The fixture declares {A, B}; spawning one proves the store exists before timing.
    let probe = world.spawn(AWithB {
        a: ar::A(0.0),
        b: ar::B(0.0),
    });
    world.despawn(probe);
    group.bench_function(BenchmarkId::new("generated", n), |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            for &e in &entities {
                world.insert(e, ar::B(1.0)).unwrap();
            }
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += world.remove::<ar::B>(e).unwrap().0;
            }
            sum
        })
    });
    assert_eq!(world.len(), n);
    assert!(entities.iter().all(|&e| world.get::<ar::B>(e).is_none()));
    // The same moves through the batch calls.
    let mut removed = Vec::with_capacity(n);
    group.bench_function(BenchmarkId::new("generated_batch", n), |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            world
                .insert_batch(entities.iter().map(|&e| (e, ar::B(1.0))))
                .unwrap();
            removed.clear();
            world
                .remove_batch::<ar::B>(&entities, &mut removed)
                .unwrap();
            removed.iter().map(|b| b.0).sum::<f32>()
        })
    });
    assert!(entities.iter().all(|&e| world.get::<ar::B>(e).is_none()));
    // Through a dynamic store: {A, Extra} is declared nowhere.
    group.bench_function(BenchmarkId::new("generated_dynamic", n), |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            for &e in &entities {
                world.insert(e, ar::Extra(1.0)).unwrap();
            }
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += world.remove::<ar::Extra>(e).unwrap().0;
            }
            sum
        })
    });
    assert!(world.undeclared().iter().all(|u| u.rows == 0));
    // The same through the batch calls.
    let mut removed = Vec::with_capacity(n);
    group.bench_function(BenchmarkId::new("generated_dynamic_batch", n), |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            world
                .insert_batch(entities.iter().map(|&e| (e, ar::Extra(1.0))))
                .unwrap();
            removed.clear();
            world
                .remove_batch::<ar::Extra>(&entities, &mut removed)
                .unwrap();
            removed.iter().map(|x| x.0).sum::<f32>()
        })
    });
    assert!(world.undeclared().iter().all(|u| u.rows == 0));
    // A sparse component: set and cleared in its sparse set, no row moves.
    group.bench_function(BenchmarkId::new("generated_sparse", n), |b| {
        b.iter(|| {
            let world = black_box(&mut world);
            for &e in &entities {
                world.insert(e, ar::SparseB(1.0)).unwrap();
            }
            let mut sum = 0.0f32;
            for &e in &entities {
                sum += world.remove::<ar::SparseB>(e).unwrap().0;
            }
            sum
        })
    });
    assert!(entities
        .iter()
        .all(|&e| world.get::<ar::SparseB>(e).is_none()));
    drop(world);

    let mut sparse = Sparse {
        _a: (0..n).map(|i| i as f32).collect(),
        b: vec![None; n],
    };
    let ids: Vec<u32> = (0..n as u32).collect();
    group.bench_function(BenchmarkId::new("hand_sparse", n), |b| {
        b.iter(|| {
            let s = black_box(&mut sparse);
            for &id in &ids {
                s.b[id as usize] = Some(1.0);
            }
            let mut sum = 0.0f32;
            for &id in &ids {
                sum += s.b[id as usize].take().expect("B was just added");
            }
            sum
        })
    });
    drop(sparse);

    let mut tables = Tables::new(n);
    group.bench_function(BenchmarkId::new("hand_tables", n), |b| {
        b.iter(|| {
            let t = black_box(&mut tables);
            for &id in &ids {
                t.add_b(id, 1.0);
            }
            let mut sum = 0.0f32;
            for &id in &ids {
                sum += t.remove_b(id);
            }
            sum
        })
    });
    assert_eq!(tables.a_ids.len(), n);
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// frag_iter
// ---------------------------------------------------------------------------------------------

const FRAG_PER_SIGNATURE: usize = 20;
const FRAG_SIGNATURES: usize = 26;

fn frag_world() -> fi::World {
    let w = fi::world(FRAG_PER_SIGNATURE);
    assert_eq!(w.len(), FRAG_SIGNATURES * FRAG_PER_SIGNATURE);
    w
}

fn frag_iter(c: &mut Criterion) {
    let n = FRAG_SIGNATURES * FRAG_PER_SIGNATURE;
    let mut group = c.benchmark_group("frag_iter");
    group.throughput(Throughput::Elements(n as u64));

    let mut world = frag_world();
    group.bench_function(BenchmarkId::new("generated_system", n), |b| {
        b.iter(|| black_box(&mut world).run_double())
    });
    drop(world);

    let mut world = frag_world();
    group.bench_function(BenchmarkId::new("query_for_each", n), |b| {
        b.iter(|| {
            black_box(&mut world)
                .query_mut::<&mut Data>()
                .unwrap()
                .for_each(|d| d.0 *= 2.0)
        })
    });
    assert_eq!(world.query::<&Data>().count(), n);
    drop(world);

    // `Data` kept in a sparse set: `double` walks its 520 packed values.
    let mut world = fi_sparse::world(FRAG_PER_SIGNATURE);
    assert_eq!(world.len(), n);
    group.bench_function(BenchmarkId::new("sparse_walk", n), |b| {
        b.iter(|| black_box(&mut world).run_double())
    });
    group.bench_function(BenchmarkId::new("sparse_query_for_each", n), |b| {
        b.iter(|| {
            black_box(&mut world)
                .query_mut::<&mut fi_sparse::Data>()
                .unwrap()
                .for_each(|d| d.0 *= 2.0)
        })
    });
    drop(world);

    // The floor: the 520 values in one `Vec`.
    let mut one: Vec<f32> = vec![1.0; n];
    group.bench_function(BenchmarkId::new("hand_one_vec", n), |b| {
        b.iter(|| {
            for x in black_box(&mut one).iter_mut() {
                *x *= 2.0;
            }
        })
    });

    let mut vecs: Vec<Vec<f32>> = vec![vec![1.0; FRAG_PER_SIGNATURE]; FRAG_SIGNATURES];
    group.bench_function(BenchmarkId::new("hand_26_vecs", n), |b| {
        b.iter(|| {
            for v in black_box(&mut vecs).iter_mut() {
                for x in v.iter_mut() {
                    *x *= 2.0;
                }
            }
        })
    });
    // The same loops in blocks of 4 values, as the generated passes walk rows: the floor of
    // one array per set.
    group.bench_function(BenchmarkId::new("hand_26_vecs_blocks", n), |b| {
        b.iter(|| {
            for v in black_box(&mut vecs).iter_mut() {
                let (blocks, rest) = v.as_chunks_mut::<4>();
                for block in blocks {
                    for x in block {
                        *x *= 2.0;
                    }
                }
                for x in rest {
                    *x *= 2.0;
                }
            }
        })
    });
    group.finish();
}

// ---------------------------------------------------------------------------------------------
// simple_insert
// ---------------------------------------------------------------------------------------------

const INSERT_N: usize = 10_000;

fn transform() -> Mat4 {
    Mat4::from_scale(Vec3::ONE)
}

fn row() -> columns::Data {
    columns::Data {
        transform: si::Transform(transform()),
        position: si::Position(Vec3::X),
        rotation: si::Rotation(Vec3::X),
        velocity: si::Velocity(Vec3::X),
    }
}

/// One reserved `Vec` per field.
struct VecPerField {
    transform: Vec<Mat4>,
    position: Vec<Vec3>,
    rotation: Vec<Vec3>,
    velocity: Vec<Vec3>,
}

fn simple_insert(c: &mut Criterion) {
    let n = INSERT_N;
    let mut group = c.benchmark_group("simple_insert");
    group.throughput(Throughput::Elements(n as u64));

    group.bench_function(BenchmarkId::new("generated_spawn", n), |b| {
        b.iter(|| {
            let mut world = columns::World::new();
            for _ in 0..black_box(n) {
                world.spawn(row());
            }
            world
        })
    });

    group.bench_function(BenchmarkId::new("generated_spawn_batch", n), |b| {
        b.iter(|| {
            let mut world = columns::World::new();
            let entities = world.spawn_batch((0..black_box(n)).map(|_| row()));
            (world, entities)
        })
    });

    group.bench_function(BenchmarkId::new("hand_vecs", n), |b| {
        b.iter(|| {
            let n = black_box(n);
            let mut soa = VecPerField {
                transform: Vec::new(),
                position: Vec::new(),
                rotation: Vec::new(),
                velocity: Vec::new(),
            };
            soa.transform.reserve(n);
            soa.position.reserve(n);
            soa.rotation.reserve(n);
            soa.velocity.reserve(n);
            for _ in 0..n {
                soa.transform.push(transform());
                soa.position.push(Vec3::X);
                soa.rotation.push(Vec3::X);
                soa.velocity.push(Vec3::X);
            }
            soa
        })
    });

    // The same without `reserve`: the growth pattern of `spawn` one by one.
    group.bench_function(BenchmarkId::new("hand_vecs_grow", n), |b| {
        b.iter(|| {
            let mut soa = VecPerField {
                transform: Vec::new(),
                position: Vec::new(),
                rotation: Vec::new(),
                velocity: Vec::new(),
            };
            for _ in 0..black_box(n) {
                soa.transform.push(transform());
                soa.position.push(Vec3::X);
                soa.rotation.push(Vec3::X);
                soa.velocity.push(Vec3::X);
            }
            soa
        })
    });
    group.finish();
}

/// What making a dynamic store costs: the first insert of a component no signature declares
/// with the entity's others (the store, its description, its edge and the systems' lists are
/// made), against the same insert once they exist, each in a world of one entity.
fn first_dynamic_move(c: &mut Criterion) {
    let mut group = c.benchmark_group("first_dynamic_move");
    let fresh = || {
        let mut world = ar::World::new();
        let e = world.spawn(JustA { a: ar::A(1.0) });
        (world, e)
    };
    group.bench_function("first", |b| {
        b.iter_batched_ref(
            fresh,
            |(world, e)| world.insert(*e, ar::Extra(1.0)).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("again", |b| {
        b.iter_batched_ref(
            || {
                let (mut world, e) = fresh();
                world.insert(e, ar::Extra(1.0)).unwrap();
                world.remove::<ar::Extra>(e).unwrap();
                (world, e)
            },
            |(world, e)| world.insert(*e, ar::Extra(1.0)).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = add_remove, sparse_read, frag_iter, simple_insert, first_dynamic_move
}
criterion_main!(benches);
