use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[derive(Component)]
pub struct Velocity(pub f32);

#[derive(Signature)]
pub struct Body(pub Position, pub Velocity);

fn main() {}
