//! Point-mass physics (seed part 2): components and the systems that move them.

use super::resources::{Gravity, Time};
use ecs_core::prelude::*;
use glam::Vec3;

/// Where an entity is.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Position(pub Vec3);

/// How fast it moves.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Velocity(pub Vec3);

/// How fast its velocity changes.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Acceleration(pub Vec3);

/// Its mass.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Mass(pub f32);

/// Seconds left to live.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct Lifetime(pub f32);

/// A name for debugging: cold, so `rows` signatures keep it out of the hot row.
#[derive(Component, Clone, Debug, Default, PartialEq)]
#[component(cold)]
pub struct DebugName(pub String);

/// Semi-implicit Euler step: velocity += acceleration·dt, then position += velocity·dt.
#[system]
pub fn integrate(
    position: &mut Position,
    velocity: &mut Velocity,
    acceleration: &Acceleration,
    time: &Time,
) {
    velocity.0 += acceleration.0 * time.dt;
    position.0 += velocity.0 * time.dt;
}

/// Bodies with mass fall: acceleration is set to gravity.
#[system(with(Mass))]
pub fn apply_gravity(acceleration: &mut Acceleration, gravity: &Gravity) {
    acceleration.0 = gravity.0;
}

/// Entities without acceleration move in a straight line.
#[system(without(Acceleration))]
pub fn drift(position: &mut Position, velocity: &Velocity, time: &Time) {
    position.0 += velocity.0 * time.dt;
}

/// Lifetimes run down (never below zero).
#[system]
pub fn age(lifetime: &mut Lifetime, time: &Time) {
    lifetime.0 = (lifetime.0 - time.dt).max(0.0);
}
