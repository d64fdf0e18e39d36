use ecs_core::prelude::*;

#[derive(Signature)]
pub struct Nothing {}

fn main() {}
