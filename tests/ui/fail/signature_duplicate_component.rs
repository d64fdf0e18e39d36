use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[derive(Signature)]
pub struct Segment {
    pub start: Position,
    pub end: Position,
}

fn main() {}
