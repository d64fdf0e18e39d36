// A component opted into levels as plain old data (the default encoding) must be
// `bytemuck::Pod`: the error points at the level name, not into the generated world.
use sigecs::prelude::*;

#[derive(Component)]
#[component(level = "name")]
pub struct Name(pub String);

fn main() {}
