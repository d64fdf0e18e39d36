// A safe impl of the trait that ties a type to a component id would
// let a query read one column as another type. The trait is `unsafe` to implement.
use sigecs::prelude::*;
use sigecs_fixtures::fixture::Model;

#[derive(Component)]
pub struct Fake(pub Box<u64>);

impl sigecs::ComponentOf<Model> for Fake {
    const ID: u32 = 0;
}

fn main() {}
