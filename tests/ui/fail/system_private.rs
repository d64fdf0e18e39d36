use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
fn step(p: &mut Position) {
    p.0 += 1.0;
}

fn main() {}
