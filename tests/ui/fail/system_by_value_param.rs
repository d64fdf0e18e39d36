use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
pub fn show(p: Position) {
    let _ = p.0;
}

fn main() {}
