//! A small solar system: bodies orbit their parent. Each body is an entity of the generated
//! world holding its own orbit (local state); the transform hierarchy, outside the world,
//! chains parent and child and gives every body its world-space position.

use sigecs::glam::{Mat4, Vec2, Vec3};
use sigecs::prelude::*;

/// Where a body sits relative to its parent: turned by `angle` (radians) from the parent's x
/// axis, `radius` out. `angle` grows by `speed` radians a second. A body's children turn with
/// it (the moon follows the earth round the sun).
#[derive(Component, Clone, Copy, Debug)]
pub struct Orbit {
    pub radius: f32,
    pub angle: f32,
    pub speed: f32,
}

impl Orbit {
    /// The local matrix, relative to the parent: turn by `angle`, then step `radius` along the
    /// turned x axis.
    pub fn local(&self) -> Mat4 {
        Mat4::from_rotation_z(self.angle) * Mat4::from_translation(Vec3::new(self.radius, 0.0, 0.0))
    }
}

/// The body's world-space position: written from the hierarchy every frame, read by systems.
#[derive(Component, Clone, Copy, Debug, Default, PartialEq)]
pub struct WorldPos(pub Vec3);

/// A name for printing.
#[derive(Component, Clone, Copy, Debug)]
pub struct Label(pub &'static str);

#[derive(Signature)]
pub struct Body {
    pub orbit: Orbit,
    pub world_pos: WorldPos,
    pub label: Label,
}

#[derive(Resource, Default)]
pub struct Time {
    pub dt: f32,
}

/// The box around every body this frame, in world space (reset by `main` each frame).
#[derive(Resource, Debug)]
pub struct Bounds {
    pub min: Vec2,
    pub max: Vec2,
}

impl Default for Bounds {
    /// Empty: any point grows it.
    fn default() -> Self {
        Bounds {
            min: Vec2::INFINITY,
            max: Vec2::NEG_INFINITY,
        }
    }
}

/// Local state changes: every orbit turns.
#[system]
pub fn advance(orbit: &mut Orbit, time: &Time) {
    orbit.angle += orbit.speed * time.dt;
}

/// A system reading world-space positions, which the hierarchy wrote after `advance`.
#[system]
pub fn track(position: &WorldPos, bounds: &mut Bounds) {
    bounds.min = bounds.min.min(position.0.truncate());
    bounds.max = bounds.max.max(position.0.truncate());
}
