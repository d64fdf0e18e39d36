use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[derive(Component)]
pub struct Frozen;

#[system(sometimes(Frozen))]
pub fn step(p: &mut Position) {
    p.0 += 1.0;
}

fn main() {}
