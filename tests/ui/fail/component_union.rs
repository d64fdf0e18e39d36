use sigecs::prelude::*;

#[derive(Component)]
pub union Bits {
    pub f: f32,
    pub u: u32,
}

fn main() {}
