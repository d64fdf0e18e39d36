// The storage and the command plumbing are not callable from outside ecs-core: a safe
// `Store::swap_remove_drop` on an empty store wrote before its allocation, and hand-made
// command buffers could apply ids reserved from another entity manager.
use sigecs_fixtures::repro::*;

fn main() {
    let mut w = World::new();
    let _ = ecs_core::storage::Store::swap_remove_drop;
    let _ = ecs_core::__private::Store::swap_remove_drop;
    let _ = ecs_core::__private::Store::truncate;
    let _ = ecs_core::Commands::__new(w.entity_manager());
    let _ = ecs_core::__private::Pending::of;
    let _ = w.__apply_commands;
}
