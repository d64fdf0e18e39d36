//! Fixed work for instruction counts (callgrind), where the shared machine's timing noise hides
//! a few percent: `instructions WORKLOAD ITERATIONS` builds the workload's world and runs it
//! ITERATIONS times on one thread. The cost of one iteration is the difference between two
//! counts, e.g.
//!
//! ```sh
//! cargo bench --bench instructions --no-run
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/instructions-* simple_iter 0
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/deps/instructions-* simple_iter 1000
//! ```
//!
//! Workloads: `simple_iter` (10,000 rows, `run_advance`), `query_next` and `query_fold` (the
//! same update through `query_mut`, item by item in a `for` loop and with `for_each`),
//! `schedule` (4 × 10,000 rows, `run_schedule`), `frag_iter` (26 stores × 20 rows,
//! `run_double`), `frag_query` (the same through `query_mut` and `for_each`), `frag_sparse` (the same with
//! `Data` a `#[component(sparse)]`: the pass walks its 520 packed values), `frag_query_sparse`
//! (that world through `query_mut` and `for_each`, which walks the set too), `frag_tables` (the same,
//! its pass taking the 26 stores from a table instead of a line of code each), `frag_floor`
//! (the same 520 values in one `Vec`, doubled by a hand loop), `soa_churn` (a structure-of-arrays
//! manager of `(f32, [f32; 3], [f32; 3], [f32; 3])` filled with 1,000,000 instances from empty,
//! then half of them destroyed) and `soa_churn_presized` (the same with the room reserved first:
//! the difference is the cost of growing), `add_remove` (10,000 entities with an `A`: insert a
//! `B` into each, then remove it, moving every entity between two declared stores and back) and
//! `add_remove_dynamic` (the same with a component no signature declares with `A`) and
//! `add_remove_sparse` (the same with a `#[component(sparse)]` one), `add_remove_batch`
//! (`add_remove`'s moves through `insert_batch` and `remove_batch`), and `spawn` (10,000
//! `spawn`s of simple_iter's signature into a world that reuses its rows, then `clear`).

#![allow(missing_docs)]

use sigecs::rayon;
use sigecs::soa::{DenseLookup, SoaStore};
use sigecs::Entity;
use sigecs_fixtures::bench::{
    add_remove as ar, frag_iter as fi, frag_iter_sparse as fis, schedule as sc, simple_iter as si,
    simple_iter_columns as columns,
};
use std::hint::black_box;

const ROWS: usize = 10_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workload, iterations) = match (args.get(1), args.get(2)) {
        (Some(w), Some(n)) => (w.as_str(), n.parse::<usize>().expect("ITERATIONS")),
        _ => {
            eprintln!("usage: instructions simple_iter|query_next|query_fold|schedule|frag_iter|frag_query|frag_sparse|frag_query_sparse|frag_tables|frag_floor|soa_churn|soa_churn_presized|add_remove|add_remove_dynamic|add_remove_sparse|add_remove_batch|spawn ITERATIONS");
            std::process::exit(2);
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    pool.install(|| match workload {
        "simple_iter" => {
            let mut w = columns::world(ROWS);
            for _ in 0..iterations {
                black_box(&mut w).run_advance();
            }
        }
        "schedule" => {
            let mut w = sc::world(ROWS);
            for _ in 0..iterations {
                black_box(&mut w).run_schedule();
            }
        }
        "frag_iter" => {
            let mut w = fi::world(20);
            for _ in 0..iterations {
                black_box(&mut w).run_double();
            }
        }
        "query_next" => {
            let mut w = columns::world(ROWS);
            for _ in 0..iterations {
                let q = black_box(&mut w)
                    .query_mut::<(&mut si::Position, &si::Velocity)>()
                    .expect("no aliasing");
                for (p, v) in q {
                    p.0 += v.0;
                }
            }
        }
        "query_fold" => {
            let mut w = columns::world(ROWS);
            for _ in 0..iterations {
                black_box(&mut w)
                    .query_mut::<(&mut si::Position, &si::Velocity)>()
                    .expect("no aliasing")
                    .for_each(|(p, v)| p.0 += v.0);
            }
        }
        "frag_query" => {
            let mut w = fi::world(20);
            for _ in 0..iterations {
                black_box(&mut w)
                    .query_mut::<&mut fi::Data>()
                    .expect("no aliasing")
                    .for_each(|d| d.0 *= 2.0);
            }
        }
        "frag_sparse" => {
            let mut w = fis::world(20);
            for _ in 0..iterations {
                black_box(&mut w).run_double();
            }
        }
        "frag_query_sparse" => {
            let mut w = fis::world(20);
            for _ in 0..iterations {
                black_box(&mut w)
                    .query_mut::<&mut fis::Data>()
                    .expect("no aliasing")
                    .for_each(|d| d.0 *= 2.0);
            }
        }
        "frag_tables" => {
            let mut w = fi::tables::world(20);
            for _ in 0..iterations {
                black_box(&mut w).run_double();
            }
        }
        "frag_floor" => {
            let mut v = vec![1.0f32; 26 * 20];
            for _ in 0..iterations {
                for x in black_box(&mut v).iter_mut() {
                    *x *= 2.0;
                }
            }
        }
        "soa_churn" => {
            for _ in 0..iterations {
                soa_churn(false);
            }
        }
        "soa_churn_presized" => {
            for _ in 0..iterations {
                soa_churn(true);
            }
        }
        "spawn" => {
            let mut w = columns::world(0);
            for _ in 0..iterations {
                let w = black_box(&mut w);
                for _ in 0..ROWS {
                    w.spawn(columns::Data {
                        transform: si::Transform(glam::Mat4::IDENTITY),
                        position: si::Position(glam::Vec3::X),
                        rotation: si::Rotation(glam::Vec3::X),
                        velocity: si::Velocity(glam::Vec3::X),
                    });
                }
                w.clear();
            }
        }
        "add_remove" => add_remove(iterations, Target::Declared),
        "add_remove_dynamic" => add_remove(iterations, Target::Dynamic),
        "add_remove_sparse" => add_remove(iterations, Target::Sparse),
        "add_remove_batch" => add_remove_batch(iterations),
        other => {
            eprintln!("unknown workload {other}");
            std::process::exit(2);
        }
    });
}

/// Mass, position, velocity, acceleration.
type PointMassFields = (f32, [f32; 3], [f32; 3], [f32; 3]);

/// Fills a structure-of-arrays manager with 1,000,000 instances (growing it from empty unless
/// `presized`), then destroys every other one.
fn soa_churn(presized: bool) {
    const N: u32 = 1_000_000;
    let mut store: SoaStore<PointMassFields, DenseLookup> = SoaStore::new();
    if presized {
        store.reserve(N as usize);
    }
    for i in 0..N {
        let x = i as f32;
        store
            .create(Entity::new(i, 0), (x, [x; 3], [0.0; 3], [1.0; 3]))
            .expect("one instance per entity");
    }
    for i in (0..N).step_by(2) {
        store.destroy_entity(Entity::new(i, 0));
    }
    black_box(&store);
}

/// Where `add_remove` moves the component it inserts.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    /// `B`: the declared `{A, B}`.
    Declared,
    /// `Extra`: a dynamic store.
    Dynamic,
    /// `SparseB`: its sparse set (the row stays).
    Sparse,
}

/// Inserts a component into 10,000 entities of `{A}` and removes it again, `iterations` times.
fn add_remove(iterations: usize, target: Target) {
    let mut world = ar::World::new();
    let entities: Vec<Entity> =
        world.spawn_batch((0..ROWS).map(|i| ar::JustA { a: ar::A(i as f32) }));
    let mut sum = 0.0f32;
    for _ in 0..iterations {
        let world = black_box(&mut world);
        for &e in &entities {
            match target {
                Target::Declared => drop(world.insert(e, ar::B(1.0)).expect("live entity")),
                Target::Dynamic => drop(world.insert(e, ar::Extra(1.0)).expect("live entity")),
                Target::Sparse => drop(world.insert(e, ar::SparseB(1.0)).expect("live entity")),
            }
        }
        for &e in &entities {
            sum += match target {
                Target::Declared => world.remove::<ar::B>(e).expect("has B").0,
                Target::Dynamic => world.remove::<ar::Extra>(e).expect("has Extra").0,
                Target::Sparse => world.remove::<ar::SparseB>(e).expect("has SparseB").0,
            };
        }
    }
    black_box(sum);
}

/// `add_remove` for `B` through `insert_batch` and `remove_batch`: the same 20,000 moves.
fn add_remove_batch(iterations: usize) {
    let mut world = ar::World::new();
    let entities: Vec<Entity> =
        world.spawn_batch((0..ROWS).map(|i| ar::JustA { a: ar::A(i as f32) }));
    let mut removed = Vec::with_capacity(ROWS);
    let mut sum = 0.0f32;
    for _ in 0..iterations {
        let world = black_box(&mut world);
        world
            .insert_batch(entities.iter().map(|&e| (e, ar::B(1.0))))
            .expect("live entities");
        removed.clear();
        world
            .remove_batch::<ar::B>(&entities, &mut removed)
            .expect("each has a B");
        sum += removed.iter().map(|b| b.0).sum::<f32>();
    }
    black_box(sum);
}
