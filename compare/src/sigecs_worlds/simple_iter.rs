//! simple_iter: entities of Transform (Mat4), Position, Rotation, Velocity (Vec3); one system
//! adds velocity to position.

use ecs_core::prelude::*;
use glam::{Mat4, Vec3};

/// A 4×4 transform, never touched by the system.
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

/// The one signature every entity of the workload has (default `columns` layout).
#[derive(Signature)]
pub struct Body {
    pub transform: Transform,
    pub position: Position,
    pub rotation: Rotation,
    pub velocity: Velocity,
}

/// position += velocity.
#[system]
pub fn advance(position: &mut Position, velocity: &Velocity) {
    position.0 += velocity.0;
}

include!(concat!(env!("OUT_DIR"), "/simple_iter.rs"));
