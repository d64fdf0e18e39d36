use sigecs::prelude::*;

#[derive(Component)]
#[component(hot)]
pub struct Position(pub f32);

fn main() {}
