//! Regression tests for the bugs a new user's audit found (stop 21), each written from its
//! reproduction and failing before its fix.

use ecs_core::WorldModel;
use sigecs_fixtures::audit::*;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    /// Panics on this thread and where the last one happened, recorded by [`hook`].
    static PANICS: Cell<usize> = const { Cell::new(0) };
    static LAST_PANIC: std::cell::RefCell<Option<(String, u32)>> = const { std::cell::RefCell::new(None) };
}

/// Installs (once, for every test of this file) a panic hook that records each panic in the
/// panicking thread's `PANICS` and `LAST_PANIC`, then prints it as before. Per thread, so tests
/// running side by side do not see each other's panics.
fn hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.with(|p| p.set(p.get() + 1));
            let at = info.location().map(|l| (l.file().to_string(), l.line()));
            LAST_PANIC.with(|l| *l.borrow_mut() = at);
            previous(info);
        }));
    });
}

/// Runs `f` and returns how many panics happened on this thread meanwhile, caught or not.
fn count_panics(f: impl FnOnce()) -> usize {
    hook();
    let before = PANICS.with(Cell::get);
    f();
    PANICS.with(Cell::get) - before
}

/// Runs `f`, which must panic, and returns the file and line the panic names.
fn panic_location(f: impl FnOnce()) -> (String, u32) {
    hook();
    LAST_PANIC.with(|l| *l.borrow_mut() = None);
    assert!(catch_unwind(AssertUnwindSafe(f)).is_err(), "no panic");
    LAST_PANIC
        .with(|l| l.borrow_mut().take())
        .expect("the hook saw the panic")
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

/// Audit 3: `spawn` and `spawn_batch` panic when the ids run out, and the panic named a line of
/// ecs-core instead of the caller's.
#[test]
fn spawn_panics_at_the_callers_line_when_ids_run_out() {
    use ecs_core::entity::MAX_ENTITIES;
    let mut world = World::new();
    world.spawn_batch((0..MAX_ENTITIES).map(|i| Counter {
        count: Count(i as u32),
    }));
    let line = line!() + 2;
    let at = panic_location(|| {
        let _ = world.spawn(Counter { count: Count(0) });
    });
    assert_eq!(at, (file!().to_string(), line));
    let line = line!() + 1;
    let at = panic_location(|| drop(world.spawn_batch([Counter { count: Count(0) }])));
    assert_eq!(at, (file!().to_string(), line));
    assert_eq!(world.len(), MAX_ENTITIES);
}

/// Audit 5: declarations under `#[cfg]` were skipped whatever the condition, so a
/// `#[cfg(debug_assertions)]` system had no `run_` method and a component under a true `cfg`
/// was an "unknown component". The build script now evaluates them as rustc does.
#[test]
fn cfg_declarations_follow_the_build() {
    let mut world = World::new();
    let e = world.spawn(Counter { count: Count(0) });
    #[cfg(debug_assertions)]
    {
        world.run_debug_only();
        assert_eq!(world.get::<Count>(e), Some(&Count(1000)));
        assert!(SYSTEM_NAMES.contains(&"debug_only"));
        assert!(!SYSTEM_NAMES.contains(&"release_only"));
    }
    #[cfg(not(debug_assertions))]
    {
        world.run_release_only();
        assert_eq!(world.get::<Count>(e), Some(&Count(2000)));
        assert!(!SYSTEM_NAMES.contains(&"debug_only"));
    }
    #[cfg(target_pointer_width = "64")]
    {
        let w = world.spawn(WideCounter {
            count: Count(1),
            wide: Wide(u64::MAX),
        });
        assert_eq!(world.get::<Wide>(w), Some(&Wide(u64::MAX)));
        world.run_tick();
        assert_eq!(world.get::<Count>(w), Some(&Count(2)));
    }
    let names: Vec<&str> = Model::components().iter().map(|c| c.name).collect();
    #[cfg(target_pointer_width = "64")]
    assert_eq!(names, ["Count", "Fuse", "Wide"]);
    assert!(!names.contains(&"Nowhere"));
}

/// Audit 8: two refused commands on a dead entity were reported as the same error twice,
/// neither saying which command failed.
#[test]
fn a_refused_command_says_which_command_it_was() {
    let mut world = World::new();
    world.spawn(Fused {
        count: Count(0),
        fuse: Fuse(false),
    });
    let dead = world.spawn(Counter { count: Count(1) });
    assert!(world.despawn(dead));
    world.resource_mut::<Target>().0 = Some(dead);
    let errors = world.run_poke().unwrap_err();
    let shown: Vec<String> = errors.0.iter().map(ToString::to_string).collect();
    let not_alive = format!("entity {dead} is not alive in this world");
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!(
            "insert `sigecs_fixtures::audit::Count` into entity {dead}: {not_alive}"
        )),
        "{}",
        shown[0]
    );
    assert!(
        shown[1].starts_with(&format!(
            "remove `sigecs_fixtures::audit::Fuse` from entity {dead}: {not_alive}"
        )),
        "{}",
        shown[1]
    );
    // Matching by kind goes through `reason`.
    for e in &errors.0 {
        assert_eq!(e.reason(), &ecs_core::WorldError::NoSuchEntity(dead));
        assert!(std::error::Error::source(e).is_some());
    }
    assert!(errors
        .to_string()
        .contains("2 command(s) could not be applied"));
}
