//! The ecs_bench_suite "simple_iter" data: Transform (Mat4), Position, Rotation, Velocity;
//! one system adds velocity to position. `columns` and `rows` store it in the two layouts.

use ecs_core::prelude::*;
use glam::{Mat4, Vec3};

pub mod columns;
pub mod rows;

/// A 4×4 transform, never touched by the system: the data a row drags through the cache.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Transform(pub Mat4);

/// Position.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Position(pub Vec3);

/// Rotation.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Rotation(pub Vec3);

/// Velocity.
#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub Vec3);

/// position += velocity.
#[system]
pub fn advance(position: &mut Position, velocity: &Velocity) {
    position.0 += velocity.0;
}
