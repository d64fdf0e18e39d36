use sigecs::prelude::*;

#[derive(Component)]
pub struct Wrapper<T>(pub T);

fn main() {}
