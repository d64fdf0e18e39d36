use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[derive(Signature)]
pub struct Body {
    pub position: &'static Position,
}

fn main() {}
