//! The bundled world's resources.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use sigecs::prelude::*;

/// Frame time.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Time {
    /// Seconds per frame.
    pub dt: f32,
}

impl Default for Time {
    fn default() -> Self {
        Time { dt: 1.0 / 60.0 }
    }
}

/// Acceleration of bodies with mass.
#[derive(Resource, Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(transparent)]
pub struct Gravity(pub Vec3);

impl Default for Gravity {
    fn default() -> Self {
        Gravity(Vec3::new(0.0, -9.81, 0.0))
    }
}
