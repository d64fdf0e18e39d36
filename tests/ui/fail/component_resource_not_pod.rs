// A component opted into entity resources as plain old data (the default encoding) must be
// `bytemuck::Pod`: the error points at the resource name, not into the generated world.
use ecs_core::prelude::*;

#[derive(Component)]
#[component(resource = "name")]
pub struct Name(pub String);

fn main() {}
