use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

pub struct Mover;

impl Mover {
    #[system]
    pub fn step(&self, p: &mut Position) {
        p.0 += 1.0;
    }
}

fn main() {}
