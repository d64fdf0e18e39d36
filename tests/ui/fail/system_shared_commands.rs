use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[system]
pub fn spawner(p: &Position, commands: &Commands) {
    let _ = (p, commands);
}

fn main() {}
