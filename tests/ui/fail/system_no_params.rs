use ecs_core::prelude::*;

#[system]
pub fn tick() {}

fn main() {}
