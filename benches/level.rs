//! Spawning the bundled 11,300-entity level (`assets/level.bin`), one criterion
//! group, `level_spawn`. A fresh world per iteration (made outside the timing, dropped after):
//!
//! - `blob_spawn`: `spawn_level` of the verified blob (components, entity references);
//! - `blob_spawn_transforms`: `spawn_level_with` a fresh `TransformManager` (also the
//!   hierarchy: 6,000 instances linked);
//! - `spawn_one_by_one`: the same entities as signature values with `spawn`, one by one (leaders
//!   mapped to the spawned ships as they go);
//! - `spawn_batch`: the same values with one `spawn_batch` per signature;
//! - `memcpy`: copying the blob into a buffer (the floor), and `memcpy_and_ids`: that plus
//!   creating 11,300 entity ids with one `create_many` (the target is the blob spawn
//!   within 2× of this, and faster than `spawn_batch`);
//! - `string_names`: decoding the level's 1,300 names as `String`s from postcard, what they
//!   would add to the blob spawn as a `String` component (`DebugName` is plain old data, copied
//!   with its column).
//!
//! Every row starts from data at rest and ends with a world that owns its values: the blob rows
//! copy them out of the blob (and decode the 100 notes), the `spawn`/`spawn_batch` rows clone
//! them out of prepared typed vectors, inside the timing. `verify` is timed apart.
//!
//! The `warm_` rows restart the level in memory that held it before: `warm_blob_spawn` spawns
//! into a world that spawned the level and was then `clear`ed (the stores keep their memory),
//! `warm_restart` times the `clear` too, and `warm_memcpy_and_ids` is the floor with its buffer
//! and entity manager reused the same way (11,300 ids created and destroyed before).
//!
//! `python3 benches/ratios.py level_spawn memcpy_and_ids` prints the medians and their ratios to
//! the floor after a run (`... warm_memcpy_and_ids` for the warm rows' floor).
//!
//! A second group, `level_depth`, loads (verifies, then spawns with the hierarchy into the
//! world's own) a level of `n` `Beacon`s shaped as a chain `n` deep (`chain/n`) and as a wide
//! tree of the same size (`wide/n`: one root, every other entity its child), for n = 10,000,
//! 100,000 and 1,000,000: loading is linear in the entities whatever the depth, so the two
//! stay side by side. `python3 benches/ratios.py level_depth wide` prints each size's medians
//! and the chain's ratio to the wide tree.

#![allow(missing_docs)] // criterion's macros and bench-local types need no API docs

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use sigecs::entity::{Entity, EntityManager};
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Body, Escort, Marker, Particle, Ship};
use sigecs_demo::{level_registry, World};
use sigecs_level::{AlignedBlob, LevelWriter, VerifyOptions, WorldLevels, NO_ENTITY};
use std::hint::black_box;

const LEVEL: &[u8] = include_bytes!("../assets/level.bin");

/// The level's entities as signature values, grouped by signature, in level order; `Escort`
/// leaders hold the leader's position in the level (mapped when spawned).
#[derive(Default)]
struct Values {
    ships: Vec<Ship>,
    escorts: Vec<(Position, Velocity, u32)>,
    particles: Vec<Particle>,
    beacons: Vec<Beacon>,
    markers: Vec<Marker>,
    bodies: Vec<Body>,
    /// Level index → (signature 0..6, position in its group), to map leaders.
    order: Vec<(u8, u32)>,
}

fn values() -> Values {
    let blob = AlignedBlob::from_bytes(LEVEL);
    let mut world = World::new();
    let level = world
        .verify_level(&blob, level_registry(), &VerifyOptions::default())
        .unwrap();
    let e = world.spawn_level(&level).unwrap();
    let index = |x: Entity| e.iter().position(|&y| y == x).unwrap() as u32;
    let mut v = Values::default();
    for &x in &e {
        let p = *world.get::<Position>(x).unwrap();
        let (sig, pos) = match world.signature_name_of(x).unwrap() {
            "Ship" => {
                v.ships.push(Ship {
                    position: p,
                    velocity: *world.get(x).unwrap(),
                    acceleration: *world.get(x).unwrap(),
                    mass: *world.get(x).unwrap(),
                    name: *world.get::<DebugName>(x).unwrap(),
                });
                (0, v.ships.len())
            }
            "Escort" => {
                let leader = world.get::<Leader>(x).unwrap().0;
                assert_ne!(leader, NO_ENTITY);
                v.escorts.push((p, *world.get(x).unwrap(), index(leader)));
                (1, v.escorts.len())
            }
            "Particle" => {
                v.particles.push(Particle {
                    position: p,
                    velocity: *world.get(x).unwrap(),
                    lifetime: *world.get(x).unwrap(),
                });
                (2, v.particles.len())
            }
            "Beacon" => {
                v.beacons.push(Beacon {
                    position: p,
                    name: *world.get::<DebugName>(x).unwrap(),
                });
                (3, v.beacons.len())
            }
            "Marker" => {
                v.markers.push(Marker {
                    position: p,
                    note: world.get::<Note>(x).unwrap().clone(),
                });
                (4, v.markers.len())
            }
            _ => {
                v.bodies.push(Body {
                    position: p,
                    velocity: *world.get(x).unwrap(),
                    acceleration: *world.get(x).unwrap(),
                    mass: *world.get(x).unwrap(),
                });
                (5, v.bodies.len())
            }
        };
        v.order.push((sig, pos as u32 - 1));
    }
    v
}

fn level_spawn(c: &mut Criterion) {
    let blob = AlignedBlob::from_bytes(LEVEL);
    let level = World::new()
        .verify_level(&blob, level_registry(), &VerifyOptions::default())
        .unwrap();
    let n = level.num_entities() as usize;
    let vals = values();
    let ship_of = |vals: &Values, leader: u32| -> usize {
        let (sig, pos) = vals.order[leader as usize];
        assert_eq!(sig, 0, "leaders are ships");
        pos as usize
    };

    let mut g = c.benchmark_group("level_spawn");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("verify", |b| {
        b.iter(|| {
            World::new()
                .verify_level(
                    black_box(&blob),
                    level_registry(),
                    &VerifyOptions::default(),
                )
                .unwrap()
                .num_entities()
        })
    });
    g.bench_function("blob_spawn", |b| {
        b.iter_batched_ref(
            World::new,
            |w| w.spawn_level(black_box(&level)).unwrap().len(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("blob_spawn_transforms", |b| {
        b.iter_batched_ref(
            || (World::new(), TransformManager::new()),
            |(w, tm)| w.spawn_level_with(black_box(&level), tm).unwrap().len(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("spawn_one_by_one", |b| {
        b.iter_batched_ref(
            World::new,
            |w| {
                let v = &vals;
                let ships: Vec<Entity> = v.ships.iter().map(|s| w.spawn(s.clone())).collect();
                for &(p, vel, leader) in &v.escorts {
                    w.spawn(Escort {
                        position: p,
                        velocity: vel,
                        leader: Leader(ships[ship_of(v, leader)]),
                    });
                }
                for x in &v.particles {
                    w.spawn(x.clone());
                }
                for x in &v.beacons {
                    w.spawn(x.clone());
                }
                for x in &v.markers {
                    w.spawn(x.clone());
                }
                for x in &v.bodies {
                    w.spawn(x.clone());
                }
                w.len()
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("spawn_batch", |b| {
        b.iter_batched_ref(
            World::new,
            |w| {
                let v = &vals;
                let ships = w.spawn_batch(v.ships.iter().cloned());
                w.spawn_batch(v.escorts.iter().map(|&(p, vel, leader)| Escort {
                    position: p,
                    velocity: vel,
                    leader: Leader(ships[ship_of(v, leader)]),
                }));
                w.spawn_batch(v.particles.iter().cloned());
                w.spawn_batch(v.beacons.iter().cloned());
                w.spawn_batch(v.markers.iter().cloned());
                w.spawn_batch(v.bodies.iter().cloned());
                w.len()
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("memcpy", |b| {
        b.iter_batched_ref(
            || vec![0u8; LEVEL.len()],
            |buf| {
                buf.copy_from_slice(black_box(blob.as_ref()));
                buf[0]
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("memcpy_and_ids", |b| {
        b.iter_batched_ref(
            || (vec![0u8; LEVEL.len()], EntityManager::new()),
            |(buf, em)| {
                buf.copy_from_slice(black_box(blob.as_ref()));
                em.create_many(n).unwrap().len()
            },
            BatchSize::LargeInput,
        )
    });
    // What the names would cost as `String`s: the level's 1,300 names decoded from postcard
    // into `String`s the caller owns (a UTF-8 check and an allocation each), as a blob spawn of a
    // `String` component does. `DebugName` is plain old data, copied with its column instead.
    let names: Vec<Vec<u8>> = level
        .component("name")
        .unwrap()
        .pod::<DebugName>()
        .unwrap()
        .iter()
        .map(|name| postcard::to_allocvec(name.0.as_str()).unwrap())
        .collect();
    g.bench_function("string_names", |b| {
        b.iter_batched_ref(
            || Vec::with_capacity(names.len()),
            |out: &mut Vec<String>| {
                for n in &names {
                    out.push(postcard::from_bytes(black_box(n)).unwrap());
                }
                out.len()
            },
            BatchSize::LargeInput,
        )
    });
    // Warm rows: a level restarted in a world that held it before (`World::clear` keeps the
    // stores' memory), against the floor with the same memory reused.
    let spawned_then_cleared = || {
        let mut w = World::new();
        w.spawn_level(&level).unwrap();
        w.clear();
        w
    };
    g.bench_function("warm_blob_spawn", |b| {
        b.iter_batched_ref(
            spawned_then_cleared,
            |w| w.spawn_level(black_box(&level)).unwrap().len(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("warm_restart", |b| {
        b.iter_batched_ref(
            || {
                let mut w = World::new();
                w.spawn_level(&level).unwrap();
                w
            },
            |w| {
                w.clear();
                w.spawn_level(black_box(&level)).unwrap().len()
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("warm_memcpy_and_ids", |b| {
        b.iter_batched_ref(
            || {
                let buf = blob.as_ref().to_vec();
                let mut em = EntityManager::new();
                for e in em.create_many(n).unwrap() {
                    em.destroy(e);
                }
                (buf, em)
            },
            |(buf, em)| {
                buf.copy_from_slice(black_box(blob.as_ref()));
                em.create_many(n).unwrap().len()
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// `n` `Beacon`s (a position and a name each) whose parents make a chain `n` deep (`chain`) or
/// a tree one level deep under entity 0.
fn hierarchy_level(n: u32, chain: bool) -> AlignedBlob {
    let registry = level_registry();
    let position = registry.by_name("position").unwrap();
    let name = registry.by_name("name").unwrap();
    let mut w = LevelWriter::new();
    for i in 0..n {
        let parent = match i {
            0 => None,
            _ if chain => Some(i - 1),
            _ => Some(0),
        };
        w.add_entity(parent).unwrap();
        w.push(position, i, &Position(glam::Vec3::new(i as f32, 0.0, 0.0)))
            .unwrap();
        w.push(name, i, &DebugName::new("beacon")).unwrap();
    }
    AlignedBlob::from_bytes(&w.finish().unwrap())
}

fn level_depth(c: &mut Criterion) {
    let mut g = c.benchmark_group("level_depth");
    g.sample_size(10);
    for n in [10_000u32, 100_000, 1_000_000] {
        g.throughput(Throughput::Elements(u64::from(n)));
        for (shape, chain) in [("chain", true), ("wide", false)] {
            let blob = hierarchy_level(n, chain);
            g.bench_function(BenchmarkId::new(shape, n), |b| {
                b.iter_batched(
                    World::new,
                    |mut w| {
                        let level = w
                            .verify_level(
                                black_box(&blob),
                                level_registry(),
                                &VerifyOptions::default(),
                            )
                            .unwrap();
                        let e = w.spawn_level(&level).unwrap();
                        assert_eq!(e.len(), n as usize);
                        w // Dropped after the timing.
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, level_spawn, level_depth);
criterion_main!(benches);
