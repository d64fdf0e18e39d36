// The generated world's stores are not reachable from user code, so
// no row can be pushed behind the entity locations' back.
fn main() {
    let mut world = sigecs_fixtures::fixture::World::new();
    let _stores = &mut world.stores;
    let _inner = &mut world.0;
}
