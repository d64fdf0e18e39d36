use sigecs::prelude::*;

#[derive(Component)]
struct Position(pub f32);

fn main() {}
