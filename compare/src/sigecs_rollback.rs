//! The sigecs world of the save_restore workload: simple_iter's four components in one
//! signature, in a world built with `Builder::rollback(true)` (see `build.rs`), so that it saves
//! its state into a `WorldState` and loads it back. The components derive bytemuck's `Pod`, as a
//! game hashing its state would: the checksum of a save hashes them as bytes.

use sigecs::prelude::*;

/// A 4×4 transform.
#[derive(Component, Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Transform(pub glam::Mat4);

/// Position.
#[derive(Component, Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Position(pub glam::Vec3);

/// Rotation.
#[derive(Component, Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Rotation(pub glam::Vec3);

/// Velocity.
#[derive(Component, Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Velocity(pub glam::Vec3);

/// One save_restore entity.
#[derive(Signature)]
pub struct Body {
    pub transform: Transform,
    pub position: Position,
    pub rotation: Rotation,
    pub velocity: Velocity,
}

include!(concat!(env!("OUT_DIR"), "/sigecs_rollback.rs"));
