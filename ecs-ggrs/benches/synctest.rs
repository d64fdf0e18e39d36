//! What rollback costs a frame: GGRS's `SyncTestSession` with check distance 7 (every frame
//! is loaded back 7 frames and run again: 8 runs of the schedule, 8 saves and a load per
//! frame) beside the same frames without rollback, on the bundled world with 100,000
//! generated entities (the main job's mix) whose expired particles are replaced each frame.
//!
//! `cargo bench -p sigecs-ggrs --bench synctest`; `python3 benches/ratios.py synctest plain`
//! (from the workspace root) prints the ratio (about 8× is the expected cost).

#![allow(missing_docs)] // criterion's macros and bench-local items need no API docs

use criterion::{criterion_group, criterion_main, Criterion};
use ggrs::{Config, PredictRepeatLast, SessionBuilder};
use glam::Vec3;
use sigecs::state::WorldState;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Body, Particle, Ship};
use sigecs_demo::World;
use std::hint::black_box;

struct Bench;
impl Config for Bench {
    type Input = u8;
    type InputPredictor = PredictRepeatLast;
    type State = WorldState;
    type Address = std::net::SocketAddr;
}

const N: usize = 100_000;

/// A value in [0, 1) from `seed` and `i`.
fn unit(seed: u64, i: u64) -> f32 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    (x >> 40) as f32 / (1u64 << 24) as f32
}

fn vec3(seed: u64, i: u64, scale: f32) -> Vec3 {
    Vec3::new(
        unit(seed, 3 * i),
        unit(seed, 3 * i + 1),
        unit(seed, 3 * i + 2),
    ) * 2.0
        * scale
        - scale
}

fn particle(seed: u64, i: u64) -> Particle {
    Particle {
        position: Position(vec3(seed, i, 100.0)),
        velocity: Velocity(vec3(seed ^ 1, i, 5.0)),
        lifetime: Lifetime(0.5 + 4.5 * unit(seed ^ 2, i)),
    }
}

fn world() -> World {
    let mut w = World::new();
    let (particles, bodies, ships) = (N * 4 / 10, N * 3 / 10, N * 2 / 10);
    w.spawn_batch((0..particles as u64).map(|i| particle(1, i)));
    w.spawn_batch((0..bodies as u64).map(|i| Body {
        position: Position(vec3(2, i, 100.0)),
        velocity: Velocity(vec3(3, i, 5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(1.0 + unit(4, i)),
    }));
    w.spawn_batch((0..ships as u64).map(|i| Ship {
        position: Position(vec3(5, i, 100.0)),
        velocity: Velocity(vec3(6, i, 5.0)),
        acceleration: Acceleration(Vec3::ZERO),
        mass: Mass(10.0 + unit(7, i)),
        name: DebugName::new(&format!("ship-{i}")),
    }));
    w.spawn_batch(
        (0..(N - particles - bodies - ships) as u64).map(|i| Beacon {
            position: Position(vec3(8, i, 100.0)),
            name: DebugName::new(&format!("beacon-{i}")),
        }),
    );
    w
}

/// One frame: the schedule, then as many new particles as expired (seeded by the change
/// clock, which is part of the state, so re-simulated frames spawn the same ones).
fn frame(w: &mut World) {
    let before = w.store::<Particle>().len();
    w.run_schedule()
        .expect("the bundled systems' commands apply");
    let expired = before - w.store::<Particle>().len();
    let seed = w.change_tick();
    w.spawn_batch((0..expired as u64).map(|i| particle(seed, i)));
}

fn synctest(c: &mut Criterion) {
    let mut g = c.benchmark_group("synctest");
    g.sample_size(10);
    let mut plain = world();
    g.bench_function("plain", |b| b.iter(|| frame(black_box(&mut plain))));
    let mut w = world();
    let mut session = SessionBuilder::<Bench>::new()
        .with_num_players(1)
        .unwrap()
        .with_check_distance(7)
        .with_max_prediction_window(8)
        .start_synctest_session()
        .unwrap();
    g.bench_function("sync_test_distance_7", |b| {
        b.iter(|| {
            session.add_local_input(0, 0).unwrap();
            let requests = session.advance_frame().expect("no checksum mismatch");
            sigecs_ggrs::handle_requests(&mut w, requests, |w, _| frame(w)).unwrap();
        })
    });
    g.finish();
}

criterion_group!(benches, synctest);
criterion_main!(benches);
