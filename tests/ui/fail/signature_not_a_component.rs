use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

// A plain struct: no `#[derive(Component)]`.
pub struct Velocity(pub f32);

#[derive(Signature)]
pub struct Body {
    pub position: Position,
    pub velocity: Velocity,
}

fn main() {}
