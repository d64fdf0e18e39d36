//! Regression tests for the bugs a new user's audit found (stop 21), each written from its
//! reproduction and failing before its fix.

use sigecs_fixtures::audit::*;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Panics on this thread, counted by the hook `count_panics` installs.
    static PANICS: Cell<usize> = const { Cell::new(0) };
}

/// Runs `f` and returns how many panics happened on this thread meanwhile, caught or not
/// (the hook keeps the previous one's output).
fn count_panics(f: impl FnOnce()) -> usize {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            previous(info);
        }));
    });
    let before = PANICS.with(Cell::get);
    f();
    PANICS.with(Cell::get) - before
}

/// Audit 1: every successful `spawn_batch` tripped a `debug_assert` in the batch guard's drop
/// (caught by the guard, so the batch succeeded, but the panic printed, and a program built
/// with `panic = "abort"` aborted).
#[test]
fn a_successful_spawn_batch_panics_nowhere() {
    let mut world = World::new();
    let panics = count_panics(|| {
        let es = world.spawn_batch((0..3).map(|i| Counter { count: Count(i) }));
        assert_eq!(es.len(), 3);
        assert_eq!(world.get::<Count>(es[2]), Some(&Count(2)));
        let es = world.spawn_batch(std::iter::empty::<Counter>());
        assert!(es.is_empty());
    });
    assert_eq!(panics, 0);
    assert_eq!(world.len(), 3);
}

/// Audit 2: a system that panicked after `commands.spawn` left its reserved id pending; the
/// next direct spawn made it alive with no row (`len` 5 with 3 rows, `clear` leaving 2).
#[test]
fn a_pass_that_panics_after_a_spawn_request_leaves_no_phantom_entity() {
    let mut world = World::new();
    world.spawn(Fused {
        count: Count(0),
        fuse: Fuse(false),
    });
    world.spawn(Fused {
        count: Count(1),
        fuse: Fuse(true),
    });
    let ran = catch_unwind(AssertUnwindSafe(|| world.run_spawn_then_panic()));
    assert!(ran.is_err(), "the lit fuse panics");
    let e = world.spawn(Counter { count: Count(5) });
    assert_eq!(world.len(), 3, "two fused entities and the direct spawn");
    assert_eq!(world.check_invariants(), Ok(()));
    assert_eq!(world.get::<Count>(e), Some(&Count(5)));
    world.run_tick();
    assert_eq!(
        world.query::<&Count>().map(|c| c.0).collect::<Vec<_>>(),
        [6, 1, 2]
    );
    world.clear();
    assert_eq!((world.len(), world.is_empty()), (0, true));
    assert_eq!(world.check_invariants(), Ok(()));
    // A despawn first, and a generated run first, retire the orphans too.
    for first in ["despawn", "run"] {
        let mut world = World::new();
        let keep = world.spawn(Counter { count: Count(7) });
        let fused = world.spawn(Fused {
            count: Count(1),
            fuse: Fuse(true),
        });
        let ran = catch_unwind(AssertUnwindSafe(|| world.run_spawn_then_panic()));
        assert!(ran.is_err());
        if first == "despawn" {
            assert!(world.despawn(fused));
        } else {
            world.run_tick();
        }
        assert_eq!(world.check_invariants(), Ok(()), "{first}");
        assert_eq!(
            world.len(),
            if first == "despawn" { 1 } else { 2 },
            "{first}"
        );
        assert_eq!(
            world.get::<Count>(keep).map(|c| c.0),
            Some(if first == "run" { 8 } else { 7 })
        );
    }
}
