// src/components/mod.rs
use sigecs::prelude::*;

#[derive(Component, Debug, PartialEq)]
pub struct Position {
    pub x: f32,
    pub y: f32,
}

#[derive(Component, Debug, PartialEq)]
pub struct Velocity {
    pub x: f32,
    pub y: f32,
}

/// Cold: in a `rows` signature it lives apart from the hot row.
#[derive(Component)]
#[component(cold)]
pub struct Name(pub String);

/// Every signature gets one packed array (one column per component by default).
#[derive(Signature)]
pub struct Ball {
    pub position: Position,
    pub velocity: Velocity,
}

#[derive(Signature)]
#[signature(layout = "rows")]
pub struct Player {
    pub position: Position,
    pub velocity: Velocity,
    pub name: Name,
}

#[derive(Resource, Default)]
pub struct Time {
    pub dt: f32,
}

/// Runs once per row of every signature holding a Position and a Velocity.
#[system]
pub fn movement(position: &mut Position, velocity: &Velocity, time: &Time) {
    position.x += velocity.x * time.dt;
    position.y += velocity.y * time.dt;
}
