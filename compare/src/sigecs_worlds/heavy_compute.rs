//! heavy_compute: entities of Transform (Mat4), Position, Rotation, Velocity; each matrix is
//! inverted `HEAVY_INVERSIONS` (101) times, then transforms the position. The work per row is
//! heavy, so the system lowers `min_chunk` (as the sigecs README recommends for heavy per-row
//! work) to let rayon split a store of 1,000 rows.

use ecs_core::prelude::*;
use glam::{Mat4, Vec3};

/// A 4×4 transform.
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

/// The one signature every entity of the workload has.
#[derive(Signature)]
pub struct Body {
    pub transform: Transform,
    pub position: Position,
    pub rotation: Rotation,
    pub velocity: Velocity,
}

/// Inverts the matrix `HEAVY_INVERSIONS` times, then transforms the position by it.
#[system(min_chunk = 64)]
pub fn invert(transform: &mut Transform, position: &mut Position) {
    for _ in 0..crate::data::HEAVY_INVERSIONS {
        transform.0 = transform.0.inverse();
    }
    position.0 = transform.0.transform_vector3(position.0);
}

include!(concat!(env!("OUT_DIR"), "/heavy_compute.rs"));
