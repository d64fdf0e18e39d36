use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
pub fn copy(target: &mut Position, source: &Position) {
    target.0 = source.0;
}

fn main() {}
