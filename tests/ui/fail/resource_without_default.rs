use ecs_core::prelude::*;

#[derive(Resource)]
pub struct Time {
    pub dt: f32,
}

fn main() {}
