// The storage and the command plumbing are not callable from outside sigecs: a safe
// `Store::swap_remove_drop` on an empty store wrote before its allocation, and hand-made
// command buffers could apply ids reserved from another entity manager.
use sigecs_fixtures::repro::*;

fn main() {
    let mut w = World::new();
    let _ = sigecs::storage::Store::swap_remove_drop;
    let _ = sigecs::__private::Store::swap_remove_drop;
    let _ = sigecs::__private::Store::truncate;
    let _ = sigecs::Commands::__new(w.entity_manager());
    let _ = sigecs::__private::Pending::of;
    let _ = w.__apply_commands;
}
