//! Point-mass physics: components and the systems that move them.

use super::resources::{Gravity, Time};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use serde::{Deserialize, Serialize};
use sigecs::prelude::*;
use sigecs::SoaManager;
use sigecs_level::{InlineStr, MapEntities};

/// Where an entity is.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(level = "position")]
#[repr(transparent)]
pub struct Position(pub Vec3);

/// How fast it moves.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(level = "velocity")]
#[repr(transparent)]
pub struct Velocity(pub Vec3);

/// How fast its velocity changes.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(level = "acceleration")]
#[repr(transparent)]
pub struct Acceleration(pub Vec3);

/// Its mass.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(level = "mass")]
#[repr(transparent)]
pub struct Mass(pub f32);

/// Seconds left to live.
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(level = "lifetime")]
#[repr(transparent)]
pub struct Lifetime(pub f32);

/// A name for debugging: cold, so `rows` signatures keep it out of the hot row.
///
/// Plain old data (up to 23 bytes of text inline, see [`InlineStr`]), so a level's names are
/// copied with their column when it spawns: as a `String` each name needed a decode and an
/// allocation, three quarters of the bundled level's spawn time. A component that needs longer
/// text declares it as a `String` with `encoding = "serde"` (the README shows one).
#[derive(
    Component, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[component(cold, level = "name")]
#[repr(transparent)]
pub struct DebugName(pub InlineStr);

impl DebugName {
    /// `name`, cut to the longest prefix of whole characters that fits in 23 bytes.
    pub fn new(name: &str) -> Self {
        DebugName(InlineStr::truncated(name))
    }
}

/// Free text attached to an entity (a marker's note): not plain old data, so a level stores it
/// with postcard and the spawn decodes and allocates each one.
#[derive(Component, Clone, Debug, Default, PartialEq, Hash, Serialize, Deserialize)]
#[component(cold, level = "note", encoding = "serde")]
pub struct Note(pub String);

/// The entity this one follows (an escort's ship). In a level it is written as the leader's
/// index among the level's entities.
#[derive(Component, Clone, Copy, Debug, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
#[component(level = "leader", map_entities)]
#[repr(transparent)]
pub struct Leader(pub Entity);

impl MapEntities for Leader {
    fn map_entities(&mut self, map: &mut dyn FnMut(Entity) -> Entity) {
        self.0 = map(self.0);
    }
}

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

/// Entities whose lifetime ran out are despawned (at the end of the stage, in row order, so
/// the world is the same on any number of threads).
#[system]
pub fn expire(entity: Entity, lifetime: &Lifetime, commands: &mut Commands) {
    if lifetime.0 <= 0.0 {
        commands.despawn(entity);
    }
}

/// An entity's temperature, kept outside the signature stores by its own structure-of-arrays
/// manager, `HeatManager`. Declared as a level struct, so levels hold
/// it as `heat` and `level_registry()` registers it, kept outside the stores: a spawn hands
/// it to a `HeatManager` passed as a spawner.
#[derive(
    SoaManager, Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable, Serialize, Deserialize,
)]
#[soa(lookup = "dense", level = "heat")]
#[repr(C)]
pub struct Heat {
    /// Temperature in degrees Celsius.
    pub celsius: f32,
    /// Change per second.
    pub rate: f32,
}
