use sigecs::prelude::*;

#[derive(Component)]
pub struct Position(pub f32);

#[derive(Signature)]
#[signature(layout = "diagonal")]
pub struct Body {
    pub position: Position,
}

fn main() {}
