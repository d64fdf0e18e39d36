//! World states (`sigecs::state`) of the main job's world: the bundled level (11,300
//! entities) and 100,000 generated entities of the bundled signatures, as `src/bin/sigecs/`
//! builds it (111,300 entities, about 4.8 MB of component values and ids). In one group,
//! `state`:
//!
//! - `memcpy`: a copy of as many bytes as the state's stores hold (the floor of a full save);
//! - `save_full`: a save that copies everything (into a reused state last saved from another
//!   world, so nothing can be skipped); goal: at most 1.5× `memcpy`;
//! - `save_full_checksum`: the same save, then the state's checksum (every chunk hashed);
//! - `save_1pct`: a save into the state last saved from this world after a frame that wrote
//!   1% of the chunks (one value in each; the frame's time is in it); goal: at most 10% of
//!   `save_full`; `save_1pct_checksum`: the same, then the state's checksum (the copied chunks
//!   hashed);
//! - `load_full`: a load of a state saved from another world (everything copied); goal: at
//!   most 1.5× `memcpy`;
//! - `load_1pct`: a load of the state saved from this world after 1% of the chunks changed;
//! - `checksum` and `xxh3`: `World::checksum` beside the hash crate's one-shot XXH3 of the
//!   same number of bytes (throughput in bytes per second).
//!
//! `cargo bench --bench state`; `python3 benches/ratios.py state memcpy` prints the ratios to
//! `memcpy`.

#![allow(missing_docs)] // criterion's macros and bench-local items need no API docs

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use glam::Vec3;
use sigecs::state::WorldState;
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Body, Particle, Ship};
use sigecs_demo::{level_registry, World};
use sigecs_level::{AlignedBlob, VerifyOptions, WorldLevels};
use std::hint::black_box;

const LEVEL: &[u8] = include_bytes!("../assets/level.bin");

/// Rows per change-record chunk (`sigecs::__private::CHUNK`).
const CHUNK: usize = 256;

/// The main job's generator (`src/bin/sigecs/population.rs`).
struct Rng(u64);
impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }
    fn vec3(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32()) * 2.0 * scale - scale
    }
}

/// The main job's world: the bundled level, then 100,000 entities (40% particles, 30%
/// bodies, 20% ships, 10% beacons).
fn main_world() -> World {
    let mut world = World::new();
    let level = World::new()
        .verify_level(
            AlignedBlob::from_bytes(LEVEL),
            level_registry(),
            &VerifyOptions::default(),
        )
        .expect("the bundled level verifies");
    world
        .spawn_level_with(&level, &mut TransformManager::new())
        .expect("the bundled level spawns");
    let mut rng = Rng(42u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = 100_000;
    let (particles, bodies, ships) = (n * 4 / 10, n * 3 / 10, n * 2 / 10);
    world.spawn_batch((0..particles).map(|_| Particle {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        lifetime: Lifetime(0.5 + 4.5 * rng.next_f32()),
    }));
    world.spawn_batch((0..bodies).map(|_| Body {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(1.0 + rng.next_f32()),
    }));
    world.spawn_batch((0..ships).map(|i| Ship {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(10.0 + rng.next_f32()),
        name: DebugName::new(&format!("ship-{i}")),
    }));
    world.spawn_batch((0..n - particles - bodies - ships).map(|i| Beacon {
        position: Position(rng.vec3(100.0)),
        name: DebugName::new(&format!("beacon-{i}")),
    }));
    world
}

/// One entity in one chunk out of a hundred of every store.
fn one_percent(world: &World) -> Vec<sigecs::Entity> {
    world
        .entities()
        .enumerate()
        .filter(|(i, _)| i % (100 * CHUNK) == 0)
        .map(|(_, e)| e)
        .collect()
}

/// A frame in which 1% of the chunks changed: a pass that writes nothing (`expire`, which
/// reads lifetimes that have not run out) moves the clock on, then one `Position` is written
/// in each of `picked`'s chunks.
fn touch(world: &mut World, picked: &[sigecs::Entity], round: f32) {
    world.run_expire().expect("nothing to despawn");
    for &e in picked {
        if let Some(p) = world.get_mut::<Position>(e) {
            p.0.x += round;
        }
    }
}

/// Times `f` alone, after an untimed `touch` each iteration.
fn timed_after_touch(
    iters: u64,
    world: &mut World,
    picked: &[sigecs::Entity],
    round: &mut f32,
    mut f: impl FnMut(&mut World),
) -> std::time::Duration {
    let mut total = std::time::Duration::ZERO;
    for _ in 0..iters {
        *round += 1.0;
        touch(world, picked, *round);
        let start = std::time::Instant::now();
        f(world);
        total += start.elapsed();
    }
    total
}

fn state(c: &mut Criterion) {
    let mut world = main_world();
    let other = main_world();
    let mut state = WorldState::new();
    world.save_state(&mut state);
    let bytes = state.store_bytes();
    println!(
        "main job's world: {} entities, {} bytes of component values and ids, {} transforms in its hierarchy",
        state.len(),
        bytes,
        world.hierarchy().len()
    );
    let mut g = c.benchmark_group("state");
    g.sample_size(30);
    g.throughput(Throughput::Bytes(bytes as u64));
    let src = vec![7u8; bytes];
    let mut dst = vec![0u8; bytes];
    g.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
        })
    });
    // Alternating the two worlds makes every save a full one.
    let mut full = WorldState::new();
    let mut flip = false;
    g.bench_function("save_full", |b| {
        b.iter(|| {
            flip = !flip;
            let w = if flip { &world } else { &other };
            w.save_state(&mut full);
            black_box(&full);
        })
    });
    g.bench_function("save_full_checksum", |b| {
        b.iter(|| {
            flip = !flip;
            let w = if flip { &world } else { &other };
            w.save_state(&mut full);
            black_box(full.checksum())
        })
    });
    let picked = one_percent(&world);
    let mut round = 0.0;
    g.bench_function("save_1pct", |b| {
        b.iter_custom(|iters| {
            timed_after_touch(iters, &mut world, &picked, &mut round, |w| {
                w.save_state(&mut state);
                black_box(&state);
            })
        })
    });
    g.bench_function("save_1pct_checksum", |b| {
        b.iter_custom(|iters| {
            timed_after_touch(iters, &mut world, &picked, &mut round, |w| {
                w.save_state(&mut state);
                black_box(state.checksum());
            })
        })
    });
    let mut from_other = WorldState::new();
    other.save_state(&mut from_other);
    g.bench_function("load_full", |b| {
        b.iter(|| world.load_state(black_box(&from_other)).unwrap())
    });
    world.save_state(&mut state);
    g.bench_function("load_1pct", |b| {
        b.iter_custom(|iters| {
            timed_after_touch(iters, &mut world, &picked, &mut round, |w| {
                w.load_state(black_box(&state)).unwrap()
            })
        })
    });
    g.bench_function("checksum", |b| b.iter(|| black_box(world.checksum())));
    let hashed: Vec<u8> = (0..bytes).map(|i| i as u8).collect();
    g.bench_function("xxh3", |b| {
        b.iter(|| black_box(xxhash_rust::xxh3::xxh3_64(black_box(&hashed))))
    });
    g.finish();
}

criterion_group!(benches, state);
criterion_main!(benches);
