//! The declarations the build script turns into a `World`. Where hecs and bevy_ecs accept any
//! tuple of components at run time, sigecs wants every component set an entity can have
//! declared as a signature: each gets one packed array, and each system is matched to the
//! arrays it applies to before the crate compiles.

use sigecs::prelude::*;

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Clone, Copy, Debug, PartialEq)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

// hecs: `world.spawn((Position { .. }, Velocity { .. }))`, any tuple.
// sigecs: the sets are declared once, and spawned by name.
#[derive(Signature)]
pub struct Mover {
    pub position: Position,
    pub velocity: Velocity,
}

#[derive(Signature)]
pub struct Marker {
    pub position: Position,
}

// Systems are plain functions of one entity's components, called once per matching row.
// bevy: `fn movement(mut query: Query<(&mut Position, &Velocity)>)` and a loop.

#[system]
pub fn movement(position: &mut Position, velocity: &Velocity) {
    position.x += velocity.x;
    position.y += velocity.y;
}

#[system]
pub fn leave(entity: Entity, position: &Position, commands: &mut Commands) {
    if position.x > 5.0 {
        commands.despawn(entity);
    }
}
