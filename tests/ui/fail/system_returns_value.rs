use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
pub fn height(p: &Position) -> f32 {
    p.0
}

fn main() {}
