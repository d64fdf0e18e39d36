// A structure-of-arrays struct declared as an entity-resource component must be
// `bytemuck::Pod`: the error points at the resource name, not into the generated world.
use ecs_core::SoaManager;

#[derive(SoaManager)]
#[soa(resource = "label")]
pub struct Label {
    pub text: String,
}

fn main() {}
