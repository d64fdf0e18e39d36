use sigecs::prelude::*;

#[derive(Resource)]
pub struct Time {
    pub dt: f32,
}

fn main() {}
