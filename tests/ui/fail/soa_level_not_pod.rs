// A structure-of-arrays struct declared as a level component must be
// `bytemuck::Pod`: the error points at the level name, not into the generated world.
use sigecs::SoaManager;

#[derive(SoaManager)]
#[soa(level = "label")]
pub struct Label {
    pub text: String,
}

fn main() {}
