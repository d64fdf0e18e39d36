//! The job's generated entities: a seeded generator, the spawn of every signature, and the
//! particles recycled each frame.

use crate::{levels::*, options::*};
use glam::Vec3;
use sigecs::transform::TransformManager;
use sigecs_demo::components::physics::*;
use sigecs_demo::components::signatures::{Beacon, Body, Particle, Ship};
use sigecs_demo::World;
use sigecs_level::WorldLevels;

/// Small deterministic generator for initial values (xorshift64*).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 40) as f32 / (1u64 << 24) as f32
    }
    pub(crate) fn vec3(&mut self, scale: f32) -> Vec3 {
        Vec3::new(self.next_f32(), self.next_f32(), self.next_f32()) * 2.0 * scale - scale
    }
}

pub(crate) fn particle(rng: &mut Rng) -> Particle {
    Particle {
        position: Position(rng.vec3(100.0)),
        velocity: Velocity(rng.vec3(5.0)),
        lifetime: Lifetime(0.5 + 4.5 * rng.next_f32()),
    }
}

pub(crate) fn populate(world: &mut World, n: usize, rng: &mut Rng) {
    let (particles, bodies, ships) = (n * 4 / 10, n * 3 / 10, n * 2 / 10);
    let beacons = n - particles - bodies - ships;
    world.spawn_batch((0..particles).map(|_| particle(rng)));
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
    world.spawn_batch((0..beacons).map(|i| Beacon {
        position: Position(rng.vec3(100.0)),
        name: DebugName::new(&format!("beacon-{i}")),
    }));
}

/// Replaces the particles the `expire` system despawned (`expired` of them), keeping their
/// count constant.
pub(crate) fn respawn_particles(world: &mut World, expired: usize, rng: &mut Rng) {
    world.spawn_batch((0..expired).map(|_| particle(rng)));
}

/// A world spawned from the level and the options' seed: every run starts from the same state.
pub(crate) fn fresh_world(opts: &Options, level: &Level) -> (World, Rng) {
    let mut rng = Rng::new(opts.seed);
    let mut world = World::new();
    world
        .spawn_level_with(level, &mut TransformManager::new())
        .expect("a verified level spawns into an empty world");
    populate(&mut world, opts.entities, &mut rng);
    world.set_min_chunk(opts.min_chunk);
    (world, rng)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn population_is_spread_over_signatures() {
        let mut w = World::new();
        populate(&mut w, 1001, &mut Rng::new(3));
        let stats = w.stats();
        let count = |name: &str| {
            stats
                .stores
                .iter()
                .find(|s| s.name == name)
                .unwrap()
                .entities
        };
        assert_eq!(count("Particle"), 400);
        assert_eq!(count("Body"), 300);
        assert_eq!(count("Ship"), 200);
        assert_eq!(count("Beacon"), 101);
        assert_eq!(w.len(), 1001);
    }
}
