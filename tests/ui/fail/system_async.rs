use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
pub async fn step(p: &mut Position) {
    p.0 += 1.0;
}

fn main() {}
