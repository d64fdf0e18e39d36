use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system(min_chunk = 0)]
pub fn step(p: &mut Position) {
    p.0 += 1.0;
}

fn main() {}
