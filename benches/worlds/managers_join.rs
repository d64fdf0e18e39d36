//! Position and Velocity in one signature array, for comparison with two separate SoA managers
//! joined by entity (seed part 2): the generated system walks two columns of one store.

use ecs_core::prelude::*;
use glam::Vec3;

/// Where an entity is.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Position(pub Vec3);

/// How fast it moves.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub Vec3);

/// An entity with both.
#[derive(Signature)]
pub struct Mover {
    pub position: Position,
    pub velocity: Velocity,
}

/// The time step.
#[derive(Resource, Clone, Copy, Debug, PartialEq)]
pub struct Time {
    /// Seconds per step.
    pub dt: f32,
}

impl Default for Time {
    fn default() -> Self {
        Time { dt: 1.0 / 60.0 }
    }
}

/// p += v·dt.
#[system]
pub fn advance(position: &mut Position, velocity: &Velocity, time: &Time) {
    position.0 += velocity.0 * time.dt;
}

include!(concat!(env!("OUT_DIR"), "/managers_join.rs"));
